//! The markdown vault adapter: [`Vault`], kb's [`kb_domain::EntryRepository`] over a folder of
//! markdown files with YAML frontmatter, one entry per file.
//!
//! - `open` creates `.kb/`, joins the kb processes of the vault (`presence`), finishes
//!   interrupted moves when it is the only one (`journal`), and builds the in-memory
//!   `cache` of records, references and links from the saved catalogue, reading only the
//!   files whose stamps changed (`catalogue`, `saved_catalogue`); `list` and `index.md`
//!   (`entry_list`) are answered from it without reading the files again.
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
//!
//! `Vault` holds the parts, each owning its state: the cache under the main lock, the
//! entry list file and its schedule (`entry_list_file`), the observers (`observers`),
//! what sweeps keep between them (`sweep`), this process's presence and the write lock
//! shared with the other kb processes (`presence`), and the history log (`recorder`).
//! Its methods are spread by concern: changes in `writes` and `moves`, following changes
//! made elsewhere in `reread` and `sweep`, history in `revisions`, merges in `merge`, and
//! the ports of kb-domain it answers in `ports`.

pub(crate) mod atomic;
mod attachments;
#[cfg(test)]
mod background_tests;
mod cache;
mod catalogue;
mod conflicts;
mod derived;
mod entry_list;
mod entry_list_file;
mod entry_list_keep;
mod entry_list_patch;
mod entry_list_schedule;
mod files;
mod folder_marks;
mod history_checked;
mod journal;
mod kept_files;
mod lazy_links;
mod merge;
mod moves;
mod observers;
mod ports;
pub(crate) mod presence;
mod recorder;
mod reread;
mod revisions;
mod safe_path;
mod saved_catalogue;
mod scan;
mod scope;
mod stamping;
mod sweep;
#[cfg(test)]
mod tests;
mod undo;
mod uploads;
mod writes;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use kb_domain::fields::keys;
use kb_domain::{
    ChangeObserver, Clock, EntryChange, EntryId, EntryPath, Frontmatter, ListFilter, RepositoryError,
    RevisionLog,
};
use serde_json::Value;

pub use self::files::EntryFiles;
pub use self::uploads::{KeptFile, Upload, UploadError};
pub use kb_domain::conflicts::Resolved;

/// Where kb writes the entry list of the vault at `root` (the file a vault opened there
/// would choose), or `None` when `index.md` and `kb-index.md` are both the person's.
pub fn entry_list_file_of(root: &Path) -> Option<PathBuf> {
    entry_list::choose_file(root).0
}

use self::cache::Cache;
use self::entry_list_file::EntryListFile;
use self::observers::Observers;
use self::presence::{Joined, Presence, WriteLock};
use self::recorder::Recorder;
use self::safe_path::{Root, io_error};
use self::sweep::SweepState;

/// The most changed paths the entry list file is patched for: each new line is placed by
/// a look through its section, so more (a `git pull`) render the whole list at once.
const PATCH_AT_MOST: usize = 64;

/// The markdown vault on disk.
pub struct Vault {
    root: Root,
    clock: Arc<dyn Clock>,
    /// The cache, under the lock serialising changes in this process.
    state: Mutex<State>,
    /// The entry list file kb writes, and when.
    entry_list: EntryListFile,
    /// Who is notified of every change.
    observers: Observers,
    /// What the sweeps keep between them.
    sweeps: SweepState,
    /// This process's shared hold on the vault, for as long as it is open.
    _presence: Presence,
    /// Serialises changes to entries with other kb processes.
    writes: WriteLock,
    /// Where each change is recorded, when history is kept.
    history: Recorder,
    /// The cache version this process last saved the catalogue from (0: none yet).
    catalogue_saved: AtomicU64,
    /// Whether the cache is built, readable without the lock (see [`Vault::counts_if_built`]).
    built: AtomicBool,
    /// The walk of the folders the index's opening made, for the cache's first build to
    /// use instead of walking again.
    recent_walk: files::RecentWalk,
    /// The saved catalogue being loaded ahead of the first build (see
    /// [`Vault::load_catalogue_in_background`]).
    preloading: Mutex<Option<std::thread::JoinHandle<saved_catalogue::SavedCatalogue>>>,
    /// The vault's files that are not notes, listed when a link first needs them.
    attachments: attachments::KnownAttachments,
}

/// Which parts of the view the first build makes (see [`Vault::read_entries`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Parts {
    /// Each part when first asked for (a one-shot command).
    WhenAsked,
    /// Every part at once (a long-running process, in the background at start).
    All,
}

/// What the main lock guards: the cache.
struct State {
    cache: Cache,
    /// Whether the cache holds the vault's entries yet (see [`Vault::lock`]).
    built: bool,
    /// When the walk whose stamps the cache holds began (see [`Vault::save_catalogue`]).
    stamps_since: std::time::SystemTime,
    /// Entries the opening read again whose lines the entry list file may lack: patched
    /// with the next change's (a command's change: one patch of the file, not two), or
    /// by [`Vault::flush`].
    entry_list_pending: Vec<EntryPath>,
    /// What the background writer's next pass brings up to date: these entries' lines,
    /// or (`None`) the whole list.
    entry_list_queued: Option<Vec<EntryPath>>,
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vault").field("root", &self.root.dir()).finish_non_exhaustive()
    }
}

impl Vault {
    /// Opens (creating when needed) the vault at `root`: makes `.kb/`, finishes
    /// interrupted moves when no other kb process has the vault open, builds its view of
    /// the entries from the saved catalogue and the files that changed since, and writes
    /// the entry list file if files changed.
    pub fn open(root: impl Into<PathBuf>, clock: Arc<dyn Clock>) -> Result<Vault, RepositoryError> {
        Vault::open_with(root.into(), clock, None, &[])
    }

    /// [`Vault::open`], recording every change in `history` (see [`Vault::check_history`]
    /// for changes made while kb was not running).
    pub fn open_with_history(
        root: impl Into<PathBuf>,
        clock: Arc<dyn Clock>,
        history: Arc<dyn RevisionLog>,
    ) -> Result<Vault, RepositoryError> {
        Vault::open_with(root.into(), clock, Some(history), &[])
    }

    /// [`Vault::open_with_history`], also leaving out of the vault the files and folders
    /// `exclude` names (`.gitignore` patterns, as `KB_EXCLUDE` gives them), beside what
    /// its `.gitignore` and `.kbignore` ignore.
    pub fn open_excluding(
        root: impl Into<PathBuf>,
        clock: Arc<dyn Clock>,
        history: Arc<dyn RevisionLog>,
        exclude: &[String],
    ) -> Result<Vault, RepositoryError> {
        Vault::open_with(root.into(), clock, Some(history), exclude)
    }

    #[tracing::instrument(skip_all, fields(root))]
    fn open_with(
        dir: PathBuf,
        clock: Arc<dyn Clock>,
        history: Option<Arc<dyn RevisionLog>>,
        exclude: &[String],
    ) -> Result<Vault, RepositoryError> {
        tracing::Span::current().record("root", tracing::field::display(dir.display()));
        // Only kb's own state folder is made (with the vault's, when there is none yet): a
        // category folder is made when kb first files an entry there, so opening a vault
        // someone already keeps adds nothing to it.
        let state_folder = dir.join(safe_path::STATE_DIR);
        fs::create_dir_all(&state_folder).map_err(|e| io_error(&state_folder, e))?;
        let root = Root::excluding(dir, exclude)?;
        let state_dir = root.state_dir();
        let presence = match Presence::join(&state_dir).map_err(|e| io_error(&state_dir, e))? {
            Joined::Alone(presence) => {
                journal::recover(&root)?;
                atomic::remove_leftover_temps_of(&root);
                presence.share().map_err(|e| io_error(&state_dir, e))?;
                presence
            }
            // Another process may be moving an entry this very moment: its journal is
            // live, and finishing it here could delete the entry's only copy.
            Joined::Shared(presence) => presence,
        };
        let writes = WriteLock::open(&state_dir).map_err(|e| io_error(&state_dir, e))?;
        let entry_list = EntryListFile::choose(root.dir());
        let history = Recorder::new(history, Arc::clone(&clock), state_dir.clone());
        // The entries are read when first needed (see `Vault::lock`): a command that needs
        // only the search index never reads them.
        let vault = Vault {
            root,
            clock,
            state: Mutex::new(State {
                cache: Cache::default(),
                built: false,
                stamps_since: std::time::UNIX_EPOCH,
                entry_list_pending: Vec::new(),
                entry_list_queued: None,
            }),
            entry_list,
            observers: Observers::default(),
            sweeps: SweepState::default(),
            _presence: presence,
            writes,
            history,
            catalogue_saved: AtomicU64::new(0),
            built: AtomicBool::new(false),
            recent_walk: files::RecentWalk::default(),
            preloading: Mutex::new(None),
            attachments: attachments::KnownAttachments::default(),
        };
        Ok(vault)
    }

    /// Starts loading the saved catalogue on a thread of its own, so the first use of the
    /// entries finds it loaded: a start then loads it while the search index opens, rather
    /// than after (about 0.4 s at 100,000 entries). A process that never needs the entries
    /// (a one-shot search) leaves it unused.
    pub fn load_catalogue_in_background(&self) {
        let state_dir = self.root.state_dir();
        let started = std::thread::Builder::new()
            .name("kb-catalogue-load".into())
            .spawn(move || saved_catalogue::SavedCatalogue::load(&state_dir));
        match started {
            Ok(loading) => *kb_domain::sync::lock(&self.preloading) = Some(loading),
            Err(error) => tracing::debug!(%error, "the saved catalogue is loaded when first needed"),
        }
    }

    /// Reads the entries now, when nothing has yet: the vault's view of them starts from
    /// the files as they are at this moment (else from its first use). Every part of the
    /// view (list orders, names, digest facts) is built too, before the view counts as
    /// built, and the links are resolved whole at their first use rather than note by
    /// note: a long-running process calls this in the background at start.
    pub fn read_entries(&self) {
        let mut state = kb_domain::sync::lock(&self.state);
        if state.built {
            state.cache.build_parts();
        } else {
            self.build(&mut state, Parts::All);
        }
    }

    /// The vault's root folder.
    pub fn root(&self) -> &Path {
        self.root.dir()
    }

    /// The vault's entry files, read-only (the [`kb_domain::VaultFiles`] port, for the
    /// search index): the same rule of which files are entries as the vault's own. Until
    /// [`EntryFiles::end_keeping_walks`], a walk of the folders it makes (the index's opening) is
    /// kept for the cache's first build, so a start walks the vault once.
    pub fn files(&self) -> EntryFiles {
        EntryFiles::keeping_walks(self.root.clone(), self.recent_walk.clone())
    }

    /// How many times the background writer (see [`Vault::write_entry_list_in_background`])
    /// has brought the entry list file up to date: one per burst of changes, however many
    /// entries it touched (thousands followed after a `git pull` are one, or one a second
    /// while they keep coming). For tests and diagnostics.
    pub fn background_entry_list_writes(&self) -> u64 {
        self.entry_list.schedule().passes()
    }

    /// Adds an observer notified of every change (after it is on disk, before the call that
    /// made it returns, in the order of the changes). Observers must not call back into
    /// the vault.
    pub fn add_observer(&self, observer: Arc<dyn ChangeObserver>) {
        self.observers.add(observer);
    }

    /// Where kb writes its entry list (`index.md`, or `kb-index.md` when `index.md` is the
    /// person's own); `None` when both names are the person's.
    pub fn entry_list_file(&self) -> Option<PathBuf> {
        self.entry_list.file()
    }

    /// Why kb is not writing its entry list to `index.md`, when it is not.
    pub fn entry_list_notice(&self) -> Option<String> {
        self.entry_list.notice()
    }

    /// The text of the entry file at `path`, as it is on disk (refused outside the vault;
    /// `NotFound` when there is no such file).
    pub fn read_text(&self, path: &EntryPath) -> Result<String, RepositoryError> {
        let file = self.root.checked_file(path)?;
        fs::read_to_string(&file).map_err(|e| io_error(&file, e))
    }

    /// How many entries and notes a list of everything counts, and how many files cannot
    /// be read, when the vault's view is built already; `None` while it is being built or
    /// before it is (nothing waits for the build; a built view's lock is waited for, as
    /// every read of it does).
    pub fn counts_if_built(&self) -> Option<(usize, usize)> {
        if !self.built.load(Ordering::Acquire) {
            return None;
        }
        let mut state = self.lock();
        let everything = ListFilter { limit: 1, ..ListFilter::default() };
        Some((state.cache.list(&everything).total, state.cache.malformed().len()))
    }

    /// The lock serialising changes. A panic while holding it leaves the cache as
    /// consistent as the files (each step updates it after the disk), so poisoning is
    /// ignored. The entry list file's lock is taken after it or alone. The first lock
    /// builds the cache from what the opening found.
    fn lock(&self) -> MutexGuard<'_, State> {
        let mut state = kb_domain::sync::lock(&self.state);
        if !state.built {
            self.build(&mut state, Parts::WhenAsked);
        }
        state
    }

    /// Builds the cache at its first use: from the saved catalogue and the files whose
    /// stamps changed (see `catalogue`), with the walk of the folders the index's opening
    /// made a moment ago when there is one; then brings the entry list file up to date if
    /// files changed since the catalogue was saved (their lines, with the next change's or
    /// at [`Vault::flush`], unless the catalogue is saved now).
    fn build(&self, state: &mut State, parts: Parts) {
        state.built = true;
        // Loaded ahead when it was asked for (a thread that panicked: loaded here instead);
        // with no walk made by the index's opening, the folders are walked meanwhile.
        let loading = kb_domain::sync::lock(&self.preloading).take();
        let walk = self.recent_walk.take().unwrap_or_else(|| files::Walk::now(&self.root));
        let loaded = loading.and_then(|loading| loading.join().ok());
        let opened = catalogue::open(&self.root, walk, loaded);
        let (entries, malformed) = opened.entries.counts();
        tracing::info!(
            entries,
            malformed,
            from_saved = opened.from_saved,
            read = opened.read,
            "vault opened"
        );
        let (cache, malformed) = opened.entries.build();
        state.cache = cache;
        state.stamps_since = opened.began;
        // When the vault is as the catalogue saved it, the entry list file is as the last
        // kb process left it after its last change: rendering the whole list again would
        // cost a large vault's start for nothing (a long-running process checks it anyway,
        // in the background). When some files changed since, only their lines change.
        match opened.changed {
            None => {}
            Some(catalogue::Changed::Everything) => self.entry_list_due(state, None),
            // Kept for the change that usually follows, unless the catalogue is saved now:
            // a process stopped before patching would leave the list behind a catalogue that
            // no longer says the files changed.
            Some(catalogue::Changed::Files(paths)) if !opened.save => state.entry_list_pending = paths,
            Some(catalogue::Changed::Files(paths)) => self.entry_list_due(state, Some(&paths)),
        }
        // Saved after the entry list is written: a process stopped in between leaves the
        // old catalogue, and the next start sees the changes (and writes the list) again.
        if opened.save {
            self.save_opened(&state.cache, &malformed, opened.began);
        }
        // Built before the view counts as built: `/healthz` answers from the index meanwhile.
        if parts == Parts::All {
            state.cache.build_parts();
        }
        self.built.store(true, Ordering::Release);
    }

    /// From now on writes the entry list file off the request path: one background thread
    /// rewrites it at most once per burst of changes (within a fraction of a second of the
    /// last one), so no change waits for the whole entry list to be rendered. For processes
    /// that live long (`kb serve`); others write it after each change.
    pub fn write_entry_list_in_background(self: &Arc<Self>) {
        let schedule = Arc::clone(self.entry_list.schedule());
        if !schedule.defer() {
            return;
        }
        let vault = Arc::downgrade(self);
        let writer = Arc::clone(&schedule);
        let started = std::thread::Builder::new().name("kb-entry-list".into()).spawn(move || {
            crate::background::yield_to_requests();
            // First the file as the vault is now: an open that found the vault as saved did
            // not write it.
            match vault.upgrade() {
                Some(vault) => vault.write_entry_list_now(),
                None => return,
            }
            // Waits holding only the schedule, so the vault can close meanwhile.
            while writer.next(&vault).is_some() {
                let Some(vault) = vault.upgrade() else { return };
                let started = std::time::Instant::now();
                vault.write_entry_list_now();
                writer.pass_took(started.elapsed());
            }
        });
        if let Err(error) = started {
            tracing::warn!(%error, "could not start the entry list file's writer; writing it after each change");
            schedule.undefer();
        }
    }

    /// Brings the entry list file up to date now or (in the background) soon: now, when
    /// the paths `changed` are known and few, by changing only their lines (see
    /// [`EntryListFile::write_patched`]), else by writing the whole list.
    fn entry_list_due(&self, state: &mut State, changed: Option<&[EntryPath]>) {
        let pending = std::mem::take(&mut state.entry_list_pending);
        let merged: Vec<EntryPath>;
        let changed = match changed {
            Some(changed) if !pending.is_empty() => {
                let paths: std::collections::BTreeSet<EntryPath> =
                    pending.into_iter().chain(changed.iter().cloned()).collect();
                merged = paths.into_iter().collect();
                Some(merged.as_slice())
            }
            changed => changed,
        };
        let schedule = self.entry_list.schedule();
        if schedule.is_deferred() {
            // The pass patches the lines of what changed since the last one, when it knows
            // them and they are few: a burst of captures in a large vault is then a read
            // and a write of the file, not every entry rendered again each second.
            state.entry_list_queued = match (state.entry_list_queued.take(), changed) {
                (Some(mut queued), Some(changed)) => {
                    queued.extend(changed.iter().cloned());
                    (queued.len() <= PATCH_AT_MOST).then_some(queued)
                }
                _ => None,
            };
            schedule.mark_due();
        } else if let Some(changed) = changed.filter(|changed| changed.len() <= PATCH_AT_MOST) {
            let patch = state.cache.entry_list_patch(changed);
            self.entry_list.write_patched(&patch, || state.cache.entry_list_snapshot());
        } else {
            self.entry_list.write(state.cache.entry_list_snapshot());
        }
    }

    /// Brings the entry list file up to date and notifies the observers (the changes of one
    /// operation together). When the file is patched now (a command's change, not left to
    /// the background writer), the observers (the search index's commit) are notified on
    /// another thread meanwhile; both are done when this returns.
    fn changed(&self, state: &mut State, changes: &[EntryChange]) {
        self.changed_by(state, changes, None);
    }

    /// [`Vault::changed`] for changes `person` asked for (`None`: no one in particular).
    fn changed_by(&self, state: &mut State, changes: &[EntryChange], person: Option<&str>) {
        let paths: Vec<EntryPath> = changes.iter().map(|change| change.path().clone()).collect();
        if self.entry_list.schedule().is_deferred() {
            self.entry_list_due(state, Some(&paths));
            self.observers.notify(changes, person);
            return;
        }
        // The observers' work is logged in the span of the change.
        let span = tracing::Span::current();
        std::thread::scope(|scope| {
            let notifying = std::thread::Builder::new()
                .name("kb-observers".into())
                .spawn_scoped(scope, || span.in_scope(|| self.observers.notify(changes, person)));
            self.entry_list_due(state, Some(&paths));
            match notifying {
                // A panic of an observer is the caller's, as when it ran on this thread.
                Ok(notifying) => {
                    if let Err(panic) = notifying.join() {
                        std::panic::resume_unwind(panic);
                    }
                }
                Err(_) => self.observers.notify(changes, person),
            }
        });
    }

    /// [`Vault::changed`] for a change kb made as asked (not one it followed): once it
    /// touches an entry of a category folder, the entry list file is kept from now on,
    /// created if it is not there (an edit of the person's other notes creates none).
    /// `person` asked for it, when one of the people kb serves did.
    fn made(&self, state: &mut State, changes: &[EntryChange], person: Option<&str>) {
        let touches_an_entry = changes.iter().any(|change| match change {
            EntryChange::Upserted(entry) => entry.category().is_folder(),
            EntryChange::Removed(path) => path.category().is_folder(),
        });
        if touches_an_entry {
            self.entry_list.keep();
        }
        self.changed_by(state, changes, person);
    }

    /// Brings the entry list file up to date now: by changing only the lines of the
    /// entries changed since the last pass when they are known and few (see
    /// [`EntryListFile::write_patched`]), else by rendering the whole list from a snapshot
    /// of the cache taken now (see [`EntryListFile::write`]). Must not be called holding
    /// the main lock.
    fn write_entry_list_now(&self) {
        let patch = {
            let mut state = self.lock();
            let queued = state.entry_list_queued.replace(Vec::new());
            match queued {
                Some(mut paths) if paths.len() + state.entry_list_pending.len() <= PATCH_AT_MOST => {
                    paths.append(&mut state.entry_list_pending);
                    paths.sort();
                    paths.dedup();
                    Ok(state.cache.entry_list_patch(&paths))
                }
                _ => {
                    state.entry_list_pending.clear();
                    Err(state.cache.entry_list_snapshot())
                }
            }
        };
        match patch {
            Ok(patch) => self.entry_list.write_patched(&patch, || self.lock().cache.entry_list_snapshot()),
            Err(snapshot) => self.entry_list.write(snapshot),
        }
    }
}

impl Drop for Vault {
    fn drop(&mut self) {
        self.flush();
    }
}

impl Vault {
    /// Writes the entry list file when a change is waiting for the background writer: done
    /// when the vault is dropped; a process about to exit may call it and skip freeing the
    /// vault.
    pub fn flush(&self) {
        let schedule = self.entry_list.schedule();
        if schedule.is_deferred() && schedule.is_due() {
            self.write_entry_list_now();
        }
        // The lines of entries the opening read again, when no change came to patch them
        // along (a vault never built has none).
        let mut state = kb_domain::sync::lock(&self.state);
        if !state.entry_list_pending.is_empty() {
            self.entry_list_due(&mut state, Some(&[]));
        }
    }
}

/// The frontmatter with a text `id`, and that id. A number or boolean id becomes its
/// text; a missing or empty one is `known()` when that gives one, else generated (placed
/// first); any other value is kept as `previous_id` so nothing the person wrote is lost.
fn with_id(mut frontmatter: Frontmatter, known: impl FnOnce() -> Option<String>) -> (Frontmatter, String) {
    let kept = match frontmatter.get(keys::ID) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::Bool(b)) => Some(b.to_string()),
        _ => None,
    };
    if let Some(id) = kept {
        frontmatter.set(keys::ID, Value::String(id.clone()));
        return (frontmatter, id);
    }
    let id = known().unwrap_or_else(|| EntryId::generate().as_str().to_string());
    let mut with = Frontmatter::new();
    with.set(keys::ID, Value::String(id.clone()));
    for (key, value) in frontmatter.iter() {
        match (key.as_str(), value) {
            (keys::ID, Value::Null) | (keys::ID, Value::String(_)) => {}
            (keys::ID, other) => with.set(keys::PREVIOUS_ID, other.clone()),
            _ => with.set(key.clone(), value.clone()),
        }
    }
    (with, id)
}
