//! Setting frontmatter fields in place: only the lines of the fields set change; every
//! other line of the YAML — comments, quoting, number formats, key order, blank lines —
//! keeps its bytes.
//!
//! A top-level field is its key line and the lines that continue its value (indented
//! lines, and `- item` lines of a list written at the key's own indentation), without the
//! blank and comment lines that end it. A field that is set gets those lines rewritten
//! (its key written as it was); a field set to null loses them; a new field is added at
//! the end of the block. [`set_fields_in_place`] answers `None` when the block is laid out
//! in a way this reading cannot follow (a flow map, an indented map, keys that are not
//! plain or quoted text): the caller then writes the block anew.

use std::ops::Range;

use serde_json::Value;

use super::{same_frontmatter, with_changes};
use crate::frontmatter::{Frontmatter, parse_frontmatter_yaml};
use crate::references::splice;

/// The lines of one top-level field of a frontmatter block.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldLines {
    /// The key as YAML reads it.
    key: String,
    /// The field's lines: from the start of its key line to the end of its last value line.
    lines: Range<usize>,
    /// The key as written, through its colon.
    key_text: Range<usize>,
    /// The end of the indented comment lines right after the field (before any comment in
    /// column 0); `lines.end` when there are none. Such lines would become text of a block
    /// scalar (`|`, `>`) placed above them.
    indented_tail_end: usize,
}

/// The frontmatter block `yaml` (the text between the delimiter lines) with `changes`
/// made in place: each key of `changes` set to its value, or removed when the value is
/// null, a new key added at the end. A key whose value is already the one given keeps
/// its bytes. `None` when the block cannot be edited in place.
///
/// The answer reads (as YAML) as exactly the old fields with the changes made, in order.
/// Indented comments after a field are kept; only when they would otherwise become text
/// of the block above them (a field removed below a `|` block) do they go with the field.
pub fn set_fields_in_place(yaml: &str, changes: &Frontmatter) -> Option<String> {
    let current = parse_frontmatter_yaml(yaml).ok()?;
    let fields = field_lines(yaml)?;
    if !fields.iter().map(|f| &f.key).eq(current.keys()) {
        return None;
    }
    let expected = with_changes(current.clone(), changes);
    // Block scalars first, as kb writes them; then multi-line text on one line (so the
    // indented comments of a field removed below cannot become its text); last, indented
    // comments going with their field.
    let layouts = [
        Layout::default(),
        Layout { flow: true, with_tails: false },
        Layout { flow: false, with_tails: true },
    ];
    layouts.into_iter().find_map(|layout| {
        let candidate = edited(yaml, &fields, &current, changes, layout)?;
        parse_frontmatter_yaml(&candidate)
            .is_ok_and(|read| same_frontmatter(&read, &expected))
            .then_some(candidate)
    })
}

/// How [`edited`] writes a change.
#[derive(Debug, Clone, Copy, Default)]
struct Layout {
    /// Multi-line text is written on one line (as JSON), not as a `|` block.
    flow: bool,
    /// A field's indented comment lines are part of it.
    with_tails: bool,
}

/// `yaml` with `changes` made over `fields`, laid out as `layout` says.
fn edited(
    yaml: &str,
    fields: &[FieldLines],
    current: &Frontmatter,
    changes: &Frontmatter,
    layout: Layout,
) -> Option<String> {
    let Layout { flow, with_tails } = layout;
    let nl = if yaml.contains("\r\n") { "\r\n" } else { "\n" };
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut added = String::new();
    for (key, value) in changes.iter() {
        let existing = fields.iter().find(|f| &f.key == key);
        match (existing, value) {
            (None, Value::Null) => {}
            (None, value) => added.push_str(&render_field(key, None, value, false, nl)?),
            (Some(_), value) if !value.is_null() && current.get(key) == Some(value) => {}
            (Some(field), Value::Null) => {
                // A removed field's indented comments stay, unless the block above would
                // then read them as its text.
                let tail = with_tails || !removable_alone(yaml, field, current);
                let end = if tail { field.indented_tail_end } else { field.lines.end };
                edits.push((field.lines.start..end, String::new()));
            }
            (Some(field), value) => {
                let end = if with_tails { field.indented_tail_end } else { field.lines.end };
                // Kept indented comments below must not become text of a `|` block.
                let flow = flow || end < field.indented_tail_end;
                let written = &yaml[field.key_text.clone()];
                edits.push((field.lines.start..end, render_field(key, Some(written), value, flow, nl)?));
            }
        }
    }
    if !added.is_empty() {
        if !yaml.is_empty() && !yaml.ends_with('\n') {
            added.insert_str(0, nl);
        }
        edits.push((yaml.len()..yaml.len(), added));
    }
    Some(splice(yaml, edits))
}

/// Whether removing only the lines of `field` (not its indented comments) from `yaml`
/// leaves every other field as it was.
fn removable_alone(yaml: &str, field: &FieldLines, current: &Frontmatter) -> bool {
    if field.indented_tail_end == field.lines.end {
        return true;
    }
    let mut others = current.clone();
    others.remove(&field.key);
    let rest = splice(yaml, vec![(field.lines.clone(), String::new())]);
    parse_frontmatter_yaml(&rest).is_ok_and(|read| same_frontmatter(&read, &others))
}

/// `key: value` as YAML lines ending in `nl`, with the key written as `written` (through
/// its colon) when given. With `flow`, multi-line text is written on one line (as JSON,
/// which YAML reads), not as a `|` block.
fn render_field(key: &str, written: Option<&str>, value: &Value, flow: bool, nl: &str) -> Option<String> {
    let rendered = if flow && value.as_str().is_some_and(|s| s.contains('\n')) {
        format!(
            "{}{}\n",
            render_map(key, &Value::Null)?.strip_suffix("null\n")?,
            serde_json::to_string(value).ok()?
        )
    } else {
        render_map(key, value)?
    };
    let text = match written {
        None => rendered,
        Some(written) => {
            // The rendered key is what precedes ": null" when the value is null.
            let bare = render_map(key, &Value::Null)?;
            let key_part = bare.strip_suffix(": null\n")?;
            format!("{written}{}", rendered.strip_prefix(key_part)?.strip_prefix(':')?)
        }
    };
    Some(if nl == "\n" { text } else { text.replace('\n', nl) })
}

/// A one-key map as serde_yaml writes it (as kb writes whole frontmatter blocks).
fn render_map(key: &str, value: &Value) -> Option<String> {
    let mut map = indexmap::IndexMap::new();
    map.insert(key, value);
    serde_yaml::to_string(&map).ok()
}

/// The top-level fields of the frontmatter block `yaml`, in order: each key as YAML reads
/// it and the bytes of its lines (its key line through its last value line, without the
/// blank and comment lines after). `None` when the block is laid out in a way this reading
/// cannot follow, or its keys are not those YAML reads.
pub(crate) fn field_spans(yaml: &str) -> Option<Vec<(String, Range<usize>)>> {
    let current = parse_frontmatter_yaml(yaml).ok()?;
    let fields = field_lines(yaml)?;
    if !fields.iter().map(|f| &f.key).eq(current.keys()) {
        return None;
    }
    Some(fields.into_iter().map(|f| (f.key, f.lines)).collect())
}

/// The top-level fields of `yaml`, in order; `None` when a line cannot be read as a key
/// line, a value line, a comment or a blank.
fn field_lines(yaml: &str) -> Option<Vec<FieldLines>> {
    let mut fields: Vec<FieldLines> = Vec::new();
    let mut at = 0;
    for line in yaml.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let text = line.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() || starts_value_line(text) {
            continue;
        }
        let (key, colon_end) = key_of(text)?;
        let key_text = start..start + colon_end;
        fields.push(FieldLines { key, lines: start..0, key_text, indented_tail_end: 0 });
    }
    let starts: Vec<usize> = fields.iter().map(|f| f.lines.start).skip(1).chain([yaml.len()]).collect();
    for (field, next) in fields.iter_mut().zip(starts) {
        field.lines.end = value_end(yaml, field, next);
        field.indented_tail_end = indented_tail_end(&yaml[..next], field.lines.end);
    }
    Some(fields)
}

/// Whether a line of the block continues a value (indented, a `- item` of a list at the
/// key's indentation, the closing bracket of a flow list or map) or is a comment: not a
/// key line.
fn starts_value_line(text: &str) -> bool {
    text.starts_with([' ', '\t', '#', ']', '}'])
        || text == "-"
        || text.starts_with("- ")
        || text.starts_with("-\t")
}

/// The end of the indented lines from `from` on in `text` (empty lines between them
/// included; a line of spaces counts as indented, since a block scalar above would read
/// the spaces as text), stopping at a line in column 0.
fn indented_tail_end(text: &str, from: usize) -> usize {
    let mut end = from;
    let mut at = from;
    for line in text[from..].split_inclusive('\n') {
        at += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        if content.is_empty() {
            continue;
        }
        if !content.starts_with([' ', '\t']) {
            break;
        }
        end = at;
    }
    end
}

/// Where the value of `field` ends: before the blank and comment lines that come before
/// the next key line at `next`. In a block scalar (`|`, `>`) an indented `#` line is text,
/// so only comments at the start of a line end it there.
fn value_end(yaml: &str, field: &FieldLines, next: usize) -> usize {
    let key_line_end = yaml[field.lines.start..next].find('\n').map_or(next, |i| field.lines.start + i + 1);
    let after_colon = &yaml[field.key_text.end..key_line_end];
    let block_scalar = after_colon
        .split_whitespace()
        .take_while(|t| !t.starts_with('#'))
        .any(|t| t.starts_with('|') || t.starts_with('>'));
    let mut end = next;
    while end > key_line_end {
        let line_start = yaml[..end - 1].rfind('\n').map_or(0, |i| i + 1).max(key_line_end);
        let text = yaml[line_start..end].trim_end_matches(['\n', '\r']);
        let comment = if block_scalar { text.starts_with('#') } else { text.trim_start().starts_with('#') };
        if !(text.trim().is_empty() || comment) {
            break;
        }
        end = line_start;
    }
    end
}

/// The key of a top-level key line and the byte just after its colon; `None` when the
/// line is not `key: …` with a plain or quoted key.
fn key_of(text: &str) -> Option<(String, usize)> {
    let first = text.chars().next()?;
    let (key, after) = match first {
        '"' | '\'' => {
            let close = closing_quote(text, first)?;
            let key: String = serde_yaml::from_str(&text[..=close]).ok()?;
            (key, close + 1)
        }
        '[' | '{' | '?' | ':' | '&' | '*' | '!' | '|' | '>' | '%' | '@' | '`' | ',' | ']' | '}' => {
            return None;
        }
        _ => {
            let colon = plain_key_colon(text)?;
            let key = text[..colon].trim_end();
            if key.contains(" #") || key.contains("\t#") {
                return None;
            }
            (key.to_string(), colon)
        }
    };
    let rest = &text[after..];
    let spaces = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    let after_colon = rest[spaces..].strip_prefix(':')?;
    if !(after_colon.is_empty() || after_colon.starts_with([' ', '\t'])) {
        return None;
    }
    Some((key, after + spaces + 1))
}

/// The first colon of a plain key line that is followed by a space, a tab or the line's end.
fn plain_key_colon(text: &str) -> Option<usize> {
    text.match_indices(':')
        .map(|(i, _)| i)
        .find(|&i| matches!(text[i + 1..].chars().next(), None | Some(' ' | '\t')))
}

/// The index of the quote closing the quoted scalar that opens `text` with `quote`.
fn closing_quote(text: &str, quote: char) -> Option<usize> {
    let mut chars = text.char_indices().skip(1).peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' if quote == '"' => {
                chars.next();
            }
            c if c == quote => {
                if quote == '\'' && chars.peek().is_some_and(|(_, n)| *n == '\'') {
                    chars.next();
                } else {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests;
