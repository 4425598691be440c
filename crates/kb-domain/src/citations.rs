//! Citations in a chat answer: `[path:line]` or `[path:start-end]` (`[people/priya.md:12]`,
//! `[admin/passport.md:5-7]`), the lines being the note file's own, counted from 1.
//!
//! A citation is a `[` … `]` on one line, not inside another bracket and not the label of a
//! Markdown link (no `(` right after it), whose text ends with the LAST `:` followed by
//! digits, optionally `-digits`; what comes before that `:` is the path, which must name a
//! `.md` file. A path holding `]` (or `[`) writes it `%5D` (`%5B`): `%XX` escapes are read back
//! when the path is compared. Anything else in brackets (`[10:30]`, `[note]`, `[a.md]`) is
//! text.
//!
//! [`check`] keeps the citations whose path a given test accepts (the paths the tools of a
//! conversation returned) byte for byte and takes the others out cleanly: the space before
//! or after the citation goes with it, so no double space or space before punctuation is
//! left, and a citation alone on its line takes its line with it.

use std::ops::Range;

/// One citation found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation<'a> {
    /// Where it is in the text, `[` to `]` inclusive.
    pub span: Range<usize>,
    /// The path as written (between `[` and the last `:`).
    pub written_path: &'a str,
    /// The first line cited.
    pub start_line: u32,
    /// The last line cited (the first, for a single line).
    pub end_line: u32,
}

impl Citation<'_> {
    /// The path with its `%XX` escapes read back (`%5D` is `]`), or as written when they do
    /// not make UTF-8.
    pub fn path(&self) -> String {
        percent_decoded(self.written_path)
    }
}

/// An answer after [`check`]: its text and the paths of the citations taken out.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Checked {
    /// The text, with only the citations that passed.
    pub text: String,
    /// The paths (escapes read back) of the citations taken out, in order.
    pub dropped: Vec<String>,
}

/// Every citation in `text`, in order.
pub fn find(text: &str) -> Vec<Citation<'_>> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(offset) = text[at..].find('[') {
        let open = at + offset;
        let inner_start = open + 1;
        let Some(stop) = text[inner_start..].find(['[', ']', '\n', '\r']) else { break };
        let close = inner_start + stop;
        if bytes[close] != b']' {
            // A `[` or a line break first: no citation opens here; look again from there.
            at = close;
            continue;
        }
        let inside_bracket = open > 0 && bytes[open - 1] == b'[';
        let link_label = bytes.get(close + 1) == Some(&b'(');
        if !inside_bracket
            && !link_label
            && let Some((written_path, start_line, end_line)) = parse_inner(&text[inner_start..close])
        {
            found.push(Citation { span: open..close + 1, written_path, start_line, end_line });
        }
        at = close + 1;
    }
    found
}

/// `text` with every citation whose path `seen` refuses taken out (see the module). `seen`
/// is asked about the path as written and, when it differs, with its escapes read back; a
/// citation passes when either is seen.
pub fn check(text: &str, seen: impl Fn(&str) -> bool) -> Checked {
    let mut out = String::with_capacity(text.len());
    let mut dropped = Vec::new();
    let mut at = 0;
    for citation in find(text) {
        out.push_str(&text[at..citation.span.start]);
        at = citation.span.end;
        let path = citation.path();
        if seen(citation.written_path) || (path != citation.written_path && seen(&path)) {
            out.push_str(&text[citation.span.clone()]);
            continue;
        }
        dropped.push(path);
        at += tidy_after_removal(&mut out, &text[at..]);
    }
    out.push_str(&text[at..]);
    Checked { text: out, dropped }
}

/// Mends the place a citation was taken out of: `out` is the text before it, `rest` the
/// text after. Answers how many bytes of `rest` to skip.
fn tidy_after_removal(out: &mut String, rest: &str) -> usize {
    let blank = |c: char| c == ' ' || c == '\t';
    let line_start = |out: &str| out.is_empty() || out.ends_with('\n');
    let after_blanks = rest.trim_start_matches(blank);
    let blanks = rest.len() - after_blanks.len();
    match after_blanks.chars().next() {
        // The end of a line or of the text: the spaces on both sides go, and a citation
        // alone on its line takes the line with it.
        None | Some('\n' | '\r') => {
            let kept = out.trim_end_matches(blank).len();
            out.truncate(kept);
            if line_start(out) { blanks + line_break_len(after_blanks) } else { blanks }
        }
        // Punctuation that closes: no space is left before it.
        Some(c) if closes(c) => {
            let kept = out.trim_end_matches(blank).len();
            out.truncate(kept);
            blanks
        }
        // Spaces after it, and before it or a line's start: the spaces after it go.
        Some(_) if blanks > 0 && (line_start(out) || out.ends_with(blank)) => blanks,
        Some(_) => 0,
    }
}

/// How long the line break `rest` starts with is (`\r\n`, `\n` or `\r`).
fn line_break_len(rest: &str) -> usize {
    if rest.starts_with("\r\n") { 2 } else { usize::from(rest.starts_with(['\n', '\r'])) }
}

/// Whether no space should stand before `c`.
fn closes(c: char) -> bool {
    matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | ')' | ']' | '}')
}

/// The path and lines of a citation's inside, `path:12` or `path:5-7`, if it is one.
fn parse_inner(inner: &str) -> Option<(&str, u32, u32)> {
    let (path, lines) = inner.rsplit_once(':')?;
    let (start, end) = match lines.split_once('-') {
        Some((start, end)) => (number(start)?, number(end)?),
        None => {
            let line = number(lines)?;
            (line, line)
        }
    };
    let decoded = percent_decoded(path);
    let file_name = decoded.rsplit('/').next().unwrap_or_default();
    let cites_a_note = file_name.strip_suffix(".md").is_some_and(|stem| !stem.trim().is_empty());
    cites_a_note.then_some((path, start, end))
}

/// Digits only, as a line number.
fn number(digits: &str) -> Option<u32> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `text` with its `%XX` escapes read back; as written when there are none or they do not
/// make UTF-8.
fn percent_decoded(text: &str) -> String {
    if !text.contains('%') {
        return text.to_string();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .filter(|hex| hex.iter().all(u8::is_ascii_hexdigit))
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

#[cfg(test)]
mod tests;
