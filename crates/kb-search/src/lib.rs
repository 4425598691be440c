//! kb-search: the [`kb_domain::SearchIndex`] adapter over tantivy, kept in step with the
//! vault. The index is derived data under `.kb/index`; the vault on disk is the truth.
//!
//! Depends only on kb-domain (never on kb-storage); knows nothing of tools, the
//! orchestrator or delivery. It reads the vault only through the
//! [`kb_domain::VaultFiles`] port, which decides which files are entries (the storage
//! adapter implements it; kb-core wires the two).
//!
//! How it fits together:
//! - [`TantivyIndex::open`] reuses the index on disk and catches up with the vault from
//!   metadata alone, or rebuilds it (missing, corrupt, older schema) reading files on all
//!   cores. It blocks until the index answers for the vault as it is, so
//!   [`kb_domain::SearchError::NotReady`] is never returned.
//! - [`TantivyIndex`] is also a [`kb_domain::ChangeObserver`]: each change kb makes is
//!   committed and visible to search before the call that made it returns.
//! - [`VaultWatcher`] follows edits made outside kb while it runs.
//! - Several kb processes share one index: the first holds tantivy's writer and the others
//!   send it their changes over a Unix socket, and take the index over when it is gone.
//!
//! Search rules: the query is text, with no syntax but double quotes (a quoted word or
//! phrase must match as written); it is analysed like the entries (split on
//! non-alphanumerics, lowercased, accents folded, stemmed in the vault's
//! [`SearchLanguage`]); words without meaning of their own ([`stopwords`]) are left out,
//! and every other word must match in `name`, `tags`, `one_liner`, `next_action`,
//! `context`, `original_text` or the body (the last word may be a prefix, for search as you
//! type); BM25 with field boosts orders hits, and the best are re-ranked (words in the name
//! or tags, words as written, then the most recently updated); an empty query has no hits;
//! when nothing matches, one typo-tolerant retry (one edit per term of 3+ characters)
//! answers, marked `fuzzy`; when asked, entries holding some of the words follow those
//! holding all of them, marked `partial`.
//! A hit's `matchedField` is the field with the most query terms (`content` for the body)
//! and its `snippet` a passage of it with the matched words in Markdown bold (`**word**`).

pub mod analysis;
mod commits;
mod directory;
pub mod document;
pub mod error;
mod index;
mod ingest;
mod open;
mod owner;
mod passage;
mod presence;
mod query;
mod rank;
pub mod schema;
pub mod snippet;
pub mod sockets;
pub mod stopwords;
#[cfg(feature = "testgen")]
pub mod testgen;
mod vectors;
mod watcher;
mod words;

pub use analysis::{SearchLanguage, UnknownLanguage};
pub use error::{OpenError, WatchError};
pub use index::{EmbeddingWork, ProbeCheck, TantivyIndex, VectorModel};
pub use ingest::{IndexProgress, ProgressFn};
pub use open::{META_FILE, OpenOptions, OpenStats, SyncStats};
pub use owner::OnForwarded;
pub use schema::{SCHEMA_VERSION, TextField};
pub use vectors::UNRELATED_QUERIES;
pub use watcher::{DEBOUNCE, MAX_GATHER, OnChange, VaultWatcher, WatchSettler};
