//! The entry commands: `kb capture`, `list`, `show`, `search` and `digest`, each one tool
//! call through the facade.

use kb_core::{Assistant, CaptureSource};
use serde_json::Value;

use crate::cli::DigestKind;
use crate::failure::CliError;
use crate::output;

/// `kb capture TEXT [--hints H] [--into ENTRY | --new]`.
pub async fn capture(
    kb: &Assistant,
    text: &str,
    hints: Option<&str>,
    options: &kb_core::CaptureOptions,
    json: bool,
) -> Result<(), CliError> {
    if text.trim().is_empty() {
        return Err(CliError::usage("nothing to capture: TEXT is empty"));
    }
    let hints = hints.filter(|h| !h.trim().is_empty());
    let data = kb.capture_with(text, hints, options, CaptureSource::Cli).await?;
    show(json, &data, output::captured)
}

/// What `kb list` shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter<'a> {
    /// Only this category.
    pub category: Option<&'a str>,
    /// Only this status.
    pub status: Option<&'a str>,
    /// At most this many.
    pub limit: Option<u64>,
    /// Skipping this many first.
    pub offset: Option<u64>,
}

/// `kb list [--category C] [--status S] [--limit N] [--offset N]`.
pub async fn list(kb: &Assistant, filter: Filter<'_>, json: bool) -> Result<(), CliError> {
    let data = kb.list(filter.category, filter.status, filter.limit, filter.offset).await?;
    show(json, &data, output::entry_list)
}

/// `kb show PATH`.
pub async fn show_entry(kb: &Assistant, path: &str, json: bool) -> Result<(), CliError> {
    let data = kb.get(path).await?;
    show(json, &data, output::entry)
}

/// `kb search QUERY [--category C] [--limit N]`.
pub async fn search(
    kb: &Assistant,
    query: &str,
    category: Option<&str>,
    limit: Option<u64>,
    json: bool,
) -> Result<(), CliError> {
    if query.trim().is_empty() {
        return Err(CliError::usage("nothing to search for: QUERY is empty"));
    }
    let data = kb.search(query, category, limit).await?;
    show(json, &data, output::search_hits)
}

/// `kb digest daily|weekly`.
pub async fn digest(kb: &Assistant, kind: DigestKind, json: bool) -> Result<(), CliError> {
    let data = kb.digest(kind.as_str()).await?;
    show(json, &data, |data| output::text(data, "content").to_string())
}

/// Prints `data` as JSON, or as `human` renders it.
fn show(json: bool, data: &Value, human: impl Fn(&Value) -> String) -> Result<(), CliError> {
    if json { output::print_json(data) } else { output::print_text(&human(data)) }
}
