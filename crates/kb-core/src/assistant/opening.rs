//! How an [`Assistant`](super::Assistant) opens its vault and search index, and follows
//! the vault while it runs: the background reads, sweeps and watcher of a long-running
//! process.

use std::sync::Arc;

use kb_domain::Clock;
use kb_search::{OnChange, OpenOptions, TantivyIndex, VaultWatcher};
use kb_storage::vault::Vault;

use crate::changes::ChangeFeed;
use crate::error::CoreError;
use crate::index::SearchHandle;

/// Where the vault's files and its revision history are kept.
pub(super) struct Storage {
    /// The vault folder.
    pub(super) dir: std::path::PathBuf,
    /// The SQLite database (history, conversations, outreach).
    pub(super) database: String,
    /// Whether changes are also committed to git.
    pub(super) git: crate::config::GitMode,
    /// What the vault leaves out (`KB_EXCLUDE`).
    pub(super) exclude: Vec<String>,
    /// This device's name when the vault is synced (each revision names it).
    pub(super) device: Option<String>,
}

/// How the vault is opened: whether the process follows it, and whether its saved
/// catalogue is loaded while the index opens.
pub(super) struct Opening {
    pub(super) watch: bool,
    pub(super) preload: bool,
    /// Whether the index opens now, else when first searched (see [`SearchHandle`]).
    pub(super) search_at_start: bool,
}

/// Opens the vault and its search index (now, or at the first search) as `opening` says.
pub(super) fn open_vault_and_index(
    storage: &Storage,
    clock: Arc<dyn Clock>,
    options: OpenOptions,
    changes: ChangeFeed,
    Opening { watch, preload, search_at_start }: Opening,
) -> Result<(Arc<Vault>, Arc<SearchHandle>), CoreError> {
    let Storage { dir, database, git, exclude, device } = storage;
    let (dir, git) = (dir.as_path(), *git);
    if git == crate::config::GitMode::Commit {
        // Checked before anything is opened. The vault's folder is made on first use anyway;
        // when it cannot be, the check names it.
        let _ = std::fs::create_dir_all(dir);
        kb_storage::history::GitCommits::check(dir)?;
    }
    let mut log = kb_storage::history::HistoryLog::connect(database)?;
    if let Some(device) = device {
        log = log.on_device(device.clone());
    }
    let mut history: Arc<dyn kb_domain::RevisionLog> = Arc::new(log);
    if git == crate::config::GitMode::Commit {
        history = Arc::new(kb_storage::history::GitCommits::new(history, dir)?);
    }
    let vault = Arc::new(Vault::open_excluding(dir, clock, history, exclude)?);
    // The saved catalogue loads on the other core while the index opens.
    if preload {
        vault.load_catalogue_in_background();
    }
    let files = vault.files();
    let index = if search_at_start {
        // The folders are walked while the index loads: its catch-up compares the two, and
        // the vault's opening uses the same walk.
        files.walk_ahead();
        let index = crate::index::open_index_of(files.clone(), vault.root(), options);
        files.end_keeping_walks();
        let index = Arc::new(index?);
        share_writes(&index, &vault, &changes);
        Arc::new(SearchHandle::opened(index))
    } else {
        files.end_keeping_walks();
        let (root, follower, changes) = (vault.root().to_path_buf(), Arc::downgrade(&vault), changes.clone());
        let vectors = options.embeddings.is_some();
        Arc::new(SearchHandle::when_needed(
            vectors,
            Box::new(move || {
                let index = Arc::new(crate::index::open_index_of(files.clone(), &root, options.clone())?);
                if let Some(vault) = follower.upgrade() {
                    share_writes(&index, &vault, &changes);
                }
                Ok(index)
            }),
        ))
    };
    if watch {
        // A long-running process follows the vault from its view at start: it reads the
        // entries at once, in the background, with the walk the index's opening just made
        // (a one-shot command reads them only if it needs them). A request that needs them
        // meanwhile waits for them; a search does not.
        let reading = Arc::clone(&vault);
        let started =
            std::thread::Builder::new().name("kb-vault-read".into()).spawn(move || reading.read_entries());
        if let Err(error) = started {
            tracing::warn!(%error, "could not read the vault in the background; reading it now");
            vault.read_entries();
        }
    }
    vault.add_observer(Arc::clone(&index) as Arc<dyn kb_domain::ChangeObserver>);
    vault.add_observer(Arc::new(changes));
    Ok((vault, index))
}

/// Other kb processes on this vault send their changes to the one that owns the index;
/// once indexed, this process's view of the vault follows them too.
fn share_writes(index: &Arc<TantivyIndex>, vault: &Arc<Vault>, changes: &ChangeFeed) {
    let (follower, changes) = (Arc::downgrade(vault), changes.clone());
    index.share_writes(Some(Arc::new(move |changed: &[kb_domain::EntryPath]| {
        let Some(vault) = follower.upgrade() else { return };
        vault.follow_all(changed);
        changes.publish(changed);
    })));
}

/// Records in history, off the request path, what changed in the vault while kb was not
/// running (or was killed between writing a file and recording it).
pub(super) fn check_history_in_background(vault: &Arc<Vault>) {
    let vault = Arc::downgrade(vault);
    let started = std::thread::Builder::new().name("kb-history-check".into()).spawn(move || {
        kb_storage::background::yield_to_requests();
        let Some(vault) = vault.upgrade() else { return };
        match vault.check_history() {
            Ok(0) => {}
            Ok(changed) => tracing::info!(changed, "history caught up with files changed outside kb"),
            Err(error) => tracing::warn!(%error, "could not compare the vault with its history"),
        }
    });
    if let Err(error) = started {
        tracing::warn!(%error, "could not start comparing the vault with its history");
    }
}

/// How often a watching process saves the vault's catalogue when it changed.
pub(super) const SAVE_CATALOGUE_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// How often a watching process checks the vault's folders against its view of them.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_millis(500);
/// The folders are swept this often even when nothing seemed to change.
const FULL_SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(5);
/// A sweep lists every folder, so its cost grows with the vault: the pause after one is
/// at least this many times what it took, keeping sweeps to a small share of the time.
const SWEEP_SHARE: u32 = 20;

/// Checks the vault every [`SWEEP_EVERY`] while it is open (see [`Vault::sweep_if_due`]):
/// a change a file event did not bring shows within a second while the vault is busy,
/// and within a few seconds when it is quiet. In a vault so large that a sweep takes long,
/// sweeps are spaced out ([`SWEEP_SHARE`]).
fn start_sweeps(vault: &Arc<Vault>) {
    let vault = Arc::downgrade(vault);
    let started = std::thread::Builder::new().name("kb-vault-sweep".into()).spawn(move || {
        kb_storage::background::yield_to_requests();
        let mut pause = SWEEP_EVERY;
        let mut last_full = std::time::Instant::now();
        loop {
            std::thread::sleep(pause);
            let Some(vault) = vault.upgrade() else { return };
            let began = std::time::Instant::now();
            let full = began.duration_since(last_full) >= FULL_SWEEP_EVERY.max(pause);
            if full {
                vault.sweep_now()
            } else {
                vault.sweep_if_due()
            };
            if full {
                last_full = began;
            }
            pause = SWEEP_EVERY.max(began.elapsed() * SWEEP_SHARE);
        }
    });
    if let Err(error) = started {
        tracing::warn!(%error, "could not start checking the vault's folders");
    }
}

/// Starts the sweeps and the watcher of outside edits; `None` when the vault cannot be
/// watched.
pub(super) fn start_watcher(
    vault: &Arc<Vault>,
    index: &Arc<TantivyIndex>,
    changes: &ChangeFeed,
) -> Option<(VaultWatcher, Option<Settler>)> {
    start_sweeps(vault);
    // The index followed the files already: the vault need not notify it again.
    let (on_change, following): (OnChange, _) = crate::follow::follow_in_background(vault, changes.clone());
    match VaultWatcher::start(Arc::clone(index), Some(on_change)) {
        Ok(watcher) => {
            let settler = watcher.settler().map(|watcher| Settler { watcher, following });
            Some((watcher, settler))
        }
        Err(error) => {
            tracing::warn!(%error, "not following outside edits: the vault cannot be watched");
            None
        }
    }
}

/// What [`Assistant::settle`](super::Assistant::settle) waits for: the watcher's batches,
/// then the follower thread.
#[derive(Clone)]
pub(super) struct Settler {
    pub(super) watcher: kb_search::WatchSettler,
    pub(super) following: crate::follow::Following,
}
