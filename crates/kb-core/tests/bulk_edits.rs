#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Outside edits in bulk, end to end: a `git pull` that writes 2,000 entry files into a
//! vault kb is watching is followed as a batch. Every entry becomes searchable and listed,
//! `index.md` ends listing exactly the entries on disk, and it takes a handful of search
//! index commits and of `index.md` rewrites, not one per file; files that are not entries
//! cause neither. Real files, the real watcher, real tantivy.
//!
//! The counts come from a vault and search index wired as the assistant wires them (the
//! vault following outside edits through `Vault::follow`, its entry list file written in
//! the background, its folders swept); the assistant itself is checked for the outcome.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kb_core::clock::ZonedClock;
use kb_core::domain::EntryWriter as _;
use kb_core::domain::{
    Category, ChangeObserver, EntryCatalogue, EntryPath, ListFilter, SearchIndex, SearchQuery,
};
use kb_core::{Assistant, Config, ListQuery, SearchRequest};
use kb_search::{OnChange, TantivyIndex, VaultWatcher};
use kb_storage::vault::Vault;

/// Generous: the assertions are about what happens, not how fast.
const WITHIN: Duration = Duration::from_secs(60);
/// Entries in the vault before the pull.
const BEFORE: usize = 300;
/// Entry files the pull writes: all of the entries above, changed, and new ones.
const PULLED: usize = 2_000;
/// At most this many search index commits, and as many `index.md` rewrites, for one pull.
const A_HANDFUL: u64 = 5;

fn rel(n: usize) -> String {
    let category = Category::ALL[n % Category::ALL.len()];
    format!("{}/note-{n:05}.md", category.as_str())
}

fn write_entry(root: &Path, rel: &str, name: &str, body: &str) {
    std::fs::write(root.join(rel), format!("---\nname: {name}\n---\n{body}\n")).unwrap();
}

/// A vault folder of [`BEFORE`] entries, each saying "original".
fn vault_before_the_pull() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for category in Category::ALL {
        std::fs::create_dir_all(dir.path().join(category.as_str())).unwrap();
    }
    // Notes the person keeps kb out of: by the vault's .gitignore and .kbignore.
    std::fs::write(dir.path().join(".gitignore"), "*.tmp.md\n").unwrap();
    std::fs::write(dir.path().join(".kbignore"), "Scratch/\n").unwrap();
    for n in 0..BEFORE {
        write_entry(dir.path(), &rel(n), &format!("Note {n}"), &format!("original text of note{n:05}"));
    }
    // A vault kb has filed in before: its entry list file is there, so kb keeps it up to
    // date (on a vault where kb never wrote, following edits creates no file).
    let by = kb_core::domain::ChangeContext::from_source(kb_core::domain::ChangeSource::Cli);
    let vault = Vault::open(dir.path(), Arc::new(ZonedClock::new(None))).unwrap();
    let filed = vault
        .create_as(
            kb_core::domain::NewEntry {
                category: Category::Inbox,
                name: "Scratch".into(),
                fields: kb_core::domain::Frontmatter::new(),
                body: String::new(),
            },
            &by,
        )
        .unwrap();
    vault.delete_as(&filed.path, &by).unwrap();
    drop(vault);
    assert!(dir.path().join("index.md").is_file());
    dir
}

/// Puts [`PULLED`] entry files in place at once, each saying "pulled" (written beside
/// the vault first, so they land as fast as a `git pull` lands them however slow this
/// test's build is), and files that are not entries around them.
fn pull(root: &Path) {
    let staging = tempfile::tempdir_in(root.parent().unwrap()).unwrap();
    for n in 0..PULLED {
        let text = format!("---\nname: Note {n}\n---\npulled text of token{n:05}\n");
        std::fs::write(staging.path().join(n.to_string()), text).unwrap();
    }
    for n in 0..PULLED {
        std::fs::rename(staging.path().join(n.to_string()), root.join(rel(n))).unwrap();
    }
    noise(root, 0);
}

/// Files that are not notes (or that the vault's patterns leave out), in and around the
/// vault, and entries only read.
fn noise(root: &Path, round: usize) {
    for dir in [".git/objects/ab", ".kb/cache", "ideas/sub", "Scratch/deep"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    for n in 0..50 {
        let text = format!("---\nname: Noise {n}\n---\nnoise{round}x{n}");
        for file in [
            format!(".git/objects/ab/obj-{round}-{n}.md"),
            format!(".kb/cache/kb-{round}-{n}.md"),
            format!("ideas/notes-{round}-{n}.txt"),
            format!("ideas/sub/deep-{round}-{n}.md~"),
            format!("ideas/.hidden-{round}-{n}.md"),
            format!("Scratch/deep/left-out-{round}-{n}.md"),
            format!("readme-{round}-{n}.tmp.md"),
        ] {
            std::fs::write(root.join(file), &text).unwrap();
        }
    }
    for category in Category::ALL {
        for item in std::fs::read_dir(root.join(category.as_str())).unwrap() {
            let path = item.unwrap().path();
            if path.is_file() {
                std::fs::read(&path).unwrap();
            }
        }
    }
}

/// The entry files on disk, as vault paths.
fn on_disk(root: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for category in Category::ALL {
        for item in std::fs::read_dir(root.join(category.as_str())).unwrap() {
            let name = item.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".md")
                && !name.starts_with('.')
                && root.join(category.as_str()).join(&name).is_file()
            {
                found.insert(format!("{}/{name}", category.as_str()));
            }
        }
    }
    found
}

/// The entries `index.md` links to.
fn listed_in_index_md(root: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(root.join("index.md")).unwrap_or_default();
    text.split("](").skip(1).filter_map(|rest| rest.split(')').next()).map(str::to_string).collect()
}

fn eventually(mut check: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < WITHIN {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

fn hits(index: &TantivyIndex, text: &str) -> usize {
    index
        .search(&SearchQuery {
            text: text.to_string(),
            category: None,
            limit: 1,
            offset: 0,
            prefix: false,
            ..Default::default()
        })
        .unwrap()
        .total
}

/// A vault and its search index wired as a watching assistant wires them.
struct Watched {
    vault: Arc<Vault>,
    index: Arc<TantivyIndex>,
    _watcher: VaultWatcher,
    sweeping: Arc<AtomicBool>,
}

impl Watched {
    fn open(root: &Path) -> Watched {
        let vault = Arc::new(Vault::open(root, Arc::new(ZonedClock::new(None))).unwrap());
        let index = Arc::new(TantivyIndex::open(Arc::new(vault.files()), &root.join(".kb/index")).unwrap());
        vault.add_observer(Arc::clone(&index) as Arc<dyn ChangeObserver>);
        vault.write_entry_list_in_background();
        let follower = Arc::clone(&vault);
        let on_change: OnChange = Arc::new(move |paths: &[EntryPath]| {
            follower.follow_all(paths);
        });
        let watcher = VaultWatcher::start(Arc::clone(&index), Some(on_change)).unwrap();
        // The folders checked against the vault's view, as a watching process does.
        let sweeping = Arc::new(AtomicBool::new(true));
        let (sweeper, running) = (Arc::downgrade(&vault), Arc::clone(&sweeping));
        std::thread::spawn(move || {
            for tick in 1u32.. {
                std::thread::sleep(Duration::from_millis(500));
                let Some(vault) = sweeper.upgrade() else { return };
                if !running.load(Ordering::Acquire) {
                    return;
                }
                if tick % 10 == 0 {
                    vault.sweep_now()
                } else {
                    vault.sweep_if_due()
                };
            }
        });
        Watched { vault, index, _watcher: watcher, sweeping }
    }

    fn listed(&self) -> usize {
        self.vault.list(&ListFilter { limit: 1, ..ListFilter::default() }).unwrap().total
    }

    /// Writes one entry and waits until `index.md` lists it and search finds it.
    fn fence(&self, root: &Path, name: &str) {
        let rel = format!("inbox/{name}.md");
        write_entry(root, &rel, name, &format!("{name}marker"));
        let seen = eventually(|| {
            listed_in_index_md(root).contains(&rel) && hits(&self.index, &format!("{name}marker")) == 1
        });
        assert!(seen, "{rel} was never followed");
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.sweeping.store(false, Ordering::Release);
    }
}

#[test]
fn a_pull_of_2000_files_is_a_handful_of_commits_and_index_md_rewrites() {
    let dir = vault_before_the_pull();
    let root = dir.path();
    let kb = Watched::open(root);
    assert_eq!(kb.listed(), BEFORE);
    let (commits, writes) = (kb.index.commit_count(), kb.vault.background_entry_list_writes());

    pull(root);
    let expected = on_disk(root);
    assert_eq!(expected.len(), PULLED);
    let followed = eventually(|| {
        hits(&kb.index, "pulled") == PULLED
            && hits(&kb.index, "original") == 0
            && kb.listed() == PULLED
            && listed_in_index_md(root) == expected
    });
    assert!(
        followed,
        "searchable {}, listed {}, in index.md {}",
        hits(&kb.index, "pulled"),
        kb.listed(),
        listed_in_index_md(root).len()
    );
    assert!(hits(&kb.index, "token01999") == 1 && hits(&kb.index, "noise0x1") == 0);
    let pull_commits = kb.index.commit_count() - commits;
    let pull_writes = kb.vault.background_entry_list_writes() - writes;
    assert!((1..=A_HANDFUL).contains(&pull_commits), "{pull_commits} index commits for one pull");
    assert!((1..=A_HANDFUL).contains(&pull_writes), "{pull_writes} index.md rewrites for one pull");

    // Files that are not entries, and reading entries, change nothing: after them, one
    // entry written is one commit and one rewrite (two, should a folder sweep find it
    // before the watcher does).
    kb.fence(root, "fence");
    let (commits, writes) = (kb.index.commit_count(), kb.vault.background_entry_list_writes());
    noise(root, 1);
    kb.fence(root, "sentinel");
    let (more_commits, more_writes) =
        (kb.index.commit_count() - commits, kb.vault.background_entry_list_writes() - writes);
    assert!((1..=2).contains(&more_commits), "{more_commits} commits for one entry after the noise");
    assert!((1..=2).contains(&more_writes), "{more_writes} index.md rewrites for one entry after the noise");
    let mut expected = expected;
    expected.extend(["inbox/fence.md".to_string(), "inbox/sentinel.md".to_string()]);
    assert_eq!(listed_in_index_md(root), expected);
}

#[test]
fn a_sweep_that_finds_many_files_reaches_the_search_index_once() {
    let dir = vault_before_the_pull();
    let root = dir.path();
    let vault = Vault::open(root, Arc::new(ZonedClock::new(None))).unwrap();
    let index = Arc::new(TantivyIndex::open(Arc::new(vault.files()), &root.join(".kb/index")).unwrap());
    vault.add_observer(Arc::clone(&index) as Arc<dyn ChangeObserver>);
    vault.read_entries();
    let commits = index.commit_count();

    // Files the vault never saw change (no watcher here), and some gone.
    for n in BEFORE..BEFORE + 500 {
        write_entry(root, &rel(n), &format!("Note {n}"), "swept in");
    }
    for n in 0..100 {
        std::fs::remove_file(root.join(rel(n))).unwrap();
    }
    assert_eq!(vault.sweep(), 600);
    assert_eq!(index.commit_count(), commits + 1, "one commit for the whole sweep");
    assert_eq!(hits(&index, "swept"), 500);
    assert_eq!(hits(&index, "original"), BEFORE - 100);
    assert_eq!(vault.list(&ListFilter { limit: 1, ..ListFilter::default() }).unwrap().total, BEFORE + 400);
    assert_eq!(vault.sweep(), 0);
    assert_eq!(index.commit_count(), commits + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_assistant_follows_a_pull_of_2000_files() {
    let dir = vault_before_the_pull();
    let root = dir.path().to_path_buf();
    let kb = Assistant::open(Config { watch: true, ..Config::offline(&root) }).await.unwrap();
    assert_eq!(kb.health().entries, BEFORE);

    pull(&root);
    let expected = on_disk(&root);
    let started = Instant::now();
    let mut followed = false;
    while !followed && started.elapsed() < WITHIN {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let pulled = SearchRequest { limit: Some(1), ..SearchRequest::new("pulled") };
        let searchable = kb.entries().search(&pulled).await.is_ok_and(|hits| hits.total == PULLED);
        let one = ListQuery { limit: Some(1), ..ListQuery::default() };
        let listed = kb.entries().list(&one).await.is_ok_and(|page| page.total == PULLED);
        followed = searchable && listed && listed_in_index_md(&root) == expected;
    }
    assert!(followed, "health: {:?}", kb.health());
    let old = kb.entries().search(&SearchRequest::new("original")).await.unwrap();
    assert_eq!(old.total, 0);
    assert_eq!(kb.health().malformed_files, 0);
    kb.close().await;
}
