//! move_entry: move an entry to another category, transforming its frontmatter; or move
//! any note to another path of the vault (`targetPath`), which adopts a note of the
//! person's into a category when the path is in a category folder.

use kb_domain::{Category, EntryPath};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::args::{FilingCategoryArg, entry_path};
use crate::blocking::run_change;
use crate::context::{ToolContext, ToolServices};
use crate::resolve::{Resolution, Resolved, resolve_entry};
use crate::result::{ErrorCode, StateUpdate, ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory, ToolHints};

/// Arguments of move_entry.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct MoveEntryArgs {
    /// The entry: its current path (like inbox/garden-shed.md) or its name as the person says it ("the
    /// bakery idea").
    pub path: String,
    /// The category to move it into (named by kb's rules). Give this or targetPath.
    #[serde(rename = "targetCategory")]
    pub target_category: Option<FilingCategoryArg>,
    /// Instead of a category: the exact vault path to move it to, like "Archive/2024/garden-shed.md"
    /// or "projects/garden-shed.md" (a note of the person's moved into a category folder becomes an
    /// entry of that category).
    #[serde(rename = "targetPath")]
    pub target_path: Option<String>,
}

/// What move_entry answers.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MoveEntryData {
    /// Where it was.
    pub old_path: String,
    /// Where it is now.
    pub new_path: String,
    /// Its new category.
    #[serde(serialize_with = "crate::output::category")]
    #[schemars(with = "crate::output::CategoryName")]
    pub category: Category,
    /// How a name given for path was resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Resolution>,
}

/// Where move_entry was asked to take the note.
enum Target {
    Category(Category),
    Path(EntryPath),
}

/// The move_entry tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct MoveEntry;

impl Tool for MoveEntry {
    const NAME: &'static str = "move_entry";
    const DESCRIPTION: &'static str = "Move an entry to a different category, keeping everything written in it. \
        Use when the user reclassifies an entry (\"actually that should be a project\"), usually the entry filed \
        most recently, or to file an inbox entry once the user has said where it belongs. With targetPath \
        instead, move any note to another folder or file name of the vault. Links to it follow the move.";
    const CATEGORY: ToolCategory = ToolCategory::Action;
    const HINTS: ToolHints =
        ToolHints { read_only: false, destructive: false, idempotent: true, open_world: false };
    type Args = MoveEntryArgs;
    type Output = MoveEntryData;

    async fn run(
        &self,
        args: MoveEntryArgs,
        ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<MoveEntryData>, ToolError> {
        let target = match (args.target_category, args.target_path) {
            (Some(category), None) => Target::Category(category.into()),
            (None, Some(path)) => Target::Path(entry_path(path.trim())?),
            _ => {
                return Err(ToolError::new(
                    ErrorCode::InvalidArguments,
                    "give targetCategory or targetPath (one of them)",
                ));
            }
        };
        let Resolved { path, resolution } = resolve_entry(&args.path, "path", services).await?;
        let repo = services.repository.clone();
        let by = ctx.change(Self::NAME);
        let outcome = run_change(move || match target {
            Target::Category(category) => repo.move_entry_as(&path, category, &by),
            Target::Path(new) => repo.move_to_path_as(&path, &new, &by),
        })
        .await??;
        let new_path = outcome.entry.path.clone();
        Ok(ToolOutput {
            data: MoveEntryData {
                old_path: outcome.old_path.to_string(),
                new_path: new_path.to_string(),
                category: outcome.entry.category(),
                resolved: resolution,
            },
            state_updates: vec![StateUpdate::Moved {
                old_path: outcome.old_path,
                new_path: new_path.clone(),
            }],
            touched: Some(new_path),
        })
    }
}
