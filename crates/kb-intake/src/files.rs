//! What text a file handed to kb holds: a PDF's text (pdf-extract), a text file's text, or
//! none (an image, an archive, audio: kept as they are, never opened).

use std::path::Path;

/// What kind of file it is, by its content, its type and its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A PDF (`%PDF-` at its start, whatever its name).
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
    // A file named or typed a PDF that does not start as one is kept, not read.
    Ok(if texty { FileKind::Text } else { FileKind::Other })
}

/// The text of the file at `path` of `kind`: `None` for a kind that is not read, or a
/// text file that is not UTF-8 text after all. Blocking: call it off the async threads.
pub fn file_text(path: &Path, kind: FileKind) -> Result<Option<String>, FileTextError> {
    match kind {
        FileKind::Other => Ok(None),
        FileKind::Text => {
            let bytes = std::fs::read(path).map_err(FileTextError::Io)?;
            let text = String::from_utf8(bytes).ok().filter(|text| !text.contains('\0'));
            Ok(text.map(|t| t.trim_start_matches('\u{feff}').replace("\r\n", "\n").trim().to_string()))
        }
        FileKind::Pdf => {
            let bytes = std::fs::read(path).map_err(FileTextError::Io)?;
            // A small file may unpack to gigabytes: one that would is kept, its text not read.
            if unpacked_size(&bytes, MAX_UNPACKED_BYTES) > MAX_UNPACKED_BYTES {
                tracing::warn!(path = %path.display(), "a PDF unpacks to more than the limit; its text is not read");
                return Ok(None);
            }
            // A malformed PDF can make the parser panic: that is its failure, not kb's.
            let extracted = quietly(|| pdf_extract::extract_text_from_mem(&bytes));
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

/// The most a PDF's compressed streams may unpack to for its text to be read: its parser
/// holds them all in memory, twice.
pub const MAX_UNPACKED_BYTES: u64 = 128 * 1024 * 1024;

/// What the Flate-compressed streams of the PDF `bytes` unpack to, counted up to a little
/// past `limit` (each is inflated in turn and dropped; none is kept).
fn unpacked_size(bytes: &[u8], limit: u64) -> u64 {
    let mut total = 0u64;
    let mut rest = bytes;
    while let Some(at) = memchr::memmem::find(rest, b"stream") {
        let mut start = at + b"stream".len();
        // `stream` then CRLF or LF opens a stream; `endstream` and other words do not.
        if rest.get(start) == Some(&b'\r') {
            start += 1;
        }
        if rest.get(start) != Some(&b'\n') || rest[..at].ends_with(b"end") {
            rest = &rest[at + 1..];
            continue;
        }
        start += 1;
        let body = &rest[start..];
        let end = memchr::memmem::find(body, b"endstream").unwrap_or(body.len());
        total += inflated_len(&body[..end], limit + 1 - total.min(limit));
        if total > limit {
            return total;
        }
        rest = &body[end..];
    }
    total
}

/// What the Flate stream `data` unpacks to, counted up to `budget`; a stream compressed
/// again inside (`/Filter [/FlateDecode /FlateDecode]`, up to four layers) is counted by
/// what its innermost layer unpacks to, as the parser would unpack it.
fn inflated_len(data: &[u8], budget: u64) -> u64 {
    use std::io::Read;
    let mut layers = 1;
    loop {
        let mut reader: Box<dyn Read + '_> = Box::new(flate2::read::ZlibDecoder::new(data));
        for _ in 1..layers {
            reader = Box::new(flate2::read::ZlibDecoder::new(reader));
        }
        let mut head = [0u8; 2];
        let mut got = 0;
        while got < 2 {
            match reader.read(&mut head[got..]) {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
        // A zlib header (0x78, and a multiple of 31 with the next byte): compressed again.
        let again = got == 2 && head[0] == 0x78 && (u16::from(head[0]) << 8 | u16::from(head[1])) % 31 == 0;
        if again && layers < 4 {
            layers += 1;
            continue;
        }
        let mut counted = got as u64;
        let mut rest = reader.take(budget.saturating_sub(counted));
        let mut sink = [0u8; 64 * 1024];
        while let Ok(read) = rest.read(&mut sink) {
            if read == 0 {
                break;
            }
            counted += read as u64;
        }
        return counted;
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

thread_local! {
    /// Whether a panic on this thread is caught and answered by kb ([`quietly`]).
    static CAUGHT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `work`, catching a panic as an `Err` without printing it: a parser panicking on a
/// broken file is the file's failure, said in the answer, not a crash report on stderr.
/// Panics elsewhere are reported as before.
fn quietly<T>(work: impl FnOnce() -> T) -> std::thread::Result<T> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CAUGHT.with(std::cell::Cell::get) {
                before(info);
            }
        }));
    });
    CAUGHT.with(|caught| caught.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
    CAUGHT.with(|caught| caught.set(false));
    if result.is_err() {
        tracing::debug!("the PDF parser panicked on the file");
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parser_panic_is_an_answer_and_kb_goes_on() {
        assert!(quietly(|| -> u8 { panic!("a broken cross-reference table") }).is_err());
        assert_eq!(quietly(|| 7).ok(), Some(7));
        // Panics outside stay panics, reported as ever.
        assert!(std::thread::spawn(|| panic!("elsewhere")).join().is_err());
    }

    /// A PDF-like file with one Flate stream of `size` spaces.
    fn bomb(size: usize) -> Vec<u8> {
        use std::io::Write;
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(&vec![b' '; size]).unwrap();
        let packed = encoder.finish().unwrap();
        let mut pdf =
            format!("%PDF-1.4\n1 0 obj << /Length {} /Filter /FlateDecode >>\nstream\n", packed.len())
                .into_bytes();
        pdf.extend_from_slice(&packed);
        pdf.extend_from_slice(b"\nendstream\nendobj\n%%EOF\n");
        pdf
    }

    #[test]
    fn a_stream_compressed_twice_is_counted_by_its_inner_layer() {
        use std::io::Write;
        let mut inner = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        inner.write_all(&vec![b' '; 200_000]).unwrap();
        let mut outer = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        outer.write_all(&inner.finish().unwrap()).unwrap();
        let twice = outer.finish().unwrap();
        assert!(inflated_len(&twice, 100_000) >= 100_000, "the inner layer's size counts");
    }

    #[test]
    fn a_pdf_that_unpacks_to_more_than_the_limit_is_kept_unread() {
        assert_eq!(unpacked_size(&bomb(1000), 10_000), 1000);
        assert!(unpacked_size(&bomb(50_000), 10_000) > 10_000);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("bomb.pdf");
        std::fs::write(&file, bomb(MAX_UNPACKED_BYTES as usize + 1024)).unwrap();
        assert_eq!(file_kind(&file, "bomb.pdf", None).unwrap(), FileKind::Pdf);
        assert_eq!(file_text(&file, FileKind::Pdf).unwrap(), None, "kept, its text not read");
    }

    #[test]
    fn a_file_is_a_pdf_by_its_start_and_text_loses_its_bom_and_crs() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("scan.pdf");
        std::fs::write(&png, b"\x89PNG\r\n\x1a\n").unwrap();
        assert_eq!(file_kind(&png, "scan.pdf", Some("application/pdf")).unwrap(), FileKind::Other);
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "\u{feff}one\r\ntwo\r\n").unwrap();
        assert_eq!(file_text(&text, FileKind::Text).unwrap().as_deref(), Some("one\ntwo"));
    }
}
