//! Revision history through the vault, on a real SQLite database: every change is a
//! revision with its exact bytes, undo walks back operation by operation to the very
//! bytes, outside edits are recorded and never thrown away, restore brings deleted
//! entries back, parallel changes each get their revision, and over any sequence of
//! changes the history of each entry is exactly the changes made to it.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::Path;
use std::sync::Arc;

use kb_domain::{
    Category, ChangeContext, ChangeSource, ConversationId, Entry, EntryCatalogue, EntryPath, EntryReader,
    EntryUpdate, EntryWriter, Frontmatter, LaterChanges, NewEntry, RepositoryError, RevisionHistory,
    UndoScope,
};
use kb_storage::history::HistoryLog;
use kb_storage::vault::Vault;
use proptest::prelude::*;
use serde_json::json;

use super::common::clock;

/// A vault at `dir` keeping history in `dir/.kb/kb.sqlite`.
fn open(dir: &Path) -> Vault {
    let log = HistoryLog::open_in(dir).unwrap();
    Vault::open_with_history(dir, clock(), Arc::new(log)).unwrap()
}

fn chat(conversation: &str) -> ChangeContext {
    ChangeContext {
        source: ChangeSource::Chat,
        tool: Some("test".into()),
        conversation_id: Some(ConversationId::new(conversation)),
        session: None,
        device: None,
        claim: None,
        person: None,
    }
}

fn new_entry(category: Category, name: &str, body: &str) -> NewEntry {
    NewEntry { category, name: name.into(), fields: Frontmatter::new(), body: body.into() }
}

/// A body edit of mode `mode` (append, prepend, replace, section, find_replace) with `text`;
/// find_replace replaces the word "body", which every capture's notes hold once.
fn edit(mode: usize, text: &str) -> EntryUpdate {
    use kb_domain::{BodyEdit, BodyEditMode, BodyEditRequest};
    let modes = [
        BodyEditMode::Append,
        BodyEditMode::Prepend,
        BodyEditMode::Replace,
        BodyEditMode::Section,
        BodyEditMode::FindReplace,
    ];
    let mode = modes[mode % modes.len()];
    let request = BodyEditRequest {
        mode,
        content: text.to_string(),
        section: (mode == BodyEditMode::Section).then(|| "Log".to_string()),
        find: (mode == BodyEditMode::FindReplace).then(|| "body".to_string()),
        expected_replacements: None,
    };
    let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 23).unwrap();
    EntryUpdate { body: Some(BodyEdit::from_request(request, today).unwrap()), ..EntryUpdate::default() }
}

fn set(key: &str, value: serde_json::Value) -> EntryUpdate {
    let mut fields = Frontmatter::new();
    fields.set(key, value);
    EntryUpdate { fields, ..EntryUpdate::default() }
}

/// Every entry file's bytes, by vault path.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for category in Category::ALL {
        let Ok(listing) = fs::read_dir(root.join(category.as_str())) else { continue };
        for item in listing {
            let item = item.unwrap();
            let name = item.file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") && !name.starts_with('.') {
                files.insert(format!("{category}/{name}"), fs::read(item.path()).unwrap());
            }
        }
    }
    files
}

#[test]
fn every_change_is_a_revision_with_its_bytes_and_history_follows_moves() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let by = chat("c1");
    let entry = vault.create_as(new_entry(Category::Inbox, "Shed roof", "leaks"), &by).unwrap();
    let captured = fs::read(entry.path.under(dir.path())).unwrap();
    vault.update_as(&entry.path, &set("confidence", json!(0.4)), &by).unwrap();
    let moved = vault.move_entry_as(&entry.path, Category::Projects, &by).unwrap();
    let history = vault.history(&moved.entry.path).unwrap();
    let described: Vec<&str> = history.iter().map(|r| r.description.as_str()).collect();
    assert_eq!(history.len(), 3, "{described:?}");
    assert!(described[0].starts_with("Moved inbox/shed-roof.md to projects"), "{described:?}");
    assert!(described[2].starts_with("Captured \"Shed roof\""), "{described:?}");
    assert!(history.windows(2).all(|w| w[0].id > w[1].id), "newest first");
    assert!(history.iter().all(|r| r.source == ChangeSource::Chat && r.tool.as_deref() == Some("test")));
    // The capture's revision holds the file exactly as it was written.
    let first = vault.revision(&moved.entry.path, history[2].id).unwrap();
    assert_eq!(first.before, None);
    assert_eq!(first.after.as_deref().map(str::as_bytes), Some(captured.as_slice()));
    // The old path still leads to the entry's history.
    assert_eq!(vault.history(&entry.path).unwrap().len(), 3);
    // A deleted entry's history stays reachable by its last path.
    let revision = vault.delete_as(&moved.entry.path, &by).unwrap().unwrap();
    let after_delete = vault.history(&moved.entry.path).unwrap();
    assert_eq!(after_delete[0].id, revision.id);
    assert_eq!(after_delete[0].path_after, None);
}

#[test]
fn undo_walks_back_to_the_very_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let by = chat("c1");
    let start_entry =
        vault.create_as(new_entry(Category::People, "Priya Raman", "Met at the meetup."), &by).unwrap();
    // A hand-written file with odd formatting, which updates must not normalise away.
    let hand = dir.path().join("ideas/hand.md");
    fs::create_dir_all(dir.path().join("ideas")).unwrap();
    fs::write(&hand, "---\nname: Hand   # a comment\nversion: 1.10\n---\n\nBody\r\nwith CRLF\n").unwrap();
    vault.refresh(&EntryPath::parse("ideas/hand.md").unwrap()).unwrap();
    let start = snapshot(dir.path());
    let idea = vault.create_as(new_entry(Category::Ideas, "Solar shed", "panels"), &by).unwrap();
    vault.update_as(&start_entry.path, &set("context", json!("robotics")), &by).unwrap();
    let hand_path = EntryPath::parse("ideas/hand.md").unwrap();
    vault.update_as(&hand_path, &set("tags", json!(["x"])), &by).unwrap();
    let moved = vault.move_entry_as(&idea.path, Category::Projects, &by).unwrap();
    vault.delete_as(&hand_path, &by).unwrap();
    assert_ne!(snapshot(dir.path()), start);
    let mut undone = Vec::new();
    for _ in 0..5 {
        undone.push(
            vault
                .undo_as(&UndoScope::Conversation(ConversationId::new("c1")), LaterChanges::Refuse, &by)
                .unwrap()
                .description,
        );
    }
    assert_eq!(snapshot(dir.path()), start, "undone: {undone:?}");
    assert!(undone[0].starts_with("Deleted ideas/hand.md"), "{undone:?}");
    assert!(undone[1].starts_with(&format!("Moved {}", idea.path)), "{undone:?}");
    // The start entry itself was captured in c1 too: one more undo removes it.
    vault.undo_as(&UndoScope::Conversation(ConversationId::new("c1")), LaterChanges::Refuse, &by).unwrap();
    assert!(!start_entry.path.under(dir.path()).exists());
    // The hand-written file was never kb's change in c1: nothing is left to undo there.
    let err = vault
        .undo_as(&UndoScope::Conversation(ConversationId::new("c1")), LaterChanges::Refuse, &by)
        .unwrap_err();
    assert!(matches!(err, RepositoryError::NothingToUndo(_)), "{err}");
    // The vault's view followed every undo.
    assert!(vault.get(&moved.entry.path).is_err());
    assert_eq!(vault.list(&kb_domain::ListFilter::default()).unwrap().total, 1);
}

#[test]
fn an_outside_edit_is_recorded_and_never_undone_away() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let by = chat("c1");
    let entry = vault.create_as(new_entry(Category::Admin, "Passport", "renew"), &by).unwrap();
    vault.update_as(&entry.path, &set("due_date", json!("2026-12-15")), &by).unwrap();
    let file = entry.path.under(dir.path());
    let edited = fs::read_to_string(&file).unwrap().replace("renew", "renew (booked)");
    fs::write(&file, &edited).unwrap();
    vault.refresh(&entry.path).unwrap();
    let history = vault.history(&entry.path).unwrap();
    assert_eq!(history[0].source, ChangeSource::Outside);
    assert!(history[0].description.contains("edited outside kb"), "{}", history[0].description);
    let err = vault
        .undo_as(&UndoScope::Conversation(ConversationId::new("c1")), LaterChanges::Refuse, &by)
        .unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, RepositoryError::ChangedSince { .. }), "{message}");
    assert!(message.contains(&entry.path.to_string()) && message.contains("edited"), "{message}");
    assert_eq!(fs::read_to_string(&file).unwrap(), edited, "a refused undo changes nothing");
    // Forced, the undo goes ahead, and the outside version it replaced is kept.
    vault.undo_as(&UndoScope::Conversation(ConversationId::new("c1")), LaterChanges::Replace, &by).unwrap();
    assert!(!fs::read_to_string(&file).unwrap().contains("due_date"));
    let replaced = vault.history(&entry.path).unwrap();
    let back = vault.revision(&entry.path, replaced[0].id).unwrap();
    assert_eq!(back.before.as_deref(), Some(edited.as_str()));
}

#[test]
fn restore_brings_back_exact_bytes_and_deleted_entries() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let by = ChangeContext::from_source(ChangeSource::Cli);
    let entry = vault.create_as(new_entry(Category::Ideas, "Kite", "first"), &by).unwrap();
    let first = fs::read(entry.path.under(dir.path())).unwrap();
    vault.update_as(&entry.path, &set("one_liner", json!("a kite")), &by).unwrap();
    let captured = vault.history(&entry.path).unwrap().last().unwrap().id;
    let restored = vault.restore_as(&entry.path, captured, &by).unwrap();
    assert_eq!(fs::read(entry.path.under(dir.path())).unwrap(), first);
    assert!(restored.revision.is_some());
    // Deleted, then restored: back at its path; with the path taken, beside it.
    vault.delete_as(&entry.path, &by).unwrap();
    let deleted = vault.history(&entry.path).unwrap()[0].id;
    let again = vault.restore_as(&entry.path, deleted, &by).unwrap();
    assert_eq!(again.path, entry.path);
    assert_eq!(fs::read(entry.path.under(dir.path())).unwrap(), first);
    vault.delete_as(&entry.path, &by).unwrap();
    let deleted = vault.history(&entry.path).unwrap()[0].id;
    vault.create_as(new_entry(Category::Ideas, "Kite", "another kite"), &by).unwrap();
    let beside = vault.restore_as(&entry.path, deleted, &by).unwrap();
    assert_eq!(beside.path.to_string(), "ideas/kite-2.md");
    assert_eq!(fs::read(beside.path.under(dir.path())).unwrap(), first);
    // A revision of another entry is refused.
    let other = vault.create_as(new_entry(Category::Ideas, "Drum", "x"), &by).unwrap();
    let err = vault.restore_as(&other.path, deleted, &by).unwrap_err();
    assert!(matches!(err, RepositoryError::RevisionOfAnother { .. }), "{err}");
    assert!(matches!(vault.restore_as(&other.path, 9999, &by), Err(RepositoryError::RevisionNotFound(9999))));
}

#[test]
fn parallel_changes_each_get_one_revision() {
    let dir = tempfile::tempdir().unwrap();
    let vault = Arc::new(open(dir.path()));
    let threads: Vec<_> = (0..50)
        .map(|i| {
            let vault = Arc::clone(&vault);
            std::thread::spawn(move || {
                let by = chat(&format!("c{i}"));
                let entry =
                    vault.create_as(new_entry(Category::Ideas, "Same name", &format!("n{i}")), &by).unwrap();
                vault.update_as(&entry.path, &set("one_liner", json!(format!("v{i}"))), &by).unwrap();
                entry.path
            })
        })
        .collect();
    let paths: Vec<EntryPath> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    for path in &paths {
        let history = vault.history(path).unwrap();
        assert_eq!(history.len(), 2, "{path}: {history:?}");
        let latest = vault.revision(path, history[0].id).unwrap();
        assert_eq!(latest.after.unwrap().as_bytes(), fs::read(path.under(dir.path())).unwrap());
    }
}

#[test]
fn a_change_kb_could_not_record_is_caught_up_at_the_next_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = {
        let vault = open(dir.path());
        let entry = vault.create_as(new_entry(Category::Ideas, "Kite", "x"), &chat("c")).unwrap();
        entry.path
    };
    // As if a kb process was killed between writing and recording, or an editor wrote
    // while no kb ran.
    let file = path.under(dir.path());
    fs::write(&file, fs::read_to_string(&file).unwrap() + "\nmore\n").unwrap();
    fs::write(dir.path().join("ideas/new.md"), "---\nname: New\n---\n").unwrap();
    let vault = open(dir.path());
    assert_eq!(vault.check_history().unwrap(), 2);
    assert_eq!(vault.check_history().unwrap(), 0, "once recorded, nothing differs");
    let latest = vault.history(&path).unwrap();
    assert_eq!(latest[0].source, ChangeSource::Outside);
    let text = vault.revision(&path, latest[0].id).unwrap();
    assert_eq!(text.after.unwrap().as_bytes(), fs::read(&file).unwrap());
}

#[test]
fn a_check_after_checks_that_found_agreement_still_finds_every_outside_edit() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let kite = vault.create_as(new_entry(Category::Ideas, "Kite", "red"), &chat("c")).unwrap().path;
    let boat = vault.create_as(new_entry(Category::Ideas, "Boat", "blue"), &chat("c")).unwrap().path;
    assert_eq!(vault.check_history().unwrap(), 0);
    assert_eq!(vault.check_history().unwrap(), 0, "what agreed is taken as agreeing");

    // An edit of another size, and, right after the check, a rewrite of the same size
    // given back its modification time: its stamp is the one checked.
    let kite_file = kite.under(dir.path());
    fs::write(
        &kite_file,
        fs::read_to_string(&kite_file).unwrap()
            + "
longer now
",
    )
    .unwrap();
    let boat_file = boat.under(dir.path());
    let before = fs::metadata(&boat_file).unwrap().modified().unwrap();
    fs::write(&boat_file, fs::read_to_string(&boat_file).unwrap().replace("blue", "teal")).unwrap();
    fs::File::options().write(true).open(&boat_file).unwrap().set_modified(before).unwrap();

    let reopened = open(dir.path());
    assert_eq!(reopened.check_history().unwrap(), 2);
    for path in [&kite, &boat] {
        let latest = reopened.history(path).unwrap();
        assert_eq!(latest[0].source, ChangeSource::Outside, "{path}");
        let text = reopened.revision(path, latest[0].id).unwrap();
        assert_eq!(text.after.unwrap().as_bytes(), fs::read(path.under(dir.path())).unwrap());
    }
    assert_eq!(reopened.check_history().unwrap(), 0);
}

/// One step of the undo property.
#[derive(Debug, Clone)]
enum Step {
    Capture(usize, String),
    Update(usize, String),
    Edit(usize, usize, String),
    Move(usize, usize),
    Delete(usize),
    Restore(usize),
}

fn step() -> impl Strategy<Value = Step> {
    let category = 0..5usize;
    prop_oneof![
        3 => (category.clone(), "[a-z]{1,6}( [a-z]{1,6})?").prop_map(|(c, n)| Step::Capture(c, n)),
        3 => (0..8usize, "[a-zA-Z0-9 .:#'\"-]{0,12}").prop_map(|(i, v)| Step::Update(i, v)),
        3 => (0..8usize, 0..5usize, "[a-z]{1,6}( [a-z]{1,6})?").prop_map(|(i, m, t)| Step::Edit(i, m, t)),
        2 => (0..8usize, category).prop_map(|(i, c)| Step::Move(i, c)),
        1 => (0..8usize).prop_map(Step::Delete),
        1 => (0..8usize).prop_map(Step::Restore),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// From a vault with hand-written files, any sequence of captures, field updates, body
    /// edits in every mode, moves, deletes and restores, undone change by change in reverse
    /// order, leaves every file byte-identical to the start and no other file behind.
    #[test]
    fn undoing_every_change_restores_the_start(steps in proptest::collection::vec(step(), 1..12)) {
        let dir = tempfile::tempdir().unwrap();
        for folder in ["people", "ideas", "projects"] {
            fs::create_dir_all(dir.path().join(folder)).unwrap();
        }
        for (path, text) in [
            ("people/sam.md", "---\nname: Sam  # hand\nfollow_ups: [call]\nscore: 1.10\n---\nSee [kite](../ideas/kite.md)\n"),
            ("ideas/kite.md", "---\r\nname: 'Kite'\r\n---\r\nCRLF body\r\n"),
            ("projects/roof.md", "no frontmatter at all\n"),
        ] {
            fs::write(dir.path().join(path), text).unwrap();
        }
        let vault = open(dir.path());
        vault.check_history().unwrap();
        let start = snapshot(dir.path());
        let by = chat("p");
        let mut made = 0;
        for step in steps {
            let paths: Vec<EntryPath> =
                vault.list(&kb_domain::ListFilter::default()).unwrap().entries.into_iter().map(|s| s.path).collect();
            let pick = |i: usize| paths.get(i % paths.len().max(1)).cloned();
            let done = match step {
                Step::Capture(c, name) => vault.create_as(new_entry(Category::ALL[c], &name, "body"), &by).is_ok(),
                Step::Update(i, v) => pick(i).is_some_and(|p| vault.update_as(&p, &set("note", json!(v)), &by).is_ok()),
                Step::Edit(i, m, t) => pick(i).is_some_and(|p| vault.update_as(&p, &edit(m, &t), &by).is_ok()),
                Step::Move(i, c) => pick(i).is_some_and(|p| vault.move_entry_as(&p, Category::ALL[c], &by).is_ok()),
                Step::Delete(i) => pick(i).is_some_and(|p| vault.delete_as(&p, &by).is_ok()),
                Step::Restore(i) => pick(i).is_some_and(|p| {
                    let oldest = vault.history(&p).ok().and_then(|h| h.last().map(|r| r.id));
                    oldest.is_some_and(|id| vault.restore_as(&p, id, &by).is_ok_and(|r| r.revision.is_some()))
                }),
            };
            made += usize::from(done);
        }
        for n in 0..made {
            let undo = vault.undo_as(&UndoScope::Conversation(ConversationId::new("p")), LaterChanges::Refuse, &by);
            prop_assert!(undo.is_ok(), "undo {} of {}: {:?}", n + 1, made, undo.err());
        }
        prop_assert!(vault.undo_as(&UndoScope::Conversation(ConversationId::new("p")), LaterChanges::Refuse, &by).is_err());
        prop_assert_eq!(snapshot(dir.path()), start);
    }
}

/// The bytes of every revision's `before` in the history of `path`.
fn befores(vault: &Vault, path: &EntryPath) -> Vec<Option<String>> {
    let history = vault.history(path).unwrap();
    history.iter().map(|r| vault.revision(path, r.id).unwrap().before).collect()
}

#[test]
fn a_forced_undo_keeps_every_file_it_replaces() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let by = ChangeContext::from_source(ChangeSource::Cli);
    let mine = "My own fence notes.\n";

    // The undo of a delete, over a file the person wrote at the path since.
    let entry = vault.create_as(new_entry(Category::Projects, "Paint the fence", "white"), &by).unwrap();
    let file = entry.path.under(dir.path());
    vault.delete_as(&entry.path, &by).unwrap();
    fs::write(&file, mine).unwrap();
    let err = vault.undo_as(&UndoScope::Anyone, LaterChanges::Refuse, &by).unwrap_err();
    assert!(matches!(err, RepositoryError::ChangedSince { .. }), "{err}");
    assert_eq!(fs::read_to_string(&file).unwrap(), mine, "a refused undo changes nothing");
    vault.undo_as(&UndoScope::Anyone, LaterChanges::Replace, &by).unwrap();
    assert!(fs::read_to_string(&file).unwrap().contains("white"), "the entry is back");
    assert!(
        befores(&vault, &entry.path).contains(&Some(mine.to_string())),
        "the person's text is in history"
    );
    // And a restore of that revision brings the person's text back exactly.
    let replaced = vault.history(&entry.path).unwrap();
    let kept = replaced.iter().find(|r| r.description.starts_with("Replaced")).unwrap();
    vault.restore_as(&entry.path, kept.id, &by).unwrap();
    assert_eq!(fs::read_to_string(&file).unwrap(), mine);

    // The undo of a move, over a file written at the old path since.
    let kite = vault.create_as(new_entry(Category::Ideas, "Kite", "red"), &by).unwrap();
    let moved = vault.move_entry_as(&kite.path, Category::Projects, &by).unwrap();
    let old = kite.path.under(dir.path());
    fs::write(&old, mine).unwrap();
    vault.undo_as(&UndoScope::Anyone, LaterChanges::Replace, &by).unwrap();
    assert!(fs::read_to_string(&old).unwrap().contains("red"));
    assert!(!moved.entry.path.under(dir.path()).exists());
    assert!(befores(&vault, &kite.path).contains(&Some(mine.to_string())));

    // The undo of a merge, over a file written at the merged entry's path since.
    let target = vault.create_as(new_entry(Category::People, "Sam Lee", "a"), &by).unwrap();
    let source = vault.create_as(new_entry(Category::People, "Samuel Lee", "b"), &by).unwrap();
    let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 26).unwrap();
    vault.merge_as(&target.path, std::slice::from_ref(&source.path), today, &by).unwrap();
    let source_file = source.path.under(dir.path());
    fs::write(&source_file, mine).unwrap();
    vault.undo_as(&UndoScope::Anyone, LaterChanges::Replace, &by).unwrap();
    assert!(fs::read_to_string(&source_file).unwrap().contains("Samuel Lee"));
    assert!(befores(&vault, &source.path).contains(&Some(mine.to_string())));
}

#[test]
fn a_restore_over_an_edit_kb_has_not_recorded_keeps_that_edit() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let by = ChangeContext::from_source(ChangeSource::Cli);
    let entry = vault.create_as(new_entry(Category::Projects, "Paint the fence", "white"), &by).unwrap();
    let file = entry.path.under(dir.path());
    let captured = fs::read(&file).unwrap();
    let first = vault.history(&entry.path).unwrap()[0].id;
    vault.update_as(&entry.path, &set("status", json!("waiting")), &by).unwrap();

    // An edit by hand that keeps the entry's id, which kb has not seen (no refresh).
    let kept_id = fs::read_to_string(&file).unwrap() + "\nBought the paint myself.\n";
    fs::write(&file, &kept_id).unwrap();
    let restored = vault.restore_as(&entry.path, first, &by).unwrap();
    assert_eq!(restored.path, entry.path);
    assert!(restored.revision.is_some(), "the restore was recorded");
    assert_eq!(fs::read(&file).unwrap(), captured, "the restore happened");
    assert!(befores(&vault, &entry.path).contains(&Some(kept_id.clone())), "the hand edit is in history");

    // The whole file written over by hand, without the entry's id: still the entry's file,
    // replaced by the restore, and the person's text kept in the entry's history.
    vault.update_as(&entry.path, &set("status", json!("done")), &by).unwrap();
    let mine = "My own fence notes.\n";
    fs::write(&file, mine).unwrap();
    let restored = vault.restore_as(&entry.path, first, &by).unwrap();
    assert_eq!(restored.path, entry.path, "restored in place, not beside");
    assert_eq!(fs::read(&file).unwrap(), captured);
    assert_eq!(snapshot(dir.path()).len(), 1, "no second file");
    let history = vault.history(&entry.path).unwrap();
    let newest = vault.revision(&entry.path, history[0].id).unwrap();
    assert!(newest.revision.description.starts_with("Restored"), "{:?}", newest.revision.description);
    assert_eq!(newest.before.as_deref(), Some(mine), "recorded before it was replaced");
    // Undone, the restore gives the person's text back exactly.
    vault.undo_as(&UndoScope::Anyone, LaterChanges::Refuse, &by).unwrap();
    assert_eq!(fs::read_to_string(&file).unwrap(), mine);
}

#[test]
fn a_delete_that_cannot_be_recorded_is_not_made() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let by = ChangeContext::from_source(ChangeSource::Cli);
    let entry = vault.create_as(new_entry(Category::Admin, "Passport", "renew"), &by).unwrap();
    let file = entry.path.under(dir.path());
    let before = fs::read(&file).unwrap();
    // The history database breaks under the vault (its revisions table is gone).
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let url = format!("sqlite://{}", dir.path().join(".kb/kb.sqlite").display());
        let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
        sqlx::query("ALTER TABLE revisions RENAME TO revisions_gone").execute(&pool).await.unwrap();
        pool.close().await;
    });
    let err = vault.delete_as(&entry.path, &by).unwrap_err();
    assert!(matches!(err, RepositoryError::History(_)), "{err}");
    assert_eq!(fs::read(&file).unwrap(), before, "the file is still there, unchanged");
}

#[test]
fn history_follows_an_entry_through_its_moves_and_the_references_rewritten_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let by = ChangeContext::from_source(ChangeSource::Cli);
    let shed = vault.create_as(new_entry(Category::Ideas, "Glass shed", "panes"), &by).unwrap();
    let notes = vault
        .create_as(new_entry(Category::Ideas, "Garden notes", "See [the shed](glass-shed.md)."), &by)
        .unwrap();
    let notes = vault.move_entry_as(&notes.path, Category::Projects, &by).unwrap().entry;
    // Moving the shed rewrites the reference in the notes.
    vault.move_entry_as(&shed.path, Category::Projects, &by).unwrap();
    let after_rewrite = vault.history(&notes.path).unwrap();
    let described: Vec<&str> = after_rewrite.iter().map(|r| r.description.as_str()).collect();
    assert_eq!(described.len(), 3, "{described:?}");
    assert!(described[0].starts_with("Pointed projects/garden-notes.md"), "{described:?}");
    assert!(described[1].starts_with("Moved ideas/garden-notes.md"), "{described:?}");
    assert!(described[2].starts_with("Captured \"Garden notes\""), "{described:?}");
    vault.update_as(&notes.path, &set("status", json!("waiting")), &by).unwrap();
    let after_update = vault.history(&notes.path).unwrap();
    assert_eq!(after_update.len(), 4, "{after_update:?}");
    assert_eq!(after_update[1].id, after_rewrite[0].id, "the rewrite stays in the history");
}

#[test]
fn restore_by_a_former_path_restores_the_entry_where_it_is_now() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let by = ChangeContext::from_source(ChangeSource::Cli);
    let shed = vault.create_as(new_entry(Category::Ideas, "Glass shed", "panes"), &by).unwrap();
    let captured = fs::read(shed.path.under(dir.path())).unwrap();
    let first = vault.history(&shed.path).unwrap()[0].id;
    let moved = vault.move_entry_as(&shed.path, Category::Projects, &by).unwrap().entry;
    let restored = vault.restore_as(&shed.path, first, &by).unwrap();
    assert_eq!(restored.path, moved.path);
    assert!(restored.moved_since);
    assert_eq!(fs::read(moved.path.under(dir.path())).unwrap(), captured);
    assert!(!shed.path.under(dir.path()).exists(), "no second copy at the old path");
    let named: Vec<_> = snapshot(dir.path()).into_keys().collect();
    assert_eq!(named, ["projects/glass-shed.md"]);
}

/// Names captures take: few, so slugs collide (`kite-2.md`) and a path an entry left is
/// taken again (the hand-written entries' ones too).
const NAMES: [&str; 5] = ["Kite", "Glass shed", "Sam Lee", "Shed", "Sam"];

/// One step of the history property. Numbers pick among the entries the model knows
/// (the live ones; any, for a restore), wrapping around.
#[derive(Debug, Clone)]
enum Act {
    /// Capture in category `.0` under name `.1`, the body linking to live entry `.2`.
    Capture(usize, usize, Option<usize>),
    /// Update entry `.0`: a field when `.1` is 0, else a body edit of mode `.1 - 1`.
    Update(usize, usize),
    /// Move entry `.0` to category `.1` (the next one when it is the entry's own).
    Move(usize, usize),
    /// Merge one other live entry (`.1`), or two (`.2`), into entry `.0`; when `.3`, the
    /// target itself or one source twice is given, which is refused.
    Merge(usize, usize, Option<usize>, bool),
    /// Delete entry `.0`.
    Delete(usize),
    /// Restore entry `.0` (live or not) to its revision `.1`, asked for by its path `.2`
    /// (the current one or a former one).
    Restore(usize, usize, usize),
    /// Undo the newest change of anyone's; forced when true.
    Undo(bool),
    /// Append a line to entry `.0`'s file, then have it recorded by a check of the whole
    /// vault when true, else by a refresh of that file.
    Outside(usize, bool),
}

/// Any step, the kinds weighted so most sequences capture, change and take back.
fn act() -> impl Strategy<Value = Act> {
    let pick = 0..16usize;
    prop_oneof![
        4 => (0..5usize, 0..NAMES.len(), proptest::option::weighted(0.75, pick.clone()))
            .prop_map(|(c, n, link)| Act::Capture(c, n, link)),
        3 => (pick.clone(), 0..6usize).prop_map(|(e, how)| Act::Update(e, how)),
        3 => (pick.clone(), 0..5usize).prop_map(|(e, c)| Act::Move(e, c)),
        3 => (pick.clone(), pick.clone(), proptest::option::of(pick.clone()), proptest::bool::weighted(0.1))
            .prop_map(|(t, a, b, refused)| Act::Merge(t, a, b, refused)),
        2 => pick.clone().prop_map(Act::Delete),
        3 => (pick.clone(), pick.clone(), pick.clone()).prop_map(|(e, r, p)| Act::Restore(e, r, p)),
        3 => any::<bool>().prop_map(Act::Undo),
        2 => (pick, any::<bool>()).prop_map(|(e, check)| Act::Outside(e, check)),
    ]
}

/// A scratch folder, in memory where the system has one (`/dev/shm`): the history
/// property is about what is recorded, not about durability, and there the fsyncs that
/// make each change crash-safe cost nothing, so hundreds of cases take seconds.
fn scratch_dir() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).unwrap()
}

/// The number of cases: `PROPTEST_CASES` when set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(default)
}

/// The key of a file without an `id` in the history property (only one entry has none:
/// the hand-written one, until kb gives it one as it first moves it).
const NO_ID: &str = "";

/// Files by path: their bytes and their key (the `id`, or [`NO_ID`]).
type Files = BTreeMap<EntryPath, (Vec<u8>, String)>;

/// An entry as the history property's model knows it.
#[derive(Debug)]
struct Known {
    /// The keys its file has had: its `id`, and [`NO_ID`] for the hand-written entry.
    keys: Vec<String>,
    /// The operation from which its revisions carry its id (its capture, or the move
    /// that gave it one), and where its file was just before; `None` while it never had
    /// an id.
    since: Option<(i64, Option<EntryPath>)>,
    /// Where its file is now; `None` once deleted or merged away.
    path: Option<EntryPath>,
    /// Where its file was last.
    last: EntryPath,
    /// Every path its file has had.
    paths: Vec<EntryPath>,
    /// The operations that changed its file, oldest first, with the step each came from.
    made: Vec<(i64, String)>,
    /// Its revisions, oldest first, as its history last read (a restore picks one).
    revisions: Vec<i64>,
}

/// The history property's model: which operations changed which entry's file.
#[derive(Debug, Default)]
struct Model {
    known: Vec<Known>,
    /// The number history gives the next operation it records.
    next_operation: i64,
    /// The operations that had a file at each path (either side), oldest first, with
    /// the entry whose file it was.
    at: HashMap<EntryPath, Vec<(i64, usize)>>,
}

impl Model {
    /// The live entry `n` picks, when there is one.
    fn live(&self, n: usize) -> Option<usize> {
        let live = self.live_ones();
        live.get(n % live.len().max(1)).copied()
    }

    /// The entries that have a file now.
    fn live_ones(&self) -> Vec<usize> {
        (0..self.known.len()).filter(|&k| self.known[k].path.is_some()).collect()
    }

    /// Where live entry `who` is.
    fn path(&self, who: usize) -> EntryPath {
        self.known[who].path.clone().unwrap()
    }

    /// The entry whose file has `key`.
    fn owner(&self, key: &str) -> Option<usize> {
        self.known.iter().position(|k| k.keys.iter().any(|own| own == key))
    }

    /// The entry whose change last had a file at `path` (history asked for by a path
    /// no file is at is that entry's).
    fn last_at(&self, path: &EntryPath) -> Option<usize> {
        self.at.get(path).and_then(|ops| ops.last()).map(|&(_, who)| who)
    }

    /// The operations history must show for entry `who`, oldest first: with an id, every
    /// change since it had one, after what its file had before at the path it then left;
    /// without, what its path has, back to another entry's change there.
    fn expected(&self, who: usize) -> Vec<i64> {
        let known = &self.known[who];
        match &known.since {
            None => self.walk(&known.last, i64::MAX, who),
            Some((since, from)) => {
                let mut ops = from.as_ref().map_or_else(Vec::new, |from| self.walk(from, *since, who));
                ops.extend(known.made.iter().map(|m| m.0).filter(|op| op >= since));
                ops
            }
        }
    }

    /// The operations of entry `who` at `path` before `before`, oldest first, back to
    /// the last change another entry made there.
    fn walk(&self, path: &EntryPath, before: i64, who: usize) -> Vec<i64> {
        let mut ops: Vec<i64> = (self.at.get(path).into_iter().flatten().rev())
            .filter(|&&(op, _)| op < before)
            .take_while(|&&(_, by)| by == who)
            .map(|&(op, _)| op)
            .collect();
        ops.reverse();
        ops
    }
}

/// Every entry file's bytes and key, by path. No two files share an id (a restore or an
/// undo never makes a second copy of an entry), and at most one has none.
fn files_with_keys(root: &Path) -> Result<Files, TestCaseError> {
    let mut files = BTreeMap::new();
    let mut seen: HashMap<String, EntryPath> = HashMap::new();
    for (path, bytes) in snapshot(root) {
        let path = EntryPath::parse(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let id = Entry::from_document(path.clone(), &text).ok().and_then(|e| e.id().map(str::to_string));
        let key = id.unwrap_or_else(|| NO_ID.to_string());
        if let Some(other) = seen.insert(key.clone(), path.clone()) {
            return Err(TestCaseError::fail(format!("{other} and {path} share the id {key:?}")));
        }
        files.insert(path, (bytes, key));
    }
    Ok(files)
}

/// The file of the entry whose keys are `keys` among `files`: its path and bytes.
fn file_of(files: &Files, keys: &[String]) -> Result<Option<(EntryPath, Vec<u8>)>, TestCaseError> {
    let found: Vec<_> = files.iter().filter(|(_, (_, key))| keys.contains(key)).collect();
    prop_assert!(
        found.len() < 2,
        "one entry has two files: {:?}",
        found.iter().map(|f| f.0).collect::<Vec<_>>()
    );
    Ok(found.first().map(|(path, (bytes, _))| ((*path).clone(), bytes.clone())))
}

/// Where the entry a step changed is afterwards.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Place {
    /// Where it was.
    Stays,
    /// Nowhere.
    Gone,
    /// Somewhere (a deleted entry restored).
    Back,
}

/// What a step did.
#[derive(Debug)]
enum Done {
    /// It was refused (or had nothing to act on): no file changes, nothing is recorded.
    Nothing(String),
    /// One operation, changing a new entry's file and no other.
    Captured,
    /// One operation, in which this many files appeared and nothing else changed.
    Appeared(usize),
    /// One operation, changing this entry's file and no other.
    Changed(usize, Place),
    /// One operation: the entry moved into the category; others only had references to
    /// it rewritten.
    Moved(usize, Category),
    /// One operation: the target was rewritten and the sources removed; others only had
    /// references rewritten.
    Merged(usize, Vec<usize>),
    /// One operation putting back what the undone one changed.
    Undone,
}

/// `result` as what a step did: `done` when it went ahead, nothing when refused.
fn done<T>(result: Result<T, RepositoryError>, done: impl FnOnce(T) -> Done) -> Done {
    result.map_or_else(|e| Done::Nothing(e.to_string()), done)
}

/// Runs step `n`, `act`, on the vault.
fn run(vault: &Vault, root: &Path, model: &Model, act: &Act, n: usize) -> Result<Done, TestCaseError> {
    let by = chat("h");
    let skip = || Done::Nothing("nothing to act on".into());
    Ok(match *act {
        Act::Capture(c, name, link) => {
            let mut body = "Notes body.\n".to_string();
            if let Some(to) = link.and_then(|l| model.live(l)) {
                body.push_str(&format!("\nSee [{}](../{}).\n", NAMES[name], model.path(to)));
            }
            done(vault.create_as(new_entry(Category::ALL[c], NAMES[name], &body), &by), |_| Done::Captured)
        }
        Act::Update(e, how) => {
            let Some(who) = model.live(e) else { return Ok(skip()) };
            // Each step writes its own text, so every update changes the file.
            let update =
                if how == 0 { set("note", json!(format!("n{n}"))) } else { edit(how - 1, &format!("w{n}")) };
            done(vault.update_as(&model.path(who), &update, &by), |_| Done::Changed(who, Place::Stays))
        }
        Act::Move(e, c) => {
            let Some(who) = model.live(e) else { return Ok(skip()) };
            let from = model.path(who);
            let mut to = Category::ALL[c];
            if to == from.category() {
                to = Category::ALL[(c + 1) % Category::ALL.len()];
            }
            done(vault.move_entry_as(&from, to, &by), |_| Done::Moved(who, to))
        }
        Act::Merge(t, a, b, refused) => {
            let Some(target) = model.live(t) else { return Ok(skip()) };
            let others: Vec<usize> = model.live_ones().into_iter().filter(|&k| k != target).collect();
            let Some(&first) = others.get(a % others.len().max(1)) else { return Ok(skip()) };
            let second = b.map(|b| others[(a + 1 + b % others.len()) % others.len()]).filter(|&s| s != first);
            let mut sources: Vec<usize> = std::iter::once(first).chain(second).collect();
            if refused {
                sources.push(if second.is_some() { first } else { target });
            }
            let paths: Vec<EntryPath> = sources.iter().map(|&s| model.path(s)).collect();
            let on = chrono::NaiveDate::from_ymd_opt(2026, 11, 26).unwrap();
            done(vault.merge_as(&model.path(target), &paths, on, &by), |_| Done::Merged(target, sources))
        }
        Act::Delete(e) => {
            let Some(who) = model.live(e) else { return Ok(skip()) };
            done(vault.delete_as(&model.path(who), &by), |_| Done::Changed(who, Place::Gone))
        }
        Act::Restore(e, r, p) => {
            let who = e % model.known.len();
            let known = &model.known[who];
            let Some(&revision) = known.revisions.get(r % known.revisions.len().max(1)) else {
                return Ok(skip());
            };
            let asked = known.paths[p % known.paths.len()].clone();
            let place = if known.path.is_some() { Place::Stays } else { Place::Back };
            done(vault.restore_as(&asked, revision, &by), |outcome| match outcome.revision {
                Some(_) => Done::Changed(who, place),
                None => Done::Nothing("restored to the bytes already there".into()),
            })
        }
        Act::Undo(force) => done(
            vault.undo_as(
                &UndoScope::Anyone,
                if force { LaterChanges::Replace } else { LaterChanges::Refuse },
                &by,
            ),
            |_| Done::Undone,
        ),
        Act::Outside(e, check) => {
            let Some(who) = model.live(e) else { return Ok(skip()) };
            let path = model.path(who);
            let file = path.under(root);
            let mut bytes = fs::read(&file).unwrap();
            bytes.extend_from_slice(format!("\nEdited outside {n}.\n").as_bytes());
            fs::write(&file, bytes).unwrap();
            if check {
                prop_assert_eq!(vault.check_history().unwrap(), 1);
            } else {
                vault.refresh(&path).unwrap();
            }
            Done::Changed(who, Place::Stays)
        }
    })
}

/// Enters in the model the operation a step recorded (`done`, going from the files
/// `before` to those `after`): each entry whose file changed — appeared, went, moved or
/// got other bytes — has it as its newest change. Checks that the step changed the
/// files it should; returns the entries it changed.
fn enter(
    model: &mut Model,
    before: &Files,
    after: &Files,
    done: &Done,
    label: &str,
) -> Result<Vec<usize>, TestCaseError> {
    let operation = model.next_operation;
    model.next_operation += 1;
    // A key no entry had: a new entry's, or the id kb gave a file as it moved it.
    let mut new = 0;
    for (path, (_, key)) in after {
        if model.owner(key).is_some() {
            continue;
        }
        match done {
            Done::Moved(who, _) if *key != NO_ID && model.known[*who].since.is_none() => {
                let known = &mut model.known[*who];
                known.keys.push(key.clone());
                known.since = Some((operation, known.path.clone()));
            }
            Done::Captured | Done::Appeared(_) => {
                new += 1;
                model.known.push(Known {
                    keys: vec![key.clone()],
                    since: (key != NO_ID).then_some((operation, None)),
                    path: None,
                    last: path.clone(),
                    paths: Vec::new(),
                    made: Vec::new(),
                    revisions: Vec::new(),
                });
            }
            _ => prop_assert!(false, "{}: {} has an id no entry had: {:?}", label, path, key),
        }
    }
    let mut changed = Vec::new();
    for who in 0..model.known.len() {
        let keys = &model.known[who].keys;
        let (was, now) = (file_of(before, keys)?, file_of(after, keys)?);
        if was == now {
            continue;
        }
        let (from, to) = (was.map(|w| w.0), now.map(|n| n.0));
        let known = &mut model.known[who];
        known.made.push((operation, label.to_string()));
        known.path = to.clone();
        if let Some(to) = &to
            && !known.paths.contains(to)
        {
            known.paths.push(to.clone());
        }
        if let Some(last) = to.clone().or_else(|| from.clone()) {
            known.last = last;
        }
        for path in [&from, &to].into_iter().flatten() {
            let ops = model.at.entry(path.clone()).or_default();
            if ops.last() != Some(&(operation, who)) {
                ops.push((operation, who));
            }
        }
        changed.push((who, from, to));
    }
    let rewrite = |c: &(usize, Option<EntryPath>, Option<EntryPath>)| c.1.is_some() && c.1 == c.2;
    let find = |who: usize| changed.iter().find(|c| c.0 == who);
    let fits = match done {
        Done::Nothing(_) => false,
        Done::Captured => new == 1 && changed.len() == 1,
        Done::Appeared(n) => new == *n && changed.len() == *n,
        Done::Undone => new == 0 && !changed.is_empty(),
        Done::Changed(who, place) => {
            changed.len() == 1
                && changed[0].0 == *who
                && match place {
                    Place::Stays => rewrite(&changed[0]),
                    Place::Gone => changed[0].2.is_none(),
                    Place::Back => changed[0].2.is_some(),
                }
        }
        Done::Moved(who, category) => {
            find(*who).is_some_and(|c| c.2.as_ref().is_some_and(|to| to.category() == *category))
                && changed.iter().all(|c| c.0 == *who || rewrite(c))
        }
        Done::Merged(target, sources) => {
            find(*target).is_some_and(rewrite)
                && sources.iter().all(|&s| find(s).is_some_and(|c| c.2.is_none()))
                && changed.iter().all(|c| c.0 == *target || sources.contains(&c.0) || rewrite(c))
        }
    };
    prop_assert!(fits, "{}: {:?} changed {:?}", label, done, changed);
    Ok(changed.into_iter().map(|c| c.0).collect())
}

/// Checks that the history of entry `who` — asked for by its path, or by its last path
/// once it is gone (unless another entry has been there since) — is exactly the
/// operations the model has for it, newest first; with `formers`, that each former path
/// it last left with its id, and no other entry has been at since, leads to the same
/// history.
fn check_entry(
    vault: &Vault,
    model: &mut Model,
    files: &Files,
    who: usize,
    formers: bool,
) -> Result<(), TestCaseError> {
    let known = &model.known[who];
    let reachable = |path: &EntryPath| !files.contains_key(path) && model.last_at(path) == Some(who);
    let asked = match &known.path {
        Some(path) => path.clone(),
        None if reachable(&known.last) => known.last.clone(),
        None => return Ok(()),
    };
    let history = vault.history(&asked).unwrap();
    let shown: Vec<String> =
        history.iter().map(|r| format!("{} (operation {}): {}", r.id, r.operation, r.description)).collect();
    let operations: Vec<i64> = history.iter().rev().map(|r| r.operation).collect();
    prop_assert_eq!(
        operations,
        model.expected(who),
        "history of {} ({:?}), newest first: {:#?}\nchanges made to it, oldest first: {:#?}",
        asked,
        known.keys,
        shown,
        known.made
    );
    prop_assert!(history.windows(2).all(|w| w[0].id > w[1].id), "newest first: {:#?}", shown);
    let ids: Vec<i64> = history.iter().rev().map(|r| r.id).collect();
    if formers && let Some((since, _)) = known.since {
        let left_with_id = |path: &EntryPath| model.at[path].last().is_some_and(|&(op, _)| op >= since);
        for former in known.paths.iter().filter(|p| **p != asked && reachable(p) && left_with_id(p)) {
            let by_former: Vec<i64> = vault.history(former).unwrap().iter().rev().map(|r| r.id).collect();
            prop_assert_eq!(&by_former, &ids, "history of {:?} by its former path {}", known.keys, former);
        }
    }
    model.known[who].revisions = ids;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    /// Over any sequence of captures (some linking to other entries), updates, moves,
    /// merges, deletes, restores (by a current or a former path), undos (forced or not)
    /// and edits outside kb, the history of each entry — by its path, or by its last path
    /// once it is gone — is exactly the changes made to its file, newest first: reference
    /// rewrites by a move or a merge, the merge that removed it or wrote into it, the undo
    /// that put it back or removed it included, and for a file kb gave an id as it moved
    /// it, what it had before (a file that never had an id has its path's history). A
    /// refused change changes no file and records nothing; an entry never has two files,
    /// and no two files ever share an id.
    #[test]
    fn the_history_of_each_entry_is_exactly_the_changes_made_to_it(
        acts in proptest::collection::vec(act(), 1..16)
    ) {
        let dir = scratch_dir();
        let root = dir.path();
        // Three entries written by hand, odd formatting and all, linking to each other:
        // they appear outside kb. One has no id until kb first moves it.
        for (path, text) in [
            ("people/sam.md", "---\nname: Sam   # by hand\nid: sam-1\n---\nSee [the kite](../ideas/kite.md) body.\n"),
            ("ideas/kite.md", "---\r\nname: 'Kite'\r\nid: kite-1\r\n---\r\nFly with [Sam](../people/sam.md) body\r\n"),
            ("projects/shed.md", "---\nname: Shed\n---\nAsk [Sam](../people/sam.md) body.\n"),
        ] {
            let file = root.join(path);
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            fs::write(file, text).unwrap();
        }
        let vault = open(root);
        let mut model = Model { next_operation: 1, ..Model::default() };
        prop_assert_eq!(vault.check_history().unwrap(), 3);
        let mut files = files_with_keys(root)?;
        for who in enter(&mut model, &BTreeMap::new(), &files, &Done::Appeared(3), "appeared")? {
            check_entry(&vault, &mut model, &files, who, false)?;
        }
        for (n, act) in acts.iter().enumerate() {
            let label = format!("step {n}: {act:?}");
            let did = run(&vault, root, &model, act, n)?;
            let after = files_with_keys(root)?;
            if let Done::Nothing(why) = &did {
                prop_assert!(after == files, "{}: did nothing ({}), yet files changed", label, why);
                continue;
            }
            for who in enter(&mut model, &files, &after, &did, &label)? {
                check_entry(&vault, &mut model, &after, who, false)?;
            }
            files = after;
        }
        for who in 0..model.known.len() {
            check_entry(&vault, &mut model, &files, who, true)?;
        }
    }
}

/// What recording answers is what history reads back afterwards: the same revisions, to
/// the microsecond and with everyone named, for a change and for an outside edit.
#[test]
fn recorded_revisions_are_those_read_back() {
    use kb_domain::{FileChange, ObservedFile, RevisionLog};
    let dir = tempfile::tempdir().unwrap();
    let log = HistoryLog::open_in(dir.path()).unwrap().on_device("laptop");
    let by = ChangeContext { person: Some("ana".into()), ..chat("c-1") };
    let path = EntryPath::parse("ideas/kite.md").unwrap();
    let at = chrono::DateTime::parse_from_rfc3339("2026-11-30T10:11:12.123456789Z").unwrap().to_utc();
    let change = |before: Option<&str>, after: &str| FileChange {
        entry_id: Some("e-1".into()),
        path_before: before.map(|_| path.clone()),
        path_after: Some(path.clone()),
        before: before.map(|b| b.as_bytes().to_vec()),
        after: Some(after.as_bytes().to_vec()),
        description: "Captured \"Kite\" in ideas".into(),
    };
    let first = log.record(at, &by, None, vec![change(None, "one")]).unwrap();
    let second = log.record(at, &by, Some(first[0].operation), vec![change(Some("one"), "two")]).unwrap();
    let observed = vec![ObservedFile {
        path: path.clone(),
        entry_id: None,
        bytes: Some(b"three".to_vec()),
        pulled_from: None,
    }];
    let outside = log.observe(at, observed).unwrap();
    let answered: Vec<_> = first.into_iter().chain(second).chain(outside).collect();
    assert_eq!(answered.len(), 3);
    assert_eq!(answered[0].at.timestamp_subsec_nanos(), 123_456_000);
    assert_eq!((answered[1].person.as_deref(), answered[1].device.as_deref()), (Some("ana"), Some("laptop")));
    for revision in &answered {
        assert_eq!(log.revision(revision.id).unwrap().as_ref(), Some(revision));
    }
    let mut read = log.history(&path, None).unwrap();
    read.sort_by_key(|r| r.id);
    assert_eq!(read, answered);
}
