//! The JSON kb-server sends of domain values that have no shape of their own in kb-domain:
//! the events of a streamed chat turn (`POST /api/chat` with `Accept: text/event-stream`),
//! an entry's revisions, one revision's texts and what a restore did
//! (`/api/entries/{path}/history`, `…/restore`, `kb history --json`, `kb restore --json`),
//! the digests kept and how their deliveries went (`/api/digests`, `kb digests --json`, `/healthz`), and
//! the nudges of the moment (`/api/nudges`, `kb nudges --json`).
//! Each is made from its domain value; the names a client reads are written here.

use chrono::{DateTime, Utc};
use kb_core::domain::nudges::Nudge;
use kb_core::domain::outreach::{DeliveryRecord, StoredDigest};
use kb_core::domain::turn_events::TurnEvent;
use kb_core::domain::{Revision, RevisionText};
use kb_core::outreach::{NextRun, NudgeJson};
use kb_core::{OutreachStatus, Restored};
use serde::{Serialize, Serializer};
use serde_json::Value;

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
    /// Where the change came from (`chat`, `api`, `cli`, `mcp`, `outside`).
    pub source: &'static str,
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

/// `{nudges}`: the nudges of the moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NudgesJson<'a> {
    /// The nudges.
    pub nudges: Vec<NudgeJson<'a>>,
}

impl<'a> From<&'a [Nudge]> for NudgesJson<'a> {
    fn from(nudges: &'a [Nudge]) -> NudgesJson<'a> {
        NudgesJson { nudges: nudges.iter().map(NudgeJson::from).collect() }
    }
}

/// One attempt to send a digest to one channel.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryJson<'a> {
    /// The digest.
    pub digest_id: i64,
    /// `email` or `webhook`.
    pub channel: &'a str,
    /// 1 for the first try.
    pub attempt: u32,
    /// Whether it went through.
    pub delivered: bool,
    /// Why not, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
    /// Whether kb tries again later.
    pub will_retry: bool,
    /// When.
    pub at: DateTime<Utc>,
}

impl<'a> From<&'a DeliveryRecord> for DeliveryJson<'a> {
    fn from(record: &'a DeliveryRecord) -> DeliveryJson<'a> {
        DeliveryJson {
            digest_id: record.digest_id,
            channel: &record.channel,
            attempt: record.attempt,
            delivered: record.delivered,
            error: record.error.as_deref(),
            will_retry: record.will_retry,
            at: record.at,
        }
    }
}

/// A digest kb wrote, with how its deliveries went.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DigestJson<'a> {
    /// Its id.
    pub id: i64,
    /// `daily` or `weekly`.
    #[serde(rename = "type")]
    pub kind: &'a str,
    /// Its title.
    pub title: &'a str,
    /// Its markdown.
    pub markdown: &'a str,
    /// The nudges of the moment.
    pub nudges: &'a Value,
    /// `schedule` or `manual`.
    pub trigger: &'a str,
    /// When it was written.
    pub created_at: DateTime<Utc>,
    /// Every delivery attempt, oldest first.
    pub deliveries: Vec<DeliveryJson<'a>>,
}

impl<'a> From<&'a StoredDigest> for DigestJson<'a> {
    fn from(digest: &'a StoredDigest) -> DigestJson<'a> {
        DigestJson {
            id: digest.id,
            kind: &digest.kind,
            title: &digest.title,
            markdown: &digest.markdown,
            nudges: &digest.nudges,
            trigger: &digest.trigger,
            created_at: digest.created_at,
            deliveries: digest.deliveries.iter().map(DeliveryJson::from).collect(),
        }
    }
}

/// `{digests}`: the digests kept, newest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DigestsJson<'a> {
    /// The digests.
    pub digests: Vec<DigestJson<'a>>,
}

impl<'a> From<&'a [StoredDigest]> for DigestsJson<'a> {
    fn from(digests: &'a [StoredDigest]) -> DigestsJson<'a> {
        DigestsJson { digests: digests.iter().map(DigestJson::from).collect() }
    }
}

/// What `/healthz` says of kb reaching out.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutreachStatusJson<'a> {
    /// The next run of each schedule that is on.
    pub next_runs: &'a [NextRun],
    /// Where digests are sent (`email`, `webhook`).
    pub channels: &'a [String],
    /// The latest delivery attempt, when there was one.
    pub last_delivery: Option<DeliveryJson<'a>>,
}

impl<'a> From<&'a OutreachStatus> for OutreachStatusJson<'a> {
    fn from(status: &'a OutreachStatus) -> OutreachStatusJson<'a> {
        OutreachStatusJson {
            next_runs: &status.next_runs,
            channels: &status.channels,
            last_delivery: status.last_delivery.as_ref().map(DeliveryJson::from),
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

/// The data of one event of a streamed turn; its name is the SSE event's name.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged, rename_all_fields = "camelCase")]
pub enum TurnEventData<'a> {
    /// `turn.started`: the turn began in this conversation (new or existing).
    Started {
        /// The conversation.
        conversation_id: &'a str,
    },
    /// `tool.started`: a tool call began.
    ToolStarted {
        /// The tool.
        name: &'a str,
        /// Its arguments.
        arguments: &'a Value,
    },
    /// `tool.finished`: a tool call ended.
    ToolFinished {
        /// The tool.
        name: &'a str,
        /// Whether it succeeded.
        success: bool,
        /// One line about what it did or why it failed.
        summary: &'a str,
        /// The entry it filed or changed, when there is one.
        #[serde(skip_serializing_if = "Option::is_none")]
        path: Option<&'a str>,
    },
    /// `message.delta`: the next piece of the answer.
    MessageDelta {
        /// The text to append.
        text: &'a str,
    },
}

impl<'a> From<&'a TurnEvent> for TurnEventData<'a> {
    fn from(event: &'a TurnEvent) -> TurnEventData<'a> {
        match event {
            TurnEvent::Started { conversation_id } => TurnEventData::Started { conversation_id },
            TurnEvent::ToolStarted { name, arguments } => TurnEventData::ToolStarted { name, arguments },
            TurnEvent::ToolFinished { name, success, summary, path } => {
                TurnEventData::ToolFinished { name, success: *success, summary, path: path.as_deref() }
            }
            TurnEvent::MessageDelta { text } => TurnEventData::MessageDelta { text },
        }
    }
}

/// The event's name on the wire (`turn.started`, `tool.started`, …).
pub fn turn_event_name(event: &TurnEvent) -> &'static str {
    match event {
        TurnEvent::Started { .. } => "turn.started",
        TurnEvent::ToolStarted { .. } => "tool.started",
        TurnEvent::ToolFinished { .. } => "tool.finished",
        TurnEvent::MessageDelta { .. } => "message.delta",
    }
}

/// The event's data as JSON text.
pub fn turn_event_json(event: &TurnEvent) -> String {
    serde_json::to_string(&TurnEventData::from(event)).unwrap_or_else(|_| "{}".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(event: &TurnEvent) -> Value {
        serde_json::to_value(TurnEventData::from(event)).unwrap_or(Value::Null)
    }

    #[test]
    fn events_have_their_wire_names_and_camel_case_data() {
        let started = TurnEvent::Started { conversation_id: "01J".into() };
        assert_eq!(turn_event_name(&started), "turn.started");
        assert_eq!(data(&started), serde_json::json!({"conversationId": "01J"}));
        let finished = TurnEvent::ToolFinished {
            name: "get_entry".into(),
            success: true,
            summary: "ok".into(),
            path: None,
        };
        assert_eq!(
            data(&finished),
            serde_json::json!({"name": "get_entry", "success": true, "summary": "ok"})
        );
    }
}
