//! The revision history port: [`RevisionHistory`], each entry's past versions and going
//! back to them, and what it gives back.

use super::entries::RepositoryError;
use crate::change::ChangeContext;
use crate::history::{HistoryError, Revision, UndoScope};
use crate::path::EntryPath;

/// What an undo did.
#[derive(Debug, Clone, PartialEq)]
pub struct UndoOutcome {
    /// The revisions of the change undone.
    pub undone: Vec<Revision>,
    /// The revisions the undo recorded.
    pub revisions: Vec<Revision>,
    /// One line saying what was undone.
    pub description: String,
}

/// What an undo does when a file it would revert changed since the change it undoes
/// (an outside edit, a later change).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LaterChanges {
    /// It refuses, changing nothing, and says what changed.
    #[default]
    Refuse,
    /// It replaces the file; the version it replaces is kept in history.
    Replace,
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq)]
pub struct RestoreOutcome {
    /// Where the entry is now.
    pub path: EntryPath,
    /// The revision the restore recorded (`None` when the file already had those bytes).
    pub revision: Option<Revision>,
    /// Whether the entry had moved since from the path asked for, and was restored where
    /// it is now (never as a second copy).
    pub moved_since: bool,
}

/// A revision with the file's text before and after it, for showing a diff.
#[derive(Debug, Clone, PartialEq)]
pub struct RevisionText {
    /// The revision.
    pub revision: Revision,
    /// The file before (`None`: there was none).
    pub before: Option<String>,
    /// The file after (`None`: there is none).
    pub after: Option<String>,
}

/// The vault's revision history: every version kb recorded of each entry, and going back.
/// By default there is none, and every call says so ([`HistoryError::Unavailable`]).
pub trait RevisionHistory: Send + Sync {
    /// The revisions of the entry at (or last at) `path`, newest first.
    fn history(&self, _path: &EntryPath) -> Result<Vec<Revision>, RepositoryError> {
        Err(HistoryError::Unavailable.into())
    }
    /// One revision of the entry at (or last at) `path`, with its texts.
    fn revision(&self, _path: &EntryPath, _revision: i64) -> Result<RevisionText, RepositoryError> {
        Err(HistoryError::Unavailable.into())
    }
    /// Brings the entry at (or last at) `path` back to `revision`'s bytes exactly; a
    /// deleted entry comes back at its path, or with a suffix when that is taken.
    fn restore_as(
        &self,
        _path: &EntryPath,
        _revision: i64,
        _by: &ChangeContext,
    ) -> Result<RestoreOutcome, RepositoryError> {
        Err(HistoryError::Unavailable.into())
    }
    /// Reverts the most recent change kb made in `scope` that is not undone yet. When a
    /// file it would revert changed since, `later` says whether it refuses, changing
    /// nothing, or replaces the file (every version it replaces is recorded first).
    fn undo_as(
        &self,
        _scope: &UndoScope,
        _later: LaterChanges,
        _by: &ChangeContext,
    ) -> Result<UndoOutcome, RepositoryError> {
        Err(HistoryError::Unavailable.into())
    }
}
