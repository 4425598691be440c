//! Errors of opening the index and of watching the vault.

use std::path::PathBuf;

use kb_domain::SearchError;

/// Why the index could not be opened (a missing, corrupt or outdated index is not an
/// error: it is rebuilt).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The vault root does not exist or cannot be read.
    #[error("vault {path} cannot be opened: {source}")]
    Vault {
        /// The vault root given.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The index folder cannot be created, cleared or written.
    #[error("index folder {path} cannot be used: {source}")]
    Folder {
        /// The index folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Another kb process (a running `kb serve`) holds the index's writer lock.
    #[error(
        "the search index at {path} is in use by another kb process (is `kb serve` running on this vault?): stop it or use its HTTP API"
    )]
    Locked {
        /// The index folder.
        path: PathBuf,
    },
    /// tantivy failed (a full disk, a damaged file…).
    #[error("search index at {path} failed: {reason}")]
    Index {
        /// The index folder.
        path: PathBuf,
        /// What tantivy said.
        reason: String,
    },
}

/// Why the vault cannot be watched.
#[derive(Debug, thiserror::Error)]
#[error("cannot watch vault {path}: {reason}")]
pub struct WatchError {
    /// The vault root.
    pub path: PathBuf,
    /// What the file watcher said.
    pub reason: String,
}

/// Maps a tantivy error met while serving a call to the port's error.
pub(crate) fn index_error(e: tantivy::TantivyError) -> SearchError {
    SearchError::index("the search index failed", e)
}
