//! Links between notes as Obsidian reads them: `[[Note]]`, `[[Note|alias]]` (`[[Note\|alias]]`
//! in a table), `[[Note#Heading]]`, `[[folder/Note]]`, `[[../folder/Note]]`, embeds
//! `![[...]]`, and Markdown links `[text](path.md)` and definitions `[label]: path.md`.
//! One CommonMark parse finds them (`parse`): what Markdown reads as code (inline code,
//! fenced blocks, also in quotes and callouts, indented code lines) and the frontmatter
//! hold no link. [`parse_links`] gives each with where its target is written (so a move
//! rewrites exactly those bytes); [`LinkResolver`] says which note each leads to;
//! [`LinkGraph`] keeps every note's links and backlinks as notes change; the `retarget`
//! and `markdown` modules rewrite them when a note moves.

mod graph;
mod markdown;
mod parse;
mod properties;
mod resolve;
mod retarget;
#[cfg(test)]
mod tests;

use std::ops::Range;

use parse::links_from;

pub use graph::{Backlink, LINE_CHARS, LinkGraph, OutgoingLink, links_in};
pub use markdown::{encode_link_target, markdown_link_edits};
pub use properties::{note_links, property_links, retarget_property_links};
pub use resolve::{LinkResolver, link_key, note_keys, target_stem};
pub(crate) use resolve::{normalize, relative_path};
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
