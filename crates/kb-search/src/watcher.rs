//! [`VaultWatcher`]: follows edits made outside kb (an editor, Obsidian, `git pull`) while
//! kb runs, so they reach the index within about a second.
//!
//! Every folder notes may be in is watched (not `.kb/`, `.git/`, `.obsidian/` or folders the
//! vault's patterns leave out). File events are mapped to note paths as they arrive; events
//! on anything that is not a note (files that are not visible `.md` files, hidden or left
//! out ones) and events that only say a file was opened or read are dropped there.
//! What is left gathers into one batch until the vault has been quiet for [`DEBOUNCE`] (or,
//! in a vault that never rests, for at most [`MAX_GATHER`]). A batch is one pass: its paths
//! are brought in line with their files in one call ([`TantivyIndex::sync_paths`]: one
//! index commit, made by the owner when another process owns the index), then [`OnChange`]
//! is called with each path whose entry changed. A file whose stamp matches what is indexed
//! — kb's own writes, already indexed by the change observer — is not read again. Events
//! arriving while a batch is handled form the next one, so a `git pull` that changes
//! thousands of files is one batch, or a few, never one per file. Events that cannot be
//! mapped to single files (a folder made, removed or renamed; the system losing events)
//! make the batch a full [`TantivyIndex::reconcile`], and folders made since are watched.
//! A server settles the watcher before it answers ([`WatchSettler`], in `settle`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kb_domain::sync::lock;
use kb_domain::{EntryPath, VaultFiles};
use notify::event::{AccessKind, AccessMode};
use notify::event::{ModifyKind, RemoveKind};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

pub use self::settle::WatchSettler;
use self::settle::{Fences, fence_number};
use crate::error::WatchError;
use crate::index::TantivyIndex;

mod settle;

/// How long the vault must be quiet (no event on an entry) before a batch is handled.
pub const DEBOUNCE: Duration = Duration::from_millis(200);

/// The longest a batch keeps gathering while events keep coming: a vault that never rests
/// is still followed, a batch at least this often.
pub const MAX_GATHER: Duration = Duration::from_secs(1);

/// The folder in the index folder where [`WatchSettler::settle`] makes its fences.
const FENCE_FOLDER: &str = "watch-fences";

/// Called once per batch with the entry paths whose indexed entry changed because of an
/// outside edit (so kb-core can refresh the vault's cache: `Vault::follow_all`); of every path of the batch
/// when the index could not follow them (the vault's view follows the files all the same).
pub type OnChange = Arc<dyn Fn(&[EntryPath]) + Send + Sync>;

/// Watches a vault for outside edits while it lives; dropping it stops watching (after
/// the batch being handled, if any, is done).
pub struct VaultWatcher {
    /// The system's watcher and the folders it watches (shared with the worker, which
    /// watches folders made later).
    watches: Arc<Mutex<Watches>>,
    batcher: Arc<Batcher>,
    /// Where this watcher's fences are made, when it could watch that folder.
    fences: Option<Arc<Fences>>,
    worker: Option<JoinHandle<()>>,
    root: PathBuf,
}

impl std::fmt::Debug for VaultWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VaultWatcher").field("root", &self.root).finish()
    }
}

impl VaultWatcher {
    /// Starts watching the vault of `index`: every folder notes may be in.
    pub fn start(index: Arc<TantivyIndex>, on_change: Option<OnChange>) -> Result<VaultWatcher, WatchError> {
        let root = index.vault_root().to_path_buf();
        let error = |e: notify::Error| WatchError { path: root.clone(), reason: e.to_string() };
        let fence_dir = index.index_dir().join(FENCE_FOLDER);
        let batcher = Arc::new(Batcher { fence_dir: fence_dir.clone(), ..Batcher::default() });
        let intake = Arc::clone(&batcher);
        let files = Arc::clone(index.files());
        let intake_files = Arc::clone(&files);
        let watcher = RecommendedWatcher::new(
            move |event: notify::Result<Event>| intake.take(intake_files.as_ref(), event),
            notify::Config::default(),
        )
        .map_err(error)?;
        // Each folder on its own, not the root recursively: kb's own state in `.kb/` (the
        // index's files change on every commit), `.git/` and left-out folders hold no notes,
        // and their events would only crowd the queue.
        let mut watches = Watches { watcher, folders: HashSet::new() };
        watches.watcher.watch(&root, RecursiveMode::NonRecursive).map_err(error)?;
        watches.folders.insert(root.clone());
        watches.follow(files.as_ref());
        let fences = match Fences::watched(&mut watches, fence_dir) {
            Ok(fences) => Some(Arc::new(fences)),
            Err(error) => {
                tracing::warn!(%error, "outside edits cannot be settled on request");
                None
            }
        };
        let watches = Arc::new(Mutex::new(watches));
        let worker = {
            let (batcher, watches) = (Arc::clone(&batcher), Arc::clone(&watches));
            std::thread::Builder::new()
                .name("kb-vault-watcher".into())
                .spawn(move || {
                    while let Some(plan) = batcher.next() {
                        if plan.rescan {
                            // A folder made (again) since: its files are followed too.
                            lock(&watches).follow(files.as_ref());
                        }
                        handle(&index, on_change.as_ref(), plan, &batcher.handled);
                        lock(&batcher.pending).done += 1;
                        batcher.settled.notify_all();
                    }
                })
                .map_err(|e| WatchError { path: root.clone(), reason: e.to_string() })?
        };
        Ok(VaultWatcher { watches, batcher, fences, worker: Some(worker), root })
    }

    /// A handle that settles this watcher's outside edits (see [`WatchSettler::settle`]);
    /// `None` when its fence folder could not be watched.
    pub fn settler(&self) -> Option<WatchSettler> {
        let fences = Arc::clone(self.fences.as_ref()?);
        Some(WatchSettler { batcher: Arc::clone(&self.batcher), fences })
    }

    /// How many batches of outside edits this watcher has handled (each is one pass over
    /// its paths and at most one index commit); events that concern no entry make none.
    pub fn batches_handled(&self) -> u64 {
        self.batcher.handled.load(Ordering::Acquire)
    }
}

impl Drop for VaultWatcher {
    /// Stops taking events, drops what is waiting, and lets the batch being handled end.
    fn drop(&mut self) {
        if let Ok(mut watches) = self.watches.lock() {
            let Watches { watcher, folders } = &mut *watches;
            for folder in folders.drain() {
                let _ = watcher.unwatch(&folder);
            }
        }
        lock(&self.batcher.pending).stopped = true;
        self.batcher.wake.notify_all();
        self.batcher.settled.notify_all();
        if let Some(worker) = self.worker.take()
            && worker.thread().id() != std::thread::current().id()
        {
            let _ = worker.join();
        }
    }
}

/// The system's watcher and the folders it was asked to watch.
struct Watches {
    watcher: RecommendedWatcher,
    folders: HashSet<PathBuf>,
}

impl Watches {
    /// Watches each folder notes may be in that exists now (again, after it was made anew:
    /// a removed folder's watch ends with it, so every folder is asked again).
    fn follow(&mut self, files: &dyn VaultFiles) {
        for folder in files.note_folders() {
            match self.watcher.watch(&folder, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.folders.insert(folder);
                }
                Err(error) => tracing::warn!(%error, folder = %folder.display(), "folder cannot be watched"),
            }
        }
    }
}

/// The events taken in and not yet handled, and the worker's wake-up.
#[derive(Default)]
struct Batcher {
    pending: Mutex<Pending>,
    wake: Condvar,
    /// Wakes whoever settles: a fence was taken in, or a batch is done.
    settled: Condvar,
    /// Batches handled so far.
    handled: AtomicU64,
    /// The folder of the fences (their events are no edits).
    fence_dir: PathBuf,
}

#[derive(Default)]
struct Pending {
    plan: Plan,
    /// When the batch's first and last events came (`None`: no batch).
    first: Option<Instant>,
    last: Option<Instant>,
    /// The watcher is being dropped: the worker ends.
    stopped: bool,
    /// The fences made and taken in whose settle has not seen them yet (see
    /// [`WatchSettler`]).
    fences_seen: HashSet<u64>,
    /// Someone is settling: the batch gathered is handled without waiting for quiet.
    urgent: bool,
    /// Batches handed to the worker, and those it has finished (`OnChange` included).
    taken: u64,
    done: u64,
}

impl Batcher {
    /// Waits on [`Batcher::settled`] until `done` holds; whether it did before `deadline`
    /// (and before the watcher stopped).
    fn wait_until(
        &self,
        mut pending: std::sync::MutexGuard<'_, Pending>,
        deadline: Instant,
        mut done: impl FnMut(&mut Pending) -> bool,
    ) -> bool {
        while !done(&mut pending) {
            let now = Instant::now();
            if pending.stopped || now >= deadline {
                return false;
            }
            pending = self
                .settled
                .wait_timeout(pending, deadline - now)
                .map_or_else(|e| e.into_inner().0, |(g, _)| g);
        }
        true
    }

    /// Takes in one event from the system (on its thread): adds what it says about
    /// entries to the batch; an event about nothing kb follows is dropped here.
    fn take(&self, files: &dyn VaultFiles, event: notify::Result<Event>) {
        let mut pending = lock(&self.pending);
        if let Ok(event) = &event
            && let Some(number) = event.paths.iter().find_map(|p| fence_number(&self.fence_dir, p))
        {
            // A fence's making is the one event its settle waits for; writing and removing
            // it are no news.
            if matches!(event.kind, EventKind::Create(_)) {
                pending.fences_seen.insert(number);
                self.settled.notify_all();
            }
            return;
        }
        let relevant = match event {
            // Events may have been lost: look at everything.
            Ok(event) if event.need_rescan() => pending.plan.rescan_all(),
            Ok(event) => pending.plan.add(files, &event.kind, event.paths),
            Err(error) => {
                // Events may have been lost: look at everything.
                tracing::warn!(%error, "file watcher error");
                pending.plan.rescan_all()
            }
        };
        if relevant {
            let now = Instant::now();
            pending.first.get_or_insert(now);
            pending.last = Some(now);
            self.wake.notify_one();
        }
    }

    /// Waits for the next batch: once the vault has been quiet for [`DEBOUNCE`] since its
    /// last event, or [`MAX_GATHER`] after its first. `None` once the watcher is dropped.
    fn next(&self) -> Option<Plan> {
        let mut pending = lock(&self.pending);
        loop {
            if pending.stopped {
                return None;
            }
            let wait = match (pending.first, pending.last) {
                (Some(first), Some(last)) => {
                    let now = Instant::now();
                    let quiet = now.saturating_duration_since(last);
                    let gathering = now.saturating_duration_since(first);
                    if pending.urgent || quiet >= DEBOUNCE || gathering >= MAX_GATHER {
                        pending.first = None;
                        pending.last = None;
                        pending.urgent = false;
                        pending.taken += 1;
                        return Some(std::mem::take(&mut pending.plan));
                    }
                    Some((DEBOUNCE - quiet).min(MAX_GATHER - gathering))
                }
                _ => None,
            };
            pending = match wait {
                Some(wait) => {
                    self.wake.wait_timeout(pending, wait).map_or_else(|e| e.into_inner().0, |(g, _)| g)
                }
                None => self.wake.wait(pending).unwrap_or_else(std::sync::PoisonError::into_inner),
            };
        }
    }
}

/// What a batch of events asks for.
#[derive(Debug, Default, PartialEq)]
struct Plan {
    /// Look at every file again.
    rescan: bool,
    /// Look at these files (each once, in the order of their first event).
    paths: Vec<EntryPath>,
    /// The same paths, to keep them unique at any size.
    seen: HashSet<EntryPath>,
    /// Folders made, removed or renamed (vault-relative): files may have come into them
    /// before the watcher followed them.
    folders: HashSet<String>,
}

impl Plan {
    /// Looks at every file again (events may have been lost); an event saying so concerns
    /// what kb follows.
    fn rescan_all(&mut self) -> bool {
        self.rescan = true;
        true
    }

    /// Adds what one event about `paths` says; whether it concerns anything kb follows.
    fn add(&mut self, files: &dyn VaultFiles, kind: &EventKind, paths: Vec<PathBuf>) -> bool {
        // A file opened or read (kb reading entries, a backup tool) is no change.
        if matches!(kind, EventKind::Access(access) if *access != AccessKind::Close(AccessMode::Write)) {
            return false;
        }
        let mut relevant = false;
        for path in paths {
            if let Some(entry) = files.entry_path_of(&path) {
                relevant = true;
                if self.seen.insert(entry.clone()) {
                    self.paths.push(entry);
                }
            } else if let Some(folder) = folder_of_event(files, kind, &path) {
                relevant = true;
                self.rescan = true;
                self.folders.insert(folder);
            }
        }
        relevant
    }
}

/// The folder an event is about, when it is about a whole folder notes may be in (made,
/// removed or renamed), vault-relative. Events on the root itself are not: its listing
/// changes whenever kb writes its entry list file.
fn folder_of_event(files: &dyn VaultFiles, kind: &EventKind, path: &Path) -> Option<String> {
    let folder = files.note_folder_of(path)?;
    // A path that is no folder now is one only if the event says so: a folder removed, or
    // renamed away (a name without an extension: a file's rename would name its type).
    let was_folder = matches!(kind, EventKind::Remove(RemoveKind::Folder))
        || (matches!(kind, EventKind::Modify(ModifyKind::Name(_))) && path.extension().is_none());
    (was_folder || path.is_dir()).then_some(folder)
}

/// Whether `path` is in one of `folders` (vault-relative), directly or deeper.
fn in_any_folder(path: &EntryPath, folders: &HashSet<String>) -> bool {
    folders.iter().any(|folder| !folder.is_empty() && path.is_within(folder))
}

/// Handles one batch: one sync of its paths (or one reconcile), counts it in `handled`,
/// then calls `on_change` with each path whose entry changed (so whoever is called with
/// the last path finds the batch counted).
fn handle(index: &TantivyIndex, on_change: Option<&OnChange>, plan: Plan, handled: &AtomicU64) {
    let changed = if plan.rescan {
        match index.reconcile_changes(None) {
            Ok((stats, mut changed)) => {
                tracing::debug!(?stats, "vault rescanned");
                // Where another process owns the index it may have indexed these already:
                // they are changes to this process all the same. So are the files of a
                // category folder made since (the first entry another process filed there):
                // they came before this watcher followed the folder, and sent it no event.
                if !index.is_owner() {
                    let mut known: HashSet<EntryPath> = changed.iter().cloned().collect();
                    let arrived = index
                        .files()
                        .entry_files()
                        .into_iter()
                        .map(|(path, _)| path)
                        .filter(|path| in_any_folder(path, &plan.folders));
                    for path in plan.paths.into_iter().chain(arrived) {
                        if known.insert(path.clone()) {
                            changed.push(path);
                        }
                    }
                }
                changed
            }
            Err(error) => {
                tracing::error!(%error, "vault rescan failed");
                Vec::new()
            }
        }
    } else {
        match index.sync_paths(&plan.paths) {
            Ok(changed) => changed,
            Err(error) => {
                tracing::error!(%error, "search index could not follow outside edits");
                // This process's view of the vault follows the files all the same.
                plan.paths.clone()
            }
        }
    };
    tracing::debug!(paths = plan.seen.len(), changed = changed.len(), "outside edits followed");
    handled.fetch_add(1, Ordering::AcqRel);
    if let Some(on_change) = on_change
        && !changed.is_empty()
    {
        on_change(&changed);
    }
}

#[cfg(test)]
mod tests {
    use notify::event::{CreateKind, ModifyKind};

    use super::*;

    fn plan(
        files: &dyn VaultFiles,
        events: impl IntoIterator<Item = (bool, EventKind, Vec<PathBuf>)>,
    ) -> Plan {
        let mut plan = Plan::default();
        for (rescan, kind, paths) in events {
            if rescan {
                plan.rescan_all();
            } else {
                plan.add(files, &kind, paths);
            }
        }
        plan
    }

    #[test]
    fn events_become_paths_or_a_rescan() {
        let dir = tempfile::tempdir().unwrap();
        let files = kb_storage::vault::EntryFiles::new(dir.path()).unwrap();
        let v = files.root().to_path_buf();
        let p = |s: &str| v.join(s);
        let write = EventKind::Modify(ModifyKind::Any);
        let got = plan(
            &files,
            [
                (false, EventKind::Create(CreateKind::File), vec![p("ideas/a.md"), p("ideas/.a.md.tmp")]),
                (false, write, vec![p("ideas/a.md")]),
                (false, EventKind::Access(AccessKind::Close(AccessMode::Write)), vec![p("ideas/b.md")]),
            ],
        );
        let a = EntryPath::parse("ideas/a.md").unwrap();
        let b = EntryPath::parse("ideas/b.md").unwrap();
        assert!(!got.rescan);
        assert_eq!(got.paths, vec![a, b]);
        assert!(!plan(&files, [(false, write, vec![p("ideas")])]).rescan, "no folder there");
        std::fs::create_dir_all(p("Journal/2025")).unwrap();
        let made = plan(&files, [(false, EventKind::Create(CreateKind::Folder), vec![p("Journal/2025")])]);
        assert!(made.rescan && made.folders.contains("Journal/2025"));
        let removed = EventKind::Remove(notify::event::RemoveKind::Folder);
        assert!(plan(&files, [(false, removed, vec![p("Work")])]).folders.contains("Work"));
        let note = EntryPath::parse("Journal/2025/Day one.md").unwrap();
        assert_eq!(plan(&files, [(false, write, vec![p("Journal/2025/Day one.md")])]).paths, vec![note]);
        assert!(!plan(&files, [(false, removed, vec![p(".obsidian/plugins")])]).rescan);
        // The root itself changes whenever kb writes its entry list file: no rescan for that.
        assert!(!plan(&files, [(false, write, vec![v.clone()])]).rescan);
        assert!(plan(&files, [(true, EventKind::Other, vec![])]).rescan);
        assert!(!plan(&files, [(false, write, vec![p(".kb/index/x")])]).rescan);
        assert!(!plan(&files, [(false, write, vec![PathBuf::from("/elsewhere/ideas/a.md")])]).rescan);
    }

    #[test]
    fn reads_and_files_that_are_not_entries_are_no_change() {
        let dir = tempfile::tempdir().unwrap();
        let files = kb_storage::vault::EntryFiles::new(dir.path()).unwrap();
        let v = files.root().to_path_buf();
        let mut plan = Plan::default();
        let write = EventKind::Modify(ModifyKind::Any);
        for (kind, path) in [
            (EventKind::Access(AccessKind::Open(AccessMode::Any)), "ideas/a.md"),
            (EventKind::Access(AccessKind::Close(AccessMode::Read)), "ideas/a.md"),
            (write, ".git/index"),
            (write, ".kb/index/meta.json"),
            (write, "ideas/notes.txt"),
            (write, "ideas/sub/deep.md~"),
            (write, "ideas/.hidden.md"),
            (write, ".obsidian/workspace.md"),
            (write, "Notes/.trash/old.md"),
        ] {
            assert!(!plan.add(&files, &kind, vec![v.join(path)]), "{path} {kind:?}");
        }
        assert_eq!(plan, Plan::default());
    }

    #[test]
    fn thousands_of_paths_are_kept_once_each_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let files = kb_storage::vault::EntryFiles::new(dir.path()).unwrap();
        let v = files.root().to_path_buf();
        let mut plan = Plan::default();
        let write = EventKind::Modify(ModifyKind::Any);
        for round in 0..3 {
            for n in 0..5_000 {
                assert!(plan.add(&files, &write, vec![v.join(format!("ideas/n{n}.md"))]), "{round}");
            }
        }
        assert_eq!(plan.paths.len(), 5_000);
        assert_eq!(plan.paths[4_999].to_string(), "ideas/n4999.md");
    }
}
