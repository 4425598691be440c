//! Moving an entry to another category: its frontmatter transformed, a new file placed
//! under a journal (so a crash half-way is finished at the next open), every reference to
//! it pointed at its new path in the same change, and the old file removed.

use std::fs;
use std::path::{Path, PathBuf};

use kb_domain::fields::keys;
use kb_domain::frontmatter::render_document;
use kb_domain::transform::MoveError;
use kb_domain::{
    Category, ChangeContext, Entry, EntryChange, EntryPath, FileChange, Frontmatter, MoveOutcome,
    RepositoryError, Slug, transform_for_move,
};

use super::cache::Cache;
use super::journal::{JournalFile, MoveJournal};
use super::safe_path::io_error;
use super::writes::NewFile;
use super::{Vault, atomic, revisions, scan, with_id};

/// An entry on its way to another folder: read and transformed, nothing written yet.
struct Moving {
    /// The old file's text.
    old_text: String,
    /// Its frontmatter as it is in the new folder.
    frontmatter: Frontmatter,
    /// Its notes.
    body: String,
    /// Its `id` (kept, or given back from history, or new); empty for a note of the
    /// person's that stays outside the category folders (kb gives it none).
    id: String,
    /// The new file's text (links written from its folder are rewritten once its new
    /// path is known).
    document: String,
}

/// Where a move takes a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Destination {
    /// Into a category folder, under a name made from the entry's name by kb's slug rules.
    Category(Category),
    /// To exactly this path (refused when a file is there).
    Path(EntryPath),
}

impl Destination {
    /// The category the note has once moved.
    fn category(&self) -> Category {
        match self {
            Destination::Category(category) => *category,
            Destination::Path(path) => path.category(),
        }
    }
}

impl std::fmt::Display for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Destination::Category(category) => write!(f, "{category}"),
            Destination::Path(path) => write!(f, "{path}"),
        }
    }
}

/// Another entry's file, rewritten so its references lead to the moved entry's new path.
struct Rewrite {
    /// The entry.
    referrer: EntryPath,
    /// Its file.
    file: PathBuf,
    /// Its text now.
    before: String,
    /// Its text with the references pointed at the new path.
    after: String,
}

impl Vault {
    /// Moves the entry at `path` to `target` (see
    /// [`kb_domain::EntryWriter::move_entry_as`]), in the caller's span (it records
    /// `new_path` and `references` there). The move and every reference it rewrites are
    /// recorded in history before the old file or any other file is touched.
    pub(super) fn move_to(
        &self,
        path: &EntryPath,
        target: Destination,
        by: &ChangeContext,
    ) -> Result<MoveOutcome, RepositoryError> {
        let mut state = self.lock();
        let _writing = self.writes.hold();
        let old_file = self.forget_if_missing(&mut state, path, self.root.checked_writable_file(path))?;
        if let Destination::Path(new) = &target {
            if new == path {
                return Err(MoveError::SamePath(new.clone()).into());
            }
            if state.cache.is_taken(new) || fs::symlink_metadata(self.root.file(new)).is_ok() {
                return Err(MoveError::PathTaken(new.clone()).into());
            }
            if self.root.scope().excludes(new.as_str(), false) {
                return Err(MoveError::LeftOut(new.clone()).into());
            }
        }
        let moving = self.moving(path, &target, &old_file)?;
        let mut referrers: Vec<EntryPath> =
            state.cache.referrers_of(path).into_iter().filter(|r| r != path).collect();
        let journal = JournalFile::new(&self.root);
        let old_stamp = scan::stamp_of_path(&self.root, path);
        let before_placing = |new: &EntryPath| {
            journal.write(&MoveJournal {
                old: path.clone(),
                new: new.clone(),
                id: moving.id.clone(),
                referrers: referrers.clone(),
                old_stamp,
            })
        };
        let new_path = match &target {
            Destination::Category(category) => self.place_new(
                &state.cache,
                NewFile::new(*category, &Slug::from_name(&moving.name(path)), moving.document.as_bytes()),
                None,
                before_placing,
            )?,
            Destination::Path(new) => self.place_at(new, moving.document.as_bytes(), before_placing)?,
        };
        // Notes whose [[wikilinks]] lead to the entry (or would lead elsewhere once it
        // moved) are rewritten too; their list depends on the new path.
        for source in state.cache.wikilink_sources(path, &new_path) {
            if !referrers.contains(&source) {
                referrers.push(source);
            }
        }
        let span = tracing::Span::current();
        span.record("new_path", tracing::field::display(&new_path));
        span.record("references", referrers.len());
        // The entry's links to itself, and other entries' references to it, are pointed at
        // the new path, all in memory first.
        let moved_text = state
            .cache
            .retarget_links(path, &moving.document, path, &new_path)
            .unwrap_or_else(|| moving.document.clone());
        let rewrites = self.rewrites(&mut state.cache, &referrers, path, &new_path);
        let recorded = move_record(&moving, path, &new_path, &moved_text, &rewrites);
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
            // The entry stays where it was: the move leaves history.
            self.take_back(&revisions, &[path.clone(), new_path.clone()]);
            return Err(error);
        }
        self.sync_folders(path, &new_path);
        let mut unwritten = Vec::new();
        if moved_text != moving.document
            && let Err(e) = atomic::write_atomic(&self.root.file(&new_path), moved_text.as_bytes())
        {
            tracing::warn!(error = %e, "could not point the moved entry's links to itself at its new path");
            unwritten.push(new_path.clone());
        }
        let shown = if unwritten.is_empty() { &moved_text } else { &moving.document };
        let moved = Entry::from_document(new_path.clone(), shown).unwrap_or(Entry {
            path: new_path.clone(),
            frontmatter: moving.frontmatter,
            body: moving.body,
        });
        state.cache.remove(path);
        state.cache.insert(&moved);
        let mut changes = vec![EntryChange::Upserted(moved.clone()), EntryChange::Removed(path.clone())];
        let unreached = self.write_rewrites(&mut state.cache, &rewrites, &mut changes);
        // A journal kept for references still to update is finished at the next open.
        if unreached.is_empty()
            && let Err(e) = journal.clear()
        {
            tracing::warn!(error = %e, "could not remove the move journal; it is finished at the next open");
        }
        unwritten.extend(unreached);
        // History recorded what those files were to hold: the references not pointed at the
        // new path leave it, and it learns what the files hold instead.
        let revisions = self.take_back_unwritten(revisions, &unwritten);
        self.history.written(by, &revisions);
        self.made(&mut state, &changes, by.person.as_deref());
        Ok(MoveOutcome { old_path: path.clone(), entry: moved })
    }

    /// Reads the entry at `path` (in `old_file`) and makes what it becomes at `target`: in
    /// another category, its frontmatter transformed and an id of kb's; in the same category
    /// or outside the category folders, its text as it is.
    fn moving(
        &self,
        path: &EntryPath,
        target: &Destination,
        old_file: &Path,
    ) -> Result<Moving, RepositoryError> {
        let (entry, old_text) = scan::read_existing_document(old_file, path)?;
        let category = target.category();
        let adopted = matches!(target, Destination::Category(_)) || category != path.category();
        if !adopted || !category.is_folder() {
            // Only the folder changes: the bytes are kept (links written from the note's
            // folder are rewritten once its new path is known).
            let document = old_text.clone();
            let id = entry.id().unwrap_or_default().to_string();
            let Entry { frontmatter, body, .. } = entry;
            return Ok(Moving { old_text, frontmatter, body, id, document });
        }
        let (frontmatter, body) = transform_for_move(&entry, category, self.clock.now())?;
        // A file that lost the id kb gave it (a restore or an undo to a version from
        // before) gets that id back, so its history stays one entry's.
        let (frontmatter, id) = with_id(frontmatter, || {
            self.entry_of_file(path, old_text.as_bytes()).unwrap_or_else(|e| {
                tracing::warn!(error = %e, %path, "could not read history for the moved file's id; it gets a new one");
                None
            })
        });
        let document = render_document(&frontmatter, &body);
        Ok(Moving { old_text, frontmatter, body, id, document })
    }

    /// The files of `referrers` with their references to `old` pointed at `new` (those
    /// that cannot be read, or have nothing to change, are left out).
    fn rewrites(
        &self,
        cache: &mut Cache,
        referrers: &[EntryPath],
        old: &EntryPath,
        new: &EntryPath,
    ) -> Vec<Rewrite> {
        referrers
            .iter()
            .filter_map(|referrer| {
                let file = self.root.checked_writable_file(referrer).ok()?;
                let before = fs::read_to_string(&file).ok()?;
                let after = cache.retarget_links(referrer, &before, old, new)?;
                Some(Rewrite { referrer: referrer.clone(), file, before, after })
            })
            .collect()
    }

    /// Writes the rewritten referrers, keeping the catalogue and `changes` in step; answers
    /// the referrers that could not be written (retried at the next start).
    fn write_rewrites(
        &self,
        cache: &mut Cache,
        rewrites: &[Rewrite],
        changes: &mut Vec<EntryChange>,
    ) -> Vec<EntryPath> {
        let mut unwritten = Vec::new();
        for Rewrite { referrer, file, after, .. } in rewrites {
            match atomic::write_atomic(file, after.as_bytes()) {
                Ok(()) => {
                    if let Ok(entry) = Entry::from_document(referrer.clone(), after) {
                        cache.insert(&entry);
                        changes.push(EntryChange::Upserted(entry));
                    }
                }
                Err(e) => {
                    unwritten.push(referrer.clone());
                    tracing::warn!(error = %e, %referrer, "a reference to the moved entry could not be updated (a Markdown link or a property path is pointed at the next start; a wikilink is left as it is)");
                }
            }
        }
        unwritten
    }

    /// Syncs the two folders of a move. The move has happened: a folder that cannot be
    /// synced is reported, not undone.
    fn sync_folders(&self, from: &EntryPath, to: &EntryPath) {
        for folder in [self.root.folder_of(from), self.root.folder_of(to)] {
            if let Err(e) = atomic::sync_dir(&folder) {
                tracing::warn!(error = %e, folder = %folder.display(), "could not sync a folder after a move");
            }
        }
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

impl Moving {
    /// The entry's name (its `name` field, else the old file's stem), which names the new
    /// file.
    fn name(&self, old: &EntryPath) -> String {
        self.frontmatter.get_str(keys::NAME).map_or_else(|| old.stem().to_string(), str::to_string)
    }
}

/// What history records of a move: the entry's file from `old` to `new` holding
/// `moved_text`, and each rewritten referrer.
fn move_record(
    moving: &Moving,
    old: &EntryPath,
    new: &EntryPath,
    moved_text: &str,
    rewrites: &[Rewrite],
) -> Vec<FileChange> {
    let to = if new.is_directly_in_category() { new.category().to_string() } else { new.to_string() };
    let mut recorded = vec![FileChange {
        entry_id: Some(moving.id.clone()).filter(|id| !id.is_empty()),
        path_before: Some(old.clone()),
        path_after: Some(new.clone()),
        before: Some(moving.old_text.clone().into_bytes()),
        after: Some(moved_text.as_bytes().to_vec()),
        description: format!("Moved {old} to {to}"),
    }];
    for Rewrite { referrer, before, after, .. } in rewrites {
        recorded.push(FileChange {
            entry_id: revisions::entry_id_of(referrer, after.as_bytes()),
            path_before: Some(referrer.clone()),
            path_after: Some(referrer.clone()),
            before: Some(before.clone().into_bytes()),
            after: Some(after.clone().into_bytes()),
            description: format!("Pointed {referrer}'s reference to {old} at {new}"),
        });
    }
    recorded
}
