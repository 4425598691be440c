//! References between entries, and keeping them true when an entry moves.
//!
//! An entry refers to another in two ways:
//! - a frontmatter value that is a vault path: a text value or an item of a list of texts
//!   (`related_projects: [projects/x.md]`, `related_people`, or any key of the person's);
//! - a link in the body (see [`links`](crate::links), whose one parse finds them): a
//!   Markdown link or link definition (`[x](projects/x.md)`, `[x](/projects/x.md)`,
//!   `[x](../projects/x.md)`, `[y](y.md)`, with an optional `#section`), read by the rule
//!   [`LinkResolver`] follows; and `[[wikilinks]]`, which the links code rewrites.
//!
//! [`retarget_references_in`] rewrites the references to a moved entry in another entry's
//! text, changing only the bytes of those references (in the style they were written) so
//! the rest of the file stays exactly as the person left it.

use std::collections::BTreeSet;
use std::ops::Range;

use serde_json::Value;

use crate::entry::Entry;
use crate::frontmatter::{
    Frontmatter, document_spans, parse_frontmatter_yaml, rewrite_value, written_values,
};
use crate::links::{LinkForm, LinkResolver, markdown_link_edits, parse_body_links};
use crate::path::EntryPath;

pub use crate::links::encode_link_target;

/// Every entry `entry` may refer to (itself excluded): its frontmatter paths, and the note
/// each Markdown link of its body names when read from the entry's folder (a file name,
/// `./`, `../`) or else from the vault root. Without the vault at hand this is the likely
/// reading; the links graph reads them against the notes there are.
pub fn referenced_paths(entry: &Entry) -> BTreeSet<EntryPath> {
    let mut found: BTreeSet<EntryPath> = frontmatter_paths(&entry.frontmatter).collect();
    for link in parse_body_links(&entry.body) {
        if link.form == LinkForm::Markdown
            && let Some((path, _)) = resolve_link(&entry.path, &link.target)
        {
            found.insert(path);
        }
    }
    found.remove(&entry.path);
    found
}

/// [`retarget_references_in`] with a vault known only by `from`: for a caller without the
/// vault at hand (a link it reads from a folder where a note of the vault would catch it
/// is read from the vault root).
pub fn retarget_references(
    referrer: &EntryPath,
    document: &str,
    from: &EntryPath,
    to: &EntryPath,
) -> Option<String> {
    let resolver = LinkResolver::new([(from.as_str(), Vec::new())]);
    retarget_references_in(referrer, document, from, to, &resolver)
}

/// The text of the entry at `referrer` (its whole file, `document`) with every reference
/// to `from` pointing at `to` instead, and its Markdown links that led elsewhere still
/// leading there (see [`markdown_link_edits`]); `None` when it has none (or cannot be read
/// as an entry). `resolver` knows the vault before the move; when `referrer` is `from`,
/// its links are read as from `to`. Only the references' bytes change: a frontmatter value
/// is written anew in its place (quoted as YAML needs), every other byte of the file —
/// comments, other values, line ends — stays as it was.
pub fn retarget_references_in(
    referrer: &EntryPath,
    document: &str,
    from: &EntryPath,
    to: &EntryPath,
    resolver: &LinkResolver,
) -> Option<String> {
    let spans = document_spans(document).ok()?;
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    if let Some(yaml) = &spans.yaml {
        let found = frontmatter_edits(&document[yaml.clone()], from, to).unwrap_or_default();
        edits.extend(found.into_iter().map(|(r, text)| (r.start + yaml.start..r.end + yaml.start, text)));
    }
    let body = &document[spans.body.clone()];
    let body_start = spans.body.start;
    let body_edits = markdown_link_edits(referrer.as_str(), body, from.as_str(), to.as_str(), resolver);
    edits.extend(body_edits.into_iter().map(|(r, text)| (r.start + body_start..r.end + body_start, text)));
    (!edits.is_empty()).then(|| splice(document, edits))
}

/// The text of a note moving from `from` into the folder `to_folder` (vault-relative, like
/// `projects`), with each link written from its own folder (`[b](b.md)`, `./b.md`,
/// `../x.md`) changed to lead where it led before (`../projects/b.md`); `None` when nothing
/// needs to change. Links from the vault root, and relative links that lead to the same
/// place from the new folder (`../people/p.md` between two category folders), stay as
/// written. For a caller without the vault at hand (a merge's text); a move reads the
/// moved note's links against the vault with [`retarget_references_in`].
pub fn rebase_own_links(document: &str, from: &EntryPath, to_folder: &str) -> Option<String> {
    if from.folder() == to_folder {
        return None;
    }
    let spans = document_spans(document).ok()?;
    let body = &document[spans.body.clone()];
    let mut edits = Vec::new();
    for link in parse_body_links(body) {
        if link.form != LinkForm::Markdown {
            continue;
        }
        let Some((path, true)) = resolve_link(from, &link.target) else { continue };
        if relative_to(to_folder, &link.target).as_ref() == Some(&path) {
            continue;
        }
        let range = link.target_span.start + spans.body.start..link.target_span.end + spans.body.start;
        edits.push((range, encode_link_target(&relative_path(to_folder, &path))));
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

/// The link from inside `folder` (vault-relative) to the note at `to`: its file name in
/// the same folder, `./sub/b.md` below it, else through as many `../` as needed
/// (`../projects/b.md`).
fn relative_path(folder: &str, to: &EntryPath) -> String {
    let path = crate::links::relative_path(folder, to.as_str());
    // Into a sub-folder: `./` says the link is read from here, not from the vault root.
    if !path.starts_with("../") && path.contains('/') { format!("./{path}") } else { path }
}

/// The entry a Markdown link's target (decoded, without its `#section`) names, seen from
/// `referrer` without the vault at hand, and whether it is read from `referrer`'s folder.
fn resolve_link(referrer: &EntryPath, target: &str) -> Option<(EntryPath, bool)> {
    if target.contains("://") || target.is_empty() {
        return None;
    }
    if let Some(rooted) = target.strip_prefix('/') {
        return EntryPath::parse(rooted).ok().map(|p| (p, false));
    }
    if let Some(path) = relative_to(referrer.folder(), target) {
        return Some((path, true));
    }
    EntryPath::parse(target).ok().map(|p| (p, false))
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

#[cfg(test)]
mod tests;
