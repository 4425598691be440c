//! Rewriting `[[wikilinks]]` and `![[embeds]]` when a note moves, as Obsidian does: each
//! link that led to the moved note leads to its new path, written in the shortest form that
//! gets there; every other byte of the file stays as it was. Markdown links `[x](y.md)` are
//! not touched here (the `markdown` module rewrites those, for the entry references code).
//!
//! The rules, for a link in the note at `source`, with the vault as it will be after the
//! move (`from` gone, `to` there):
//! - A link that led to `from` must lead to `to`. One whose target, as written, already
//!   does (the name did not change, or still leads there from `source`) stays as written.
//! - A link that led to another note must still lead there. A move can take a link away
//!   without naming it: the note arriving at `to` may share the file name (or an alias) of
//!   the note a bare `[[Name]]` led to and be nearer to `source`, or the moved note itself
//!   reads its links from another folder. Such a link is rewritten to lead where it led.
//! - A link that led nowhere is left as it is, even when it now finds `to`.
//! - The new target of a link written as a bare name (no `/`) is the shortest end of the
//!   path of the note it must lead to that names that note alone once moved: its file name
//!   when no other note has it, else `Clients/Acme`, …, else its whole path (a note at the
//!   vault root is named by its file name, its whole path). A name several notes share is
//!   never written, even when the nearest of them is the one: a tie-break is no address.
//!   A link written as a path (`Work/Acme`, `/Work/Acme`) is written with the whole vault
//!   path, from the vault root as before: it says where the note is, which a shorter end of
//!   the path would not. A link written from its note's folder (`./Sib`, `../B/Note`) is
//!   written from that note's folder, as it will be, again. Each without `.md`, unless the
//!   old target ended with `.md`; a leading `/` is kept.
//! - Only the target's bytes change: `#heading`, `|alias`, the `!` of an embed, spaces
//!   around the target and the file's line ends stay byte for byte.
//! - A target that cannot be written inside `[[...]]` (a path holding `[`, `]`, `|`, `#`,
//!   a backtick, a backslash, a line end, or spaces at either end: they would end the link,
//!   start a heading or alias, open inline code, or be trimmed away) is not written: that
//!   link stays as it was. Escaping does not exist in a wikilink, and Obsidian itself does
//!   not allow such file names.

#[cfg(test)]
mod tests;

use std::ops::Range;

use super::resolve::{folder, is_relative, relative_path, stem, without_md};
use super::{Link, LinkForm, LinkResolver, parse_links};

/// The text of the note at `source` (its whole file, `text`) with every `[[wikilink]]` and
/// `![[embed]]` that led to `from` leading to `to` instead, and every other one still leading
/// where it led (see the module's rules); `None` when no link needs to change.
///
/// `resolver` knows the vault before the move: it has `from`, and `to` is no note yet (a
/// move: `to` takes `from`'s aliases) or is the note `from` is merged into. `source` is the
/// linking note's path before the move; when it is `from` itself, its links are read from
/// `to`. The notes worth asking are those of
/// [`LinkGraph::notes_touched_by_move`](super::LinkGraph::notes_touched_by_move); for any
/// other, this answers `None`. The cost is that of resolving each link of `text` a few
/// times, whatever the size of the vault.
pub fn retarget_wikilinks(
    source: &str,
    text: &str,
    from: &str,
    to: &str,
    resolver: &LinkResolver,
) -> Option<String> {
    if from == to {
        return None;
    }
    let edits: Vec<(Range<usize>, String)> = parse_links(text)
        .into_iter()
        .filter(|link| link.form != LinkForm::Markdown)
        .filter_map(|link| {
            let led_to = resolver.resolve(source, &link)?;
            let wanted = if led_to == from { to } else { led_to };
            if resolver.resolve_moved(source, &link, from, to) == Some(wanted) {
                return None;
            }
            let target = new_target(source, &link, wanted, (from, to), resolver)?;
            Some((link.target_span, target))
        })
        .collect();
    let body = (!edits.is_empty()).then(|| splice(text, &edits));
    // Links in the properties (`up: "[[Note]]"`) follow by the same rules.
    let properties =
        super::retarget_property_links(source, body.as_deref().unwrap_or(text), from, to, resolver);
    properties.or(body)
}

/// The target to write in `link` (in the note at `source`) so that it leads to `wanted`
/// once `moved.0` is at `moved.1`; `None` when no form that can be written gets there.
pub(super) fn new_target(
    source: &str,
    link: &Link,
    wanted: &str,
    moved: (&str, &str),
    resolver: &LinkResolver,
) -> Option<String> {
    let written = link.target.as_str();
    let rooted = written.starts_with('/');
    let md = &written[without_md(written).len()..];
    let path = without_md(wanted);
    let forms = if is_relative(written) {
        // From the linking note's folder as it will be, as before.
        let source_after = if source == moved.0 { moved.1 } else { source };
        let relative = relative_path(folder(source_after), path);
        vec![if relative.starts_with("../") { relative } else { format!("./{relative}") }]
    } else if written.contains('/') {
        vec![path.to_string()]
    } else {
        path_ends(path).into_iter().map(str::to_string).collect()
    };
    forms
        .into_iter()
        .map(|form| format!("{}{form}{md}", if rooted { "/" } else { "" }))
        .filter(|target| can_be_written(target))
        .filter(|target| is_relative(target) || resolver.names_only(target, wanted, moved))
        .find(|target| resolver.resolve_written(source, target, link.form, moved) == Some(wanted))
}

/// The ends of `path`, shortest first: its file name, its last folder and file name, …,
/// the whole path.
fn path_ends(path: &str) -> Vec<&str> {
    let mut ends = vec![stem(path)];
    ends.extend(path.rmatch_indices('/').map(|(slash, _)| &path[slash + 1..]).skip(1));
    if path.contains('/') {
        ends.push(path);
    }
    ends
}

/// Whether `target` reads back as itself between `[[` and `]]`, and changes how nothing
/// around the link reads.
fn can_be_written(target: &str) -> bool {
    !target.is_empty()
        && target.trim() == target
        && !target.contains(['[', ']', '|', '#', '`', '\\', '\n', '\r'])
}

/// `text` with each range of `edits` (in order, not overlapping) replaced.
pub(super) fn splice(text: &str, edits: &[(Range<usize>, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (range, replacement) in edits {
        out.push_str(&text[at..range.start]);
        out.push_str(replacement);
        at = range.end;
    }
    out.push_str(&text[at..]);
    out
}
