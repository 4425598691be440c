//! The JSON of the revision history answers, shared by HTTP (`/api/entries/{path}/history`,
//! `…/restore`) and the CLI's `--json` (`kb history`, `kb restore`): kb-core answers in
//! types, and their wire shape is made here.

use kb_core::Restored;
use kb_core::domain::{Revision, RevisionText};
use serde::Serialize;

use crate::dto::RevisionJson;

/// `{revisions}`: an entry's revisions, newest first.
#[derive(Debug, Serialize)]
pub struct RevisionsAnswer<'a> {
    /// The revisions.
    #[serde(serialize_with = "crate::dto::revisions")]
    pub revisions: &'a [Revision],
}

/// One revision with the file's text `before` and `after` it (`null` where there was no
/// file).
#[derive(Debug, Serialize)]
pub struct RevisionAnswer<'a> {
    /// The revision's own fields.
    #[serde(flatten)]
    pub revision: RevisionJson<'a>,
    /// The file before it.
    pub before: Option<&'a str>,
    /// The file after it.
    pub after: Option<&'a str>,
}

impl<'a> From<&'a RevisionText> for RevisionAnswer<'a> {
    fn from(text: &'a RevisionText) -> RevisionAnswer<'a> {
        RevisionAnswer {
            revision: RevisionJson::from(&text.revision),
            before: text.before.as_deref(),
            after: text.after.as_deref(),
        }
    }
}

/// `{path, revision?, note?}`: what a restore did (no `revision` when the file already
/// had those bytes; a `note` when the entry had moved since and was restored where it is
/// now).
#[derive(Debug, Serialize)]
pub struct RestoreAnswer<'a> {
    /// Where the entry is now.
    pub path: String,
    /// The revision the restore recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// Why it was restored elsewhere than asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'a str>,
}

impl<'a> From<&'a Restored> for RestoreAnswer<'a> {
    fn from(restored: &'a Restored) -> RestoreAnswer<'a> {
        RestoreAnswer {
            path: restored.path.to_string(),
            revision: restored.revision,
            note: restored.note.as_deref(),
        }
    }
}
