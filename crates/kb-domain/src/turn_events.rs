//! What a chat turn reports while it runs, for clients that show it live (Server-Sent
//! Events on `POST /api/chat`, `kb chat`): the turn began, a tool started and finished,
//! a piece of the answer was written. The end (the whole answer, or an error) is reported
//! by whoever runs the turn.

use serde::Serialize;
use serde_json::Value;

/// One thing that happened in a turn, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "camelCase")]
pub enum TurnEvent {
    /// The turn began in this conversation (new or existing).
    #[serde(rename = "turn.started", rename_all = "camelCase")]
    Started {
        /// The conversation.
        conversation_id: String,
    },
    /// A tool call began.
    #[serde(rename = "tool.started")]
    ToolStarted {
        /// The tool.
        name: String,
        /// Its arguments, as the model gave them (JSON, or the raw text when not JSON).
        arguments: Value,
    },
    /// A tool call ended.
    #[serde(rename = "tool.finished")]
    ToolFinished {
        /// The tool.
        name: String,
        /// Whether it did what was asked.
        success: bool,
        /// One line about what it did or why it failed.
        summary: String,
        /// The entry it filed or changed, when there is one.
        #[serde(skip_serializing_if = "Option::is_none")]
        path: Option<String>,
    },
    /// The next piece of the answer.
    #[serde(rename = "message.delta")]
    MessageDelta {
        /// The text to append.
        text: String,
    },
}

impl TurnEvent {
    /// The event's name on the wire (`turn.started`, `tool.started`, …).
    pub fn name(&self) -> &'static str {
        match self {
            TurnEvent::Started { .. } => "turn.started",
            TurnEvent::ToolStarted { .. } => "tool.started",
            TurnEvent::ToolFinished { .. } => "tool.finished",
            TurnEvent::MessageDelta { .. } => "message.delta",
        }
    }

    /// The event's data, without its name.
    pub fn data(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.remove("event");
        }
        value
    }
}

/// Splits a finished answer into the pieces a client sees arrive: a word at a time, each
/// with the space before it, so that the pieces joined are the answer exactly.
pub fn deltas(answer: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    for c in answer.chars() {
        if c.is_whitespace() && !current.trim().is_empty() {
            pieces.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_have_their_wire_names_and_camel_case_data() {
        let started = TurnEvent::Started { conversation_id: "01J".into() };
        assert_eq!(started.name(), "turn.started");
        assert_eq!(started.data(), serde_json::json!({"conversationId": "01J"}));
        let finished = TurnEvent::ToolFinished {
            name: "get_entry".into(),
            success: true,
            summary: "ok".into(),
            path: None,
        };
        assert_eq!(
            finished.data(),
            serde_json::json!({"name": "get_entry", "success": true, "summary": "ok"})
        );
    }

    #[test]
    fn deltas_join_to_the_answer() {
        for answer in ["", "one", "Filed **Priya** in people/priya.md.\n\n- a\n- b  ", "  lead  and   gaps "]
        {
            let pieces = deltas(answer);
            assert_eq!(pieces.concat(), answer);
            assert!(pieces.iter().all(|p| !p.is_empty()));
        }
        assert_eq!(deltas("a b").len(), 2);
    }
}
