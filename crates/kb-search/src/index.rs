//! [`TantivyIndex`]: the search port over a tantivy index kept in step with the vault.
//!
//! The process that owns the index (see [`crate::owner`]) holds its one writer: every
//! change is committed and the reader reloaded before the call returns (read-your-writes),
//! or, in a process that lives long, committed in the background while every search waits
//! for what was queued before it (see [`crate::commits`]).
//! What is indexed for each entry (its content stamp) is also kept in memory there, so an
//! event about a file kb itself just wrote is recognised and skipped. Any other process
//! sends its changes to the owner and reloads once they are committed; its reader also
//! follows the owner's commits on its own, and before a search it asks the owner to commit
//! whatever is queued (or, when no owner answers, takes the index over and catches up with
//! the vault first).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use kb_domain::{
    ChangeObserver, Entry, EntryChange, EntryPath, FileRead, SearchError, SearchHit, SearchIndex,
    SearchQuery, SearchResults, Stamp, VaultFiles,
};

use tantivy::{Index, IndexReader, IndexWriter, Searcher, TantivyDocument, Term};

use crate::analysis::{SearchLanguage, fuzzy_distance, query_parts, stems};
use crate::commits::CommitQueue;
use crate::document::{StoredHit, to_document};
use crate::error::index_error;
use crate::open::{OpenStats, SyncStats, kept_writer, load_stamps};
use crate::owner::{self, Answer, OnForwarded, OwnerServer, Request, SendError};
use crate::query::{self, Matching};
use crate::rank;
use crate::schema::IndexFields;
use crate::snippet::{TermMatcher, best_passage};

/// The search index of one vault (see the crate documentation).
pub struct TantivyIndex {
    /// The vault's entry files (which files are entries is theirs to say).
    pub(crate) files: Arc<dyn VaultFiles>,
    pub(crate) index_dir: PathBuf,
    pub(crate) fields: IndexFields,
    pub(crate) reader: IndexReader,
    /// The writer, in the process that owns the index; `None` in the others.
    pub(crate) writer: Mutex<Option<IndexWriter>>,
    /// Whether `writer` holds one, known without waiting for a commit that holds it.
    pub(crate) owner: AtomicBool,
    /// Where the owner answers the other processes.
    pub(crate) sockets: Vec<owner::SocketPlace>,
    /// Whether a search here waited in vain for a process that holds the writer but does
    /// not answer (see [`TantivyIndex::read_every_earlier_change`]).
    pub(crate) owner_silent: AtomicBool,
    /// Set by [`TantivyIndex::share_writes`]: how to answer other processes once owner.
    pub(crate) sharing: OnceLock<Sharing>,
    /// The listener, while this process owns the index and shares it.
    pub(crate) server: Mutex<Option<OwnerServer>>,
    /// What is indexed: the stamp of the file each entry was read from.
    pub(crate) stamps: Mutex<HashMap<EntryPath, Stamp>>,
    /// Entries another owner indexed (or dropped) while this process did not own the
    /// index, found on taking it over: this process's view of the vault may not have seen
    /// them change yet (their file events can come after the takeover, when the index has
    /// them already), so the next sync that looks at one reports it changed, once.
    pub(crate) unreported: Mutex<HashSet<EntryPath>>,
    pub(crate) open_stats: OpenStats,
    /// Why the last commit failed, until one succeeds again.
    pub(crate) last_failure: Mutex<Option<String>>,
    /// Commits this process made (see [`TantivyIndex::commit_count`]).
    pub(crate) commits: AtomicU64,
    /// This process's shared hold on the index folder (see `presence`).
    pub(crate) _presence: crate::presence::Presence,
    /// The index itself (a writer is made from it on taking ownership over).
    pub(crate) index: Index,
    /// The language its stems are in.
    pub(crate) language: SearchLanguage,
    /// Changes waiting for the background commit (see [`crate::commits`]).
    pub(crate) queue: Arc<CommitQueue>,
}

impl Drop for TantivyIndex {
    /// The owner lets merges finish and puts the whole index on disk (see
    /// the `directory` module), so the next start after a machine restart need not rebuild it.
    fn drop(&mut self) {
        // Stop answering before the writer goes: once it is released another process may
        // take over and bind its own socket.
        drop(self.server.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner).take());
        let queued = self.queue.take_all();
        if !queued.changes.is_empty()
            && let Err(error) = self.commit_changes(queued.changes, false)
        {
            tracing::warn!(%error, "the last changes could not be indexed; the next start catches up");
        }
        let writer = self.writer.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        self.owner.store(false, Ordering::Release);
        let Some(writer) = writer else { return };
        if let Err(error) = writer.wait_merging_threads() {
            tracing::warn!(%error, "the search index's merges did not finish");
        }
        if let Err(error) = crate::directory::sync_all(&self.index_dir) {
            tracing::warn!(%error, "the search index could not be put on disk; it is rebuilt if the machine stops first");
        }
    }
}

/// How an owning process answers the others.
pub(crate) struct Sharing {
    this: Weak<TantivyIndex>,
    on_forwarded: Option<OnForwarded>,
}

/// How long a process waits for an owner to appear (one that is taking over) before its
/// write fails.
const OWNER_WAIT: Duration = Duration::from_secs(10);

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
    /// Index this entry, read from a file with this stamp.
    Upsert(Entry, Stamp),
    /// Drop the entry at this path.
    Remove(EntryPath),
}

impl Change {
    fn path(&self) -> &EntryPath {
        match self {
            Change::Upsert(entry, _) => &entry.path,
            Change::Remove(path) => path,
        }
    }
}

pub(crate) use kb_domain::sync::lock;

impl TantivyIndex {
    /// The vault this index follows (canonical).
    pub fn vault_root(&self) -> &Path {
        self.files.root()
    }

    /// How many entries are indexed (as this process's reader sees the index).
    pub fn len(&self) -> usize {
        self.queue.wait_for_queued();
        usize::try_from(self.reader.searcher().num_docs()).unwrap_or(usize::MAX)
    }

    /// Whether this process holds the index's writer (the others send it their changes).
    pub fn is_owner(&self) -> bool {
        self.owner.load(Ordering::Acquire)
    }

    /// Lets the other kb processes on this vault send their changes here while this process
    /// owns the index (now, or after taking it over later); `on_forwarded` is called with
    /// the entries they changed once they are indexed. Call once, after wrapping the index
    /// in an [`Arc`].
    pub fn share_writes(self: &Arc<Self>, on_forwarded: Option<OnForwarded>) {
        let sharing = Sharing { this: Arc::downgrade(self), on_forwarded };
        if self.sharing.set(sharing).is_ok() && self.is_owner() {
            self.start_server();
        }
    }

    fn start_server(&self) {
        let Some(sharing) = self.sharing.get() else { return };
        let mut server = lock(&self.server);
        if server.is_some() {
            return;
        }
        match OwnerServer::start(sharing.this.clone(), &self.sockets, sharing.on_forwarded.clone()) {
            Ok(started) => *server = Some(started),
            Err(error) => tracing::warn!(
                %error,
                index = %self.index_dir.display(),
                "other kb processes cannot send changes to this one; they wait for it to exit"
            ),
        }
    }

    /// Takes the writer over when no process holds it: `Ok(false)` when another does.
    /// The new owner catches up with the vault (the old one may have died mid-change)
    /// and starts answering the others.
    fn take_over(&self) -> Result<bool, SearchError> {
        {
            let mut slot = lock(&self.writer);
            if slot.is_some() {
                return Ok(true);
            }
            match kept_writer(&self.index) {
                Ok(writer) => {
                    *slot = Some(writer);
                    self.owner.store(true, Ordering::Release);
                }
                Err(tantivy::TantivyError::LockFailure(..)) => return Ok(false),
                Err(e) => return Err(index_error(e)),
            }
        }
        tracing::info!("taking over the search index from a kb process that is gone");
        self.reader.reload().map_err(index_error)?;
        let indexed = load_stamps(&self.reader.searcher()).map_err(index_error)?;
        {
            let mut stamps = lock(&self.stamps);
            let changed = indexed.iter().filter(|(path, stamp)| stamps.get(*path) != Some(*stamp));
            let dropped = stamps.keys().filter(|path| !indexed.contains_key(*path));
            let unreported: Vec<EntryPath> = changed.map(|(path, _)| path).chain(dropped).cloned().collect();
            lock(&self.unreported).extend(unreported);
            *stamps = indexed;
        }
        let (_, caught_up) = self.reconcile_local(None)?;
        // What the old owner left unindexed is a change to this process's view of the vault
        // too. Reported from another thread: the caller may be inside a change of that view.
        if let Some(on_forwarded) = self.sharing.get().and_then(|s| s.on_forwarded.clone())
            && !caught_up.is_empty()
        {
            let reported = std::thread::Builder::new()
                .name("kb-index-caught-up".into())
                .spawn(move || on_forwarded(&caught_up));
            if let Err(error) = reported {
                tracing::warn!(%error, "could not report the entries caught up with");
            }
        }
        self.start_server();
        Ok(true)
    }

    /// Asks the owner to do `request`; `Ok(None)` when this process became the owner
    /// instead (then it does the work itself).
    fn forward(&self, request: &Request) -> Result<Option<Answer>, SearchError> {
        self.forward_within(request, OWNER_WAIT)
    }

    /// [`TantivyIndex::forward`], waiting at most `wait` for a process that holds the
    /// writer without answering yet (one taking the index over, or opening it).
    fn forward_within(&self, request: &Request, wait: Duration) -> Result<Option<Answer>, SearchError> {
        let deadline = Instant::now() + wait;
        loop {
            match owner::send(&self.sockets, request) {
                Ok(answer) => {
                    self.reader.reload().map_err(index_error)?;
                    return Ok(Some(answer));
                }
                Err(SendError::Failed(error)) => return Err(error),
                Err(SendError::NoOwner) => {
                    if self.take_over()? {
                        return Ok(None);
                    }
                    if Instant::now() > deadline {
                        return Err(SearchError::index_message(
                            "another kb process holds the search index but does not answer",
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }

    /// Waits until the index holds every change made before this call, in any process:
    /// the owner's queued changes are committed (see [`crate::commits`]), and a process
    /// that does not own the index asks the owner for that, then reloads its reader. When
    /// no owner answers (it exited or was killed, perhaps before committing what it had
    /// queued), this process takes the index over and catches up with the vault's files
    /// first, as a write would; while another process does that, it waits for it to answer
    /// (at most [`OWNER_WAIT`]).
    fn read_every_earlier_change(&self) {
        if self.is_owner() {
            self.queue.wait_for_queued();
            return;
        }
        // After one wait in vain (a writer that never answers), searches no longer wait
        // for it, until an owner answers again.
        let wait = if self.owner_silent.load(Ordering::Acquire) { Duration::ZERO } else { OWNER_WAIT };
        match self.forward_within(&Request::Flush, wait) {
            Ok(Some(_)) => self.owner_silent.store(false, Ordering::Release),
            // This process took the index over and caught up.
            Ok(None) => self.queue.wait_for_queued(),
            Err(error) => {
                if wait > Duration::ZERO {
                    tracing::warn!(%error, "a search could not make sure it reads every earlier change");
                    self.owner_silent.store(true, Ordering::Release);
                }
                // The reader then follows the owner's commits by itself, within a second.
                if let Err(error) = self.reader.reload() {
                    tracing::debug!(%error, "could not reload the index reader");
                }
            }
        }
    }

    /// Applies changes: here when this process owns the index, else through the owner.
    pub(crate) fn apply(&self, changes: Vec<Change>) -> Result<(), SearchError> {
        if changes.is_empty() || self.is_owner() {
            return self.apply_local(changes);
        }
        let paths = changes.iter().map(|c| c.path().to_string()).collect();
        match self.forward(&Request::Sync { paths, outside: false })? {
            Some(_) => Ok(()),
            None => self.apply_local(changes),
        }
    }

    /// Brings the index in line with the files at `paths` (as a file watcher reports
    /// them), all in one commit however many there are; returns the paths whose indexed
    /// entry changed, the files found unreadable (so the vault can count them), and those
    /// an earlier owner indexed that this process may not have seen change. Files
    /// whose stamp matches what is indexed (kb's own writes, or edits the owner's own
    /// watcher already followed) are not read again. In a process that does not own the
    /// index, the owner does this on one request, and every path asked about is returned
    /// (this process's view of them may be older than the owner's).
    pub fn sync_paths(&self, paths: &[EntryPath]) -> Result<Vec<EntryPath>, SearchError> {
        if paths.is_empty() || self.is_owner() {
            return self.sync_local(paths);
        }
        let request = Request::Sync { paths: paths.iter().map(ToString::to_string).collect(), outside: true };
        if self.forward(&request)?.is_none() {
            self.sync_local(paths)?;
        }
        Ok(paths.to_vec())
    }

    /// [`TantivyIndex::reconcile`], also giving the paths whose indexed entry changed;
    /// done by the owner.
    pub(crate) fn reconcile_changes(
        &self,
        progress: Option<&crate::ingest::ProgressFn>,
    ) -> Result<(SyncStats, Vec<EntryPath>), SearchError> {
        if self.is_owner() {
            return self.reconcile_local(progress);
        }
        match self.forward(&Request::Reconcile)? {
            Some(answer) => Ok((
                answer.stats.map(SyncStats::from).unwrap_or_default(),
                answer.changed.iter().filter_map(|p| EntryPath::parse(p).ok()).collect(),
            )),
            None => self.reconcile_local(progress),
        }
    }

    /// Whether no entry is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        self.commits.load(Ordering::Acquire)
    }

    /// From now on commits this process's changes in the background, several together
    /// when they come together (see the `commits` module). For processes that live long
    /// (`kb serve`, MCP servers); a short-lived one commits each change before it returns.
    pub fn commit_in_background(self: &Arc<Self>) {
        if !self.queue.start() {
            return;
        }
        let this = Arc::downgrade(self);
        let queue = Arc::clone(&self.queue);
        let started = std::thread::Builder::new()
            .name("kb-index-commit".into())
            .spawn(move || commit_queued(&this, &queue));
        if let Err(error) = started {
            tracing::warn!(%error, "could not start committing in the background; committing each change");
            self.queue.stop();
        }
    }

    /// Applies changes with this process's writer: queued for the background commit when
    /// there is one, else committed now.
    fn apply_local(&self, changes: Vec<Change>) -> Result<(), SearchError> {
        if changes.is_empty() {
            return Ok(());
        }
        if self.queue.is_background() {
            if !self.is_owner() {
                return Err(SearchError::index_message("this kb process does not own the search index"));
            }
            // What is queued counts as indexed: a file event about kb's own write is then
            // skipped, as after a commit.
            self.queue.push(changes, |queued| {
                let mut stamps = lock(&self.stamps);
                for change in queued {
                    match change {
                        Change::Upsert(entry, stamp) => stamps.insert(entry.path.clone(), *stamp),
                        Change::Remove(path) => stamps.remove(path),
                    };
                }
            });
            return Ok(());
        }
        self.commit_changes(changes, true)
    }

    /// Applies changes in one commit with this process's writer, then reloads the reader.
    /// With `record`, what is indexed is recorded once committed; without, it was recorded
    /// when queued, and a failure forgets it so that the files are read again.
    pub(crate) fn commit_changes(&self, changes: Vec<Change>, record: bool) -> Result<(), SearchError> {
        // Only a failed background commit needs the paths again (to forget their stamps).
        let paths: Vec<EntryPath> =
            if record { Vec::new() } else { changes.iter().map(|c| c.path().clone()).collect() };
        let staged = self.stage_and_commit(changes);
        let mut stamps = lock(&self.stamps);
        match (&staged, record) {
            (Ok(indexed), true) => {
                for (path, stamp) in indexed {
                    match stamp {
                        Some(stamp) => stamps.insert(path.clone(), *stamp),
                        None => stamps.remove(path),
                    };
                }
            }
            (Err(_), false) => {
                for path in &paths {
                    stamps.remove(path);
                }
            }
            _ => {}
        }
        staged.map(|_| ())
    }

    /// Stages changes in the writer and commits them: the stamp each path is indexed
    /// with (`None`: removed).
    fn stage_and_commit(&self, changes: Vec<Change>) -> Result<Vec<(EntryPath, Option<Stamp>)>, SearchError> {
        let mut slot = lock(&self.writer);
        let Some(writer) = slot.as_mut() else {
            return Err(SearchError::index_message("this kb process does not own the search index"));
        };
        let mut staged = Vec::with_capacity(changes.len());
        for change in changes {
            let path = change.path().clone();
            writer.delete_term(Term::from_field_text(self.fields.path, &path.to_string()));
            let stamp = match change {
                Change::Upsert(entry, stamp) => {
                    if let Err(e) = writer.add_document(to_document(&self.fields, &entry, stamp)) {
                        let _ = writer.rollback();
                        return Err(index_error(e));
                    }
                    Some(stamp)
                }
                Change::Remove(_) => None,
            };
            staged.push((path, stamp));
        }
        self.commit(writer)?;
        Ok(staged)
    }

    /// Commits what the writer holds and makes it visible to the next search. A failure is
    /// remembered for [`TantivyIndex::health`] until a commit succeeds.
    pub(crate) fn commit(&self, writer: &mut IndexWriter) -> Result<(), SearchError> {
        let committed = match writer.commit() {
            Ok(_) => {
                self.commits.fetch_add(1, Ordering::AcqRel);
                self.reader.reload().map_err(index_error)
            }
            Err(e) => {
                let _ = writer.rollback();
                Err(index_error(e))
            }
        };
        *lock(&self.last_failure) = committed.as_ref().err().map(ToString::to_string);
        committed
    }

    /// Whether the index answers for the vault as it is: `Err` with the reason when the
    /// last change could not be committed (search misses it until a commit succeeds; the
    /// next start, or `kb reindex`, catches up).
    pub fn health(&self) -> Result<(), String> {
        match lock(&self.last_failure).clone() {
            Some(failure) => Err(failure),
            None => Ok(()),
        }
    }

    /// [`TantivyIndex::sync_paths`] with this process's writer.
    pub(crate) fn sync_local(&self, paths: &[EntryPath]) -> Result<Vec<EntryPath>, SearchError> {
        self.sync_local_with(paths, false)
    }

    /// [`TantivyIndex::sync_local`]; with `reread`, files are read again even when their
    /// stamp matches (another kb process says it changed them: on a filesystem with coarse
    /// modification times a same-size edit keeps its stamp).
    pub(crate) fn sync_local_with(
        &self,
        paths: &[EntryPath],
        reread: bool,
    ) -> Result<Vec<EntryPath>, SearchError> {
        let mut changes = Vec::new();
        // Not indexed, yet changed for whoever asked.
        let mut unreported = Vec::new();
        for found in self.look_at_all(paths, reread) {
            match found {
                Found::Change(change) => changes.push(change),
                Found::Unreadable(path) | Found::Unreported(path) => unreported.push(path),
                Found::Unchanged => {}
            }
        }
        let changed = changes.iter().map(|c| c.path().clone()).chain(unreported).collect();
        self.apply_local(changes)?;
        // Answered once searchable (another process reloads its reader on the answer).
        self.queue.wait_for_queued();
        Ok(changed)
    }

    /// What each of `paths` needs (see [`TantivyIndex::look_at`]), in their order; many
    /// files (a `git pull`) are read on several threads at once.
    fn look_at_all(&self, paths: &[EntryPath], reread: bool) -> Vec<Found> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
        if paths.len() < PARALLEL_READ_FROM || threads == 1 {
            return paths.iter().map(|path| self.look_at(path, reread)).collect();
        }
        let chunk = paths.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = paths
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || part.iter().map(|p| self.look_at(p, reread)).collect::<Vec<_>>())
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|part| {
                    part.join().unwrap_or_else(|_| {
                        tracing::error!(
                            "a thread reading entry files panicked; they are read again at the next start"
                        );
                        Vec::new()
                    })
                })
                .collect()
        })
    }

    /// What the index needs for the file at `path`: its entry read again (or dropped), or
    /// nothing when its stamp matches what is indexed (unless `reread`).
    fn look_at(&self, path: &EntryPath, reread: bool) -> Found {
        let unreported = self.take_unreported(path);
        match self.look_at_file(path, reread) {
            Found::Unchanged if unreported => Found::Unreported(path.clone()),
            found => found,
        }
    }

    /// Whether `path` was among the [`TantivyIndex::unreported`], which it leaves now.
    fn take_unreported(&self, path: &EntryPath) -> bool {
        let mut unreported = lock(&self.unreported);
        !unreported.is_empty() && unreported.remove(path)
    }

    /// [`TantivyIndex::look_at`] by the file's stamp alone.
    fn look_at_file(&self, path: &EntryPath, reread: bool) -> Found {
        let indexed = lock(&self.stamps).get(path).copied();
        let on_disk = self.files.stamp(path);
        if !reread && on_disk.is_some() && on_disk == indexed {
            return Found::Unchanged;
        }
        let read = if on_disk.is_some() { self.files.read(path) } else { FileRead::Missing };
        match read {
            FileRead::Entry(entry, stamp) => Found::Change(Change::Upsert(entry, stamp)),
            FileRead::Malformed(reason) => {
                tracing::warn!(%path, %reason, "skipping a file that is not a readable entry");
                if indexed.is_some() {
                    Found::Change(Change::Remove(path.clone()))
                } else {
                    Found::Unreadable(path.clone())
                }
            }
            FileRead::Missing if indexed.is_some() => Found::Change(Change::Remove(path.clone())),
            FileRead::Missing => Found::Unchanged,
        }
    }

    fn run(
        &self,
        searcher: &Searcher,
        request: query::Request<'_>,
        page: &SearchQuery,
        matching: Matching,
    ) -> Result<SearchResults, SearchError> {
        let requested = (page.limit > 0).then_some(page.limit as u64);
        let limit = kb_domain::paging::page_size(requested);
        // No page can start past the last document; this also bounds the collector's buffer.
        let offset = page.offset.min(usize::try_from(searcher.num_docs()).unwrap_or(usize::MAX));
        let query = query::build(&self.fields, request, matching);
        let (in_names, words) = match matching {
            Matching::Exact => {
                let completing = request.typing().map(|(_, word)| word);
                let words = rank::Words { words: &request.parts.words, stems: request.stems, completing };
                let named =
                    completing.is_some() || self.names_holding(searcher, request.stems) <= NAME_PASS_LIMIT;
                (named.then(|| query::in_names(&self.fields, request, &query)).flatten(), Some(words))
            }
            // The typo-tolerant retry's words are not the entry's: no bonuses for them.
            Matching::Fuzzy => (None, None),
        };
        let in_names = in_names.as_ref().map(|q| q as &dyn tantivy::query::Query);
        let (top, total) = rank::top_page(searcher, &self.fields, &query, in_names, words, offset, limit)
            .map_err(index_error)?;
        let matcher = TermMatcher::for_query(request, self.language, matching == Matching::Fuzzy);
        let mut entries = Vec::with_capacity(top.len());
        for (score, address) in top {
            let doc: TantivyDocument = searcher.doc(address).map_err(index_error)?;
            let stored = StoredHit::from_document(&self.fields, &doc);
            let Ok(path) = kb_domain::EntryPath::parse(&stored.path) else { continue };
            let (field, snippet) = best_passage(&stored.texts, &matcher);
            entries.push(SearchHit {
                name: stored.name().to_string(),
                category: path.category(),
                path,
                matched_field: field.label().to_string(),
                snippet,
                score,
            });
        }
        Ok(SearchResults { entries, total, fuzzy: matching == Matching::Fuzzy })
    }
}

/// The background committer's loop (see [`crate::commits`]): commits whatever is
/// queued, all of it together, until the index closes. A commit that fails (or panics)
/// is logged and remembered for [`TantivyIndex::health`]; those waiting for it go on.
fn commit_queued(index: &Weak<TantivyIndex>, queue: &CommitQueue) {
    while let Some(batch) = queue.next_batch(index) {
        let Some(this) = index.upgrade() else {
            queue.finished(batch.upto);
            return;
        };
        let committed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            this.commit_changes(batch.changes, false)
        }));
        match committed {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::warn!(%error, "changes could not be indexed; they are read again on their next event")
            }
            Err(_) => {
                *lock(&this.last_failure) = Some("the index commit panicked".into());
                tracing::error!("the index commit panicked");
            }
        }
        drop(this);
        queue.finished(batch.upto);
    }
}

/// From this many files on, a sync reads them on several threads.
const PARALLEL_READ_FROM: usize = 64;

/// What a file needs from the index (see [`TantivyIndex::look_at`]).
enum Found {
    /// A change to apply.
    Change(Change),
    /// A file that is not a readable entry and was never indexed.
    Unreadable(EntryPath),
    /// Indexed as it is, by an owner before this process (see [`TantivyIndex::unreported`]),
    /// yet to be reported changed.
    Unreported(EntryPath),
    /// Nothing: indexed as it is, or gone and never indexed.
    Unchanged,
}

/// The name matches of a search are looked for apart (so that one scoring low on its text
/// is still ranked) only when the words are in at most this many names and tags: a word in
/// more names than that distinguishes none, and its weight in the text score ranks them.
const NAME_PASS_LIMIT: u64 = 1_000;

impl TantivyIndex {
    /// How many names or tags hold the most common of `stems` (from the term dictionary).
    fn names_holding(&self, searcher: &Searcher, stems: &[String]) -> u64 {
        stems
            .iter()
            .map(|stem| {
                searcher.doc_freq(&Term::from_field_text(self.fields.names_stemmed, stem)).unwrap_or(u64::MAX)
            })
            .max()
            .unwrap_or(0)
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
        let parts = query_parts(&query.text);
        if parts.is_empty() {
            return Ok(SearchResults { entries: Vec::new(), total: 0, fuzzy: false });
        }
        let word_stems = stems(&parts.words, self.language);
        let request = query::Request {
            parts: &parts,
            stems: &word_stems,
            prefix: query.prefix,
            category: query.category,
        };
        self.read_every_earlier_change();
        let searcher = self.reader.searcher();
        let exact = self.run(&searcher, request, query, Matching::Exact)?;
        if exact.total > 0 || !parts.all_terms().iter().any(|t| fuzzy_distance(t) > 0) {
            return Ok(exact);
        }
        self.run(&searcher, request, query, Matching::Fuzzy)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(path = %entry.path))]
    fn upsert(&self, entry: &Entry) -> Result<(), SearchError> {
        let stamp = self.files.stamp(&entry.path).unwrap_or(Stamp::NONE);
        self.apply(vec![Change::Upsert(entry.clone(), stamp)])
    }

    #[tracing::instrument(level = "debug", skip(self))]
    fn remove(&self, path: &EntryPath) -> Result<(), SearchError> {
        self.apply(vec![Change::Remove(path.clone())])
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
        let changes = changes
            .iter()
            .map(|change| match change {
                EntryChange::Upserted(entry) => {
                    let stamp = self.files.stamp(&entry.path).unwrap_or(Stamp::NONE);
                    Change::Upsert(entry.clone(), stamp)
                }
                EntryChange::Removed(path) => Change::Remove(path.clone()),
            })
            .collect();
        if let Err(error) = self.apply(changes) {
            tracing::error!(%error, "search index could not follow a vault change");
        }
    }
}
