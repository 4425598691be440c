//! delete_entry: removes one entry's file. History keeps it, so restore (or undo) brings
//! it back. In a chat it only proposes, and runs once the person confirms.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blocking::{run_blocking, run_change};
use crate::context::{Confirmation, ToolContext, ToolServices};
use crate::resolve::{Resolution, Resolved, require_exact, resolve_entry};
use crate::result::{StateUpdate, ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory, ToolHints};

/// Arguments of delete_entry.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DeleteEntryArgs {
    /// The one entry to delete: its path (like projects/old-site.md) or its name as the person says it.
    pub path: String,
}

/// What delete_entry answers.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteEntryData {
    /// The entry.
    pub path: String,
    /// Whether it was deleted (false: the person is asked first).
    pub deleted: bool,
    /// The revision recording the deletion (restore it to bring the entry back).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// Set when nothing was done yet: the person must confirm.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub confirmation_required: bool,
    /// The question to put to the person, when confirmation is required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal: Option<String>,
    /// How a name given for path was resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Resolution>,
}

/// The delete_entry tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeleteEntry;

impl Tool for DeleteEntry {
    const NAME: &'static str = "delete_entry";
    const DESCRIPTION: &'static str = "Delete one entry (its history keeps it; undo_last_change brings it back). \
        Use only when the user clearly asks to delete or remove a specific entry. In a chat it does not delete at \
        once: it answers confirmationRequired with a proposal, which you put to the user as a question; their \
        next message confirms or cancels. Never delete several entries at once.";
    const CATEGORY: ToolCategory = ToolCategory::Action;
    const HINTS: ToolHints =
        ToolHints { read_only: false, destructive: true, idempotent: true, open_world: false };
    type Args = DeleteEntryArgs;
    type Output = DeleteEntryData;

    async fn run(
        &self,
        args: DeleteEntryArgs,
        ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<DeleteEntryData>, ToolError> {
        let resolved = resolve_entry(&args.path, "path", services).await?;
        require_exact(&resolved, "path", ctx.confirmation, services).await?;
        let Resolved { path, resolution } = resolved;
        if ctx.confirmation == Confirmation::Ask {
            // The entry must exist before the person is asked about it.
            let repo = services.repository.clone();
            let checked = path.clone();
            let entry = run_blocking(move || repo.get(&checked)).await??;
            let proposal = match &resolution {
                Some(_) => format!("Delete {} ({path})?", entry.name()),
                None => format!("Delete {path}?"),
            };
            let arguments = serde_json::to_value(&DeleteEntryArgs { path: path.to_string() })
                .map_err(|e| ToolError::internal(e.to_string()))?;
            return Ok(ToolOutput {
                data: DeleteEntryData {
                    path: path.to_string(),
                    deleted: false,
                    revision: None,
                    confirmation_required: true,
                    proposal: Some(proposal.clone()),
                    resolved: resolution,
                },
                state_updates: vec![StateUpdate::ConfirmationRequested {
                    tool: Self::NAME.to_string(),
                    arguments,
                    proposal,
                }],
                touched: Some(path),
            });
        }
        let repo = services.repository.clone();
        let by = ctx.change(Self::NAME);
        let target = path.clone();
        let revision = run_change(move || repo.delete_as(&target, &by)).await??;
        Ok(ToolOutput::data(DeleteEntryData {
            path: path.to_string(),
            deleted: true,
            revision: revision.map(|r| r.id),
            confirmation_required: false,
            proposal: None,
            resolved: resolution,
        })
        .touching(path))
    }
}
