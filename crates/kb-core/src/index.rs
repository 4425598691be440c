//! Wiring the search index to the vault: the index reads the vault only through the
//! vault's entry files ([`kb_storage::vault::EntryFiles`], the [`kb_domain::VaultFiles`]
//! port), kept in `{vault}/.kb/index`, and held open from the start or from the first
//! search (`SearchHandle`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use kb_domain::{
    ChangeObserver, EmbeddingCoverage, Entry, EntryChange, EntryPath, RelatedEntry, SearchError, SearchIndex,
    SearchQuery, SearchResults,
};
use kb_search::{OpenOptions, TantivyIndex};
use kb_storage::vault::EntryFiles;

use crate::error::CoreError;

/// Opens (rebuilding or catching up as needed) the search index of the existing vault
/// folder `vault_dir` without opening the vault itself: nothing in the vault is created
/// or written but the index (`kb reindex`). The vault leaves out what `exclude` names
/// (`.gitignore` patterns, [`crate::Config::exclude`]).
pub fn open_index(
    vault_dir: &Path,
    exclude: &[String],
    options: OpenOptions,
) -> Result<TantivyIndex, CoreError> {
    open_index_of(EntryFiles::excluding(vault_dir, exclude)?, vault_dir, options)
}

/// Opens the index of the vault at `vault_dir` whose entry files are `files`.
pub(crate) fn open_index_of(
    files: EntryFiles,
    vault_dir: &Path,
    options: OpenOptions,
) -> Result<TantivyIndex, CoreError> {
    Ok(TantivyIndex::open_with(Arc::new(files), &index_dir(vault_dir), options)?)
}

/// Where the index of the vault at `vault_dir` is kept.
fn index_dir(vault_dir: &Path) -> PathBuf {
    vault_dir.join(".kb").join("index")
}

/// Opens the index when it is first needed.
type Opener = Box<dyn Fn() -> Result<Arc<TantivyIndex>, CoreError> + Send + Sync>;

/// The search index as a process holds it: opened at start, or, for a one-shot command
/// that only reads entries (a list, an entry, a digest), when it first searches, so that
/// such a command does not pay for loading the index. Until it is opened the index
/// takes no change: the next process that opens it catches up with the files, as it does
/// with any change made while no kb ran.
pub(crate) struct SearchHandle {
    opened: OnceLock<Arc<TantivyIndex>>,
    /// Whether the index keeps vectors (an embedding model is set): then asking for
    /// related entries opens it, as a search does; without, it never holds any.
    vectors: bool,
    /// Held while opening, so that two threads open it once.
    open: Mutex<Opener>,
}

impl SearchHandle {
    /// The handle of an index opened already.
    pub(crate) fn opened(index: Arc<TantivyIndex>) -> SearchHandle {
        let kept = Arc::clone(&index);
        SearchHandle {
            vectors: index.vector_model().is_some(),
            opened: OnceLock::from(index),
            open: Mutex::new(Box::new(move || Ok(Arc::clone(&kept)))),
        }
    }

    /// The handle of an index `open` opens when it is first needed (again at the next
    /// need when it fails); `vectors` when it keeps vectors.
    pub(crate) fn when_needed(vectors: bool, open: Opener) -> SearchHandle {
        SearchHandle { opened: OnceLock::new(), vectors, open: Mutex::new(open) }
    }

    /// The index, opened now if it is not yet.
    pub(crate) fn get(&self) -> Result<&Arc<TantivyIndex>, CoreError> {
        if let Some(index) = self.opened.get() {
            return Ok(index);
        }
        let open = kb_domain::sync::lock(&self.open);
        // Another thread may have opened it while this one waited.
        if let Some(index) = self.opened.get() {
            return Ok(index);
        }
        let index = open()?;
        tracing::debug!("the search index is opened on first use");
        Ok(self.opened.get_or_init(|| index))
    }

    /// The index, if it is open.
    pub(crate) fn if_opened(&self) -> Option<&Arc<TantivyIndex>> {
        self.opened.get()
    }

    /// [`SearchHandle::get`] for the search port.
    fn index(&self) -> Result<&Arc<TantivyIndex>, SearchError> {
        self.get().map_err(|error| SearchError::index("cannot open the search index", error))
    }
}

impl SearchIndex for SearchHandle {
    fn search(&self, query: &SearchQuery) -> Result<SearchResults, SearchError> {
        self.index()?.search(query)
    }

    fn upsert(&self, entry: &Entry) -> Result<(), SearchError> {
        self.if_opened().map_or(Ok(()), |index| index.upsert(entry))
    }

    fn remove(&self, path: &EntryPath) -> Result<(), SearchError> {
        self.if_opened().map_or(Ok(()), |index| index.remove(path))
    }

    fn related(&self, path: &EntryPath, limit: usize) -> Result<Vec<RelatedEntry>, SearchError> {
        if !self.vectors {
            return Ok(Vec::new());
        }
        self.index()?.related(path, limit)
    }

    fn embedding_coverage(&self) -> Option<EmbeddingCoverage> {
        self.if_opened().and_then(|index| index.embedding_coverage())
    }
}

impl ChangeObserver for SearchHandle {
    fn entry_changed(&self, change: &EntryChange) {
        if let Some(index) = self.if_opened() {
            index.entry_changed(change);
        }
    }

    fn entries_changed(&self, changes: &[EntryChange]) {
        if let Some(index) = self.if_opened() {
            index.entries_changed(changes);
        }
    }

    fn entries_changed_by(&self, changes: &[EntryChange], person: &str) {
        if let Some(index) = self.if_opened() {
            index.entries_changed_by(changes, person);
        }
    }
}
