//! The ports: traits the adapters implement and the tools and the chat loop use.
//!
//! Vault and search ports are synchronous (their adapters do blocking file and index work;
//! async callers run them on a blocking thread). Conversation storage and the language
//! model are asynchronous. All are object safe so they can be shared as `Arc<dyn …>`.

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;

use crate::category::Category;
use crate::cause::Cause;
use crate::change::{ChangeContext, ChangeSource};
use crate::conversation::{Conversation, ConversationId, Message, NewMessage, PendingCall, SummaryCoverage};
use crate::digest_orders::DigestCandidates;
use crate::entry::{Entry, EntrySummary, EntryUpdate, NewEntry, UpdateError};
use crate::fields::FieldProblem;
use crate::history::{HistoryError, Revision, UndoScope};
use crate::llm::{ChatCompletion, ChatRequest, LlmError, StructuredCompletion, StructuredRequest};
use crate::names::NameRelation;
use crate::path::{EntryPath, InvalidPath};
use crate::transform::MoveError;

/// Errors of an [`EntryRepository`].
#[derive(Debug, thiserror::Error)]
pub enum RepositoryError {
    /// No entry at that path.
    #[error("Entry not found: {0}")]
    NotFound(EntryPath),
    /// The path was refused.
    #[error(transparent)]
    InvalidPath(#[from] InvalidPath),
    /// The path leads outside the vault (a symlink).
    #[error("path {0} leads outside the vault")]
    OutsideVault(String),
    /// The entry is a symbolic link inside the vault: kb reads it but changes only real files.
    #[error("entry {0} is a symbolic link: change the file it points to instead")]
    Linked(EntryPath),
    /// The file exists but its frontmatter does not parse; it is left untouched.
    #[error("entry {path} cannot be read: {reason}")]
    Malformed {
        /// The file.
        path: EntryPath,
        /// What is wrong with it.
        reason: String,
    },
    /// A new entry with a wrong field.
    #[error(transparent)]
    Field(#[from] FieldProblem),
    /// An update that cannot be applied.
    #[error(transparent)]
    Update(#[from] UpdateError),
    /// A move that cannot be made.
    #[error(transparent)]
    Move(#[from] MoveError),
    /// A merge that cannot be made.
    #[error(transparent)]
    Merge(#[from] crate::merge::MergeError),
    /// A create that must not duplicate a name found entries of that category already named
    /// so (the same name or alias, or first words; see [`EntryRepository::create_unique_as`]).
    #[error("an entry of that name exists already: {}", .0.iter().map(|m| m.entry.path.to_string()).collect::<Vec<_>>().join(", "))]
    NameTaken(Vec<NameMatch>),
    /// Revision history could not be read or written.
    #[error(transparent)]
    History(#[from] crate::history::HistoryError),
    /// No revision with that number.
    #[error("revision {0} not found")]
    RevisionNotFound(i64),
    /// A revision of another entry than the one named.
    #[error("revision {revision} is not a revision of {path}")]
    RevisionOfAnother {
        /// The revision.
        revision: i64,
        /// The entry named.
        path: EntryPath,
    },
    /// Nothing kb did is left to undo (in the scope the words name).
    #[error("there is no change to undo{0}")]
    NothingToUndo(&'static str),
    /// An undo that would throw away a later change.
    #[error("cannot undo \"{change}\": {path} changed since ({what}); undo with force to replace it anyway")]
    ChangedSince {
        /// What the undo would revert.
        change: String,
        /// The file that changed.
        path: EntryPath,
        /// How it changed.
        what: String,
    },
    /// The disk failed.
    #[error("vault i/o error at {path}: {source}")]
    Io {
        /// The file or folder.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// Filters of a list of entries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListFilter {
    /// Only this category.
    pub category: Option<Category>,
    /// Only this status.
    pub status: Option<String>,
    /// At most this many (callers cap it).
    pub limit: usize,
    /// Skip this many first.
    pub offset: usize,
}

/// A page of entries, newest `updated_at` first.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ListPage {
    /// The entries of the page.
    pub entries: Vec<EntrySummary>,
    /// How many entries match in all.
    pub total: usize,
}

/// The result of an update.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateOutcome {
    /// The entry as written.
    pub entry: Entry,
    /// The fields changed (`content` for the body).
    pub updated_fields: Vec<String>,
}

/// The result of a move.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveOutcome {
    /// Where it was.
    pub old_path: EntryPath,
    /// The entry where it is now.
    pub entry: Entry,
}

/// The result of a merge.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeOutcome {
    /// The target as it is now, with the sources' notes and list fields.
    pub entry: Entry,
    /// The sources, now removed.
    pub removed: Vec<EntryPath>,
    /// Other entries whose references to a source now point at the target.
    pub references_updated: Vec<EntryPath>,
}

/// An entry whose name or alias relates to a name asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NameMatch {
    /// The entry.
    #[serde(flatten)]
    pub entry: EntrySummary,
    /// How its name (or alias) relates to the name asked for.
    pub relation: NameRelation,
    /// The alias that matched, when it was not the name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
}

/// What an undo did.
#[derive(Debug, Clone, PartialEq)]
pub struct UndoOutcome {
    /// The revisions of the change undone.
    pub undone: Vec<Revision>,
    /// The revisions the undo recorded.
    pub revisions: Vec<Revision>,
    /// One line saying what was undone.
    pub description: String,
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq)]
pub struct RestoreOutcome {
    /// Where the entry is now.
    pub path: EntryPath,
    /// The revision the restore recorded (`None` when the file already had those bytes).
    pub revision: Option<Revision>,
    /// Whether the entry had moved since from the path asked for, and was restored where
    /// it is now (never as a second copy).
    pub moved_since: bool,
}

/// A revision with the file's text before and after it, for showing a diff.
#[derive(Debug, Clone, PartialEq)]
pub struct RevisionText {
    /// The revision.
    pub revision: Revision,
    /// The file before (`None`: there was none).
    pub before: Option<String>,
    /// The file after (`None`: there is none).
    pub after: Option<String>,
}

/// A file in the vault that looks like an entry but cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MalformedFile {
    /// Its path.
    pub path: EntryPath,
    /// Why.
    pub reason: String,
}

/// A change to the vault, reported to observers (the search index) before the call returns.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryChange {
    /// An entry was written (created, updated, or the new side of a move).
    Upserted(Entry),
    /// An entry's file is gone (deleted, or the old side of a move).
    Removed(EntryPath),
}

/// Something notified of every change to the vault.
pub trait ChangeObserver: Send + Sync {
    /// Called after the change is on disk and before the call that made it returns.
    fn entry_changed(&self, change: &EntryChange);

    /// Called with the changes of one operation (a move: the new entry, the old path and
    /// the entries whose references were rewritten), which an observer should apply as one
    /// (the search index: one commit, so no search sees half of a move).
    fn entries_changed(&self, changes: &[EntryChange]) {
        for change in changes {
            self.entry_changed(change);
        }
    }
}

/// The store of entries: the markdown vault.
///
/// Implementations read the file on disk for every `get`, `update` and `move_entry` (never
/// a cached copy), write atomically, serialise changes, and refuse paths leading out of
/// the vault.
pub trait EntryRepository: Send + Sync {
    /// Creates an entry with a fresh id and a unique slug from its name, as asked by `by`.
    fn create_as(&self, new: NewEntry, by: &ChangeContext) -> Result<Entry, RepositoryError>;
    /// Creates an entry as [`EntryRepository::create_as`] does, unless an entry of its
    /// category already has a name related to its name ([`crate::names::relate`]): then
    /// [`RepositoryError::NameTaken`] with those entries, and nothing is written. The check
    /// and the write are one step for writers of this repository, so two captures of one
    /// new person at once file one entry, not two. (Default: no check.)
    fn create_unique_as(&self, new: NewEntry, by: &ChangeContext) -> Result<Entry, RepositoryError> {
        self.create_as(new, by)
    }
    /// Reads an entry from disk.
    fn get(&self, path: &EntryPath) -> Result<Entry, RepositoryError>;
    /// Lists entries matching the filter, newest first, from memory: the cost grows with
    /// the page asked for, not with the vault.
    fn list(&self, filter: &ListFilter) -> Result<ListPage, RepositoryError>;
    /// Applies an update to the entry as it is on disk now, as asked by `by`.
    fn update_as(
        &self,
        path: &EntryPath,
        update: &EntryUpdate,
        by: &ChangeContext,
    ) -> Result<UpdateOutcome, RepositoryError>;
    /// Moves an entry to another category, transforming its frontmatter, as asked by `by`.
    fn move_entry_as(
        &self,
        path: &EntryPath,
        target: Category,
        by: &ChangeContext,
    ) -> Result<MoveOutcome, RepositoryError>;
    /// Deletes an entry, as asked by `by`; the revision recording it, when history is kept.
    fn delete_as(&self, path: &EntryPath, by: &ChangeContext) -> Result<Option<Revision>, RepositoryError>;
    /// Merges `sources` into `target` as one change, as asked by `by`: the target keeps its
    /// fields, unites its tags and list fields with theirs, gains each source's notes under a
    /// section dated `on`, and the sources are removed (references to them now point at
    /// the target).
    fn merge_as(
        &self,
        target: &EntryPath,
        sources: &[EntryPath],
        on: NaiveDate,
        by: &ChangeContext,
    ) -> Result<MergeOutcome, RepositoryError>;

    /// The entries whose name or an alias is `name` or begins or is begun by its words
    /// ([`crate::names::relate`]), case, accents and punctuation aside; the same names first.
    /// Costs the entries sharing the name's first word, not the vault.
    fn find_by_name(&self, name: &str) -> Result<Vec<NameMatch>, RepositoryError>;
    /// Every readable entry's summary with its aliases, for a whole-vault duplicate scan.
    fn named_entries(&self) -> Result<Vec<(EntrySummary, Vec<String>)>, RepositoryError>;

    /// The revisions of the entry at (or last at) `path`, newest first.
    fn history(&self, _path: &EntryPath) -> Result<Vec<Revision>, RepositoryError> {
        Err(HistoryError::Unavailable.into())
    }
    /// One revision of the entry at (or last at) `path`, with its texts.
    fn revision(&self, _path: &EntryPath, _revision: i64) -> Result<RevisionText, RepositoryError> {
        Err(HistoryError::Unavailable.into())
    }
    /// Brings the entry at (or last at) `path` back to `revision`'s bytes exactly; a
    /// deleted entry comes back at its path, or with a suffix when that is taken.
    fn restore_as(
        &self,
        _path: &EntryPath,
        _revision: i64,
        _by: &ChangeContext,
    ) -> Result<RestoreOutcome, RepositoryError> {
        Err(HistoryError::Unavailable.into())
    }
    /// Reverts the most recent change kb made in `scope` that is not undone yet. Refuses,
    /// changing nothing, when a file it would revert changed since, unless `force` (every
    /// version it replaces is then recorded first).
    fn undo_as(
        &self,
        _scope: &UndoScope,
        _force: bool,
        _by: &ChangeContext,
    ) -> Result<UndoOutcome, RepositoryError> {
        Err(HistoryError::Unavailable.into())
    }

    /// [`EntryRepository::create_as`] through the API, with no tool or conversation.
    fn create(&self, new: NewEntry) -> Result<Entry, RepositoryError> {
        self.create_as(new, &ChangeContext::from_source(ChangeSource::Api))
    }
    /// [`EntryRepository::update_as`] through the API, with no tool or conversation.
    fn update(&self, path: &EntryPath, update: &EntryUpdate) -> Result<UpdateOutcome, RepositoryError> {
        self.update_as(path, update, &ChangeContext::from_source(ChangeSource::Api))
    }
    /// [`EntryRepository::move_entry_as`] through the API, with no tool or conversation.
    fn move_entry(&self, path: &EntryPath, target: Category) -> Result<MoveOutcome, RepositoryError> {
        self.move_entry_as(path, target, &ChangeContext::from_source(ChangeSource::Api))
    }
    /// [`EntryRepository::delete_as`] through the API, with no tool or conversation.
    fn delete(&self, path: &EntryPath) -> Result<(), RepositoryError> {
        self.delete_as(path, &ChangeContext::from_source(ChangeSource::Api)).map(|_| ())
    }
    /// Every readable entry, read from disk (for indexing and checks; not for requests).
    fn all_entries(&self) -> Result<Vec<Entry>, RepositoryError>;
    /// The catalogue records a digest on `today` at `now` reads (see [`DigestCandidates`]):
    /// no file is read, and the cost is the records at the front of each digest order and
    /// the week's activity, not the vault.
    fn digest_candidates(
        &self,
        today: NaiveDate,
        now: DateTime<Utc>,
    ) -> Result<DigestCandidates, RepositoryError>;
    /// The catalogue records the nudges on `today` at `now` read (see
    /// [`crate::nudges::NudgeCandidates`]). By default every entry, read from disk;
    /// repositories with a catalogue answer from it.
    fn nudge_candidates(
        &self,
        today: NaiveDate,
        now: DateTime<Utc>,
        settings: crate::nudges::NudgeSettings,
    ) -> Result<crate::nudges::NudgeCandidates, RepositoryError> {
        let _ = (today, now, settings);
        let records = self
            .all_entries()?
            .iter()
            .map(|e| std::sync::Arc::new(crate::catalogue::CatalogueEntry::of(e)))
            .collect();
        Ok(crate::nudges::NudgeCandidates { records })
    }
    /// Files that look like entries but cannot be read.
    fn malformed(&self) -> Vec<MalformedFile>;
    /// The entry list file's text (`index.md`) as it is now.
    fn entry_list_markdown(&self) -> String;
    /// Re-reads one path after a change made outside kb (or notices it is gone).
    fn refresh(&self, path: &EntryPath) -> Result<Option<Entry>, RepositoryError>;
}

/// Errors of a [`SearchIndex`].
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The index is still being built.
    #[error("the search index is not ready yet")]
    NotReady,
    /// The index failed.
    #[error("search index error: {message}")]
    Index {
        /// What failed, in words.
        message: String,
        /// The error underneath, when there is one (an error another kb process sent as
        /// text over the owner socket has none).
        #[source]
        source: Option<Cause>,
    },
}

impl SearchError {
    /// The index failed doing `message`, because of `source`.
    pub fn index(message: impl Into<String>, source: impl Into<Cause>) -> SearchError {
        SearchError::Index { message: message.into(), source: Some(source.into()) }
    }

    /// The index failed as `message` says, with no error underneath to keep.
    pub fn index_message(message: impl Into<String>) -> SearchError {
        SearchError::Index { message: message.into(), source: None }
    }
}

/// A search request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SearchQuery {
    /// The person's words, taken as data: double quotes mark a phrase, nothing else is
    /// query syntax.
    pub text: String,
    /// Only this category.
    pub category: Option<Category>,
    /// At most this many hits.
    pub limit: usize,
    /// Skip this many first.
    pub offset: usize,
    /// Search as you type: the last word may be unfinished ("land" finds "landlord").
    pub prefix: bool,
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The entry.
    pub path: EntryPath,
    /// Its name.
    pub name: String,
    /// Its category.
    pub category: Category,
    /// The best field that matched.
    pub matched_field: String,
    /// The matching passage, terms marked.
    pub snippet: String,
    /// The BM25 score.
    pub score: f32,
}

/// The hits of a search.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SearchResults {
    /// The hits of the page, best first.
    pub entries: Vec<SearchHit>,
    /// How many entries match in all.
    pub total: usize,
    /// Whether these came from the typo-tolerant retry.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fuzzy: bool,
}

/// The full-text index of the vault (derived data: the vault is the truth).
pub trait SearchIndex: Send + Sync {
    /// Answers a query.
    fn search(&self, query: &SearchQuery) -> Result<SearchResults, SearchError>;
    /// Adds or replaces an entry, visible to the next search.
    fn upsert(&self, entry: &Entry) -> Result<(), SearchError>;
    /// Removes an entry, visible to the next search.
    fn remove(&self, path: &EntryPath) -> Result<(), SearchError>;
}

/// Errors of a [`ConversationStore`].
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No conversation with that id.
    #[error("conversation not found: {0}")]
    NotFound(ConversationId),
    /// The database failed.
    #[error("conversation store error: {message}")]
    Database {
        /// What failed, in words.
        message: String,
        /// The error underneath, when there is one.
        #[source]
        source: Option<Cause>,
    },
}

impl StoreError {
    /// The database failed doing `message`, because of `source`.
    pub fn database(message: impl Into<String>, source: impl Into<Cause>) -> StoreError {
        StoreError::Database { message: message.into(), source: Some(source.into()) }
    }

    /// The database failed as `message` says, with no error underneath to keep.
    pub fn database_message(message: impl Into<String>) -> StoreError {
        StoreError::Database { message: message.into(), source: None }
    }
}

/// Where conversations persist.
#[async_trait::async_trait]
pub trait ConversationStore: Send + Sync {
    /// Starts a conversation.
    async fn create(&self, title: &str) -> Result<Conversation, StoreError>;
    /// A conversation, if it exists.
    async fn get(&self, id: &ConversationId) -> Result<Option<Conversation>, StoreError>;
    /// All conversations, most recently updated first.
    async fn list(&self) -> Result<Vec<Conversation>, StoreError>;
    /// Renames a conversation.
    async fn rename(&self, id: &ConversationId, title: &str) -> Result<(), StoreError>;
    /// Deletes a conversation and its messages.
    async fn delete(&self, id: &ConversationId) -> Result<(), StoreError>;
    /// Stores the summary of turns older than the context window, with what it covers.
    async fn set_summary(
        &self,
        id: &ConversationId,
        summary: &str,
        covers: &SummaryCoverage,
    ) -> Result<(), StoreError>;
    /// Every message, oldest first.
    async fn messages(&self, id: &ConversationId) -> Result<Vec<Message>, StoreError>;
    /// The messages after the first `skip`, oldest first (reads only those).
    async fn messages_after(&self, id: &ConversationId, skip: u64) -> Result<Vec<Message>, StoreError>;
    /// The last `limit` messages, oldest first.
    async fn recent_messages(&self, id: &ConversationId, limit: usize) -> Result<Vec<Message>, StoreError>;
    /// Appends the messages of one turn in one transaction (the pending call stays as it is).
    async fn append_turn(
        &self,
        id: &ConversationId,
        messages: Vec<NewMessage>,
    ) -> Result<Vec<Message>, StoreError>;
    /// Appends the messages of one turn and sets the conversation's pending call to
    /// `pending` (`None` clears it), in one transaction.
    async fn append_turn_with_pending(
        &self,
        id: &ConversationId,
        messages: Vec<NewMessage>,
        pending: Option<&PendingCall>,
    ) -> Result<Vec<Message>, StoreError>;
    /// Takes the conversation's pending call away: answers it and clears it, atomically, so
    /// that of several turns (or kb processes) racing for it at most one gets it.
    async fn take_pending(&self, id: &ConversationId) -> Result<Option<PendingCall>, StoreError>;
}

/// A language model with tool calls and structured output.
#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    /// The next step of a conversation with tools.
    async fn complete(&self, request: &ChatRequest) -> Result<ChatCompletion, LlmError>;
    /// [`ChatModel::complete`], passing `on_delta` each piece of the answer's text as it is
    /// written; the pieces joined are the completion's content. The completion is the one
    /// `complete` would give. By default the text is passed in word pieces
    /// ([`crate::turn_events::deltas`]) once the answer is whole; a model that streams
    /// (the OpenAI-compatible adapter) passes them on as they arrive.
    async fn complete_streaming(
        &self,
        request: &ChatRequest,
        on_delta: &(dyn for<'s> Fn(&'s str) + Send + Sync),
    ) -> Result<ChatCompletion, LlmError> {
        let completion = self.complete(request).await?;
        if let Some(content) = &completion.content {
            for piece in crate::turn_events::deltas(content) {
                on_delta(&piece);
            }
        }
        Ok(completion)
    }
    /// An answer following a JSON schema.
    async fn complete_structured(
        &self,
        request: &StructuredRequest,
    ) -> Result<StructuredCompletion, LlmError>;
    /// Which model this is (`offline`, or the model name).
    fn describe(&self) -> String;
}

/// The time.
pub trait Clock: Send + Sync {
    /// Now, in UTC.
    fn now(&self) -> DateTime<Utc>;

    /// Today's date where the person is (UTC unless the clock knows their time zone).
    fn today(&self) -> chrono::NaiveDate {
        self.now().date_naive()
    }
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that always says the same time (tests, reproducible runs).
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub DateTime<Utc>);

impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        self.0
    }
}
