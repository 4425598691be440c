//! Revision history in kb's SQLite database: [`SqliteHistory`] (async, on sqlx) and
//! [`HistoryLog`], the domain's synchronous [`kb_domain::RevisionLog`] over it, for the
//! vault to record each change while it holds its locks; [`GitCommits`], which also commits
//! each change to git (`KB_GIT=commit`).

mod git;
mod log;
mod recording;
mod retraction;
mod store;

pub(crate) use git::DEVICE_TRAILER;
pub use git::{GitCommits, GitError};
pub use log::HistoryLog;
pub use recording::content_hash;
pub use store::SqliteHistory;
