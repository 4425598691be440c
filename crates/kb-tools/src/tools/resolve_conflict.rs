//! resolve_conflict: settles a sync conflict — a note two devices changed in ways that do
//! not merge, with the other version written beside it as a conflict copy — by keeping
//! one version or both, as one change undo reverts. It throws a version away, so in a chat
//! it only proposes, and runs once the person confirms.

use kb_domain::conflicts::ConflictKeep;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::args::entry_path;
use crate::blocking::{run_blocking, run_change};
use crate::context::{Confirmation, ToolContext, ToolServices};
use crate::result::{StateUpdate, ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory, ToolHints};

/// Which version to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Keep {
    /// The conflict copy's version becomes the note (it keeps the note's id).
    Mine,
    /// The note stays as it is; the copy goes.
    Theirs,
    /// Both: the copy stays as a note of its own.
    Both,
}

impl From<Keep> for ConflictKeep {
    fn from(keep: Keep) -> ConflictKeep {
        match keep {
            Keep::Mine => ConflictKeep::Mine,
            Keep::Theirs => ConflictKeep::Theirs,
            Keep::Both => ConflictKeep::Both,
        }
    }
}

/// Arguments of resolve_conflict.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ResolveConflictArgs {
    /// The conflict copy (like projects/shed.conflict-laptop-20261129-101500.md), or the
    /// note when it has exactly one copy beside it.
    pub path: String,
    /// mine: the copy's version becomes the note; theirs: the note stays and the copy
    /// goes; both: the copy stays as a note of its own.
    pub keep: Keep,
}

/// What resolve_conflict answers.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResolveConflictData {
    /// The note.
    pub path: String,
    /// The conflict copy.
    pub copy: String,
    /// What is kept.
    pub keep: Keep,
    /// Whether it was resolved (false: the person is asked first).
    pub resolved: bool,
    /// With both kept, where the copy's version is now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept_as: Option<String>,
    /// Set when nothing was done yet: the person must confirm.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub confirmation_required: bool,
    /// The question to put to the person, when confirmation is required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal: Option<String>,
}

/// The resolve_conflict tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResolveConflict;

impl Tool for ResolveConflict {
    const NAME: &'static str = "resolve_conflict";
    const DESCRIPTION: &'static str = "Resolve a sync conflict: a note changed on two devices in ways that do not \
        merge keeps one version, and the other is a conflict copy beside it (NAME.conflict-DEVICE-TIME.md, with a \
        conflict_of field). keep: mine (the copy's version becomes the note), theirs (the note stays, the copy goes) \
        or both (the copy stays as a note of its own). Use only when the user says which version to keep. In a \
        chat it does not resolve at once: it answers confirmationRequired with a proposal, which you put to the \
        user as a question; their next message confirms or cancels. undo_last_change takes it back.";
    const CATEGORY: ToolCategory = ToolCategory::Action;
    const HINTS: ToolHints =
        ToolHints { read_only: false, destructive: true, idempotent: false, open_world: false };
    type Args = ResolveConflictArgs;
    type Output = ResolveConflictData;

    async fn run(
        &self,
        args: ResolveConflictArgs,
        ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<ResolveConflictData>, ToolError> {
        let named = entry_path(&args.path)?;
        let repo = services.repository.clone();
        // The copy is found before the person is asked: a path with no conflict is refused.
        let copy = run_blocking(move || repo.conflict_copy_for(&named)).await??;
        if ctx.confirmation == Confirmation::Ask {
            let what = match args.keep {
                Keep::Mine => format!("replace the note with the version in {copy}"),
                Keep::Theirs => format!("keep the note as it is and remove {copy}"),
                Keep::Both => format!("keep {copy} as a note of its own"),
            };
            let proposal = format!("Resolve the sync conflict: {what}?");
            let confirmed = ResolveConflictArgs { path: copy.to_string(), keep: args.keep };
            let arguments =
                serde_json::to_value(&confirmed).map_err(|e| ToolError::internal(e.to_string()))?;
            return Ok(ToolOutput {
                data: ResolveConflictData {
                    path: copy.to_string(),
                    copy: copy.to_string(),
                    keep: args.keep,
                    resolved: false,
                    kept_as: None,
                    confirmation_required: true,
                    proposal: Some(proposal.clone()),
                },
                state_updates: vec![StateUpdate::ConfirmationRequested {
                    tool: Self::NAME.to_string(),
                    arguments,
                    proposal,
                }],
                touched: Some(copy),
            });
        }
        let repo = services.repository.clone();
        let by = ctx.change(Self::NAME);
        let keep = args.keep;
        let target = copy.clone();
        let resolved = run_change(move || repo.resolve_conflict_as(&target, keep.into(), &by)).await??;
        let note = resolved.note.clone();
        Ok(ToolOutput::data(ResolveConflictData {
            path: resolved.note.to_string(),
            copy: resolved.copy.to_string(),
            keep,
            resolved: true,
            kept_as: resolved.kept_as.as_ref().map(ToString::to_string),
            confirmation_required: false,
            proposal: None,
        })
        .touching(note))
    }
}
