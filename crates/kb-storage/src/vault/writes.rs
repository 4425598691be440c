//! The vault's [`EntryWriter`]: creating, updating, moving, deleting and merging entries.
//! Each change takes the main lock and the write lock shared with other kb processes,
//! reads the file on disk at that moment, is recorded in history (before, when it replaces
//! or removes a file), written atomically, and then told to the cache, the entry list file
//! and the observers.

use std::fs;
use std::path::PathBuf;

use chrono::NaiveDate;
use kb_domain::frontmatter::render_document;
use kb_domain::{
    Category, ChangeContext, Entry, EntryChange, EntryId, EntryPath, EntryUpdate, EntryWriter, FileChange,
    MergeOutcome, MoveOutcome, NameMatch, NewEntry, RepositoryError, Revision, Slug, UpdateOutcome,
};

use super::atomic::{self, Prepared};
use super::cache::Cache;
use super::reread::Notify;
use super::safe_path::io_error;
use super::{State, Vault, scan};

/// How many collision suffixes are tried before giving up on a slug.
pub(super) const MAX_SUFFIX: u32 = 100_000;

/// Whether a new entry may share its name with an entry of its category.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Namesakes {
    /// It may (a plain create).
    Allowed,
    /// It may not: the create is refused with the entries of related names.
    Refused,
}

/// A file to create: its category, the slug its name gives, and its bytes.
#[derive(Debug, Clone, Copy)]
pub(super) struct NewFile<'a> {
    category: Category,
    slug: &'a Slug,
    bytes: &'a [u8],
}

impl<'a> NewFile<'a> {
    /// The file of `bytes` in `category`, named after `slug`.
    pub(super) fn new(category: Category, slug: &'a Slug, bytes: &'a [u8]) -> NewFile<'a> {
        NewFile { category, slug, bytes }
    }
}

impl Vault {
    /// `found`, and when it says the entry is not there, the entry forgotten too: another
    /// kb process may have moved or deleted it a moment ago, before this one saw the change.
    pub(super) fn forget_if_missing(
        &self,
        state: &mut State,
        path: &EntryPath,
        found: Result<PathBuf, RepositoryError>,
    ) -> Result<PathBuf, RepositoryError> {
        if matches!(found, Err(RepositoryError::NotFound(_))) && state.cache.remove(path) {
            self.sweeps.touch();
            self.changed(state, &[EntryChange::Removed(path.clone())]);
        }
        found
    }

    /// Creates the new file in its category under its slug, or the first free `slug-2`,
    /// `slug-3`, … . `before` runs just before each attempt (the move journal).
    pub(super) fn place_new(
        &self,
        cache: &Cache,
        new: NewFile<'_>,
        mut prepared: Option<&mut Prepared>,
        mut before: impl FnMut(&EntryPath) -> Result<(), RepositoryError>,
    ) -> Result<EntryPath, RepositoryError> {
        let NewFile { category, slug, bytes } = new;
        self.new_files_folder(category, slug)?;
        for n in 1..=MAX_SUFFIX {
            let candidate = if n == 1 { slug.clone() } else { slug.with_suffix(n) };
            let path = EntryPath::for_slug(category, &candidate);
            let file = self.root.file(&path);
            if cache.is_taken(&path) || fs::symlink_metadata(&file).is_ok() {
                continue;
            }
            before(&path)?;
            let created = match prepared.as_deref_mut() {
                Some(prepared) => prepared.create_new(&file),
                None => atomic::create_new(&file, bytes),
            };
            if created.map_err(|e| io_error(&file, e))? {
                return Ok(path);
            }
        }
        let folder = self.root.folder(category);
        Err(io_error(
            &folder,
            std::io::Error::new(std::io::ErrorKind::AlreadyExists, format!("no free name for slug {slug}")),
        ))
    }

    /// The folder of `category`, where a new file named after `slug` goes: made again when
    /// it was deleted while kb runs, and checked to be the vault's own.
    pub(super) fn new_files_folder(
        &self,
        category: Category,
        slug: &Slug,
    ) -> Result<PathBuf, RepositoryError> {
        if !category.is_folder() {
            // Nothing is filed outside the category folders: a note of the person's is
            // placed at its own path (see `place_at`).
            return Err(RepositoryError::InvalidPath(kb_domain::InvalidPath::WrongFolder(slug.to_string())));
        }
        let folder = self.root.folder(category);
        fs::create_dir_all(&folder).map_err(|e| io_error(&folder, e))?;
        self.root.checked_folder(category)?;
        Ok(folder)
    }

    /// Creates the new file at exactly `path` (its folders made when needed); refused when
    /// a file is there. `before` runs just before (the move journal).
    pub(super) fn place_at(
        &self,
        path: &EntryPath,
        bytes: &[u8],
        before: impl FnOnce(&EntryPath) -> Result<(), RepositoryError>,
    ) -> Result<EntryPath, RepositoryError> {
        let folder = self.root.folder_of(path);
        fs::create_dir_all(&folder).map_err(|e| io_error(&folder, e))?;
        if !self.root.is_inside(&folder) {
            return Err(RepositoryError::OutsideVault(path.folder().to_string()));
        }
        before(path)?;
        let file = self.root.file(path);
        if atomic::create_new(&file, bytes).map_err(|e| io_error(&file, e))? {
            Ok(path.clone())
        } else {
            Err(kb_domain::transform::MoveError::PathTaken(path.clone()).into())
        }
    }

    /// Creates an entry; when `namesakes` refuses them, only when no entry of its category
    /// has a related name (checked under the same locks as the write).
    fn create_entry(
        &self,
        new: NewEntry,
        by: &ChangeContext,
        namesakes: Namesakes,
    ) -> Result<Entry, RepositoryError> {
        let id = EntryId::generate();
        let frontmatter = new.frontmatter(&id, self.clock.now())?;
        let slug = Slug::from_name(&new.name);
        let document = render_document(&frontmatter, &new.body);
        // The bytes are written and synced before the locks are taken: the other changes
        // to the vault wait only for this one to take its name and be recorded.
        let folder = self.new_files_folder(new.category, &slug)?;
        let mut prepared = Prepared::write(&folder, document.as_bytes()).map_err(|e| io_error(&folder, e))?;
        let mut state = self.lock();
        let writing = self.writes.hold();
        if namesakes == Namesakes::Refused {
            // A file of this name written a moment ago by another kb process reaches this
            // cache only through the watcher: read it now, so it counts as a namesake.
            let own = EntryPath::for_slug(new.category, &slug);
            if !state.cache.is_taken(&own) && fs::symlink_metadata(self.root.file(&own)).is_ok() {
                let mut observed = Vec::new();
                if let Err(e) = self.reread_observed(&mut state, &own, Notify::Observers, &mut observed) {
                    tracing::warn!(error = %e, path = %own, "a file of the same name could not be read");
                }
                self.history.observe(observed);
            }
            let taken: Vec<NameMatch> = state
                .cache
                .find_by_name(&new.name)
                .into_iter()
                .filter(|m| m.entry.category == new.category)
                .collect();
            if !taken.is_empty() {
                return Err(RepositoryError::NameTaken(taken));
            }
        }
        let path = self.place_new(
            &state.cache,
            NewFile::new(new.category, &slug, document.as_bytes()),
            Some(&mut prepared),
            |_| Ok(()),
        )?;
        tracing::Span::current().record("path", tracing::field::display(&path));
        // Recorded in turn: the next change starts while this one's history is written, and
        // no other process changes an entry, or records what it finds changed, before this
        // history is in (see `WriteLock`).
        let recording = self.history.record_in_turn(
            by,
            vec![FileChange {
                entry_id: Some(id.as_str().to_string()),
                path_before: None,
                path_after: Some(path.clone()),
                before: None,
                after: Some(document.into_bytes()),
                description: format!("Captured \"{}\" in {}", new.name.trim(), new.category),
            }],
        );
        let entry = Entry { path, frontmatter, body: new.body };
        state.cache.insert(&entry);
        self.made(&mut state, &[EntryChange::Upserted(entry.clone())], by.person.as_deref());
        let held = writing.keep_until_recorded();
        drop(state);
        // The new name outlives a power cut before the capture answers. The file is whole
        // and recorded whatever this says, so a failure is logged: an error would have the
        // person capture it again, as a second entry.
        if let Err(error) = prepared.sync_folder() {
            tracing::warn!(%error, path = %entry.path, "a new entry's folder could not be synced");
        }
        recording.wait();
        drop(held);
        Ok(entry)
    }
}

impl EntryWriter for Vault {
    #[tracing::instrument(skip_all, fields(category = %new.category, path))]
    fn create_as(&self, new: NewEntry, by: &ChangeContext) -> Result<Entry, RepositoryError> {
        self.create_entry(new, by, Namesakes::Allowed)
    }

    #[tracing::instrument(skip_all, fields(category = %new.category, path))]
    fn create_unique_as(&self, new: NewEntry, by: &ChangeContext) -> Result<Entry, RepositoryError> {
        self.create_entry(new, by, Namesakes::Refused)
    }

    #[tracing::instrument(skip_all, fields(path = %path))]
    fn update_as(
        &self,
        path: &EntryPath,
        update: &EntryUpdate,
        by: &ChangeContext,
    ) -> Result<UpdateOutcome, RepositoryError> {
        let mut state = self.lock();
        let _writing = self.writes.hold();
        let file = self.forget_if_missing(&mut state, path, self.root.checked_writable_file(path))?;
        // The new text is made from the file's own: only the lines the update sets change.
        let (current, text) = scan::read_existing_document(&file, path)?;
        let updated = update.apply_to_document(&current, &text, self.clock.now())?;
        let (entry, updated_fields) = (updated.entry, updated.updated_fields);
        // The bytes replaced are in history before they are replaced.
        let recorded = self.history.record_first(
            by,
            None,
            vec![FileChange {
                entry_id: entry.id().map(str::to_string),
                path_before: Some(path.clone()),
                path_after: Some(path.clone()),
                before: Some(text.into_bytes()),
                after: Some(updated.text.as_bytes().to_vec()),
                description: format!("Updated {} of {path}", updated_fields.join(", ")),
            }],
        )?;
        if let Err(e) = atomic::write_atomic(&file, updated.text.as_bytes()) {
            self.take_back(&recorded, std::slice::from_ref(path));
            return Err(io_error(&file, e));
        }
        self.history.written(by, &recorded);
        state.cache.insert(&entry);
        self.made(&mut state, &[EntryChange::Upserted(entry.clone())], by.person.as_deref());
        Ok(UpdateOutcome { entry, updated_fields })
    }

    #[tracing::instrument(skip_all, fields(path = %path, target = %target, new_path, references))]
    fn move_entry_as(
        &self,
        path: &EntryPath,
        target: Category,
        by: &ChangeContext,
    ) -> Result<MoveOutcome, RepositoryError> {
        self.move_to(path, super::moves::Destination::Category(target), by)
    }

    #[tracing::instrument(skip_all, fields(path = %path, target = %target, new_path, references))]
    fn move_to_path_as(
        &self,
        path: &EntryPath,
        target: &EntryPath,
        by: &ChangeContext,
    ) -> Result<MoveOutcome, RepositoryError> {
        self.move_to(path, super::moves::Destination::Path(target.clone()), by)
    }

    #[tracing::instrument(skip_all, fields(path = %path))]
    fn resolve_conflict_as(
        &self,
        path: &EntryPath,
        keep: kb_domain::conflicts::ConflictKeep,
        by: &ChangeContext,
    ) -> Result<kb_domain::conflicts::Resolved, RepositoryError> {
        let copy = self.conflict_copy_of(path)?;
        self.resolve_conflict(&copy, keep, by)
    }

    fn conflict_copy_for(&self, path: &EntryPath) -> Result<EntryPath, RepositoryError> {
        self.conflict_copy_of(path)
    }

    fn delete_as(&self, path: &EntryPath, by: &ChangeContext) -> Result<Option<Revision>, RepositoryError> {
        let mut state = self.lock();
        let _writing = self.writes.hold();
        let file = self.forget_if_missing(&mut state, path, self.root.checked_file(path))?;
        // A malformed file is refused here: kb never deletes what it cannot read.
        let (entry, before) = scan::read_existing_document(&file, path)?;
        let kept = self.kept_files_in(&before);
        // The file is in history before it is removed: a delete that cannot be recorded
        // is not made.
        let recorded = self.history.record_first(
            by,
            None,
            vec![FileChange {
                entry_id: entry.id().map(str::to_string),
                path_before: Some(path.clone()),
                path_after: None,
                before: Some(before.into_bytes()),
                after: None,
                description: format!("Deleted {path}"),
            }],
        )?;
        if let Err(e) = fs::remove_file(&file) {
            self.take_back(&recorded, std::slice::from_ref(path));
            return Err(io_error(&file, e));
        }
        let folder = self.root.folder_of(path);
        if let Err(e) = atomic::sync_dir(&folder) {
            tracing::warn!(error = %e, folder = %folder.display(), "could not sync a folder after a delete");
        }
        self.history.written(by, &recorded);
        let revision = recorded.into_iter().next();
        state.cache.remove(path);
        self.trash_unlinked(&mut state, path, &kept);
        self.made(&mut state, &[EntryChange::Removed(path.clone())], by.person.as_deref());
        Ok(revision)
    }

    fn merge_as(
        &self,
        target: &EntryPath,
        sources: &[EntryPath],
        on: NaiveDate,
        by: &ChangeContext,
    ) -> Result<MergeOutcome, RepositoryError> {
        self.merge(target, sources, on, by)
    }
}
