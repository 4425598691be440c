//! The markdown vault adapter: [`Vault`], kb's [`kb_domain::EntryRepository`] over a folder of
//! markdown files with YAML frontmatter, one entry per file.
//!
//! - `open` creates the root, the category folders and `.kb/`, joins the kb processes of
//!   the vault (`presence`), finishes interrupted moves when it is the only one
//!   (`journal`), and scans `{category}/*.md` once (`scan`) into an in-memory
//!   `cache` of summaries and references, from which `list` and `index.md`
//!   (`entry_list`) are answered without reading the files again.
//! - A move points every reference to the entry (frontmatter paths, Markdown links) at its
//!   new path in the same change, editing only those references' bytes.
//! - `get`, `update`, `move_entry` and `delete` read the file on disk at that moment;
//!   paths are checked to stay inside the vault (`safe_path`).
//! - [`EntryFiles`] lends the same rule of which files are entries (and the same symlink
//!   check) to readers outside the vault, as the [`kb_domain::VaultFiles`] port.
//! - Every write is atomic (`atomic`); new files are created without clobbering, so two
//!   writers (threads or processes) never share a slug. Changes are serialised by one
//!   lock, and observers are notified of each change after it is on disk, before the call
//!   returns.
//! - Malformed files are reported and skipped, never rewritten or deleted. Reading never
//!   writes: `open` writes only folders and `index.md` (never a person's own `index.md`).

mod atomic;
mod cache;
mod entry_list;
mod entry_list_schedule;
mod files;
mod folder_marks;
mod journal;
mod merge;
mod presence;
mod revisions;
mod safe_path;
mod scan;
#[cfg(test)]
mod tests;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use chrono::{DateTime, NaiveDate, Utc};
use kb_domain::frontmatter::render_document;
use kb_domain::references::{rebase_own_links, retarget_references};
use kb_domain::{
    Category, ChangeContext, ChangeObserver, Clock, DigestCandidates, Entry, EntryCatalogue, EntryChange,
    EntryId, EntryPath, EntryReader, EntrySummary, EntryUpdate, EntryWriter, FileChange, Frontmatter,
    ListFilter, ListPage, MalformedFile, MergeOutcome, MoveOutcome, NameMatch, NewEntry, RepositoryError,
    RestoreOutcome, Revision, RevisionHistory, RevisionLog, RevisionText, Slug, UndoOutcome, UndoScope,
    UpdateOutcome, transform_for_move,
};
use serde_json::Value;

pub use self::files::EntryFiles;

use self::cache::Cache;
use self::journal::{JournalFile, MoveJournal};
use self::presence::{Joined, Presence, WriteLock};
use self::safe_path::{Root, io_error};
use self::scan::{Found, read_entry, read_existing};

/// How many collision suffixes are tried before giving up on a slug.
const MAX_SUFFIX: u32 = 100_000;

/// The markdown vault on disk.
pub struct Vault {
    root: Root,
    clock: Arc<dyn Clock>,
    state: Mutex<State>,
    entry_list: Mutex<EntryListFile>,
    observers: RwLock<Vec<Arc<dyn ChangeObserver>>>,
    /// Whether the vault's view followed a change made elsewhere since the last sweep (see
    /// [`Vault::sweep_if_due`]); this process's own changes need no sweep.
    touched: std::sync::atomic::AtomicBool,
    /// Which folders a sweep need not list again.
    folder_marks: folder_marks::FolderMarks,
    /// When the entry list file is written (shared with its background writer).
    entry_list_schedule: Arc<entry_list_schedule::EntryListSchedule>,
    /// This process's shared hold on the vault, for as long as it is open.
    _presence: Presence,
    /// Serialises changes to entries with other kb processes.
    writes: WriteLock,
    /// Where each change is recorded, when history is kept.
    history: Option<Arc<dyn RevisionLog>>,
}

/// What the main lock guards: the cache.
struct State {
    cache: Cache,
}

/// What the entry list file's lock guards. It is taken after the main lock or alone, never
/// the other way round, and the entry list is rendered under it alone (from a snapshot), so
/// changes never wait for the whole entry list to be rendered and written.
struct EntryListFile {
    /// The text kb last wrote to its entry list file (empty before the first write).
    text: String,
    /// The cache version that text was rendered from: an older snapshot is never written.
    version: u64,
    /// Where kb writes its entry list (`None`: nowhere, every name is the person's).
    file: Option<PathBuf>,
    /// Why kb is not using `index.md`, for the person.
    notice: Option<String>,
    /// The entry list file's modification time and size after kb last wrote it: another kb
    /// process writing it since (from an older view of the vault) shows as a difference.
    written: Option<(std::time::SystemTime, u64)>,
    /// The time and size the file was first found with after another process wrote it,
    /// and when (see [`Vault::check_entry_list_file`]).
    disturbed: Option<(Option<(std::time::SystemTime, u64)>, std::time::Instant)>,
}

/// How long another kb process's write of the entry list file stands before this process,
/// whose view differs, writes its own: long enough for a watching process to follow the
/// change that write came from (a fraction of a second; more on a busy machine), so it
/// does not first write its older view and then the same list again.
const REPAIR_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vault").field("root", &self.root.dir()).finish_non_exhaustive()
    }
}

impl Vault {
    /// Opens (creating when needed) the vault at `root`: makes the category folders and
    /// `.kb/`, finishes interrupted moves when no other kb process has the vault open,
    /// reads every entry once and writes the entry list file if it changed.
    pub fn open(root: impl Into<PathBuf>, clock: Arc<dyn Clock>) -> Result<Vault, RepositoryError> {
        Vault::open_with(root.into(), clock, None)
    }

    /// [`Vault::open`], recording every change in `history` (see [`Vault::check_history`]
    /// for changes made while kb was not running).
    pub fn open_with_history(
        root: impl Into<PathBuf>,
        clock: Arc<dyn Clock>,
        history: Arc<dyn RevisionLog>,
    ) -> Result<Vault, RepositoryError> {
        Vault::open_with(root.into(), clock, Some(history))
    }

    #[tracing::instrument(skip_all, fields(root))]
    fn open_with(
        dir: PathBuf,
        clock: Arc<dyn Clock>,
        history: Option<Arc<dyn RevisionLog>>,
    ) -> Result<Vault, RepositoryError> {
        tracing::Span::current().record("root", tracing::field::display(dir.display()));
        let folders =
            Category::ALL.iter().map(|c| dir.join(c.as_str())).chain([dir.join(safe_path::STATE_DIR)]);
        for folder in std::iter::once(dir.clone()).chain(folders) {
            fs::create_dir_all(&folder).map_err(|e| io_error(&folder, e))?;
        }
        let root = Root::new(dir)?;
        let state_dir = root.state_dir();
        let presence = match Presence::join(&state_dir).map_err(|e| io_error(&state_dir, e))? {
            Joined::Alone(presence) => {
                journal::recover(&root)?;
                presence.share().map_err(|e| io_error(&state_dir, e))?;
                presence
            }
            // Another process may be moving an entry this very moment: its journal is
            // live, and finishing it here could delete the entry's only copy.
            Joined::Shared(presence) => presence,
        };
        let writes = WriteLock::open(&state_dir).map_err(|e| io_error(&state_dir, e))?;
        let mut cache = Cache::default();
        scan::scan(&root, |found| match found {
            Found::Entry(entry) => cache.insert(&entry),
            Found::Malformed(file) => cache.mark_malformed(&file),
        })?;
        tracing::info!(entries = cache.len(), malformed = cache.malformed().len(), "vault opened");
        let (entry_list_file, entry_list_notice) = entry_list::choose_file(root.dir());
        if let Some(notice) = &entry_list_notice {
            tracing::warn!("{notice}");
        }
        let vault = Vault {
            root,
            clock,
            state: Mutex::new(State { cache }),
            entry_list: Mutex::new(EntryListFile {
                text: String::new(),
                version: 0,
                file: entry_list_file,
                notice: entry_list_notice,
                written: None,
                disturbed: None,
            }),
            observers: RwLock::new(Vec::new()),
            entry_list_schedule: Arc::default(),
            touched: std::sync::atomic::AtomicBool::new(false),
            folder_marks: folder_marks::FolderMarks::default(),
            _presence: presence,
            writes,
            history,
        };
        vault.write_entry_list_now();
        Ok(vault)
    }

    /// The vault's root folder.
    pub fn root(&self) -> &Path {
        self.root.dir()
    }

    /// The vault's entry files, read-only (the [`kb_domain::VaultFiles`] port, for the
    /// search index): the same rule of which files are entries as the vault's own.
    pub fn files(&self) -> EntryFiles {
        EntryFiles::of_root(self.root.clone())
    }

    /// How many times the background writer (see [`Vault::write_entry_list_in_background`])
    /// has brought the entry list file up to date: one per burst of changes, however many
    /// entries it touched (thousands followed after a `git pull` are one, or one a second
    /// while they keep coming). For tests and diagnostics.
    pub fn background_entry_list_writes(&self) -> u64 {
        self.entry_list_schedule.passes()
    }

    /// Adds an observer notified of every change (after it is on disk, before the call that
    /// made it returns, in the order of the changes). Observers must not call back into
    /// the vault.
    pub fn add_observer(&self, observer: Arc<dyn ChangeObserver>) {
        self.observers.write().unwrap_or_else(PoisonError::into_inner).push(observer);
    }

    /// Where kb writes its entry list (`index.md`, or `kb-index.md` when `index.md` is the
    /// person's own); `None` when both names are the person's.
    pub fn entry_list_file(&self) -> Option<PathBuf> {
        self.lock_entry_list().file.clone()
    }

    /// Why kb is not writing its entry list to `index.md`, when it is not.
    pub fn entry_list_notice(&self) -> Option<String> {
        self.lock_entry_list().notice.clone()
    }

    /// The lock serialising changes. A panic while holding it leaves the cache as
    /// consistent as the files (each step updates it after the disk), so poisoning is
    /// ignored.
    fn lock(&self) -> MutexGuard<'_, State> {
        kb_domain::sync::lock(&self.state)
    }

    /// The entry list file's lock (see [`EntryListFile`] for the order).
    fn lock_entry_list(&self) -> MutexGuard<'_, EntryListFile> {
        kb_domain::sync::lock(&self.entry_list)
    }

    /// From now on writes the entry list file off the request path: one background thread
    /// rewrites it at most once per burst of changes (within a fraction of a second of the
    /// last one), so no change waits for the whole entry list to be rendered. For processes
    /// that live long (`kb serve`); others write it after each change.
    pub fn write_entry_list_in_background(self: &Arc<Self>) {
        if !self.entry_list_schedule.defer() {
            return;
        }
        let vault = Arc::downgrade(self);
        let schedule = Arc::clone(&self.entry_list_schedule);
        let started = std::thread::Builder::new().name("kb-entry-list".into()).spawn(move || {
            crate::background::yield_to_requests();
            // Waits holding only the schedule, so the vault can close meanwhile.
            while schedule.next(&vault).is_some() {
                let Some(vault) = vault.upgrade() else { return };
                let started = std::time::Instant::now();
                vault.write_entry_list_now();
                schedule.pass_took(started.elapsed());
            }
        });
        if let Err(error) = started {
            tracing::warn!(%error, "could not start the entry list file's writer; writing it after each change");
            self.entry_list_schedule.undefer();
        }
    }

    /// Brings the entry list file up to date now or (in the background) soon.
    fn entry_list_due(&self, state: &mut State) {
        if self.entry_list_schedule.is_deferred() {
            self.entry_list_schedule.mark_due();
        } else {
            self.write_entry_list(state.cache.entry_list_snapshot(), false);
        }
    }

    /// Brings the entry list file up to date, then notifies the observers (the changes of
    /// one operation together).
    fn changed(&self, state: &mut State, changes: &[EntryChange]) {
        self.entry_list_due(state);
        let observers = self.observers.read().unwrap_or_else(PoisonError::into_inner);
        for observer in observers.iter() {
            observer.entries_changed(changes);
        }
    }

    /// Renders the entry list from a snapshot of the cache taken now and writes it (see
    /// [`Vault::write_entry_list`]). Must not be called holding the main lock.
    fn write_entry_list_now(&self) {
        let snapshot = self.lock().cache.entry_list_snapshot();
        self.write_entry_list(snapshot, false);
    }

    /// Renders the entry list from `snapshot` and writes it when it differs from what kb
    /// last wrote (or when `again`: another process wrote the file since) and from what the
    /// file holds now, unless a newer snapshot was written already; and only over a file kb
    /// wrote itself: when the person has put their own file there since, kb moves to the
    /// other name (and says so) instead.
    fn write_entry_list(&self, snapshot: cache::EntryListSnapshot, again: bool) {
        let mut entry_list = self.lock_entry_list();
        if snapshot.version < entry_list.version {
            return;
        }
        let text = entry_list::render(&snapshot);
        let Some(mut file) = entry_list.file.clone() else { return };
        // The whole file is read only once, at open: afterwards the text kb last wrote is
        // known, and only the file's first bytes are read to see it is still kb's.
        if !again && !entry_list.text.is_empty() && text == entry_list.text {
            entry_list.version = snapshot.version;
            return;
        }
        // A file not known to be kb's is left alone too.
        if !matches!(entry_list::owner(&file), Ok(entry_list::Owner::Nobody | entry_list::Owner::Kb)) {
            let (chosen, notice) = entry_list::choose_file(self.root.dir());
            if let Some(notice) = &notice {
                tracing::warn!("{notice}");
            }
            (entry_list.file, entry_list.notice) = (chosen.clone(), notice);
            let Some(chosen) = chosen else { return };
            file = chosen;
        }
        // What is there already is never written again: another kb process on the vault
        // may have written this very text (sync tools and editors see every write).
        // The file's stamp is taken as this process left it (before the rename, or before
        // reading what is there), never after: another process's write right after ours
        // must not pass for ours, or it would never be put right.
        entry_list.written = match holds(&file, &text) {
            Some(stamp) => Some(stamp),
            None => match atomic::replace(&file, text.as_bytes()) {
                Ok(meta) => stamp_of(&meta),
                Err(e) => {
                    // The entry change itself is on disk; a stale entry list is repaired
                    // next time.
                    tracing::warn!(error = %e, file = %file.display(), "could not write the entry list file");
                    file_written(&file)
                }
            },
        };
        entry_list.text = text;
        entry_list.version = snapshot.version;
    }

    /// Brings the cache in line with which entry files exist, from the folder listings
    /// alone: entries whose file is gone are forgotten, files not yet known are read.
    /// A safety net beside the file watcher, for events it never delivered (another kb
    /// process's change, an outside edit); returns how many paths it corrected. A folder
    /// that has not changed since a sweep found it in line is not listed again (see
    /// `folder_marks`).
    pub fn sweep(&self) -> usize {
        // The listings alone: which files exist, not what they hold (a folder of tens of
        // thousands is then one read of the folder, not a look at every file).
        let mut on_disk = std::collections::HashSet::new();
        let mut listed = Vec::new();
        for category in Category::ALL {
            // Taken before the listing: a change made during it moves the time again.
            let mark = folder_marks::FolderMarks::look(&self.root.folder(category));
            if self.folder_marks.unchanged(category, mark) {
                continue;
            }
            match scan::list_folder_paths(&self.root, category) {
                Ok(paths) => {
                    on_disk.extend(paths);
                    listed.push((category, mark));
                }
                Err(error) => {
                    tracing::warn!(%error, folder = category.as_str(), "category folder cannot be listed; skipped");
                }
            }
        }
        if listed.is_empty() {
            self.check_entry_list_file();
            return 0;
        }
        let is_listed = |path: &EntryPath| listed.iter().any(|(category, _)| path.category() == *category);
        let known = self.lock().cache.known_paths_where(is_listed);
        let known_set: std::collections::HashSet<&EntryPath> = known.iter().collect();
        let stale = known.iter().filter(|path| !on_disk.contains(path));
        let unknown = on_disk.iter().filter(|path| !known_set.contains(path));
        let mut corrected = 0;
        // All under one hold of the lock, and the observers notified once: a folder of files
        // pulled in is one search-index commit, not one per file.
        let mut state = self.lock();
        let _writing = self.history.as_ref().map(|_| self.writes.hold());
        let mut changes = Vec::new();
        let mut observed = Vec::new();
        for path in stale.chain(unknown) {
            corrected += 1;
            let change = match self.reread_observed(&mut state, path, false, &mut observed) {
                Ok(Some(entry)) => EntryChange::Upserted(entry),
                Ok(None) => EntryChange::Removed(path.clone()),
                Err(error) => {
                    tracing::debug!(%error, %path, "sweep could not read an entry");
                    // A file that could not be read this time stays as it was known.
                    let unread = !matches!(error, RepositoryError::Malformed { .. });
                    if unread && state.cache.is_taken(path) {
                        continue;
                    }
                    EntryChange::Removed(path.clone())
                }
            };
            changes.push(change);
        }
        if !changes.is_empty() {
            self.changed(&mut state, &changes);
        }
        self.observe(observed);
        drop(state);
        if corrected > 0 {
            tracing::debug!(corrected, "the vault's view caught up with its folders");
        } else {
            for (category, mark) in listed {
                self.folder_marks.clean(category, mark);
            }
        }
        self.check_entry_list_file();
        corrected
    }

    /// A sweep when the vault's view followed a change made elsewhere since the last one
    /// (the moments events go missing), or when `anyway`; otherwise only the entry list
    /// file is checked. A full sweep lists every folder, so a process that is idle does not
    /// pay for one each time.
    pub fn sweep_if_due(&self, anyway: bool) -> usize {
        if self.touched.swap(false, std::sync::atomic::Ordering::Relaxed) || anyway {
            return self.sweep();
        }
        self.check_entry_list_file();
        0
    }

    /// Rewrites the entry list file when another kb process wrote it since from an older
    /// view of the vault, once that write has stood for [`REPAIR_AFTER`]: a process about
    /// to follow the same change writes the same text and nothing is rewritten, and a file
    /// that already holds this process's text is never written again.
    fn check_entry_list_file(&self) {
        {
            let mut entry_list = self.lock_entry_list();
            let now = entry_list.file.as_deref().and_then(file_written);
            if now == entry_list.written {
                entry_list.disturbed = None;
                return;
            }
            match entry_list.disturbed {
                Some((seen, since)) if seen == now && since.elapsed() >= REPAIR_AFTER => {}
                Some((seen, _)) if seen == now => return,
                _ => {
                    entry_list.disturbed = Some((now, std::time::Instant::now()));
                    return;
                }
            }
            entry_list.disturbed = None;
        }
        let snapshot = self.lock().cache.entry_list_snapshot();
        self.write_entry_list(snapshot, true);
    }

    /// The text of the entry file at `path`, as it is on disk (refused outside the vault;
    /// `NotFound` when there is no such file).
    pub fn read_text(&self, path: &EntryPath) -> Result<String, RepositoryError> {
        let file = self.root.checked_file(path)?;
        fs::read_to_string(&file).map_err(|e| io_error(&file, e))
    }

    /// Brings the cache and the entry list file in line with the entry file at `path` after
    /// the search index already followed it (an edit from outside kb, or another kb
    /// process's change, reported by the search index): observers are not notified of it a
    /// second time.
    pub fn follow(&self, path: &EntryPath) -> Result<Option<Entry>, RepositoryError> {
        self.reread(path, false)
    }

    /// [`Vault::follow`] for many paths at once (a `git pull` the search index followed):
    /// one hold of the locks and one history record for them all. Paths that cannot be read
    /// are logged and skipped; returns how many were followed.
    pub fn follow_all(&self, paths: &[EntryPath]) -> usize {
        let mut state = self.lock();
        let _writing = self.history.as_ref().map(|_| self.writes.hold());
        let mut observed = Vec::new();
        let mut followed = 0;
        for path in paths {
            match self.reread_observed(&mut state, path, false, &mut observed) {
                Ok(_) => followed += 1,
                Err(error) => tracing::warn!(%error, %path, "could not follow an entry changed elsewhere"),
            }
        }
        self.observe(observed);
        followed
    }

    /// Reads the entry at `path` again into the cache (and the entry list file); observers
    /// are notified when `notify`.
    fn reread(&self, path: &EntryPath, notify: bool) -> Result<Option<Entry>, RepositoryError> {
        self.reread_locked(&mut self.lock(), path, notify)
    }

    /// [`Vault::reread`] under a hold of the lock the caller has. With history kept, what
    /// was read is compared with history and recorded when it differs (a change made
    /// outside kb), under the write lock so a change kb is making is never taken for one.
    fn reread_locked(
        &self,
        state: &mut State,
        path: &EntryPath,
        notify: bool,
    ) -> Result<Option<Entry>, RepositoryError> {
        if self.history.is_none() {
            return self.reread_file(state, path, notify);
        }
        let _writing = self.writes.hold();
        let mut observed = Vec::new();
        let result = self.reread_observed(state, path, notify, &mut observed);
        self.observe(observed);
        result
    }

    /// [`Vault::reread_file`], adding what was read to `observed` for history when it is
    /// kept. The caller holds the write lock when history is kept, and records `observed`.
    fn reread_observed(
        &self,
        state: &mut State,
        path: &EntryPath,
        notify: bool,
        observed: &mut Vec<kb_domain::ObservedFile>,
    ) -> Result<Option<Entry>, RepositoryError> {
        let result = self.reread_file(state, path, notify);
        if self.history.is_some() && matches!(result, Ok(_) | Err(RepositoryError::Malformed { .. })) {
            let bytes = fs::read(self.root.file(path)).ok();
            let entry_id = match &result {
                Ok(Some(entry)) => entry.id().map(str::to_string),
                _ => None,
            };
            observed.push(kb_domain::ObservedFile { path: path.clone(), bytes, entry_id });
        }
        result
    }

    /// Reads the entry at `path` into the cache (see [`Vault::reread`]).
    fn reread_file(
        &self,
        state: &mut State,
        path: &EntryPath,
        notify: bool,
    ) -> Result<Option<Entry>, RepositoryError> {
        let file = match self.root.checked_file(path) {
            Ok(file) => Some(file),
            Err(RepositoryError::NotFound(_)) => None,
            Err(e) => {
                state.cache.remove(path);
                self.reread_done(state, EntryChange::Removed(path.clone()), notify);
                return Err(e);
            }
        };
        let found = match file {
            Some(file) => read_entry(&file, path)?,
            None => None,
        };
        match found {
            Some(Found::Entry(entry)) => {
                state.cache.insert(&entry);
                self.reread_done(state, EntryChange::Upserted(entry.clone()), notify);
                Ok(Some(entry))
            }
            Some(Found::Malformed(m)) => {
                tracing::warn!(path = %m.path, reason = %m.reason, "entry file became malformed; skipped");
                state.cache.mark_malformed(&m);
                self.reread_done(state, EntryChange::Removed(path.clone()), notify);
                Err(RepositoryError::Malformed { path: m.path, reason: m.reason })
            }
            None => {
                state.cache.remove(path);
                self.reread_done(state, EntryChange::Removed(path.clone()), notify);
                Ok(None)
            }
        }
    }

    fn reread_done(&self, state: &mut State, change: EntryChange, notify: bool) {
        // Something changed that this process did not do: the moment to look for changes
        // whose file events went missing.
        self.touched.store(true, std::sync::atomic::Ordering::Relaxed);
        if notify {
            self.changed(state, &[change]);
        } else {
            self.entry_list_due(state);
        }
    }

    /// `found`, and when it says the entry is not there, the entry forgotten too: another
    /// kb process may have moved or deleted it a moment ago, before this one saw the change.
    fn forget_if_missing(
        &self,
        state: &mut State,
        path: &EntryPath,
        found: Result<PathBuf, RepositoryError>,
    ) -> Result<PathBuf, RepositoryError> {
        if matches!(found, Err(RepositoryError::NotFound(_))) && state.cache.remove(path) {
            self.touched.store(true, std::sync::atomic::Ordering::Relaxed);
            self.changed(state, &[EntryChange::Removed(path.clone())]);
        }
        found
    }

    /// Removes a moved entry's old file once its new one is in place. An old file already
    /// gone (removed by someone else meanwhile) means the move is done; only when the old
    /// file is still there and cannot be removed is the move undone, the new file removed.
    fn remove_moved(
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

    /// Creates `bytes` as a new file in `category` under `slug`, or the first free
    /// `slug-2`, `slug-3`, … . `before` runs just before each attempt (the move journal).
    fn place_new(
        &self,
        cache: &Cache,
        category: Category,
        slug: &Slug,
        bytes: &[u8],
        mut before: impl FnMut(&EntryPath) -> Result<(), RepositoryError>,
    ) -> Result<EntryPath, RepositoryError> {
        // A category folder deleted while kb runs is made again.
        let folder = self.root.folder(category);
        fs::create_dir_all(&folder).map_err(|e| io_error(&folder, e))?;
        self.root.checked_folder(category)?;
        for n in 1..=MAX_SUFFIX {
            let candidate = if n == 1 { slug.clone() } else { slug.with_suffix(n) };
            let path = EntryPath::for_slug(category, &candidate);
            let file = self.root.file(&path);
            if cache.is_taken(&path) || fs::symlink_metadata(&file).is_ok() {
                continue;
            }
            before(&path)?;
            if atomic::create_new(&file, bytes).map_err(|e| io_error(&file, e))? {
                return Ok(path);
            }
        }
        let folder = self.root.folder(category);
        Err(io_error(
            &folder,
            std::io::Error::new(std::io::ErrorKind::AlreadyExists, format!("no free name for slug {slug}")),
        ))
    }

    /// Creates an entry; with `unique`, only when no entry of its category has a related
    /// name (checked under the same locks as the write).
    fn create_entry(
        &self,
        new: NewEntry,
        by: &ChangeContext,
        unique: bool,
    ) -> Result<Entry, RepositoryError> {
        let id = EntryId::generate();
        let frontmatter = new.frontmatter(&id, self.clock.now())?;
        let slug = Slug::from_name(&new.name);
        let document = render_document(&frontmatter, &new.body);
        let mut state = self.lock();
        let _writing = self.writes.hold();
        if unique {
            // A file of this name written a moment ago by another kb process reaches this
            // cache only through the watcher: read it now, so it counts as a namesake.
            let own = EntryPath::for_slug(new.category, &slug);
            if !state.cache.is_taken(&own) && fs::symlink_metadata(self.root.file(&own)).is_ok() {
                let mut observed = Vec::new();
                if let Err(e) = self.reread_observed(&mut state, &own, true, &mut observed) {
                    tracing::warn!(error = %e, path = %own, "a file of the same name could not be read");
                }
                self.observe(observed);
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
        let path = self.place_new(&state.cache, new.category, &slug, document.as_bytes(), |_| Ok(()))?;
        tracing::Span::current().record("path", tracing::field::display(&path));
        self.record(
            by,
            None,
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
        self.changed(&mut state, &[EntryChange::Upserted(entry.clone())]);
        Ok(entry)
    }
}

impl Drop for Vault {
    /// A change the background writer has not written yet is written now.
    fn drop(&mut self) {
        if self.entry_list_schedule.is_deferred() && self.entry_list_schedule.is_due() {
            self.write_entry_list_now();
        }
    }
}

impl EntryWriter for Vault {
    #[tracing::instrument(skip_all, fields(category = %new.category, path))]
    fn create_as(&self, new: NewEntry, by: &ChangeContext) -> Result<Entry, RepositoryError> {
        self.create_entry(new, by, false)
    }

    #[tracing::instrument(skip_all, fields(category = %new.category, path))]
    fn create_unique_as(&self, new: NewEntry, by: &ChangeContext) -> Result<Entry, RepositoryError> {
        self.create_entry(new, by, true)
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
        let recorded = self.record_first(
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
            self.observe_after_failure(std::slice::from_ref(path));
            return Err(io_error(&file, e));
        }
        self.written(by, &recorded);
        state.cache.insert(&entry);
        self.changed(&mut state, &[EntryChange::Upserted(entry.clone())]);
        Ok(UpdateOutcome { entry, updated_fields })
    }

    #[tracing::instrument(skip_all, fields(path = %path, target = %target, new_path, references))]
    fn move_entry_as(
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
        let name = frontmatter.get_str("name").map_or_else(|| path.stem().to_string(), str::to_string);
        // Links written from the entry's own folder must still lead where they did.
        let rendered = render_document(&frontmatter, &body);
        let document = rebase_own_links(&rendered, path, target).unwrap_or(rendered);
        let referrers: Vec<EntryPath> =
            state.cache.referrers_of(path).into_iter().filter(|r| r != path).collect();
        let journal = JournalFile::new(&self.root);
        let old_stamp = scan::stamp_of_path(&self.root, path);
        let new_path =
            self.place_new(&state.cache, target, &Slug::from_name(&name), document.as_bytes(), |new| {
                journal.write(&MoveJournal {
                    old: path.clone(),
                    new: new.clone(),
                    id: id.clone(),
                    referrers: referrers.clone(),
                    old_stamp,
                })
            })?;
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
        let revisions = match self.record_first(by, None, recorded) {
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
        self.written(by, &revisions);
        self.changed(&mut state, &changes);
        Ok(MoveOutcome { old_path: path.clone(), entry: moved })
    }

    #[tracing::instrument(skip_all, fields(path = %path))]
    fn delete_as(&self, path: &EntryPath, by: &ChangeContext) -> Result<Option<Revision>, RepositoryError> {
        let mut state = self.lock();
        let _writing = self.writes.hold();
        let file = self.forget_if_missing(&mut state, path, self.root.checked_file(path))?;
        // A malformed file is refused here: kb never deletes what it cannot read.
        let (entry, before) = scan::read_existing_document(&file, path)?;
        // The file is in history before it is removed: a delete that cannot be recorded
        // is not made.
        let recorded = self.record_first(
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
            self.observe_after_failure(std::slice::from_ref(path));
            return Err(io_error(&file, e));
        }
        let folder = self.root.folder(path.category());
        if let Err(e) = atomic::sync_dir(&folder) {
            tracing::warn!(error = %e, folder = %folder.display(), "could not sync a folder after a delete");
        }
        self.written(by, &recorded);
        let revision = recorded.into_iter().next();
        state.cache.remove(path);
        self.changed(&mut state, &[EntryChange::Removed(path.clone())]);
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

impl RevisionHistory for Vault {
    fn history(&self, path: &EntryPath) -> Result<Vec<Revision>, RepositoryError> {
        self.entry_history(path)
    }

    fn revision(&self, path: &EntryPath, revision: i64) -> Result<RevisionText, RepositoryError> {
        self.revision_text(path, revision)
    }

    fn restore_as(
        &self,
        path: &EntryPath,
        revision: i64,
        by: &ChangeContext,
    ) -> Result<RestoreOutcome, RepositoryError> {
        self.restore(path, revision, by)
    }

    fn undo_as(
        &self,
        scope: &UndoScope,
        force: bool,
        by: &ChangeContext,
    ) -> Result<UndoOutcome, RepositoryError> {
        self.undo(scope, force, by)
    }
}

impl EntryReader for Vault {
    fn get(&self, path: &EntryPath) -> Result<Entry, RepositoryError> {
        let file = self.root.checked_file(path)?;
        read_existing(&file, path)
    }

    fn all_entries(&self) -> Result<Vec<Entry>, RepositoryError> {
        let mut entries = Vec::new();
        scan::scan(&self.root, |found| {
            if let Found::Entry(entry) = found {
                entries.push(entry);
            }
        })?;
        Ok(entries)
    }
}

impl EntryCatalogue for Vault {
    fn list(&self, filter: &ListFilter) -> Result<ListPage, RepositoryError> {
        Ok(self.lock().cache.list(filter))
    }

    fn find_by_name(&self, name: &str) -> Result<Vec<NameMatch>, RepositoryError> {
        Ok(self.lock().cache.find_by_name(name))
    }

    fn named_entries(&self) -> Result<Vec<(EntrySummary, Vec<String>)>, RepositoryError> {
        Ok(self.lock().cache.named_entries())
    }

    fn digest_candidates(
        &self,
        today: NaiveDate,
        now: DateTime<Utc>,
    ) -> Result<DigestCandidates, RepositoryError> {
        Ok(self.lock().cache.digest_candidates(today, now))
    }

    fn nudge_candidates(
        &self,
        today: NaiveDate,
        now: DateTime<Utc>,
        settings: kb_domain::nudges::NudgeSettings,
    ) -> Result<kb_domain::nudges::NudgeCandidates, RepositoryError> {
        Ok(self.lock().cache.nudge_candidates(today, now, settings))
    }

    fn malformed(&self) -> Vec<MalformedFile> {
        self.lock().cache.malformed()
    }

    fn entry_list_markdown(&self) -> String {
        // Rendered now: the file itself may be a moment behind (see
        // `write_entry_list_in_background`).
        let snapshot = self.lock().cache.entry_list_snapshot();
        entry_list::render(&snapshot)
    }

    #[tracing::instrument(skip_all, fields(path = %path))]
    fn refresh(&self, path: &EntryPath) -> Result<Option<Entry>, RepositoryError> {
        self.reread(path, true)
    }
}

/// The stamp of `file` when it holds exactly `text` (its size is looked at first, so a
/// file of another size is not read).
fn holds(file: &Path, text: &str) -> Option<(std::time::SystemTime, u64)> {
    // Stamped before it is read: a write after the read changes the stamp it is compared
    // with later, so it cannot go unseen.
    let stamp = file_written(file)?;
    (stamp.1 == text.len() as u64 && fs::read(file).is_ok_and(|bytes| bytes == text.as_bytes()))
        .then_some(stamp)
}

/// A file's modification time and size, when it can be read.
fn file_written(file: &Path) -> Option<(std::time::SystemTime, u64)> {
    stamp_of(&fs::metadata(file).ok()?)
}

/// The modification time and size in `meta`, when the platform gives the time.
fn stamp_of(meta: &fs::Metadata) -> Option<(std::time::SystemTime, u64)> {
    Some((meta.modified().ok()?, meta.len()))
}

/// The frontmatter with a text `id`, and that id. A number or boolean id becomes its
/// text; a missing or empty one is `known()` when that gives one, else generated (placed
/// first); any other value is kept as `previous_id` so nothing the person wrote is lost.
fn with_id(mut frontmatter: Frontmatter, known: impl FnOnce() -> Option<String>) -> (Frontmatter, String) {
    let kept = match frontmatter.get("id") {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::Bool(b)) => Some(b.to_string()),
        _ => None,
    };
    if let Some(id) = kept {
        frontmatter.set("id", Value::String(id.clone()));
        return (frontmatter, id);
    }
    let id = known().unwrap_or_else(|| EntryId::generate().as_str().to_string());
    let mut with = Frontmatter::new();
    with.set("id", Value::String(id.clone()));
    for (key, value) in frontmatter.iter() {
        match (key.as_str(), value) {
            ("id", Value::Null) | ("id", Value::String(_)) => {}
            ("id", other) => with.set("previous_id", other.clone()),
            _ => with.set(key.clone(), value.clone()),
        }
    }
    (with, id)
}
