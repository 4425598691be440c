//! The sync benchmark (`cargo bench -p kb-storage --bench sync`, part of `just bench`): a
//! vault of 10,000 notes (`KB_BENCH_SYNC_NOTES`) synced with a bare remote on the same
//! disk — the first round (the whole vault sent), idle rounds (nothing changed anywhere:
//! target under 100 ms, and no file of the vault or ref of the repository written), and a
//! round that pulls 1,000 changed notes another device pushed. Writes
//! `target/bench/sync.md`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use kb_storage::sync::{GitSync, SyncSettings};

fn notes() -> usize {
    std::env::var("KB_BENCH_SYNC_NOTES").ok().and_then(|n| n.parse().ok()).unwrap_or(10_000)
}

fn device(root: &Path, remote: &str, name: &str) -> GitSync {
    std::fs::create_dir_all(root).unwrap();
    let settings = SyncSettings::new(remote, name);
    GitSync::open(root, settings).unwrap()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Every file's modification time under `root` (`.kb` aside), and the repository's refs.
fn stamps(root: &Path) -> Vec<(PathBuf, std::time::SystemTime)> {
    let mut all: Vec<(PathBuf, std::time::SystemTime)> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".kb" && e.file_name() != "objects" && e.file_name() != "logs")
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && !e.path().ends_with(".git/index"))
        .map(|e| (e.path().to_path_buf(), e.metadata().unwrap().modified().unwrap()))
        .collect();
    all.sort();
    all
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let remote = dir.path().join("remote.git");
    assert!(Command::new("git").args(["init", "--quiet", "--bare"]).arg(&remote).status().unwrap().success());
    let remote = remote.to_string_lossy().into_owned();
    let n = notes();
    let laptop_root = dir.path().join("laptop");
    for i in 0..n {
        let folder = laptop_root.join(["people", "projects", "ideas", "admin"][i % 4]);
        std::fs::create_dir_all(&folder).unwrap();
        let text =
            format!("---\nid: 01N{i:06}\nname: Note {i}\nstatus: active\n---\nSome notes about thing {i}.\n");
        std::fs::write(folder.join(format!("note-{i}.md")), text).unwrap();
    }
    let laptop = device(&laptop_root, &remote, "laptop");
    let began = Instant::now();
    let first = laptop.round().unwrap();
    let first_round = began.elapsed();
    assert_eq!(first.went.len(), n);

    let mut idle = Vec::new();
    let before = stamps(&laptop_root);
    for _ in 0..10 {
        let began = Instant::now();
        let report = laptop.round().unwrap();
        idle.push(began.elapsed());
        assert!(report.came.is_empty() && report.went.is_empty());
    }
    let after = stamps(&laptop_root);
    let written: Vec<String> = after
        .iter()
        .filter(|stamp| !before.contains(stamp))
        .map(|(path, _)| path.strip_prefix(&laptop_root).unwrap_or(path).display().to_string())
        .collect();
    idle.sort();

    // Another device changes 1,000 notes and pushes; the laptop pulls them.
    let desktop_root = dir.path().join("desktop");
    let desktop = device(&desktop_root, &remote, "desktop");
    let began = Instant::now();
    desktop.round().unwrap();
    let clone_round = began.elapsed();
    let changed = n.min(1_000);
    for i in 0..changed {
        let file =
            desktop_root.join(["people", "projects", "ideas", "admin"][i % 4]).join(format!("note-{i}.md"));
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, format!("{text}Changed on the desktop.\n")).unwrap();
    }
    desktop.round().unwrap();
    let began = Instant::now();
    let pulled = laptop.round().unwrap();
    let pull_round = began.elapsed();
    assert_eq!(pulled.came.len(), changed);

    let mut md = String::new();
    let _ = writeln!(md, "# kb-storage sync\n");
    let _ = writeln!(
        md,
        "{n} notes, a bare remote on the same disk, git {}.\n",
        String::from_utf8_lossy(&Command::new("git").arg("--version").output().unwrap().stdout).trim()
    );
    let _ = writeln!(md, "| round | ms | target |");
    let _ = writeln!(md, "|---|---:|---|");
    let _ = writeln!(md, "| first (every note sent) | {:.0} | |", ms(first_round));
    let _ = writeln!(md, "| idle, p50 of 10 | {:.1} | < 100 ms |", ms(idle[idle.len() / 2]));
    let _ = writeln!(md, "| idle, most of 10 | {:.1} | |", ms(idle[idle.len() - 1]));
    let _ = writeln!(md, "| a new device's first (every note pulled) | {:.0} | |", ms(clone_round));
    let _ = writeln!(md, "| {changed} changed notes pulled and written | {:.0} | |", ms(pull_round));
    let _ = if written.is_empty() {
        writeln!(md, "\nIdle rounds wrote no file of the vault and no ref.")
    } else {
        writeln!(md, "\nIdle rounds wrote: {}.", written.join(", "))
    };
    print!("{md}");
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("sync.md"), md).unwrap();
}
