//! The one reading of a note's links: a CommonMark parse (pulldown-cmark, with its
//! wikilinks and tables) says where each link is, so what Markdown reads as code — inline
//! code, fenced blocks (in quotes and callouts too), indented code lines — holds no link.
//! Each link's target is then read from the bytes the parser points at, so its span is
//! exact and a move rewrites only those bytes.
//!
//! - `[[target#heading|alias]]` and `![[…]]`: inside a table the pipe is written `\|`
//!   (`[[Note\|alias]]`); the `\` is not part of the target.
//! - `[text](target.md#heading)` (an image `![…](…)` too) and a definition
//!   `[label]: target.md`: a target naming a file of the vault (a note, or an attachment
//!   such as `photo.png`), not a web address or another scheme; its `\` escapes and `%XX`
//!   are decoded.

use std::ops::Range;

use pulldown_cmark::{Event, LinkType, Options, Parser, Tag};

use super::{Link, LinkForm};

/// The links of `text` from byte `body_start` on (the frontmatter before it is no Markdown).
pub(super) fn links_from(text: &str, body_start: usize) -> Vec<Link> {
    let body = &text[body_start..];
    // Every link holds a `[`: most notes' bodies are read without a parse.
    if !body.contains('[') {
        return Vec::new();
    }
    let mut found: Vec<Found> = Vec::new();
    let mut parser =
        Parser::new_ext(body, Options::ENABLE_WIKILINKS | Options::ENABLE_TABLES).into_offset_iter();
    for (event, range) in parser.by_ref() {
        let (link_type, dest, image) = match event {
            Event::Start(Tag::Link { link_type, dest_url, .. }) => (link_type, dest_url, false),
            Event::Start(Tag::Image { link_type, dest_url, .. }) => (link_type, dest_url, true),
            _ => continue,
        };
        let link = match link_type {
            LinkType::WikiLink { .. } => {
                wikilink(body, range, if image { LinkForm::Embed } else { LinkForm::Wiki })
            }
            LinkType::Inline => inline_link(body, range, &dest, image),
            _ => None,
        };
        found.extend(link);
    }
    for (_, definition) in parser.reference_definitions().iter() {
        found.extend(definition_link(body, definition.span.clone()));
    }
    found.sort_by_key(|link| link.target_span.start);
    let mut lines = LineCounter::default();
    found
        .into_iter()
        .map(|link| Link {
            form: link.form,
            target: link.target,
            heading: link.heading,
            alias: link.alias,
            line: lines.line_of(body, link.target_span.start),
            target_span: body_start + link.target_span.start..body_start + link.target_span.end,
        })
        .collect()
}

/// A link found in the body, its span counted from the body's start.
struct Found {
    form: LinkForm,
    target: String,
    heading: Option<String>,
    alias: Option<String>,
    target_span: Range<usize>,
}

/// Line numbers of offsets asked in increasing order, counting each line end once.
#[derive(Default)]
struct LineCounter {
    /// The offset counted up to.
    at: usize,
    /// The line number at `at`, less one.
    ends: usize,
}

impl LineCounter {
    /// The number of the line holding `offset` (1 for the first).
    fn line_of(&mut self, text: &str, offset: usize) -> usize {
        self.ends += text.as_bytes()[self.at..offset].iter().filter(|b| **b == b'\n').count();
        self.at = offset;
        self.ends + 1
    }
}

/// The wikilink (or embed) whose source is `range`: `[[…]]` or `![[…]]`.
fn wikilink(body: &str, range: Range<usize>, form: LinkForm) -> Option<Found> {
    let source = body.get(range.clone())?;
    let open = if source.starts_with('!') { 3 } else { 2 };
    let inner_start = range.start + open;
    let inner = source.get(open..source.len().checked_sub(2)?)?;
    if inner.contains(['\n', '\r', '[', ']']) || !source.ends_with("]]") {
        return None;
    }
    let (reference, alias) = match inner.split_once('|') {
        // A table's cell writes the pipe `\|`: the backslash belongs to neither side.
        Some((reference, alias)) => (reference.strip_suffix('\\').unwrap_or(reference), Some(alias.trim())),
        None => (inner, None),
    };
    let (target, heading) = match reference.split_once('#') {
        Some((target, heading)) => (target, Some(heading.trim().to_string())),
        None => (reference, None),
    };
    let target_text = target.trim();
    if target_text.is_empty() {
        // `[[#Heading]]` links into the note itself.
        return None;
    }
    let start = inner_start + (target.len() - target.trim_start().len());
    Some(Found {
        form,
        target: target_text.to_string(),
        heading,
        alias: alias.map(str::to_string),
        target_span: start..start + target_text.len(),
    })
}

/// The Markdown link (or image) `[text](target "title")` whose source is `range` and
/// whose destination the parser reads as `dest`, when it leads to a note.
fn inline_link(body: &str, range: Range<usize>, dest: &str, image: bool) -> Option<Found> {
    let source = body.get(range.clone())?;
    // The destination follows a `](`: the first one whose target reads as the parser's
    // (the text may hold `](` of its own, and so may the title after the target).
    let (open, destination) = source.match_indices("](").find_map(|(open, _)| {
        let target = destination_at(body, range.start + open + 2, range.end)?;
        (unescape(&body[target.clone()]) == dest).then_some((open, target))
    })?;
    let text_start = if image { 2 } else { 1 };
    let alias = source.get(text_start..open).map(str::to_string);
    note_link(body, destination, alias)
}

/// The link definition `[label]: target "title"` spanning `range`, when it leads to a note.
fn definition_link(body: &str, range: Range<usize>) -> Option<Found> {
    let source = body.get(range.clone())?;
    let colon = source.find("]:")?;
    let destination = destination_at(body, range.start + colon + 2, range.end)?;
    let label = source.get(1..colon).map(str::to_string);
    note_link(body, destination, label)
}

/// The Markdown link whose raw destination is at `destination`, when it names a file of
/// the vault and no web address: its path, decoded, and its `#heading`.
fn note_link(body: &str, destination: Range<usize>, alias: Option<String>) -> Option<Found> {
    let raw = &body[destination.clone()];
    let (path, heading) = match raw.split_once('#') {
        Some((path, heading)) => (path, Some(decode(heading))),
        None => (raw, None),
    };
    let target = decode(path);
    is_vault_file(&target).then(|| Found {
        form: LinkForm::Markdown,
        target,
        heading,
        alias,
        target_span: destination.start..destination.start + path.len(),
    })
}

/// Whether a Markdown link's destination (without its `#heading`) names a file of the
/// vault: a path whose file name has an extension (`b.md`, `assets/photo.png`), with no
/// scheme (`https:`, `mailto:`).
fn is_vault_file(path: &str) -> bool {
    let scheme = path.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    let name = path.rsplit('/').next().unwrap_or(path);
    !scheme && name.rfind('.').is_some_and(|dot| dot > 0 && dot + 1 < name.len())
}

/// The destination starting at `start` (after optional whitespace), within `end`: either
/// `<...>` (the range excludes the brackets) or text up to whitespace or the closing
/// parenthesis, with balanced parentheses inside.
fn destination_at(body: &str, start: usize, end: usize) -> Option<Range<usize>> {
    let text = body.get(start..end)?;
    let skipped = text.len() - text.trim_start().len();
    let text = &text[skipped..];
    let start = start + skipped;
    if let Some(inner) = text.strip_prefix('<') {
        let close = inner.find('>')?;
        return Some(start + 1..start + 1 + close);
    }
    let mut depth = 0usize;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '(' => depth += 1,
            ')' if depth == 0 => return (i > 0).then_some(start..start + i),
            ')' => depth -= 1,
            c if c.is_whitespace() => return (i > 0).then_some(start..start + i),
            _ => {}
        }
    }
    (!text.is_empty()).then_some(start..start + text.len())
}

/// A raw link destination as a path: its `\` escapes and `%XX` undone (left as written
/// when the escapes do not make UTF-8).
fn decode(raw: &str) -> String {
    let unescaped = unescape(raw);
    percent_decode(&unescaped).unwrap_or(unescaped)
}

/// Removes Markdown backslash escapes before ASCII punctuation.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek().is_some_and(char::is_ascii_punctuation) {
            continue;
        }
        out.push(c);
    }
    out
}

/// Decodes `%XX` escapes; `None` when the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}
