//! search_entries: full-text search through the index.

use kb_domain::SearchQuery;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::args::{CategoryArg, Limit};
use crate::blocking::run_blocking;
use crate::context::{ToolContext, ToolServices};
use crate::output::SearchFindings;
use crate::result::{ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory, ToolHints};

/// Arguments of search_entries.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SearchEntriesArgs {
    /// The words to look for; every word must match, as written or in another form ("meet" finds
    /// "meeting"). Put an exact phrase in double quotes.
    pub query: String,
    /// Only entries of this category.
    pub category: Option<CategoryArg>,
    /// How many hits to return at most (default 10, at most 100).
    pub limit: Option<Limit>,
    /// Search as you type: the last word may be unfinished ("land" finds "landlord").
    pub prefix: Option<bool>,
}

/// The search_entries tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct SearchEntries;

impl Tool for SearchEntries {
    const NAME: &'static str = "search_entries";
    const DESCRIPTION: &'static str = "Search entries by keywords in their names, fields, tags and notes, best \
        match first; names and tags count most. Use when the user wants to find entries about something (\"what do I have on the API?\", \
        \"find Sarah\").";
    const CATEGORY: ToolCategory = ToolCategory::Query;
    const HINTS: ToolHints = ToolHints::READ_ONLY;
    type Args = SearchEntriesArgs;
    type Output = SearchFindings;

    async fn run(
        &self,
        args: SearchEntriesArgs,
        _ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<SearchFindings>, ToolError> {
        let text = args.query.trim().to_string();
        if text.is_empty() {
            return Ok(ToolOutput::data(SearchFindings { entries: Vec::new(), total: 0, fuzzy: false }));
        }
        let limit = Limit::effective(args.limit);
        let query = SearchQuery {
            text,
            category: args.category.map(Into::into),
            limit,
            offset: 0,
            prefix: args.prefix.unwrap_or(false),
        };
        let index = services.search.clone();
        let mut results = run_blocking(move || index.search(&query)).await??;
        results.entries.truncate(limit);
        Ok(ToolOutput::data(SearchFindings::from(results)))
    }
}
