//! Sync of the vault through git (`KB_SYNC_REMOTE`): the [`Syncer`] an assistant holds —
//! a round when asked (`kb sync`), where sync stands (`kb sync status`, `/healthz`) — and
//! the loop one long-running process per vault runs (`kb serve`, `kb mcp`, `kb chat`).
//!
//! The loop is run by the process holding `.kb/sync-loop.lock`: others on the vault leave
//! it to that one, and the first to see it gone takes it over. Each round takes `.kb/sync.lock` as well, which `kb sync` also takes, so
//! two rounds never run at once. A remote that cannot be reached is tried again after a
//! pause that doubles up to `MAX_PAUSE` (15 minutes) while kb keeps working; the changes made
//! meanwhile go at the next round that reaches it.

use std::fs::File;
use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use chrono::{DateTime, Utc};
use kb_domain::EntryPath;
use kb_domain::sync::lock;
use kb_storage::sync::{GitSync, RoundReport, SyncError, SyncSettings, SyncStatus};
use kb_storage::vault::Vault;

use crate::config::SyncConfig;
use crate::error::CoreError;

/// The longest pause between rounds while the remote cannot be reached.
const MAX_PAUSE: Duration = Duration::from_secs(15 * 60);

/// How long `kb sync` waits for a round another process is running.
const WAIT_FOR_ROUND: Duration = Duration::from_secs(60);

/// Where sync stands, as `/healthz` says it (no remote, nothing secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncSummary {
    /// `idle`, `syncing` or `failing`.
    pub state: &'static str,
    /// When a round last finished.
    pub last_sync: Option<DateTime<Utc>>,
    /// How many conflict copies are in the vault.
    pub conflicts: usize,
    /// Why the last round failed, when it did.
    pub problem: Option<String>,
}

/// A vault's sync (see the module doc).
#[derive(Debug)]
pub struct Syncer {
    rounds: Arc<Rounds>,
    /// Stops the loop when dropped.
    _stop: Option<Sender<()>>,
}

/// What every round needs, shared by the loop and `kb sync`.
#[derive(Debug)]
struct Rounds {
    sync: GitSync,
    summary: Mutex<SyncSummary>,
    /// The vault, once open: each round's pulled notes are recorded in its history at once
    /// (as the other device's changes), in whichever process synced.
    vault: OnceLock<Arc<Vault>>,
}

impl Syncer {
    /// Sets the vault at `dir` up for sync as `config` says (see [`GitSync::open`]).
    pub(crate) fn open(dir: &Path, config: &SyncConfig, exclude: &[String]) -> Result<Syncer, CoreError> {
        let _ = std::fs::create_dir_all(dir);
        let settings = SyncSettings {
            exclude: exclude.to_vec(),
            entry_list: kb_storage::vault::entry_list_file_of(dir),
            timeout: config.timeout,
            ..SyncSettings::new(config.remote.clone(), config.device.clone())
        };
        let sync = GitSync::open(dir, settings).map_err(CoreError::Sync)?;
        let status = sync.status().ok();
        let summary = SyncSummary {
            state: "idle",
            last_sync: status.as_ref().and_then(|s| s.last_sync),
            conflicts: status.as_ref().map_or(0, |s| s.conflicts.len()),
            problem: status.and_then(|s| s.last_error),
        };
        let rounds = Rounds { sync, summary: Mutex::new(summary), vault: OnceLock::new() };
        Ok(Syncer { rounds: Arc::new(rounds), _stop: None })
    }

    /// Starts the loop in this process; while another process on the vault runs it, this
    /// one waits to take it over when that one ends.
    pub(crate) fn start_loop(&mut self, interval: Duration) {
        let (stop, stopped) = std::sync::mpsc::channel();
        let rounds = Arc::clone(&self.rounds);
        let started = std::thread::Builder::new().name("kb-sync".into()).spawn(move || {
            let Some(loop_lock) = loop_lock(rounds.sync.root(), interval, &stopped) else { return };
            rounds.run_loop(interval, &stopped, loop_lock);
        });
        match started {
            Ok(_) => self._stop = Some(stop),
            Err(error) => tracing::warn!(%error, "sync could not start; `kb sync` still syncs"),
        }
    }

    /// Records each round's pulled notes in `vault`'s history from now on.
    pub(crate) fn follow(&self, vault: &Arc<Vault>) {
        let _ = self.rounds.vault.set(Arc::clone(vault));
    }

    /// Syncs now, waiting for a round another process is running to end first.
    pub async fn round_now(&self) -> Result<RoundReport, CoreError> {
        let rounds = Arc::clone(&self.rounds);
        tokio::task::spawn_blocking(move || {
            let began = std::time::Instant::now();
            loop {
                match rounds.round() {
                    Err(SyncError::Busy) if began.elapsed() < WAIT_FOR_ROUND => {
                        std::thread::sleep(Duration::from_millis(200));
                    }
                    other => return other.map_err(CoreError::Sync),
                }
            }
        })
        .await
        .map_err(CoreError::Task)?
    }

    /// Where sync stands: remote, device, ahead and behind as of the last fetch, the last
    /// round and the open conflicts.
    pub async fn status(&self) -> Result<SyncStatus, CoreError> {
        let rounds = Arc::clone(&self.rounds);
        tokio::task::spawn_blocking(move || rounds.sync.status())
            .await
            .map_err(CoreError::Task)?
            .map_err(CoreError::Sync)
    }

    /// Counts the open conflicts again (after one was resolved), for [`Syncer::summary`].
    pub(crate) async fn recount(&self) {
        let rounds = Arc::clone(&self.rounds);
        let _ = tokio::task::spawn_blocking(move || {
            let conflicts = kb_storage::sync::conflict_copies(rounds.sync.root()).len();
            lock(&rounds.summary).conflicts = conflicts;
        })
        .await;
    }

    /// Where sync stands, without reading anything (for `/healthz`).
    pub fn summary(&self) -> SyncSummary {
        lock(&self.rounds.summary).clone()
    }

    /// This device's name.
    pub fn device(&self) -> &str {
        self.rounds.sync.device()
    }
}

impl Rounds {
    /// One round, with the summary kept up to date.
    fn round(&self) -> Result<RoundReport, SyncError> {
        lock(&self.summary).state = "syncing";
        let result = self.sync.round();
        if let (Ok(report), Some(vault)) = (&result, self.vault.get())
            && (!report.came.is_empty() || !report.conflicts.is_empty())
        {
            // What came, and the conflict copies the round wrote.
            let written = report.came.iter().chain(report.conflicts.iter().map(|conflict| &conflict.copy));
            let pulled: Vec<EntryPath> = written.filter_map(|path| EntryPath::parse(path).ok()).collect();
            vault.follow_all(&pulled);
        }
        let conflicts = kb_storage::sync::conflict_copies(self.sync.root()).len();
        let mut summary = lock(&self.summary);
        summary.conflicts = conflicts;
        match &result {
            Ok(report) => {
                summary.state = "idle";
                summary.last_sync = Some(Utc::now());
                summary.problem = None;
                if !report.conflicts.is_empty() {
                    tracing::warn!(conflicts = ?report.conflicts, "sync met notes changed two ways; see `kb sync status`");
                }
            }
            // Another process's round, or a note being typed in: nothing fails here.
            Err(SyncError::Busy | SyncError::EditedMeanwhile(_)) => summary.state = "idle",
            Err(error) => {
                summary.state = "failing";
                summary.problem = Some(error.to_string());
            }
        }
        result
    }

    /// The loop: a round, then a pause (longer after each failure), until stopped.
    fn run_loop(&self, interval: Duration, stopped: &Receiver<()>, _loop_lock: File) {
        let mut pause = interval;
        loop {
            let _span = tracing::info_span!("sync round", device = self.sync.device()).entered();
            match self.round() {
                Ok(report) => {
                    if !report.came.is_empty() || !report.went.is_empty() {
                        tracing::info!(came = report.came.len(), went = report.went.len(), "synced");
                    }
                    pause = interval;
                }
                Err(SyncError::Busy | SyncError::EditedMeanwhile(_)) => pause = interval,
                Err(error) => {
                    pause = pause.saturating_mul(2).min(MAX_PAUSE.max(interval));
                    tracing::warn!(%error, retry_in_secs = pause.as_secs(), "sync failed; kb goes on and tries again");
                }
            }
            match stopped.recv_timeout(pause) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => return,
            }
        }
    }
}

/// Takes `.kb/sync-loop.lock`, looking again every `interval` while another process holds
/// it; `None` when stopped first (or the file cannot be opened).
fn loop_lock(root: &Path, interval: Duration, stopped: &Receiver<()>) -> Option<File> {
    let path = root.join(".kb").join("sync-loop.lock");
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path).ok()?;
    let mut told = false;
    loop {
        match file.try_lock() {
            Ok(()) => return Some(file),
            Err(std::fs::TryLockError::WouldBlock) => {
                if !told {
                    tracing::info!("another kb process syncs this vault; this one takes over if it ends");
                    told = true;
                }
            }
            Err(std::fs::TryLockError::Error(error)) => {
                tracing::warn!(%error, "sync's loop lock cannot be taken; `kb sync` still syncs");
                return None;
            }
        }
        if !matches!(
            stopped.recv_timeout(interval.min(Duration::from_secs(5))),
            Err(RecvTimeoutError::Timeout)
        ) {
            return None;
        }
    }
}
