//! [`TantivyIndex`]: the search port over a tantivy index kept in step with the vault.
//!
//! The process that owns the index (see [`crate::owner`]) holds its one writer: every
//! change is committed and the reader reloaded before the call returns (read-your-writes),
//! or, in a process that lives long, committed in the background while every search waits
//! for what was queued before it that may change its answer (see [`crate::commits`] and
//! [`unseen`]).
//! What is indexed for each entry (its content stamp) is also kept in memory there, so an
//! event about a file kb itself just wrote is recognised and skipped. Any other process
//! sends its changes to the owner and reloads once they are committed; its reader also
//! follows the owner's commits on its own, and before a search it asks the owner to commit
//! whatever is queued (or, when no owner answers, takes the index over and catches up with
//! the vault first).
//!
//! The index's state is in a few parts, each owning its own: [`Handles`] (tantivy's index,
//! the reader and the writer), [`Indexed`] (what is indexed, by stamp), [`OwnerLink`] (the
//! socket the owner answers on, and how the others reach it) and the commit queue. The
//! work is split by concern: applying changes ([`apply`]), following files and the whole
//! vault ([`sync`]), owning the index and reaching its owner ([`owning`]), and searching
//! ([`search`]), and searching by meaning with the vectors kept beside the index
//! ([`semantic`]).

mod apply;
mod fusion;
mod handles;
mod indexed;
mod owning;
mod search;
mod semantic;
mod sync;
mod unseen;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kb_domain::{
    ChangeObserver, EmbeddingCoverage, Entry, EntryChange, EntryLines, EntryPath, RelatedEntry, SearchError,
    SearchIndex, SearchQuery, SearchResults, Stamp, VaultFiles,
};
use tantivy::{Index, IndexReader};

use crate::analysis::SearchLanguage;
use crate::commits::CommitQueue;
use crate::directory::Unsynced;
use crate::open::OpenStats;
use crate::presence::Presence;
use crate::schema::IndexFields;

pub use crate::vectors::store::ProbeCheck;
use handles::Handles;
use indexed::Indexed;
use owning::OwnerLink;
pub use semantic::{EmbeddingWork, VectorModel};
pub(crate) use sync::Reread;
pub(crate) use unseen::Unseen;

/// The search index of one vault (see the crate documentation).
pub struct TantivyIndex {
    /// The vault's entry files (which files are entries is theirs to say).
    files: Arc<dyn VaultFiles>,
    /// The folder holding the index.
    index_dir: PathBuf,
    /// The schema's fields.
    fields: IndexFields,
    /// The language its stems are in.
    language: SearchLanguage,
    /// Tantivy's index, with this process's reader and (in the owner) writer.
    handles: Handles,
    /// What is indexed, and what an earlier owner indexed that is yet to be reported.
    indexed: Indexed,
    /// How the owner answers the other processes, and how they reach it.
    link: OwnerLink,
    /// Changes waiting for the background commit (see [`crate::commits`]).
    queue: Arc<CommitQueue>,
    /// What opening the index found and did.
    open_stats: OpenStats,
    /// What this process wrote to the index folder unsynced, for its clean close.
    unsynced: Arc<Unsynced>,
    /// The vectors kept beside the index, with an embedding model.
    vectors: Option<semantic::Vectors>,
    /// This process's shared hold on the index folder (see `presence`).
    _presence: Presence,
}

/// What an opened index is made of (see [`TantivyIndex::assemble`]).
pub(crate) struct Parts {
    /// The vault's entry files.
    pub(crate) files: Arc<dyn VaultFiles>,
    /// The folder holding the index.
    pub(crate) index_dir: PathBuf,
    /// Tantivy's index.
    pub(crate) index: Index,
    /// A reader of it.
    pub(crate) reader: IndexReader,
    /// The stamps of the indexed entries.
    pub(crate) stamps: HashMap<EntryPath, Stamp>,
    /// Entries whose stamps above are forgotten as racy, with the stamps they were indexed
    /// with (see [`Indexed`]).
    pub(crate) doubted: HashMap<EntryPath, Stamp>,
    /// What the index's directory writes unsynced.
    pub(crate) unsynced: Arc<Unsynced>,
    /// This process's hold on the index folder.
    pub(crate) presence: Presence,
    /// The language of the stems.
    pub(crate) language: SearchLanguage,
}

impl Drop for TantivyIndex {
    fn drop(&mut self) {
        self.close();
    }
}

impl TantivyIndex {
    /// Indexes what is queued, and the owner lets merges finish, gives up the writer and
    /// puts the whole index on disk (see the `directory` module), so the next start after a
    /// machine restart need not rebuild it. Done when the index is dropped; a process about
    /// to exit may call it and skip freeing the index. Searches still answer after it;
    /// changes go to the next owner.
    pub fn close(&self) {
        // Stop answering before the writer goes: once it is released another process may
        // take over and bind its own socket.
        self.link.stop_server();
        let queued = self.queue.take_all();
        if !queued.changes.is_empty()
            && let Err(error) = self.commit_queued_batch(queued.changes)
        {
            tracing::warn!(%error, "the last changes could not be indexed; the next start catches up");
        }
        let Some(writer) = self.handles.release_writer() else { return };
        if let Err(error) = writer.wait_merging_threads() {
            tracing::warn!(%error, "the search index's merges did not finish");
        }
        if let Err(error) = crate::directory::sync_all(&self.index_dir, &self.unsynced) {
            tracing::warn!(%error, "the search index could not be put on disk; it is rebuilt if the machine stops first");
        }
    }
}

impl std::fmt::Debug for TantivyIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TantivyIndex")
            .field("root", &self.files.root())
            .field("index_dir", &self.index_dir)
            .finish()
    }
}

/// One change to apply to the index.
#[derive(Debug)]
pub(crate) enum Change {
    /// Index this entry, read from a file with this stamp, laid out in lines as these
    /// say (`None`: as the file says when the change is indexed, if it holds the entry).
    Upsert(Entry, Stamp, Option<EntryLines>),
    /// Drop the entry at this path.
    Remove(EntryPath),
}

impl Change {
    /// The entry path the change is about.
    fn path(&self) -> &EntryPath {
        match self {
            Change::Upsert(entry, ..) => &entry.path,
            Change::Remove(path) => path,
        }
    }
}

impl TantivyIndex {
    /// Puts an opened index together; the first process to take the writer owns it.
    pub(crate) fn assemble(parts: Parts) -> tantivy::Result<TantivyIndex> {
        let fields = IndexFields::from_schema(&parts.index.schema())?;
        let handles = Handles::new(parts.index, parts.reader)?;
        Ok(TantivyIndex {
            files: parts.files,
            link: OwnerLink::new(&parts.index_dir),
            index_dir: parts.index_dir,
            fields,
            language: parts.language,
            handles,
            indexed: Indexed::new(parts.stamps, parts.doubted),
            queue: Arc::default(),
            open_stats: OpenStats::default(),
            unsynced: parts.unsynced,
            vectors: None,
            _presence: parts.presence,
        })
    }

    /// Records what opening the index found and did.
    pub(crate) fn set_open_stats(&mut self, stats: OpenStats) {
        self.open_stats = stats;
    }

    /// The folder holding the index.
    pub fn index_dir(&self) -> &Path {
        &self.index_dir
    }

    /// The vault this index follows (canonical).
    pub fn vault_root(&self) -> &Path {
        self.files.root()
    }

    /// The vault's entry files.
    pub(crate) fn files(&self) -> &Arc<dyn VaultFiles> {
        &self.files
    }

    /// How many entries are indexed (as this process's reader sees the index).
    pub fn len(&self) -> usize {
        self.queue.wait_for_queued();
        usize::try_from(self.handles.searcher().num_docs()).unwrap_or(usize::MAX)
    }

    /// Whether no entry is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether this process holds the index's writer (the others send it their changes).
    pub fn is_owner(&self) -> bool {
        self.handles.is_owner()
    }

    /// What opening the index found and did.
    pub fn open_stats(&self) -> &OpenStats {
        &self.open_stats
    }

    /// How many commits this process has made to the index since it opened it: one per
    /// change kb makes, per batch of outside edits, per catch-up, and (in the owner) per
    /// request another process sends, however many entries each holds. A process that
    /// does not own the index makes none (the owner commits for it); a rebuild at open is
    /// not counted. For tests and diagnostics.
    pub fn commit_count(&self) -> u64 {
        self.handles.commit_count()
    }

    /// Whether the index answers for the vault as it is: `Err` with the reason when the
    /// last change could not be committed (search misses it until a commit succeeds; the
    /// next start, or `kb reindex`, catches up).
    pub fn health(&self) -> Result<(), String> {
        self.handles.health()
    }

    /// Waits until every change this process queued before the call is committed (or its
    /// commit failed).
    pub(crate) fn wait_for_queued(&self) {
        self.queue.wait_for_queued();
    }
}

impl SearchIndex for TantivyIndex {
    /// Every word of the query must match, exactly, by its stem, or (the last word of a
    /// search-as-you-type query) by its beginning; quoted words match exactly and quoted
    /// phrases as phrases. Best first; names and tags first among matches. When nothing
    /// matches, one typo-tolerant retry (one edit per term of three or more characters)
    /// answers, marked `fuzzy`.
    #[tracing::instrument(level = "debug", skip(self), fields(query = %query.text))]
    fn search(&self, query: &SearchQuery) -> Result<SearchResults, SearchError> {
        self.search_in_mode(query)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(path = %entry.path))]
    fn upsert(&self, entry: &Entry) -> Result<(), SearchError> {
        let stamp = self.files.stamp(&entry.path).unwrap_or(Stamp::NONE);
        self.apply(vec![Change::Upsert(entry.clone(), stamp, None)])
    }

    #[tracing::instrument(level = "debug", skip(self))]
    fn remove(&self, path: &EntryPath) -> Result<(), SearchError> {
        self.apply(vec![Change::Remove(path.clone())])
    }

    fn related(&self, path: &EntryPath, limit: usize) -> Result<Vec<RelatedEntry>, SearchError> {
        self.related_to(path, limit)
    }

    fn embedding_coverage(&self) -> Option<EmbeddingCoverage> {
        self.coverage().unwrap_or_else(|error| {
            tracing::warn!(%error, "the vectors could not be read");
            None
        })
    }
}

impl ChangeObserver for TantivyIndex {
    /// Keeps the index in step with a change kb made; a failure is logged (the vault is
    /// the truth, and the next start reconciles).
    fn entry_changed(&self, change: &EntryChange) {
        self.entries_changed(std::slice::from_ref(change));
    }

    /// Applies the changes of one vault operation in one commit.
    fn entries_changed(&self, changes: &[EntryChange]) {
        self.follow(changes, None);
    }

    /// Applies the changes of one vault operation that `person` asked for in one commit:
    /// their searches wait for it, other people's need not: it shows in theirs once committed.
    fn entries_changed_by(&self, changes: &[EntryChange], person: &str) {
        self.follow(changes, Some(person));
    }
}

impl TantivyIndex {
    /// Applies the changes of one vault operation, asked for by `person` (`None`: no one
    /// in particular), logging a failure.
    fn follow(&self, changes: &[EntryChange], person: Option<&str>) {
        let changes = changes
            .iter()
            .map(|change| match change {
                EntryChange::Upserted(entry) => {
                    let stamp = self.files.stamp(&entry.path).unwrap_or(Stamp::NONE);
                    Change::Upsert(entry.clone(), stamp, None)
                }
                EntryChange::Removed(path) => Change::Remove(path.clone()),
            })
            .collect();
        if let Err(error) = self.apply_by(changes, person) {
            tracing::error!(%error, "search index could not follow a vault change");
        }
    }
}
