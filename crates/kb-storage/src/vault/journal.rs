//! The move journal, `.kb/move-journal.json`: written (atomically) before a move creates
//! the entry's new file and deleted once the old file is gone, so that a crash in between
//! is finished at the next open. A move never leaves two files for one entry, nor zero.
//!
//! Recovery removes the old file only when the new one exists and carries the entry's id;
//! otherwise the move is abandoned and the old file kept.

use std::fs;
use std::io;
use std::path::PathBuf;

use kb_domain::{EntryPath, RepositoryError};
use serde_json::{Value, json};

use super::atomic;
use super::safe_path::{Root, io_error};
use super::scan::{Found, read_entry};

/// The file name of the journal inside `.kb/`.
const JOURNAL_FILE: &str = "move-journal.json";

/// A move in progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MoveJournal {
    /// Where the entry was.
    pub(crate) old: EntryPath,
    /// Where it is being created.
    pub(crate) new: EntryPath,
    /// Its id (every moved entry has one).
    pub(crate) id: String,
}

fn journal_file(root: &Root) -> PathBuf {
    root.state_dir().join(JOURNAL_FILE)
}

/// Records a move about to be made.
pub(crate) fn write(root: &Root, journal: &MoveJournal) -> Result<(), RepositoryError> {
    let text = json!({"old": journal.old.to_string(), "new": journal.new.to_string(), "id": journal.id});
    let file = journal_file(root);
    atomic::write_atomic(&file, text.to_string().as_bytes()).map_err(|e| io_error(&file, e))
}

/// Forgets the move (it is complete or abandoned).
pub(crate) fn clear(root: &Root) -> Result<(), RepositoryError> {
    let file = journal_file(root);
    match fs::remove_file(&file) {
        Ok(()) => atomic::sync_dir(&root.state_dir()).map_err(|e| io_error(&root.state_dir(), e)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error(&file, e)),
    }
}

/// Reads the journal, if a move was interrupted. An unreadable journal is reported and
/// treated as absent (the old file is then kept).
pub(crate) fn read(root: &Root) -> Result<Option<MoveJournal>, RepositoryError> {
    let file = journal_file(root);
    let text = match fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(&file, e)),
    };
    let parsed = serde_json::from_str::<Value>(&text).ok().and_then(|v| {
        let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        Some(MoveJournal {
            old: EntryPath::parse(&field("old")?).ok()?,
            new: EntryPath::parse(&field("new")?).ok()?,
            id: field("id")?,
        })
    });
    if parsed.is_none() {
        tracing::warn!(file = %file.display(), "move journal cannot be read; ignoring it");
    }
    Ok(parsed)
}

/// Finishes a move interrupted by a crash: when the new file exists with the entry's id,
/// the old one is removed; otherwise the old one stays. Then the journal is deleted.
pub(crate) fn recover(root: &Root) -> Result<(), RepositoryError> {
    if let Some(journal) = read(root)? {
        let new_file = root.file(&journal.new);
        let new_is_ours = matches!(
            read_entry(&new_file, &journal.new)?,
            Some(Found::Entry(e)) if e.id() == Some(journal.id.as_str())
        );
        let old_file = root.file(&journal.old);
        if new_is_ours && fs::symlink_metadata(&old_file).is_ok() {
            let old_is_ours = match read_entry(&old_file, &journal.old)? {
                Some(Found::Entry(e)) => e.id().is_none_or(|id| id == journal.id),
                _ => false,
            };
            if old_is_ours {
                fs::remove_file(&old_file).map_err(|e| io_error(&old_file, e))?;
                atomic::sync_dir(&root.folder(journal.old.category())).map_err(|e| io_error(&old_file, e))?;
                tracing::warn!(old = %journal.old, new = %journal.new, "finished an interrupted move");
            } else {
                tracing::warn!(old = %journal.old, "interrupted move: the old path holds another file; kept");
            }
        } else if !new_is_ours {
            tracing::warn!(old = %journal.old, new = %journal.new, "interrupted move abandoned; entry kept at its old path");
        }
    } else if fs::symlink_metadata(journal_file(root)).is_err() {
        return Ok(());
    }
    clear(root)
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
        }
    }

    #[test]
    fn round_trips() {
        let (_dir, root) = setup();
        write(&root, &journal()).unwrap();
        assert_eq!(read(&root).unwrap(), Some(journal()));
        clear(&root).unwrap();
        assert_eq!(read(&root).unwrap(), None);
    }

    #[test]
    fn crash_before_the_new_file_keeps_the_old() {
        let (dir, root) = setup();
        fs::write(dir.path().join("inbox/a.md"), "---\nid: ID1\n---\n").unwrap();
        write(&root, &journal()).unwrap();
        recover(&root).unwrap();
        assert!(dir.path().join("inbox/a.md").exists());
        assert!(!dir.path().join(".kb").join(JOURNAL_FILE).exists());
    }

    #[test]
    fn another_file_at_the_new_path_is_not_taken_for_ours() {
        let (dir, root) = setup();
        fs::write(dir.path().join("inbox/a.md"), "---\nid: ID1\n---\n").unwrap();
        fs::write(dir.path().join("projects/a.md"), "---\nid: OTHER\n---\n").unwrap();
        write(&root, &journal()).unwrap();
        recover(&root).unwrap();
        assert!(dir.path().join("inbox/a.md").exists());
        assert!(dir.path().join("projects/a.md").exists());
    }

    #[test]
    fn garbage_journal_is_dropped() {
        let (dir, root) = setup();
        fs::write(dir.path().join(".kb").join(JOURNAL_FILE), "{not json").unwrap();
        recover(&root).unwrap();
        assert!(!dir.path().join(".kb").join(JOURNAL_FILE).exists());
    }
}
