//! Sync conflicts as a person resolves them: a note two devices changed in ways that do
//! not merge keeps one version, and the other is written beside it as a copy whose
//! `conflict_of` field names the note. Resolving keeps the note's version (`theirs`: the
//! copy goes), the copy's (`mine`: it becomes the note, keeping the note's `id`), or both
//! (the copy stays as a note of its own).

use serde_json::Value;

use crate::edit::edit_document;
use crate::frontmatter::{Frontmatter, FrontmatterError, document_spans, parse_frontmatter_yaml};

/// What resolving a conflict did.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// The note.
    pub note: crate::path::EntryPath,
    /// The copy.
    pub copy: crate::path::EntryPath,
    /// What was kept.
    pub keep: ConflictKeep,
    /// With both kept, where the copy's version is now.
    pub kept_as: Option<crate::path::EntryPath>,
}

/// Whether a file's name is that of a conflict copy: kb's (`NAME.conflict-DEVICE-…`),
/// Syncthing's (`.sync-conflict-`) or another sync tool's "conflicted copy".
pub fn is_conflict_copy(name: &str) -> bool {
    let lower = name.to_lowercase();
    lower.contains(".conflict-") || lower.contains(".sync-conflict-") || lower.contains("conflicted copy")
}

/// The field of a conflict copy naming the note it is a copy of.
pub const CONFLICT_OF: &str = "conflict_of";

/// Which version a resolved conflict keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictKeep {
    /// The copy's: its version replaces the note (the copy holds the version of the device that merged; on that device, its own).
    Mine,
    /// The note's: the copy goes.
    Theirs,
    /// Both: the copy stays as a note of its own.
    Both,
}

impl ConflictKeep {
    /// The choice named `mine`, `theirs` or `both`.
    pub fn parse(text: &str) -> Option<ConflictKeep> {
        match text.trim().to_ascii_lowercase().as_str() {
            "mine" => Some(ConflictKeep::Mine),
            "theirs" => Some(ConflictKeep::Theirs),
            "both" => Some(ConflictKeep::Both),
            _ => None,
        }
    }

    /// The choice's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ConflictKeep::Mine => "mine",
            ConflictKeep::Theirs => "theirs",
            ConflictKeep::Both => "both",
        }
    }
}

/// The copy's text as the note's new text: without `conflict_of`, and with the note's `id`
/// (`None`: without one).
pub fn copy_as_note(copy: &str, note_id: Option<&str>) -> Result<String, FrontmatterError> {
    let mut changes = Frontmatter::new();
    changes.set(CONFLICT_OF, Value::Null);
    changes.set("id", note_id.map_or(Value::Null, |id| Value::String(id.to_string())));
    without_empty_block(edit_document(copy, &changes, None)?.text)
}

/// The copy's text as a note of its own: without `conflict_of`, and without the `id` the
/// merge gave it unless `keep_id` (its note has one: a note kb knows by id keeps a copy
/// told apart from it; a copy of a note without frontmatter comes back without).
pub fn copy_kept(copy: &str, keep_id: bool) -> Result<String, FrontmatterError> {
    let mut changes = Frontmatter::new();
    changes.set(CONFLICT_OF, Value::Null);
    if !keep_id {
        changes.set("id", Value::Null);
    }
    without_empty_block(edit_document(copy, &changes, None)?.text)
}

/// `text` without its frontmatter block when the block holds no field any more (a copy of
/// a note that had none gets one for `id` and `conflict_of` only).
fn without_empty_block(text: String) -> Result<String, FrontmatterError> {
    let spans = document_spans(&text)?;
    match spans.yaml {
        Some(yaml) if parse_frontmatter_yaml(&text[yaml.clone()])?.is_empty() => {
            let bom = if text.starts_with('\u{feff}') { "\u{feff}" } else { "" };
            Ok(format!("{bom}{}", &text[spans.body]))
        }
        _ => Ok(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_becomes_the_note_with_its_id_or_a_note_of_its_own() {
        let copy = "---\nid: 01COPY\nname: Shed\nstatus: someday\nconflict_of: projects/shed.md\n---\nBody\n";
        assert_eq!(
            copy_as_note(copy, Some("01SHED")).unwrap(),
            "---\nid: 01SHED\nname: Shed\nstatus: someday\n---\nBody\n"
        );
        assert_eq!(
            copy_kept(copy, true).unwrap(),
            "---\nid: 01COPY\nname: Shed\nstatus: someday\n---\nBody\n"
        );
        assert_eq!(ConflictKeep::parse(" Mine "), Some(ConflictKeep::Mine));
        // A copy of a note without frontmatter comes back without one.
        let plain = "---\nid: 01COPY\nconflict_of: Journal/day.md\n---\nWalked.\n";
        assert_eq!(copy_as_note(plain, None).unwrap(), "Walked.\n");
        assert_eq!(copy_kept(plain, false).unwrap(), "Walked.\n");
        assert_eq!(ConflictKeep::parse("ours"), None);
    }
}
