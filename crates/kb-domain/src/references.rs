//! References between entries, and keeping them true when an entry moves.
//!
//! An entry refers to another in two ways:
//! - a frontmatter value that is a vault path: a text value or an item of a list of texts
//!   (`related_projects: [projects/x.md]`, `related_people`, or any key of the person's);
//! - a Markdown link or link definition in the body, written from the vault root
//!   (`[x](projects/x.md)`, `[x](/projects/x.md)`) or from the entry's own folder
//!   (`[x](../projects/x.md)`, `[y](y.md)`), with an optional `#section`.
//!
//! [`retarget_references`] rewrites the references to a moved entry in another entry's
//! text, changing only the bytes of those references (in the style they were written) so
//! the rest of the file stays exactly as the person left it.

use std::collections::BTreeSet;
use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag};
use serde_json::Value;

use crate::entry::Entry;
use crate::frontmatter::{
    Frontmatter, document_spans, parse_frontmatter_yaml, rewrite_value, written_values,
};
use crate::path::EntryPath;

/// Every entry `entry` refers to (itself excluded).
pub fn referenced_paths(entry: &Entry) -> BTreeSet<EntryPath> {
    let mut found: BTreeSet<EntryPath> = frontmatter_paths(&entry.frontmatter).collect();
    for link in body_links(&entry.body) {
        if let Some((path, _)) = resolve_link(&entry.path, link.target(&entry.body)) {
            found.insert(path);
        }
    }
    found.remove(&entry.path);
    found
}

/// The text of the entry at `referrer` (its whole file, `document`) with every reference
/// to `from` pointing at `to` instead; `None` when it has none (or cannot be read as an
/// entry). Only the references' bytes change: a frontmatter value is written anew in its
/// place (quoted as YAML needs), every other byte of the file — comments, other values,
/// line ends — stays as it was.
pub fn retarget_references(
    referrer: &EntryPath,
    document: &str,
    from: &EntryPath,
    to: &EntryPath,
) -> Option<String> {
    let spans = document_spans(document).ok()?;
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    if let Some(yaml) = &spans.yaml {
        let found = frontmatter_edits(&document[yaml.clone()], from, to).unwrap_or_default();
        edits.extend(found.into_iter().map(|(r, text)| (r.start + yaml.start..r.end + yaml.start, text)));
    }
    let body = &document[spans.body.clone()];
    for link in body_links(body) {
        let raw = link.target(body);
        if let Some((path, style)) = resolve_link(referrer, raw)
            && &path == from
        {
            let range = link.target_range.start + spans.body.start..link.target_range.end + spans.body.start;
            edits.push((range, style.render(raw, referrer, to)));
        }
    }
    (!edits.is_empty()).then(|| splice(document, edits))
}

/// The text of a note moving from `from` into the folder `to_folder` (vault-relative, like
/// `projects`), with each link written from its own folder (`[b](b.md)`, `./b.md`,
/// `../x.md`) changed to lead where it led before (`../projects/b.md`); `None` when nothing
/// needs to change. Links from the vault root, and relative links that lead to the same
/// place from the new folder (`../people/p.md` between two category folders), stay as
/// written.
pub fn rebase_own_links(document: &str, from: &EntryPath, to_folder: &str) -> Option<String> {
    if from.folder() == to_folder {
        return None;
    }
    let spans = document_spans(document).ok()?;
    let body = &document[spans.body.clone()];
    let mut edits = Vec::new();
    for link in body_links(body) {
        let raw = link.target(body);
        let Some((path, LinkStyle::Relative { .. })) = resolve_link(from, raw) else { continue };
        let decoded = decoded_target(raw);
        if decoded.as_deref().and_then(|d| relative_to(to_folder, d)).as_ref() == Some(&path) {
            continue;
        }
        let range = link.target_range.start + spans.body.start..link.target_range.end + spans.body.start;
        let suffix = raw.find(['#', '?']).map_or("", |i| &raw[i..]);
        edits.push((range, format!("{}{suffix}", encode_link_target(&relative_path(to_folder, &path)))));
    }
    (!edits.is_empty()).then(|| splice(document, edits))
}

/// `text` with each (disjoint) range replaced by its text.
pub(crate) fn splice(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    edits.sort_by_key(|(range, _)| range.start);
    let mut out = String::with_capacity(text.len() + 16 * edits.len());
    let mut at = 0;
    for (range, with) in edits {
        out.push_str(&text[at..range.start]);
        out.push_str(&with);
        at = range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// The vault paths among a frontmatter's text values and lists of texts.
fn frontmatter_paths(frontmatter: &Frontmatter) -> impl Iterator<Item = EntryPath> + '_ {
    frontmatter
        .iter()
        .flat_map(|(_, value)| match value {
            Value::String(text) => vec![text.as_str()],
            Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        })
        .filter_map(|text| EntryPath::parse(text.trim()).ok())
}

/// The edits (byte ranges of `yaml`, with their new text) that make every path value
/// `from` in `yaml` read `to`, changing only the bytes of those values; `None` when the
/// YAML does not parse, or when the change cannot be made that way (a path behind an
/// anchor, a tag or in a block scalar): the block then stays as written.
fn frontmatter_edits(yaml: &str, from: &EntryPath, to: &EntryPath) -> Option<Vec<(Range<usize>, String)>> {
    let original = parse_frontmatter_yaml(yaml).ok()?;
    let expected = retargeted(&original, from, to);
    if expected == original {
        return Some(Vec::new());
    }
    let new = to.to_string();
    let edits: Vec<(Range<usize>, String)> = written_values(yaml)?
        .iter()
        .filter(|written| EntryPath::parse(written.value.trim()).is_ok_and(|p| &p == from))
        .map(|written| (written.range.clone(), rewrite_value(yaml, written, &new)))
        .collect();
    let edited = parse_frontmatter_yaml(&splice(yaml, edits.clone())).ok()?;
    (edited == expected).then_some(edits)
}

/// The frontmatter with every path value equal to `from` replaced by `to`.
fn retargeted(frontmatter: &Frontmatter, from: &EntryPath, to: &EntryPath) -> Frontmatter {
    let swap = |value: &Value| match value {
        Value::String(text) if EntryPath::parse(text.trim()).is_ok_and(|p| &p == from) => {
            Value::String(to.to_string())
        }
        other => other.clone(),
    };
    frontmatter
        .iter()
        .map(|(key, value)| {
            let value = match value {
                Value::Array(items) => Value::Array(items.iter().map(swap).collect()),
                other => swap(other),
            };
            (key.clone(), value)
        })
        .collect()
}

/// A link target found in a body: where its raw text is.
struct BodyLink {
    target_range: Range<usize>,
}

impl BodyLink {
    fn target<'a>(&self, body: &'a str) -> &'a str {
        &body[self.target_range.clone()]
    }
}

/// The raw targets of the body's inline links and link definitions (code is skipped, as
/// Markdown does).
fn body_links(body: &str) -> Vec<BodyLink> {
    let mut parser = Parser::new_ext(body, Options::empty()).into_offset_iter();
    let mut links = Vec::new();
    for (event, range) in parser.by_ref() {
        if let Event::Start(Tag::Link { link_type, dest_url, .. }) = event
            && matches!(link_type, pulldown_cmark::LinkType::Inline)
            && let Some(target) = inline_target(body, range, &dest_url)
        {
            links.push(BodyLink { target_range: target });
        }
    }
    for (_, definition) in parser.reference_definitions().iter() {
        if let Some(target) = definition_target(body, definition.span.clone()) {
            links.push(BodyLink { target_range: target });
        }
    }
    links
}

/// The raw target of an inline link `[text](target "title")` whose source is `range` and
/// whose destination Markdown reads as `dest`.
fn inline_target(body: &str, range: Range<usize>, dest: &str) -> Option<Range<usize>> {
    let source = body.get(range.clone())?;
    // The destination follows a `](`: the first one whose target reads as the parser's
    // (the text may hold `](` of its own, and so may the title after the target).
    source.match_indices("](").find_map(|(open, _)| {
        let target = destination_at(body, range.start + open + 2, range.end)?;
        (unescape(&body[target.clone()]) == dest).then_some(target)
    })
}

/// The raw target of a link definition `[label]: target "title"` spanning `range`.
fn definition_target(body: &str, range: Range<usize>) -> Option<Range<usize>> {
    let source = body.get(range.clone())?;
    let colon = source.find("]:")?;
    destination_at(body, range.start + colon + 2, range.end)
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

/// How a link target was written, so its new target is written the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LinkStyle {
    /// From the vault root, with a leading `/` or not.
    Root { slash: bool },
    /// From the referring entry's folder: through `../` (`up`), or with a leading `./`
    /// (`dot`), or plain.
    Relative { up: bool, dot: bool },
}

impl LinkStyle {
    /// The target text for `to`, keeping the old target's `#section` and percent-encoding.
    fn render(self, old: &str, referrer: &EntryPath, to: &EntryPath) -> String {
        let suffix = old.find(['#', '?']).map_or("", |i| &old[i..]);
        let path = match self {
            // A note at the vault root, written without a folder, would be read from the
            // referring note's folder: it is written from there instead (`../note.md`).
            LinkStyle::Root { slash: false } if to.folder().is_empty() && !referrer.folder().is_empty() => {
                relative_path(referrer.folder(), to)
            }
            LinkStyle::Root { slash } => format!("{}{to}", if slash { "/" } else { "" }),
            LinkStyle::Relative { up: false, dot } if to.folder() == referrer.folder() => {
                format!("{}{}", if dot { "./" } else { "" }, to.file_name())
            }
            // A link that climbed keeps climbing, to the vault root and down again.
            LinkStyle::Relative { up: true, .. } if !referrer.folder().is_empty() => {
                let depth = referrer.folder().split('/').count();
                format!("{}{to}", "../".repeat(depth))
            }
            LinkStyle::Relative { .. } => relative_path(referrer.folder(), to),
        };
        format!("{}{suffix}", encode_link_target(&path))
    }
}

/// The link from inside `folder` (vault-relative) to the note at `to`: its file name in
/// the same folder, `./sub/b.md` below it, else through as many `../` as needed
/// (`../projects/b.md`).
fn relative_path(folder: &str, to: &EntryPath) -> String {
    let from: Vec<&str> = folder.split('/').filter(|s| !s.is_empty()).collect();
    let target: Vec<&str> = to.as_str().split('/').collect();
    let (target_folders, _) = target.split_at(target.len() - 1);
    let common = from.iter().zip(target_folders).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; from.len() - common];
    parts.extend(&target[common..]);
    let path = parts.join("/");
    // Into a sub-folder: `./` says the link is read from here, not from the vault root.
    if common == from.len() && parts.len() > 1 { format!("./{path}") } else { path }
}

/// A link target as a path: its `#section` or `?query` cut, escapes and percent-encoding
/// undone.
fn decoded_target(raw: &str) -> Option<String> {
    let without_suffix = raw.find(['#', '?']).map_or(raw, |i| &raw[..i]);
    percent_decode(&unescape(without_suffix))
}

/// The entry a raw link target names, seen from `referrer`, and how it was written.
fn resolve_link(referrer: &EntryPath, raw: &str) -> Option<(EntryPath, LinkStyle)> {
    let decoded = decoded_target(raw)?;
    if decoded.contains("://") || decoded.is_empty() {
        return None;
    }
    if let Some(rooted) = decoded.strip_prefix('/') {
        return EntryPath::parse(rooted).ok().map(|p| (p, LinkStyle::Root { slash: true }));
    }
    if let Some(path) = relative_to(referrer.folder(), &decoded) {
        let style = LinkStyle::Relative { up: decoded.starts_with("../"), dot: decoded.starts_with("./") };
        return Some((path, style));
    }
    EntryPath::parse(&decoded).ok().map(|p| (p, LinkStyle::Root { slash: false }))
}

/// The note `target` names when read from inside `folder` (vault-relative), if it is
/// written from there: a plain file name (`b.md`), or a path through `./` or `../`. A path
/// with folders and no such start (`ideas/i.md`) is read from the vault root, as Obsidian
/// writes its links.
fn relative_to(folder: &str, target: &str) -> Option<EntryPath> {
    let from_here = !target.contains('/') || target.starts_with("./") || target.starts_with("../");
    if !from_here {
        return None;
    }
    let mut parts: Vec<&str> = folder.split('/').filter(|s| !s.is_empty()).collect();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    EntryPath::parse(&parts.join("/")).ok()
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

/// Percent-encodes what would end or break a link target.
pub fn encode_link_target(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            ' ' => out.push_str("%20"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            '%' => out.push_str("%25"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests;
