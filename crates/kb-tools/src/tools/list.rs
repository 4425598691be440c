//! list_entries: entries newest first, filtered by category and status.

use kb_domain::ListFilter;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::args::{CategoryArg, Limit};
use crate::blocking::run_blocking;
use crate::context::{ToolContext, ToolServices};
use crate::output::EntryList;
use crate::result::{ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory, ToolHints};

/// Arguments of list_entries.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ListEntriesArgs {
    /// Only entries of this category.
    pub category: Option<CategoryArg>,
    /// Only entries with this status (for example active, waiting, blocked, someday, pending, done).
    pub status: Option<String>,
    /// Only notes in this folder of the vault or below it (like "Journal/2025"): the person's
    /// own folders hold notes of category "other".
    pub folder: Option<String>,
    /// How many entries to return at most (default 10, at most 100).
    pub limit: Option<Limit>,
}

/// The list_entries tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListEntries;

impl Tool for ListEntries {
    const NAME: &'static str = "list_entries";
    const DESCRIPTION: &'static str = "List entries of the knowledge base, most recently updated first, optionally \
        filtered by category, status and folder. Use when the user asks to see, show or list their entries (\"my active \
        projects\", \"what's in my inbox\").";
    const CATEGORY: ToolCategory = ToolCategory::Query;
    const HINTS: ToolHints = ToolHints::READ_ONLY;
    type Args = ListEntriesArgs;
    type Output = EntryList;

    async fn run(
        &self,
        args: ListEntriesArgs,
        _ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<EntryList>, ToolError> {
        let filter = ListFilter {
            category: args.category.map(Into::into),
            status: args.status.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()),
            limit: Limit::effective(args.limit),
            offset: 0,
            folder: args.folder.map(|f| f.trim().trim_matches('/').to_string()).filter(|f| !f.is_empty()),
        };
        let limit = filter.limit;
        let repo = services.repository.clone();
        let mut page = run_blocking(move || repo.list(&filter)).await??;
        // The repository promises the filters; the page size is enforced here as well.
        page.entries.truncate(limit);
        Ok(ToolOutput::data(EntryList::from(page)))
    }
}
