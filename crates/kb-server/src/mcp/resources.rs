//! The vault as MCP resources: `kb://index` (the entry list file kb keeps) and one resource per
//! entry, `kb://entries/{category}/{slug}` (its markdown file as it is on disk).

use kb_core::domain::EntrySummary;
use kb_core::{Assistant, EntryPath, ErrorCode};
use rmcp::ErrorData as McpError;
use rmcp::model::{ListResourcesResult, ReadResourceResult, Resource, ResourceContents, ResourceTemplate};

/// The entry list of the vault (`index.md`).
pub const ENTRY_LIST_URI: &str = "kb://index";
/// Where entry URIs start; the rest is `{category}/{slug}`.
pub const ENTRY_PREFIX: &str = "kb://entries/";
/// Entries listed per `resources/list` page.
pub const PAGE_SIZE: u64 = 100;
const MARKDOWN: &str = "text/markdown";

/// What a `kb://` URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KbUri {
    /// `kb://index`, the entry list.
    EntryList,
    /// `kb://entries/{category}/{slug}`.
    Entry(EntryPath),
}

/// The resource `uri` names, or an invalid-params error saying what a kb URI looks like.
pub fn parse_uri(uri: &str) -> Result<KbUri, McpError> {
    if uri == ENTRY_LIST_URI {
        return Ok(KbUri::EntryList);
    }
    let invalid = || {
        McpError::invalid_params(
            format!(
                "not a kb resource: {uri:?} (kb has {ENTRY_LIST_URI} and {ENTRY_PREFIX}{{category}}/{{slug}})"
            ),
            None,
        )
    };
    let rest = uri.strip_prefix(ENTRY_PREFIX).ok_or_else(invalid)?;
    if rest.ends_with(".md") {
        return Err(invalid());
    }
    EntryPath::parse(&format!("{rest}.md")).map(KbUri::Entry).map_err(|_| invalid())
}

/// The URI of the entry at `path`.
pub fn entry_uri(path: &str) -> String {
    format!("{ENTRY_PREFIX}{}", path.strip_suffix(".md").unwrap_or(path))
}

/// The one resource template: an entry by category and slug.
pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{ENTRY_PREFIX}{{category}}/{{slug}}"), "entry")
            .with_title("A kb entry")
            .with_description(
                "One entry's markdown file (YAML frontmatter and body): category is people, projects, ideas, \
                 admin or inbox; slug is its file name without .md.",
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
    }
    let listed = page.entries.len() as u64;
    resources.extend(page.entries.iter().map(entry_resource));
    let total = page.total as u64;
    let mut result = ListResourcesResult::with_all_items(resources);
    result.next_cursor = (offset + listed < total && listed > 0).then(|| (offset + listed).to_string());
    Ok(result)
}

fn entry_resource(summary: &EntrySummary) -> Resource {
    let path = summary.path.to_string();
    let mut resource =
        Resource::new(entry_uri(&path), path).with_mime_type(MARKDOWN).with_title(summary.name.clone());
    if !summary.summary.is_empty() {
        resource = resource.with_description(summary.summary.clone());
    }
    resource
}

/// `resources/read`: the entry list, or an entry's file. An entry that does not exist is
/// "resource not found"; a URI that is not kb's is invalid params.
pub async fn read(assistant: &Assistant, uri: &str) -> Result<ReadResourceResult, McpError> {
    let text = match parse_uri(uri)? {
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
        assert_eq!(entry_uri("ideas/glass-shed.md"), "kb://entries/ideas/glass-shed");
    }
}
