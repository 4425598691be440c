//! The three-way merge of a note changed on two devices since they last agreed: what a
//! careful person would do with the two versions and the one they both started from.
//!
//! The frontmatter merges field by field (`fields`): fields changed on one side only
//! take that side's lines, byte for byte, and every other byte stays. The body merges by
//! lines (`lines`): changes to different lines are both kept, and two additions at the
//! same place (two lines added to a `Log`) are both kept, in date order when every one is
//! dated. Anything else — one field set to two values, the same lines changed two ways —
//! is a conflict, which the caller keeps apart so that nothing is lost.
//!
//! Which side is which matters only for order: the remote's version is the one a conflict
//! leaves in place, and the remote's additions come first where nothing else orders them.

mod fields;
mod lines;

#[cfg(test)]
mod tests;

use crate::frontmatter::document_spans;

/// What [`merge_note`] made of two versions of a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoteMerge {
    /// Both sides' changes, in one text.
    Clean(String),
    /// The two sides changed the same thing in different ways.
    Conflict,
}

/// The note `base` changed into `remote` on one device and into `local` on another,
/// merged (see the module doc).
pub fn merge_note(base: &str, remote: &str, local: &str) -> NoteMerge {
    if remote == local || base == local {
        return NoteMerge::Clean(remote.to_string());
    }
    if base == remote {
        return NoteMerge::Clean(local.to_string());
    }
    let merged = match (document_spans(base), document_spans(remote), document_spans(local)) {
        (Ok(b), Ok(r), Ok(l)) => match (b.yaml, r.yaml.clone(), l.yaml) {
            (Some(b_yaml), Some(r_yaml), Some(l_yaml)) => fields::merge_blocks(
                &base[b_yaml],
                &remote[r_yaml.clone()],
                &local[l_yaml],
            )
            .and_then(|yaml| {
                let body = lines::merge_lines(&base[b.body], &remote[r.body.clone()], &local[l.body])?;
                Some(format!("{}{yaml}{}{body}", &remote[..r_yaml.start], &remote[r_yaml.end..r.body.start]))
            }),
            // A block added or taken away on a side: the whole text merges by lines.
            _ => lines::merge_lines(base, remote, local),
        },
        _ => lines::merge_lines(base, remote, local),
    };
    match merged {
        // What merged must still read as a note when both sides did.
        Some(text) if document_spans(&text).is_ok() => NoteMerge::Clean(text),
        _ => NoteMerge::Conflict,
    }
}

/// Whether `text`'s lines end with `\r\n` (judged by its first line end).
fn uses_crlf(text: &str) -> bool {
    text.find('\n').is_some_and(|at| text[..at].ends_with('\r'))
}
