//! What sync keeps between rounds (`.kb/sync/state.json`: the remote commit last synced,
//! when, and the last failure) and what it tells a person ([`SyncStatus`]).

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{GitSync, REMOTE_NAME, SyncError, scrub};
use crate::vault::atomic::write_atomic;

/// The state file's name in `.kb/sync/`.
const STATE_FILE: &str = "state.json";

/// What a round leaves for the next.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Kept {
    /// The remote's commit this device last merged or pushed: a remote that no longer
    /// holds it was rewritten.
    pub(super) last_remote: Option<String>,
    /// When a round last finished.
    pub(super) last_sync: Option<DateTime<Utc>>,
    /// Why the last round failed, when it did.
    pub(super) last_error: Option<String>,
}

impl Kept {
    /// The state kept in `state_dir`; the default when there is none (or it cannot be read).
    pub(super) fn read(state_dir: &Path) -> Kept {
        std::fs::read(state_dir.join(STATE_FILE))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Saves the state in `state_dir`.
    pub(super) fn save(&self, state_dir: &Path) -> Result<(), SyncError> {
        std::fs::create_dir_all(state_dir).map_err(|e| SyncError::io(state_dir, e))?;
        let file = state_dir.join(STATE_FILE);
        let bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        write_atomic(&file, &bytes).map_err(|e| SyncError::io(&file, e))
    }
}

/// Where a vault's sync stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncStatus {
    /// The remote, without credentials.
    pub remote: String,
    /// This device's name.
    pub device: String,
    /// Commits here the remote does not have (as of the last fetch).
    pub ahead: usize,
    /// Commits of the remote not merged here (as of the last fetch).
    pub behind: usize,
    /// When a round last finished.
    pub last_sync: Option<DateTime<Utc>>,
    /// Why the last round failed, when it did.
    pub last_error: Option<String>,
    /// The conflict copies in the vault (kb's, and those other sync tools make).
    pub conflicts: Vec<String>,
}

impl GitSync {
    /// Where sync stands (reads only what is on this device: no fetch).
    pub fn status(&self) -> Result<SyncStatus, SyncError> {
        let kept = Kept::read(&self.state_dir());
        let branch = self.remote_branch()?.unwrap_or_else(|| self.branch.clone());
        let tracking = format!("refs/remotes/{REMOTE_NAME}/{branch}");
        let (ahead, behind) = match (self.git.commit_of("HEAD")?, self.git.commit_of(&tracking)?) {
            (Some(_), Some(_)) => {
                let counts =
                    self.git.run(&["rev-list", "--left-right", "--count", &format!("HEAD...{tracking}")])?;
                let mut numbers = counts.split_whitespace().map(|n| n.parse().unwrap_or(0));
                (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0))
            }
            (Some(_), None) => {
                (self.git.run(&["rev-list", "--count", "HEAD"])?.trim().parse().unwrap_or(0), 0)
            }
            _ => (0, 0),
        };
        Ok(SyncStatus {
            remote: scrub(&self.settings.remote),
            device: self.settings.device.clone(),
            ahead,
            behind,
            last_sync: kept.last_sync,
            last_error: kept.last_error,
            conflicts: conflict_copies(&self.root),
        })
    }
}

/// The conflict copies under `root`, vault-relative, sorted: kb's
/// (`NAME.conflict-DEVICE-…`), Syncthing's (`.sync-conflict-`) and the "conflicted copy"
/// files other sync tools make.
pub fn conflict_copies(root: &Path) -> Vec<String> {
    let mut found: Vec<String> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter(|e| is_conflict_copy(&e.file_name().to_string_lossy()))
        .filter_map(|e| e.path().strip_prefix(root).ok().map(|p| p.to_string_lossy().replace('\\', "/")))
        .collect();
    found.sort();
    found
}

pub use kb_domain::conflicts::is_conflict_copy;
