//! Undo: the most recent operation kb made in a scope reverted, byte for byte, from
//! history. It refuses, changing nothing, when a file it would revert is no longer what the
//! change left (an outside edit, a later change), unless told to replace such files; every
//! file it removes or replaces is recorded first.

use std::collections::HashMap;
use std::fs;

use kb_domain::{
    ChangeContext, EntryChange, EntryPath, FileChange, LaterChanges, RepositoryError, Revision, UndoOutcome,
    UndoScope,
};

use super::revisions::entry_id_of;
use super::safe_path::Root;
use super::safe_path::io_error;
use super::{State, Vault, atomic};
use crate::history::content_hash;

/// The files' bytes as the undo finds and leaves them, by path (`None`: no file).
type FilesNow = HashMap<EntryPath, Option<Vec<u8>>>;

/// What an undo will do, worked out before anything is touched.
struct UndoPlan {
    /// What history records, in order: files written since that the undo replaces, then
    /// each revision reverted.
    recorded: Vec<FileChange>,
    /// The files to remove or write, in order.
    steps: Vec<UndoStep>,
}

impl Vault {
    /// Reverts the most recent undoable operation in `scope`. Every file it removes or
    /// replaces is recorded before it is touched: a forced undo over a file written since
    /// keeps that file's bytes in history.
    pub(super) fn undo(
        &self,
        scope: &UndoScope,
        later: LaterChanges,
        by: &ChangeContext,
    ) -> Result<UndoOutcome, RepositoryError> {
        let log = self.history.log()?;
        let mut state = self.lock();
        let _writing = self.writes.hold();
        let undone = log.last_undoable(scope)?;
        let Some(first) = undone.first() else {
            return Err(RepositoryError::NothingToUndo(scope.words()));
        };
        let operation = first.operation;
        let description = undone.iter().map(|r| r.description.as_str()).collect::<Vec<_>>().join("; ");
        // Every file must still be what the change left, before anything is touched.
        let mut now = self.files_now_of(&undone);
        if later == LaterChanges::Refuse
            && let Some((path, what)) = undone.iter().find_map(|revision| changed_since(revision, &now))
        {
            return Err(RepositoryError::ChangedSince { change: description, path, what });
        }
        // Every step and its revision are planned, then recorded; only then is a file touched.
        let plan = self.plan_undo(&undone, &mut now)?;
        let revisions = self.history.record_first(by, Some(operation), plan.recorded)?;
        let changes = self.take_steps(&mut state, &plan.steps, &revisions)?;
        self.history.written(by, &revisions);
        self.made(&mut state, &changes, by.person.as_deref());
        Ok(UndoOutcome { undone, revisions, description })
    }

    /// The bytes now in every file the revisions name, before or after.
    fn files_now_of(&self, revisions: &[Revision]) -> FilesNow {
        let mut now = FilesNow::new();
        for revision in revisions {
            for path in [&revision.path_after, &revision.path_before].into_iter().flatten() {
                if !now.contains_key(path) {
                    now.insert(path.clone(), fs::read(self.root.file(path)).ok());
                }
            }
        }
        now
    }

    /// Plans reverting `undone`, newest first, from the files as they are `now` (which it
    /// brings to what each step leaves).
    fn plan_undo(&self, undone: &[Revision], now: &mut FilesNow) -> Result<UndoPlan, RepositoryError> {
        let mut replaced = Vec::new();
        let mut reverted = Vec::new();
        let mut steps = Vec::new();
        for revision in undone.iter().rev() {
            let before = revision.before.as_ref().map(|h| self.stored(h)).transpose()?;
            let current = revision.path_after.as_ref().and_then(|p| now.get(p).cloned().flatten());
            if let Some(after_path) = &revision.path_after
                && (revision.path_before.as_ref() != Some(after_path) || before.is_none())
            {
                steps.push(UndoStep::Remove(after_path.clone()));
                now.insert(after_path.clone(), None);
            }
            if let (Some(before_path), Some(bytes)) = (&revision.path_before, &before) {
                replaced.extend(written_since(revision, before_path, now));
                steps.push(UndoStep::Write(before_path.clone(), bytes.clone()));
                now.insert(before_path.clone(), Some(bytes.clone()));
            }
            reverted.push(FileChange {
                entry_id: revision.entry_id.clone(),
                path_before: revision.path_after.clone().filter(|_| current.is_some()),
                path_after: revision.path_before.clone().filter(|_| before.is_some()),
                before: current,
                after: before,
                description: format!("Undid: {}", revision.description),
            });
        }
        replaced.extend(reverted);
        Ok(UndoPlan { recorded: replaced, steps })
    }

    /// Removes and writes the files of an undo already recorded as `recorded`, keeping the
    /// catalogue in step; answers the changes made. When one fails, history is brought
    /// back in line with the files the undo did not reach; when the first fails, nothing
    /// was undone, and the undo leaves history.
    fn take_steps(
        &self,
        state: &mut State,
        steps: &[UndoStep],
        recorded: &[Revision],
    ) -> Result<Vec<EntryChange>, RepositoryError> {
        let mut changes = Vec::new();
        for (n, step) in steps.iter().enumerate() {
            match step.take(&self.root) {
                Ok(bytes) => changes.push(self.remember(state, step.path(), bytes)),
                Err(error) => {
                    let untouched: Vec<EntryPath> = steps[n..].iter().map(|s| s.path().clone()).collect();
                    if n == 0 {
                        self.take_back(recorded, &untouched);
                    } else {
                        self.observe_after_failure(&untouched);
                    }
                    self.made(state, &changes, None);
                    return Err(error);
                }
            }
        }
        Ok(changes)
    }
}

/// The file written at `before_path` since `revision` (an undo forced past it), which the
/// undo replaces: kept in history in its own entry's history when it has an id, else in
/// the history of the entry put back over it, where a restore finds it.
fn written_since(revision: &Revision, before_path: &EntryPath, now: &FilesNow) -> Option<FileChange> {
    if revision.path_after.as_ref() == Some(before_path) {
        return None;
    }
    let theirs = now.get(before_path).cloned().flatten()?;
    Some(FileChange {
        entry_id: entry_id_of(before_path, &theirs).or_else(|| revision.entry_id.clone()),
        path_before: Some(before_path.clone()),
        path_after: None,
        before: Some(theirs),
        after: None,
        description: format!("Replaced {before_path}, written since, to undo: {}", revision.description),
    })
}

/// One file an undo changes.
enum UndoStep {
    /// The file at the path is removed.
    Remove(EntryPath),
    /// The file at the path gets these bytes.
    Write(EntryPath, Vec<u8>),
}

impl UndoStep {
    /// Removes or writes the file; answers the bytes it now holds (`None`: no file). A file
    /// already gone is as good as removed.
    fn take(&self, root: &Root) -> Result<Option<&[u8]>, RepositoryError> {
        match self {
            UndoStep::Remove(path) => {
                let file = root.file(path);
                match fs::remove_file(&file) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_error(&file, e)),
                    _ => Ok(None),
                }
            }
            UndoStep::Write(path, bytes) => {
                let file = root.file(path);
                atomic::write_atomic(&file, bytes)
                    .map(|()| Some(bytes.as_slice()))
                    .map_err(|e| io_error(&file, e))
            }
        }
    }

    /// The file it changes.
    fn path(&self) -> &EntryPath {
        match self {
            UndoStep::Remove(path) | UndoStep::Write(path, _) => path,
        }
    }
}

/// Where and how a file differs from what `revision` left, when it does.
fn changed_since(revision: &Revision, now: &FilesNow) -> Option<(EntryPath, String)> {
    let current = |path: &EntryPath| now.get(path).cloned().flatten();
    match (&revision.path_after, &revision.after) {
        (Some(path), Some(hash)) => match current(path) {
            None => Some((path.clone(), "it was removed".to_string())),
            Some(bytes) if &content_hash(&bytes) != hash => Some((path.clone(), "it was edited".to_string())),
            Some(_) => None,
        },
        _ => None,
    }
    .or_else(|| {
        // The path the undo writes back to must be free, unless it is the same file.
        let before_path = revision.path_before.as_ref()?;
        if revision.path_after.as_ref() == Some(before_path) {
            return None;
        }
        current(before_path).map(|_| (before_path.clone(), "another file is there now".to_string()))
    })
}
