//! The three-way merge of a frontmatter block, field by field: the remote's block is kept
//! as written, and each field only the local side changed takes the local side's lines
//! (added after the field it follows there, removed, or replaced). Fields are compared by
//! the values YAML reads, so a field written differently but meaning the same is no change.

use serde_json::Value;

use super::{lines, uses_crlf};
use crate::edit::fields::field_spans;
use crate::edit::{set_fields_in_place, with_changes};
use crate::frontmatter::{Frontmatter, parse_frontmatter_yaml};

/// The blocks `base`, `remote` and `local` (the YAML between the delimiter lines) merged;
/// `None` when a field was set to two values, or a block cannot be read.
pub(super) fn merge_blocks(base: &str, remote: &str, local: &str) -> Option<String> {
    let (Ok(b), Ok(r), Ok(l)) =
        (parse_frontmatter_yaml(base), parse_frontmatter_yaml(remote), parse_frontmatter_yaml(local))
    else {
        // YAML that does not parse merges only as lines, and only into YAML that does.
        let merged = lines::merge_lines(base, remote, local)?;
        return parse_frontmatter_yaml(&merged).is_ok().then_some(merged);
    };
    let mut changes = Frontmatter::new();
    let keys: Vec<&String> = r.keys().chain(l.keys().filter(|k| !r.contains(k))).chain(b.keys()).collect();
    for key in keys {
        let (in_base, in_remote, in_local) = (b.get(key), r.get(key), l.get(key));
        if in_remote == in_local || in_local == in_base {
            continue;
        }
        if in_remote != in_base {
            // Both sides stamped the note when they changed it: the later stamp stands
            // (two edits of different fields are no conflict for their stamps' sake).
            match later_stamp(key, in_remote, in_local) {
                Some(true) => {}
                Some(false) => continue,
                None => return None,
            }
        }
        changes.set(key.clone(), in_local.cloned().unwrap_or(Value::Null));
    }
    if changes.is_empty() {
        return Some(remote.to_string());
    }
    let expected = with_changes(r, &changes);
    let spliced = splice_fields(remote, local, &l, &changes)
        .filter(|text| parse_frontmatter_yaml(text).is_ok_and(|read| same(&read, &expected)));
    spliced
        .or_else(|| set_fields_in_place(remote, &changes))
        .filter(|text| parse_frontmatter_yaml(text).is_ok_and(|read| same(&read, &expected)))
}

/// For a field kb stamps at every change (`updated_at`) set to two times on two sides:
/// whether the local one is the later (`None` for any other field, or a value that is not
/// a time).
fn later_stamp(key: &str, remote: Option<&Value>, local: Option<&Value>) -> Option<bool> {
    if key != crate::fields::keys::UPDATED_AT {
        return None;
    }
    let time = |value: Option<&Value>| {
        chrono::DateTime::parse_from_rfc3339(value?.as_str()?).ok().map(|at| at.with_timezone(&chrono::Utc))
    };
    Some(time(local)? > time(remote)?)
}

/// The remote block with the local lines of each changed field put in (see the module
/// doc); `None` when either block's fields cannot be told apart by lines.
fn splice_fields(
    remote: &str,
    local: &str,
    local_fields: &Frontmatter,
    changes: &Frontmatter,
) -> Option<String> {
    let remote_spans = field_spans(remote)?;
    let local_spans = field_spans(local)?;
    let local_lines = |key: &str| -> Option<String> {
        let (_, span) = local_spans.iter().find(|(k, _)| k == key)?;
        Some(with_line_ends(
            &local[span.clone()],
            uses_crlf(remote) || (!remote.contains('\n') && uses_crlf(local)),
        ))
    };
    // Each remote field: kept, replaced or removed; then the added ones after the field
    // they follow locally (at the end when none does).
    let mut out: Vec<(String, String)> = Vec::new();
    let mut at = 0;
    let mut head = String::new();
    for (key, span) in &remote_spans {
        let piece = &remote[at..span.start];
        let lines = match changes.get(key) {
            None => remote[span.clone()].to_string(),
            Some(Value::Null) => String::new(),
            Some(_) => local_lines(key)?,
        };
        if out.is_empty() {
            head.push_str(piece);
            out.push((key.clone(), lines));
        } else {
            out.push((key.clone(), format!("{piece}{lines}")));
        }
        at = span.end;
    }
    let tail = &remote[at..];
    let local_order: Vec<&String> = local_fields.keys().collect();
    for (key, value) in changes.iter() {
        if value.is_null() || remote_spans.iter().any(|(k, _)| k == key) {
            continue;
        }
        let added = local_lines(key)?;
        // After the field it follows locally; first when it is first there; else last.
        let at = local_order.iter().position(|k| *k == key);
        let after = at
            .and_then(|p| local_order[..p].iter().rev().find_map(|k| out.iter().position(|(o, _)| o == *k)));
        match (after, at) {
            (Some(p), _) => out.insert(p + 1, (key.clone(), added)),
            (None, Some(0)) => out.insert(0, (key.clone(), added)),
            _ => out.push((key.clone(), added)),
        }
    }
    let mut text = head;
    for (_, lines) in &out {
        text.push_str(lines);
        if !text.is_empty() && !text.ends_with('\n') {
            text.push_str(if uses_crlf(remote) { "\r\n" } else { "\n" });
        }
    }
    text.push_str(tail);
    Some(text)
}

/// `lines` with `\r\n` line ends when `crlf`, else `\n`.
fn with_line_ends(lines: &str, crlf: bool) -> String {
    let plain = lines.replace("\r\n", "\n");
    if crlf { plain.replace('\n', "\r\n") } else { plain }
}

/// Whether two maps hold the same fields with the same values (in any order).
fn same(a: &Frontmatter, b: &Frontmatter) -> bool {
    a.len() == b.len() && a.iter().all(|(key, value)| b.get(key) == Some(value))
}
