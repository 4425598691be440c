//! update_entry: change fields (or the body) of an entry as it is on disk now.

use kb_domain::EntryUpdate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::args::entry_path;
use crate::blocking::run_blocking;
use crate::context::{ToolContext, ToolServices};
use crate::result::{ErrorCode, ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory};

/// Arguments of update_entry.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct UpdateEntryArgs {
    /// The entry path, like projects/clientco-integration.md.
    pub path: String,
    /// The fields to set, for example {"status": "done"}, {"next_action": "Call Sarah"}, {"due_date":
    /// "2026-12-15"}; "content" replaces the notes; null removes an optional field.
    pub updates: Map<String, Value>,
}

/// What update_entry answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateEntryData {
    /// The entry.
    pub path: String,
    /// The fields changed (`content` for the body).
    pub updated_fields: Vec<String>,
}

/// The update_entry tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct UpdateEntry;

impl Tool for UpdateEntry {
    const NAME: &'static str = "update_entry";
    const DESCRIPTION: &'static str = "Update fields of an existing entry (status, next_action, due_date, tags, \
        notes…). Use when the user wants to change or complete something already in the knowledge base. To \
        change its category use move_entry instead.";
    const CATEGORY: ToolCategory = ToolCategory::Action;
    type Args = UpdateEntryArgs;
    type Output = UpdateEntryData;

    async fn run(
        &self,
        args: UpdateEntryArgs,
        ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<UpdateEntryData>, ToolError> {
        let path = entry_path(&args.path)?;
        let update = EntryUpdate::from_json_object(args.updates)
            .map_err(|e| ToolError::new(ErrorCode::InvalidUpdate, e.to_string()))?;
        let repo = services.repository.clone();
        let by = ctx.change(Self::NAME);
        let outcome = run_blocking(move || repo.update_as(&path, &update, &by)).await??;
        Ok(ToolOutput::data(UpdateEntryData {
            path: outcome.entry.path.to_string(),
            updated_fields: outcome.updated_fields,
        }))
    }
}
