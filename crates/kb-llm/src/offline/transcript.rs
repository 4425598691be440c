//! What the offline model needs from the messages of a request: the person's last message,
//! the tool results that came after it, the entry handled most recently, whether a proposal
//! was just cancelled, and how many tool calls were made so far (for call ids).

use kb_domain::ChatMessage;
use kb_domain::llm::CANCELLED_PREFIX;
use serde_json::Value;

/// One tool result after the person's last message.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The tool that produced it, when the call is in the messages.
    pub tool: Option<String>,
    /// The result, as the tool wrote it (JSON text).
    pub content: String,
}

/// The parts of a conversation the offline model reads.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    /// The person's last message.
    pub last_user: Option<String>,
    /// Tool results after that message, in order.
    pub outcomes: Vec<Outcome>,
    /// The path of the entry most recently captured, shown, updated or moved.
    pub recent_path: Option<String>,
    /// Tool calls made in the conversation so far.
    pub calls_so_far: usize,
    /// Whether the person's last message did not confirm a proposal (the chat turn says so
    /// in a note just before it).
    pub cancelled: bool,
}

impl Transcript {
    /// Reads the messages of a request.
    pub fn read(messages: &[ChatMessage]) -> Transcript {
        let last_user_at = messages.iter().rposition(|m| matches!(m, ChatMessage::User { .. }));
        let last_user = last_user_at.and_then(|i| match &messages[i] {
            ChatMessage::User { content } => Some(content.clone()),
            _ => None,
        });
        let tool_of = |id: &str| {
            messages.iter().rev().find_map(|m| match m {
                ChatMessage::Assistant { tool_calls, .. } => {
                    tool_calls.iter().find(|c| c.id == id).map(|c| c.name.clone())
                }
                _ => None,
            })
        };
        let after = last_user_at.map_or(0, |i| i + 1);
        let outcomes = messages[after.min(messages.len())..]
            .iter()
            .filter_map(|m| match m {
                ChatMessage::Tool { tool_call_id, content } => {
                    Some(Outcome { tool: tool_of(tool_call_id), content: content.clone() })
                }
                _ => None,
            })
            .collect();
        let recent_path = messages.iter().rev().find_map(|m| match m {
            ChatMessage::Tool { content, .. } => path_in_result(content),
            _ => None,
        });
        let calls_so_far = messages
            .iter()
            .map(|m| match m {
                ChatMessage::Assistant { tool_calls, .. } => tool_calls.len(),
                _ => 0,
            })
            .sum();
        let cancelled = last_user_at.and_then(|i| i.checked_sub(1)).is_some_and(|i| {
            matches!(&messages[i], ChatMessage::System { content } if content.starts_with(CANCELLED_PREFIX))
        });
        Transcript { last_user, outcomes, recent_path, calls_so_far, cancelled }
    }
}

/// The one entry a successful tool result is about: a capture's or update's `path`, a
/// move's `newPath`, a get's `entry.path`. Lists and searches name no single entry.
pub fn path_in_result(content: &str) -> Option<String> {
    let value: Value = serde_json::from_str(content).ok()?;
    if value.get("success").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let data = value.get("data")?;
    let found = data
        .get("newPath")
        .or_else(|| data.get("path"))
        .or_else(|| data.get("entry").and_then(|e| e.get("path")))?;
    found.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kb_domain::ToolCall;

    #[test]
    fn reads_results_after_the_last_user_message() {
        let call = ToolCall { id: "c1".into(), name: "classify_and_capture".into(), arguments: "{}".into() };
        let capture = r#"{"success":true,"data":{"path":"people/priya.md","category":"people"}}"#;
        let messages = vec![
            ChatMessage::System { content: "sys".into() },
            ChatMessage::User { content: "met Priya".into() },
            ChatMessage::Assistant { content: None, tool_calls: vec![call] },
            ChatMessage::Tool { tool_call_id: "c1".into(), content: capture.into() },
            ChatMessage::Assistant { content: Some("Filed".into()), tool_calls: vec![] },
            ChatMessage::User { content: "actually that's a project".into() },
        ];
        let t = Transcript::read(&messages);
        assert_eq!(t.last_user.as_deref(), Some("actually that's a project"));
        assert!(t.outcomes.is_empty());
        assert_eq!(t.recent_path.as_deref(), Some("people/priya.md"));
        assert_eq!(t.calls_so_far, 1);
        let t = Transcript::read(&messages[..4]);
        assert_eq!(t.outcomes[0].tool.as_deref(), Some("classify_and_capture"));
    }

    #[test]
    fn a_cancel_note_just_before_the_message_is_seen() {
        let note = format!("{CANCELLED_PREFIX} the person did not confirm");
        let messages = vec![
            ChatMessage::System { content: "sys".into() },
            ChatMessage::System { content: note },
            ChatMessage::User { content: "no".into() },
        ];
        assert!(Transcript::read(&messages).cancelled);
        assert!(!Transcript::read(&[ChatMessage::User { content: "no".into() }]).cancelled);
    }

    #[test]
    fn failed_results_name_no_entry() {
        assert_eq!(path_in_result(r#"{"success":false,"error":"Entry not found: a/b.md"}"#), None);
        assert_eq!(path_in_result("not json"), None);
        let moved = r#"{"success":true,"data":{"oldPath":"inbox/x.md","newPath":"ideas/x.md"}}"#;
        assert_eq!(path_in_result(moved).as_deref(), Some("ideas/x.md"));
    }
}
