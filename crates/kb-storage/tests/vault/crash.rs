//! Crash safety: a child process rewrites an entry over and over and is killed at a random
//! moment; the file is then byte for byte a complete old or new version, never half, and
//! no stray visible file is left.
//!
//! The child is this test binary itself, re-run on the ignored test `child_rewrites_entry`
//! with `KB_CRASH_VAULT` naming the vault.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kb_domain::{Category, EntryCatalogue, EntryPath, EntryUpdate, EntryWriter, Frontmatter, NewEntry};

use super::common::{entry_files, open};

const VAULT_VAR: &str = "KB_CRASH_VAULT";
const READY_VAR: &str = "KB_CRASH_READY";
const ENTRY: &str = "ideas/crash-test.md";
const ROUNDS: usize = 24;

fn body(letter: char) -> String {
    let line: String = std::iter::repeat_n(letter, 99).collect();
    format!("{line}\n").repeat(3000)
}

fn set_body(text: String) -> EntryUpdate {
    EntryUpdate { fields: Frontmatter::new(), body: Some(kb_domain::BodyEdit::Replace(text)) }
}

/// A pseudo-random number from the clock (no rand dependency needed for a delay).
fn jitter(max: u64) -> u64 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().subsec_nanos() as u64;
    let mut x = nanos ^ 0x9E37_79B9_7F4A_7C15;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x % max
}

/// The child: rewrites the entry forever (until killed). Does nothing in a normal run.
#[test]
#[ignore = "run by crash_leaves_old_or_new_never_half as a child process"]
fn child_rewrites_entry() {
    let Ok(dir) = std::env::var(VAULT_VAR) else { return };
    let vault = open(Path::new(&dir));
    let path = EntryPath::parse(ENTRY).unwrap();
    let (a, b) = (body('a'), body('b'));
    fs::write(std::env::var(READY_VAR).unwrap(), "ready").unwrap();
    for i in 0..1_000_000 {
        let text = if i % 2 == 0 { b.clone() } else { a.clone() };
        vault.update(&path, &set_body(text)).unwrap();
    }
}

#[test]
fn crash_leaves_old_or_new_never_half() {
    let dir = tempfile::tempdir().unwrap();
    let signals = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let created = vault
        .create(NewEntry {
            category: Category::Ideas,
            name: "Crash test".into(),
            fields: Frontmatter::new(),
            body: body('a'),
        })
        .unwrap();
    assert_eq!(created.path.to_string(), ENTRY);
    let file = created.path.under(dir.path());
    let doc_a = fs::read(&file).unwrap();
    vault.update(&created.path, &set_body(body('b'))).unwrap();
    let doc_b = fs::read(&file).unwrap();
    vault.update(&created.path, &set_body(body('a'))).unwrap();
    drop(vault);

    let exe = std::env::current_exe().unwrap();
    let mut seen = [0usize; 2];
    for round in 0..ROUNDS {
        let ready = signals.path().join(format!("ready-{round}"));
        let mut child = Command::new(&exe)
            .args(["--exact", "crash::child_rewrites_entry", "--nocapture", "--ignored"])
            .env(VAULT_VAR, dir.path())
            .env(READY_VAR, &ready)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !ready.exists() {
            assert!(start.elapsed() < Duration::from_secs(60), "child never started");
            assert!(child.try_wait().unwrap().is_none(), "child exited early");
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(jitter(60)));
        child.kill().unwrap();
        child.wait().unwrap();

        let now = fs::read(&file).unwrap();
        assert!(
            now == doc_a || now == doc_b,
            "round {round}: the entry is half written ({} bytes)",
            now.len()
        );
        seen[usize::from(now == doc_b)] += 1;
        assert_eq!(entry_files(dir.path()), [ENTRY], "round {round}: stray entry files");
        let mut visible: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        visible.sort();
        // Only the folder kb filed in, and its entry list.
        assert_eq!(visible, ["ideas", "index.md"]);
        let index = fs::read_to_string(dir.path().join("index.md")).unwrap();
        assert!(
            index.contains("## Inbox (0)\n\n_No entries yet._\n"),
            "round {round}: index.md is half written"
        );
    }
    // The vault still opens and reads after all those kills.
    let vault = open(dir.path());
    assert!(vault.malformed().is_empty());
    assert_eq!(vault.list(&kb_domain::ListFilter::default()).unwrap().total, 1);
    eprintln!("crash rounds ended on old/new versions: {seen:?}");
}

/// A capture writes its file under a hidden temporary name first: one left by a process
/// killed at that moment is removed by the next process to open the vault alone, and
/// nothing else is.
#[test]
fn temporary_files_left_by_a_stopped_write_are_removed_at_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("ideas")).unwrap();
    fs::write(dir.path().join("ideas/.new.tmp-4242-7-0badc0de"), "half a capture").unwrap();
    fs::write(dir.path().join("ideas/.theirs.tmp"), "the person's").unwrap();
    fs::write(dir.path().join("ideas/kept.md"), "---\nname: Kept\n---\nbody\n").unwrap();
    let vault = open(dir.path());
    assert!(!dir.path().join("ideas/.new.tmp-4242-7-0badc0de").exists());
    assert_eq!(fs::read_to_string(dir.path().join("ideas/.theirs.tmp")).unwrap(), "the person's");
    assert_eq!(vault.list(&kb_domain::ListFilter::default()).unwrap().total, 1);
    // A second process joining a vault already open removes nothing: a write may be under way.
    fs::write(dir.path().join("ideas/.new.tmp-4242-8-0badc0de"), "being written").unwrap();
    let _second = open(dir.path());
    assert!(dir.path().join("ideas/.new.tmp-4242-8-0badc0de").exists());
}
