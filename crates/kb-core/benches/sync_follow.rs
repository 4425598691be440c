//! Sync, end to end (`cargo bench -p kb-core --bench sync_follow`, part of `just bench`):
//! a vault of 100,000 notes (`KB_BENCH_FOLLOW_NOTES`) on two devices synced through a bare
//! remote on the same disk; the desktop runs kb as `kb serve` does (following outside
//! edits, sync on). The laptop changes 1,000 notes and pushes; the figure is the time from
//! the desktop's round starting until every changed note is found by search (a word they
//! now hold) and listed (a status they now have). Target: under 5 s. Writes
//! `target/bench/sync-follow.md`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use kb_core::{Assistant, Config, GitMode, ListQuery, SearchRequest, SyncConfig};
use kb_storage::sync::{GitSync, SyncSettings};

/// Notes changed on the laptop.
const CHANGED: usize = 1_000;
/// The word the changed notes gain.
const WORD: &str = "moonquill";
/// The status the changed notes get.
const STATUS: &str = "moved-on";
/// The longest the desktop may take before the bench gives up.
const GIVE_UP: Duration = Duration::from_secs(300);

fn notes() -> usize {
    std::env::var("KB_BENCH_FOLLOW_NOTES").ok().and_then(|n| n.parse().ok()).unwrap_or(100_000)
}

fn folder(i: usize) -> &'static str {
    ["people", "projects", "ideas", "admin"][i % 4]
}

fn text(i: usize, status: &str, extra: &str) -> String {
    format!("---\nid: 01N{i:06}\nname: Note {i}\nstatus: {status}\n---\nSome notes about thing {i}.{extra}\n")
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let remote = dir.path().join("remote.git");
    assert!(Command::new("git").args(["init", "--quiet", "--bare"]).arg(&remote).status().unwrap().success());
    let remote = remote.to_string_lossy().into_owned();
    let n = notes();
    assert!(n >= 4 * CHANGED, "KB_BENCH_FOLLOW_NOTES must be at least {}", 4 * CHANGED);

    let laptop_root = dir.path().join("laptop");
    for i in 0..n {
        let folder = laptop_root.join(folder(i));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(format!("note-{i}.md")), text(i, "active", "")).unwrap();
    }
    let laptop = GitSync::open(&laptop_root, SyncSettings::new(remote.clone(), "laptop")).unwrap();
    let began = Instant::now();
    assert_eq!(laptop.round().unwrap().went.len(), n);
    let first_round = began.elapsed();

    let desktop_root = dir.path().join("desktop");
    std::fs::create_dir_all(&desktop_root).unwrap();
    let began = Instant::now();
    {
        let desktop = GitSync::open(&desktop_root, SyncSettings::new(remote.clone(), "desktop")).unwrap();
        assert_eq!(desktop.round().unwrap().came.len(), n);
    }
    let new_device = began.elapsed();

    // kb on the desktop, as `kb serve` opens it; its loop waits an hour between rounds, so
    // the round measured is the one asked for.
    let config = Config {
        watch: true,
        git: GitMode::Commit,
        sync: Some(SyncConfig {
            remote: remote.clone(),
            interval: Duration::from_secs(3600),
            device: "desktop".to_string(),
            timeout: Duration::from_secs(300),
        }),
        ..Config::offline(&desktop_root)
    };
    let began = Instant::now();
    let kb = Assistant::open(config).await.unwrap();
    assert!(kb.entries().search(&SearchRequest::new("thing")).await.unwrap().total > 0);
    let opened = began.elapsed();

    // The laptop changes one note in four of the first 4,000 (all in people/) and pushes.
    for i in (0..4 * CHANGED).step_by(4) {
        let file = laptop_root.join(folder(i)).join(format!("note-{i}.md"));
        std::fs::write(file, text(i, STATUS, &format!(" Now {WORD}."))).unwrap();
    }
    assert_eq!(laptop.round().unwrap().went.len(), CHANGED);

    let sync = kb.sync().expect("sync is on");
    let began = Instant::now();
    let report = sync.round_now().await.unwrap();
    let round = began.elapsed();
    assert_eq!(report.came.len(), CHANGED, "{:?}", report.came.len());
    let listed = ListQuery { status: Some(STATUS.to_string()), limit: Some(1), ..ListQuery::default() };
    let (mut searchable, mut in_list) = (None, None);
    while searchable.is_none() || in_list.is_none() {
        assert!(began.elapsed() < GIVE_UP, "the pulled notes were not taken in within {GIVE_UP:?}");
        if searchable.is_none()
            && kb.entries().search(&SearchRequest::new(WORD)).await.unwrap().total == CHANGED
        {
            searchable = Some(began.elapsed());
        }
        if in_list.is_none() && kb.entries().list(&listed).await.unwrap().total == CHANGED {
            in_list = Some(began.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (searchable, in_list) = (searchable.unwrap_or_default(), in_list.unwrap_or_default());
    let both = searchable.max(in_list);

    let mut table = String::new();
    writeln!(table, "# Sync, end to end\n").unwrap();
    writeln!(
        table,
        "{n} notes on two devices synced through a bare remote on the same disk; the desktop runs kb as \
         `kb serve` does (following outside edits, sync on). The laptop changes {CHANGED} notes and pushes; \
         times from the desktop's round starting. {} cores.\n",
        std::thread::available_parallelism().map_or(1, |p| p.get())
    )
    .unwrap();
    writeln!(table, "| step | time | target |\n|---|---:|---:|").unwrap();
    writeln!(table, "| the laptop's first round (the whole vault sent) | {} | |", secs(first_round)).unwrap();
    writeln!(table, "| the desktop's first round (the whole vault received) | {} | |", secs(new_device))
        .unwrap();
    writeln!(table, "| kb opens on the desktop (catalogue and index built) | {} | |", secs(opened)).unwrap();
    writeln!(table, "| the desktop's round pulling {CHANGED} changed notes | {} | |", secs(round)).unwrap();
    writeln!(table, "| ... until search finds all {CHANGED} | {} | |", secs(searchable)).unwrap();
    writeln!(table, "| ... until the list shows all {CHANGED} | {} | |", secs(in_list)).unwrap();
    writeln!(
        table,
        "| **searchable and listed** | **{}** | < 5 s {} |",
        secs(both),
        if both < Duration::from_secs(5) { "✓" } else { "✗" }
    )
    .unwrap();
    print!("{table}");
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("sync-follow.md"), table).unwrap();
}
