//! get_entry: one entry as it is on disk.

use kb_domain::Category;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::blocking::run_blocking;
use crate::context::{ToolContext, ToolServices};
use crate::resolve::{Resolution, Resolved, resolve_entry};
use crate::result::{ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory, ToolHints};

/// Arguments of get_entry.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GetEntryArgs {
    /// The entry: its path (like projects/clientco-integration.md) or its name as the person says it
    /// ("Priya", "the passport renewal").
    pub path: String,
}

/// One entry in full.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct EntryView {
    /// Its path.
    pub path: String,
    /// Its category.
    #[serde(serialize_with = "crate::output::category")]
    #[schemars(with = "crate::output::CategoryName")]
    pub category: Category,
    /// Its name.
    pub name: String,
    /// Its frontmatter, in file order.
    pub frontmatter: Value,
    /// Its body.
    pub content: String,
}

/// What get_entry answers.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct GetEntryData {
    /// The entry.
    pub entry: EntryView,
    /// How a name given for path was resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Resolution>,
}

/// The get_entry tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct GetEntry;

impl Tool for GetEntry {
    const NAME: &'static str = "get_entry";
    const DESCRIPTION: &'static str = "Get the full details of one entry (all its fields and notes). Use when the \
        user asks about a specific person, project, idea or task: give its path, or its name as the user says it.";
    const CATEGORY: ToolCategory = ToolCategory::Query;
    const HINTS: ToolHints = ToolHints::READ_ONLY;
    type Args = GetEntryArgs;
    type Output = GetEntryData;

    async fn run(
        &self,
        args: GetEntryArgs,
        _ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<GetEntryData>, ToolError> {
        let Resolved { path, resolution } = resolve_entry(&args.path, "path", services).await?;
        let repo = services.repository.clone();
        let entry = run_blocking(move || repo.get(&path)).await??;
        let touched = entry.path.clone();
        Ok(ToolOutput::data(GetEntryData {
            entry: EntryView {
                path: entry.path.to_string(),
                category: entry.category(),
                name: entry.name(),
                frontmatter: entry.frontmatter.to_json(),
                content: entry.body,
            },
            resolved: resolution,
        })
        .touching(touched))
    }
}
