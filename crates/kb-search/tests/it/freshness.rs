//! The index follows the vault: kb's own changes before the call returns, outside edits
//! through the watcher, changes made while kb was down at the next open, and a lost or
//! broken index is rebuilt.

use std::fs;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kb_domain::{ChangeObserver, EntryChange, EntryPath, FileRead, SearchIndex, Stamp, VaultFiles};
use kb_search::{META_FILE, OnChange, OpenOptions, TantivyIndex, VaultWatcher};
use kb_storage::vault::EntryFiles;

use crate::support::{TestVault, eventually, open_index, paths, search};

const WITHIN: Duration = Duration::from_secs(2);

/// An `OnChange` that records the paths it is called with, and what it recorded.
fn recording() -> (Arc<Mutex<Vec<String>>>, OnChange) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = seen.clone();
    let on_change: OnChange = Arc::new(move |paths: &[EntryPath]| {
        sink.lock().unwrap().extend(paths.iter().map(ToString::to_string))
    });
    (seen, on_change)
}

#[test]
fn changes_reported_to_the_observer_are_searchable_at_once() {
    let v = TestVault::new();
    let index = v.open();
    let entry = v.write_entry("ideas/garden.md", "Garden", "plant tomatoes");
    index.entry_changed(&EntryChange::Upserted(entry));
    assert_eq!(paths(&search(&index, "tomatoes")), ["ideas/garden.md"]);

    let updated = v.write_entry("ideas/garden.md", "Garden", "plant peppers");
    index.entry_changed(&EntryChange::Upserted(updated));
    assert!(search(&index, "tomatoes").entries.is_empty());
    assert_eq!(search(&index, "peppers").total, 1);

    // A move: the new side written, the old side removed.
    let moved = v.write_entry("projects/garden.md", "Garden", "plant peppers");
    fs::remove_file(v.root().join("ideas/garden.md")).unwrap();
    index.entry_changed(&EntryChange::Upserted(moved));
    index.entry_changed(&EntryChange::Removed(EntryPath::parse("ideas/garden.md").unwrap()));
    assert_eq!(paths(&search(&index, "peppers")), ["projects/garden.md"]);

    index.remove(&EntryPath::parse("projects/garden.md").unwrap()).unwrap();
    assert_eq!(search(&index, "peppers").total, 0);
    assert!(index.is_empty());
}

#[test]
fn outside_writes_renames_and_deletes_reach_the_index() {
    let v = TestVault::new();
    let index = Arc::new(v.open());
    let (seen, on_change) = recording();
    let _watcher = VaultWatcher::start(index.clone(), Some(on_change)).unwrap();

    v.write_entry("ideas/outside.md", "Outside", "written by vim");
    assert!(eventually(WITHIN, || search(&index, "vim").total == 1), "write not seen");
    assert!(eventually(WITHIN, || seen.lock().unwrap().contains(&"ideas/outside.md".to_string())));

    v.write_entry("ideas/outside.md", "Outside", "changed in obsidian");
    assert!(eventually(WITHIN, || search(&index, "obsidian").total == 1 && search(&index, "vim").total == 0));

    fs::rename(v.root().join("ideas/outside.md"), v.root().join("people/renamed.md")).unwrap();
    assert!(
        eventually(WITHIN, || paths(&search(&index, "obsidian")) == ["people/renamed.md"]),
        "rename not seen"
    );

    fs::remove_file(v.root().join("people/renamed.md")).unwrap();
    assert!(eventually(WITHIN, || search(&index, "obsidian").total == 0), "delete not seen");

    // Notes in any folder are followed, folders made since included; hidden files are
    // ignored, a malformed one skipped.
    fs::create_dir_all(v.root().join("ideas/sub")).unwrap();
    fs::create_dir_all(v.root().join("Journal/2025")).unwrap();
    v.write("ideas/sub/deep.md", "---\nname: Deep\n---\nhidden treasure");
    v.write("Journal/2025/Day one.md", "Walked to the lake, found treasure.");
    v.write("ideas/.hidden.md", "hidden treasure");
    fs::create_dir_all(v.root().join(".obsidian")).unwrap();
    v.write(".obsidian/workspace.md", "hidden treasure");
    v.write("ideas/broken.md", "---\nname: [unclosed\n---\nhidden treasure");
    v.write_entry("ideas/fine.md", "Fine", "marker");
    assert!(eventually(WITHIN, || search(&index, "marker").total == 1));
    let found = || {
        let mut found = paths(&search(&index, "treasure"));
        found.sort();
        found
    };
    assert!(
        eventually(WITHIN, || found() == ["Journal/2025/Day one.md", "ideas/sub/deep.md"]),
        "{:?}",
        found()
    );
}

#[test]
fn kbs_own_writes_are_not_indexed_twice() {
    let v = TestVault::new();
    let index = Arc::new(v.open());
    let (seen, on_change) = recording();
    let _watcher = VaultWatcher::start(index.clone(), Some(on_change)).unwrap();
    let entry = v.write_entry("ideas/own.md", "Own", "kb wrote this");
    index.entry_changed(&EntryChange::Upserted(entry));
    // An outside write after it proves the watcher has looked at the vault since.
    v.write_entry("ideas/later.md", "Later", "sentinel");
    assert!(eventually(WITHIN, || search(&index, "sentinel").total == 1));
    assert!(eventually(WITHIN, || seen.lock().unwrap().contains(&"ideas/later.md".to_string())));
    assert!(!seen.lock().unwrap().contains(&"ideas/own.md".to_string()), "{:?}", seen.lock().unwrap());
}

#[test]
fn changes_made_while_down_are_seen_at_the_next_open() {
    let v = TestVault::new();
    v.write_entry("ideas/a.md", "A", "alpha");
    v.write_entry("ideas/b.md", "B", "beta");
    v.write_entry("ideas/c.md", "C", "gamma");
    // Files written an hour ago: a file modified within two seconds of the index's last
    // commit is read again at the next open (its stamp cannot tell), these are not.
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for name in ["a", "b", "c"] {
        let file = fs::File::options().write(true).open(v.root().join(format!("ideas/{name}.md"))).unwrap();
        file.set_modified(hour_ago).unwrap();
    }
    let index = v.open();
    assert!(index.open_stats().rebuild_reason.is_some());
    assert_eq!(index.len(), 3);
    drop(index);

    let again = v.open();
    assert_eq!(again.open_stats().rebuild_reason, None);
    assert_eq!(again.open_stats().sync, Default::default(), "nothing changed, nothing read");
    drop(again);

    v.write_entry("ideas/a.md", "A", "alpha changed while down");
    fs::remove_file(v.root().join("ideas/b.md")).unwrap();
    v.write_entry("projects/d.md", "D", "delta");
    let index = v.open();
    let stats = index.open_stats().clone();
    assert_eq!(stats.rebuild_reason, None);
    assert_eq!((stats.sync.added, stats.sync.updated, stats.sync.removed), (1, 1, 1));
    assert_eq!(search(&index, "changed").total, 1);
    assert_eq!(search(&index, "beta").total, 0);
    assert_eq!(search(&index, "delta").total, 1);
    assert_eq!(search(&index, "gamma").total, 1);
}

#[test]
fn a_file_written_just_before_the_last_commit_is_read_again_only_when_it_changed() {
    let v = TestVault::new();
    v.write_entry("ideas/a.md", "A", "alpha");
    v.write_entry("ideas/b.md", "B", "beta");
    // Both files are modified within two seconds of the commit that indexes them: their
    // stamps cannot tell their version, so the next open looks at them. The index holds
    // them as they are, and nothing is indexed again.
    drop(v.open());
    let again = v.open();
    assert_eq!(again.open_stats().rebuild_reason, None);
    assert_eq!(again.open_stats().sync, Default::default(), "unchanged files are not indexed again");
    drop(again);

    // b is rewritten with text of the same size and given back its modification time:
    // its stamp is the indexed one, yet the next open indexes the new text.
    let file = v.root().join("ideas/b.md");
    let modified = fs::metadata(&file).unwrap().modified().unwrap();
    let text = fs::read_to_string(&file).unwrap();
    fs::write(&file, text.replace("beta", "kiwi")).unwrap();
    fs::File::options().write(true).open(&file).unwrap().set_modified(modified).unwrap();
    assert_eq!(fs::metadata(&file).unwrap().len(), text.len() as u64);
    let index = v.open();
    assert_eq!(index.open_stats().sync.updated, 1);
    assert_eq!(paths(&search(&index, "kiwi")), ["ideas/b.md"]);
    assert_eq!(search(&index, "beta").total, 0);
    assert_eq!(search(&index, "alpha").total, 1);
}

#[test]
fn a_deleted_or_broken_index_is_rebuilt() {
    let v = TestVault::new();
    v.write_entry("ideas/a.md", "A", "alpha");
    drop(v.open());
    fs::remove_dir_all(v.index_dir()).unwrap();
    let index = v.open();
    assert!(index.open_stats().rebuild_reason.is_some());
    assert_eq!(search(&index, "alpha").total, 1);
    drop(index);

    // tantivy's own meta file garbled.
    fs::write(v.index_dir().join("meta.json"), "{ not json").unwrap();
    let index = v.open();
    assert!(index.open_stats().rebuild_reason.as_deref().unwrap().contains("cannot be opened"));
    assert_eq!(search(&index, "alpha").total, 1);
    drop(index);

    // Every segment file replaced by garbage. Replaced, not cut short in place: a file
    // this process still maps (a thread of the dropped index finishing) must keep its
    // pages, or reading them kills the test binary (SIGBUS).
    for item in fs::read_dir(v.index_dir()).unwrap() {
        let path = item.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.len() > 32 && !name.starts_with('.') {
            let garbage = path.with_file_name(format!(".{name}.garbage"));
            fs::write(&garbage, b"garbage").unwrap();
            fs::rename(&garbage, &path).unwrap();
        }
    }
    let index = v.open();
    assert!(index.open_stats().rebuild_reason.is_some());
    assert_eq!(search(&index, "alpha").total, 1);
    drop(index);

    // An index written by an older schema.
    fs::write(v.index_dir().join(META_FILE), "{\"schema_version\": 0}").unwrap();
    let index = v.open();
    assert!(index.open_stats().rebuild_reason.as_deref().unwrap().contains("schema version 0"));
    assert_eq!(search(&index, "alpha").total, 1);
}

#[test]
fn a_malformed_file_is_skipped_without_failing_the_rest() {
    let v = TestVault::new();
    v.write_entry("ideas/good.md", "Good", "findable words");
    v.write("ideas/bad.md", "---\nname: [unclosed\n---\nfindable words");
    fs::write(v.root().join("ideas/binary.md"), [0xff, 0xfe, 0x00]).unwrap();
    v.write("ideas/plain.md", "no frontmatter, findable words");
    let index = v.open();
    assert_eq!(index.open_stats().sync.malformed, 2);
    let mut found = paths(&search(&index, "findable"));
    found.sort();
    assert_eq!(found, ["ideas/good.md", "ideas/plain.md"]);
    // The malformed files are never touched.
    assert!(fs::read_to_string(v.root().join("ideas/bad.md")).unwrap().contains("[unclosed"));
}

#[test]
fn progress_is_reported_during_a_rebuild() {
    let v = TestVault::new();
    kb_search::testgen::write_vault(v.root(), 2500, 1).unwrap();
    let reports: Arc<Mutex<Vec<kb_search::IndexProgress>>> = Arc::default();
    let sink = reports.clone();
    let options = kb_search::OpenOptions {
        progress: Some(Arc::new(move |p| sink.lock().unwrap().push(p))),
        ..Default::default()
    };
    let index = open_index(v.root(), options).unwrap();
    assert_eq!(index.len(), 2500);
    let reports = reports.lock().unwrap();
    assert!(reports.len() >= 3, "{reports:?}");
    let last = reports.last().unwrap();
    assert!(last.rebuilding && last.done == 2500 && last.total == 2500, "{last:?}");
}

#[test]
fn an_index_of_a_vault_that_is_not_there_cannot_be_opened() {
    let v = TestVault::new();
    // A vault folder that is not there has no entry files to give.
    assert!(kb_storage::vault::EntryFiles::new(v.root().join("missing")).is_err());
    // One removed after its files were taken cannot be indexed.
    let gone = tempfile::tempdir().unwrap();
    let files = std::sync::Arc::new(kb_storage::vault::EntryFiles::new(gone.path()).unwrap());
    let index_dir = v.root().join(".kb/other-index");
    drop(gone);
    let opened = TantivyIndex::open(files, &index_dir);
    assert!(matches!(opened, Err(kb_search::OpenError::Vault { .. })), "{opened:?}");
}

#[test]
fn settling_has_every_earlier_outside_edit_handled_before_it_returns() {
    let v = TestVault::new();
    let index = Arc::new(v.open());
    let (seen, on_change) = recording();
    let watcher = VaultWatcher::start(index.clone(), Some(on_change)).unwrap();
    let settler = watcher.settler().expect("the fence folder is watched");

    // Each edit is followed the moment settle returns: no waiting for the debounce.
    for round in 0..20 {
        let word = format!("settled{round}");
        v.write_entry(&format!("ideas/round{round}.md"), "Round", &word);
        // Now and then the round before's file goes too.
        let gone = (round % 3 == 1).then(|| format!("ideas/round{}.md", round - 1));
        if gone.is_some() {
            fs::remove_file(v.root().join(format!("ideas/round{}.md", round - 1))).unwrap();
        }
        assert!(settler.settle(Duration::from_secs(10)), "round {round} did not settle");
        assert_eq!(search(&index, &word).total, 1, "round {round}: the write is not searchable");
        assert!(seen.lock().unwrap().contains(&format!("ideas/round{round}.md")), "round {round}");
        if let Some(gone) = gone {
            let word = format!("settled{}", round - 1);
            assert!(
                !paths(&search(&index, &word)).contains(&gone),
                "round {round}: the delete is not followed"
            );
        }
    }
    // Settling with nothing to follow returns at once, and leaves no fence behind.
    assert!(settler.settle(Duration::from_secs(10)));
    let fences = index.index_dir().join("watch-fences");
    assert_eq!(fs::read_dir(&fences).unwrap().count(), 0, "fences are removed");
    drop(watcher);
    assert!(!settler.settle(Duration::from_millis(300)), "a stopped watcher settles nothing");
}

#[test]
fn settles_running_at_once_each_see_the_edits_made_before_them() {
    let v = TestVault::new();
    let index = Arc::new(v.open());
    let watcher = VaultWatcher::start(index.clone(), None).unwrap();
    let settler = watcher.settler().expect("the fence folder is watched");
    std::thread::scope(|scope| {
        for thread in 0..4 {
            let (v, index, settler) = (&v, &index, settler.clone());
            scope.spawn(move || {
                for round in 0..10 {
                    let word = format!("thread{thread}x{round}y");
                    v.write_entry(&format!("ideas/t{thread}-r{round}.md"), "Concurrent", &word);
                    assert!(settler.settle(Duration::from_secs(10)), "thread {thread} round {round}");
                    let found = paths(&search(index, &word));
                    assert!(found.contains(&format!("ideas/t{thread}-r{round}.md")), "{word}: {found:?}");
                }
            });
        }
    });
}

/// The vault's entry files, counting the files read, with a listing that may miss one
/// path: what a walk that began before another kb process wrote (and indexed) that file
/// gives.
struct ListingBehind {
    files: EntryFiles,
    missing: Mutex<Option<EntryPath>>,
    reads: std::sync::atomic::AtomicUsize,
}

impl ListingBehind {
    fn of(root: &std::path::Path) -> Arc<ListingBehind> {
        Arc::new(ListingBehind {
            files: EntryFiles::new(root).unwrap(),
            missing: Mutex::default(),
            reads: Default::default(),
        })
    }

    fn reads(&self) -> usize {
        self.reads.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl VaultFiles for ListingBehind {
    fn root(&self) -> &std::path::Path {
        self.files.root()
    }
    fn entry_files(&self) -> Vec<(EntryPath, Stamp)> {
        let mut listed = self.files.entry_files();
        let missing = self.missing.lock().unwrap().clone();
        listed.retain(|(path, _)| Some(path) != missing.as_ref());
        listed
    }
    fn note_folders(&self) -> Vec<std::path::PathBuf> {
        self.files.note_folders()
    }
    fn note_folder_of(&self, folder: &std::path::Path) -> Option<String> {
        self.files.note_folder_of(folder)
    }
    fn stamp(&self, path: &EntryPath) -> Option<Stamp> {
        self.files.stamp(path)
    }
    fn read(&self, path: &EntryPath) -> FileRead {
        self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.files.read(path)
    }
    fn entry_path_of(&self, file: &std::path::Path) -> Option<EntryPath> {
        self.files.entry_path_of(file)
    }
}

/// A catch-up whose walk began before a file was written and indexed keeps that file's
/// entry: the file is looked at again before it counts as gone.
#[test]
fn a_walk_older_than_the_index_drops_no_file_that_is_there() {
    let vault = TestVault::new();
    vault.write_entry("ideas/kiln.md", "Kiln", "A wood-fired kiln.");
    let files = ListingBehind::of(vault.root());
    let index = TantivyIndex::open_with(files.clone(), &vault.index_dir(), OpenOptions::default()).unwrap();
    let glaze = vault.write_entry("ideas/glaze.md", "Glaze", "An ash glaze from the garden.");
    index.upsert(&glaze).unwrap();
    *files.missing.lock().unwrap() = Some(glaze.path.clone());
    index.reconcile().unwrap();
    assert_eq!(paths(&search(&index, "glaze")), ["ideas/glaze.md"], "the entry was dropped");
    // A file really gone is still dropped.
    fs::remove_file(vault.root().join("ideas/kiln.md")).unwrap();
    index.reconcile().unwrap();
    assert!(paths(&search(&index, "kiln")).is_empty());
}

/// Files indexed just after they were written are doubted by the next open, and found as
/// indexed; the open then commits, so that the opens after it doubt them no more.
#[test]
fn files_found_as_indexed_are_doubted_once() {
    let vault = TestVault::new();
    vault.write_entry("ideas/a.md", "A", "alpha");
    vault.write_entry("ideas/b.md", "B", "beta");
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for name in ["a", "b"] {
        let file =
            fs::File::options().write(true).open(vault.root().join(format!("ideas/{name}.md"))).unwrap();
        file.set_modified(hour_ago).unwrap();
    }
    drop(vault.open());
    // The last commit a second after the files were written: their stamps are doubted.
    let meta = fs::File::options().write(true).open(vault.index_dir().join("meta.json")).unwrap();
    meta.set_modified(hour_ago + std::time::Duration::from_secs(1)).unwrap();
    drop(meta);
    let open = |files: &Arc<ListingBehind>| {
        TantivyIndex::open_with(files.clone(), &vault.index_dir(), OpenOptions::default()).unwrap()
    };
    let files = ListingBehind::of(vault.root());
    let index = open(&files);
    assert_eq!(index.open_stats().sync, Default::default(), "found as indexed");
    assert_eq!(files.reads(), 2, "each doubted file is read once");
    drop(index);
    let files = ListingBehind::of(vault.root());
    let index = open(&files);
    assert_eq!(files.reads(), 0, "no doubt is left");
    assert_eq!(paths(&search(&index, "alpha")), ["ideas/a.md"]);
}
