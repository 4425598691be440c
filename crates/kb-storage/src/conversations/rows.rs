//! Mapping between database rows and the domain's conversations and messages.
//!
//! Everything stored is plain text or numbers so the schema stays portable: timestamps are
//! RFC 3339 text in UTC with microseconds (fixed width, so text order is time order), tool
//! calls are a JSON array of `{id, name, arguments}` (NULL when there are none). A row that
//! cannot be read back (a bad timestamp, role or JSON) is a [`StoreError::Database`], never
//! a panic.

use chrono::{DateTime, SecondsFormat, SubsecRound, Utc};
use kb_domain::conversation::SummaryCoverage;
use kb_domain::{Conversation, ConversationId, Message, PendingCall, Role, StoreError, ToolCall};

use super::records::{PendingCallRecord, ToolCallRecord};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

/// The columns of a conversation, in the order [`conversation_from_row`] reads them
/// (a macro so queries stay `&'static str` through `concat!`).
macro_rules! conversation_columns {
    () => {
        "id, title, created_at, updated_at, summary, summary_covers, summary_last_filed, pending_call, person"
    };
}
pub(crate) use conversation_columns;

/// The columns of a message, in the order [`message_from_row`] reads them.
macro_rules! message_columns {
    () => {
        "id, conversation_id, role, content, tool_calls, tool_call_id, filed_entry_path, \
         filed_confidence, created_at"
    };
}
pub(crate) use message_columns;

/// A database failure, with what was being done.
pub(crate) fn db_error(doing: &'static str) -> impl Fn(sqlx::Error) -> StoreError {
    move |err| StoreError::database(doing, err)
}

/// Now, cut to the precision that is stored (so what is returned equals what is read back).
pub(crate) fn now() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(6)
}

/// A timestamp as stored.
pub(crate) fn format_time(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// A stored timestamp.
fn parse_time(text: &str, column: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|err| StoreError::database(format!("unreadable {column} {text:?}"), err))
}

/// Tool calls as stored: NULL when there are none.
pub(crate) fn tool_calls_to_json(calls: &[ToolCall]) -> Result<Option<String>, StoreError> {
    if calls.is_empty() {
        return Ok(None);
    }
    let records: Vec<ToolCallRecord> = calls.iter().map(ToolCallRecord::from).collect();
    serde_json::to_string(&records)
        .map(Some)
        .map_err(|err| StoreError::database("cannot encode tool calls", err))
}

/// Stored tool calls.
fn tool_calls_from_json(json: Option<&str>, message_id: &str) -> Result<Vec<ToolCall>, StoreError> {
    match json {
        None => Ok(Vec::new()),
        Some(text) => serde_json::from_str::<Vec<ToolCallRecord>>(text)
            .map(|records| records.into_iter().map(ToolCall::from).collect())
            .map_err(|err| {
                StoreError::database(format!("unreadable tool calls of message {message_id}"), err)
            }),
    }
}

/// A pending call as stored (JSON text).
pub(crate) fn pending_to_json(pending: &PendingCall) -> Result<String, StoreError> {
    serde_json::to_string(&PendingCallRecord::from(pending))
        .map_err(|err| StoreError::database("cannot encode the pending call", err))
}

/// A stored pending call.
pub(crate) fn pending_from_json(text: &str, conversation: &str) -> Result<PendingCall, StoreError> {
    serde_json::from_str::<PendingCallRecord>(text).map(PendingCall::from).map_err(|err| {
        StoreError::database(format!("unreadable pending call of conversation {conversation}"), err)
    })
}

/// One column of a row.
fn column<'r, T>(row: &'r SqliteRow, name: &'static str) -> Result<T, StoreError>
where
    T: sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite>,
{
    row.try_get(name).map_err(|err| StoreError::database(format!("unreadable column {name}"), err))
}

/// A conversation from a row of [`conversation_columns`].
pub(crate) fn conversation_from_row(row: &SqliteRow) -> Result<Conversation, StoreError> {
    let created_at: String = column(row, "created_at")?;
    let updated_at: String = column(row, "updated_at")?;
    let summary: Option<String> = column(row, "summary")?;
    let covers: Option<i64> = column(row, "summary_covers")?;
    let summary_covers = match (summary.as_ref(), covers) {
        (Some(_), Some(count)) => Some(SummaryCoverage {
            messages: u64::try_from(count)
                .map_err(|e| StoreError::database(format!("unreadable summary_covers {count}"), e))?,
            last_filed: column(row, "summary_last_filed")?,
        }),
        _ => None,
    };
    let id: String = column(row, "id")?;
    let pending: Option<String> = column(row, "pending_call")?;
    Ok(Conversation {
        pending: pending.as_deref().map(|text| pending_from_json(text, &id)).transpose()?,
        id: ConversationId::new(id),
        title: column(row, "title")?,
        created_at: parse_time(&created_at, "created_at")?,
        updated_at: parse_time(&updated_at, "updated_at")?,
        summary,
        summary_covers,
        person: column(row, "person")?,
    })
}

/// A message from a row of [`message_columns`].
pub(crate) fn message_from_row(row: &SqliteRow) -> Result<Message, StoreError> {
    let id: String = column(row, "id")?;
    let role: String = column(row, "role")?;
    let role = Role::parse(&role)
        .ok_or_else(|| StoreError::database_message(format!("unknown role {role:?} of message {id}")))?;
    let tool_calls: Option<String> = column(row, "tool_calls")?;
    let created_at: String = column(row, "created_at")?;
    Ok(Message {
        conversation_id: ConversationId::new(column::<String>(row, "conversation_id")?),
        role,
        content: column(row, "content")?,
        tool_calls: tool_calls_from_json(tool_calls.as_deref(), &id)?,
        tool_call_id: column(row, "tool_call_id")?,
        filed_entry_path: column(row, "filed_entry_path")?,
        filed_confidence: column(row, "filed_confidence")?,
        created_at: parse_time(&created_at, "created_at")?,
        id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip_at_stored_precision() {
        let t = now();
        assert_eq!(parse_time(&format_time(t), "t").ok(), Some(t));
        assert!(format_time(t).ends_with('Z'));
    }

    #[test]
    fn stored_text_sorts_like_time() {
        let early = DateTime::parse_from_rfc3339("2024-01-01T09:00:00Z").map(|t| t.with_timezone(&Utc));
        let late = DateTime::parse_from_rfc3339("2024-01-01T09:00:00.5Z").map(|t| t.with_timezone(&Utc));
        let (Ok(early), Ok(late)) = (early, late) else { panic!("bad test times") };
        assert!(format_time(early) < format_time(late));
    }

    #[test]
    fn tool_calls_use_null_when_none_and_reject_bad_json() {
        assert_eq!(tool_calls_to_json(&[]).ok(), Some(None));
        let calls = vec![ToolCall { id: "c1".into(), name: "search".into(), arguments: "{}".into() }];
        let json = tool_calls_to_json(&calls).ok().flatten();
        assert_eq!(json.as_deref(), Some(r#"[{"id":"c1","name":"search","arguments":"{}"}]"#));
        assert_eq!(tool_calls_from_json(json.as_deref(), "m").ok(), Some(calls));
        assert!(matches!(tool_calls_from_json(Some("{not json"), "m"), Err(StoreError::Database { .. })));
        assert!(parse_time("yesterday", "created_at").is_err());
    }

    #[test]
    fn pending_calls_round_trip_and_bad_json_is_an_error() {
        let pending = PendingCall {
            tool: "delete_entry".into(),
            arguments: serde_json::json!({"path": "projects/x.md"}),
            proposal: "Delete projects/x.md?".into(),
            choices: Vec::new(),
        };
        let text = pending_to_json(&pending).ok();
        assert_eq!(text.as_deref().and_then(|t| pending_from_json(t, "c").ok()), Some(pending.clone()));
        let choosing = PendingCall {
            choices: vec![kb_domain::PendingChoice {
                label: "Sam Lee".into(),
                path: Some("people/sam-lee.md".into()),
                arguments: serde_json::json!({"path": "people/sam-lee.md"}),
            }],
            ..pending
        };
        let text = pending_to_json(&choosing).ok();
        assert_eq!(text.as_deref().and_then(|t| pending_from_json(t, "c").ok()), Some(choosing));
        // A pending call stored before choices existed still reads.
        let old = r#"{"tool":"delete_entry","arguments":{"path":"projects/x.md"},"proposal":"Delete projects/x.md?"}"#;
        let pending = pending_from_json(old, "c").ok().map(|p| p.choices.is_empty());
        assert_eq!(pending, Some(true));
        let pending = PendingCall {
            tool: "delete_entry".into(),
            arguments: serde_json::json!({"path": "projects/x.md"}),
            proposal: "Delete projects/x.md?".into(),
            choices: Vec::new(),
        };
        let text = pending_to_json(&pending).ok();
        assert_eq!(text.as_deref().and_then(|t| pending_from_json(t, "c").ok()), Some(pending));
        assert!(matches!(pending_from_json("{oops", "c"), Err(StoreError::Database { .. })));
    }
}
