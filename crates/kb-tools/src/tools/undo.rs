//! undo_last_change: reverts the most recent change kb made in this conversation (over
//! MCP: in this MCP session; from the CLI or the REST API without a conversation: the most
//! recent change kb made, anyone's), exactly, and says what it did and where it came from.
//! Undoing again walks further back. A file changed since is never thrown away: the undo
//! is refused, naming it, unless forced.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use kb_domain::{ChangeSource, LaterChanges, RepositoryError, UndoScope};

use crate::blocking::run_change;
use crate::context::{ToolContext, ToolServices};
use crate::result::{ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory, ToolHints};

/// Arguments of undo_last_change.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct UndoLastChangeArgs {
    /// Undo even when a file changed since (that version is kept in history). Only when
    /// the user insists after being shown what changed.
    #[serde(default)]
    pub force: bool,
}

/// One file the undo put back.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UndoneFile {
    /// Where the file was after the change undone (`None`: it did not exist).
    pub path_before: Option<String>,
    /// Where it is now (`None`: it was removed).
    pub path_after: Option<String>,
    /// The revision recording the undo.
    pub revision: i64,
}

/// What undo_last_change answers.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UndoData {
    /// What was undone, in words.
    pub undone: String,
    /// Where the undone change came from (`chat`, `api`, `cli`, `mcp`).
    #[serde(serialize_with = "crate::output::change_source")]
    #[schemars(with = "String")]
    pub by: ChangeSource,
    /// The files put back.
    pub files: Vec<UndoneFile>,
}

/// The undo_last_change tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct UndoLastChange;

impl Tool for UndoLastChange {
    const NAME: &'static str = "undo_last_change";
    const DESCRIPTION: &'static str = "Undo the most recent change made in this conversation (a capture, update, \
        move, delete or restore), bringing the files back exactly as they were. Use when the user says undo, \
        revert, take that back, or that was wrong. Calling it again undoes the change before.";
    const CATEGORY: ToolCategory = ToolCategory::Action;
    const HINTS: ToolHints = ToolHints::ADDITIVE;
    type Args = UndoLastChangeArgs;
    type Output = UndoData;

    async fn run(
        &self,
        args: UndoLastChangeArgs,
        ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<UndoData>, ToolError> {
        let repo = services.repository.clone();
        let by = ctx.change(Self::NAME);
        // An MCP client without a session has no changes of its own to undo.
        let scope = ctx.undo_scope().ok_or_else(|| {
            ToolError::from(RepositoryError::NothingToUndo(UndoScope::Session(String::new()).words()))
        })?;
        let later = if args.force { LaterChanges::Replace } else { LaterChanges::Refuse };
        let outcome = run_change(move || repo.undo_as(&scope, later, &by)).await??;
        Ok(ToolOutput::data(UndoData {
            undone: outcome.description,
            by: outcome.undone.first().map(|r| r.source).unwrap_or_default(),
            files: outcome
                .revisions
                .iter()
                .map(|r| UndoneFile {
                    path_before: r.path_before.as_ref().map(ToString::to_string),
                    path_after: r.path_after.as_ref().map(ToString::to_string),
                    revision: r.id,
                })
                .collect(),
        }))
    }
}
