//! What text a file handed to kb holds: a PDF's text (pdf-extract), a text file's text, or
//! none (an image, an archive, audio: kept as they are, never opened).

use std::path::Path;

/// What kind of file it is, by its content, its type and its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A PDF (`%PDF-` at its start).
    Pdf,
    /// Text: UTF-8 without NUL, sent as `text/…` or named `.txt`, `.md`, `.markdown`, `.csv`.
    Text,
    /// Anything else: kept, never read.
    Other,
}

/// Why a file's text could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FileTextError {
    /// The file could not be read from disk.
    #[error("the file could not be read: {0}")]
    Io(#[source] std::io::Error),
    /// A PDF that does not parse (broken, cut short, or encrypted with a password).
    #[error("the PDF cannot be read: {0}")]
    Pdf(String),
}

/// The kind of the file at `path`, sent as `sent_name` with `content_type`.
pub fn file_kind(
    path: &Path,
    sent_name: &str,
    content_type: Option<&str>,
) -> Result<FileKind, FileTextError> {
    let mut head = [0u8; 8];
    let read = {
        use std::io::Read;
        let mut file = std::fs::File::open(path).map_err(FileTextError::Io)?;
        file.read(&mut head).map_err(FileTextError::Io)?
    };
    if head[..read].starts_with(b"%PDF-") {
        return Ok(FileKind::Pdf);
    }
    let essence = content_type.and_then(|t| t.split(';').next()).map(|t| t.trim().to_ascii_lowercase());
    let extension = sent_name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    let texty = essence.as_deref().is_some_and(|t| t.starts_with("text/"))
        || matches!(extension.as_str(), "txt" | "md" | "markdown" | "csv" | "text");
    let pdf_named = essence.as_deref() == Some("application/pdf") || extension == "pdf";
    Ok(if pdf_named {
        FileKind::Pdf
    } else if texty {
        FileKind::Text
    } else {
        FileKind::Other
    })
}

/// The text of the file at `path` of `kind`: `None` for a kind that is not read, or a
/// text file that is not UTF-8 text after all. Blocking: call it off the async threads.
pub fn file_text(path: &Path, kind: FileKind) -> Result<Option<String>, FileTextError> {
    match kind {
        FileKind::Other => Ok(None),
        FileKind::Text => {
            let bytes = std::fs::read(path).map_err(FileTextError::Io)?;
            Ok(String::from_utf8(bytes)
                .ok()
                .filter(|text| !text.contains('\0'))
                .map(|t| t.trim().to_string()))
        }
        FileKind::Pdf => {
            let bytes = std::fs::read(path).map_err(FileTextError::Io)?;
            // A malformed PDF can make the parser panic: that is its failure, not kb's.
            let extracted = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem(&bytes));
            match extracted {
                Ok(Ok(text)) => Ok(Some(tidy(&text))),
                Ok(Err(error)) if error.to_string().contains("crypt") => {
                    Err(FileTextError::Pdf("it is locked with a password".to_string()))
                }
                Ok(Err(error)) => Err(FileTextError::Pdf(error.to_string())),
                Err(_) => Err(FileTextError::Pdf("its structure is broken".to_string())),
            }
        }
    }
}

/// A PDF's text with runs of blank lines made one, each line's trailing spaces dropped.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines().map(str::trim_end) {
        if line.trim().is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}
