//! merge_entries: merges entries that are one thing (two entries for one person) into one.
//! The target keeps its fields, gains each source's notes under a dated section, unites its
//! tags and list fields with theirs and takes their names as aliases; the sources are
//! removed and references to them point at the target. One change in history, so
//! undo_last_change reverts the whole merge. In a chat it only proposes, and runs once the
//! person confirms.

use kb_domain::merge::check_merge;
use kb_domain::{EntryPath, RepositoryError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blocking::{run_blocking, run_change};
use crate::context::{Confirmation, ToolContext, ToolServices};
use crate::resolve::{Resolution, Resolved, require_exact, resolve_entry};
use crate::result::{StateUpdate, ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory, ToolHints};

/// Arguments of merge_entries.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MergeEntriesArgs {
    /// The entry to keep: its path (like people/priya-raman.md) or its name as the person says it. It keeps
    /// its name and fields and gains the others' notes, tags and list fields.
    pub target_path: String,
    /// The entries to merge into it and remove: each a path or a name, each once, never the target itself.
    pub source_paths: Vec<String>,
}

/// What merge_entries answers.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MergeEntriesData {
    /// The entry kept (the target).
    pub path: String,
    /// The entries merged into it and removed (nothing yet when confirmation is required).
    pub merged: Vec<String>,
    /// Other entries whose references to a merged entry now point at the target.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub references_updated: Vec<String>,
    /// Set when nothing was done yet: the person must confirm.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub confirmation_required: bool,
    /// The question to put to the person, when confirmation is required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal: Option<String>,
    /// How names given for targetPath and sourcePaths were resolved.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resolved: Vec<Resolution>,
}

/// The merge_entries tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct MergeEntries;

impl Tool for MergeEntries {
    const NAME: &'static str = "merge_entries";
    const DESCRIPTION: &'static str = "Merge entries that are the same thing into one: the target keeps its name \
        and fields, gains each other entry's notes under a dated section, their tags and list fields, and their \
        names as aliases; the other entries are removed and links to them now lead to the target \
        (undo_last_change reverts the whole merge). Use after find_duplicates shows duplicates the user wants \
        merged, or when the user says two entries are the same. In a chat it does not merge at once: it answers \
        confirmationRequired with a proposal, which you put to the user as a question; their next message \
        confirms or cancels.";
    const CATEGORY: ToolCategory = ToolCategory::Action;
    const HINTS: ToolHints =
        ToolHints { read_only: false, destructive: true, idempotent: false, open_world: false };
    type Args = MergeEntriesArgs;
    type Output = MergeEntriesData;

    async fn run(
        &self,
        args: MergeEntriesArgs,
        ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<MergeEntriesData>, ToolError> {
        let mut resolved = Vec::new();
        let target = resolve_entry(&args.target_path, "targetPath", services).await?;
        require_exact(&target, "targetPath", ctx.confirmation, services).await?;
        let Resolved { path: target, resolution } = target;
        resolved.extend(resolution);
        let mut sources = Vec::with_capacity(args.source_paths.len());
        for reference in &args.source_paths {
            let source = resolve_source(reference, services).await?;
            require_exact(&source, "sourcePaths", ctx.confirmation, services).await.map_err(
                |mut error| {
                    if let Some(clarification) = error.clarification.as_mut() {
                        clarification.argument = None;
                    }
                    error
                },
            )?;
            let Resolved { path, resolution } = source;
            resolved.extend(resolution);
            sources.push(path);
        }
        check_merge(&target, &sources).map_err(RepositoryError::from)?;

        if ctx.confirmation == Confirmation::Ask {
            // Every entry must exist before the person is asked about them.
            let repo = services.repository.clone();
            let named: Vec<EntryPath> =
                std::iter::once(target.clone()).chain(sources.iter().cloned()).collect();
            let entries =
                run_blocking(move || named.iter().map(|p| repo.get(p)).collect::<Result<Vec<_>, _>>())
                    .await??;
            let labels: Vec<String> = entries.iter().map(|e| format!("{} ({})", e.name(), e.path)).collect();
            let (target_label, source_labels) =
                labels.split_first().map_or((String::new(), &[][..]), |(t, s)| (t.clone(), s));
            let proposal = format!("Merge {} into {target_label}?", listing(source_labels));
            let arguments = serde_json::to_value(&MergeEntriesArgs {
                target_path: target.to_string(),
                source_paths: sources.iter().map(ToString::to_string).collect(),
            })
            .map_err(|e| ToolError::internal(e.to_string()))?;
            return Ok(ToolOutput {
                data: MergeEntriesData {
                    path: target.to_string(),
                    merged: Vec::new(),
                    references_updated: Vec::new(),
                    confirmation_required: true,
                    proposal: Some(proposal.clone()),
                    resolved,
                },
                state_updates: vec![StateUpdate::ConfirmationRequested {
                    tool: Self::NAME.to_string(),
                    arguments,
                    proposal,
                }],
                touched: Some(target),
            });
        }

        let repo = services.repository.clone();
        let by = ctx.change(Self::NAME);
        let (into, from, on) = (target.clone(), sources.clone(), ctx.today);
        let outcome = run_change(move || repo.merge_as(&into, &from, on, &by)).await??;
        Ok(ToolOutput::data(MergeEntriesData {
            path: outcome.entry.path.to_string(),
            merged: outcome.removed.iter().map(ToString::to_string).collect(),
            references_updated: outcome.references_updated.iter().map(ToString::to_string).collect(),
            confirmation_required: false,
            proposal: None,
            resolved,
        })
        .touching(outcome.entry.path))
    }
}

/// Resolves one of sourcePaths. A reference that names several entries asks the person
/// which one, but a picked one cannot simply fill the list: the call is made again.
async fn resolve_source(reference: &str, services: &ToolServices) -> Result<Resolved, ToolError> {
    resolve_entry(reference, "sourcePaths", services).await.map_err(|mut error| {
        if let Some(clarification) = error.clarification.as_mut() {
            clarification.argument = None;
        }
        error
    })
}

/// "A", "A and B", "A, B and C".
fn listing(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_read_as_a_sentence() {
        assert_eq!(listing(&[]), "");
        assert_eq!(listing(&["A".into()]), "A");
        assert_eq!(listing(&["A".into(), "B".into()]), "A and B");
        assert_eq!(listing(&["A".into(), "B".into(), "C".into()]), "A, B and C");
    }
}
