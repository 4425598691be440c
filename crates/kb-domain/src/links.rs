//! Links between notes as Obsidian reads them: `[[Note]]`, `[[Note|alias]]`,
//! `[[Note#Heading]]`, `[[folder/Note]]`, embeds `![[...]]`, and Markdown links
//! `[text](path.md)`. Links inside fenced code blocks, inline code and the frontmatter are
//! not links. [`parse_links`] finds them with where their target is written (so a move can
//! rewrite exactly those bytes); [`LinkResolver`] says which note each leads to; [`LinkGraph`]
//! keeps every note's links and backlinks as notes change.

mod graph;
mod properties;
mod resolve;
mod retarget;
#[cfg(test)]
mod tests;

use std::ops::Range;

pub use graph::{Backlink, LINE_CHARS, LinkGraph, OutgoingLink, links_in};
pub use properties::{note_links, property_links, retarget_property_links};
pub use resolve::{LinkResolver, link_key, note_keys, target_stem};
pub use retarget::retarget_wikilinks;

/// How a link is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkForm {
    /// `[[target]]`, with an optional `#heading` and `|alias`.
    Wiki,
    /// `![[target]]`: the note shown inside this one.
    Embed,
    /// `[text](target.md)`.
    Markdown,
}

/// One link in a note's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// How it is written.
    pub form: LinkForm,
    /// What it names, as written (a Markdown link's `%20` and the like decoded): a file
    /// name (`Note`, `Note.md`) or a path (`folder/Note`, `../people/priya.md`).
    pub target: String,
    /// The heading it points into (`#Heading`), without the `#`.
    pub heading: Option<String>,
    /// The text shown instead of the target: a wikilink's `|alias`, a Markdown link's text.
    pub alias: Option<String>,
    /// The line it is on (1 for the first line of the text).
    pub line: usize,
    /// Where its target is written in the text (bytes, without heading or alias).
    pub target_span: Range<usize>,
}

/// Every link in `text` (a whole note, frontmatter included: that block is skipped), in
/// the order they are written.
pub fn parse_links(text: &str) -> Vec<Link> {
    links_from(text, frontmatter_end(text))
}

/// Every link in a note's body (the text after its frontmatter; a first line of `---` is a
/// rule there, not a frontmatter), in the order they are written.
pub fn parse_body_links(body: &str) -> Vec<Link> {
    links_from(body, 0)
}

/// The links of `text` from byte `body_start` on.
fn links_from(text: &str, body_start: usize) -> Vec<Link> {
    let mut links = Vec::new();
    let mut fence: Option<(u8, usize)> = None;
    let mut offset = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        if start < body_start {
            continue;
        }
        let trimmed = line.trim_start_matches([' ', '\t']);
        if let Some(marker) = fence_marker(trimmed) {
            match fence {
                None => fence = Some(marker),
                Some((ch, len)) if marker.0 == ch && marker.1 >= len && closes_fence(trimmed, marker) => {
                    fence = None;
                }
                Some(_) => {}
            }
            continue;
        }
        if fence.is_none() {
            links_in_line(line, start, index + 1, &mut links);
        }
    }
    links
}

/// Where the body starts: after a frontmatter block opened by `---` on the first line and
/// closed by `---` or `...` on a line of its own (0 when there is none).
fn frontmatter_end(text: &str) -> usize {
    let mut lines = text.split_inclusive('\n');
    match lines.next() {
        Some(first) if first.trim_end() == "---" => {}
        _ => return 0,
    }
    let mut offset = text.find('\n').map_or(text.len(), |n| n + 1);
    for line in lines {
        offset += line.len();
        if matches!(line.trim_end(), "---" | "...") {
            return offset;
        }
    }
    // An unclosed block is no frontmatter.
    0
}

/// The fence a line opens or closes (three or more backticks or tildes), as its character
/// and length.
fn fence_marker(line: &str) -> Option<(u8, usize)> {
    let ch = *line.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = line.bytes().take_while(|b| *b == ch).count();
    // A backtick fence's info string holds no backtick.
    (len >= 3 && !(ch == b'`' && line[len..].contains('`'))).then_some((ch, len))
}

/// Whether a fence line closes a block: nothing but spaces after the marker.
fn closes_fence(line: &str, (_, len): (u8, usize)) -> bool {
    line[len..].trim().is_empty()
}

/// The links of one line outside fenced blocks; `start` is the line's offset in the text.
fn links_in_line(line: &str, start: usize, number: usize, links: &mut Vec<Link>) {
    let mut scan = LineScan { line, start, number, links };
    let bytes = line.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'`' => at = skip_code_span(bytes, at),
            b'\\' => at += 2,
            b'!' if line[at..].starts_with("![[") => {
                at = scan.wikilink(at + 1, LinkForm::Embed).unwrap_or(at + 1);
            }
            b'[' if line[at..].starts_with("[[") => at = scan.wikilink(at, LinkForm::Wiki).unwrap_or(at + 1),
            b'[' => at = scan.markdown_link(at).unwrap_or(at + 1),
            _ => at += 1,
        }
    }
}

/// One line being scanned for links.
struct LineScan<'a> {
    /// The line, with its end of line.
    line: &'a str,
    /// Its offset in the text.
    start: usize,
    /// Its number (1 for the first line).
    number: usize,
    /// Where the links found go.
    links: &'a mut Vec<Link>,
}

/// Past an inline code span opened by the backticks at `at` (a run closed by a run of the
/// same length); an unclosed run is just backticks.
fn skip_code_span(bytes: &[u8], at: usize) -> usize {
    let run = bytes[at..].iter().take_while(|b| **b == b'`').count();
    let mut search = at + run;
    while search < bytes.len() {
        if bytes[search] == b'`' {
            let closing = bytes[search..].iter().take_while(|b| **b == b'`').count();
            if closing == run {
                return search + closing;
            }
            search += closing;
        } else {
            search += 1;
        }
    }
    at + run
}

impl LineScan<'_> {
    /// The wikilink whose `[[` is at `open`; answers where scanning goes on after it.
    fn wikilink(&mut self, open: usize, form: LinkForm) -> Option<usize> {
        let line = self.line;
        let inner_start = open + 2;
        let close = line[inner_start..].find("]]")? + inner_start;
        let inner = &line[inner_start..close];
        if inner.contains('[') || inner.trim().is_empty() {
            return None;
        }
        let (reference, alias) = match inner.split_once('|') {
            Some((reference, alias)) => (reference, Some(alias.trim().to_string())),
            None => (inner, None),
        };
        let (target, heading) = match reference.split_once('#') {
            Some((target, heading)) => (target, Some(heading.trim().to_string())),
            None => (reference, None),
        };
        let leading = target.len() - target.trim_start().len();
        let target_text = target.trim();
        if target_text.is_empty() {
            // `[[#Heading]]` links into the note itself.
            return Some(close + 2);
        }
        let target_start = self.start + inner_start + leading;
        self.links.push(Link {
            form,
            target: target_text.to_string(),
            heading,
            alias,
            line: self.number,
            target_span: target_start..target_start + target_text.len(),
        });
        Some(close + 2)
    }

    /// The Markdown link whose `[` is at `open`, when it leads to a file of the vault (a
    /// note or an attachment, not a web address); answers where scanning goes on after it.
    fn markdown_link(&mut self, open: usize) -> Option<usize> {
        let line = self.line;
        let text_end = matching_bracket(line, open)?;
        let rest = &line[text_end + 1..];
        if !rest.starts_with('(') {
            return None;
        }
        let destination_start = text_end + 2;
        let (raw, raw_start, end) = if line[destination_start..].starts_with('<') {
            let close = line[destination_start + 1..].find('>')? + destination_start + 1;
            let after = line[close + 1..].find(')')? + close + 1;
            (&line[destination_start + 1..close], destination_start + 1, after)
        } else {
            let close = line[destination_start..].find([')', ' '])? + destination_start;
            let after = line[close..].find(')')? + close;
            (&line[destination_start..close], destination_start, after)
        };
        let (path, heading) = match raw.split_once('#') {
            Some((path, heading)) => (path, Some(decode(heading))),
            None => (raw, None),
        };
        if is_vault_file(path) {
            let target_start = self.start + raw_start;
            self.links.push(Link {
                form: LinkForm::Markdown,
                target: decode(path),
                heading,
                alias: Some(line[open + 1..text_end].to_string()),
                line: self.number,
                target_span: target_start..target_start + path.len(),
            });
        }
        Some(end + 1)
    }
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

/// The `]` that closes the `[` at `open` (brackets nest; none is inside inline code).
fn matching_bracket(line: &str, open: usize) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut depth = 0usize;
    let mut at = open;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 1,
            b'`' => {
                at = skip_code_span(bytes, at);
                continue;
            }
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// A link destination with its `%XX` escapes decoded (left as written when they do not
/// make UTF-8).
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escaped = (bytes[at] == b'%')
            .then(|| text.get(at + 1..at + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                at += 3;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}
