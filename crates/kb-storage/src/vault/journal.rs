//! Move journals, one file per move in `.kb/moves/`: written (atomically) before a move
//! creates the entry's new file and deleted once the old file is gone and the entries that
//! referred to it are rewritten, so that a crash in between is finished at the next open.
//! A move never leaves two files for one entry, nor zero.
//!
//! Recovery runs only in a process alone on the vault (see `presence`): a journal another
//! live process is writing is never touched. It removes the old file only when the new
//! one exists and carries the entry's id (otherwise the move is abandoned and the old file
//! kept), then points the references it lists at the new path. A journal in the single
//! file of earlier versions (`.kb/move-journal.json`) is finished the same way.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use kb_domain::references::retarget_references;
use kb_domain::{EntryPath, RepositoryError, Stamp};
use serde_json::{Value, json};

use super::atomic;
use super::safe_path::{Root, io_error};
use super::scan::{Found, read_entry, stamp_of_path};

/// The folder of move journals inside `.kb/`.
const MOVES_DIR: &str = "moves";
/// The one journal file of earlier versions, inside `.kb/`.
const LEGACY_FILE: &str = "move-journal.json";

/// A move in progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MoveJournal {
    /// Where the entry was.
    pub(crate) old: EntryPath,
    /// Where it is being created.
    pub(crate) new: EntryPath,
    /// Its id (every moved entry has one).
    pub(crate) id: String,
    /// The entries whose references to `old` are to point at `new`.
    pub(crate) referrers: Vec<EntryPath>,
    /// The old file's stamp when the move began: an old file without an id is removed
    /// only while it is still that file (never one a person wrote there since).
    pub(crate) old_stamp: Option<Stamp>,
}

/// The journal file of one move.
#[derive(Debug)]
pub(crate) struct JournalFile {
    file: PathBuf,
}

impl JournalFile {
    /// A journal file of its own for a move about to start (nothing is written yet).
    pub(crate) fn new(root: &Root) -> JournalFile {
        let name = format!("{}.json", atomic::unique_suffix());
        JournalFile { file: root.state_dir().join(MOVES_DIR).join(name) }
    }

    /// Records (or re-records, for another candidate path) the move about to be made.
    pub(crate) fn write(&self, journal: &MoveJournal) -> Result<(), RepositoryError> {
        let folder = self.file.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(folder).map_err(|e| io_error(folder, e))?;
        let referrers: Vec<String> = journal.referrers.iter().map(ToString::to_string).collect();
        let text = json!({
            "old": journal.old.to_string(),
            "new": journal.new.to_string(),
            "id": journal.id,
            "referrers": referrers,
            "oldStamp": journal.old_stamp.map(|s| json!({"mtimeNs": s.mtime_ns, "size": s.size})),
        });
        atomic::write_atomic(&self.file, text.to_string().as_bytes()).map_err(|e| io_error(&self.file, e))
    }

    /// Forgets the move (it is complete or abandoned).
    pub(crate) fn clear(&self) -> Result<(), RepositoryError> {
        remove(&self.file)
    }
}

fn remove(file: &Path) -> Result<(), RepositoryError> {
    match fs::remove_file(file) {
        Ok(()) => {
            let folder = file.parent().unwrap_or(Path::new("."));
            atomic::sync_dir(folder).map_err(|e| io_error(folder, e))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error(file, e)),
    }
}

/// Reads a journal file. An unreadable journal is reported and treated as absent (the old
/// file is then kept).
fn read(file: &Path) -> Result<Option<MoveJournal>, RepositoryError> {
    let text = match fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(file, e)),
    };
    let parsed = serde_json::from_str::<Value>(&text).ok().and_then(|v| {
        let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let referrers = v.get("referrers").and_then(Value::as_array).map_or_else(Vec::new, |items| {
            items.iter().filter_map(Value::as_str).filter_map(|p| EntryPath::parse(p).ok()).collect()
        });
        let old_stamp = v
            .get("oldStamp")
            .and_then(|s| Some(Stamp::new(s.get("mtimeNs")?.as_i64()?, s.get("size")?.as_u64()?)));
        Some(MoveJournal {
            old: EntryPath::parse(&field("old")?).ok()?,
            new: EntryPath::parse(&field("new")?).ok()?,
            id: field("id")?,
            referrers,
            old_stamp,
        })
    });
    if parsed.is_none() {
        tracing::warn!(file = %file.display(), "move journal cannot be read; ignoring it");
    }
    Ok(parsed)
}

/// The journal files present: the earlier versions' one and those in `.kb/moves/`.
fn journal_files(root: &Root) -> Result<Vec<PathBuf>, RepositoryError> {
    let mut files = vec![root.state_dir().join(LEGACY_FILE)];
    let folder = root.state_dir().join(MOVES_DIR);
    match fs::read_dir(&folder) {
        Ok(listing) => {
            for item in listing {
                let item = item.map_err(|e| io_error(&folder, e))?;
                let name = item.file_name();
                let name = name.to_string_lossy();
                if name.ends_with(".json") && !name.starts_with('.') {
                    files.push(item.path());
                }
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_error(&folder, e)),
    }
    Ok(files)
}

/// Finishes every move interrupted by a crash. Call only when no other kb process has the
/// vault open. A move that cannot be finished now is logged and its journal kept for the
/// next start: it never stops the vault from opening.
pub(crate) fn recover(root: &Root) -> Result<(), RepositoryError> {
    let files = match journal_files(root) {
        Ok(files) => files,
        Err(error) => {
            tracing::warn!(%error, "interrupted moves cannot be looked at now; they are kept for the next start");
            return Ok(());
        }
    };
    for file in files {
        let finished = match read(&file) {
            Ok(Some(journal)) => finish(root, &journal),
            Ok(None) if fs::symlink_metadata(&file).is_err() => continue,
            Ok(None) => Ok(()),
            Err(error) => Err(error),
        };
        match finished.and_then(|()| remove(&file)) {
            Ok(()) => {}
            Err(error) => {
                tracing::warn!(%error, journal = %file.display(), "an interrupted move could not be finished now; kept for the next start")
            }
        }
    }
    Ok(())
}

/// Finishes one move: when the new file exists with the entry's id, the old one is removed
/// and the references are pointed at the new path; otherwise the old one stays.
fn finish(root: &Root, journal: &MoveJournal) -> Result<(), RepositoryError> {
    let new_file = root.file(&journal.new);
    let new_is_ours = matches!(
        read_entry(&new_file, &journal.new)?,
        Some(Found::Entry(e)) if e.id() == Some(journal.id.as_str())
    );
    if !new_is_ours {
        tracing::warn!(old = %journal.old, new = %journal.new, "interrupted move abandoned; entry kept at its old path");
        return Ok(());
    }
    let old_file = root.file(&journal.old);
    if fs::symlink_metadata(&old_file).is_ok() {
        // The entry's own file: its id, or (for a file that had none) the very file the
        // move began from, not one a person wrote at that path since.
        let old_is_ours = match read_entry(&old_file, &journal.old)? {
            Some(Found::Entry(e)) => match e.id() {
                Some(id) => id == journal.id,
                None => journal.old_stamp.is_some() && stamp_of_path(root, &journal.old) == journal.old_stamp,
            },
            _ => false,
        };
        if !old_is_ours {
            tracing::warn!(old = %journal.old, "interrupted move: the old path holds another file; kept");
            return Ok(());
        }
        fs::remove_file(&old_file).map_err(|e| io_error(&old_file, e))?;
        atomic::sync_dir(&root.folder_of(&journal.old)).map_err(|e| io_error(&old_file, e))?;
    }
    for referrer in &journal.referrers {
        retarget_file(root, referrer, &journal.old, &journal.new)?;
    }
    tracing::warn!(old = %journal.old, new = %journal.new, "finished an interrupted move");
    Ok(())
}

/// Points the references to `from` in the entry file at `referrer` at `to`; the new text
/// when the file changed. A missing or unreadable file is left alone.
pub(crate) fn retarget_file(
    root: &Root,
    referrer: &EntryPath,
    from: &EntryPath,
    to: &EntryPath,
) -> Result<Option<String>, RepositoryError> {
    let file = match root.checked_writable_file(referrer) {
        Ok(file) => file,
        Err(RepositoryError::NotFound(_) | RepositoryError::Linked(_) | RepositoryError::OutsideVault(_)) => {
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let Ok(text) = fs::read_to_string(&file) else { return Ok(None) };
    let Some(changed) = retarget_references(referrer, &text, from, to) else { return Ok(None) };
    atomic::write_atomic(&file, changed.as_bytes()).map_err(|e| io_error(&file, e))?;
    Ok(Some(changed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap();
        for sub in [".kb", "inbox", "projects"] {
            fs::create_dir(dir.path().join(sub)).unwrap();
        }
        let root = Root::new(dir.path().to_path_buf()).unwrap();
        (dir, root)
    }

    fn journal() -> MoveJournal {
        MoveJournal {
            old: EntryPath::parse("inbox/a.md").unwrap(),
            new: EntryPath::parse("projects/a.md").unwrap(),
            id: "ID1".into(),
            referrers: vec![EntryPath::parse("projects/b.md").unwrap()],
            old_stamp: None,
        }
    }

    fn write(root: &Root, journal: &MoveJournal) -> JournalFile {
        let file = JournalFile::new(root);
        file.write(journal).unwrap();
        file
    }

    #[test]
    fn round_trips() {
        let (_dir, root) = setup();
        let file = write(&root, &journal());
        assert_eq!(read(&file.file).unwrap(), Some(journal()));
        file.clear().unwrap();
        assert_eq!(read(&file.file).unwrap(), None);
    }

    #[test]
    fn a_crash_after_the_new_file_finishes_the_move_and_its_references() {
        let (dir, root) = setup();
        fs::write(dir.path().join("inbox/a.md"), "---\nid: ID1\n---\n").unwrap();
        fs::write(dir.path().join("projects/a.md"), "---\nid: ID1\n---\n").unwrap();
        fs::write(dir.path().join("projects/b.md"), "See [a](../inbox/a.md).\n").unwrap();
        write(&root, &journal());
        recover(&root).unwrap();
        assert!(!dir.path().join("inbox/a.md").exists());
        assert!(dir.path().join("projects/a.md").exists());
        assert_eq!(
            fs::read_to_string(dir.path().join("projects/b.md")).unwrap(),
            "See [a](../projects/a.md).\n"
        );
        assert_eq!(journal_files(&root).unwrap().len(), 1, "only the legacy name, absent");
    }

    #[test]
    fn the_journal_of_earlier_versions_is_finished_too() {
        let (dir, root) = setup();
        fs::write(dir.path().join("inbox/a.md"), "---\nid: ID1\n---\n").unwrap();
        fs::write(dir.path().join("projects/a.md"), "---\nid: ID1\n---\n").unwrap();
        let legacy = r#"{"old": "inbox/a.md", "new": "projects/a.md", "id": "ID1"}"#;
        fs::write(dir.path().join(".kb").join(LEGACY_FILE), legacy).unwrap();
        recover(&root).unwrap();
        assert!(!dir.path().join("inbox/a.md").exists());
        assert!(!dir.path().join(".kb").join(LEGACY_FILE).exists());
    }

    #[test]
    fn crash_before_the_new_file_keeps_the_old() {
        let (dir, root) = setup();
        fs::write(dir.path().join("inbox/a.md"), "---\nid: ID1\n---\n").unwrap();
        let file = write(&root, &journal());
        recover(&root).unwrap();
        assert!(dir.path().join("inbox/a.md").exists());
        assert!(!file.file.exists());
    }

    #[test]
    fn another_file_at_the_new_path_is_not_taken_for_ours() {
        let (dir, root) = setup();
        fs::write(dir.path().join("inbox/a.md"), "---\nid: ID1\n---\n").unwrap();
        fs::write(dir.path().join("projects/a.md"), "---\nid: OTHER\n---\n").unwrap();
        write(&root, &journal());
        recover(&root).unwrap();
        assert!(dir.path().join("inbox/a.md").exists());
        assert!(dir.path().join("projects/a.md").exists());
    }

    #[test]
    fn a_file_without_an_id_written_at_the_old_path_since_is_kept() {
        let (dir, root) = setup();
        fs::write(dir.path().join("projects/a.md"), "---\nid: ID1\n---\n").unwrap();
        // The person's new note where the moved entry was, without frontmatter.
        fs::write(dir.path().join("inbox/a.md"), "buy milk\n").unwrap();
        let mut moved = journal();
        moved.old_stamp = Some(Stamp::new(1, 3));
        write(&root, &moved);
        recover(&root).unwrap();
        assert_eq!(fs::read_to_string(dir.path().join("inbox/a.md")).unwrap(), "buy milk\n");
    }

    #[test]
    fn a_move_that_cannot_be_finished_is_kept_and_the_vault_still_opens() {
        let (dir, root) = setup();
        fs::write(dir.path().join("inbox/a.md"), "---\nid: ID1\n---\n").unwrap();
        fs::write(dir.path().join("projects/a.md"), "---\nid: ID1\n---\n").unwrap();
        let mut moved = journal();
        let long = format!("{}.md", "长".repeat(80));
        moved.referrers = vec![EntryPath::parse(&format!("projects/{long}")).unwrap()];
        fs::write(dir.path().join("projects").join(&long), "[a](../inbox/a.md)\n").unwrap();
        let file = write(&root, &moved);
        recover(&root).unwrap();
        assert!(file.file.exists(), "the journal is kept for the next start");
    }

    #[test]
    fn garbage_journal_is_dropped() {
        let (dir, root) = setup();
        fs::create_dir_all(dir.path().join(".kb/moves")).unwrap();
        fs::write(dir.path().join(".kb/moves/x.json"), "{not json").unwrap();
        recover(&root).unwrap();
        assert!(!dir.path().join(".kb/moves/x.json").exists());
    }
}
