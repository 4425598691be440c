//! update_entry: change fields and the notes of an entry as it is on disk now: fields are
//! set, and the notes edited in one of five modes (append, prepend, replace, section,
//! find_replace), checked before anything changes.

use kb_domain::{BodyEdit, BodyEditMode, BodyEditRequest, EntryUpdate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::args::Count;
use crate::blocking::run_change;
use crate::context::{ToolContext, ToolServices};
use crate::resolve::{Resolution, Resolved, resolve_entry};
use crate::result::{ErrorCode, ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory, ToolHints};

/// Arguments of update_entry.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct UpdateEntryArgs {
    /// The entry: its path (like projects/clientco-integration.md) or its name as the person says it
    /// ("Priya", "the passport renewal").
    pub path: String,
    /// The fields to set, for example {"status": "done"}, {"next_action": "Call Sarah"}, {"due_date":
    /// "2026-12-15"}; null removes an optional field. Change the notes with body instead.
    pub updates: Option<Map<String, Value>>,
    /// A change to the notes (the Markdown after the fields), for example {"mode": "section", "section":
    /// "Log", "content": "Called the roofer"} or {"mode": "find_replace", "find": "Friday", "content":
    /// "Monday"}.
    pub body: Option<BodyEditArgs>,
}

/// A change to the notes of an entry.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BodyEditArgs {
    /// append: add content at the end; prepend: add it at the start; replace: the notes become content;
    /// section: add content under the heading "## {section}" (created at the end when missing; in a Log
    /// section content becomes a dated line); find_replace: replace the exact text find with content.
    pub mode: BodyModeArg,
    /// The text to add (append, prepend, section), the new notes (replace), or what find becomes
    /// (find_replace; may be empty to remove it).
    pub content: String,
    /// For mode section only: the heading's text, like "Log" or "Tasks".
    pub section: Option<String>,
    /// For mode find_replace only: the exact text to replace, as it is written in the notes.
    pub find: Option<String>,
    /// For mode find_replace only: how many times find occurs (default 1); when it occurs a different
    /// number of times nothing changes.
    pub expected_replacements: Option<Count>,
}

/// The modes of a body edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BodyModeArg {
    /// Add at the end.
    Append,
    /// Add at the start.
    Prepend,
    /// Replace the whole notes.
    Replace,
    /// Add under a heading.
    Section,
    /// Replace a counted text.
    FindReplace,
}

impl From<BodyModeArg> for BodyEditMode {
    fn from(mode: BodyModeArg) -> BodyEditMode {
        match mode {
            BodyModeArg::Append => BodyEditMode::Append,
            BodyModeArg::Prepend => BodyEditMode::Prepend,
            BodyModeArg::Replace => BodyEditMode::Replace,
            BodyModeArg::Section => BodyEditMode::Section,
            BodyModeArg::FindReplace => BodyEditMode::FindReplace,
        }
    }
}

impl BodyEditArgs {
    /// The edit the JSON `value` asks for (update_entry's `body`, as a client sent it),
    /// checked as a call's arguments are, or every problem with it.
    pub fn from_json(value: Value) -> Result<BodyEditArgs, String> {
        let schema = crate::schema::parameters_schema::<BodyEditArgs>();
        let problems = crate::validate::check_arguments(&schema, &value);
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        serde_json::from_value(value).map_err(|e| e.to_string())
    }
}

impl From<BodyEditArgs> for BodyEditRequest {
    fn from(args: BodyEditArgs) -> BodyEditRequest {
        BodyEditRequest {
            mode: args.mode.into(),
            content: args.content,
            section: args.section,
            find: args.find,
            expected_replacements: args.expected_replacements.map(Count::get),
        }
    }
}

/// What update_entry answers.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateEntryData {
    /// The entry.
    pub path: String,
    /// The fields changed (`content` for the body).
    pub updated_fields: Vec<String>,
    /// How a name given for path was resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Resolution>,
}

/// The update_entry tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct UpdateEntry;

impl Tool for UpdateEntry {
    const NAME: &'static str = "update_entry";
    const DESCRIPTION: &'static str = "Update fields of an existing entry (status, next_action, due_date, tags…) \
        and/or edit its notes. Use when the user wants to change or complete something already in the knowledge \
        base. For the notes prefer the smallest edit: append or prepend a paragraph, add a line under a section \
        (a Log section gets today's date), or find_replace an exact text; replace rewrites all the notes. To \
        change its category use move_entry instead.";
    const CATEGORY: ToolCategory = ToolCategory::Action;
    const HINTS: ToolHints = ToolHints::ADDITIVE;
    type Args = UpdateEntryArgs;
    type Output = UpdateEntryData;

    async fn run(
        &self,
        args: UpdateEntryArgs,
        ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<UpdateEntryData>, ToolError> {
        let invalid = |message: String| ToolError::new(ErrorCode::InvalidUpdate, message);
        let mut update = EntryUpdate::from_json_object(args.updates.unwrap_or_default())
            .map_err(|e| invalid(e.to_string()))?;
        if let Some(body) = args.body {
            if update.body.is_some() {
                return Err(invalid(
                    "the notes are changed twice, by updates.content and by body: use body only".to_string(),
                ));
            }
            update.body =
                Some(BodyEdit::from_request(body.into(), ctx.today).map_err(|e| invalid(e.to_string()))?);
        }
        let Resolved { path, resolution } = resolve_entry(&args.path, "path", services).await?;
        let repo = services.repository.clone();
        let by = ctx.change(Self::NAME);
        let outcome = run_change(move || repo.update_as(&path, &update, &by)).await??;
        Ok(ToolOutput::data(UpdateEntryData {
            path: outcome.entry.path.to_string(),
            updated_fields: outcome.updated_fields,
            resolved: resolution,
        })
        .touching(outcome.entry.path))
    }
}
