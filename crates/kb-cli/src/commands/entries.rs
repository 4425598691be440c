//! The entry commands: `kb capture`, `list`, `show`, `search` and `digest`, each one tool
//! call through the facade.

use kb_core::{Assistant, ListQuery, SearchRequest};

use crate::cli::DigestKind;
use crate::failure::CliError;
use crate::output::{self, Format, show};

/// `kb capture TEXT [--hints H] [--into ENTRY | --new]`.
pub async fn capture(
    kb: &Assistant,
    text: &str,
    options: &kb_core::CaptureOptions,
    format: Format,
) -> Result<(), CliError> {
    check_text(text, "nothing to capture: TEXT is empty")?;
    let hints = options.hints.clone().filter(|h| !h.trim().is_empty());
    let options = kb_core::CaptureOptions { hints, ..options.clone() };
    let data = kb.entries().capture(text, &options).await?;
    show(format, &data, output::captured)
}

/// What `kb capture` is given besides text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// `--file`: a file, its text filed.
    File,
    /// `--audio`: a voice note, its transcript filed.
    Voice,
}

/// `kb capture --file FILE` (`--audio FILE`): keeps the file in `attachments/` and files a
/// note for it.
pub async fn capture_file(
    kb: &Assistant,
    file: &std::path::Path,
    sent: Sent,
    hints: Option<String>,
    format: Format,
) -> Result<(), CliError> {
    use std::io::Read;
    let cannot = |e: std::io::Error| CliError::usage(format!("cannot read {}: {e}", file.display()));
    // Asked before opening: opening a pipe with no writer would wait for ever.
    if !std::fs::metadata(file).map_err(cannot)?.is_file() {
        return Err(CliError::usage(format!("{} is not a file", file.display())));
    }
    let mut reader = std::fs::File::open(file).map_err(cannot)?;
    let intake = kb.intake();
    let mut upload = intake.clone().start_upload()?;
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = reader.read(&mut buffer).map_err(cannot)?;
        if read == 0 {
            break;
        }
        upload.write(&buffer[..read]).map_err(|e| CliError::usage(format!("{}: {e}", file.display())))?;
    }
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let hints = hints.filter(|h| !h.trim().is_empty());
    match sent {
        Sent::File => show(format, &intake.file(upload, &name, None, hints).await?, output::captured),
        Sent::Voice => show(format, &intake.voice(upload, &name, hints).await?, output::voice_note),
    }
}

/// A usage error saying `empty` when `text` holds nothing but blanks.
pub(crate) fn check_text(text: &str, empty: &str) -> Result<(), CliError> {
    if text.trim().is_empty() { Err(CliError::usage(empty)) } else { Ok(()) }
}

/// What `kb list` shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter<'a> {
    /// Only this category.
    pub category: Option<&'a str>,
    /// Only this status.
    pub status: Option<&'a str>,
    /// Only notes in this folder or below it.
    pub folder: Option<&'a str>,
    /// At most this many.
    pub limit: Option<u64>,
    /// Skipping this many first.
    pub offset: Option<u64>,
}

/// `kb list [--category C] [--status S] [--folder F] [--limit N] [--offset N]`.
pub async fn list(kb: &Assistant, filter: Filter<'_>, format: Format) -> Result<(), CliError> {
    let query = ListQuery {
        category: filter.category.map(str::to_string),
        status: filter.status.map(str::to_string),
        folder: filter.folder.map(str::to_string),
        limit: filter.limit,
        offset: filter.offset,
    };
    let data = kb_core::output::EntryList::from(kb.entries().list(&query).await?);
    show(format, &data, output::entry_list)
}

/// `kb show PATH [--lines START-END]`.
pub async fn show_entry(
    kb: &Assistant,
    path: &str,
    lines: Option<&str>,
    format: Format,
) -> Result<(), CliError> {
    let data = match lines {
        Some(lines) => kb.entries().get_lines(path, lines).await?,
        None => kb.entries().get(path).await?,
    };
    // On a terminal that takes colour the body's markdown is rendered; else it is as written.
    let human = if crate::terminal::styled() { output::styled_entry } else { output::entry };
    show(format, &data, human)
}

/// `kb search QUERY [--category C] [--limit N] [--mode M]`.
pub async fn search(kb: &Assistant, search: &SearchRequest, format: Format) -> Result<(), CliError> {
    check_text(&search.text, "nothing to search for: QUERY is empty")?;
    let data = kb.entries().search(search).await?;
    show(format, &data, output::search_hits)
}

/// `kb digest daily|weekly`.
pub async fn digest(kb: &Assistant, kind: DigestKind, format: Format) -> Result<(), CliError> {
    let data = kb.entries().digest(kind.as_str()).await?;
    show(format, &data, |data| output::text(data, "content").to_string())
}
