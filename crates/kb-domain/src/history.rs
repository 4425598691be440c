//! Revision history: every change to an entry's file is a [`Revision`] — the whole file
//! before and after (as content hashes of blobs stored once), the paths, when, who
//! ([`crate::ChangeContext`]) and a one-line description — grouped in operations (a move
//! and the references it rewrote are one), and kept by a [`RevisionLog`].

use chrono::{DateTime, Utc};

use crate::cause::Cause;
use crate::change::{ChangeContext, ChangeSource};
use crate::conversation::ConversationId;
use crate::path::EntryPath;

/// The hash naming a file's bytes in history (SHA-256, lowercase hex).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentHash(pub String);

impl std::fmt::Display for ContentHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One recorded change of one entry's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// Its number, increasing with time across the vault.
    pub id: i64,
    /// The operation it belongs to (the changes of one action, undone together).
    pub operation: i64,
    /// When it was recorded.
    pub at: DateTime<Utc>,
    /// Where the change came from.
    pub source: ChangeSource,
    /// The tool that made it, when a tool did.
    pub tool: Option<String>,
    /// The conversation it was made in, when there is one.
    pub conversation_id: Option<ConversationId>,
    /// The device it was made on, when the vault is synced.
    pub device: Option<String>,
    /// The person who made it: a person's name when kb serves several people,
    /// [`crate::people::LOCAL_PERSON`] for the local ways in; `None` for a change made
    /// outside kb or brought by a sync.
    pub person: Option<String>,
    /// One line saying what changed.
    pub description: String,
    /// The entry's `id`, when it has one.
    pub entry_id: Option<String>,
    /// Where the file was before (`None`: it did not exist).
    pub path_before: Option<EntryPath>,
    /// Where the file is after (`None`: it no longer exists).
    pub path_after: Option<EntryPath>,
    /// The file's bytes before, by hash.
    pub before: Option<ContentHash>,
    /// The file's bytes after, by hash.
    pub after: Option<ContentHash>,
    /// The operation this one undid, when it is an undo.
    pub reverts: Option<i64>,
}

impl Revision {
    /// The path this revision leaves the entry at, or where it was when it was removed.
    pub fn last_path(&self) -> Option<&EntryPath> {
        self.path_after.as_ref().or(self.path_before.as_ref())
    }
}

/// A change to record: one file, before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The entry's `id`, when it has one.
    pub entry_id: Option<String>,
    /// Where the file was (`None`: created).
    pub path_before: Option<EntryPath>,
    /// Where it is now (`None`: removed).
    pub path_after: Option<EntryPath>,
    /// Its bytes before.
    pub before: Option<Vec<u8>>,
    /// Its bytes now.
    pub after: Option<Vec<u8>>,
    /// One line saying what changed.
    pub description: String,
}

/// A file as kb found it on disk (`bytes: None`: not there), to compare with history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedFile {
    /// Its path.
    pub path: EntryPath,
    /// Its bytes, when the file exists.
    pub bytes: Option<Vec<u8>>,
    /// The entry's `id`, when it has one.
    pub entry_id: Option<String>,
    /// The device whose change a sync wrote here, when one did (the file is then
    /// recorded as that device's change, not as an outside edit).
    pub pulled_from: Option<String>,
}

/// Whose changes an undo may revert: it reverts the newest undoable operation in scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UndoScope {
    /// The newest change kb made, whoever made it (`kb undo`, `POST /api/undo` without a
    /// conversation).
    Anyone,
    /// Only the changes made in this conversation (a chat turn's undo).
    Conversation(ConversationId),
    /// Only the changes made by this MCP session (see [`ChangeContext::session`]).
    Session(String),
    /// Only the changes this person made (a person's undo when kb serves several people).
    Person(String),
}

impl UndoScope {
    /// Words naming the scope after "there is no change to undo", for a refusal.
    pub fn words(&self) -> &'static str {
        match self {
            UndoScope::Anyone => "",
            UndoScope::Conversation(_) => " in this conversation",
            UndoScope::Session(_) => " made in this MCP session",
            UndoScope::Person(_) => " made by you",
        }
    }
}

/// Why history could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The database failed.
    #[error("history database error: {message}")]
    Database {
        /// What failed, in words.
        message: String,
        /// The error underneath, when there is one.
        #[source]
        source: Option<Cause>,
    },
    /// History is not kept (no database is attached).
    #[error("revision history is not kept for this vault")]
    Unavailable,
}

impl HistoryError {
    /// The database failed doing `message`, because of `source`.
    pub fn database(message: impl Into<String>, source: impl Into<Cause>) -> HistoryError {
        HistoryError::Database { message: message.into(), source: Some(source.into()) }
    }

    /// The database failed as `message` says, with no error underneath to keep.
    pub fn database_message(message: impl Into<String>) -> HistoryError {
        HistoryError::Database { message: message.into(), source: None }
    }
}

/// Where revisions are kept. Synchronous like the vault that records into it (its
/// adapter runs the database on a thread of its own). Implementations store each blob
/// once, record an operation in one transaction, and serve several processes.
pub trait RevisionLog: Send + Sync {
    /// Records the changes of one operation, made by `by` at `at` (undoing operation
    /// `reverts`, when it does); returns their revisions in order.
    fn record(
        &self,
        at: DateTime<Utc>,
        by: &ChangeContext,
        reverts: Option<i64>,
        changes: Vec<FileChange>,
    ) -> Result<Vec<Revision>, HistoryError>;

    /// [`RevisionLog::record`] without waiting for the answer: the changes are recorded
    /// after whatever was handed over before them, and [`Recording::wait`] gives the
    /// answer. A vault hands over a change made already this way while it holds its write
    /// lock, and waits once it has let the next change start. By default the changes are
    /// recorded before this returns, for a log whose [`RevisionLog::written`] must run
    /// before the next change.
    fn record_in_turn(
        &self,
        at: DateTime<Utc>,
        by: &ChangeContext,
        reverts: Option<i64>,
        changes: Vec<FileChange>,
    ) -> Recording {
        Recording::done(self.record(at, by, reverts, changes))
    }

    /// Called once the files of `revisions` (just recorded by `by`) are on disk: a log that
    /// also commits them elsewhere (git) does it now. Nothing by default.
    fn written(&self, _by: &ChangeContext, _revisions: &[Revision]) {}

    /// Takes back `revisions`, just recorded for changes to files that could then not be
    /// written: they are gone (their operation too, once it has none left), and each
    /// path's head is again what its latest remaining revision left. Called while the
    /// vault's write lock is still held, so nothing was recorded after them.
    fn retract(&self, revisions: &[Revision]) -> Result<(), HistoryError>;

    /// Compares files with what history last recorded at their paths, and records those
    /// that differ as changes from outside kb (one operation); returns the revisions made.
    fn observe(&self, at: DateTime<Utc>, files: Vec<ObservedFile>) -> Result<Vec<Revision>, HistoryError>;

    /// The hash history last recorded at each path where a file should be, for a check of
    /// the whole vault (at open).
    fn heads(&self) -> Result<Vec<(EntryPath, ContentHash)>, HistoryError>;

    /// The revisions of the entry at (or last at) `path`, newest first. `entry_id` is the
    /// `id` of the file now at `path`, when there is one; without it, the id last
    /// recorded at `path`. With an id, the history is every revision of that id, followed
    /// back across kb's moves and merges to the revisions the file had before it was
    /// given one; without, the revisions at that path (followed back across moves).
    fn history(&self, path: &EntryPath, entry_id: Option<&str>) -> Result<Vec<Revision>, HistoryError>;

    /// The path where history last left the entry with `entry_id`, when its latest
    /// revision leaves it somewhere (not deleted).
    fn last_path_of(&self, entry_id: &str) -> Result<Option<EntryPath>, HistoryError>;

    /// The id of the entry whose history holds revision `id`: its own entry id, or for a
    /// revision without one, the id of the entry whose history is followed back to it
    /// (the file it changed was given that id by kb's move after it); `None` when none.
    fn entry_of_revision(&self, id: i64) -> Result<Option<String>, HistoryError>;

    /// One revision.
    fn revision(&self, id: i64) -> Result<Option<Revision>, HistoryError>;

    /// The bytes stored under `hash`.
    fn content(&self, hash: &ContentHash) -> Result<Option<Vec<u8>>, HistoryError>;

    /// The revisions of the most recent operation kb made in `scope` (not from outside,
    /// not an undo, not undone yet), oldest first; empty when none.
    fn last_undoable(&self, scope: &UndoScope) -> Result<Vec<Revision>, HistoryError>;
}

/// Changes handed over to a [`RevisionLog`] to record in turn: their answer, once
/// [`Recording::wait`] is called.
#[must_use = "changes recorded in turn are known to be in history only once waited for"]
pub struct Recording {
    answer: RecordingAnswer,
}

/// A recording's answer: given already, or to wait for.
enum RecordingAnswer {
    Done(Result<Vec<Revision>, HistoryError>),
    Waiting(Box<dyn FnOnce() -> Result<Vec<Revision>, HistoryError> + Send>),
}

impl Recording {
    /// A recording whose answer is `answer`.
    pub fn done(answer: Result<Vec<Revision>, HistoryError>) -> Recording {
        Recording { answer: RecordingAnswer::Done(answer) }
    }

    /// A recording whose answer `wait` waits for.
    pub fn waiting(wait: impl FnOnce() -> Result<Vec<Revision>, HistoryError> + Send + 'static) -> Recording {
        Recording { answer: RecordingAnswer::Waiting(Box::new(wait)) }
    }

    /// Whether the answer is given already.
    pub fn is_done(&self) -> bool {
        matches!(self.answer, RecordingAnswer::Done(_))
    }

    /// The revisions recorded, in order, once they are.
    pub fn wait(self) -> Result<Vec<Revision>, HistoryError> {
        match self.answer {
            RecordingAnswer::Done(answer) => answer,
            RecordingAnswer::Waiting(wait) => wait(),
        }
    }
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording").field("done", &self.is_done()).finish()
    }
}
