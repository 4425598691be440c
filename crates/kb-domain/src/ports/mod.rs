//! The ports: traits the adapters implement and the tools and the chat loop use.
//!
//! Vault and search ports are synchronous (their adapters do blocking file and index work;
//! async callers run them on a blocking thread). Conversation storage and the language
//! model are asynchronous. All are object safe so they can be shared as `Arc<dyn …>`.
//!
//! The vault's ports are split by what their users need: [`EntryReader`] (reading
//! entries), [`EntryWriter`] (changing them), [`EntryCatalogue`] (answers from memory:
//! lists, names, digest and nudge facts, the entry list) and [`RevisionHistory`] (past
//! versions, restore, undo). [`EntryRepository`] is all four, for a user that needs the
//! whole vault.

mod catalogue;
mod chat_model;
mod clock;
mod conversations;
mod embedder;
mod entries;
mod idempotency;
mod observer;
mod pages;
mod revisions;
mod search;
mod transcriber;

pub use self::catalogue::{
    EntryCatalogue, EntryContext, EntryLinks, FolderCount, LinkKind, LinkedNote, ListFilter, ListPage,
    MalformedFile, NameMatch, NearbyNote, Relation,
};
pub use self::chat_model::ChatModel;
pub use self::clock::{Clock, FixedClock, SystemClock};
pub use self::conversations::{ConversationStore, StoreError};
pub use self::embedder::{Embedder, EmbeddingError, TextRole};
pub use self::entries::{
    EntryReader, EntryRepository, EntryWriter, MergeOutcome, MoveOutcome, RepositoryError, UpdateOutcome,
};
pub use self::idempotency::{Claim, IdempotencyStore, KeptAnswer, KeyClaim};
pub use self::observer::{ChangeObserver, EntryChange};
pub use self::pages::{PageError, PageReader, WebPage};
pub use self::revisions::{LaterChanges, RestoreOutcome, RevisionHistory, RevisionText, UndoOutcome};
pub use self::search::{
    EmbeddingCoverage, MatchedBy, Passage, QueryVector, RelatedEntry, SearchError, SearchHit, SearchIndex,
    SearchMode, SearchQuery, SearchResults,
};
pub use self::transcriber::{Audio, Transcriber, TranscriptionError};
