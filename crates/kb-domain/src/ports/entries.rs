//! The vault's entry ports: [`EntryReader`] reads entries, [`EntryWriter`] changes them,
//! and [`EntryRepository`] bundles those two with [`EntryCatalogue`] and
//! [`RevisionHistory`] for a user that needs the whole vault. Also the errors they share
//! and what a change gives back.

use chrono::NaiveDate;

use super::catalogue::{EntryCatalogue, NameMatch};
use super::revisions::RevisionHistory;
use crate::category::Category;
use crate::change::{ChangeContext, ChangeSource};
use crate::conflicts::{ConflictKeep, Resolved};
use crate::entry::{Entry, EntryUpdate, NewEntry, UpdateError};
use crate::fields::FieldProblem;
use crate::history::Revision;
use crate::path::{EntryPath, InvalidPath};
use crate::transform::MoveError;

/// Errors of the vault ports ([`EntryReader`], [`EntryWriter`], [`EntryCatalogue`],
/// [`RevisionHistory`]).
#[derive(Debug, thiserror::Error)]
pub enum RepositoryError {
    /// No entry at that path.
    #[error("Entry not found: {0}")]
    NotFound(EntryPath),
    /// The path was refused.
    #[error(transparent)]
    InvalidPath(#[from] InvalidPath),
    /// The path leads outside the vault (a symlink).
    #[error("path {0} leads outside the vault")]
    OutsideVault(String),
    /// The entry is a symbolic link inside the vault: kb reads it but changes only real files.
    #[error("entry {0} is a symbolic link: change the file it points to instead")]
    Linked(EntryPath),
    /// The file exists but its frontmatter does not parse; it is left untouched.
    #[error("entry {path} cannot be read: {reason}")]
    Malformed {
        /// The file.
        path: EntryPath,
        /// What is wrong with it.
        reason: String,
    },
    /// A new entry with a wrong field.
    #[error(transparent)]
    Field(#[from] FieldProblem),
    /// An update that cannot be applied.
    #[error(transparent)]
    Update(#[from] UpdateError),
    /// A move that cannot be made.
    #[error(transparent)]
    Move(#[from] MoveError),
    /// A merge that cannot be made.
    #[error(transparent)]
    Merge(#[from] crate::merge::MergeError),
    /// A create that must not duplicate a name found entries of that category already named
    /// so (the same name or alias, or first words; see [`EntryWriter::create_unique_as`]).
    #[error("an entry of that name exists already: {}", .0.iter().map(|m| m.entry.path.to_string()).collect::<Vec<_>>().join(", "))]
    NameTaken(Vec<NameMatch>),
    /// Revision history could not be read or written.
    #[error(transparent)]
    History(#[from] crate::history::HistoryError),
    /// No revision with that number.
    #[error("revision {0} not found")]
    RevisionNotFound(i64),
    /// A revision of another entry than the one named.
    #[error("revision {revision} is not a revision of {path}")]
    RevisionOfAnother {
        /// The revision.
        revision: i64,
        /// The entry named.
        path: EntryPath,
    },
    /// Nothing kb did is left to undo (in the scope the words name).
    #[error("there is no change to undo{0}")]
    NothingToUndo(&'static str),
    /// An undo that would throw away a later change.
    #[error("cannot undo \"{change}\": {path} changed since ({what}); undo with force to replace it anyway")]
    ChangedSince {
        /// What the undo would revert.
        change: String,
        /// The file that changed.
        path: EntryPath,
        /// How it changed.
        what: String,
    },
    /// A note with no conflict copy beside it was named for a conflict to resolve.
    #[error("{0} has no conflict copy to resolve")]
    NoConflictCopy(EntryPath),
    /// A path named as a sync conflict that is not one.
    #[error("{path} is not a conflict copy: {reason}")]
    NotAConflict {
        /// The path named.
        path: String,
        /// Why not.
        reason: String,
    },
    /// The disk failed.
    #[error("vault i/o error at {path}: {source}")]
    Io {
        /// The file or folder.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// The result of an update.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateOutcome {
    /// The entry as written.
    pub entry: Entry,
    /// The fields changed (`content` for the body).
    pub updated_fields: Vec<String>,
}

/// The result of a move.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveOutcome {
    /// Where it was.
    pub old_path: EntryPath,
    /// The entry where it is now.
    pub entry: Entry,
}

/// The result of a merge.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeOutcome {
    /// The target as it is now, with the sources' notes and list fields.
    pub entry: Entry,
    /// The sources, now removed.
    pub removed: Vec<EntryPath>,
    /// Other entries whose references to a source now point at the target.
    pub references_updated: Vec<EntryPath>,
}

/// Reads entries from the vault.
///
/// Implementations read the file on disk for every `get` (never a cached copy) and refuse
/// paths leading out of the vault.
pub trait EntryReader: Send + Sync {
    /// Reads an entry from disk.
    fn get(&self, path: &EntryPath) -> Result<Entry, RepositoryError>;
    /// Reads an entry from disk with the text of its file, read together (for answering
    /// some of its lines: they are those of the entry answered).
    fn get_with_text(&self, path: &EntryPath) -> Result<(Entry, String), RepositoryError>;
    /// Every readable entry, read from disk (for indexing and checks; not for requests).
    fn all_entries(&self) -> Result<Vec<Entry>, RepositoryError>;
}

/// Changes entries in the vault.
///
/// Implementations apply every `update` and `move_entry` to the file on disk at that
/// moment (never a cached copy), write atomically, serialise changes, and refuse paths
/// leading out of the vault.
pub trait EntryWriter: Send + Sync {
    /// Creates an entry with a fresh id and a unique slug from its name, as asked by `by`.
    fn create_as(&self, new: NewEntry, by: &ChangeContext) -> Result<Entry, RepositoryError>;
    /// Creates an entry as [`EntryWriter::create_as`] does, unless an entry of its
    /// category already has a name related to its name ([`crate::names::relate`]): then
    /// [`RepositoryError::NameTaken`] with those entries, and nothing is written. The check
    /// and the write are one step for writers of this repository, so two captures of one
    /// new person at once file one entry, not two. (Default: no check.)
    fn create_unique_as(&self, new: NewEntry, by: &ChangeContext) -> Result<Entry, RepositoryError> {
        self.create_as(new, by)
    }
    /// Applies an update to the entry as it is on disk now, as asked by `by`.
    fn update_as(
        &self,
        path: &EntryPath,
        update: &EntryUpdate,
        by: &ChangeContext,
    ) -> Result<UpdateOutcome, RepositoryError>;
    /// Moves an entry to another category, transforming its frontmatter, as asked by `by`.
    fn move_entry_as(
        &self,
        path: &EntryPath,
        target: Category,
        by: &ChangeContext,
    ) -> Result<MoveOutcome, RepositoryError>;
    /// Moves a note to exactly `target` (another folder or file name; refused when a file is
    /// there), as asked by `by`. Into another category folder it is adopted as a move into
    /// that category is (frontmatter transformed, an id of kb's); otherwise its text is kept
    /// but for links written from its folder. Links to it follow, as for any move.
    fn move_to_path_as(
        &self,
        path: &EntryPath,
        target: &EntryPath,
        by: &ChangeContext,
    ) -> Result<MoveOutcome, RepositoryError>;
    /// Deletes an entry, as asked by `by`; the revision recording it, when history is kept.
    fn delete_as(&self, path: &EntryPath, by: &ChangeContext) -> Result<Option<Revision>, RepositoryError>;
    /// Resolves the sync conflict of `path` — a conflict copy, or a note with exactly one
    /// copy beside it — keeping `keep` ([`crate::conflicts`]), as one change undo reverts.
    /// A vault that keeps no conflict copies refuses.
    fn resolve_conflict_as(
        &self,
        path: &EntryPath,
        keep: ConflictKeep,
        by: &ChangeContext,
    ) -> Result<Resolved, RepositoryError> {
        let _ = (keep, by);
        Err(RepositoryError::NoConflictCopy(path.clone()))
    }
    /// The conflict copy `path` names: itself when it is one, else the one copy beside the
    /// note at `path` (refused when there is none or more than one). A vault that keeps no
    /// conflict copies refuses.
    fn conflict_copy_for(&self, path: &EntryPath) -> Result<EntryPath, RepositoryError> {
        Err(RepositoryError::NoConflictCopy(path.clone()))
    }
    /// Merges `sources` into `target` as one change, as asked by `by`: the target keeps its
    /// fields, unites its tags and list fields with theirs, gains each source's notes under a
    /// section dated `on`, and the sources are removed (references to them now point at
    /// the target).
    fn merge_as(
        &self,
        target: &EntryPath,
        sources: &[EntryPath],
        on: NaiveDate,
        by: &ChangeContext,
    ) -> Result<MergeOutcome, RepositoryError>;

    /// [`EntryWriter::create_as`] through the API, with no tool or conversation.
    fn create(&self, new: NewEntry) -> Result<Entry, RepositoryError> {
        self.create_as(new, &ChangeContext::from_source(ChangeSource::Api))
    }
    /// [`EntryWriter::update_as`] through the API, with no tool or conversation.
    fn update(&self, path: &EntryPath, update: &EntryUpdate) -> Result<UpdateOutcome, RepositoryError> {
        self.update_as(path, update, &ChangeContext::from_source(ChangeSource::Api))
    }
    /// [`EntryWriter::move_entry_as`] through the API, with no tool or conversation.
    fn move_entry(&self, path: &EntryPath, target: Category) -> Result<MoveOutcome, RepositoryError> {
        self.move_entry_as(path, target, &ChangeContext::from_source(ChangeSource::Api))
    }
    /// [`EntryWriter::delete_as`] through the API, with no tool or conversation.
    fn delete(&self, path: &EntryPath) -> Result<(), RepositoryError> {
        self.delete_as(path, &ChangeContext::from_source(ChangeSource::Api)).map(|_| ())
    }
}

/// The whole vault: reading, writing, the catalogue and revision history together, for a
/// user that needs them all (the tools, as `Arc<dyn EntryRepository>`). Every type with
/// the four ports has it; a user that needs one port takes that port instead.
pub trait EntryRepository: EntryReader + EntryWriter + EntryCatalogue + RevisionHistory {}

impl<T: EntryReader + EntryWriter + EntryCatalogue + RevisionHistory + ?Sized> EntryRepository for T {}
