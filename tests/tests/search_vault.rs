#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The vault with the search index as its change observer: every create, update, move and
//! delete made through kb is visible to search before the call returns, and the file
//! watcher does not index kb's own writes a second time.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kb_domain::{
    Category, EntryCatalogue, EntryPath, EntryUpdate, EntryWriter, Frontmatter, NewEntry, SearchIndex,
    SearchQuery, SearchResults, SystemClock,
};
use kb_search::{OnChange, TantivyIndex, VaultWatcher};
use kb_storage::vault::{EntryFiles, Vault};
use serde_json::json;

fn search(index: &TantivyIndex, text: &str) -> SearchResults {
    index
        .search(&SearchQuery {
            text: text.into(),
            category: None,
            limit: 10,
            offset: 0,
            prefix: false,
            ..Default::default()
        })
        .unwrap()
}

fn paths(r: &SearchResults) -> Vec<String> {
    r.entries.iter().map(|h| h.path.to_string()).collect()
}

fn setup() -> (tempfile::TempDir, Vault, Arc<TantivyIndex>) {
    let dir = tempfile::tempdir().unwrap();
    let vault = Vault::open(dir.path(), Arc::new(SystemClock)).unwrap();
    let index = Arc::new(TantivyIndex::open(Arc::new(vault.files()), &dir.path().join(".kb/index")).unwrap());
    vault.add_observer(index.clone());
    (dir, vault, index)
}

fn new_project(name: &str, next_action: &str, body: &str) -> NewEntry {
    let mut fields = Frontmatter::new();
    fields.set("next_action", json!(next_action));
    fields.set("tags", json!(["clientco"]));
    NewEntry { category: Category::Projects, name: name.into(), fields, body: body.into() }
}

#[test]
fn every_change_through_the_vault_is_searchable_before_the_call_returns() {
    let (_dir, vault, index) = setup();

    let created = vault
        .create(new_project("ClientCo integration", "Email Sarah the API spec", "Kickoff notes"))
        .unwrap();
    let r = search(&index, "clientco");
    assert_eq!(paths(&r), [created.path.to_string()]);
    assert_eq!(r.entries[0].name, "ClientCo integration");
    assert_eq!(search(&index, "sarah").entries[0].matched_field, "next_action");

    let update = EntryUpdate::from_json_object(
        json!({"content": "Budget approved by Zoë"}).as_object().unwrap().clone(),
    )
    .unwrap();
    vault.update(&created.path, &update).unwrap();
    assert_eq!(search(&index, "kickoff").total, 0);
    assert_eq!(paths(&search(&index, "zoe budget")), [created.path.to_string()]);

    let moved = vault.move_entry(&created.path, Category::Ideas).unwrap();
    let r = search(&index, "budget");
    assert_eq!(paths(&r), [moved.entry.path.to_string()]);
    assert_eq!(r.entries[0].category, Category::Ideas);
    assert_ne!(moved.entry.path, created.path);

    vault.delete(&moved.entry.path).unwrap();
    assert_eq!(search(&index, "budget").total, 0);
    assert!(index.is_empty());
}

#[test]
fn the_watcher_leaves_kbs_own_writes_alone_and_catches_outside_ones() {
    let (dir, vault, index) = setup();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = seen.clone();
    let on_change: OnChange = Arc::new(move |paths: &[EntryPath]| {
        sink.lock().unwrap().extend(paths.iter().map(ToString::to_string))
    });
    let _watcher = VaultWatcher::start(index.clone(), Some(on_change)).unwrap();

    let created = vault.create(new_project("Garden shed", "Buy wood", "Plans for the shed")).unwrap();
    let moved = vault.move_entry(&created.path, Category::Ideas).unwrap();

    // A file written by another program afterwards; once it is seen, the watcher has also
    // looked at kb's own writes.
    std::fs::create_dir_all(dir.path().join("people")).unwrap();
    std::fs::write(dir.path().join("people/outside.md"), "---\nname: Outside\n---\nsentinel words\n")
        .unwrap();
    let start = Instant::now();
    while search(&index, "sentinel").total == 0 && start.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(search(&index, "sentinel").total, 1, "outside write not seen within 2 s");
    while !seen.lock().unwrap().contains(&"people/outside.md".to_string())
        && start.elapsed() < Duration::from_secs(2)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let seen = seen.lock().unwrap().clone();
    assert!(seen.contains(&"people/outside.md".to_string()), "{seen:?}");
    assert!(
        !seen.contains(&created.path.to_string()) && !seen.contains(&moved.entry.path.to_string()),
        "{seen:?}"
    );
    // The vault can refresh its cache for the path the watcher reported.
    assert_eq!(
        vault.refresh(&EntryPath::parse("people/outside.md").unwrap()).unwrap().unwrap().name(),
        "Outside"
    );
    assert_eq!(paths(&search(&index, "shed")), [moved.entry.path.to_string()]);
}

#[test]
fn an_index_opened_over_an_existing_vault_finds_its_entries() {
    let dir = tempfile::tempdir().unwrap();
    let vault = Vault::open(dir.path(), Arc::new(SystemClock)).unwrap();
    let made =
        vault.create(new_project("Quarterly taxes", "File the return", "Receipts in the drawer")).unwrap();
    drop(vault);
    let files = Arc::new(EntryFiles::new(dir.path()).unwrap());
    let index = TantivyIndex::open(files, &dir.path().join(".kb/index")).unwrap();
    assert_eq!(paths(&search(&index, "receipts drawer")), [made.path.to_string()]);
    assert_eq!(search(&index, "index").total, 0, "index.md at the root is not an entry");
}

#[test]
fn a_search_during_moves_never_sees_an_entry_twice() {
    let (_dir, vault, index) = setup();
    let created = vault.create(new_project("Heliotrope kiln", "fire the glaze", "")).unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    let seen_twice = std::thread::scope(|scope| {
        let searcher = scope.spawn(|| {
            let mut twice = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                twice += usize::from(search(&index, "heliotrope").total > 1);
            }
            twice
        });
        let mut path = created.path.clone();
        for i in 0..120 {
            let target = if i % 2 == 0 { Category::Ideas } else { Category::Projects };
            path = vault.move_entry(&path, target).unwrap().entry.path;
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        searcher.join().unwrap()
    });
    assert_eq!(seen_twice, 0, "a search saw the old and the new path of a move at once");
    assert_eq!(search(&index, "heliotrope").total, 1);
}
