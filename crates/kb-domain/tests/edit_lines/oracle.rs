//! An oracle for "only the lines of the fields set changed", independent of how kb finds
//! a field's lines: a field's lines are the smallest run of lines, starting at a line in
//! column 0, whose removal leaves exactly the other fields (as YAML reads them). The new
//! block must then be the old one with each set field's run replaced by text that reads as
//! that field alone (nothing for a removed field), and new fields read from text added at
//! the end.

use std::ops::Range;

use kb_domain::Frontmatter;
use kb_domain::frontmatter::parse_frontmatter_yaml;
use serde_json::Value;

/// Whether two frontmatters hold the same keys in the same order with the same values
/// (nested maps in order too).
pub fn same_frontmatter(a: &Frontmatter, b: &Frontmatter) -> bool {
    a.len() == b.len() && a.iter().zip(b.iter()).all(|((k1, v1), (k2, v2))| k1 == k2 && same(v1, v2))
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|((k1, v1), (k2, v2))| k1 == k2 && same(v1, v2))
        }
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y)),
        _ => a == b,
    }
}

fn reads_as(yaml: &str, expected: &Frontmatter) -> bool {
    parse_frontmatter_yaml(yaml).is_ok_and(|read| same_frontmatter(&read, expected))
}

/// Byte offsets of the start of every line of `text`, and its length.
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts: Vec<usize> =
        text.match_indices('\n').map(|(i, _)| i + 1).filter(|i| *i < text.len()).collect();
    starts.insert(0, 0);
    if text.is_empty() {
        starts.clear();
    }
    starts.push(text.len());
    starts
}

/// The lines of top-level field `key` in `yaml` (see the module's rule).
pub fn field_lines(yaml: &str, key: &str) -> Option<Range<usize>> {
    let all = parse_frontmatter_yaml(yaml).ok()?;
    let mut others = all.clone();
    others.remove(key)?;
    let starts = line_starts(yaml);
    let lines = starts.len() - 1;
    let column_zero = |i: usize| {
        let line = &yaml[starts[i]..starts[i + 1]];
        !line.starts_with([' ', '\t', '#', '\n', '\r', '-'])
    };
    let spellings = [key.to_string(), format!("'{key}'"), format!("\"{key}\"")];
    let looks_like_key = |i: usize| spellings.iter().any(|s| yaml[starts[i]..].starts_with(s.as_str()));
    let candidates = (0..lines).rev().filter(|&i| column_zero(i) && looks_like_key(i));
    let fallback = (0..lines).rev().filter(|&i| column_zero(i) && !looks_like_key(i));
    for a in candidates.chain(fallback) {
        for b in a + 1..=lines {
            let rest = format!("{}{}", &yaml[..starts[a]], &yaml[starts[b]..]);
            if reads_as(&rest, &others) {
                return Some(starts[a]..starts[b]);
            }
        }
    }
    None
}

/// A piece of the expected new block.
enum Part {
    /// These exact bytes.
    Exact(String),
    /// Text that reads as exactly these fields (empty text when there are none).
    Fields(Frontmatter),
}

/// Checks that `new_yaml` is `old_yaml` with only the lines of the fields in `changes`
/// changed: each set field's lines replaced by lines that read as it alone, each removed
/// field's lines gone, new fields added at the end. `Err` says what is wrong.
pub fn only_changed_lines(old_yaml: &str, new_yaml: &str, changes: &Frontmatter) -> Result<(), String> {
    let old = parse_frontmatter_yaml(old_yaml).map_err(|e| format!("old block does not parse: {e}"))?;
    let mut runs: Vec<(Range<usize>, Frontmatter)> = Vec::new();
    let mut added = Frontmatter::new();
    for (key, value) in changes.iter() {
        if old.contains(key) {
            let lines = field_lines(old_yaml, key).ok_or_else(|| format!("no lines found for {key:?}"))?;
            let mut alone = Frontmatter::new();
            if !value.is_null() {
                alone.set(key.clone(), value.clone());
            }
            runs.push((lines, alone));
        } else if !value.is_null() {
            added.set(key.clone(), value.clone());
        }
    }
    runs.sort_by_key(|(r, _)| r.start);
    if runs.windows(2).any(|w| w[0].0.end > w[1].0.start) {
        return Err("the fields' lines overlap".into());
    }
    let mut parts = Vec::new();
    let mut at = 0;
    for (lines, alone) in runs {
        parts.push(Part::Exact(old_yaml[at..lines.start].to_string()));
        parts.push(Part::Fields(alone));
        at = lines.end;
    }
    parts.push(Part::Exact(old_yaml[at..].to_string()));
    parts.push(Part::Fields(added));
    if matches(new_yaml, &parts) {
        Ok(())
    } else {
        Err(format!("lines other than the fields set changed:\n--- old\n{old_yaml}--- new\n{new_yaml}---"))
    }
}

/// Whether `text` is made of `parts` in order (fields text ends at a line boundary).
fn matches(text: &str, parts: &[Part]) -> bool {
    let Some((first, rest)) = parts.split_first() else { return text.is_empty() };
    match first {
        Part::Exact(bytes) => text.strip_prefix(bytes.as_str()).is_some_and(|after| matches(after, rest)),
        Part::Fields(fields) if fields.is_empty() => matches(text, rest),
        Part::Fields(fields) => line_starts(text)
            .into_iter()
            .skip(1)
            .any(|end| reads_as(&text[..end], fields) && matches(&text[end..], rest)),
    }
}
