//! A document a capture files: a web page a link led to, a mail, a file's text. The
//! classifier reads its title and beginning; the note keeps all of it, with fields saying
//! where it came from.

use kb_domain::fields::{format_timestamp, keys};
use std::sync::Arc;

use kb_domain::{EntryRepository, Frontmatter, NameRelation, PageError, PageReader};
use serde_json::Value;

use crate::blocking::run_blocking;
use crate::context::CaptureSource;
use crate::result::{ErrorCode, ToolError};

/// How much of a document the classifier reads (the note keeps all of it).
pub const CLASSIFIED_BYTES: usize = 32 * 1024;

/// A document to file as a note of its own: never added to an existing entry's log.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// Its title, when it has one (a page's, a mail's subject, a file's name).
    pub title: Option<String>,
    /// Its text as Markdown: the note's body.
    pub text: String,
    /// A link the note's body starts with (an embed of the kept file), which the classifier
    /// does not read.
    pub link: Option<String>,
    /// Fields saying where it came from (`url`, `from`, `attachment`, …), set on the note.
    pub fields: Frontmatter,
    /// Where it came from, written as the note's `source` and in history.
    pub source: CaptureSource,
}

impl Document {
    /// The note's body: the link, then the text.
    pub fn body(&self) -> String {
        match (&self.link, self.text.trim().is_empty()) {
            (Some(link), true) => format!("{link}\n"),
            (Some(link), false) => format!("{link}\n\n{}\n", self.text.trim_end()),
            (None, _) => format!("{}\n", self.text.trim_end()),
        }
    }

    /// What the classifier reads: the title, then the text's first [`CLASSIFIED_BYTES`].
    pub fn classified_text(&self) -> String {
        let mut cut = self.text.len().min(CLASSIFIED_BYTES);
        while !self.text.is_char_boundary(cut) {
            cut -= 1;
        }
        match &self.title {
            Some(title) => format!("{title}\n\n{}", &self.text[..cut]),
            None => self.text[..cut].to_string(),
        }
    }
}

/// The link a capture is, when its whole text is one `http(s)` URL.
pub fn single_link(text: &str) -> Option<&str> {
    let text = text.trim();
    let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    let web = lower.starts_with("http://") || lower.starts_with("https://");
    (web && !text.contains(char::is_whitespace) && text.len() > "https://".len()).then_some(text)
}

/// Reads the page at `link` into the document a capture files: its article, or a link
/// with its title when it has none kb can read.
pub async fn read_page(
    link: &str,
    pages: &dyn PageReader,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Document, ToolError> {
    let page = pages.read(link).await.map_err(page_failure)?;
    // A page without a title is named by its address, without the scheme.
    let address = page.url.split_once("://").map_or(page.url.as_str(), |(_, rest)| rest);
    let address: String = address.trim_end_matches('/').chars().take(120).collect();
    let title = Some(page.title.clone().unwrap_or(address));
    let shown = title.clone().unwrap_or_default();
    let text = match page.markdown {
        Some(markdown) => format!("{markdown}\n"),
        None => format!("[{}](<{}>)\n", shown.replace(['[', ']'], ""), page.url),
    };
    let mut fields = Frontmatter::new();
    fields.set(keys::URL, Value::String(page.url));
    fields.set(keys::FETCHED_AT, Value::String(format_timestamp(now)));
    Ok(Document { title, text, link: None, fields, source: CaptureSource::Web })
}

/// The name a document's note gets: its title, or, when an entry already bears that name
/// (a file named `Priya.pdf` beside the person Priya), its title with what it is
/// (`Priya (file)`), so the names people use stay unambiguous.
pub async fn distinct_title(
    document: &mut Document,
    repository: &Arc<dyn EntryRepository>,
) -> Result<(), ToolError> {
    let Some(title) = document.title.clone().filter(|t| !t.trim().is_empty()) else { return Ok(()) };
    let kind = match document.source {
        CaptureSource::Web => "page",
        CaptureSource::Email => "mail",
        CaptureSource::Voice => "voice note",
        _ => "file",
    };
    let taken = |name: &str| {
        let repo = repository.clone();
        let name = name.to_string();
        async move {
            let matches = run_blocking(move || repo.find_by_name(&name)).await??;
            Ok::<bool, ToolError>(matches.iter().any(|m| m.relation == NameRelation::Same))
        }
    };
    if !taken(&title).await? {
        return Ok(());
    }
    let with_kind = format!("{} ({kind})", title.trim());
    document.title = Some(if taken(&with_kind).await? {
        let mut n = 2;
        while taken(&format!("{} ({kind} {n})", title.trim())).await? && n < 100 {
            n += 1;
        }
        format!("{} ({kind} {n})", title.trim())
    } else {
        with_kind
    });
    Ok(())
}

/// A page that could not be read, as the capture's failure: nothing is filed.
fn page_failure(error: PageError) -> ToolError {
    let code = if error.is_refusal() { ErrorCode::LinkRefused } else { ErrorCode::PageUnreadable };
    ToolError::new(
        code,
        format!(
            "{error}; nothing was filed (to keep the link without its page, capture it with a few words \
             beside it)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_whole_text_of_one_web_url_is_a_link() {
        assert_eq!(single_link(" https://example.org/a?b=c "), Some("https://example.org/a?b=c"));
        assert_eq!(single_link("HTTP://EXAMPLE.ORG"), Some("HTTP://EXAMPLE.ORG"));
        for text in
            ["read https://example.org", "https://a.org https://b.org", "ftp://x.org", "https://", "http"]
        {
            assert_eq!(single_link(text), None, "{text}");
        }
    }

    #[test]
    fn the_classifier_reads_the_title_and_the_beginning() {
        let text = "é".repeat(CLASSIFIED_BYTES);
        let document = Document {
            title: Some("T".into()),
            text,
            link: None,
            fields: Frontmatter::new(),
            source: CaptureSource::Web,
        };
        let read = document.classified_text();
        assert!(read.starts_with("T\n\n"));
        assert!(read.len() <= CLASSIFIED_BYTES + 3);
    }
}
