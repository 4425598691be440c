//! Where each text value of a frontmatter is written, and writing a new value in its place.
//!
//! [`written_values`] finds the values a change may touch: each top-level value written as
//! one scalar, and each scalar item of a top-level list (block `- x` or flow `[x, y]`), with
//! its byte range and how it is quoted. [`rewrite_value`] makes the bytes that read as a
//! new value there, changing as few as it can (the start and end the old and new values
//! share stay as written) and quoting as YAML needs (`N/Re: T.md` cannot be written plain:
//! it becomes `'N/Re: T.md'`). Every other byte of the block — comments, other values,
//! number formats like `1.10`, line ends — stays as it was.
//!
//! Nested maps, block scalars (`|`, `>`), and values with an anchor or a tag are not
//! listed: a change leaves them as written.

use std::ops::Range;

use saphyr_parser::{Event, Parser, ScalarStyle};

/// How a scalar is quoted in the YAML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quoting {
    /// Not quoted: `key: value`.
    Plain,
    /// Between single quotes, a quote written twice: `'it''s'`.
    Single,
    /// Between double quotes, with backslash escapes: `"say \"hi\""`.
    Double,
}

/// One text value of a frontmatter as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenValue {
    /// The top-level key it is the value of, or in whose list it is.
    pub key: String,
    /// Its place in that key's list (from 0); `None` when it is the key's value itself.
    pub item: Option<usize>,
    /// Its bytes in the YAML, quotes included.
    pub range: Range<usize>,
    /// How it is quoted.
    pub quoting: Quoting,
    /// Whether it is inside a flow list (`[a, b]`), where a plain value cannot hold `,`,
    /// `[`, `]`, `{` or `}`.
    pub in_flow: bool,
    /// What it reads as.
    pub value: String,
}

/// The text values of a frontmatter block's YAML (see the module documentation); `None`
/// when the YAML is not a map. Where the YAML stops reading as YAML, the values before
/// that place are listed: a caller checks that its change reads as meant.
pub fn written_values(yaml: &str) -> Option<Vec<WrittenValue>> {
    let offsets = char_offsets(yaml);
    let byte_at = |char_index: usize| offsets.get(char_index).copied();
    let mut found = Vec::new();
    // How deep in collections the parser is: 1 in the top map, 2 in a value's list.
    let mut depth = 0usize;
    // At depth 1: the key whose value comes next.
    let mut key: Option<String> = None;
    // At depth 2: the key whose list this is, the next item's place, whether it is a flow list.
    let mut list: Option<(String, usize, bool)> = None;
    for event in Parser::new_from_str(yaml) {
        // A block this reader cannot follow further (libyaml allows a flow list closed in
        // column 0; this parser does not) lists the values before that place.
        let Ok((event, span)) = event else { break };
        match event {
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let is_list = matches!(event, Event::SequenceStart(..));
                depth += 1;
                match depth {
                    1 if is_list => return None,
                    2 => {
                        let owner = key.take();
                        if is_list && let Some(owner) = owner {
                            let flow = byte_at(span.start.index())
                                .and_then(|at| yaml.get(at..))
                                .is_some_and(|rest| rest.starts_with('['));
                            list = Some((owner, 0, flow));
                        }
                    }
                    3 => {
                        if let Some((_, next, _)) = &mut list {
                            *next += 1;
                        }
                    }
                    _ => {}
                }
            }
            Event::MappingEnd | Event::SequenceEnd => {
                if depth == 2 {
                    list = None;
                }
                depth = depth.saturating_sub(1);
            }
            Event::Scalar(text, style, anchor, tag) => {
                let plain_scalar = anchor == 0 && tag.is_none();
                let start = byte_at(span.start.index())?;
                let end = byte_at(span.end.index())?;
                match depth {
                    1 => match key.take() {
                        None => key = Some(text.into_owned()),
                        Some(owner) => {
                            let written =
                                plain_scalar.then(|| written_scalar(yaml, start..end, style)).flatten();
                            if let Some((range, quoting)) = written {
                                let value = text.into_owned();
                                found.push(WrittenValue {
                                    key: owner,
                                    item: None,
                                    range,
                                    quoting,
                                    in_flow: false,
                                    value,
                                });
                            }
                        }
                    },
                    2 => {
                        if let Some((owner, next, flow)) = &mut list {
                            let written =
                                plain_scalar.then(|| written_scalar(yaml, start..end, style)).flatten();
                            if let Some((range, quoting)) = written {
                                found.push(WrittenValue {
                                    key: owner.clone(),
                                    item: Some(*next),
                                    range,
                                    quoting,
                                    in_flow: *flow,
                                    value: text.into_owned(),
                                });
                            }
                            *next += 1;
                        }
                    }
                    _ => {}
                }
            }
            // An alias is a value listed nowhere; used as a key, its entry is listed nowhere.
            Event::Alias(_) if depth == 1 && key.take().is_none() => key = Some(String::new()),
            Event::Alias(_) if depth == 2 => {
                if let Some((_, next, _)) = &mut list {
                    *next += 1;
                }
            }
            _ => {}
        }
    }
    Some(found)
}

/// The bytes of a scalar the parser reports at `span` (its start is exact; its end may
/// run past a closing quote into spaces and a comment) and its quoting; `None` for a block
/// scalar, an empty value (null) or one written in a way not read here.
fn written_scalar(yaml: &str, span: Range<usize>, style: ScalarStyle) -> Option<(Range<usize>, Quoting)> {
    let start = span.start;
    match style {
        ScalarStyle::Plain => {
            let raw = yaml.get(span.clone())?;
            let trimmed = raw.trim_end();
            (!trimmed.is_empty()).then_some((start..start + trimmed.len(), Quoting::Plain))
        }
        ScalarStyle::SingleQuoted => {
            let end = closing_quote(yaml, start, '\'')?;
            Some((start..end, Quoting::Single))
        }
        ScalarStyle::DoubleQuoted => {
            let end = closing_quote(yaml, start, '"')?;
            Some((start..end, Quoting::Double))
        }
        ScalarStyle::Literal | ScalarStyle::Folded => None,
    }
}

/// The end (past the closing quote) of the scalar quoted with `quote` that opens at `start`.
fn closing_quote(yaml: &str, start: usize, quote: char) -> Option<usize> {
    let rest = yaml.get(start..)?;
    let mut chars = rest.char_indices();
    if chars.next()?.1 != quote {
        return None;
    }
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' if quote == '"' => {
                chars.next();
            }
            c if c == quote => {
                // In single quotes, two quotes are one quote of the text.
                if quote == '\'' && rest[at + 1..].starts_with('\'') {
                    chars.next();
                    continue;
                }
                return Some(start + at + 1);
            }
            _ => {}
        }
    }
    None
}

/// The byte offset of each character of `text`, and its length last.
fn char_offsets(text: &str) -> Vec<usize> {
    text.char_indices().map(|(at, _)| at).chain(std::iter::once(text.len())).collect()
}

/// The bytes to write in place of `written` (in `yaml`) so that it reads as `new`: the old
/// bytes with only the part that differs changed, in the same quoting, when that reads
/// right; else the whole value written anew in its quoting, or in single quotes, or in
/// double quotes (which can write any text).
pub fn rewrite_value(yaml: &str, written: &WrittenValue, new: &str) -> String {
    let raw = &yaml[written.range.clone()];
    let mut candidates = Vec::with_capacity(4);
    candidates.extend(changed_part(raw, written, new));
    candidates.push(quoted(new, written.quoting));
    candidates.push(quoted(new, Quoting::Single));
    candidates
        .into_iter()
        .find(|candidate| reads_as(candidate, written.in_flow, new))
        .unwrap_or_else(|| quoted(new, Quoting::Double))
}

/// `raw` with only the part of its value that differs from `new` written anew: the start
/// and end both values share stay byte for byte as written, escapes included; `None` when
/// the value is written over several lines or with an escape not read here.
fn changed_part(raw: &str, written: &WrittenValue, new: &str) -> Option<String> {
    let old = written.value.as_str();
    let (open, close) = match written.quoting {
        Quoting::Plain => ("", ""),
        Quoting::Single => ("'", "'"),
        Quoting::Double => ("\"", "\""),
    };
    let inner = raw.strip_prefix(open)?.strip_suffix(close)?;
    let units = unit_bounds(inner, written.quoting)?;
    if units.last()?.0 != old.len() {
        return None;
    }
    let prefix = common_prefix(old, new);
    let suffix = common_suffix(&old[prefix..], &new[prefix..]);
    // The change, widened to whole units as written (an escape is changed whole or kept).
    let &(kept_start, raw_start) = units.iter().rev().find(|(at, _)| *at <= prefix)?;
    let &(kept_end, raw_end) = units.iter().find(|(at, _)| *at >= old.len() - suffix)?;
    let middle = new.get(kept_start..new.len() - (old.len() - kept_end))?;
    let middle = escaped(middle, written.quoting);
    Some(format!("{open}{}{middle}{}{close}", &inner[..raw_start], &inner[raw_end..]))
}

/// Where each unit of a one-line value written `inner` (between its quotes, in `quoting`)
/// starts, as (offset in the value read, offset as written), and both ends last: a unit is
/// a character, or an escape (`\u00e9`, `\"`, a doubled `''`). `None` for a value written over
/// several lines, or with an escape not read here.
fn unit_bounds(inner: &str, quoting: Quoting) -> Option<Vec<(usize, usize)>> {
    if inner.contains(['\n', '\r']) {
        return None;
    }
    let mut bounds = Vec::with_capacity(inner.len() + 1);
    let mut read = 0;
    let mut chars = inner.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        bounds.push((read, at));
        read += match (quoting, c) {
            (Quoting::Single, '\'') => {
                chars.next().filter(|(_, next)| *next == '\'')?;
                1
            }
            (Quoting::Double, '\\') => escape_len(&mut chars)?,
            (_, c) => c.len_utf8(),
        };
    }
    bounds.push((read, inner.len()));
    Some(bounds)
}

/// How many bytes the double-quoted escape after a `\\` reads as (its characters taken from
/// `chars`); `None` for one not read here.
fn escape_len(chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>) -> Option<usize> {
    let (_, kind) = chars.next()?;
    let hex_digits = match kind {
        'x' => 2,
        'u' => 4,
        'U' => 8,
        '0' | 'a' | 'b' | 't' | '\t' | 'n' | 'v' | 'f' | 'r' | 'e' | ' ' | '"' | '/' | '\\' => {
            return Some(1);
        }
        'N' | '_' => return Some(2),
        'L' | 'P' => return Some(3),
        _ => return None,
    };
    let mut code = 0u32;
    for _ in 0..hex_digits {
        code = code * 16 + chars.next()?.1.to_digit(16)?;
    }
    char::from_u32(code).map(char::len_utf8)
}

/// How many bytes `a` and `b` share at their start, at a character boundary.
fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices().zip(b.chars()).find(|((_, x), y)| x != y).map_or(a.len().min(b.len()), |((at, _), _)| at)
}

/// How many bytes `a` and `b` share at their end, at a character boundary.
fn common_suffix(a: &str, b: &str) -> usize {
    let shared = a.chars().rev().zip(b.chars().rev()).take_while(|(x, y)| x == y);
    shared.map(|(c, _)| c.len_utf8()).sum()
}

/// `text` written as a whole value in `quoting`.
fn quoted(text: &str, quoting: Quoting) -> String {
    match quoting {
        Quoting::Plain => text.to_string(),
        Quoting::Single => format!("'{}'", escaped(text, Quoting::Single)),
        Quoting::Double => format!("\"{}\"", escaped(text, Quoting::Double)),
    }
}

/// `text` as it is written inside quotes of `quoting` (as it is for plain).
fn escaped(text: &str, quoting: Quoting) -> String {
    match quoting {
        Quoting::Plain => text.to_string(),
        Quoting::Single => text.replace('\'', "''"),
        Quoting::Double => {
            let mut out = String::with_capacity(text.len());
            for c in text.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
                    c => out.push(c),
                }
            }
            out
        }
    }
}

/// Whether `scalar`, written as a value (in a flow list when `in_flow`), reads as the text
/// `text`.
fn reads_as(scalar: &str, in_flow: bool, text: &str) -> bool {
    let document = if in_flow { format!("k: [{scalar}]\n") } else { format!("k: {scalar}\n") };
    let Ok(serde_yaml::Value::Mapping(map)) = serde_yaml::from_str::<serde_yaml::Value>(&document) else {
        return false;
    };
    let value = match map.get("k") {
        Some(serde_yaml::Value::Sequence(items)) if in_flow && items.len() == 1 => &items[0],
        Some(value) if !in_flow => value,
        _ => return false,
    };
    matches!(value, serde_yaml::Value::String(read) if read == text)
}

#[cfg(test)]
mod tests;
