//! The vault as MCP resources: `kb://index` (the entry list file kb keeps), one resource per
//! entry of a category folder, `kb://entries/{category}/{slug}`, and one per note anywhere
//! in the vault, `kb://vault/{+path}` (its path, `.md` included, percent-encoded where a
//! URI needs it): each its markdown file as it is on disk. With sync on, `kb://sync` says
//! where sync stands (JSON).

use kb_core::domain::EntrySummary;
use kb_core::{Assistant, EntryPath, ErrorCode};
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use rmcp::ErrorData as McpError;
use rmcp::model::{ListResourcesResult, ReadResourceResult, Resource, ResourceContents, ResourceTemplate};

/// The entry list of the vault (`index.md`).
pub const ENTRY_LIST_URI: &str = "kb://index";
/// Where sync stands (with sync on).
pub const SYNC_URI: &str = "kb://sync";
/// Where entry URIs start; the rest is `{category}/{slug}`.
pub const ENTRY_PREFIX: &str = "kb://entries/";
/// Where note URIs start; the rest is the note's vault path.
pub const VAULT_PREFIX: &str = "kb://vault/";
/// What a vault path keeps encoded in a URI: what RFC 3986 does not allow unencoded in a
/// path (`/` stays, as `{+path}` expands it).
const ENCODED: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b']')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');
/// Entries listed per `resources/list` page.
pub const PAGE_SIZE: u64 = 100;
const MARKDOWN: &str = "text/markdown";

/// What a `kb://` URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KbUri {
    /// `kb://index`, the entry list.
    EntryList,
    /// `kb://sync`, where sync stands.
    Sync,
    /// `kb://entries/{category}/{slug}` or `kb://vault/{+path}`.
    Entry(EntryPath),
}

/// The resource `uri` names, or an invalid-params error saying what a kb URI looks like.
pub fn parse_uri(uri: &str) -> Result<KbUri, McpError> {
    if uri == ENTRY_LIST_URI {
        return Ok(KbUri::EntryList);
    }
    if uri == SYNC_URI {
        return Ok(KbUri::Sync);
    }
    let invalid = || {
        McpError::invalid_params(
            format!(
                "not a kb resource: {uri:?} (kb has {ENTRY_LIST_URI}, {ENTRY_PREFIX}{{category}}/{{slug}} and \
                 {VAULT_PREFIX}{{+path}})"
            ),
            None,
        )
    };
    if let Some(rest) = uri.strip_prefix(VAULT_PREFIX) {
        let path = percent_decode_str(rest).decode_utf8().map_err(|_| invalid())?;
        return EntryPath::parse(&path).map(KbUri::Entry).map_err(|_| invalid());
    }
    let rest = uri.strip_prefix(ENTRY_PREFIX).ok_or_else(invalid)?;
    if rest.ends_with(".md") {
        return Err(invalid());
    }
    match EntryPath::parse(&format!("{rest}.md")) {
        Ok(path) if path.is_directly_in_category() => Ok(KbUri::Entry(path)),
        _ => Err(invalid()),
    }
}

/// The URI of the note at `path`: `kb://entries/…` for an entry directly in its category
/// folder, `kb://vault/…` for any other note.
pub fn entry_uri(path: &EntryPath) -> String {
    if path.is_directly_in_category() {
        format!("{ENTRY_PREFIX}{}", path.as_str().strip_suffix(".md").unwrap_or(path.as_str()))
    } else {
        format!("{VAULT_PREFIX}{}", utf8_percent_encode(path.as_str(), ENCODED))
    }
}

/// The resource templates: an entry by category and slug, a note by its vault path.
pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{ENTRY_PREFIX}{{category}}/{{slug}}"), "entry")
            .with_title("A kb entry")
            .with_description(
                "One entry's markdown file (YAML frontmatter and body): category is people, projects, ideas, \
                 admin or inbox; slug is its file name without .md.",
            )
            .with_mime_type(MARKDOWN),
        ResourceTemplate::new(format!("{VAULT_PREFIX}{{+path}}"), "note")
            .with_title("A note of the vault")
            .with_description(
                "Any markdown note of the vault by its path, .md included (Journal/2025/Day one.md): the \
                 person's own notes in any folder, and kb's entries.",
            )
            .with_mime_type(MARKDOWN),
    ]
}

/// One page of `resources/list`: the entry list first, then the entries, most recently changed
/// first. The cursor is where the next page starts.
pub async fn list(assistant: &Assistant, cursor: Option<&str>) -> Result<ListResourcesResult, McpError> {
    let offset = match cursor {
        None => 0,
        Some(text) => text
            .parse::<u64>()
            .map_err(|_| McpError::invalid_params(format!("not a cursor kb gave: {text:?}"), None))?,
    };
    let query =
        kb_core::ListQuery { limit: Some(PAGE_SIZE), offset: Some(offset), ..kb_core::ListQuery::default() };
    let page = assistant
        .entries()
        .list(&query)
        .await
        .map_err(|failure| McpError::internal_error(failure.message, None))?;
    let mut resources = Vec::new();
    if offset == 0 {
        resources.push(
            Resource::new(ENTRY_LIST_URI, "index")
                .with_title("Index of the vault")
                .with_description("Every entry by category, with a line about each (kept current by kb).")
                .with_mime_type(MARKDOWN),
        );
        if assistant.sync().is_some() {
            resources.push(
                Resource::new(SYNC_URI, "sync")
                    .with_title("Sync")
                    .with_description(
                        "Where sync through git stands: the remote, this device, ahead and behind, the last \
                         sync, and the conflict copies waiting.",
                    )
                    .with_mime_type("application/json"),
            );
        }
    }
    let listed = page.entries.len() as u64;
    resources.extend(page.entries.iter().map(entry_resource));
    let total = page.total as u64;
    let mut result = ListResourcesResult::with_all_items(resources);
    result.next_cursor = (offset + listed < total && listed > 0).then(|| (offset + listed).to_string());
    Ok(result)
}

fn entry_resource(summary: &EntrySummary) -> Resource {
    let mut resource = Resource::new(entry_uri(&summary.path), summary.path.to_string())
        .with_mime_type(MARKDOWN)
        .with_title(summary.name.clone());
    if !summary.summary.is_empty() {
        resource = resource.with_description(summary.summary.clone());
    }
    resource
}

/// `resources/read`: the entry list, or an entry's file. An entry that does not exist is
/// "resource not found"; a URI that is not kb's is invalid params.
pub async fn read(assistant: &Assistant, uri: &str) -> Result<ReadResourceResult, McpError> {
    let text = match parse_uri(uri)? {
        KbUri::Sync => {
            let Some(sync) = assistant.sync() else {
                return Err(McpError::resource_not_found(
                    "sync is off: set KB_SYNC_REMOTE to a git remote".to_string(),
                    Some(serde_json::json!({ "uri": uri })),
                ));
            };
            let status = sync.status().await.map_err(|e| McpError::internal_error(e.to_string(), None))?;
            let json = serde_json::to_string_pretty(&status).unwrap_or_default();
            return Ok(ReadResourceResult::new(vec![
                ResourceContents::text(json, uri).with_mime_type("application/json"),
            ]));
        }
        KbUri::EntryList => assistant.entries().entry_list_markdown(),
        KbUri::Entry(path) => match assistant.entries().markdown(&path).await {
            Ok(text) => text,
            Err(failure) if matches!(failure.code, ErrorCode::NotFound | ErrorCode::InvalidPath) => {
                return Err(McpError::resource_not_found(
                    format!("no entry at {uri}"),
                    Some(serde_json::json!({ "uri": uri })),
                ));
            }
            Err(failure) => return Err(McpError::internal_error(failure.message, None)),
        },
    };
    Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri).with_mime_type(MARKDOWN)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_name_the_entry_list_and_entries_and_nothing_outside() {
        assert_eq!(parse_uri("kb://index").ok(), Some(KbUri::EntryList));
        assert_eq!(parse_uri("kb://sync").ok(), Some(KbUri::Sync));
        assert!(matches!(parse_uri("kb://entries/people/priya-raman"),
            Ok(KbUri::Entry(path)) if path.to_string() == "people/priya-raman.md"));
        for bad in [
            "kb://entries/../secret",
            "kb://entries/people/../../etc/passwd",
            "kb://entries/recipes/soup",
            "kb://entries/people/priya.md",
            "kb://entries/people/",
            "file:///etc/passwd",
            "kb://index/more",
            "",
        ] {
            assert!(parse_uri(bad).is_err(), "{bad}");
        }
        let path = |text: &str| EntryPath::parse(text).unwrap();
        assert_eq!(entry_uri(&path("ideas/glass-shed.md")), "kb://entries/ideas/glass-shed");
        assert_eq!(entry_uri(&path("Journal/2025/Day one.md")), "kb://vault/Journal/2025/Day%20one.md");
        for note in ["Journal/2025/Day one.md", "ideas/sub/x.md", "Q&A #3 [draft].md", "Café.md"] {
            assert_eq!(parse_uri(&entry_uri(&path(note))).ok(), Some(KbUri::Entry(path(note))), "{note}");
        }
        for bad in
            ["kb://vault/../x.md", "kb://vault/.obsidian/x.md", "kb://vault/x", "kb://vault/%2e%2e/x.md"]
        {
            assert!(parse_uri(bad).is_err(), "{bad}");
        }
    }
}
