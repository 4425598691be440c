//! Following changes made outside this process: an entry file read again into the cache
//! (and the entry list file), recorded in history when it differs from what history last
//! recorded, and the observers notified unless they followed the change already.

use std::fs;

use kb_domain::{Entry, EntryChange, EntryPath, ObservedFile, RepositoryError};

use super::scan::{Found, read_entry};
use super::{State, Vault};

/// Who hears of what a re-read found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Notify {
    /// The observers and the entry list file (a change no observer knows of yet).
    Observers,
    /// The entry list file only: the search index followed the change already.
    EntryListOnly,
}

impl Vault {
    /// Brings the cache and the entry list file in line with the entry file at `path` after
    /// the search index already followed it (an edit from outside kb, or another kb
    /// process's change, reported by the search index): observers are not notified of it a
    /// second time.
    pub fn follow(&self, path: &EntryPath) -> Result<Option<Entry>, RepositoryError> {
        self.reread(path, Notify::EntryListOnly)
    }

    /// [`Vault::follow`] for many paths at once (a `git pull` the search index followed):
    /// one hold of the locks and one history record for them all. Paths that cannot be read
    /// are logged and skipped; returns how many were followed.
    pub fn follow_all(&self, paths: &[EntryPath]) -> usize {
        let mut state = self.lock();
        let _writing = self.history.is_kept().then(|| self.writes.hold());
        let mut observed = Vec::new();
        let mut followed = 0;
        for path in paths {
            match self.reread_observed(&mut state, path, Notify::EntryListOnly, &mut observed) {
                Ok(_) => followed += 1,
                Err(error) => tracing::warn!(%error, %path, "could not follow an entry changed elsewhere"),
            }
        }
        self.history.observe(observed);
        followed
    }

    /// Reads the entry at `path` again into the cache (and the entry list file), telling
    /// whom `notify` says.
    pub(super) fn reread(&self, path: &EntryPath, notify: Notify) -> Result<Option<Entry>, RepositoryError> {
        self.reread_locked(&mut self.lock(), path, notify)
    }

    /// [`Vault::reread`] under a hold of the lock the caller has. With history kept, what
    /// was read is compared with history and recorded when it differs (a change made
    /// outside kb), under the write lock so a change kb is making is never taken for one.
    fn reread_locked(
        &self,
        state: &mut State,
        path: &EntryPath,
        notify: Notify,
    ) -> Result<Option<Entry>, RepositoryError> {
        if !self.history.is_kept() {
            return self.reread_file(state, path, notify);
        }
        let _writing = self.writes.hold();
        let mut observed = Vec::new();
        let result = self.reread_observed(state, path, notify, &mut observed);
        self.history.observe(observed);
        result
    }

    /// [`Vault::reread_file`], adding what was read to `observed` for history when it is
    /// kept. The caller holds the write lock when history is kept, and records `observed`.
    pub(super) fn reread_observed(
        &self,
        state: &mut State,
        path: &EntryPath,
        notify: Notify,
        observed: &mut Vec<ObservedFile>,
    ) -> Result<Option<Entry>, RepositoryError> {
        let result = self.reread_file(state, path, notify);
        if self.history.is_kept() && matches!(result, Ok(_) | Err(RepositoryError::Malformed { .. })) {
            let bytes = fs::read(self.root.file(path)).ok();
            let entry_id = match &result {
                Ok(Some(entry)) => entry.id().map(str::to_string),
                _ => None,
            };
            observed.push(ObservedFile { path: path.clone(), bytes, entry_id, pulled_from: None });
        }
        result
    }

    /// Reads the entry at `path` into the cache (see [`Vault::reread`]).
    fn reread_file(
        &self,
        state: &mut State,
        path: &EntryPath,
        notify: Notify,
    ) -> Result<Option<Entry>, RepositoryError> {
        let file = match self.root.checked_file(path) {
            Ok(file) => Some(file),
            Err(RepositoryError::NotFound(_)) => None,
            Err(e) => {
                state.cache.remove(path);
                self.reread_done(state, EntryChange::Removed(path.clone()), notify);
                return Err(e);
            }
        };
        let found = match file {
            Some(file) => read_entry(&file, path)?,
            None => None,
        };
        match found {
            Some(Found::Entry(entry)) => {
                state.cache.insert(&entry);
                self.reread_done(state, EntryChange::Upserted(entry.clone()), notify);
                Ok(Some(entry))
            }
            Some(Found::Malformed(m)) => {
                tracing::warn!(path = %m.path, reason = %m.reason, "entry file became malformed; skipped");
                state.cache.mark_malformed(&m);
                self.reread_done(state, EntryChange::Removed(path.clone()), notify);
                Err(RepositoryError::Malformed { path: m.path, reason: m.reason })
            }
            None => {
                state.cache.remove(path);
                self.reread_done(state, EntryChange::Removed(path.clone()), notify);
                Ok(None)
            }
        }
    }

    /// After a re-read: the entry list file brought up to date, the observers notified
    /// when `notify` says so.
    fn reread_done(&self, state: &mut State, change: EntryChange, notify: Notify) {
        // Something changed that this process did not do: the moment to look for changes
        // whose file events went missing.
        self.sweeps.touch();
        match notify {
            Notify::Observers => self.changed(state, &[change]),
            Notify::EntryListOnly => self.entry_list_due(state, None),
        }
    }
}
