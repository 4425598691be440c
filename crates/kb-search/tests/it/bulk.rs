//! Outside edits in bulk (a `git pull` changing thousands of files) are followed as a
//! batch: one pass and one index commit (or a few, when the writes outlast a batch's
//! gathering), never one per file; files that are not entries, and reading files, make no
//! batch at all. Real files, the real watcher, real tantivy; the owner of the index, and a
//! process that forwards to it.

use std::collections::HashSet;
use std::fs;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kb_domain::{Category, EntryPath};
use kb_search::{OnChange, TantivyIndex, VaultWatcher};

use crate::support::{TestVault, eventually, search};

/// Generous: the assertions are about what happens, not how fast.
const WITHIN: Duration = Duration::from_secs(60);
/// Entries in the vault before the pull.
const BEFORE: usize = 300;
/// Entry files the pull writes: all of the entries above, changed, and new ones.
const PULLED: usize = 2_000;
/// At most this many commits (and batches) for one pull.
const A_HANDFUL: u64 = 5;

fn rel(n: usize) -> String {
    let category = Category::ALL[n % Category::ALL.len()];
    format!("{}/note-{n:05}.md", category.as_str())
}

/// A vault of [`BEFORE`] entries, each saying "original".
fn vault_before_the_pull() -> TestVault {
    let v = TestVault::new();
    for n in 0..BEFORE {
        v.write_entry(&rel(n), &format!("Note {n}"), &format!("original text of note{n:05}"));
    }
    v
}

/// Puts [`PULLED`] entry files in place at once: the [`BEFORE`] entries changed, the rest
/// new, each saying "pulled" and its own token. They are written beside the vault first,
/// so they land as fast as a `git pull` lands them however slow this test's build is.
fn pull(v: &TestVault) {
    let staging = tempfile::tempdir_in(v.root().parent().unwrap()).unwrap();
    for n in 0..PULLED {
        let text = format!("---\nname: Note {n}\n---\npulled text of token{n:05}");
        fs::write(staging.path().join(n.to_string()), text).unwrap();
    }
    for n in 0..PULLED {
        fs::rename(staging.path().join(n.to_string()), v.root().join(rel(n))).unwrap();
    }
}

/// Files that are not entries, in and around the vault, and entries only read.
fn noise(v: &TestVault, round: usize) {
    let root = v.root();
    for dir in [".git/objects/ab", ".kb/cache", "ideas/sub", ".obsidian/plugins"] {
        fs::create_dir_all(root.join(dir)).unwrap();
    }
    for n in 0..50 {
        let text = format!("---\nname: Noise {n}\n---\nnoise{round}x{n}");
        for file in [
            format!(".git/objects/ab/obj-{round}-{n}.md"),
            format!(".git/refs-{round}-{n}"),
            format!(".kb/cache/kb-{round}-{n}.md"),
            format!("ideas/notes-{round}-{n}.txt"),
            format!("ideas/sub/deep-{round}-{n}.md.bak"),
            format!("ideas/.hidden-{round}-{n}.md"),
            format!(".obsidian/plugins/readme-{round}-{n}.md"),
            format!("readme-{round}-{n}.txt"),
        ] {
            fs::write(root.join(file), &text).unwrap();
        }
    }
    // Reading entries and listing folders (as kb and backup tools do) is no change.
    for category in Category::ALL {
        for item in fs::read_dir(root.join(category.as_str())).unwrap() {
            let path = item.unwrap().path();
            if path.is_file() {
                fs::read(&path).unwrap();
            }
        }
    }
}

/// The paths `on_change` is called with, and the callback.
fn reported() -> (Reported, OnChange) {
    let reported: Reported = Arc::default();
    let sink = Arc::clone(&reported);
    let on_change: OnChange = Arc::new(move |paths: &[EntryPath]| {
        sink.lock().unwrap().extend(paths.iter().map(ToString::to_string));
    });
    (reported, on_change)
}

type Reported = Arc<Mutex<HashSet<String>>>;

/// Writes one entry and waits until every watcher reported it: every batch of what was
/// written before it is then handled, and counted.
fn fence(v: &TestVault, name: &str, reported: &[&Reported]) {
    let rel = format!("inbox/{name}.md");
    v.write_entry(&rel, name, &format!("{name} marker"));
    let all = || reported.iter().all(|h| h.lock().unwrap().contains(&rel));
    assert!(eventually(WITHIN, all), "{rel} was never followed");
}

/// Whether every pulled entry is searchable by its own token and as "pulled", and no
/// older text is left.
fn all_pulled(index: &TantivyIndex) -> bool {
    search(index, "pulled").total == PULLED
        && search(index, "original").total == 0
        && [0, BEFORE - 1, BEFORE, PULLED - 1]
            .iter()
            .all(|n| search(index, &format!("token{n:05}")).total == 1)
}

#[test]
fn a_pull_of_thousands_of_files_is_a_handful_of_commits_and_noise_is_none() {
    let v = vault_before_the_pull();
    let index = Arc::new(v.open());
    assert_eq!(index.len(), BEFORE);
    let (reported, on_change) = reported();
    let watcher = VaultWatcher::start(Arc::clone(&index), Some(on_change)).unwrap();
    let commits = index.commit_count();

    pull(&v);
    noise(&v, 0);
    let followed = eventually(WITHIN, || reported.lock().unwrap().len() == PULLED && all_pulled(&index));
    assert!(
        followed,
        "reported {} paths; {} pulled",
        reported.lock().unwrap().len(),
        search(&index, "pulled").total
    );
    assert_eq!(index.len(), PULLED);
    let pull_commits = index.commit_count() - commits;
    let batches = watcher.batches_handled();
    assert!((1..=A_HANDFUL).contains(&pull_commits), "{pull_commits} commits for one pull");
    assert!(batches <= A_HANDFUL, "{batches} batches for one pull");
    assert!(search(&index, "noise0x1").entries.is_empty(), "a file that is not an entry was indexed");

    // Noise alone makes no batch and no commit: after it, one entry written is one more of each.
    fence(&v, "fence", &[&reported]);
    let (commits, batches) = (index.commit_count(), watcher.batches_handled());
    reported.lock().unwrap().clear();
    noise(&v, 1);
    fence(&v, "sentinel", &[&reported]);
    assert_eq!(search(&index, "sentinel").total, 1);
    let reported = reported.lock().unwrap();
    assert!(
        reported.len() == 1 && reported.contains("inbox/sentinel.md"),
        "reported {} paths",
        reported.len()
    );
    assert_eq!(index.commit_count(), commits + 1, "noise made a commit");
    assert_eq!(watcher.batches_handled(), batches + 1, "noise made a batch");
}

#[test]
fn a_process_that_does_not_own_the_index_sends_a_pull_to_the_owner_in_one_request() {
    let v = vault_before_the_pull();
    let owner = Arc::new(v.open());
    owner.share_writes(None);
    let other = Arc::new(v.open());
    other.share_writes(None);
    assert!(owner.is_owner() && !other.is_owner());
    let (reported, on_change) = reported();
    // Only the other process watches: every pulled file reaches the index through it.
    let watcher = VaultWatcher::start(Arc::clone(&other), Some(on_change)).unwrap();
    let commits = owner.commit_count();

    pull(&v);
    let followed = eventually(WITHIN, || reported.lock().unwrap().len() == PULLED && all_pulled(&other));
    assert!(
        followed,
        "reported {} paths; {} pulled",
        reported.lock().unwrap().len(),
        search(&other, "pulled").total
    );
    assert!(all_pulled(&owner));
    let pull_commits = owner.commit_count() - commits;
    assert!((1..=A_HANDFUL).contains(&pull_commits), "{pull_commits} commits for one pull");
    assert!(watcher.batches_handled() <= A_HANDFUL, "{} batches", watcher.batches_handled());
    assert_eq!(other.commit_count(), 0, "only the owner commits");
    assert!(!other.is_owner());
}

#[test]
fn two_watching_processes_follow_a_pull_once_each_and_then_rest() {
    let v = vault_before_the_pull();
    let owner = Arc::new(v.open());
    let (reported_owner, on_owner) = reported();
    // The owner learns of a file through its watcher, or (when the other process's request
    // indexed it first) through the request, as kb's vault does.
    let forwarded = Arc::clone(&on_owner);
    owner.share_writes(Some(Arc::new(move |changed: &[EntryPath]| forwarded(changed))));
    let other = Arc::new(v.open());
    other.share_writes(None);
    let (reported_other, on_other) = reported();
    let owner_watcher = VaultWatcher::start(Arc::clone(&owner), Some(on_owner)).unwrap();
    let other_watcher = VaultWatcher::start(Arc::clone(&other), Some(on_other)).unwrap();
    let commits = owner.commit_count();

    pull(&v);
    let followed = eventually(WITHIN, || {
        reported_owner.lock().unwrap().len() == PULLED
            && reported_other.lock().unwrap().len() == PULLED
            && all_pulled(&owner)
            && all_pulled(&other)
    });
    assert!(
        followed,
        "owner reported {}, other {}",
        reported_owner.lock().unwrap().len(),
        reported_other.lock().unwrap().len()
    );
    // The owner's own batch and the other's request; the second finds the files indexed.
    let pull_commits = owner.commit_count() - commits;
    assert!((1..=2 * A_HANDFUL).contains(&pull_commits), "{pull_commits} commits for one pull");
    for watcher in [&owner_watcher, &other_watcher] {
        assert!(watcher.batches_handled() <= A_HANDFUL, "{} batches for one pull", watcher.batches_handled());
    }

    // Reading every entry (as both processes just did) is no change: no process keeps
    // sending the other what it read. The other process is called with every path its
    // watcher sends, so a batch made of reads would show there before the entry written after.
    fence(&v, "fence", &[&reported_owner, &reported_other]);
    let commits = owner.commit_count();
    reported_owner.lock().unwrap().clear();
    reported_other.lock().unwrap().clear();
    noise(&v, 0);
    fence(&v, "sentinel", &[&reported_owner, &reported_other]);
    assert_eq!(search(&other, "sentinel").total, 1);
    // The fence itself may still be reported late (the owner also learns of it through the
    // other process's request, which can arrive after the fence returned): a real write,
    // not noise. Nothing else may be reported.
    for reported in [&reported_other, &reported_owner] {
        let reported = reported.lock().unwrap();
        let noise: Vec<_> = reported
            .iter()
            .filter(|p| !matches!(p.as_str(), "inbox/sentinel.md" | "inbox/fence.md"))
            .collect();
        assert!(reported.contains("inbox/sentinel.md") && noise.is_empty(), "reported {reported:?}");
    }
    // The sentinel through the owner's watcher and through the other's request, and the
    // late fence: at most three commits, however many files were read.
    assert!(owner.commit_count() <= commits + 3, "{} commits for one entry", owner.commit_count() - commits);
}
