//! An entry's revisions, one revision's texts and what a restore did, as clients read them
//! (`/api/entries/{path}/history`, `…/restore`, `kb history --json`, `kb restore --json`).

use chrono::{DateTime, Utc};
use kb_core::Restored;
use kb_core::domain::{Revision, RevisionText};
use serde::{Serialize, Serializer};

/// One recorded change of one entry's file, as clients read it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RevisionJson<'a> {
    /// Its number, increasing with time across the vault.
    pub id: i64,
    /// The operation it belongs to (the changes of one action, undone together).
    pub operation: i64,
    /// When it was recorded.
    pub at: DateTime<Utc>,
    /// Where the change came from (`chat`, `api`, `cli`, `mcp`, `outside`, `sync`).
    pub source: &'static str,
    /// The device it was made on, when the vault is synced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<&'a str>,
    /// The person who made it (`local` for the CLI and `kb mcp`); absent for a change made
    /// outside kb or brought by a sync.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person: Option<&'a str>,
    /// The tool that made it, when a tool did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'a str>,
    /// The conversation it was made in, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<&'a str>,
    /// One line saying what changed.
    pub description: &'a str,
    /// The entry's `id`, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<&'a str>,
    /// Where the file was before (`null`: it did not exist).
    pub path_before: Option<String>,
    /// Where the file is after (`null`: it no longer exists).
    pub path_after: Option<String>,
    /// The operation this one undid, when it is an undo.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverts: Option<i64>,
}

impl<'a> From<&'a Revision> for RevisionJson<'a> {
    fn from(revision: &'a Revision) -> RevisionJson<'a> {
        RevisionJson {
            id: revision.id,
            operation: revision.operation,
            at: revision.at,
            source: revision.source.as_str(),
            device: revision.device.as_deref(),
            person: revision.person.as_deref(),
            tool: revision.tool.as_deref(),
            conversation_id: revision.conversation_id.as_ref().map(|id| id.as_str()),
            description: &revision.description,
            entry_id: revision.entry_id.as_deref(),
            path_before: revision.path_before.as_ref().map(ToString::to_string),
            path_after: revision.path_after.as_ref().map(ToString::to_string),
            reverts: revision.reverts,
        }
    }
}

/// `{revisions}`: an entry's revisions, newest first.
#[derive(Debug, Serialize)]
pub struct RevisionsAnswer<'a> {
    /// The revisions.
    #[serde(serialize_with = "revisions")]
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

/// Writes a list of revisions as [`RevisionJson`]s (`#[serde(serialize_with = ...)]`).
pub fn revisions<S: Serializer>(revisions: &&[Revision], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(revisions.iter().map(RevisionJson::from))
}
