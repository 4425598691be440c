//! The wire shapes tools answer in, where a tool's output shows a domain value: an entry
//! as lists show it, a search hit, a category, where a change came from. kb-domain's types
//! carry no JSON names; the names a client reads (camelCase, as in the MCP `outputSchema`
//! and the REST API) are written here, each type made from its domain value with `From`.

use chrono::{DateTime, Utc};
use kb_domain::{
    Category, ChangeSource, EntrySummary, LinkKind, ListPage, MatchedBy, Passage, SearchHit, SearchMode,
    SearchResults,
};
use serde::{Serialize, Serializer};

// The schema of a `Category` field (`#[schemars(with = "CategoryName")]`): the folder
// name. Its doc line below is the description clients read in the tool's outputSchema.
/// One of the five category folders an entry lives in, or `other` for a note anywhere
/// else in the vault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CategoryName {
    /// People you know: `people/`.
    People,
    /// Things with a next action: `projects/`.
    Projects,
    /// Thoughts worth keeping: `ideas/`.
    Ideas,
    /// Errands and paperwork: `admin/`.
    Admin,
    /// Captures kb was unsure of, waiting for the person: `inbox/`.
    Inbox,
    /// A note of the person's outside the five folders, in any folder.
    Other,
}

impl From<Category> for CategoryName {
    fn from(category: Category) -> CategoryName {
        match category {
            Category::People => CategoryName::People,
            Category::Projects => CategoryName::Projects,
            Category::Ideas => CategoryName::Ideas,
            Category::Admin => CategoryName::Admin,
            Category::Inbox => CategoryName::Inbox,
            Category::Other => CategoryName::Other,
        }
    }
}

/// What a link leads to: a note of the vault, a file of the vault that is not a note (an
/// image, a PDF), or nothing (a broken link).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LinkKindName {
    /// A note: `path` says which.
    Note,
    /// A file that is not a note (`![[photo.png]]`, `[doc](file.pdf)`): `file` says which.
    File,
    /// No note or file of the vault: a broken link.
    Missing,
}

impl From<LinkKind> for LinkKindName {
    fn from(kind: LinkKind) -> LinkKindName {
        match kind {
            LinkKind::Note => LinkKindName::Note,
            LinkKind::File => LinkKindName::File,
            LinkKind::Missing => LinkKindName::Missing,
        }
    }
}

/// Writes a [`Category`] field as its folder name (`#[serde(serialize_with = ...)]`).
pub fn category<S: Serializer>(category: &Category, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(category.as_str())
}

/// Writes an optional [`Category`] field as its folder name, or `null`.
pub fn optional_category<S: Serializer>(
    category: &Option<Category>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match category {
        Some(category) => serializer.serialize_str(category.as_str()),
        None => serializer.serialize_none(),
    }
}

/// Writes a [`ChangeSource`] field as its name (`chat`, `api`, `cli`, `mcp`, `outside`).
pub fn change_source<S: Serializer>(source: &ChangeSource, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(source.as_str())
}

/// What list results and `index.md` show of an entry.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListedEntry {
    /// Its path.
    pub path: String,
    /// Its category.
    #[serde(serialize_with = "category")]
    #[schemars(with = "CategoryName")]
    pub category: Category,
    /// The folder it is in, vault-relative (`projects`, `Journal/2025`; empty at the root).
    pub folder: String,
    /// Its name.
    pub name: String,
    /// Its status, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// When it last changed, when known.
    pub updated_at: Option<DateTime<Utc>>,
    /// One line about it.
    pub summary: String,
}

impl From<EntrySummary> for ListedEntry {
    fn from(summary: EntrySummary) -> ListedEntry {
        ListedEntry {
            folder: summary.path.folder().to_string(),
            path: summary.path.to_string(),
            category: summary.category,
            name: summary.name,
            status: summary.status,
            updated_at: summary.updated_at,
            summary: summary.summary,
        }
    }
}

/// A page of entries, newest `updated_at` first.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct EntryList {
    /// The entries of the page.
    pub entries: Vec<ListedEntry>,
    /// How many entries match in all.
    pub total: usize,
}

impl From<ListPage> for EntryList {
    fn from(page: ListPage) -> EntryList {
        EntryList { entries: page.entries.into_iter().map(ListedEntry::from).collect(), total: page.total }
    }
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FoundEntry {
    /// The entry.
    pub path: String,
    /// Its name.
    pub name: String,
    /// Its category.
    #[serde(serialize_with = "category")]
    #[schemars(with = "CategoryName")]
    pub category: Category,
    /// The best field that matched (`content` for the notes; for a hit found by meaning
    /// only, the field of its nearest part).
    pub matched_field: String,
    /// The matching passage: words marked when they matched, else the part of the entry
    /// nearest the query.
    pub snippet: String,
    /// The mode's ranking score (BM25 for keyword, cosine similarity for semantic, the
    /// fused reciprocal-rank score for hybrid).
    pub score: f32,
    /// Why it matched: `keyword` (all its words), `partial` (some of them: after every
    /// `keyword` hit), `semantic` or `both`.
    #[serde(serialize_with = "matched_by")]
    #[schemars(with = "MatchedByName")]
    pub matched_by: MatchedBy,
    /// The part of the entry that matched best, with the lines of its file holding it
    /// (get_entry's `lines` answers them); absent when no line holds it (a name taken
    /// from the file name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passage: Option<PassageView>,
}

/// The part of an entry a search hit matched best, and where it is in the entry's file:
/// for a match of words, the paragraph of the notes (or the frontmatter value) holding
/// the most of them; for a match by meaning, the part of the entry nearest the query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PassageView {
    /// The passage as plain text, nothing marked: the notes' lines as written, or a
    /// frontmatter value as read (tags joined by `, `); cut around what matched, with `…`,
    /// when longer than about a thousand characters.
    pub text: String,
    /// Its first line in the file, counted from 1 with the frontmatter and its delimiters
    /// (for a frontmatter value: its key's line).
    pub start_line: u32,
    /// Its last line, included: `sed -n START,ENDp FILE` prints the passage.
    pub end_line: u32,
}

impl From<Passage> for PassageView {
    fn from(passage: Passage) -> PassageView {
        PassageView { text: passage.text, start_line: passage.lines.start(), end_line: passage.lines.end() }
    }
}

/// How a [`MatchedBy`] is written: its wire name.
fn matched_by<S: serde::Serializer>(value: &MatchedBy, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(value.as_str())
}

/// The schema of a hit's `matchedBy`.
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code, reason = "a schema only")]
enum MatchedByName {
    /// Its words matched.
    Keyword,
    /// Only its meaning matched.
    Semantic,
    /// Both.
    Both,
    /// Some of its words, not all.
    Partial,
}

/// The schema of a search's `mode`.
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code, reason = "a schema only")]
enum SearchModeName {
    /// By words.
    Keyword,
    /// Words and meaning, fused.
    Hybrid,
    /// By meaning.
    Semantic,
}

/// How a [`SearchMode`] is written: its wire name.
fn search_mode<S: serde::Serializer>(value: &SearchMode, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(value.as_str())
}

impl From<SearchHit> for FoundEntry {
    fn from(hit: SearchHit) -> FoundEntry {
        FoundEntry {
            path: hit.path.to_string(),
            name: hit.name,
            category: hit.category,
            matched_field: hit.matched_field,
            snippet: hit.snippet,
            score: hit.score,
            matched_by: hit.matched_by,
            passage: hit.passage.map(PassageView::from),
        }
    }
}

/// The hits of a search.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchFindings {
    /// The hits of the page, best first.
    pub entries: Vec<FoundEntry>,
    /// How many entries match in all: all the words (or the typo-tolerant retry's).
    pub total: usize,
    /// How many entries hold some of the words but not all: they follow the others on the
    /// pages, when those are fewer than asked for (0 when they were not looked for).
    pub partial_total: usize,
    /// Whether these came from the typo-tolerant retry.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fuzzy: bool,
    /// The mode that answered: `keyword`, `hybrid` or `semantic`.
    #[serde(serialize_with = "search_mode")]
    #[schemars(with = "SearchModeName")]
    pub mode: SearchMode,
    /// How many hits of the page matched by meaning only (hybrid and semantic modes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub semantic_hits: Option<usize>,
    /// Why the search answered by words when asked for meaning (the embedding server
    /// failed, or its vectors are not the size of those kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

impl SearchFindings {
    /// No hits, as a keyword search answers.
    pub fn none() -> SearchFindings {
        SearchFindings::from(SearchResults::none())
    }
}

impl From<SearchResults> for SearchFindings {
    fn from(results: SearchResults) -> SearchFindings {
        SearchFindings {
            entries: results.entries.into_iter().map(FoundEntry::from).collect(),
            total: results.total,
            partial_total: results.partial_total,
            fuzzy: results.fuzzy,
            mode: results.mode,
            semantic_hits: (results.mode != SearchMode::Keyword).then_some(results.semantic_hits),
            notice: None,
        }
    }
}
