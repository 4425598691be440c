//! The wire shapes tools answer in, where a tool's output shows a domain value: an entry
//! as lists show it, a search hit, a category, where a change came from. kb-domain's types
//! carry no JSON names; the names a client reads (camelCase, as in the MCP `outputSchema`
//! and the REST API) are written here, each type made from its domain value with `From`.

use chrono::{DateTime, Utc};
use kb_domain::{Category, ChangeSource, EntrySummary, ListPage, SearchHit, SearchResults};
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
    /// The best field that matched.
    pub matched_field: String,
    /// The matching passage, terms marked.
    pub snippet: String,
    /// The BM25 score.
    pub score: f32,
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
        }
    }
}

/// The hits of a search.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SearchFindings {
    /// The hits of the page, best first.
    pub entries: Vec<FoundEntry>,
    /// How many entries match in all.
    pub total: usize,
    /// Whether these came from the typo-tolerant retry.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fuzzy: bool,
}

impl From<SearchResults> for SearchFindings {
    fn from(results: SearchResults) -> SearchFindings {
        SearchFindings {
            entries: results.entries.into_iter().map(FoundEntry::from).collect(),
            total: results.total,
            fuzzy: results.fuzzy,
        }
    }
}
