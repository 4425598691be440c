//! The events of a streamed chat turn (`POST /api/chat` with `Accept: text/event-stream`):
//! each event's name and its data.

use kb_core::domain::turn_events::TurnEvent;
use serde::Serialize;
use serde_json::Value;

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
