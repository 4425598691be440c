//! [`Entries`]: the entry operations of an [`Assistant`] — capture, list, get, update,
//! move, delete, search, duplicates, merge and digests — each answering its tool's typed
//! data.

use std::sync::Arc;

use kb_domain::{Category, EntryCatalogue, EntryPath, ListFilter, ListPage};
use kb_tools::args::{CategoryArg, FilingCategoryArg, Limit};
use kb_tools::output::SearchFindings;
use kb_tools::tools::capture::{CaptureArgs, CaptureData, ClassifyAndCapture};
use kb_tools::tools::delete::{DeleteEntry, DeleteEntryArgs, DeleteEntryData};
use kb_tools::tools::digest::{DigestData, GenerateDigest, GenerateDigestArgs};
use kb_tools::tools::duplicates::{FindDuplicates, FindDuplicatesArgs, FindDuplicatesData};
use kb_tools::tools::get::{GetEntry, GetEntryArgs, GetEntryData};
use kb_tools::tools::merge::{MergeEntries, MergeEntriesArgs, MergeEntriesData};
use kb_tools::tools::move_entry::{MoveEntry, MoveEntryArgs, MoveEntryData};
use kb_tools::tools::search::{SearchEntries, SearchEntriesArgs, SearchModeArg};
use kb_tools::tools::update::{BodyEditArgs, UpdateEntry, UpdateEntryArgs, UpdateEntryData};
use kb_tools::{CaptureSource, ErrorCode, Tool};
use serde_json::Value;

use super::{Assistant, in_vault};
use crate::error::ToolFailure;

/// How a capture treats entries that may be the one it is about.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaptureOptions {
    /// Words that steer the filing, like `[project]` or `[person]`.
    pub hints: Option<String>,
    /// Add the capture to this entry (a path or a name) instead of filing a new one.
    pub merge_into: Option<String>,
    /// File a new entry even when a person or project of a like name exists.
    pub create_new: bool,
}

/// Which entries [`Entries::list`] answers, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListQuery {
    /// Only this category (`people`, `projects`, `ideas`, `admin`, `inbox`, or `other`
    /// for the notes outside the category folders).
    pub category: Option<String>,
    /// Only notes in this folder or below it (vault-relative, like `Journal/2025`).
    pub folder: Option<String>,
    /// Only entries with this status.
    pub status: Option<String>,
    /// How many at most (default 10, at most 100).
    pub limit: Option<u64>,
    /// How many to skip first, for paging.
    pub offset: Option<u64>,
}

/// What [`Entries::search`] looks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchRequest {
    /// The words.
    pub text: String,
    /// Only this category.
    pub category: Option<String>,
    /// How many hits at most (default 10, at most 100).
    pub limit: Option<u64>,
    /// As the person types: the last word may be unfinished.
    pub as_typed: bool,
    /// `keyword`, `hybrid` or `semantic` (none: hybrid with an embedding model, else
    /// keyword).
    pub mode: Option<String>,
}

impl SearchRequest {
    /// A search for `text` with the defaults.
    pub fn new(text: impl Into<String>) -> SearchRequest {
        SearchRequest { text: text.into(), ..SearchRequest::default() }
    }
}

/// A change to an entry: fields to set and an edit of its notes, either or both, in
/// update_entry's shapes (`{"status": "done"}`; `{mode, content, section?, find?,
/// expectedReplacements?}`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EntryEdit {
    /// The fields to set (`null` removes an optional one).
    pub updates: Option<Value>,
    /// The edit of the notes.
    pub body: Option<Value>,
}

/// The entry operations, with the changes they make recorded as coming from one source
/// (see [`Assistant::entries`] and [`Entries::by`]). Each runs the tool the chat model
/// calls and answers its data.
#[derive(Debug, Clone)]
pub struct Entries<'a> {
    kb: &'a Assistant,
    source: CaptureSource,
    /// Who asks: their changes name them, and their role bounds what the tools may do.
    actor: kb_domain::Actor,
}

impl<'a> Entries<'a> {
    pub(super) fn new(kb: &'a Assistant, source: CaptureSource) -> Entries<'a> {
        Entries { kb, source, actor: kb_domain::Actor::local() }
    }

    /// The same operations, with the changes they make recorded as asked from `source`.
    pub fn by(self, source: CaptureSource) -> Entries<'a> {
        Entries { source, ..self }
    }

    /// The same, asked by `actor`: the changes made name them, and a reader's changes are
    /// refused.
    pub fn as_actor(self, actor: &kb_domain::Actor) -> Entries<'a> {
        Entries { actor: actor.clone(), ..self }
    }

    /// Files a capture (classify_and_capture).
    pub async fn capture(self, text: &str, options: &CaptureOptions) -> Result<CaptureData, ToolFailure> {
        let args = CaptureArgs {
            text: text.to_string(),
            hints: options.hints.clone(),
            merge_into: options.merge_into.clone(),
            create_new: options.create_new.then_some(true),
            classification: None,
            document: None,
        };
        self.kb.run_as::<ClassifyAndCapture>(args, self.source, &self.actor).await
    }

    /// Entries newest first, a page at a time (`GET /api/entries`, `kb list`; their JSON
    /// is list_entries', [`kb_tools::output::EntryList`]).
    pub async fn list(self, query: &ListQuery) -> Result<ListPage, ToolFailure> {
        let invalid = |message: String| ToolFailure::new(ErrorCode::InvalidArguments, message);
        let category = query
            .category
            .as_deref()
            .map(|c| c.parse::<Category>().map_err(|e| invalid(e.to_string())))
            .transpose()?;
        if query.limit == Some(0) {
            return Err(invalid("limit must be at least 1, got 0".to_string()));
        }
        // Larger pages are capped, as list_entries caps them.
        let filter = ListFilter {
            category,
            status: query.status.clone(),
            limit: kb_domain::paging::page_size(query.limit),
            offset: query.offset.map_or(0, |o| usize::try_from(o).unwrap_or(usize::MAX)),
            folder: query.folder.clone(),
        };
        let vault = Arc::clone(&self.kb.vault);
        in_vault(move || vault.list(&filter)).await
    }

    /// One entry, by its path or its name (get_entry).
    pub async fn get(self, reference: &str) -> Result<GetEntryData, ToolFailure> {
        self.kb
            .run_as::<GetEntry>(
                GetEntryArgs { path: reference.to_string(), lines: None },
                self.source,
                &self.actor,
            )
            .await
    }

    /// Lines of an entry's file, by the entry's path or name (get_entry with `lines`:
    /// `"START-END"` or `"N"`, counted from 1, the frontmatter included). A range running
    /// past the last line stops there; one starting past it, or that is not a range, is
    /// refused as invalid arguments.
    pub async fn get_lines(self, reference: &str, lines: &str) -> Result<GetEntryData, ToolFailure> {
        let args = GetEntryArgs { path: reference.to_string(), lines: Some(lines.to_string()) };
        self.kb.run_as::<GetEntry>(args, self.source, &self.actor).await
    }

    /// The markdown file of the entry at `path`, as it is on disk.
    pub async fn markdown(self, path: &EntryPath) -> Result<String, ToolFailure> {
        let vault = Arc::clone(&self.kb.vault);
        let path = path.clone();
        in_vault(move || vault.read_text(&path)).await
    }

    /// Changes an entry's fields and notes (update_entry).
    pub async fn update(self, reference: &str, edit: &EntryEdit) -> Result<UpdateEntryData, ToolFailure> {
        let updates = match edit.updates.clone() {
            None | Some(Value::Null) => None,
            Some(Value::Object(fields)) => Some(fields),
            Some(_) => return Err(invalid::<UpdateEntry>("updates", "expected an object")),
        };
        let body = match edit.body.clone() {
            None | Some(Value::Null) => None,
            Some(body) => Some(BodyEditArgs::from_json(body).map_err(|e| invalid::<UpdateEntry>("body", e))?),
        };
        let args = UpdateEntryArgs { path: reference.to_string(), updates, body };
        self.kb.run_as::<UpdateEntry>(args, self.source, &self.actor).await
    }

    /// Moves an entry to another category (move_entry).
    pub async fn move_to(self, reference: &str, category: &str) -> Result<MoveEntryData, ToolFailure> {
        let category =
            category.parse::<FilingCategoryArg>().map_err(|e| invalid::<MoveEntry>("targetCategory", e))?;
        let args =
            MoveEntryArgs { path: reference.to_string(), target_category: Some(category), target_path: None };
        self.kb.run_as::<MoveEntry>(args, self.source, &self.actor).await
    }

    /// Moves a note to exactly `target`, a vault path (move_entry's `targetPath`): another
    /// folder or name, or a category folder, which adopts a note of the person's.
    pub async fn move_to_path(self, reference: &str, target: &str) -> Result<MoveEntryData, ToolFailure> {
        let args = MoveEntryArgs {
            path: reference.to_string(),
            target_category: None,
            target_path: Some(target.to_string()),
        };
        self.kb.run_as::<MoveEntry>(args, self.source, &self.actor).await
    }

    /// Deletes an entry at once (delete_entry, asked by the person, so not proposed first).
    pub async fn delete(self, reference: &str) -> Result<DeleteEntryData, ToolFailure> {
        self.kb
            .run_as::<DeleteEntry>(DeleteEntryArgs { path: reference.to_string() }, self.source, &self.actor)
            .await
    }

    /// Searches (search_entries).
    pub async fn search(self, query: &SearchRequest) -> Result<SearchFindings, ToolFailure> {
        let category = query.category.as_deref().map(str::parse::<CategoryArg>).transpose();
        let mode = query.mode.as_deref().map(str::parse::<SearchModeArg>).transpose();
        let args = SearchEntriesArgs {
            query: query.text.clone(),
            category: category.map_err(|e| invalid::<SearchEntries>("category", e))?,
            limit: query
                .limit
                .map(Limit::try_from)
                .transpose()
                .map_err(|e| invalid::<SearchEntries>("limit", e))?,
            prefix: query.as_typed.then_some(true),
            mode: mode.map_err(|e| invalid::<SearchEntries>("mode", e))?,
        };
        self.kb.run_as::<SearchEntries>(args, self.source, &self.actor).await
    }

    /// The `daily` or `weekly` digest (generate_digest).
    pub async fn digest(self, kind: &str) -> Result<DigestData, ToolFailure> {
        let kind = kind.parse().map_err(|e| invalid::<GenerateDigest>("type", e))?;
        self.kb.run_as::<GenerateDigest>(GenerateDigestArgs { kind }, self.source, &self.actor).await
    }

    /// Groups of entries that are likely duplicates (find_duplicates), all or those named
    /// like `name`.
    pub async fn duplicates(self, name: Option<&str>) -> Result<FindDuplicatesData, ToolFailure> {
        let args = FindDuplicatesArgs { name: name.map(str::to_string), text: None };
        self.kb.run_as::<FindDuplicates>(args, self.source, &self.actor).await
    }

    /// Merges `sources` into `target` at once (merge_entries), each a path or a name.
    pub async fn merge(self, target: &str, sources: &[String]) -> Result<MergeEntriesData, ToolFailure> {
        let args = MergeEntriesArgs { target_path: target.to_string(), source_paths: sources.to_vec() };
        self.kb.run_as::<MergeEntries>(args, self.source, &self.actor).await
    }

    /// The entry list (`index.md`) as it is now.
    pub fn entry_list_markdown(self) -> String {
        self.kb.vault.entry_list_markdown()
    }
}

/// The failure of tool `T`'s argument `field`, worded as the check of a call's arguments
/// words it.
fn invalid<T: Tool>(field: &str, problem: impl std::fmt::Display) -> ToolFailure {
    ToolFailure::new(
        ErrorCode::InvalidArguments,
        format!("invalid arguments for {}: {field}: {problem}", T::NAME),
    )
}
