//! search_entries: search through the index, by words, by meaning, or both (hybrid, the
//! default when an embedding model is set). Only this tool searches by meaning: name
//! resolution, duplicates and search-as-you-type stay keyword.

use kb_domain::{EmbeddingError, QueryVector, SearchMode, SearchQuery, TextRole};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::args::{CategoryArg, Limit};
use crate::blocking::run_blocking;
use crate::context::{ToolContext, ToolServices};
use crate::output::SearchFindings;
use crate::result::{ErrorCode, ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory, ToolHints};

/// Arguments of search_entries.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SearchEntriesArgs {
    /// The words to look for, or the person's question as they said it. Entries holding every
    /// word (as written or in another form: "meet" finds "meeting") come first; then, when
    /// they are fewer than asked, entries holding some of the words (`matchedBy: partial`).
    /// Words such as "how", "the", "my" are left out. Put an exact phrase in double quotes.
    pub query: String,
    /// Only entries of this category.
    pub category: Option<CategoryArg>,
    /// How many hits to return at most (default 10, at most 100).
    pub limit: Option<Limit>,
    /// Search as you type: the last word may be unfinished ("land" finds "landlord").
    /// Always by words.
    pub prefix: Option<bool>,
    /// How to match: `hybrid` (words and meaning; the default when kb has an embedding
    /// model), `keyword` (words only; the default without one) or `semantic` (meaning
    /// only: for questions in other words than the notes, such as "how is my sister").
    pub mode: Option<SearchModeArg>,
}

/// How search_entries matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchModeArg {
    /// Words and meaning, fused.
    Hybrid,
    /// Words only.
    Keyword,
    /// Meaning only.
    Semantic,
}

impl std::str::FromStr for SearchModeArg {
    type Err = String;

    /// The mode named `text` (`hybrid`, `keyword` or `semantic`).
    fn from_str(text: &str) -> Result<SearchModeArg, String> {
        let all = [
            ("hybrid", SearchModeArg::Hybrid),
            ("keyword", SearchModeArg::Keyword),
            ("semantic", SearchModeArg::Semantic),
        ];
        crate::args::one_of(&all, text)
    }
}

impl From<SearchModeArg> for SearchMode {
    fn from(arg: SearchModeArg) -> SearchMode {
        match arg {
            SearchModeArg::Hybrid => SearchMode::Hybrid,
            SearchModeArg::Keyword => SearchMode::Keyword,
            SearchModeArg::Semantic => SearchMode::Semantic,
        }
    }
}

/// The search_entries tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct SearchEntries;

impl Tool for SearchEntries {
    const NAME: &'static str = "search_entries";
    const DESCRIPTION: &'static str = "Search entries by their words (names, fields, tags, notes; names and tags \
        count most) and, when kb has an embedding model, by meaning, best match first. Use when the user wants to find entries \
        about something (\"what do I have on the API?\", \"find Sarah\", \"anything about money owed\").";
    const CATEGORY: ToolCategory = ToolCategory::Query;
    const HINTS: ToolHints = ToolHints::READ_ONLY;
    type Args = SearchEntriesArgs;
    type Output = SearchFindings;

    async fn run(
        &self,
        args: SearchEntriesArgs,
        ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<SearchFindings>, ToolError> {
        let text = args.query.trim().to_string();
        if text.is_empty() {
            return Ok(ToolOutput::data(SearchFindings::none()));
        }
        let prefix = args.prefix.unwrap_or(false);
        let asked = args.mode.map(SearchMode::from);
        let mode = match (asked, &services.embedder) {
            // Search as you type answers each key: by words.
            _ if prefix => SearchMode::Keyword,
            (Some(SearchMode::Keyword), _) => SearchMode::Keyword,
            (Some(mode), Some(_)) => mode,
            (Some(mode), None) => {
                return Err(ToolError::new(
                    ErrorCode::SemanticUnavailable,
                    format!(
                        "{} search needs an embedding model (KB_EMBEDDINGS_MODEL); keyword search is available",
                        mode.as_str()
                    ),
                ));
            }
            (None, Some(_)) => SearchMode::Hybrid,
            (None, None) => SearchMode::Keyword,
        };
        let mut notice = None;
        let vector = match (&services.embedder, mode) {
            (Some(embedder), SearchMode::Hybrid | SearchMode::Semantic) => {
                match embedder.embed(std::slice::from_ref(&text), TextRole::Query).await {
                    Ok(mut vectors) => vectors.pop().map(|values| QueryVector::new(embedder.model(), values)),
                    Err(error) if mode == SearchMode::Hybrid => {
                        tracing::warn!(%error, "the query could not be embedded; searching by words");
                        notice = Some(unavailable(&error));
                        None
                    }
                    Err(error) => {
                        return Err(ToolError::new(ErrorCode::SemanticUnavailable, cannot_search(&error)));
                    }
                }
            }
            _ => None,
        };
        let limit = Limit::effective(args.limit);
        let query = SearchQuery {
            text,
            category: args.category.map(Into::into),
            limit,
            offset: 0,
            prefix,
            mode,
            vector,
            // A question typed as it is said finds the entries holding some of its words
            // after those holding all of them.
            partial: !prefix,
            reader: ctx.person.clone(),
        };
        let index = services.search.clone();
        let mut results = run_blocking(move || index.search(&query)).await??;
        results.entries.truncate(limit);
        // A vector the index could not search with (of another size than those it keeps,
        // say) is answered by words.
        let by_words_only = mode != SearchMode::Keyword && results.mode == SearchMode::Keyword;
        if by_words_only && mode == SearchMode::Semantic {
            return Err(ToolError::new(ErrorCode::SemanticUnavailable, MISMATCH));
        }
        let mut findings = SearchFindings::from(results);
        findings.notice =
            notice.or_else(|| by_words_only.then(|| format!("{MISMATCH}; these hits match by words")));
        Ok(ToolOutput::data(findings))
    }
}

/// What a person is told when the query's vector does not fit the vectors kept.
const MISMATCH: &str = "search by meaning is unavailable: the embedding model's vectors are not the size of those \
    kept (did the model change? delete .kb/vectors to embed again)";

/// What a person is told beside the hits by words when the embedding server failed.
fn unavailable(error: &EmbeddingError) -> String {
    format!("search by meaning is unavailable: {error}; these hits match by words")
}

/// What a person is told when a search by meaning alone cannot answer as the embedding
/// server failed (there are no hits).
fn cannot_search(error: &EmbeddingError) -> String {
    format!("search by meaning is unavailable: {error}; a search by words (mode keyword) still answers")
}
