//! Several kb processes on one vault, as people run them: three `kb serve` processes (the
//! first owns the search index) and `kb` commands reading at the same time. Over 200
//! captures, updates and moves go to all of them at once, and the index's owner is killed
//! (SIGKILL) halfway through the captures; chat turns in two processes share the SQLite
//! database meanwhile. Afterwards every acknowledged change is on disk
//! exactly once, no update is lost, and every surviving process lists and searches every
//! entry within a second; `index.md` lists exactly the entries on disk.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::{KbServer, Reply, entry_files, send, url_path};
use serde_json::{Value, json};
use tokio::task::JoinSet;

/// Captures per server.
const CAPTURES_EACH: usize = 30;
/// Captures the owner acknowledges before it is killed.
const OWNER_LIVES_FOR: usize = 12;
/// How soon every process must see every change.
const WITHIN: Duration = Duration::from_secs(1);

fn token(n: usize) -> String {
    format!("qzt{n:03}")
}

async fn call(addr: SocketAddr, method: &str, target: &str, body: Option<Value>) -> Option<Reply> {
    let body = body.map(|b| b.to_string());
    send(addr, method, target, &[], body.as_deref().map(str::as_bytes)).await.ok()
}

/// The `kb` binary on `vault` with `args`, its JSON answer (exit 0 required).
fn kb_json(vault: &Path, args: &[&str]) -> Value {
    let args: Vec<&str> = std::iter::once("--json").chain(args.iter().copied()).collect();
    let (code, out, err) = kb_run(vault, &args);
    assert_eq!(code, Some(0), "kb {args:?} failed: {err}");
    serde_json::from_str(&out).unwrap()
}

/// Polls `check` until it holds or `limit` passes.
async fn within(limit: Duration, mut check: impl AsyncFnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if check().await {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_servers_and_cli_readers_share_a_vault_through_an_owner_crash() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    let mut owner = KbServer::start_on(&vault, &[]).await;
    let b = KbServer::start_on(&vault, &[]).await;
    let c = KbServer::start_on(&vault, &[]).await;
    assert!(owner.log().contains("writes the search index"), "the first server should own the index");
    let addrs = [owner.addr, b.addr, c.addr];

    // CLI readers all along: every command answers while the servers write.
    let readers_stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (vault, stop) = (vault.clone(), Arc::clone(&readers_stop));
        std::thread::spawn(move || {
            let mut runs = 0;
            while !stop.load(Ordering::Relaxed) {
                kb_json(&vault, &["search", "task"]);
                kb_json(&vault, &["list", "--limit", "5"]);
                runs += 1;
            }
            runs
        })
    };

    // Phase 1: captures on all three at once; the owner dies after a few of its own.
    let owner_acks = Arc::new(AtomicUsize::new(0));
    let mut jobs = JoinSet::new();
    for (server, addr) in addrs.iter().enumerate() {
        for i in 0..CAPTURES_EACH {
            let n = server * CAPTURES_EACH + i;
            let (addr, acks) = (*addr, Arc::clone(&owner_acks));
            jobs.spawn(async move {
                let body = json!({"text": format!("Task {} to do", token(n)), "hints": "[admin]"});
                let reply = call(addr, "POST", "/api/capture", Some(body)).await;
                let path =
                    reply.filter(|r| r.status == 200).map(|r| r.json()["path"].as_str().unwrap().to_string());
                if server == 0 && path.is_some() {
                    acks.fetch_add(1, Ordering::SeqCst);
                }
                (n, path)
            });
        }
    }
    while owner_acks.load(Ordering::SeqCst) < OWNER_LIVES_FOR {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    owner.kill();
    let mut filed: BTreeMap<usize, String> = BTreeMap::new();
    while let Some(done) = jobs.join_next().await {
        if let (n, Some(path)) = done.unwrap() {
            filed.insert(n, path);
        }
    }
    let survivors = [b.addr, c.addr];
    assert!(filed.len() >= 2 * CAPTURES_EACH + OWNER_LIVES_FOR, "captures to live servers failed: {filed:?}");

    // Phase 2: two processes update different fields of the same entries at once.
    let targets: Vec<(usize, String)> = filed.iter().take(40).map(|(n, p)| (*n, p.clone())).collect();
    let mut jobs = JoinSet::new();
    for (n, path) in &targets {
        let target = format!("/api/entries/{}", url_path(path));
        let due = format!("2027-01-{:02}", n % 28 + 1);
        for (addr, body) in
            [(survivors[0], json!({"status": "done"})), (survivors[1], json!({"due_date": due}))]
        {
            let target = target.clone();
            jobs.spawn(async move { call(addr, "PATCH", &target, Some(body)).await.map(|r| r.status) });
        }
    }
    // Chat turns in both at the same time: their conversations share one SQLite database.
    for n in 0..12 {
        let addr = survivors[n % 2];
        let body = json!({"message": format!("what do I have about {}?", token(n))});
        jobs.spawn(async move { call(addr, "POST", "/api/chat", Some(body)).await.map(|r| r.status) });
    }
    while let Some(done) = jobs.join_next().await {
        assert_eq!(done.unwrap(), Some(200), "an update or a chat turn was refused");
    }
    let conversations = call(survivors[0], "GET", "/api/conversations", None).await.unwrap();
    assert_eq!(conversations.json()["conversations"].as_array().map(Vec::len), Some(12));
    for (n, path) in &targets {
        let text = std::fs::read_to_string(vault.join(path)).unwrap();
        assert!(text.contains("status: done"), "{path}: the status update was lost:\n{text}");
        assert!(
            text.contains(&format!("2027-01-{:02}", n % 28 + 1)),
            "{path}: the date update was lost:\n{text}"
        );
    }

    // Phase 3: moves from both, 10 of them raced by both processes for the same entry.
    let movable: Vec<(usize, String)> =
        filed.iter().skip(40).take(30).map(|(n, p)| (*n, p.clone())).collect();
    let mut jobs = JoinSet::new();
    for (k, (n, path)) in movable.iter().enumerate() {
        let target = format!("/api/entries/{}/move", url_path(path));
        let racers: Vec<SocketAddr> = if k < 10 { survivors.to_vec() } else { vec![survivors[k % 2]] };
        for addr in racers {
            let (target, n) = (target.clone(), *n);
            jobs.spawn(async move {
                let reply = call(addr, "POST", &target, Some(json!({"targetCategory": "projects"}))).await;
                (
                    n,
                    reply
                        .filter(|r| r.status == 200)
                        .map(|r| r.json()["newPath"].as_str().unwrap().to_string()),
                )
            });
        }
    }
    let mut moved: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    while let Some(done) = jobs.join_next().await {
        let (n, new_path) = done.unwrap();
        moved.entry(n).or_default().extend(new_path);
    }
    for (n, paths) in &moved {
        assert_eq!(paths.len(), 1, "entry {n} was moved {} times: {paths:?}", paths.len());
        filed.insert(*n, paths[0].clone());
    }
    assert_eq!(moved.len(), movable.len());
    readers_stop.store(true, Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0, "the CLI readers never ran");

    // Every acknowledged capture is on disk once, at its last path; no token twice.
    let on_disk = entry_files(&vault);
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in &on_disk {
        let text = std::fs::read_to_string(vault.join(file)).unwrap();
        for n in 0..3 * CAPTURES_EACH {
            if text.contains(&token(n)) {
                seen.entry(token(n)).or_default().push(file.clone());
            }
        }
    }
    for (n, path) in &filed {
        assert_eq!(seen.get(&token(*n)), Some(&vec![path.clone()]), "capture {n}");
    }
    assert!(seen.values().all(|files| files.len() == 1), "an entry was filed twice: {seen:?}");
    let ids: BTreeSet<String> = on_disk
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(vault.join(f)).unwrap();
            text.lines().find_map(|l| l.strip_prefix("id: ").map(str::to_string))
        })
        .collect();
    assert_eq!(ids.len(), on_disk.len(), "two files share an id");

    // Every surviving process lists and searches every entry within a second.
    for addr in survivors {
        let listed = within(WITHIN, async || {
            let reply = call(addr, "GET", "/api/entries?limit=100", None).await;
            reply.is_some_and(|r| r.json()["total"].as_u64() == Some(on_disk.len() as u64))
        })
        .await;
        let listed_paths: BTreeSet<String> = call(addr, "GET", "/api/entries?limit=100", None)
            .await
            .map(|r| {
                r.json()["entries"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e["path"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default();
        let disk: BTreeSet<String> = on_disk.iter().cloned().collect();
        let total = (
            listed_paths.difference(&disk).cloned().collect::<Vec<_>>(),
            disk.difference(&listed_paths).cloned().collect::<Vec<_>>(),
        );
        if !listed {
            let log = if addr == b.addr { b.log() } else { c.log() };
            let extra = total.0.first().cloned().unwrap_or_default();
            let warnings: Vec<&str> = log
                .lines()
                .filter(|l| {
                    l.contains("WARN") || l.contains("ERROR") || (!extra.is_empty() && l.contains(&extra))
                })
                .take(40)
                .collect();
            panic!(
                "{addr} does not list every entry (extra, missing): {total:?} of {}; log:\n{}",
                on_disk.len(),
                warnings.join("\n")
            );
        }
        for (n, path) in &filed {
            let target = format!("/api/search?q={}", token(*n));
            let found = within(WITHIN, async || {
                let reply = call(addr, "GET", &target, None).await;
                reply.is_some_and(|r| {
                    r.json()["entries"][0]["path"].as_str() == Some(path) && r.json()["total"] == 1
                })
            })
            .await;
            assert!(found, "{addr} does not find {} at {path}", token(*n));
        }
    }
    let listed = kb_json(&vault, &["list", "--limit", "100"]);
    assert_eq!(listed["total"].as_u64(), Some(on_disk.len() as u64));
    let (n, path) = filed.iter().next_back().unwrap();
    assert_eq!(kb_json(&vault, &["search", &token(*n)])["entries"][0]["path"].as_str(), Some(path.as_str()));

    // index.md lists exactly the entries on disk.
    let index_lists_disk = within(Duration::from_secs(3), async || {
        let text = std::fs::read_to_string(vault.join("index.md")).unwrap_or_default();
        let linked: BTreeSet<String> =
            text.split("](").skip(1).filter_map(|rest| rest.split(')').next()).map(str::to_string).collect();
        linked == on_disk.iter().cloned().collect::<BTreeSet<_>>()
    })
    .await;
    assert!(index_lists_disk, "index.md does not list exactly the entries on disk");
}

/// The index's owner is killed (SIGKILL) right after a capture, before its background
/// commit could land: the other server's very next search finds the capture all the same
/// (it takes the index over and catches up with the vault first), long before its file
/// watcher would have.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_right_after_the_owner_is_killed_finds_its_last_capture() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    let mut owner = KbServer::start_on(&vault, &[]).await;
    let other = KbServer::start_on(&vault, &[]).await;
    assert!(owner.log().contains("writes the search index"), "the first server should own the index");
    let capture = json!({"text": "Paint the fence qzfence", "hints": "[projects]"});
    let filed = owner.post("/api/capture", &capture).await;
    owner.kill();
    let path = filed.expect(200)["path"].as_str().unwrap().to_string();

    let began = Instant::now();
    let found = other.get("/api/search?q=qzfence").await.expect(200);
    assert_eq!(found["total"], 1, "the search missed the dead owner's last capture: {found}");
    assert_eq!(found["entries"][0]["path"].as_str(), Some(path.as_str()));
    assert!(began.elapsed() < Duration::from_secs(10), "the search took {:?}", began.elapsed());
    assert!(other.log().contains("taking over the search index"), "{}", other.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_an_address_in_use_says_so() {
    let first = KbServer::start(&[]).await;
    let output = Command::new(env!("CARGO_BIN_EXE_kb"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("KB_API_TOKEN")
        .args(["serve", "--addr", &first.addr.to_string(), "--kb-dir"])
        .arg(first.vault())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{said}");
    assert!(said.contains("address is in use"), "{said}");
    assert_eq!(first.get("/healthz").await.status, 200, "the first server is unharmed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn index_md_is_current_after_a_burst_of_1000_captures() {
    let kb = Arc::new(KbServer::start(&[]).await);
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = JoinSet::new();
    for _ in 0..16 {
        let (kb, next) = (Arc::clone(&kb), Arc::clone(&next));
        workers.spawn(async move {
            loop {
                let n = next.fetch_add(1, Ordering::SeqCst);
                if n >= 1000 {
                    return;
                }
                let body = json!({"text": format!("Burst note {}", token(n)), "hints": "[idea]"});
                assert_eq!(kb.post("/api/capture", &body).await.status, 200);
            }
        });
    }
    while let Some(done) = workers.join_next().await {
        done.unwrap();
    }
    let on_disk: BTreeSet<String> = entry_files(&kb.vault()).into_iter().collect();
    assert_eq!(on_disk.len(), 1000);
    let current = within(WITHIN, async || {
        let text = std::fs::read_to_string(kb.vault().join("index.md")).unwrap_or_default();
        let linked: BTreeSet<String> =
            text.split("](").skip(1).filter_map(|rest| rest.split(')').next()).map(str::to_string).collect();
        linked == on_disk
    })
    .await;
    assert!(current, "index.md is not current within a second of the last capture");
}

/// The `kb` binary on `vault` with `args`: exit code and standard output.
fn kb_run(vault: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_kb"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("DATABASE_URL")
        .env_remove("KB_DIR")
        .arg("--kb-dir")
        .arg(vault)
        .args(args)
        .output()
        .unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.code(), text(&output.stdout), text(&output.stderr))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_works_while_kb_serve_runs() {
    let kb = KbServer::start(&[]).await;
    let vault = kb.vault();
    let filed = kb_json(&vault, &["capture", "Renew the passport by Dec 15", "--hints", "[admin]"]);
    let path = filed["path"].as_str().unwrap().to_string();
    // The server finds at once what a command filed, and the command what the server filed.
    let found = kb.get("/api/search?q=passport").await.expect(200);
    assert_eq!(found["entries"][0]["path"].as_str(), Some(path.as_str()));
    let shed = kb.post("/api/capture", &json!({"text": "Fix the shed roof", "hints": "[project]"})).await;
    let shed = shed.expect(200)["path"].as_str().unwrap().to_string();
    assert_eq!(kb_json(&vault, &["search", "shed"])["entries"][0]["path"].as_str(), Some(shed.as_str()));

    assert_eq!(kb_json(&vault, &["list"])["total"], 2);
    assert_eq!(kb_json(&vault, &["show", &path])["entry"]["path"].as_str(), Some(path.as_str()));
    let updated = kb_json(&vault, &["update", &path, "--set", "status=done"]);
    assert_eq!(updated["updatedFields"], json!(["status"]));
    let moved = kb_json(&vault, &["move", &shed, "ideas"]);
    let moved_to = moved["newPath"].as_str().unwrap().to_string();
    assert!(kb_json(&vault, &["digest", "daily"])["content"].is_string());
    let (code, out, err) = kb_run(&vault, &["reindex"]);
    assert_eq!(code, Some(0), "reindex: {out}{err}");

    // The server sees the commands' changes within a second.
    let sees = within(WITHIN, async || {
        let entry = kb.get(&format!("/api/entries/{}", url_path(&path))).await;
        let listed = kb.get("/api/entries").await.json();
        entry.json()["entry"]["frontmatter"]["status"] == "done"
            && listed["entries"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["path"].as_str() == Some(moved_to.as_str()))
    })
    .await;
    assert!(sees, "kb serve did not see the commands' changes");
    assert_eq!(
        kb.get("/api/search?q=shed").await.expect(200)["entries"][0]["path"].as_str(),
        Some(moved_to.as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_file_written_from_an_older_view_is_put_right_within_seconds() {
    let kb = KbServer::start(&[]).await;
    let filed = kb.post("/api/capture", &json!({"text": "Fix the shed roof", "hints": "[project]"})).await;
    let path = filed.expect(200)["path"].as_str().unwrap().to_string();
    let index = kb.vault().join("index.md");
    let lists = |text: &str| text.contains(&format!("({path})"));
    assert!(within(WITHIN, async || lists(&std::fs::read_to_string(&index).unwrap_or_default())).await);
    // What a short-lived kb process that opened the vault before the capture would write.
    std::fs::write(
        &index,
        "# Knowledge base\n\n_Generated by kb after every change: edit the entries, not this file._\n",
    )
    .unwrap();
    // Put right at the first check once that write has stood two seconds (checks come
    // every half second, less often on a busy machine).
    let put_right =
        within(6 * WITHIN, async || lists(&std::fs::read_to_string(&index).unwrap_or_default())).await;
    assert!(put_right, "index.md was left as an older view wrote it");
}

/// Two `kb serve` on one vault and one capture: `index.md` is written at most twice (once
/// per process, and only when its text changes), then never again while the vault is idle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_write_index_md_once_per_change_and_never_when_idle() {
    let first = KbServer::start(&[]).await;
    let vault = first.vault();
    let second = KbServer::start_on(&vault, &[]).await;
    let index = vault.join("index.md");
    // Both have settled on the empty vault.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut seen = vec![file_version(&index)];
    let filed =
        second.post("/api/capture", &json!({"text": "Fix the shed roof", "hints": "[project]"})).await;
    let path = filed.expect(200)["path"].as_str().unwrap().to_string();
    watch_versions(&index, &mut seen, Duration::from_secs(10)).await;
    let writes = seen.len() - 1;
    assert!(writes >= 1, "the capture never reached index.md");
    assert!(writes <= 2, "index.md was written {writes} times for one capture");
    assert!(std::fs::read_to_string(&index).unwrap().contains(&format!("({path})")));
    // Idle: not written at all.
    let settled = seen.len();
    watch_versions(&index, &mut seen, Duration::from_secs(3)).await;
    assert_eq!(seen.len(), settled, "index.md was written while the vault was idle");
    drop(second);
}

/// What tells one write of `file` from another: each atomic write puts a new file (a new
/// inode) in place.
fn file_version(file: &Path) -> Option<(u64, i64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(file).ok().map(|m| (m.ino(), m.mtime_nsec(), m.len()))
}

/// Adds to `seen` every new version of `file` for `how_long`.
async fn watch_versions(file: &Path, seen: &mut Vec<Option<(u64, i64, u64)>>, how_long: Duration) {
    let until = Instant::now() + how_long;
    while Instant::now() < until {
        let now = file_version(file);
        if seen.last() != Some(&now) {
            seen.push(now);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[test]
fn commands_started_together_on_a_new_vault_all_open_its_database() {
    for round in 0..6 {
        let dir = tempfile::tempdir().unwrap();
        // Each process creates and migrates the new database unless another is at it.
        let children: Vec<_> = (0..3)
            .map(|n| {
                Command::new(env!("CARGO_BIN_EXE_kb"))
                    .env_remove("OPENAI_API_KEY")
                    .env_remove("DATABASE_URL")
                    .env_remove("KB_DIR")
                    .arg("--no-server")
                    .arg("--kb-dir")
                    .arg(dir.path())
                    .args(["capture", &format!("Idea: round {round} thought {n}")])
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let output = child.wait_with_output().unwrap();
            assert!(output.status.success(), "round {round}: {}", String::from_utf8_lossy(&output.stderr));
        }
    }
}
