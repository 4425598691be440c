//! A change the disk refuses (a folder kb may not write to) changes nothing, on disk or in
//! history: no revision says it happened, and an undo still reaches the last change that
//! did.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kb_domain::{
    Category, ChangeContext, ChangeSource, ConversationId, EntryUpdate, EntryWriter, Frontmatter,
    LaterChanges, NewEntry, RepositoryError, RevisionHistory, UndoScope,
};
use kb_storage::history::HistoryLog;
use kb_storage::vault::Vault;

use super::common::clock;

/// A folder made unwritable for as long as it lives: immutable (`chattr +i`) where the
/// system allows it, else read-only by its mode.
struct Unwritable {
    folder: PathBuf,
    immutable: bool,
}

impl Unwritable {
    /// `folder` made unwritable, or `None` when nothing here can refuse a write to it (root
    /// on a filesystem without `chattr`): the test then has nothing to try.
    fn make(folder: &Path) -> Option<Unwritable> {
        let immutable = std::process::Command::new("chattr")
            .arg("+i")
            .arg(folder)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !immutable {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(folder, fs::Permissions::from_mode(0o555)).ok()?;
        }
        let guard = Unwritable { folder: folder.to_path_buf(), immutable };
        let probe = folder.join(".kb-probe");
        if fs::write(&probe, b"x").is_ok() {
            let _ = fs::remove_file(&probe);
            return None;
        }
        Some(guard)
    }
}

impl Drop for Unwritable {
    fn drop(&mut self) {
        if self.immutable {
            let _ = std::process::Command::new("chattr").arg("-i").arg(&self.folder).status();
        } else {
            use std::os::unix::fs::PermissionsExt;
            let _ = fs::set_permissions(&self.folder, fs::Permissions::from_mode(0o755));
        }
    }
}

fn chat() -> ChangeContext {
    ChangeContext {
        source: ChangeSource::Chat,
        tool: Some("test".into()),
        conversation_id: Some(ConversationId::new("c1")),
        session: None,
        device: None,
        claim: None,
        person: None,
    }
}

fn status(value: &str) -> EntryUpdate {
    let mut fields = Frontmatter::new();
    fields.set("status", serde_json::json!(value));
    EntryUpdate { fields, ..EntryUpdate::default() }
}

/// The vault at `dir`, keeping history in `dir/.kb/kb.sqlite`.
fn open(dir: &Path) -> Vault {
    Vault::open_with_history(dir, clock(), Arc::new(HistoryLog::open_in(dir).unwrap())).unwrap()
}

fn new_entry(category: Category, name: &str, body: &str) -> NewEntry {
    NewEntry { category, name: name.into(), fields: Frontmatter::new(), body: body.into() }
}

#[test]
fn a_change_the_disk_refuses_leaves_no_revision_and_undo_reaches_the_last_real_one() {
    let dir = tempfile::tempdir().unwrap();
    let vault =
        Vault::open_with_history(dir.path(), clock(), Arc::new(HistoryLog::open_in(dir.path()).unwrap()))
            .unwrap();
    let by = chat();
    let new = NewEntry {
        category: Category::Ideas,
        name: "Bees".into(),
        fields: Frontmatter::new(),
        body: "Notes about bees.\n".into(),
    };
    let entry = vault.create_as(new, &by).unwrap();
    let other = NewEntry {
        category: Category::Ideas,
        name: "Wasps".into(),
        fields: Frontmatter::new(),
        body: "Notes about wasps.\n".into(),
    };
    let wasps = vault.create_as(other, &by).unwrap();
    // The last change that happened: the status of Bees.
    vault.update_as(&entry.path, &status("active"), &by).unwrap();
    let file = dir.path().join(entry.path.as_str());
    let bytes = fs::read(&file).unwrap();
    let history = vault.history(&entry.path).unwrap();
    let wasps_history = vault.history(&wasps.path).unwrap();

    let Some(refusing) = Unwritable::make(&dir.path().join("ideas")) else { return };
    let refused = |result: Result<(), RepositoryError>, what: &str| match result {
        Err(RepositoryError::Io { .. }) => {}
        other => panic!("{what}: {other:?}"),
    };
    refused(vault.update_as(&entry.path, &status("done"), &by).map(drop), "an update");
    refused(vault.delete_as(&entry.path, &by).map(drop), "a delete");
    refused(vault.move_entry_as(&entry.path, Category::Projects, &by).map(drop), "a move");
    refused(
        vault.merge_as(&entry.path, std::slice::from_ref(&wasps.path), chrono::NaiveDate::MIN, &by).map(drop),
        "a merge",
    );
    let scope = UndoScope::Conversation(ConversationId::new("c1"));
    refused(vault.undo_as(&scope, LaterChanges::Refuse, &by).map(drop), "an undo");
    drop(refusing);

    assert_eq!(fs::read(&file).unwrap(), bytes, "the file is as it was");
    assert!(!dir.path().join("projects").join("bees.md").exists(), "no moved copy is left");
    assert_eq!(vault.history(&entry.path).unwrap(), history, "no revision says a refused change happened");
    assert_eq!(vault.history(&wasps.path).unwrap(), wasps_history);
    // The undo now takes back the last change that happened: the status set before.
    let undone = vault.undo_as(&scope, LaterChanges::Refuse, &by).unwrap();
    assert!(undone.description.starts_with("Updated status of"), "{}", undone.description);
    assert!(!fs::read_to_string(&file).unwrap().contains("status: active"));
}

#[test]
fn a_reference_the_disk_refuses_to_repoint_leaves_no_revision_and_the_move_undoes() {
    let dir = tempfile::tempdir().unwrap();
    let vault =
        Vault::open_with_history(dir.path(), clock(), Arc::new(HistoryLog::open_in(dir.path()).unwrap()))
            .unwrap();
    let by = chat();
    let bees = vault.create_as(new_entry(Category::Ideas, "Bees", "Notes about bees.\n"), &by).unwrap();
    let referrer = vault
        .create_as(new_entry(Category::Admin, "Hive permit", "See [[ideas/bees]] first.\n"), &by)
        .unwrap();
    let referrer_file = dir.path().join(referrer.path.as_str());
    let referrer_bytes = fs::read(&referrer_file).unwrap();
    let referrer_history = vault.history(&referrer.path).unwrap();

    // The move is made; the reference in admin/ cannot be pointed at the new path.
    let Some(refusing) = Unwritable::make(&dir.path().join("admin")) else { return };
    let moved = vault.move_entry_as(&bees.path, Category::Projects, &by).unwrap();
    drop(refusing);
    assert_eq!(fs::read(&referrer_file).unwrap(), referrer_bytes);
    assert_eq!(
        vault.history(&referrer.path).unwrap(),
        referrer_history,
        "no revision says the reference was repointed, nor that the file was edited outside kb"
    );

    // Undone without force: the entry goes back where it was.
    let scope = UndoScope::Conversation(ConversationId::new("c1"));
    vault.undo_as(&scope, LaterChanges::Refuse, &by).unwrap();
    assert!(dir.path().join(bees.path.as_str()).exists());
    assert!(!dir.path().join(moved.entry.path.as_str()).exists());
}

#[test]
fn a_markdown_link_left_unpointed_by_a_move_is_pointed_at_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let by = chat();
    let bees = vault.create_as(new_entry(Category::Ideas, "Bees", "Notes about bees.\n"), &by).unwrap();
    let referrer = vault
        .create_as(
            new_entry(Category::Admin, "Hive permit", "See [the bees](../ideas/bees.md) first.\n"),
            &by,
        )
        .unwrap();
    let Some(refusing) = Unwritable::make(&dir.path().join("admin")) else { return };
    vault.move_entry_as(&bees.path, Category::Projects, &by).unwrap();
    drop(refusing);
    drop(vault);

    let _reopened = open(dir.path());
    let text = fs::read_to_string(dir.path().join(referrer.path.as_str())).unwrap();
    assert!(text.contains("[the bees](../projects/bees.md)"), "{text}");
}
