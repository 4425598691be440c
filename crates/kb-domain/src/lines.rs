//! Lines of an entry's file: a range of lines as people write one (`3-7`, `12`), the lines
//! of a file a range picks ([`pick_lines`]), and where an entry's texts lie among its
//! file's lines ([`EntryLines`]): the line its notes begin on and the lines of each
//! frontmatter key with its value.
//!
//! Lines are counted from 1, as editors and `sed -n 3,7p` count them, the frontmatter and
//! its delimiters included. A line ends at `\n`; a `\r` before it belongs to the line end,
//! not to the line; a last line without `\n` is a line, and a file ending in `\n` has no
//! empty line after it.

use std::fmt;
use std::str::FromStr;

use crate::frontmatter::document_spans;

/// A range of lines of a file: from `start` to `end`, both included.
///
/// Invariant: `1 <= start <= end`. [`LineRange::new`] and [`LineRange::parse`] are the only
/// ways to make one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LineRange {
    start: u32,
    end: u32,
}

/// Why a range of lines is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineRangeError {
    /// Not `START-END` or `N` with whole numbers.
    #[error("lines must be START-END or N (like 3-7 or 12), got {0:?}")]
    Malformed(String),
    /// A line number of 0: lines are counted from 1.
    #[error("lines are counted from 1, got {0:?}")]
    Zero(String),
    /// The end comes before the start.
    #[error("the range of lines ends before it starts: {0:?}")]
    Backwards(String),
    /// The range starts after the file's last line.
    #[error("line {start} is past the end: the file has {lines} lines")]
    PastEnd {
        /// The first line asked for.
        start: u32,
        /// How many lines the file has.
        lines: u32,
    },
}

impl LineRange {
    /// Lines `start` to `end`; `None` unless `1 <= start <= end`.
    pub fn new(start: u32, end: u32) -> Option<LineRange> {
        (1 <= start && start <= end).then_some(LineRange { start, end })
    }

    /// The one line `line`; `None` for 0.
    pub fn line(line: u32) -> Option<LineRange> {
        LineRange::new(line, line)
    }

    /// Reads `START-END` (`3-7`) or `N` (`12`, the one line), spaces around the numbers
    /// allowed.
    pub fn parse(text: &str) -> Result<LineRange, LineRangeError> {
        let malformed = || LineRangeError::Malformed(text.to_string());
        let number = |part: &str| {
            let part = part.trim();
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(malformed());
            }
            part.parse::<u32>().map_err(|_| malformed())
        };
        let (start, end) = match text.split_once('-') {
            Some((start, end)) => (number(start)?, number(end)?),
            None => {
                let line = number(text)?;
                (line, line)
            }
        };
        if start == 0 || end == 0 {
            return Err(LineRangeError::Zero(text.to_string()));
        }
        LineRange::new(start, end).ok_or_else(|| LineRangeError::Backwards(text.to_string()))
    }

    /// The first line.
    pub fn start(self) -> u32 {
        self.start
    }

    /// The last line (included).
    pub fn end(self) -> u32 {
        self.end
    }

    /// The smallest range holding both.
    pub fn union(self, other: LineRange) -> LineRange {
        LineRange { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

impl fmt::Display for LineRange {
    /// `3-7`, or `3` for one line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.start == self.end {
            write!(f, "{}", self.start)
        } else {
            write!(f, "{}-{}", self.start, self.end)
        }
    }
}

impl FromStr for LineRange {
    type Err = LineRangeError;

    fn from_str(text: &str) -> Result<LineRange, LineRangeError> {
        LineRange::parse(text)
    }
}

/// Lines a range picked out of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickedLines {
    /// The lines given: those asked for, the end cut to the file's last line.
    pub range: LineRange,
    /// How many lines the file has.
    pub total: u32,
    /// The lines, joined by `\n`, without their line ends (nor a byte-order mark).
    pub text: String,
}

/// The lines `wanted` of the file whose text is `text`. A range running past the last line
/// is cut there; one starting past it is refused ([`LineRangeError::PastEnd`]).
pub fn pick_lines(text: &str, wanted: LineRange) -> Result<PickedLines, LineRangeError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let total = line_count(text);
    if wanted.start > total {
        return Err(LineRangeError::PastEnd { start: wanted.start, lines: total });
    }
    let range = LineRange { start: wanted.start, end: wanted.end.min(total) };
    let picked: Vec<&str> = file_lines(text)
        .skip((range.start - 1) as usize)
        .take((range.end - range.start + 1) as usize)
        .collect();
    Ok(PickedLines { range, total, text: picked.join("\n") })
}

/// How many lines `text` has (see the module documentation).
pub fn line_count(text: &str) -> u32 {
    let count = file_lines(text).count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// The lines of `text`, without their line ends.
pub fn file_lines(text: &str) -> impl Iterator<Item = &str> {
    let empty = text.is_empty();
    let text = text.strip_suffix('\n').unwrap_or(text);
    text.split('\n').filter(move |_| !empty).map(|line| line.strip_suffix('\r').unwrap_or(line))
}

/// Where an entry's texts lie among the lines of its file: the line its notes begin on
/// and, for each top-level key of its frontmatter, the lines from the key to the end of
/// its value. Read from the file's text by [`EntryLines::of`]; an entry known without its
/// file has none ([`EntryLines::default`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EntryLines {
    /// The line the notes begin on (1 without frontmatter).
    body_start: Option<u32>,
    /// The lines between the frontmatter's delimiters, when there are any.
    frontmatter: Option<LineRange>,
    /// Each top-level key written on a line of its own, in file order, with its lines.
    keys: Vec<(String, LineRange)>,
}

impl EntryLines {
    /// The lines of the entry file whose text is `text`. A frontmatter that is never closed
    /// (no entry kb reads) gives none.
    ///
    /// A key's value runs from the key's line to the line before the next top-level key
    /// (a line starting in the first column with `key:`), blank lines and comments in the
    /// first column at its end left out. A frontmatter written as one flow map (`{a: 1}`)
    /// has no key on a line of its own: [`EntryLines::key`] finds none there.
    pub fn of(text: &str) -> EntryLines {
        let Ok(spans) = document_spans(text) else { return EntryLines::default() };
        let line_at = |offset: usize| line_count_before(text, offset) + 1;
        let body_start = line_at(spans.body.start);
        let Some(yaml) = spans.yaml else {
            return EntryLines { body_start: Some(body_start), ..EntryLines::default() };
        };
        let first = line_at(yaml.start);
        let yaml_text = &text[yaml];
        let mut keys: Vec<(String, LineRange)> = Vec::new();
        // The key being read: its name, its first line and its last line read so far.
        let mut open: Option<(&str, u32, u32)> = None;
        for (line_number, line) in (first..).zip(file_lines(yaml_text)) {
            if let Some(key) = top_level_key(line) {
                close_key(&mut keys, open.take());
                open = Some((key, line_number, line_number));
            } else if !(line.trim().is_empty() || line.starts_with('#'))
                && let Some((_, _, last)) = &mut open
            {
                *last = line_number;
            }
        }
        close_key(&mut keys, open);
        let frontmatter = match line_count(yaml_text) {
            0 => None,
            lines => LineRange::new(first, first + lines - 1),
        };
        EntryLines { body_start: Some(body_start), frontmatter, keys }
    }

    /// The line the notes begin on; `None` when the file is not known.
    pub fn body_start(&self) -> Option<u32> {
        self.body_start
    }

    /// The file line of the notes' line `index` (from 0, as `str::lines` counts them).
    pub fn body_line(&self, index: usize) -> Option<u32> {
        let index = u32::try_from(index).ok()?;
        self.body_start?.checked_add(index)
    }

    /// The lines of the frontmatter key `key` with its value, when it is written on a line
    /// of its own.
    pub fn key(&self, key: &str) -> Option<LineRange> {
        self.keys.iter().find(|(k, _)| k == key).map(|(_, range)| *range)
    }

    /// The lines between the frontmatter's delimiters; `None` without frontmatter.
    pub fn frontmatter(&self) -> Option<LineRange> {
        self.frontmatter
    }
}

/// Adds the key read (its name, first and last line) to `keys`, unless a key of that
/// name came before (YAML refuses a repeated key; the first is kept).
fn close_key(keys: &mut Vec<(String, LineRange)>, read: Option<(&str, u32, u32)>) {
    if let Some((key, start, end)) = read
        && !keys.iter().any(|(k, _)| k == key)
    {
        keys.push((key.to_string(), LineRange { start, end }));
    }
}

/// How many `\n` come before `offset` in `text`.
fn line_count_before(text: &str, offset: usize) -> u32 {
    let before = text.get(..offset).unwrap_or(text);
    u32::try_from(before.bytes().filter(|b| *b == b'\n').count()).unwrap_or(u32::MAX)
}

/// The key a frontmatter line starts, when it starts one in the first column: `name: A`,
/// `tags:`, `"odd key": x`. Not a list item, a comment, an indented line or a flow map.
fn top_level_key(line: &str) -> Option<&str> {
    let first = line.chars().next()?;
    if first.is_whitespace()
        || matches!(first, '#' | '[' | '{' | '?' | '|' | '>' | '&' | '*' | '!' | '%' | '@' | '`')
    {
        return None;
    }
    if line == "-" || line.starts_with("- ") || line.starts_with("-\t") {
        return None;
    }
    if first == '"' || first == '\'' {
        let inner = &line[1..];
        let close = quoted_end(inner, first)?;
        let rest = inner[close + 1..].trim_start_matches([' ', '\t']);
        return rest.starts_with(':').then(|| &inner[..close]);
    }
    let bytes = line.as_bytes();
    let colon = (0..bytes.len()).find(|&i| {
        bytes[i] == b':' && bytes.get(i + 1).is_none_or(|next| matches!(next, b' ' | b'\t' | b'\r'))
    })?;
    let key = line[..colon].trim_end();
    (!key.is_empty()).then_some(key)
}

/// Where the quote `quote` closing a quoted key is in `inner` (the text after the opening
/// quote): a doubled `''` inside single quotes and `\"` inside double quotes do not close.
fn quoted_end(inner: &str, quote: char) -> Option<usize> {
    let bytes = inner.as_bytes();
    let q = quote as u8;
    let mut i = 0;
    while i < bytes.len() {
        if quote == '"' && bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i] == q {
            if quote == '\'' && bytes.get(i + 1) == Some(&q) {
                i += 2;
                continue;
            }
            return Some(i);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests;
