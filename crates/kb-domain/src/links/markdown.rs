//! Rewriting Markdown links `[text](path.md)` and definitions `[label]: path.md` when a
//! note moves, by the rule that reads them ([`LinkResolver`]): a link that led to the moved
//! note leads to its new path, a link that led to another note (the moved note's own links,
//! read from its new folder) still leads there, a link that led nowhere stays as it was.
//!
//! A rewritten link keeps its form, and the new target is checked to read back as the note
//! it must lead to (else the next form is tried, else the link stays):
//! - from the vault root with a `/` (`/Work/w.md`): the new path, with its `/`;
//! - found from its note's folder (`b.md`, `sub/b.md`, `./b.md`, `../Work/w.md`): from the
//!   note's folder as it will be — the file name in the same folder, `./sub/b.md` below it
//!   (`sub/b.md` when it was written so), `../…` elsewhere; a link that climbed with `../`
//!   climbs to the vault root and down again;
//! - found from the vault root (`Work/w.md`): the new path from the root, or from the
//!   note's folder when a note there would catch it, or when the new path is a file at the
//!   root (`../w.md`: its bare name would read from the folder first); from a note at the
//!   root, a path through folders is read from the root, and stays when that note moves;
//! - found by its file name elsewhere (`w.md`): the new file name, else from the folder.
//!
//! Only the path's bytes change (`#heading`, the text, a title stay); what would end the
//! target (a space, a parenthesis) is percent-encoded.

use std::ops::Range;

use super::resolve::{Route, folder, is_relative, relative_path, stem};
use super::{LinkForm, LinkResolver, parse_body_links};

/// The edits (byte ranges of `body`, the text after the frontmatter of the note at
/// `source`, with their new text) that lead its Markdown links to `to` instead of `from`,
/// and keep every other one leading where it led (see the module's rules). `resolver`
/// knows the vault before the move, as for
/// [`retarget_wikilinks`](super::retarget_wikilinks).
pub fn markdown_link_edits(
    source: &str,
    body: &str,
    from: &str,
    to: &str,
    resolver: &LinkResolver,
) -> Vec<(Range<usize>, String)> {
    if from == to {
        return Vec::new();
    }
    let source_after = if source == from { to } else { source };
    parse_body_links(body)
        .into_iter()
        .filter(|link| link.form == LinkForm::Markdown)
        .filter_map(|link| {
            let (led_to, route) = resolver.route(source, &link)?;
            let wanted = if led_to == from { to } else { led_to };
            // It stays when it still gets there the way it did (a path found by a file name
            // elsewhere, by chance, is a link to rewrite).
            let after = resolver.route_written(source, &link.target, LinkForm::Markdown, (from, to));
            if after.is_some_and(|(path, how)| path == wanted && (how == route || route == Route::Elsewhere))
            {
                return None;
            }
            let written = link.target.as_str();
            let target = forms(written, route, source_after, wanted).into_iter().find(|target| {
                resolver.resolve_written(source, target, LinkForm::Markdown, (from, to)) == Some(wanted)
            })?;
            Some((link.target_span, encode_link_target(&target)))
        })
        .collect()
}

/// The targets that would lead from the note at `source_after` to `wanted` in the form of
/// `written` (found by `route`), best first, then the other forms.
fn forms(written: &str, route: Route, source_after: &str, wanted: &str) -> Vec<String> {
    let here = folder(source_after);
    let relative = relative_path(here, wanted);
    let dotted = if relative.starts_with("../") || !relative.contains('/') {
        relative.clone()
    } else {
        format!("./{relative}")
    };
    let mut forms = Vec::new();
    if written.starts_with('/') {
        forms.push(format!("/{wanted}"));
    } else if route == Route::Folder || is_relative(written) {
        if written.starts_with("../") && !here.is_empty() {
            forms.push(format!("{}{wanted}", "../".repeat(here.split('/').count())));
        } else if written.starts_with("./") && !relative.starts_with("../") {
            forms.push(format!("./{relative}"));
        } else if written.contains('/') && !is_relative(written) {
            // Written below the folder without `./`: it stays so.
            forms.push(relative.clone());
        }
        forms.push(dotted.clone());
    } else if route == Route::Root {
        // A note at the root named by its bare file name would read from the note's folder
        // first: from a folder, a path that named folders climbs to it instead.
        if written.contains('/') && !wanted.contains('/') && !here.is_empty() {
            forms.push(dotted.clone());
        }
        forms.push(wanted.to_string());
    } else {
        forms.push(stem(wanted).to_string());
    }
    forms.extend([dotted, wanted.to_string(), format!("/{wanted}")]);
    forms
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
