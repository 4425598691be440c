//! Opening the index: reuse what is on disk and bring it up to date with the vault, or
//! rebuild it from the vault when it is missing, corrupt, from an older schema, or may
//! have lost writes the machine never put on disk (see [`crate::directory`]).
//!
//! A warm open reads only metadata: the stamps (path, mtime, size) of indexed entries come
//! from fast fields, those of the files from a directory walk, and only files whose stamp
//! differs are read, and those modified within two seconds of the last commit (whose
//! stamps cannot tell one version from the next, see [`Stamp::RACY_WINDOW_NS`]), which are
//! indexed again only when their stored document differs from what they give. The meta file
//! `kb-index.json` in the index folder names the schema version; it is written only once a
//! rebuild has committed, so a rebuild cut short is started again at the next open.

use std::collections::HashMap;
use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;

use kb_domain::{EntryPath, Stamp, VaultFiles};
use tantivy::indexer::NoMergePolicy;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Searcher};

use crate::analysis::{SearchLanguage, register};
use crate::directory::{IndexDirectory, Unsynced, lost_writes};
use crate::error::OpenError;
use crate::index::VectorModel;
use crate::index::{Parts, TantivyIndex};
use crate::ingest::{Ingest, ProgressFn};
use crate::presence::Presence;
use crate::schema::{IndexFields, MTIME_FIELD, PATH_FIELD, SCHEMA_VERSION, SIZE_FIELD, build_schema};

/// The file in the index folder naming the schema version.
pub const META_FILE: &str = "kb-index.json";

/// Heap of the writer kept open for kb's own changes: tantivy's smallest (15 MB), because every
/// commit starts a segment whose term table is sized (and cleared) from it, which is
/// most of a small commit's work.
const WRITER_HEAP: usize = 15_000_000;
/// Segments with fewer documents than this are merged as one layer (tantivy's default is
/// 10,000, which puts a vault of ten thousand entries in one layer with the one-document
/// segment of each change, so every few changes re-merged the whole index).
const MERGE_MIN_LAYER_DOCS: u32 = 64;

/// Opens the writer kept for kb's own changes: one thread, the smallest heap, and a merge
/// policy whose merges join segments of like size, so that the work of merging the
/// one-document segments of changes stays in proportion to them, whatever the vault's size.
pub(crate) fn kept_writer(index: &Index) -> tantivy::Result<IndexWriter> {
    let writer: IndexWriter = index.writer_with_num_threads(1, WRITER_HEAP)?;
    let mut policy = tantivy::indexer::LogMergePolicy::default();
    policy.set_min_layer_size(MERGE_MIN_LAYER_DOCS);
    writer.set_merge_policy(Box::new(policy));
    Ok(writer)
}

/// Heap per indexing thread during a rebuild.
const BULK_HEAP_PER_THREAD: usize = 200_000_000;

/// How to open an index.
#[derive(Clone, Default)]
pub struct OpenOptions {
    /// Called with how far a rebuild or a catch-up has come (library code prints nothing itself).
    pub progress: Option<ProgressFn>,
    /// The language of the stems (`KB_LANGUAGE`). An index built for another is rebuilt.
    pub language: SearchLanguage,
    /// The embedding model whose vectors the index keeps beside it (`KB_EMBEDDINGS_MODEL`;
    /// none: no search by meaning).
    pub embeddings: Option<VectorModel>,
}

impl std::fmt::Debug for OpenOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenOptions")
            .field("progress", &self.progress.is_some())
            .field("language", &self.language)
            .field("embeddings", &self.embeddings)
            .finish()
    }
}

/// What bringing the index in line with the vault did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncStats {
    /// Entries indexed that were not before.
    pub added: usize,
    /// Entries read again because their file changed.
    pub updated: usize,
    /// Entries dropped (file gone or no longer a readable entry).
    pub removed: usize,
    /// Files that are not readable entries (skipped).
    pub malformed: usize,
}

/// What opening the index found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenStats {
    /// Why the index was rebuilt from the vault; `None` when the one on disk was reused.
    pub rebuild_reason: Option<String>,
    /// What was read or dropped to match the vault.
    pub sync: SyncStats,
}

impl TantivyIndex {
    /// Opens the index of the vault whose entry files are `files`, kept in `index_dir`
    /// (normally `{vault}/.kb/index`), blocking until it answers for the vault as it is now.
    pub fn open(files: Arc<dyn VaultFiles>, index_dir: &Path) -> Result<TantivyIndex, OpenError> {
        TantivyIndex::open_with(files, index_dir, OpenOptions::default())
    }

    /// [`TantivyIndex::open`] with options (progress reporting).
    pub fn open_with(
        files: Arc<dyn VaultFiles>,
        index_dir: &Path,
        options: OpenOptions,
    ) -> Result<TantivyIndex, OpenError> {
        let root = files.root();
        fs::read_dir(root).map_err(|source| OpenError::Vault { path: root.to_path_buf(), source })?;
        fs::create_dir_all(index_dir).map_err(|source| folder_error(index_dir, source))?;
        let mut this = match open_existing(&files, index_dir, &options)? {
            Reused::Ready(this) => *this,
            Reused::Rebuild { reason, presence } => rebuild(files, index_dir, &options, presence, reason)?,
            // The index on disk opened but could not be brought up to date (a process killed
            // mid-commit can leave it so): it is derived, so it is rebuilt from the vault when
            // no other process is using it.
            Reused::CatchUpFailed(error) => {
                let presence = Presence::join(index_dir).map_err(|source| folder_error(index_dir, source))?;
                if !presence.alone {
                    return Err(error);
                }
                tracing::warn!(%error, "the search index could not catch up with the vault; rebuilding it");
                rebuild(files, index_dir, &options, presence, error.to_string())?
            }
        };
        if let Some(model) = options.embeddings {
            this.keep_vectors(model);
        }
        Ok(this)
    }
}

/// What trying the index on disk came to.
enum Reused {
    /// It is open and up to date.
    Ready(Box<TantivyIndex>),
    /// It cannot be used as it is (`reason`); this process may rebuild it (`presence` alone).
    Rebuild { reason: String, presence: Presence },
    /// It opened, but catching up with the vault failed; this process's hold is let go.
    CatchUpFailed(OpenError),
}

/// Opens the index on disk and, as the owner, catches it up with the vault.
fn open_existing(
    files: &Arc<dyn VaultFiles>,
    index_dir: &Path,
    options: &OpenOptions,
) -> Result<Reused, OpenError> {
    let clock = std::time::Instant::now();
    let presence = Presence::join(index_dir).map_err(|source| folder_error(index_dir, source))?;
    let loaded = catch_unwind(AssertUnwindSafe(|| load_existing(index_dir, options.language)))
        .unwrap_or_else(|_| Err("reading the index failed unexpectedly".to_string()));
    let Loaded { index, reader, stamps, doubted, unsynced } = match loaded {
        Ok(loaded) => loaded,
        // Another process has this index open: what looks unreadable may be its rebuild in
        // progress, and clearing the folder would delete its live segments.
        Err(_) if !presence.alone => return Err(OpenError::Locked { path: index_dir.to_path_buf() }),
        Err(reason) => return Ok(Reused::Rebuild { reason, presence }),
    };
    presence.share().map_err(|source| folder_error(index_dir, source))?;
    let parts = Parts {
        files: Arc::clone(files),
        index_dir: index_dir.to_path_buf(),
        index,
        reader,
        stamps,
        doubted,
        unsynced,
        presence,
        language: options.language,
    };
    let load_ms = clock.elapsed().as_millis();
    let mut this = TantivyIndex::assemble(parts).map_err(|e| tantivy_error(index_dir, e))?;
    let assemble_ms = clock.elapsed().as_millis() - load_ms;
    tracing::debug!(load_ms, assemble_ms, "the search index is open");
    // Only the owner writes; another process that owns the index keeps it current.
    if this.is_owner() {
        match this.reconcile_local(options.progress.as_ref()) {
            Ok((sync, _)) => this.set_open_stats(OpenStats { rebuild_reason: None, sync }),
            Err(e) => {
                let reason = kb_domain::Chain(&e).to_string();
                return Ok(Reused::CatchUpFailed(OpenError::Index { path: index_dir.to_path_buf(), reason }));
            }
        }
    }
    Ok(Reused::Ready(Box::new(this)))
}

/// Clears the index folder and builds the index anew from the vault, holding `presence`
/// alone until it is built.
fn rebuild(
    files: Arc<dyn VaultFiles>,
    index_dir: &Path,
    options: &OpenOptions,
    presence: Presence,
    reason: String,
) -> Result<TantivyIndex, OpenError> {
    let tantivy_error = |e| tantivy_error(index_dir, e);
    let folder_error = |source| folder_error(index_dir, source);
    tracing::info!(%reason, index = %index_dir.display(), "rebuilding the search index from the vault");
    wipe(index_dir).map_err(folder_error)?;
    let directory = IndexDirectory::open(index_dir).map_err(tantivy_error)?;
    let unsynced = directory.unsynced();
    let index =
        Index::create(directory, build_schema(), tantivy::IndexSettings::default()).map_err(tantivy_error)?;
    register(&index, options.language);
    let (stamps, sync) =
        bulk_build(files.as_ref(), &index, options.progress.as_ref()).map_err(tantivy_error)?;
    write_meta(index_dir, options.language).map_err(folder_error)?;
    let reader = make_reader(&index).map_err(tantivy_error)?;
    presence.share().map_err(folder_error)?;
    let parts = Parts {
        files,
        index_dir: index_dir.to_path_buf(),
        index,
        reader,
        stamps,
        doubted: HashMap::new(),
        unsynced,
        presence,
        language: options.language,
    };
    let mut this = TantivyIndex::assemble(parts).map_err(tantivy_error)?;
    this.set_open_stats(OpenStats { rebuild_reason: Some(reason), sync });
    Ok(this)
}

fn folder_error(index_dir: &Path, source: std::io::Error) -> OpenError {
    OpenError::Folder { path: index_dir.to_path_buf(), source }
}

fn tantivy_error(index_dir: &Path, e: tantivy::TantivyError) -> OpenError {
    match e {
        tantivy::TantivyError::LockFailure(..) => OpenError::Locked { path: index_dir.to_path_buf() },
        other => OpenError::Index { path: index_dir.to_path_buf(), reason: other.to_string() },
    }
}

/// An index opened from disk.
struct Loaded {
    index: Index,
    reader: IndexReader,
    /// The stamps of its entries.
    stamps: HashMap<EntryPath, Stamp>,
    /// Those it doubts (see [`forget_racy_stamps`]).
    doubted: HashMap<EntryPath, Stamp>,
    /// What its directory writes unsynced.
    unsynced: Arc<Unsynced>,
}

/// Opens the index on disk if it is there, of this schema version and `language`, and
/// readable.
fn load_existing(dir: &Path, language: SearchLanguage) -> Result<Loaded, String> {
    let meta = fs::read_to_string(dir.join(META_FILE)).map_err(|_| "no index yet".to_string())?;
    let meta =
        serde_json::from_str::<serde_json::Value>(&meta).map_err(|_| format!("{META_FILE} is unreadable"))?;
    let version = meta
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| format!("{META_FILE} is unreadable"))?;
    if version != u64::from(SCHEMA_VERSION) {
        return Err(format!("index has schema version {version}, this kb uses {SCHEMA_VERSION}"));
    }
    let built_for = meta.get("language").and_then(serde_json::Value::as_str).unwrap_or("");
    if built_for != language.name() {
        return Err(format!("index was built for the language {built_for:?}, this kb uses {language}"));
    }
    if let Some(reason) = lost_writes(dir) {
        return Err(reason);
    }
    let directory = IndexDirectory::open(dir).map_err(|e| format!("index cannot be opened: {e}"))?;
    let unsynced = directory.unsynced();
    let index = Index::open(directory).map_err(|e| format!("index cannot be opened: {e}"))?;
    if index.schema() != build_schema() {
        return Err("index schema differs from this kb's".to_string());
    }
    register(&index, language);
    let reader = make_reader(&index).map_err(|e| format!("index cannot be read: {e}"))?;
    let mut stamps = load_stamps(&reader.searcher()).map_err(|e| format!("index cannot be read: {e}"))?;
    let doubted = forget_racy_stamps(dir, &mut stamps);
    Ok(Loaded { index, reader, stamps, doubted, unsynced })
}

/// Forgets the stamps of the entries whose files were modified within [`Stamp::RACY_WINDOW_NS`]
/// of the index's last commit (the time tantivy's `meta.json` was written), so that the
/// catch-up looks at them again: the stamp cannot tell their version apart from a later one,
/// as git's index cannot tell a "racily clean" file. Answers them with the stamps they were
/// indexed with: a file found with that stamp still is compared with its stored document
/// rather than indexed again (kb's own last write is such a file).
fn forget_racy_stamps(dir: &Path, stamps: &mut HashMap<EntryPath, Stamp>) -> HashMap<EntryPath, Stamp> {
    let committed = fs::metadata(dir.join("meta.json"))
        .and_then(|meta| meta.modified())
        .ok()
        .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|since| i64::try_from(since.as_nanos()).ok());
    // With no commit time known, every stamp is doubted.
    let committed = committed.unwrap_or(i64::MIN);
    let mut doubted = HashMap::new();
    for (path, stamp) in stamps.iter_mut() {
        if !stamp.settled_at(committed) {
            doubted.insert(path.clone(), std::mem::replace(stamp, Stamp::NONE));
        }
    }
    doubted
}

/// The stamps of every indexed entry, from fast fields (no stored document is read).
pub(crate) fn load_stamps(searcher: &Searcher) -> tantivy::Result<HashMap<EntryPath, Stamp>> {
    let mut stamps = HashMap::with_capacity(usize::try_from(searcher.num_docs()).unwrap_or(0));
    for segment in searcher.segment_readers() {
        let fast = segment.fast_fields();
        let Some(paths) = fast.str(PATH_FIELD)? else { continue };
        let mtime = fast.i64(MTIME_FIELD)?;
        let size = fast.u64(SIZE_FIELD)?;
        let mut names = Vec::with_capacity(paths.num_terms());
        let mut stream = paths.dictionary().stream()?;
        while stream.advance() {
            names.push(EntryPath::parse(&String::from_utf8_lossy(stream.key())).ok());
        }
        for doc in segment.doc_ids_alive() {
            // Each path is one live document's: its name is taken, not copied.
            let Some(path) =
                paths.term_ords(doc).next().and_then(|ord| names.get_mut(usize::try_from(ord).ok()?)?.take())
            else {
                continue;
            };
            let stamp = Stamp {
                mtime_ns: mtime.first(doc).unwrap_or(Stamp::NONE.mtime_ns),
                size: size.first(doc).unwrap_or(Stamp::NONE.size),
            };
            stamps.insert(path, stamp);
        }
    }
    Ok(stamps)
}

/// Indexes every entry of the vault into a fresh index with a large writer heap.
fn bulk_build(
    files: &dyn VaultFiles,
    index: &Index,
    progress: Option<&ProgressFn>,
) -> tantivy::Result<(HashMap<EntryPath, Stamp>, crate::open::SyncStats)> {
    let fields = IndexFields::from_schema(&index.schema())?;
    let paths: Vec<EntryPath> = files.entry_files().into_iter().map(|(p, _)| p).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
    let mut writer: IndexWriter = index.writer_with_num_threads(threads, BULK_HEAP_PER_THREAD * threads)?;
    // No merging while building: the few large segments a rebuild makes search well as they
    // are, and merging them would double the time (the kept writer merges later, in the
    // background, as it sees fit).
    writer.set_merge_policy(Box::new(NoMergePolicy));
    let ingested = Ingest { writer: &writer, fields: &fields, files, progress }.rebuild(&paths)?;
    writer.commit()?;
    writer.wait_merging_threads()?;
    let sync = SyncStats {
        added: ingested.indexed.len(),
        updated: 0,
        removed: 0,
        malformed: ingested.malformed.len(),
    };
    Ok((ingested.indexed.into_iter().collect(), sync))
}

fn make_reader(index: &Index) -> tantivy::Result<IndexReader> {
    // Commits made by another process reach this one's reader within a second; this
    // process's own commits are reloaded at once.
    index.reader_builder().reload_policy(ReloadPolicy::OnCommitWithDelay).try_into()
}

/// Writes the meta file (atomically: a temp file renamed over it).
fn write_meta(dir: &Path, language: SearchLanguage) -> std::io::Result<()> {
    let tmp = dir.join(format!("{META_FILE}.tmp"));
    let meta = serde_json::json!({ "schema_version": SCHEMA_VERSION, "language": language.name() });
    fs::write(&tmp, format!("{meta}\n"))?;
    fs::rename(&tmp, dir.join(META_FILE))
}

/// Removes the files of a previous index (tantivy's and the meta file), nothing else, so a
/// wrongly given folder never loses a person's files.
fn wipe(dir: &Path) -> std::io::Result<()> {
    for item in fs::read_dir(dir)? {
        let item = item?;
        let name = item.file_name().to_string_lossy().into_owned();
        let segment_file = name.len() > 32 && name.as_bytes()[..32].iter().all(u8::is_ascii_hexdigit);
        let ours = matches!(name.as_str(), "meta.json" | ".managed.json") || name.starts_with(META_FILE);
        if (segment_file || ours) && item.file_type()?.is_file() {
            fs::remove_file(item.path())?;
        }
    }
    Ok(())
}
