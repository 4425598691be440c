//! A `kb serve` killed (SIGKILL) in the middle of a burst of changes, ten times over on one
//! vault: after each restart, once the start-up check has caught history up, every entry
//! file's bytes are exactly its newest revision's `after` text (docs/HISTORY.md), and no
//! change the server acknowledged before dying is lost.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::{KbServer, Reply, entry_files, send, url_path};
use serde_json::{Value, json};
use tokio::task::JoinSet;

/// Kill-and-restart rounds.
const ROUNDS: usize = 10;
/// Requests in flight at once during a burst.
const WORKERS: usize = 3;
/// Requests one worker sends at most in a burst (the kill usually comes first).
const REQUESTS_EACH: usize = 60;
/// How long history may take to catch up after a restart.
const CATCH_UP: Duration = Duration::from_secs(40);

async fn call(addr: SocketAddr, method: &str, target: &str, body: Option<Value>) -> Option<Reply> {
    let body = body.map(|b| b.to_string());
    send(addr, method, target, &[], body.as_deref().map(str::as_bytes)).await.ok()
}

/// What a burst got acknowledged: lines appended to entries, and entries captured.
#[derive(Default)]
struct Acknowledged {
    appended: Vec<(String, String)>,
    captured: Vec<String>,
    refused: Vec<String>,
}

/// One worker's part of a burst: appends to the seed entries, a capture every third
/// request; stops at the first request the server does not answer (it was killed).
async fn burst(addr: SocketAddr, round: usize, worker: usize, seeds: Vec<String>) -> Acknowledged {
    let mut acked = Acknowledged::default();
    for n in 0..REQUESTS_EACH {
        let mark = format!("r{round}w{worker}n{n}");
        if n % 3 == 1 {
            let body = json!({"text": format!("Project {mark} for the kill test"), "hints": "[projects]"});
            let Some(reply) = call(addr, "POST", "/api/capture", Some(body)).await else { break };
            if reply.status == 200 {
                acked.captured.push(reply.json()["path"].as_str().unwrap().to_string());
            } else {
                acked.refused.push(format!("capture: {} {}", reply.status, reply.text()));
            }
        } else {
            let path = &seeds[(worker + n) % seeds.len()];
            let line = format!("Line {mark}.");
            let body = json!({"body": {"mode": "append", "content": line}});
            let target = format!("/api/entries/{}", url_path(path));
            let Some(reply) = call(addr, "PATCH", &target, Some(body)).await else { break };
            if reply.status == 200 {
                acked.appended.push((path.clone(), line));
            } else {
                acked.refused.push(format!("append to {path}: {} {}", reply.status, reply.text()));
            }
        }
    }
    acked
}

/// Each entry file whose bytes differ from its newest revision's `after`, with why.
async fn disagreements(kb: &KbServer, vault: &Path) -> Vec<String> {
    let mut wrong = Vec::new();
    for path in entry_files(vault) {
        let Ok(bytes) = std::fs::read(vault.join(&path)) else {
            wrong.push(format!("{path}: cannot be read"));
            continue;
        };
        let history = kb.get(&format!("/api/entries/{}/history", url_path(&path))).await;
        if history.status != 200 {
            wrong.push(format!("{path}: history answers {}: {}", history.status, history.text()));
            continue;
        }
        let Some(newest) = history.json()["revisions"].get(0).and_then(|r| r["id"].as_i64()) else {
            wrong.push(format!("{path}: no revision"));
            continue;
        };
        let revision = kb.get(&format!("/api/entries/{}/history/{newest}", url_path(&path))).await;
        if revision.status != 200 {
            wrong.push(format!("{path}: revision {newest} answers {}", revision.status));
            continue;
        }
        let after = revision.json()["after"].as_str().map(|t| t.as_bytes().to_vec());
        if after.as_deref() != Some(bytes.as_slice()) {
            wrong.push(format!(
                "{path}: revision {newest} has {:?}, the file {:?}",
                after.map(|a| String::from_utf8_lossy(&a).into_owned()),
                String::from_utf8_lossy(&bytes)
            ));
        }
    }
    wrong
}

/// Waits until every file agrees with its newest revision (the start-up check runs in the
/// background); panics with what still disagrees after [`CATCH_UP`].
async fn wait_until_agreeing(kb: &KbServer, vault: &Path, when: &str) {
    let deadline = Instant::now() + CATCH_UP;
    loop {
        let wrong = disagreements(kb, vault).await;
        if wrong.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{when}: files and history disagree after {CATCH_UP:?}:\n{}\nkb log:\n{}",
            wrong.join("\n"),
            kb.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_change_leaves_files_and_history_agreeing() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();

    let mut seeds = Vec::new();
    {
        let kb = KbServer::start_on(&vault, &[]).await;
        for name in ["Greenhouse", "Boat hull", "Attic stairs"] {
            let body = json!({"text": format!("{name} project"), "hints": "[projects]"});
            let filed = kb.post("/api/capture", &body).await.expect(200);
            seeds.push(filed["path"].as_str().unwrap().to_string());
        }
    }

    let mut appended: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut captured = Vec::new();
    let mut killed_mid_burst = 0;
    for round in 0..ROUNDS {
        let mut kb = KbServer::start_on(&vault, &[]).await;
        wait_until_agreeing(&kb, &vault, &format!("after restart {round}")).await;

        let finished = Arc::new(AtomicUsize::new(0));
        let mut workers = JoinSet::new();
        for worker in 0..WORKERS {
            let (addr, seeds, finished) = (kb.addr, seeds.clone(), Arc::clone(&finished));
            workers.spawn(async move {
                let acked = burst(addr, round, worker, seeds).await;
                finished.fetch_add(1, Ordering::SeqCst);
                acked
            });
        }
        // A different moment each round, from almost at once to well into the burst.
        tokio::time::sleep(Duration::from_millis(20 + (round as u64 * 137) % 1200)).await;
        if finished.load(Ordering::SeqCst) < WORKERS {
            killed_mid_burst += 1;
        }
        kb.kill();
        while let Some(done) = workers.join_next().await {
            let acked = done.unwrap();
            for (path, line) in acked.appended {
                appended.entry(path).or_default().push(line);
            }
            captured.extend(acked.captured);
            assert!(acked.refused.is_empty(), "refused while the server lived: {:?}", acked.refused);
        }
    }
    assert!(killed_mid_burst >= ROUNDS / 2, "only {killed_mid_burst} kills came mid-burst");

    let kb = KbServer::start_on(&vault, &[]).await;
    wait_until_agreeing(&kb, &vault, "at the end").await;
    let files = entry_files(&vault);
    assert!(
        !appended.is_empty() && !captured.is_empty(),
        "no change was acknowledged: appended {appended:?}, captured {captured:?}"
    );
    for path in &captured {
        assert!(files.contains(path), "acknowledged capture {path} is gone: {files:?}");
    }
    for (path, lines) in &appended {
        let text = std::fs::read_to_string(vault.join(path)).unwrap();
        for line in lines {
            assert!(text.contains(line.as_str()), "acknowledged append {line:?} is not in {path}:\n{text}");
        }
    }
}
