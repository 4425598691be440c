//! What the vault tells others of its changes: [`EntryChange`] and [`ChangeObserver`].

use crate::entry::Entry;
use crate::path::EntryPath;

/// A change to the vault, reported to observers (the search index) before the call returns.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryChange {
    /// An entry was written (created, updated, or the new side of a move).
    Upserted(Entry),
    /// An entry's file is gone (deleted, or the old side of a move).
    Removed(EntryPath),
}

impl EntryChange {
    /// The path the change is at.
    pub fn path(&self) -> &EntryPath {
        match self {
            EntryChange::Upserted(entry) => &entry.path,
            EntryChange::Removed(path) => path,
        }
    }
}

/// Something notified of every change to the vault.
pub trait ChangeObserver: Send + Sync {
    /// Called after the change is on disk and before the call that made it returns.
    fn entry_changed(&self, change: &EntryChange);

    /// Called with the changes of one operation (a move: the new entry, the old path and
    /// the entries whose references were rewritten), which an observer should apply as one
    /// (the search index: one commit, so no search sees half of a move).
    fn entries_changed(&self, changes: &[EntryChange]) {
        for change in changes {
            self.entry_changed(change);
        }
    }

    /// [`ChangeObserver::entries_changed`] for changes one of the people kb serves asked
    /// for (see [`crate::people`]): the search index lets that person read them at once,
    /// and the others a moment later.
    fn entries_changed_by(&self, changes: &[EntryChange], person: &str) {
        let _ = person;
        self.entries_changed(changes);
    }
}
