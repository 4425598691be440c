//! Merging entries that are one thing into one entry: the target keeps its own fields,
//! its list fields are united with the sources', each source's name becomes an alias (so
//! references by the old name still resolve), and each source's notes are added under a
//! dated section, with the source's fields the target did not take listed there, so nothing
//! is silently lost. No I/O: the repository reads the entries and writes the result.

use chrono::{DateTime, NaiveDate, Utc};
use serde_json::Value;

use crate::category::{Category, FieldKind};
use crate::entry::Entry;
use crate::fields::{check_field, format_timestamp, keys};
use crate::frontmatter::{Frontmatter, render_document};
use crate::names::fold_name;
use crate::path::EntryPath;
use crate::references::{rebase_own_links, retarget_references};

/// Why a merge was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// No entries to merge into the target.
    #[error("nothing to merge into {0}: give at least one other entry")]
    NoSources(EntryPath),
    /// A source is the target itself.
    #[error("{0} cannot be merged into itself: give other entries than the target")]
    IntoItself(EntryPath),
    /// The same source given twice.
    #[error("{0} is given twice: give each entry to merge once")]
    Repeated(EntryPath),
}

/// A source's fields that are neither carried into the target nor listed in its section:
/// kb's own bookkeeping, and the name (which becomes an alias).
const NOT_CARRIED: &[&str] =
    &[keys::ID, keys::NAME, keys::CREATED_AT, keys::UPDATED_AT, keys::CONFIDENCE, keys::SOURCE];

/// The merged target: the entry as its new text reads, and that text.
#[derive(Debug, Clone, PartialEq)]
pub struct MergedDocument {
    /// The target after the merge.
    pub entry: Entry,
    /// The text of its file.
    pub text: String,
}

/// Checks a merge's paths before anything is read: at least one source, none the target,
/// none twice.
pub fn check_merge(target: &EntryPath, sources: &[EntryPath]) -> Result<(), MergeError> {
    if sources.is_empty() {
        return Err(MergeError::NoSources(target.clone()));
    }
    for (i, source) in sources.iter().enumerate() {
        if source == target {
            return Err(MergeError::IntoItself(source.clone()));
        }
        if sources[..i].contains(source) {
            return Err(MergeError::Repeated(source.clone()));
        }
    }
    Ok(())
}

/// The target after merging `sources` into it on `on` (its `updated_at` set to `now`).
///
/// - Scalar fields: the target keeps its own. A source's field the target lacks (or has
///   empty) is taken when it is one of the target category's fields with a valid value, or
///   a key of the person's own that no category knows; any other differing field of a
///   source is listed under its section.
/// - List fields (`tags`, `aliases`, the category's list fields, and any field that is a list
///   in the target or a source): the target's items, then each source's in order, each
///   once (tags case aside, aliases as names are compared).
/// - `aliases` gains each source's name, unless it is the target's name.
/// - The body gains, per source, `## Merged from {name} ({on})` with the source's notes.
/// - References to a source in the result (a path value, a link) point at the target;
///   paths to the target itself in a list are dropped.
pub fn merge_entries(
    target: &Entry,
    sources: &[Entry],
    on: NaiveDate,
    now: DateTime<Utc>,
) -> Result<MergedDocument, MergeError> {
    let source_paths: Vec<EntryPath> = sources.iter().map(|s| s.path.clone()).collect();
    check_merge(&target.path, &source_paths)?;
    let category = target.category();
    let redirect = |value: &Value| -> Value { redirected(value, &source_paths, &target.path) };

    let mut frontmatter = target.frontmatter.clone();
    let mut leftovers: Vec<Vec<(String, Value)>> = vec![Vec::new(); sources.len()];

    // Lists first, in the target's key order, then the keys sources add.
    let mut list_keys: Vec<String> = Vec::new();
    for key in target.frontmatter.keys().chain(sources.iter().flat_map(|s| s.frontmatter.keys())) {
        if !list_keys.contains(key) && is_list_field(key, category, target, sources) {
            list_keys.push(key.clone());
        }
    }
    if !list_keys.iter().any(|k| k == keys::ALIASES) {
        list_keys.push(keys::ALIASES.to_string());
    }
    let target_name = fold_name(&target.name());
    for key in &list_keys {
        let mut united = Vec::new();
        let own = items(target.frontmatter.get(key));
        let mut push = |item: Value, from_source: bool| {
            let item = redirect(&item);
            if is_path_to(&item, &target.path) {
                return;
            }
            if from_source
                && key == keys::ALIASES
                && item.as_str().is_some_and(|a| fold_name(a) == target_name)
            {
                return;
            }
            if !united.iter().any(|seen| same_item(key, seen, &item)) {
                united.push(item);
            }
        };
        for item in own {
            push(item, false);
        }
        for source in sources {
            for item in items(source.frontmatter.get(key)) {
                push(item, true);
            }
            if key == keys::ALIASES {
                let name = source.name();
                if !name.trim().is_empty() {
                    push(Value::String(name.trim().to_string()), true);
                }
            }
        }
        let unchanged = match target.frontmatter.get(key) {
            Some(Value::Array(old)) => old == &united,
            Some(old) => items(Some(old)) == united,
            None => united.is_empty(),
        };
        if !unchanged {
            frontmatter.set(key.clone(), Value::Array(united));
        }
    }

    // Scalars: the target keeps its own; a gap is filled, anything else listed.
    for (n, source) in sources.iter().enumerate() {
        for (key, value) in source.frontmatter.iter() {
            if NOT_CARRIED.contains(&key.as_str()) || list_keys.contains(key) || is_blank(value) {
                continue;
            }
            let value = redirect(value);
            let current = frontmatter.get(key);
            if current == Some(&value) {
                continue;
            }
            let fillable = match category.field(key) {
                Some(_) => check_field(category, key, &value).is_ok(),
                None => !Category::is_known_anywhere(key),
            };
            if current.is_none_or(is_blank) && fillable {
                frontmatter.set(key.clone(), value);
            } else {
                leftovers[n].push((key.clone(), value));
            }
        }
    }
    frontmatter.set(keys::UPDATED_AT, Value::String(format_timestamp(now)));

    let mut body = target.body.clone();
    for (source, leftover) in sources.iter().zip(&leftovers) {
        append_section(&mut body, source, category, on, leftover);
    }

    let plain = render_document(&frontmatter, &body);
    let mut text = plain.clone();
    for source in sources {
        if let Some(changed) = retarget_references(&target.path, &text, &source.path, &target.path) {
            text = changed;
        }
    }
    let entry = match Entry::from_document(target.path.clone(), &text) {
        Ok(entry) => entry,
        // Never expected (kb rendered the text itself); the text without retargeted links
        // is then what is written, read back as the entry it is.
        Err(_) => {
            text = plain;
            Entry { path: target.path.clone(), frontmatter, body }
        }
    };
    Ok(MergedDocument { entry, text })
}

/// Whether `key` is united as a list: `tags` and `aliases`, the target category's list
/// fields, and any key whose value is a list in the target or a source.
fn is_list_field(key: &str, category: Category, target: &Entry, sources: &[Entry]) -> bool {
    matches!(key, keys::TAGS | keys::ALIASES)
        || category.field(key).is_some_and(|f| matches!(f.kind, FieldKind::TextList | FieldKind::PathList))
        || std::iter::once(target)
            .chain(sources)
            .any(|e| matches!(e.frontmatter.get(key), Some(Value::Array(_))))
}

/// The items of a list field's value: a list's items, a non-blank scalar as one item.
fn items(value: Option<&Value>) -> Vec<Value> {
    match value {
        Some(Value::Array(items)) => items.clone(),
        Some(value) if !is_blank(value) => vec![value.clone()],
        _ => Vec::new(),
    }
}

/// Whether two items of the list `key` are the same: tags case aside, aliases as names
/// are compared, other text with surrounding spaces aside.
fn same_item(key: &str, a: &Value, b: &Value) -> bool {
    match (a.as_str(), b.as_str()) {
        (Some(a), Some(b)) => match key {
            keys::TAGS => a.trim().to_lowercase() == b.trim().to_lowercase(),
            keys::ALIASES => {
                fold_name(a) == fold_name(b) && (!fold_name(a).is_empty() || a.trim() == b.trim())
            }
            _ => a.trim() == b.trim(),
        },
        _ => a == b,
    }
}

/// Whether a value is nothing: null, or blank text.
fn is_blank(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

/// Whether `value` is a vault path naming `path`.
fn is_path_to(value: &Value, path: &EntryPath) -> bool {
    value.as_str().is_some_and(|s| EntryPath::parse(s.trim()).is_ok_and(|p| &p == path))
}

/// `value` with a path to one of `sources` (alone or as a list item) made the target's.
fn redirected(value: &Value, sources: &[EntryPath], target: &EntryPath) -> Value {
    match value {
        Value::String(s) if EntryPath::parse(s.trim()).is_ok_and(|p| sources.contains(&p)) => {
            Value::String(target.to_string())
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| redirected(v, sources, target)).collect()),
        other => other.clone(),
    }
}

/// Appends `source`'s section to `body`: the heading, its notes (links written from its own
/// folder rebased to the target's), then the fields the target did not take.
fn append_section(
    body: &mut String,
    source: &Entry,
    category: Category,
    on: NaiveDate,
    leftover: &[(String, Value)],
) {
    if !body.trim().is_empty() {
        while body.ends_with("\n\n") {
            body.pop();
        }
        if !body.ends_with('\n') {
            body.push('\n');
        }
        body.push('\n');
    } else {
        body.clear();
    }
    let name = source.name().split_whitespace().collect::<Vec<_>>().join(" ");
    body.push_str(&format!("## Merged from {name} ({on})\n"));
    let notes = own_notes(source, category);
    let notes = notes.trim_matches(['\n', '\r']).trim_end();
    if !notes.is_empty() {
        body.push('\n');
        body.push_str(notes);
        body.push('\n');
    }
    if !leftover.is_empty() {
        body.push('\n');
        for (key, value) in leftover {
            body.push_str(&field_line(key, value));
        }
    }
}

/// The source's body with links written from its own folder leading where they did once
/// the text is in `category`'s folder.
fn own_notes(source: &Entry, category: Category) -> String {
    let document = render_document(&Frontmatter::new(), &source.body);
    rebase_own_links(&document, &source.path, category.as_str())
        .and_then(|rebased| rebased.strip_prefix("---\n---\n").map(str::to_string))
        .unwrap_or_else(|| source.body.clone())
}

/// One list item for a field the target did not take: `- key: value`, text of several lines
/// indented below it.
fn field_line(key: &str, value: &Value) -> String {
    match value {
        Value::String(s) if s.contains('\n') => {
            let indented: Vec<String> = s.trim_end().lines().map(|l| format!("  {l}")).collect();
            format!("- {key}:\n{}\n", indented.join("\n"))
        }
        Value::String(s) => format!("- {key}: {s}\n"),
        other => format!("- {key}: {other}\n"),
    }
}

#[cfg(test)]
mod tests;
