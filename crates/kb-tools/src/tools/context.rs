//! build_context: an entry with the notes around it by their links, to a depth of 1 to 3,
//! from the catalogue (no file is read): what an assistant needs to answer "what do I know
//! about X" with the surrounding notes.

use kb_domain::{NearbyNote, Relation};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::args::{Depth, Limit};
use crate::blocking::run_blocking;
use crate::context::{ToolContext, ToolServices};
use crate::output::ListedEntry;
use crate::resolve::{Resolution, Resolved, resolve_entry};
use crate::result::{ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory, ToolHints};

/// The most notes build_context answers when no limit is given.
const DEFAULT_NOTES: usize = 20;

/// Arguments of build_context.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct BuildContextArgs {
    /// The entry: its path (like people/priya-raman.md) or its name as the person says it.
    pub path: String,
    /// How many links away to look, either way (1, 2 or 3; default 1).
    pub depth: Option<Depth>,
    /// How many notes around it to answer at most (default 20, at most 100).
    pub limit: Option<Limit>,
}

/// A note around the entry.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RelatedNote {
    /// The note, with its summary.
    #[serde(flatten)]
    pub entry: ListedEntry,
    /// How many links away it is (1: linked to or from the entry itself).
    pub distance: u8,
    /// `linked_to` when the note it was reached from links to it, `links_here` when it
    /// links to that note.
    pub relation: RelationName,
    /// The note it was reached from (the entry itself at distance 1).
    pub via: String,
}

/// How a note is linked to the note it was reached from, as written in the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RelationName {
    /// That note links to it.
    LinkedTo,
    /// It links to that note.
    LinksHere,
}

impl From<Relation> for RelationName {
    fn from(relation: Relation) -> RelationName {
        match relation {
            Relation::LinkedTo => RelationName::LinkedTo,
            Relation::LinksHere => RelationName::LinksHere,
        }
    }
}

/// What build_context answers.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BuildContextData {
    /// The entry.
    pub entry: ListedEntry,
    /// The notes around it, nearest first, newest first at each distance.
    pub related: Vec<RelatedNote>,
    /// How many notes are within the depth in all (more than `related` holds when capped).
    pub total: usize,
    /// How a name given for path was resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Resolution>,
}

/// The build_context tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuildContext;

impl Tool for BuildContext {
    const NAME: &'static str = "build_context";
    const DESCRIPTION: &'static str = "Get an entry with the notes linked to it and from it ([[links]]), to a depth \
        of 1 to 3, each with its one-line summary, nearest and newest first. Use when the user asks what they know \
        about someone or something and the surrounding notes matter (\"what do I know about Priya?\", \"everything \
        around the kiln project\").";
    const CATEGORY: ToolCategory = ToolCategory::Query;
    const HINTS: ToolHints = ToolHints::READ_ONLY;
    type Args = BuildContextArgs;
    type Output = BuildContextData;

    async fn run(
        &self,
        args: BuildContextArgs,
        _ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<BuildContextData>, ToolError> {
        let Resolved { path, resolution } = resolve_entry(&args.path, "path", services).await?;
        let depth = Depth::effective(args.depth);
        let limit = args.limit.map_or(DEFAULT_NOTES, |limit| Limit::effective(Some(limit)));
        let repo = services.repository.clone();
        let context = run_blocking(move || repo.context(&path, depth)).await??;
        let total = context.nearby.len();
        let touched = context.entry.path.clone();
        let related = context.nearby.into_iter().take(limit).map(related_note).collect();
        Ok(ToolOutput::data(BuildContextData {
            entry: ListedEntry::from(context.entry),
            related,
            total,
            resolved: resolution,
        })
        .touching(touched))
    }
}

/// A nearby note as the answer writes it.
fn related_note(note: NearbyNote) -> RelatedNote {
    RelatedNote {
        entry: ListedEntry::from(note.entry),
        distance: note.distance,
        relation: note.relation.into(),
        via: note.via.to_string(),
    }
}
