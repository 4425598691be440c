//! Moving an entry to another category: its frontmatter transformed, a new file placed
//! under a journal (so a crash half-way is finished at the next open), every reference to
//! it pointed at its new path in the same change, and the old file removed.

use std::fs;
use std::path::{Path, PathBuf};

use kb_domain::fields::keys;
use kb_domain::frontmatter::render_document;
use kb_domain::references::{rebase_own_links, retarget_references};
use kb_domain::{
    Category, ChangeContext, Entry, EntryChange, EntryPath, FileChange, MoveOutcome, RepositoryError, Slug,
    transform_for_move,
};

use super::journal::{JournalFile, MoveJournal};
use super::safe_path::io_error;
use super::writes::NewFile;
use super::{Vault, atomic, revisions, scan, with_id};

impl Vault {
    /// Moves the entry at `path` to `target` (see
    /// [`kb_domain::EntryWriter::move_entry_as`]), in the caller's span (it records
    /// `new_path` and `references` there).
    pub(super) fn move_to(
        &self,
        path: &EntryPath,
        target: Category,
        by: &ChangeContext,
    ) -> Result<MoveOutcome, RepositoryError> {
        let mut state = self.lock();
        let _writing = self.writes.hold();
        let old_file = self.forget_if_missing(&mut state, path, self.root.checked_writable_file(path))?;
        let (entry, old_text) = scan::read_existing_document(&old_file, path)?;
        let (frontmatter, body) = transform_for_move(&entry, target, self.clock.now())?;
        // A file that lost the id kb gave it (a restore or an undo to a version from
        // before) gets that id back, so its history stays one entry's.
        let (frontmatter, id) = with_id(frontmatter, || {
            self.entry_of_file(path, old_text.as_bytes()).unwrap_or_else(|e| {
                tracing::warn!(error = %e, %path, "could not read history for the moved file's id; it gets a new one");
                None
            })
        });
        let name = frontmatter.get_str(keys::NAME).map_or_else(|| path.stem().to_string(), str::to_string);
        // Links written from the entry's own folder must still lead where they did.
        let rendered = render_document(&frontmatter, &body);
        let document = rebase_own_links(&rendered, path, target).unwrap_or(rendered);
        let referrers: Vec<EntryPath> =
            state.cache.referrers_of(path).into_iter().filter(|r| r != path).collect();
        let journal = JournalFile::new(&self.root);
        let old_stamp = scan::stamp_of_path(&self.root, path);
        let new_path = self.place_new(
            &state.cache,
            NewFile::new(target, &Slug::from_name(&name), document.as_bytes()),
            |new| {
                journal.write(&MoveJournal {
                    old: path.clone(),
                    new: new.clone(),
                    id: id.clone(),
                    referrers: referrers.clone(),
                    old_stamp,
                })
            },
        )?;
        let span = tracing::Span::current();
        span.record("new_path", tracing::field::display(&new_path));
        span.record("references", referrers.len());
        // The entry's links to itself, and other entries' references to it, are pointed at
        // the new path: all made in memory, so the move is in history before the old file
        // or any other file is touched.
        let moved_text =
            retarget_references(&new_path, &document, path, &new_path).unwrap_or_else(|| document.clone());
        let rewrites: Vec<(EntryPath, PathBuf, String, String)> = referrers
            .iter()
            .filter_map(|referrer| {
                let file = self.root.checked_writable_file(referrer).ok()?;
                let before = fs::read_to_string(&file).ok()?;
                let after = retarget_references(referrer, &before, path, &new_path)?;
                Some((referrer.clone(), file, before, after))
            })
            .collect();
        let mut recorded = vec![FileChange {
            entry_id: Some(id.clone()),
            path_before: Some(path.clone()),
            path_after: Some(new_path.clone()),
            before: Some(old_text.into_bytes()),
            after: Some(moved_text.clone().into_bytes()),
            description: format!("Moved {path} to {target}"),
        }];
        for (referrer, _, before, after) in &rewrites {
            recorded.push(FileChange {
                entry_id: revisions::entry_id_of(referrer, after.as_bytes()),
                path_before: Some(referrer.clone()),
                path_after: Some(referrer.clone()),
                before: Some(before.clone().into_bytes()),
                after: Some(after.clone().into_bytes()),
                description: format!("Pointed {referrer}'s reference to {path} at {new_path}"),
            });
        }
        let revisions = match self.history.record_first(by, None, recorded) {
            Ok(revisions) => revisions,
            Err(error) => {
                // Not recorded, so not made: the entry stays where it was.
                if fs::remove_file(self.root.file(&new_path)).is_ok() {
                    let _ = journal.clear();
                }
                return Err(error);
            }
        };
        if let Err(error) = self.remove_moved(&old_file, &new_path, &journal) {
            self.observe_after_failure(&[path.clone(), new_path.clone()]);
            return Err(error);
        }
        // The move has happened: a folder that cannot be synced is reported, not undone.
        for folder in [self.root.folder(path.category()), self.root.folder(target)] {
            if let Err(e) = atomic::sync_dir(&folder) {
                tracing::warn!(error = %e, folder = %folder.display(), "could not sync a folder after a move");
            }
        }
        let mut unwritten = Vec::new();
        if moved_text != document
            && let Err(e) = atomic::write_atomic(&self.root.file(&new_path), moved_text.as_bytes())
        {
            tracing::warn!(error = %e, "could not point the moved entry's links to itself at its new path");
            unwritten.push(new_path.clone());
        }
        let shown = if unwritten.is_empty() { &moved_text } else { &document };
        let moved = Entry::from_document(new_path.clone(), shown).unwrap_or(Entry {
            path: new_path.clone(),
            frontmatter,
            body,
        });
        state.cache.remove(path);
        state.cache.insert(&moved);
        let mut changes = vec![EntryChange::Upserted(moved.clone()), EntryChange::Removed(path.clone())];
        let mut all_retargeted = true;
        for (referrer, file, _, after) in &rewrites {
            match atomic::write_atomic(file, after.as_bytes()) {
                Ok(()) => {
                    if let Ok(entry) = Entry::from_document(referrer.clone(), after) {
                        state.cache.insert(&entry);
                        changes.push(EntryChange::Upserted(entry));
                    }
                }
                Err(e) => {
                    all_retargeted = false;
                    unwritten.push(referrer.clone());
                    tracing::warn!(error = %e, %referrer, "a reference to the moved entry could not be updated; it is retried at the next start");
                }
            }
        }
        // A journal kept for references still to update is finished at the next open.
        if all_retargeted && let Err(e) = journal.clear() {
            tracing::warn!(error = %e, "could not remove the move journal; it is finished at the next open");
        }
        // History recorded what those files were to hold: it learns what they hold instead.
        self.observe_after_failure(&unwritten);
        self.history.written(by, &revisions);
        self.changed(&mut state, &changes);
        Ok(MoveOutcome { old_path: path.clone(), entry: moved })
    }

    /// Removes a moved entry's old file once its new one is in place. An old file already
    /// gone (removed by someone else meanwhile) means the move is done; only when the old
    /// file is still there and cannot be removed is the move undone, the new file removed.
    pub(super) fn remove_moved(
        &self,
        old_file: &Path,
        new_path: &EntryPath,
        journal: &JournalFile,
    ) -> Result<(), RepositoryError> {
        let error = match fs::remove_file(old_file) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                tracing::warn!(old = %old_file.display(), "the old file was already gone; the move is done");
                return Ok(());
            }
            Err(e) => e,
        };
        if fs::symlink_metadata(old_file).is_err() {
            return Ok(());
        }
        // Undo: the entry stays where it was, once.
        if fs::remove_file(self.root.file(new_path)).is_ok() {
            let _ = journal.clear();
        }
        Err(io_error(old_file, error))
    }
}
