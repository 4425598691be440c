//! Unit tests of the vault as a whole: slugs and suffixes, move collisions, journal
//! recovery, malformed files, refused paths, `index.md` and observers.

use std::sync::{Arc, Mutex};

use chrono::{TimeZone, Utc};
use kb_domain::{
    Category, ChangeContext, Entry, EntryCatalogue, EntryReader, EntryUpdate, EntryWriter, FixedClock,
    FrontmatterError, NewEntry,
};
use serde_json::json;

use super::journal::JournalFile;
use super::*;

pub(super) fn clock() -> Arc<dyn Clock> {
    Arc::new(FixedClock(Utc.with_ymd_and_hms(2026, 11, 21, 9, 14, 3).unwrap()))
}

pub(super) fn open(dir: &Path) -> Vault {
    Vault::open(dir, clock()).unwrap()
}

/// Writes a file as the person would, making its folder first (opening a vault makes no
/// category folder).
fn put(file: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    let file = file.as_ref();
    if let Some(folder) = file.parent() {
        fs::create_dir_all(folder)?;
    }
    fs::write(file, bytes)
}

pub(super) fn new_entry(category: Category, name: &str) -> NewEntry {
    NewEntry { category, name: name.into(), fields: Frontmatter::new(), body: "notes\n".into() }
}

pub(super) fn path(text: &str) -> EntryPath {
    EntryPath::parse(text).unwrap()
}

#[test]
fn opening_adds_nothing_to_the_vault_until_kb_files_an_entry() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    put(root.join("Journal/2025/june.md"), "# June\n").unwrap();
    let vault = open(&root);
    let mut made: Vec<String> =
        fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    made.sort();
    assert_eq!(made, [".kb", "Journal"], "only kb's own state folder is added");
    drop(vault);
    let vault = open(&root);
    let by = ChangeContext::from_source(kb_domain::ChangeSource::Api);
    vault.create_as(new_entry(Category::Ideas, "Kiln"), &by).unwrap();
    assert!(root.join("ideas").is_dir());
    assert!(!root.join("people").exists(), "a folder is made when kb first files there");
    assert_eq!(fs::read_to_string(root.join("index.md")).unwrap(), vault.entry_list_markdown());
}

#[test]
fn an_entry_list_file_already_there_is_kept_up_to_date_from_the_first_use() {
    let dir = tempfile::tempdir().unwrap();
    let by = ChangeContext::from_source(kb_domain::ChangeSource::Api);
    open(dir.path()).create_as(new_entry(Category::Ideas, "Kiln"), &by).unwrap();
    put(dir.path().join("people/priya.md"), "---\nname: Priya\n---\nmet at the meetup\n").unwrap();
    let vault = open(dir.path());
    // Opening reads nothing; the first use of the entries reads what changed since the
    // catalogue was saved, and the entry list is put right once the vault is flushed (as a
    // command's close does).
    assert_eq!(vault.list(&kb_domain::ListFilter::default()).unwrap().total, 2);
    vault.flush();
    let list = fs::read_to_string(dir.path().join("index.md")).unwrap();
    assert_eq!(list, vault.entry_list_markdown());
    assert!(list.contains("Priya"), "{list}");

    // Or with the next change, in the same patch.
    put(dir.path().join("people/sam.md"), "---\nname: Sam\n---\nowes me for the tickets\n").unwrap();
    drop(vault);
    let vault = open(dir.path());
    vault.create_as(new_entry(Category::Ideas, "Glaze"), &by).unwrap();
    let list = fs::read_to_string(dir.path().join("index.md")).unwrap();
    assert_eq!(list, vault.entry_list_markdown());
    assert!(list.contains("Sam") && list.contains("Glaze"), "{list}");
}

#[test]
fn a_unique_create_refuses_a_namesake_even_one_written_by_another_process_a_moment_ago() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let by = ChangeContext::from_source(kb_domain::ChangeSource::Api);
    let create_unique = |new: NewEntry| vault.create_unique_as(new, &by);
    let ada = create_unique(new_entry(Category::People, "Ada Byron")).unwrap();
    assert_eq!(ada.path, path("people/ada-byron.md"));
    let again = create_unique(new_entry(Category::People, "ada  byron"));
    assert!(
        matches!(&again, Err(RepositoryError::NameTaken(found)) if found[0].entry.path == ada.path),
        "{again:?}"
    );
    assert!(create_unique(new_entry(Category::People, "Ada")).is_err(), "a first name is a namesake too");
    assert!(create_unique(new_entry(Category::Projects, "Ada Byron")).is_ok(), "another category is not");
    // Written by another process, not yet seen by this one (no watcher here).
    put(dir.path().join("people/grace-hopper.md"), "---\nname: Grace Hopper\n---\nCOBOL\n").unwrap();
    let grace = create_unique(new_entry(Category::People, "Grace Hopper"));
    assert!(
        matches!(&grace, Err(RepositoryError::NameTaken(found)) if found[0].entry.path == path("people/grace-hopper.md")),
        "{grace:?}"
    );
    assert!(!dir.path().join("people/grace-hopper-2.md").exists());
    // The plain create still files a namesake, with a suffix.
    assert_eq!(
        vault.create(new_entry(Category::People, "Grace Hopper")).unwrap().path,
        path("people/grace-hopper-2.md")
    );
}

#[test]
fn taken_slug_gets_a_suffix() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let a = vault.create(new_entry(Category::Projects, "ClientCo integration")).unwrap();
    let b = vault.create(new_entry(Category::Projects, "clientco  Integration!")).unwrap();
    let c = vault.create(new_entry(Category::Projects, "ClientCo integration")).unwrap();
    assert_eq!(a.path.to_string(), "projects/clientco-integration.md");
    assert_eq!(b.path.to_string(), "projects/clientco-integration-2.md");
    assert_eq!(c.path.to_string(), "projects/clientco-integration-3.md");
    assert_ne!(a.id(), b.id());
    assert_eq!(vault.get(&b.path).unwrap(), b);
    // A file kb does not know yet (written by hand) is not clobbered either.
    put(dir.path().join("ideas/x.md"), "mine").unwrap();
    let x = vault.create(new_entry(Category::Ideas, "x")).unwrap();
    assert_eq!(x.path.to_string(), "ideas/x-2.md");
    assert_eq!(fs::read_to_string(dir.path().join("ideas/x.md")).unwrap(), "mine");
}

#[test]
fn move_takes_a_suffix_on_collision_and_keeps_the_id() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let existing = vault.create(new_entry(Category::Projects, "Garden shed")).unwrap();
    let mut fields = Frontmatter::new();
    fields.set("original_text", json!("build a garden shed"));
    fields.set("suggested_category", json!("projects"));
    let inbox = vault
        .create(NewEntry {
            category: Category::Inbox,
            name: "Garden shed".into(),
            fields,
            body: String::new(),
        })
        .unwrap();
    let moved = vault.move_entry(&inbox.path, Category::Projects).unwrap();
    assert_eq!(moved.entry.path.to_string(), "projects/garden-shed-2.md");
    assert_eq!(moved.entry.id(), inbox.id());
    assert_eq!(moved.entry.status(), Some("active"));
    assert_eq!(moved.entry.body, "build a garden shed\n");
    assert!(matches!(vault.get(&inbox.path), Err(RepositoryError::NotFound(_))));
    assert_eq!(vault.get(&moved.entry.path).unwrap(), moved.entry);
    assert_eq!(vault.get(&existing.path).unwrap(), existing);
    assert!(!dir.path().join(".kb/move-journal.json").exists());
    assert_eq!(vault.list(&ListFilter::default()).unwrap().total, 2);
}

#[test]
fn a_move_interrupted_after_the_new_file_is_finished_on_open() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path()));
    let text = "---\nid: 01ABC\nname: Shed\n---\nbody\n";
    put(dir.path().join("inbox/shed.md"), text).unwrap();
    put(dir.path().join("projects/shed.md"), "---\nid: 01ABC\nname: Shed\nstatus: active\n---\nbody\n")
        .unwrap();
    put(
        dir.path().join(".kb/move-journal.json"),
        r#"{"old":"inbox/shed.md","new":"projects/shed.md","id":"01ABC"}"#,
    )
    .unwrap();
    let vault = open(dir.path());
    assert!(!dir.path().join("inbox/shed.md").exists());
    assert!(dir.path().join("projects/shed.md").exists());
    assert!(!dir.path().join(".kb/move-journal.json").exists());
    let page = vault.list(&ListFilter::default()).unwrap();
    assert_eq!(page.total, 1);
    assert_eq!(page.entries[0].path.to_string(), "projects/shed.md");
}

#[test]
fn malformed_files_are_reported_skipped_and_never_touched() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path()));
    let bad = dir.path().join("projects/bad.md");
    let bytes = b"---\nname: [unclosed\n---\nbody\n";
    put(&bad, bytes).unwrap();
    put(dir.path().join("ideas/latin1.md"), [b'c', b'a', b'f', 0xe9]).unwrap();
    let vault = open(dir.path());
    let malformed = vault.malformed();
    let paths: Vec<String> = malformed.iter().map(|m| m.path.to_string()).collect();
    assert_eq!(paths, ["projects/bad.md", "ideas/latin1.md"]);
    assert_eq!(malformed[1].reason, FrontmatterError::NotUtf8.to_string());
    assert_eq!(vault.list(&ListFilter::default()).unwrap().total, 0);

    let p = path("projects/bad.md");
    let update =
        EntryUpdate::from_json_object(json!({"status": "done"}).as_object().unwrap().clone()).unwrap();
    assert!(matches!(vault.update(&p, &update), Err(RepositoryError::Malformed { .. })));
    assert!(matches!(vault.move_entry(&p, Category::Ideas), Err(RepositoryError::Malformed { .. })));
    assert!(matches!(vault.delete(&p), Err(RepositoryError::Malformed { .. })));
    assert!(matches!(vault.get(&p), Err(RepositoryError::Malformed { .. })));
    assert_eq!(fs::read(&bad).unwrap(), bytes);
    // Creating an entry of the same name never takes the malformed file's place.
    let created = vault.create(new_entry(Category::Projects, "bad")).unwrap();
    assert_eq!(created.path.to_string(), "projects/bad-2.md");
    assert_eq!(fs::read(&bad).unwrap(), bytes);
}

#[test]
fn paths_outside_the_vault_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    assert!(EntryPath::parse("../x.md").is_err());
    let missing = path("projects/nothing.md");
    let err = vault.get(&missing).unwrap_err();
    assert_eq!(err.to_string(), "Entry not found: projects/nothing.md");
    #[cfg(unix)]
    {
        let outside = tempfile::tempdir().unwrap();
        put(outside.path().join("secret.md"), "---\nname: secret\n---\n").unwrap();
        fs::create_dir(dir.path().join("projects")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), dir.path().join("projects/s.md"))
            .unwrap();
        let s = path("projects/s.md");
        assert!(matches!(vault.get(&s), Err(RepositoryError::OutsideVault(_))));
        let update = EntryUpdate::from_json_object(json!({"x": 1}).as_object().unwrap().clone()).unwrap();
        assert!(matches!(vault.update(&s, &update), Err(RepositoryError::OutsideVault(_))));
        assert!(matches!(vault.delete(&s), Err(RepositoryError::OutsideVault(_))));
        assert_eq!(fs::read_to_string(outside.path().join("secret.md")).unwrap(), "---\nname: secret\n---\n");
    }
}

#[test]
fn entry_list_lists_entries_after_create_and_not_after_delete() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let mut fields = Frontmatter::new();
    fields.set("next_action", json!("Email Sarah the API spec"));
    let e = vault
        .create(NewEntry {
            category: Category::Projects,
            name: "ClientCo".into(),
            fields,
            body: String::new(),
        })
        .unwrap();
    let line = "- [ClientCo](projects/clientco.md) — Next: Email Sarah the API spec";
    assert!(vault.entry_list_markdown().contains(line), "{}", vault.entry_list_markdown());
    assert!(fs::read_to_string(dir.path().join("index.md")).unwrap().contains(line));
    vault.delete(&e.path).unwrap();
    assert!(!vault.entry_list_markdown().contains("clientco"));
    assert!(!fs::read_to_string(dir.path().join("index.md")).unwrap().contains("clientco"));
    assert!(matches!(vault.delete(&e.path), Err(RepositoryError::NotFound(_))));
}

/// Records changes, one string per operation (`+new -old` for a move).
#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl ChangeObserver for Recorder {
    fn entry_changed(&self, change: &EntryChange) {
        self.entries_changed(std::slice::from_ref(change));
    }

    fn entries_changed(&self, changes: &[EntryChange]) {
        let text: Vec<String> = changes
            .iter()
            .map(|change| match change {
                EntryChange::Upserted(e) => format!("+{}", e.path),
                EntryChange::Removed(p) => format!("-{p}"),
            })
            .collect();
        self.0.lock().unwrap().push(text.join(" "));
    }
}

#[test]
fn observers_hear_every_change_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let recorder = Arc::new(Recorder::default());
    vault.add_observer(recorder.clone());
    let e = vault.create(new_entry(Category::Ideas, "Tea")).unwrap();
    let update =
        EntryUpdate::from_json_object(json!({"one_liner": "green"}).as_object().unwrap().clone()).unwrap();
    vault.update(&e.path, &update).unwrap();
    let moved = vault.move_entry(&e.path, Category::Projects).unwrap();
    vault.delete(&moved.entry.path).unwrap();
    put(dir.path().join("admin/hand.md"), "written by hand").unwrap();
    let hand = path("admin/hand.md");
    assert!(vault.refresh(&hand).unwrap().is_some());
    fs::remove_file(dir.path().join("admin/hand.md")).unwrap();
    assert!(vault.refresh(&hand).unwrap().is_none());
    let events = recorder.0.lock().unwrap().clone();
    assert_eq!(
        events,
        [
            "+ideas/tea.md",
            "+ideas/tea.md",
            "+projects/tea.md -ideas/tea.md",
            "-projects/tea.md",
            "+admin/hand.md",
            "-admin/hand.md"
        ]
    );
}

#[test]
fn a_move_and_its_reference_updates_reach_observers_as_one_change() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let tea = vault.create(new_entry(Category::Inbox, "Tea")).unwrap();
    let mut fields = Frontmatter::new();
    fields.set("related_projects", json!(["inbox/tea.md"]));
    vault
        .create(NewEntry { category: Category::People, name: "Ana".into(), fields, body: String::new() })
        .unwrap();
    let recorder = Arc::new(Recorder::default());
    vault.add_observer(recorder.clone());
    vault.move_entry(&tea.path, Category::Projects).unwrap();
    assert_eq!(*recorder.0.lock().unwrap(), ["+projects/tea.md -inbox/tea.md +people/ana.md"]);
}

#[test]
fn an_old_file_already_gone_means_the_move_is_done_not_undone() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let tea = vault.create(new_entry(Category::Ideas, "Tea")).unwrap();
    let old_file = tea.path.under(dir.path());
    let new_path = path("projects/tea.md");
    put(new_path.under(dir.path()), fs::read(&old_file).unwrap()).unwrap();
    fs::remove_file(&old_file).unwrap();
    let journal = JournalFile::new(&vault.root);
    vault.remove_moved(&old_file, &new_path, &journal).unwrap();
    assert!(new_path.under(dir.path()).exists(), "the only copy was deleted");
}

#[test]
fn refresh_notices_outside_edits_and_malformed_files() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let e = vault.create(new_entry(Category::People, "Sarah")).unwrap();
    let file = dir.path().join("people/sarah.md");
    put(&file, "---\nname: Sarah Chen\ncontext: met at a conference\n---\n").unwrap();
    let fresh = vault.refresh(&e.path).unwrap().unwrap();
    assert_eq!(fresh.name(), "Sarah Chen");
    assert_eq!(vault.list(&ListFilter::default()).unwrap().entries[0].name, "Sarah Chen");
    put(&file, "---\nname: [oops\n---\n").unwrap();
    assert!(matches!(vault.refresh(&e.path), Err(RepositoryError::Malformed { .. })));
    assert_eq!(vault.malformed().len(), 1);
    assert_eq!(vault.list(&ListFilter::default()).unwrap().total, 0);
    assert_eq!(fs::read_to_string(&file).unwrap(), "---\nname: [oops\n---\n");
}

#[test]
fn moving_a_hand_written_file_gives_it_an_id() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path()));
    put(dir.path().join("ideas/Tea Idea.md"), "---\nid: 42\nmood: calm\n---\nsteep longer\n").unwrap();
    put(dir.path().join("ideas/bare.md"), "just text\n").unwrap();
    let vault = open(dir.path());
    let moved = vault.move_entry(&path("ideas/Tea Idea.md"), Category::Projects).unwrap();
    assert_eq!(moved.entry.id(), Some("42"));
    assert_eq!(moved.entry.path.to_string(), "projects/tea-idea.md");
    assert_eq!(moved.entry.frontmatter.get_str("mood"), Some("calm"));
    let bare = vault.move_entry(&path("ideas/bare.md"), Category::People).unwrap();
    assert!(bare.entry.id().is_some_and(|id| id.len() == 26));
    assert_eq!(bare.entry.name(), "bare");
    assert_eq!(bare.entry.body, "just text\n");
    assert_eq!(vault.get(&moved.entry.path).unwrap().id(), Some("42"));
}

#[test]
fn a_sweep_catches_files_made_and_removed_behind_its_back_in_folders_it_found_in_line_before() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let by = ChangeContext::from_source(kb_domain::ChangeSource::Api);
    let kept = vault.create_as(new_entry(Category::Ideas, "Kiln"), &by).unwrap();
    let doomed = vault.create_as(new_entry(Category::Admin, "Passport"), &by).unwrap();
    // Folders untouched for a while: a sweep finds them in line and remembers them so.
    let settle = |category: Category| {
        let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        fs::create_dir_all(dir.path().join(category.as_str())).unwrap();
        fs::File::open(dir.path().join(category.as_str())).unwrap().set_modified(long_ago).unwrap();
    };
    Category::ALL.into_iter().for_each(settle);
    assert_eq!(vault.sweep(), 0);
    assert_eq!(vault.sweep(), 0);

    // Another program adds one file and removes another; no file event reaches this vault.
    put(dir.path().join("ideas/glaze.md"), "---\nname: Glaze\n---\nceladon\n").unwrap();
    fs::remove_file(dir.path().join(doomed.path.to_string())).unwrap();
    assert_eq!(vault.sweep(), 2);
    let listed: Vec<String> =
        vault.list(&ListFilter::default()).unwrap().entries.iter().map(|e| e.path.to_string()).collect();
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(listed.contains(&kept.path.to_string()) && listed.contains(&"ideas/glaze.md".to_string()));
}

/// Priya, and the Kiln project whose notes link to her.
fn priya_and_kiln(vault: &Vault, by: &ChangeContext) -> (Entry, Entry) {
    let priya = vault.create_as(new_entry(Category::People, "Priya"), by).unwrap();
    let mut kiln = new_entry(Category::Projects, "Kiln");
    kiln.body = "Ask [[Priya]] about firing.\n".into();
    (priya, vault.create_as(kiln, by).unwrap())
}

/// The notes that link to `path`, each as its name and the line of the link.
fn backlinks_of(vault: &Vault, path: &EntryPath) -> Vec<String> {
    vault.links(path).unwrap().backlinks.iter().map(|n| format!("{} {}", n.name, n.line)).collect()
}

#[test]
fn links_and_backlinks_follow_creates_updates_moves_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let by = ChangeContext::from_source(kb_domain::ChangeSource::Api);
    let (priya, kiln) = priya_and_kiln(&vault, &by);
    let backlinks = |p: &EntryPath| backlinks_of(&vault, p);
    assert_eq!(backlinks(&priya.path), ["Kiln Ask [[Priya]] about firing."]);
    // Moved: a link by name still leads to it, at its new path.
    let moved = vault.move_entry(&priya.path, Category::Projects).unwrap().entry;
    assert_eq!(vault.links(&kiln.path).unwrap().links[0].path.as_ref(), Some(&moved.path));
    assert_eq!(backlinks(&moved.path), ["Kiln Ask [[Priya]] about firing."]);
    assert!(backlinks(&priya.path).is_empty());
    // The link taken out of the notes: no backlink.
    let update =
        EntryUpdate::from_json_object(json!({"content": "Fire it.\n"}).as_object().unwrap().clone()).unwrap();
    vault.update(&kiln.path, &update).unwrap();
    assert!(backlinks(&moved.path).is_empty());
    // Deleted: the links to it lead nowhere.
    let mut note = new_entry(Category::Ideas, "Glaze");
    note.body = "From [[Priya]].\n".into();
    let glaze = vault.create_as(note, &by).unwrap();
    vault.delete(&moved.path).unwrap();
    let links = vault.links(&glaze.path).unwrap().links;
    assert_eq!((links[0].path.as_ref(), links[0].name.as_str()), (None, "Priya"));
}

/// Files added, edited and deleted while no kb ran reach `index.md` at the next open: the
/// file is patched for them to exactly the list rendered whole.
#[test]
fn changes_made_while_kb_was_away_reach_the_entry_list() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    for name in ["Ada", "Bo", "Cy"] {
        vault.create(new_entry(Category::People, name)).unwrap();
    }
    vault.save_catalogue();
    drop(vault);
    put(dir.path().join("people/dee.md"), "---\nname: Dee\nupdated_at: 2027-01-01T00:00:00Z\n---\n").unwrap();
    put(dir.path().join("people/ada.md"), "---\nname: Ada Lovelace\n---\nEdited.\n").unwrap();
    fs::remove_file(dir.path().join("people/bo.md")).unwrap();
    let vault = open(dir.path());
    assert_eq!(vault.list(&ListFilter::default()).unwrap().total, 3);
    vault.flush();
    let text = fs::read_to_string(dir.path().join("index.md")).unwrap();
    assert_eq!(text, vault.entry_list_markdown());
    assert!(text.contains("## People (3)") && text.contains("[Dee](people/dee.md)"), "{text}");
    assert!(text.contains("[Ada Lovelace](people/ada.md)") && !text.contains("bo.md"), "{text}");
}

/// Links kept in the saved catalogue (read only when needed) answer as links read from the
/// files do: one note's links and backlinks, a move's wikilink updates, and a catalogue
/// saved again from them.
#[test]
fn links_from_the_saved_catalogue_answer_as_read_ones() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let by = ChangeContext::from_source(kb_domain::ChangeSource::Api);
    let (priya, kiln) = priya_and_kiln(&vault, &by);
    // Written an hour ago: the catalogue's stamps stand for them (not racily new).
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for path in [&priya.path, &kiln.path] {
        let file = fs::File::options().write(true).open(dir.path().join(path.to_string())).unwrap();
        file.set_modified(hour_ago).unwrap();
    }
    vault.save_catalogue();
    drop(vault);
    for _ in 0..2 {
        // Opened from the catalogue (twice: the second saved from links never read).
        let vault = open(dir.path());
        assert_eq!(backlinks_of(&vault, &priya.path), ["Kiln Ask [[Priya]] about firing."]);
        assert_eq!(vault.links(&kiln.path).unwrap().links[0].path.as_ref(), Some(&priya.path));
        vault.create_as(new_entry(Category::Ideas, "Unrelated"), &by).unwrap();
        vault.save_catalogue();
    }
    let vault = open(dir.path());
    let moved = vault.move_entry(&kiln.path, Category::Ideas).unwrap().entry;
    assert_eq!(backlinks_of(&vault, &priya.path), ["Kiln Ask [[Priya]] about firing."]);
    assert_eq!(vault.links(&moved.path).unwrap().links[0].path.as_ref(), Some(&priya.path));
}

/// A vault with no note keeps the catalogue its first use saved: later commands write no
/// file (they saved it anew each time, with two fsyncs).
#[test]
fn an_empty_vaults_catalogue_is_saved_once() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(".kb").join(super::saved_catalogue::CATALOGUE_FILE);
    let saved_file = || fs::metadata(&file).map(|meta| meta.ino()).ok();
    let vault = open(dir.path());
    assert_eq!(vault.list(&ListFilter::default()).unwrap().total, 0);
    drop(vault);
    let first = saved_file().expect("the first use saved no catalogue");
    for _ in 0..2 {
        let vault = open(dir.path());
        assert_eq!(vault.list(&ListFilter::default()).unwrap().total, 0);
        drop(vault);
        assert_eq!(saved_file(), Some(first), "the catalogue was written again");
    }
    // A note added while no kb ran is still found.
    put(dir.path().join("ideas/kiln.md"), "---\nname: Kiln\n---\n").unwrap();
    assert_eq!(open(dir.path()).list(&ListFilter::default()).unwrap().total, 1);
}

/// A file read again at open only because its stamp was too close to the last save (most
/// often the last one kb wrote) counts as changed only when it holds something else: an
/// edit that kept its stamp still reaches the entry list.
#[test]
fn a_racy_file_counts_as_changed_only_when_it_changed() {
    let dir = tempfile::tempdir().unwrap();
    let by = ChangeContext::from_source(kb_domain::ChangeSource::Api);
    let vault = open(dir.path());
    let kiln = vault.create_as(new_entry(Category::Ideas, "Kiln"), &by).unwrap();
    vault.save_catalogue();
    drop(vault);
    let root = safe_path::Root::new(dir.path().to_path_buf()).unwrap();
    let opened = catalogue::open(&root, files::Walk::now(&root), None);
    assert_eq!(opened.read, 1, "the file written a moment before the save is read again");
    assert!(opened.changed.is_none(), "it holds what was saved");
    // Another name, with the same size and modification time.
    let file = dir.path().join(kiln.path.as_str());
    let modified = fs::metadata(&file).unwrap().modified().unwrap();
    fs::write(&file, fs::read_to_string(&file).unwrap().replace("Kiln", "Kilt")).unwrap();
    fs::File::options().write(true).open(&file).unwrap().set_modified(modified).unwrap();
    let opened = catalogue::open(&root, files::Walk::now(&root), None);
    assert!(
        matches!(&opened.changed, Some(catalogue::Changed::Files(paths)) if paths == std::slice::from_ref(&kiln.path)),
        "the edit is not seen as a change"
    );
    let vault = open(dir.path());
    assert_eq!(vault.list(&ListFilter::default()).unwrap().entries[0].name, "Kilt");
    vault.flush();
    assert!(
        fs::read_to_string(dir.path().join("index.md")).unwrap().contains("Kilt"),
        "the entry list is not put right"
    );
}
