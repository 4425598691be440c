//! The vault's side of revision history: recording each change while the vault's locks
//! are held (so another process never sees a file before its revision), noticing changes
//! made outside kb, and going back to a revision (undoing the last operation is `undo`).
//!
//! A restore writes exact bytes from history; whatever it replaces is recorded first.

use std::collections::HashMap;
use std::fs;

use kb_domain::{
    ChangeContext, ContentHash, Entry, EntryChange, EntryPath, FileChange, HistoryError, ObservedFile,
    RepositoryError, RestoreOutcome, Revision, RevisionText, Stamp,
};

use super::history_checked::HistoryChecked;
use super::safe_path::io_error;
use super::{State, Vault, atomic, scan};
use crate::history::content_hash;

/// How many differing files [`Vault::check_history`] records under one hold of the
/// vault's locks (a first check of a large vault records every file).
const CHECK_CHUNK: usize = 32;

/// The pause between two holds of the locks by [`Vault::check_history`], so changes
/// waiting for them (in this process or another) go first.
const CHECK_PAUSE: std::time::Duration = std::time::Duration::from_millis(5);

impl Vault {
    /// After a change recorded first failed part-way, records what is really on disk at
    /// `paths` (as changes from outside kb), so history again matches the files.
    pub(super) fn observe_after_failure(&self, paths: &[EntryPath]) {
        self.history.observe(self.files_now(paths));
    }

    /// After a change recorded first could not be made (the disk refused its first write,
    /// or what it did was put back): takes its revisions `recorded` out of history, so no
    /// undo reaches for it, then records what is on disk at `paths` where it differs from
    /// what history held (an edit from outside that came in between, a put-back that failed).
    pub(super) fn take_back(&self, recorded: &[Revision], paths: &[EntryPath]) {
        self.history.retract(recorded);
        self.observe_after_failure(paths);
    }

    /// After a move or a merge made, where the references in `unwritten` could not be
    /// pointed at the entry's new path (a folder kb may not write to): takes their
    /// revisions, among `recorded`, out of history, as they did not happen, then looks at
    /// the files. Answers the revisions left.
    pub(super) fn take_back_unwritten(
        &self,
        recorded: Vec<Revision>,
        unwritten: &[EntryPath],
    ) -> Vec<Revision> {
        let (not_made, made): (Vec<Revision>, Vec<Revision>) = recorded.into_iter().partition(|revision| {
            revision.path_before.is_some()
                && revision.path_before == revision.path_after
                && revision.path_after.as_ref().is_some_and(|path| unwritten.contains(path))
        });
        self.history.retract(&not_made);
        self.observe_after_failure(unwritten);
        made
    }

    /// The files at `paths` as they are on disk now (`bytes: None` where none is).
    fn files_now(&self, paths: &[EntryPath]) -> Vec<ObservedFile> {
        paths
            .iter()
            .map(|path| {
                let bytes = fs::read(self.root.file(path)).ok();
                let entry_id = bytes.as_deref().and_then(|b| entry_id_of(path, b));
                ObservedFile { path: path.clone(), bytes, entry_id, pulled_from: None }
            })
            .collect()
    }

    /// Brings history in line with the files: every entry file whose bytes are not what
    /// history last recorded at its path (edited while kb was not running, or by a kb
    /// process killed between writing and recording), and every recorded file that is
    /// gone, is recorded as a change from outside. Reads only the files whose stamp or
    /// history changed since the last check found them in agreement (see
    /// `history_checked`), the first time every file, so long-running
    /// processes call it off the request path; the files are compared without any lock,
    /// and only those that differ are read again and recorded, a few at a time under the
    /// vault's locks with pauses between, so changes in every process go on meanwhile.
    /// Returns how many files were recorded.
    pub fn check_history(&self) -> Result<usize, RepositoryError> {
        let log = self.history.log()?;
        let state_dir = self.root.state_dir();
        let checked = HistoryChecked::load(&state_dir);
        // Taken before any stamp is, so that the racy check of the next check holds.
        let began = std::time::SystemTime::now();
        let stamps: HashMap<EntryPath, Stamp> = scan::note_files(&self.root).into_iter().collect();
        let paths = self.lock().cache.known_paths();
        let mut heads: HashMap<EntryPath, ContentHash> = log.heads()?.into_iter().collect();
        let mut differing = Vec::new();
        let mut agreeing = Vec::new();
        for path in paths {
            let head = heads.remove(&path);
            let stamp = stamps.get(&path).copied();
            if let (Some(stamp), Some(head)) = (stamp, &head)
                && checked.agrees(&path, stamp, head)
            {
                agreeing.push((path, stamp, head.clone()));
                continue;
            }
            let Ok(bytes) = fs::read(self.root.file(&path)) else { continue };
            match head {
                Some(head) if head == content_hash(&bytes) => {
                    // The stamp was taken before the read: at worst older than the bytes.
                    if let Some(stamp) = stamp {
                        agreeing.push((path, stamp, head));
                    }
                }
                _ => differing.push(path),
            }
        }
        if let Err(error) = HistoryChecked::save(&state_dir, &agreeing, began) {
            tracing::warn!(%error, "what the history check found cannot be saved; the next check reads every file");
        }
        // Recorded files no longer there.
        differing
            .extend(heads.into_keys().filter(|path| fs::symlink_metadata(self.root.file(path)).is_err()));
        let mut recorded = 0;
        for (n, chunk) in differing.chunks(CHECK_CHUNK).enumerate() {
            if n > 0 {
                std::thread::sleep(CHECK_PAUSE);
            }
            // Both locks, as a change holds them: threads of this process share the write
            // lock's file, so only the vault's own lock keeps their changes out meanwhile.
            let _state = self.lock();
            let _writing = self.writes.hold();
            // Read again under the lock: a change kb made meanwhile is already recorded,
            // and the log compares with what it last recorded before adding anything.
            let mut files = self.files_now(chunk);
            self.history.mark_pulled(&mut files);
            recorded += log.observe(self.clock.now(), files)?.len();
        }
        Ok(recorded)
    }

    /// The revisions of the entry at (or last at) `path`, newest first: by the `id` of the
    /// file there now, when it has one.
    pub(super) fn entry_history(&self, path: &EntryPath) -> Result<Vec<Revision>, RepositoryError> {
        let log = self.history.log()?;
        let entry_id = fs::read(self.root.file(path)).ok().and_then(|bytes| entry_id_of(path, &bytes));
        Ok(log.history(path, entry_id.as_deref())?)
    }

    /// Revision `id`, checked to be one of the entry at (or last at) `path`, or one that
    /// changed the file at `path` (an entry deleted there before another took its place).
    fn revision_of(&self, path: &EntryPath, id: i64) -> Result<Revision, RepositoryError> {
        let log = self.history.log()?;
        let revision = log.revision(id)?.ok_or(RepositoryError::RevisionNotFound(id))?;
        let at_path =
            revision.path_before.as_ref() == Some(path) || revision.path_after.as_ref() == Some(path);
        if !at_path && !self.entry_history(path)?.iter().any(|r| r.id == id) {
            return Err(RepositoryError::RevisionOfAnother { revision: id, path: path.clone() });
        }
        Ok(revision)
    }

    /// The bytes stored under `hash`.
    pub(super) fn stored(&self, hash: &ContentHash) -> Result<Vec<u8>, RepositoryError> {
        self.history.log()?.content(hash)?.ok_or_else(|| {
            HistoryError::database_message(format!("the stored file {hash} is missing")).into()
        })
    }

    /// Revision `id` of the entry at `path`, with the file's text before and after.
    pub(super) fn revision_text(&self, path: &EntryPath, id: i64) -> Result<RevisionText, RepositoryError> {
        let revision = self.revision_of(path, id)?;
        let text = |hash: &Option<ContentHash>| -> Result<Option<String>, RepositoryError> {
            hash.as_ref()
                .map(|h| self.stored(h).map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
                .transpose()
        };
        Ok(RevisionText { before: text(&revision.before)?, after: text(&revision.after)?, revision })
    }

    /// Brings the entry at (or last at) `path` back to revision `id`'s bytes.
    pub(super) fn restore(
        &self,
        path: &EntryPath,
        id: i64,
        by: &ChangeContext,
    ) -> Result<RestoreOutcome, RepositoryError> {
        let revision = self.revision_of(path, id)?;
        // The entry the revision is of: its id, or for a revision from before kb gave the
        // file one, the id of the entry whose history holds it.
        let owner = match &revision.entry_id {
            Some(entry_id) => Some(entry_id.clone()),
            None => self.history.log()?.entry_of_revision(id)?,
        };
        // A revision that removed the file restores what it removed.
        let hash = revision
            .after
            .as_ref()
            .or(revision.before.as_ref())
            .ok_or(RepositoryError::RevisionNotFound(id))?;
        let bytes = self.stored(hash)?;
        let mut state = self.lock();
        let _writing = self.writes.hold();
        let log = self.history.log()?;
        // An entry that lives elsewhere now (moved since) is restored where it is: a
        // second file with its id would be a second copy of the entry.
        let elsewhere = match &owner {
            Some(entry_id) => match log.last_path_of(entry_id)? {
                Some(now) if now != *path => {
                    let is_it = match fs::read(self.root.file(&now)) {
                        Ok(current) => self.entry_of_file(&now, &current)?.as_ref() == Some(entry_id),
                        Err(_) => false,
                    };
                    is_it.then_some(now)
                }
                _ => None,
            },
            None => None,
        };
        let moved_since = elsewhere.is_some();
        let asked = elsewhere.unwrap_or_else(|| path.clone());
        let existing = match self.root.checked_writable_file(&asked) {
            Ok(file) => Some(fs::read(&file).map_err(|e| io_error(&file, e))?),
            Err(RepositoryError::NotFound(_)) => None,
            Err(e) => return Err(e),
        };
        // The file there is replaced only when it is the same entry; another entry there
        // now is left alone and the old one comes back beside it.
        let same_entry = match existing.as_deref() {
            Some(current) => self.entry_of_file(&asked, current)? == owner,
            None => false,
        };
        let (target, current) = if same_entry {
            (asked, existing)
        } else {
            let wanted = revision.last_path().cloned().unwrap_or_else(|| path.clone());
            (self.free_path_like(&state, &wanted, &bytes)?, None)
        };
        if current.as_deref() == Some(bytes.as_slice()) {
            return Ok(RestoreOutcome { path: target, revision: None, moved_since });
        }
        let change = FileChange {
            entry_id: entry_id_of(&target, &bytes).or(owner),
            path_before: current.is_some().then(|| target.clone()),
            path_after: Some(target.clone()),
            before: current.clone(),
            after: Some(bytes.clone()),
            description: format!("Restored {target} to revision {id}"),
        };
        let recorded = if current.is_some() {
            // The version replaced is in history before it is replaced.
            let recorded = self.history.record_first(by, None, vec![change])?;
            let file = self.root.file(&target);
            if let Err(e) = atomic::write_atomic(&file, &bytes) {
                self.take_back(&recorded, std::slice::from_ref(&target));
                return Err(io_error(&file, e));
            }
            self.history.written(by, &recorded);
            recorded
        } else {
            self.history.record(by, None, vec![change])
        };
        let change = self.remember(&mut state, &target, Some(&bytes));
        self.made(&mut state, &[change], by.person.as_deref());
        Ok(RestoreOutcome { path: target, revision: recorded.into_iter().next(), moved_since })
    }

    /// The id of the entry the file at `path` (with `bytes`) is: its own `id`, else the id
    /// history last recorded for the file there (one that lost the id kb gave it, through
    /// a restore or an undo to a version from before), unless history last saw that path
    /// emptied (the file there now is another).
    pub(super) fn entry_of_file(
        &self,
        path: &EntryPath,
        bytes: &[u8],
    ) -> Result<Option<String>, RepositoryError> {
        if let Some(id) = entry_id_of(path, bytes) {
            return Ok(Some(id));
        }
        if !self.history.is_kept() {
            return Ok(None);
        }
        let history = self.entry_history(path)?;
        Ok(history
            .first()
            .filter(|newest| newest.path_after.as_ref() == Some(path))
            .and_then(|newest| newest.entry_id.clone()))
    }

    /// `wanted` when no file is there, else the first free `name-2`, `name-3`, … in the
    /// same folder (made again when it is gone); the file is created there with `bytes`.
    fn free_path_like(
        &self,
        state: &State,
        wanted: &EntryPath,
        bytes: &[u8],
    ) -> Result<EntryPath, RepositoryError> {
        let folder = self.root.folder_of(wanted);
        fs::create_dir_all(&folder).map_err(|e| io_error(&folder, e))?;
        if !self.root.is_inside(&folder) {
            return Err(RepositoryError::OutsideVault(wanted.folder().to_string()));
        }
        let prefix = if wanted.folder().is_empty() { String::new() } else { format!("{}/", wanted.folder()) };
        for n in 1..=super::writes::MAX_SUFFIX {
            let candidate = if n == 1 {
                wanted.clone()
            } else {
                EntryPath::parse(&format!("{prefix}{}-{n}.md", wanted.stem()))?
            };
            let file = self.root.file(&candidate);
            if state.cache.is_taken(&candidate) || fs::symlink_metadata(&file).is_ok() {
                continue;
            }
            if atomic::create_new(&file, bytes).map_err(|e| io_error(&file, e))? {
                return Ok(candidate);
            }
        }
        Err(io_error(&folder, std::io::Error::new(std::io::ErrorKind::AlreadyExists, "no free name")))
    }

    /// Updates the cache for the file at `path`, now `bytes` (`None`: gone); the change
    /// to notify observers of.
    pub(super) fn remember(&self, state: &mut State, path: &EntryPath, bytes: Option<&[u8]>) -> EntryChange {
        let entry = bytes
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|text| Entry::from_document(path.clone(), text).ok());
        match entry {
            Some(entry) => {
                state.cache.insert(&entry);
                // A note written back (an undo, a restore) brings back the files it links.
                if let Some(text) = bytes.and_then(|b| std::str::from_utf8(b).ok()) {
                    self.bring_back_kept_files(text);
                }
                EntryChange::Upserted(entry)
            }
            None => {
                let kept = self.kept_files_of(state, path);
                state.cache.remove(path);
                self.trash_unlinked(state, path, &kept);
                EntryChange::Removed(path.clone())
            }
        }
    }
}

/// The `id` in the frontmatter of `bytes`, when it has one.
pub(super) fn entry_id_of(path: &EntryPath, bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    Entry::from_document(path.clone(), text).ok()?.id().map(str::to_string)
}
