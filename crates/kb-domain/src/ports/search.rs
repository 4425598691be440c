//! The search index port: [`SearchIndex`], its queries, hits and errors, and what it
//! knows of meaning: the modes of a search, related entries and how far embedding got.

use std::sync::Arc;

use crate::category::Category;
use crate::cause::Cause;
use crate::entry::Entry;
use crate::lines::LineRange;
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

/// How a search matches entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum SearchMode {
    /// By words only (stems, phrases, prefix, the typo retry): the default when no
    /// embedding model is set.
    #[default]
    Keyword,
    /// Words and meaning, the two rankings fused: the default with a model.
    Hybrid,
    /// By meaning only: the entries whose parts are nearest the query.
    Semantic,
}

impl SearchMode {
    /// The mode's wire name (`keyword`, `hybrid`, `semantic`).
    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Keyword => "keyword",
            SearchMode::Hybrid => "hybrid",
            SearchMode::Semantic => "semantic",
        }
    }

    /// The mode a wire name names.
    pub fn parse(name: &str) -> Option<SearchMode> {
        match name.trim().to_ascii_lowercase().as_str() {
            "keyword" => Some(SearchMode::Keyword),
            "hybrid" => Some(SearchMode::Hybrid),
            "semantic" => Some(SearchMode::Semantic),
            _ => None,
        }
    }
}

/// A query's embedding, made by an [`crate::Embedder`] of the model whose vectors the
/// index keeps (cheap to clone).
#[derive(Debug, Clone, PartialEq)]
pub struct QueryVector {
    /// The model that made it.
    model: Arc<str>,
    /// Its numbers.
    values: Arc<[f32]>,
}

impl QueryVector {
    /// The vector `values` the embedding model `model` made.
    pub fn new(model: impl Into<Arc<str>>, values: impl Into<Arc<[f32]>>) -> QueryVector {
        QueryVector { model: model.into(), values: values.into() }
    }

    /// The model that made it.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Its numbers.
    pub fn values(&self) -> &[f32] {
        &self.values
    }
}

/// A search request.
#[derive(Debug, Clone, PartialEq, Default)]
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
    /// How entries match (keyword unless asked).
    pub mode: SearchMode,
    /// The query's embedding, which hybrid and semantic modes need: without it they
    /// answer as keyword search does.
    pub vector: Option<QueryVector>,
    /// Whether entries holding only some of the words follow those holding all of them
    /// when these are fewer than the page asks for (a question typed as it is said). Off
    /// for name resolution, duplicates and search as you type.
    pub partial: bool,
    /// Who searches, when one of the people kb serves does: the search then sees their
    /// own changes at once and other people's a moment later (once committed). `None`:
    /// every change made before the search.
    pub reader: Option<String>,
}

/// Why a hit matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchedBy {
    /// Its words.
    Keyword,
    /// Its meaning only.
    Semantic,
    /// Both.
    Both,
    /// Some of its words, not all (see [`SearchQuery::partial`]).
    Partial,
}

impl MatchedBy {
    /// The wire name (`keyword`, `semantic`, `both`, `partial`).
    pub fn as_str(self) -> &'static str {
        match self {
            MatchedBy::Keyword => "keyword",
            MatchedBy::Semantic => "semantic",
            MatchedBy::Both => "both",
            MatchedBy::Partial => "partial",
        }
    }
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
    /// The matching passage: terms marked when its words matched, else the part of it
    /// nearest the query.
    pub snippet: String,
    /// The mode's ranking score, higher first: BM25 in keyword mode, the cosine
    /// similarity of its nearest part in semantic mode, the fused reciprocal-rank score in
    /// hybrid mode.
    pub score: f32,
    /// Why it matched.
    pub matched_by: MatchedBy,
    /// The part of the entry that matched best and the lines of its file holding it;
    /// `None` when no line of the file holds it (a name taken from the file name).
    pub passage: Option<Passage>,
}

/// The part of an entry a hit matched best, and where it is in the entry's file: for a
/// match of its words, the paragraph of the notes (or the frontmatter value) holding the
/// most of them; for a match by meaning, the part of the entry nearest the query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    /// The passage as plain text, nothing marked: the notes' lines as written (without
    /// their line ends), a frontmatter value as read (tags joined by `, `). A passage
    /// longer than about a thousand characters is cut around what matched, with `…`
    /// where it was cut.
    pub text: String,
    /// The lines of the file holding it, counted from 1, the frontmatter included: for a
    /// frontmatter value, its key's line to the value's last line; `sed -n START,ENDp`
    /// prints them.
    pub lines: LineRange,
}

/// The hits of a search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResults {
    /// The hits of the page, best first.
    pub entries: Vec<SearchHit>,
    /// How many entries match in all (all the words, or the typo-tolerant retry's).
    pub total: usize,
    /// How many entries hold some of the words but not all, when asked for
    /// ([`SearchQuery::partial`]): they follow the others.
    pub partial_total: usize,
    /// Whether these came from the typo-tolerant retry.
    pub fuzzy: bool,
    /// The mode that answered (keyword when a hybrid or semantic search had no vectors to
    /// search).
    pub mode: SearchMode,
    /// How many hits of the page matched by meaning only.
    pub semantic_hits: usize,
}

impl SearchResults {
    /// No hits, as a keyword search answers.
    pub fn none() -> SearchResults {
        SearchResults {
            entries: Vec::new(),
            total: 0,
            partial_total: 0,
            fuzzy: false,
            mode: SearchMode::Keyword,
            semantic_hits: 0,
        }
    }
}

/// An entry near another in meaning.
#[derive(Debug, Clone, PartialEq)]
pub struct RelatedEntry {
    /// The entry.
    pub path: EntryPath,
    /// Its name.
    pub name: String,
    /// Its category.
    pub category: Category,
    /// The cosine similarity of the two entries' vectors (1 is the same meaning).
    pub score: f32,
}

/// How far embedding got: entries with vectors of the model, of those indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddingCoverage {
    /// The embedding model.
    pub model: String,
    /// Entries whose every part has a vector of it.
    pub embedded: usize,
    /// Entries in the search index.
    pub total: usize,
    /// Entries waiting to be embedded.
    pub queued: usize,
    /// Whether the cut of matches by meaning is measured on this vault (with queries on
    /// nothing it holds); until it is, a default cut holds.
    pub calibrated: bool,
}

/// The full-text index of the vault (derived data: the vault is the truth).
pub trait SearchIndex: Send + Sync {
    /// Answers a query.
    fn search(&self, query: &SearchQuery) -> Result<SearchResults, SearchError>;
    /// Adds or replaces an entry, visible to the next search.
    fn upsert(&self, entry: &Entry) -> Result<(), SearchError>;
    /// Removes an entry, visible to the next search.
    fn remove(&self, path: &EntryPath) -> Result<(), SearchError>;

    /// Up to `limit` other entries nearest `path` in meaning, nearest first: none when
    /// the index keeps no vectors (no embedding model) or `path` has none yet.
    fn related(&self, path: &EntryPath, limit: usize) -> Result<Vec<RelatedEntry>, SearchError> {
        let _ = (path, limit);
        Ok(Vec::new())
    }

    /// How far embedding got, when the index keeps vectors.
    fn embedding_coverage(&self) -> Option<EmbeddingCoverage> {
        None
    }
}
