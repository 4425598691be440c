//! The search index port: [`SearchIndex`], its queries, hits and errors.

use crate::category::Category;
use crate::cause::Cause;
use crate::entry::Entry;
use crate::path::EntryPath;

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
#[derive(Debug, Clone, PartialEq)]
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
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResults {
    /// The hits of the page, best first.
    pub entries: Vec<SearchHit>,
    /// How many entries match in all.
    pub total: usize,
    /// Whether these came from the typo-tolerant retry.
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
