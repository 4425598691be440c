//! Many clients at once against one `kb serve` (the offline model): parallel chat turns and
//! captures, some with the same name (filed as new entries on purpose, `createNew`).
//! Afterwards every capture is on disk exactly once, at the path it was answered with, in a
//! file that parses, listed by `index.md`, counted by `GET /api/entries` and found by search.
//! Parallel captures of one new person, without `createNew`, end in one entry.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::common::{KbServer, assert_parses, query_value};
use serde_json::json;
use tokio::task::JoinSet;

/// Parallel chat turns.
const CHATS: usize = 25;
/// Parallel captures with distinct names.
const CAPTURES: usize = 15;
/// Parallel captures all named the same (their slugs need suffixes).
const SAME_NAME: usize = 10;

#[derive(Debug, Clone)]
enum Job {
    Chat(String),
    Capture { text: String, hints: Option<String> },
}

impl Job {
    fn text(&self) -> &str {
        match self {
            Job::Chat(text) | Job::Capture { text, .. } => text,
        }
    }
}

fn jobs() -> Vec<Job> {
    let mut jobs = Vec::new();
    for n in 0..CHATS {
        jobs.push(Job::Chat(format!("Met person number {n} at the meetup")));
    }
    for n in 0..CAPTURES {
        jobs.push(Job::Capture {
            text: format!("Plan the garden shed build, phase {n} of the work"),
            hints: None,
        });
    }
    for n in 0..SAME_NAME {
        jobs.push(Job::Capture {
            text: format!("Sam Lee told me about the robotics club, note {n} of many"),
            hints: Some("[person:Sam Lee]".to_string()),
        });
    }
    // Interleave the kinds so that chats and captures race each other.
    jobs.sort_by_key(|job| job.text().len() % 7);
    jobs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_parallel_captures_each_land_exactly_once() {
    let kb = Arc::new(KbServer::start(&[]).await);
    let jobs = jobs();
    assert_eq!(jobs.len(), 50);

    let mut running = JoinSet::new();
    for job in jobs.clone() {
        let kb = Arc::clone(&kb);
        running.spawn(async move {
            let path = match &job {
                Job::Chat(text) => {
                    let answer = kb.post("/api/chat", &json!({"message": text})).await.expect(200);
                    assert_eq!(answer["toolsUsed"], json!(["classify_and_capture"]), "{answer}");
                    assert_eq!(answer["message"]["filedEntryPath"], answer["entry"]["path"]);
                    answer["entry"]["path"].as_str().unwrap().to_string()
                }
                Job::Capture { text, hints } => {
                    // Named alike on purpose: each is filed as a new entry.
                    let body = match hints {
                        Some(hints) => json!({"text": text, "hints": hints, "createNew": true}),
                        None => json!({"text": text, "createNew": true}),
                    };
                    let answer = kb.post("/api/capture", &body).await.expect(200);
                    answer["path"].as_str().unwrap().to_string()
                }
            };
            (job, path)
        });
    }
    let mut answered: Vec<(Job, String)> = Vec::new();
    while let Some(done) = running.join_next().await {
        answered.push(done.unwrap());
    }

    // No two captures were answered with the same path.
    let paths: BTreeSet<String> = answered.iter().map(|(_, path)| path.clone()).collect();
    assert_eq!(paths.len(), answered.len(), "two captures share a path: {answered:#?}");

    // On disk: exactly the answered paths, each file parsing and holding its own text only.
    let vault = kb.vault();
    let files = kb.entry_files();
    assert_eq!(files.iter().cloned().collect::<BTreeSet<_>>(), paths);
    assert_eq!(files.len(), 50);
    let contents: BTreeMap<String, String> =
        files.iter().map(|path| (path.clone(), assert_parses(&vault, path))).collect();
    for (job, path) in &answered {
        let holders: Vec<&String> =
            contents.iter().filter(|(_, text)| text.contains(job.text())).map(|(path, _)| path).collect();
        assert_eq!(holders, [path], "{:?} is held by {holders:?}, answered {path}", job.text());
    }
    let mut per_category: BTreeMap<&str, usize> = BTreeMap::new();
    for path in &files {
        *per_category.entry(path.split('/').next().unwrap()).or_default() += 1;
    }
    assert_eq!(per_category.values().sum::<usize>(), 50);
    assert!(per_category.get("people").copied().unwrap_or(0) >= SAME_NAME, "{per_category:?}");
    let sams: Vec<&String> = files.iter().filter(|p| p.starts_with("people/sam-lee")).collect();
    assert_eq!(sams.len(), SAME_NAME, "{files:?}");
    assert!(files.contains(&"people/sam-lee.md".to_string()), "{sams:?}");

    // index.md lists every entry within a second (it is written off the request path), and
    // so does the API.
    let lists_all = |index: &str| paths.iter().all(|path| index.contains(&format!("({path})")));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    while !lists_all(&std::fs::read_to_string(vault.join("index.md")).unwrap_or_default())
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let index = std::fs::read_to_string(vault.join("index.md")).unwrap();
    for path in &paths {
        assert!(index.contains(&format!("({path})")), "{path} missing from index.md:\n{index}");
    }
    assert_eq!(kb.get("/api/index").await.text(), index);
    let listed = kb.get("/api/entries?limit=100").await.expect(200);
    assert_eq!(listed["total"], 50);
    let listed: BTreeSet<String> = listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, paths);
    for (category, count) in &per_category {
        let page = kb.get(&format!("/api/entries?category={category}&limit=100")).await.expect(200);
        assert_eq!(page["total"], *count, "{category}");
    }
    assert_eq!(kb.get("/healthz").await.expect(200)["entries"], 50);

    // Search finds them.
    let meetup = kb.get("/api/search?q=meetup&limit=100").await.expect(200);
    assert_eq!(meetup["total"], CHATS, "{meetup}");
    let robotics = kb.get("/api/search?q=robotics%20club&category=people&limit=100").await.expect(200);
    assert_eq!(robotics["total"], SAME_NAME, "{robotics}");
    for (job, path) in answered.iter().step_by(7) {
        let hits = kb.get(&format!("/api/search?q={}&limit=100", query_value(job.text()))).await.expect(200);
        let found: Vec<&str> =
            hits["entries"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
        assert!(found.contains(&path.as_str()), "{:?} did not find {path}: {hits}", job.text());
    }

    // Every chat turn kept its own conversation.
    let conversations = kb.get("/api/conversations").await.expect(200);
    assert_eq!(conversations["conversations"].as_array().unwrap().len(), CHATS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_captures_of_one_new_person_file_one_entry_and_lose_no_line() {
    let kb = Arc::new(KbServer::start(&[]).await);
    let mut running = JoinSet::new();
    for n in 0..12 {
        let kb = Arc::clone(&kb);
        running.spawn(async move {
            let text = format!("Talked with Ada Byron about engines, talk {n}");
            let answer = kb.post("/api/capture", &json!({"text": text, "hints": "[person:Ada Byron]"})).await;
            answer.expect(200)["path"].as_str().unwrap().to_string()
        });
    }
    let mut paths = BTreeSet::new();
    while let Some(done) = running.join_next().await {
        paths.insert(done.unwrap());
    }
    assert_eq!(paths, BTreeSet::from(["people/ada-byron.md".to_string()]));
    assert_eq!(kb.entry_files(), ["people/ada-byron.md"]);
    let text = assert_parses(&kb.vault(), "people/ada-byron.md");
    let body = text.splitn(3, "---\n").nth(2).unwrap();
    for n in 0..12 {
        assert_eq!(body.matches(&format!("about engines, talk {n}\n")).count(), 1, "talk {n}:\n{text}");
    }
    assert_eq!(
        text.lines().filter(|l| l.starts_with("- ") && l.contains(": Talked with Ada")).count(),
        12,
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_changes_to_one_entry_lose_nothing_and_a_move_happens_once() {
    let kb = Arc::new(KbServer::start(&[]).await);
    let filed = kb.post("/api/capture", &json!({"text": "Fix the shed roof", "hints": "[project]"})).await;
    let path = filed.expect(200)["path"].as_str().unwrap().to_string();

    // Twenty clients each set their own field on the same entry at once.
    let mut running = JoinSet::new();
    for n in 0..20 {
        let (kb, path) = (Arc::clone(&kb), path.clone());
        running.spawn(async move {
            kb.patch(&format!("/api/entries/{path}"), &json!({ format!("field_{n}"): format!("value {n}") }))
                .await
                .expect(200);
        });
    }
    while let Some(done) = running.join_next().await {
        done.unwrap();
    }
    let text = assert_parses(&kb.vault(), &path);
    for n in 0..20 {
        assert!(text.contains(&format!("field_{n}: value {n}")), "field_{n} was lost:\n{text}");
    }
    assert!(text.contains("Fix the shed roof"), "{text}");

    // Ten clients move it at once: one wins, the others find it gone; it exists once.
    let mut running = JoinSet::new();
    for target in
        ["ideas", "admin", "people", "ideas", "admin", "people", "ideas", "admin", "people", "ideas"]
    {
        let (kb, path) = (Arc::clone(&kb), path.clone());
        running.spawn(async move {
            kb.post(&format!("/api/entries/{path}/move"), &json!({ "targetCategory": target })).await
        });
    }
    let mut moved = Vec::new();
    while let Some(done) = running.join_next().await {
        let reply = done.unwrap();
        match reply.status {
            200 => moved.push(reply.json()["newPath"].as_str().unwrap().to_string()),
            404 => {}
            other => panic!("a racing move answered {other}: {}", reply.text()),
        }
    }
    assert_eq!(moved.len(), 1, "{moved:?}");
    assert_eq!(kb.entry_files(), moved);
    let text = assert_parses(&kb.vault(), &moved[0]);
    for n in 0..20 {
        assert!(text.contains(&format!("value {n}")), "field_{n} was lost in the move:\n{text}");
    }
    let listed = kb.get("/api/entries").await.expect(200);
    assert_eq!(listed["total"], 1);
    assert_eq!(listed["entries"][0]["path"], moved[0].as_str());
    let index = kb.get("/api/index").await.text();
    assert!(index.contains(&format!("({})", moved[0])) && !index.contains(&format!("({path})")), "{index}");
}
