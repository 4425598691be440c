//! Sync through git: one vault on every device, each a clone of one remote (a bare
//! repository on disk or a server, GitHub, Gitea), merged the way a careful person would.
//!
//! [`GitSync`] runs the `git` people already have, so credentials come from git's own
//! helpers and ssh and no C library joins the build. A round ([`GitSync::round`]) commits
//! what changed here, fetches, merges and pushes; the merge is kb's own (`merge`): each
//! note changed on both sides merges by field and by line
//! ([`kb_domain::three_way::merge_note`]), an edit wins over a delete, a move meets an edit,
//! two notes made at one path both stay, and anything else keeps the remote's version with
//! the other written beside it as a conflict copy. The merge is built apart from the work
//! tree (git objects and an index file of its own) and then written to the vault's files
//! under a journal (`apply`), so a round stopped at any point finishes at the next one.
//!
//! What travels is every file of the vault but `.kb/`, the entry list kb writes, what
//! `.gitignore`, `.kbignore` and the exclude patterns leave out, and `.obsidian/workspace*`
//! (`setup`).

mod apply;
mod git;
mod merge;
pub(crate) mod pulled;
mod round;
mod setup;
mod state;
mod tree;

#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod property_tests;
#[cfg(test)]
mod setup_tests;
#[cfg(test)]
mod tests;

use std::fs::File;
use std::path::{Path, PathBuf};

pub use git::scrub;
pub use round::{Conflict, RoundReport};
pub use setup::{REMOTE_NAME, check_remote};
pub use state::{SyncStatus, conflict_copies, is_conflict_copy};

use self::git::Git;

/// Why sync cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// No `git` program could be run.
    #[error("sync needs git, and git could not be run")]
    NoGit(#[source] std::io::Error),
    /// The remote's URL holds a password, or an HTTP URL a user name (where tokens are
    /// pasted).
    #[error(
        "KB_SYNC_REMOTE must not hold a password or token ({0}): give the URL without it and let git's credential helper or ssh keep it (git config credential.username picks an account)"
    )]
    PasswordInUrl(String),
    /// The vault is inside another repository.
    #[error(
        "the vault {} is inside the git repository at {}: sync needs a vault that is its own repository's root, or not in one yet (then kb makes it one)",
        vault.display(),
        repository.display()
    )]
    InsideAnotherRepository {
        /// The vault's folder.
        vault: PathBuf,
        /// The work tree it is in.
        repository: PathBuf,
    },
    /// A git command failed (its message scrubbed of credentials).
    #[error("git {command} failed: {message}")]
    Git {
        /// The arguments.
        command: String,
        /// What git said.
        message: String,
    },
    /// The remote cannot be reached (retried later).
    #[error("the remote cannot be reached: {0}")]
    Unreachable(String),
    /// The remote's history no longer holds what this device last synced.
    #[error(
        "the remote's history was rewritten (it no longer holds {last}, which this device last synced): kb does not merge it blindly; restore the remote or point KB_SYNC_REMOTE at a new one"
    )]
    RewrittenRemote {
        /// The commit this device last synced.
        last: String,
    },
    /// The pulled tree holds what kb does not take in.
    #[error("the remote's files are not merged: {0}")]
    Refused(String),
    /// Another process holds the sync lock.
    #[error("another kb process is syncing this vault now")]
    Busy,
    /// A file the round was about to write changed on disk meanwhile (someone is typing in
    /// it): nothing was written, and the next round takes the change in.
    #[error("{0} changed while syncing; the next round takes it in")]
    EditedMeanwhile(String),
    /// A file of the vault or of `.kb/` cannot be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// A hook for tests, in debug builds only (release builds never read it): with
/// `KB_TEST_SYNC_PAUSE=AT:MS` set, a round waits `MS` milliseconds at `AT` (`apply`: half
/// way through writing a merge; `push`: before pushing), so that a test can kill it there.
fn pause_for_tests(at: &str) {
    #[cfg(debug_assertions)]
    if let Some((point, ms)) =
        std::env::var("KB_TEST_SYNC_PAUSE").ok().as_deref().and_then(|v| v.split_once(':'))
        && point == at
        && let Ok(ms) = ms.parse::<u64>()
    {
        tracing::info!(at, ms, "pausing the sync round (KB_TEST_SYNC_PAUSE, debug builds only)");
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    #[cfg(not(debug_assertions))]
    let _ = at;
}

impl SyncError {
    /// The error of `path` failing with `source`.
    fn io(path: &Path, source: std::io::Error) -> SyncError {
        SyncError::Io { path: path.to_path_buf(), source }
    }
}

/// How a vault syncs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncSettings {
    /// The remote (`KB_SYNC_REMOTE`): a path, `ssh://…`, `https://…`, `host:path`.
    pub remote: String,
    /// This device's name (`KB_DEVICE`).
    pub device: String,
    /// Patterns of files left out besides `.gitignore` and `.kbignore` (`KB_EXCLUDE`).
    pub exclude: Vec<String>,
    /// The entry list file kb writes in this vault, which does not travel.
    pub entry_list: Option<PathBuf>,
    /// The longest a fetch or a push may take.
    pub timeout: std::time::Duration,
}

impl SyncSettings {
    /// Settings for `remote` as `device`, with nothing left out and a five-minute timeout.
    pub fn new(remote: impl Into<String>, device: impl Into<String>) -> SyncSettings {
        SyncSettings {
            remote: remote.into(),
            device: device.into(),
            exclude: Vec::new(),
            entry_list: None,
            timeout: std::time::Duration::from_secs(300),
        }
    }
}

/// One vault's sync: its repository and settings (see the module doc).
#[derive(Debug)]
pub struct GitSync {
    /// The vault's folder, the repository's root.
    root: PathBuf,
    /// The settings.
    settings: SyncSettings,
    /// git in the vault.
    git: Git,
    /// The branch synced.
    branch: String,
}

impl GitSync {
    /// Sets the vault at `root` up for sync: checks the remote's URL, makes the vault a
    /// repository when it is in none (refusing one inside another repository), and writes
    /// what does not travel. Changes nothing in the vault's notes; the remote is pointed at
    /// `settings.remote` by the first round.
    pub fn open(root: &Path, settings: SyncSettings) -> Result<GitSync, SyncError> {
        check_remote(&settings.remote)?;
        // git runs in the vault: a relative folder (`--kb-dir notes`) would be read from
        // there a second time.
        let absolute = std::path::absolute(root).map_err(|e| SyncError::io(root, e))?;
        let root = absolute.as_path();
        let branch = setup::repository(root)?;
        let git = Git::new(root, &settings.device);
        setup::exclude(root, &git, &settings)?;
        Ok(GitSync { root: root.to_path_buf(), settings, git, branch })
    }

    /// The vault's folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// This device's name.
    pub fn device(&self) -> &str {
        &self.settings.device
    }

    /// The `.kb/sync` folder, where sync keeps its state.
    fn state_dir(&self) -> PathBuf {
        self.root.join(".kb").join("sync")
    }

    /// Takes the sync lock (`.kb/sync.lock`) without waiting: `Busy` when another process
    /// holds it. Held until the file is dropped.
    pub fn try_lock(&self) -> Result<File, SyncError> {
        let path = self.root.join(".kb").join("sync.lock");
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| SyncError::io(parent, e))?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| SyncError::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => Ok(file),
            Err(std::fs::TryLockError::WouldBlock) => Err(SyncError::Busy),
            Err(std::fs::TryLockError::Error(error)) => Err(SyncError::io(&path, error)),
        }
    }
}
