//! get_entry: one entry as it is on disk, with its links and the entries nearest it in
//! meaning; or, asked for `lines`, those lines of its file with their numbers.

use kb_domain::{Category, LineRange, LinkedNote, PickedLines, RelatedEntry, pick_lines};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::blocking::run_blocking;
use crate::context::{ToolContext, ToolServices};
use crate::output::LinkKindName;
use crate::resolve::{Resolution, Resolved, resolve_entry};
use crate::result::{ErrorCode, ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory, ToolHints};

/// Arguments of get_entry.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GetEntryArgs {
    /// The entry: its path in the vault (like projects/clientco-integration.md, or any note such as
    /// Journal/2025/Day one.md) or its name as the person says it ("Priya", "the passport renewal").
    pub path: String,
    /// Only these lines of the entry's file: "START-END" (like "12-20") or "N" for one
    /// line, counted from 1 as an editor counts them, the frontmatter included (a search
    /// hit's passage names them). A range running past the last line stops there. The
    /// answer then holds `lines` instead of the notes, links and related entries.
    #[serde(default)]
    pub lines: Option<String>,
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
    /// The folder it is in, vault-relative (`projects`, `Journal/2025`; empty at the root).
    pub folder: String,
    /// Its name.
    pub name: String,
    /// Its frontmatter, in file order.
    pub frontmatter: Value,
    /// Its body; absent when `lines` was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// A note linked from or to the entry, or a file it links to.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LinkView {
    /// The note's path; null when the link leads to no note.
    pub path: Option<String>,
    /// Its name (the link as written when it leads to no note).
    pub name: String,
    /// The line that links.
    pub line: String,
    /// What the link leads to: `note`, `file` (a file of the vault that is not a note: an
    /// image, a PDF) or `missing` (a broken link).
    pub kind: LinkKindName,
    /// The vault path of the file, when `kind` is `file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl From<LinkedNote> for LinkView {
    fn from(note: LinkedNote) -> LinkView {
        LinkView {
            path: note.path.map(|p| p.to_string()),
            name: note.name,
            line: note.line,
            kind: note.kind.into(),
            file: note.file,
        }
    }
}

/// What get_entry answers: the entry with its notes, links and related entries; or, when
/// `lines` was asked for, the entry without its notes and the lines asked for.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct GetEntryData {
    /// The entry.
    pub entry: EntryView,
    /// What it links to (`[[wikilinks]]`, embeds and Markdown links, in its properties and
    /// its notes), in the order written, each with what it leads to (`kind`); absent when
    /// `lines` was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<LinkView>>,
    /// The entries whose notes link to it; absent when `lines` was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backlinks: Option<Vec<LinkView>>,
    /// Up to five other entries nearest it in meaning, nearest first (none without an
    /// embedding model, or before the entry is embedded); absent when `lines` was asked
    /// for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related: Option<Vec<RelatedView>>,
    /// The lines asked for, with their numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<LinesView>,
    /// How a name given for path was resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Resolution>,
}

/// An entry near another in meaning.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RelatedView {
    /// The entry's path.
    pub path: String,
    /// Its name.
    pub name: String,
    /// Its category.
    #[serde(serialize_with = "crate::output::category")]
    #[schemars(with = "crate::output::CategoryName")]
    pub category: Category,
    /// How near, as the cosine similarity of the two entries (1 is the same meaning).
    pub score: f32,
}

impl From<RelatedEntry> for RelatedView {
    fn from(related: RelatedEntry) -> RelatedView {
        RelatedView {
            path: related.path.to_string(),
            name: related.name,
            category: related.category,
            score: related.score,
        }
    }
}

impl GetEntryData {
    /// What the entry links to (none when `lines` was asked for).
    pub fn links(&self) -> &[LinkView] {
        self.links.as_deref().unwrap_or_default()
    }

    /// The entries whose notes link to it (none when `lines` was asked for).
    pub fn backlinks(&self) -> &[LinkView] {
        self.backlinks.as_deref().unwrap_or_default()
    }

    /// The entries nearest it in meaning (none when `lines` was asked for).
    pub fn related(&self) -> &[RelatedView] {
        self.related.as_deref().unwrap_or_default()
    }
}

/// Lines of an entry's file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LinesView {
    /// The first line given, counted from 1.
    pub start: u32,
    /// The last line given (the last line of the file when the range asked for ran past
    /// it).
    pub end: u32,
    /// How many lines the file has.
    pub total: u32,
    /// The lines, joined by a newline, without their line ends.
    pub text: String,
}

impl From<PickedLines> for LinesView {
    fn from(picked: PickedLines) -> LinesView {
        LinesView {
            start: picked.range.start(),
            end: picked.range.end(),
            total: picked.total,
            text: picked.text,
        }
    }
}

/// How many related entries get_entry answers.
pub const RELATED_LIMIT: usize = 5;

/// The get_entry tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct GetEntry;

impl Tool for GetEntry {
    const NAME: &'static str = "get_entry";
    const DESCRIPTION: &'static str = "Get the full details of one entry (all its fields and notes). Use when the \
        user asks about a specific person, project, idea or task: give its path, or its name as the user says it. \
        Give lines (\"START-END\") to read only those lines of its file, such as a search hit's passage.";
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
        let wanted = args.lines.as_deref().map(line_range).transpose()?;
        let Resolved { path, resolution } = resolve_entry(&args.path, "path", services).await?;
        if let Some(wanted) = wanted {
            return lines_of(path, wanted, resolution, services).await;
        }
        let repo = services.repository.clone();
        let search = services.search.clone();
        let (entry, links, related) = run_blocking(move || {
            let (entry, links) = (repo.get(&path)?, repo.links(&path)?);
            // Related entries are a bonus: an index failure leaves them out, not the entry.
            let related = search.related(&path, RELATED_LIMIT).unwrap_or_else(|error| {
                tracing::warn!(%error, "related entries could not be found");
                Vec::new()
            });
            Ok::<_, kb_domain::RepositoryError>((entry, links, related))
        })
        .await??;
        let touched = entry.path.clone();
        Ok(ToolOutput::data(GetEntryData {
            entry: EntryView::without_notes(&entry).with_notes(entry.body),
            links: Some(links.links.into_iter().map(LinkView::from).collect()),
            backlinks: Some(links.backlinks.into_iter().map(LinkView::from).collect()),
            related: Some(related.into_iter().map(RelatedView::from).collect()),
            lines: None,
            resolved: resolution,
        })
        .touching(touched))
    }
}

impl EntryView {
    /// `entry` without its notes.
    fn without_notes(entry: &kb_domain::Entry) -> EntryView {
        EntryView {
            path: entry.path.to_string(),
            category: entry.category(),
            folder: entry.path.folder().to_string(),
            name: entry.name(),
            frontmatter: entry.frontmatter.to_json(),
            content: None,
        }
    }

    /// The view with the notes `body`.
    fn with_notes(self, body: String) -> EntryView {
        EntryView { content: Some(body), ..self }
    }
}

/// The range of lines `text` asks for, or why it is refused.
fn line_range(text: &str) -> Result<LineRange, ToolError> {
    LineRange::parse(text).map_err(|problem| ToolError::new(ErrorCode::InvalidArguments, problem.to_string()))
}

/// get_entry's answer for the lines `wanted` of the entry at `path`.
async fn lines_of(
    path: kb_domain::EntryPath,
    wanted: LineRange,
    resolution: Option<Resolution>,
    services: &ToolServices,
) -> Result<ToolOutput<GetEntryData>, ToolError> {
    let repo = services.repository.clone();
    let (entry, text) = run_blocking(move || repo.get_with_text(&path)).await??;
    let picked = pick_lines(&text, wanted)
        .map_err(|problem| ToolError::new(ErrorCode::InvalidArguments, problem.to_string()))?;
    let touched = entry.path.clone();
    Ok(ToolOutput::data(GetEntryData {
        entry: EntryView::without_notes(&entry),
        links: None,
        backlinks: None,
        related: None,
        lines: Some(LinesView::from(picked)),
        resolved: resolution,
    })
    .touching(touched))
}
