//! The conversation as the model sees it: stored messages turned into chat messages, the
//! window of recent ones cut at a safe place, and the conversation state (the entry filed
//! last) recovered from what was stored.

use std::collections::HashMap;

use kb_domain::{ChatMessage, EntryPath, Message, Role};
use serde_json::Value;

/// The last `window` messages, starting at a person's message so that no tool result is
/// separated from the call that asked for it.
pub fn window(messages: &[Message], window: usize) -> &[Message] {
    let start = messages.len().saturating_sub(window);
    let tail = &messages[start..];
    match tail.iter().position(|m| m.role == Role::User) {
        Some(first_user) => &tail[first_user..],
        None => &tail[tail.len()..],
    }
}

/// Stored messages as chat messages.
pub fn to_chat_messages(messages: &[Message]) -> Vec<ChatMessage> {
    messages
        .iter()
        .map(|m| match m.role {
            Role::User => ChatMessage::User { content: m.content.clone() },
            Role::Assistant => ChatMessage::Assistant {
                content: (!m.content.is_empty() || m.tool_calls.is_empty()).then(|| m.content.clone()),
                tool_calls: m.tool_calls.clone(),
            },
            Role::Tool => ChatMessage::Tool {
                tool_call_id: m.tool_call_id.clone().unwrap_or_default(),
                content: m.content.clone(),
            },
        })
        .collect()
}

/// The entry filed most recently, followed through later moves: `before` is the one filed
/// last before these messages (from the summary's coverage), if any.
pub fn last_filed(before: Option<EntryPath>, messages: &[Message]) -> Option<EntryPath> {
    let mut tool_names: HashMap<&str, &str> = HashMap::new();
    let mut last = before;
    for message in messages {
        for call in &message.tool_calls {
            tool_names.insert(call.id.as_str(), call.name.as_str());
        }
        if let Some(path) = message.filed_entry_path.as_deref().and_then(|p| EntryPath::parse(p).ok()) {
            last = Some(path);
        }
        let is_move = message
            .tool_call_id
            .as_deref()
            .and_then(|id| tool_names.get(id))
            .is_some_and(|name| *name == "move_entry");
        if message.role == Role::Tool && is_move {
            let data =
                serde_json::from_str::<Value>(&message.content).ok().and_then(|v| v.get("data").cloned());
            let field = |key: &str| {
                data.as_ref()
                    .and_then(|d| d.get(key))
                    .and_then(Value::as_str)
                    .and_then(|p| EntryPath::parse(p).ok())
            };
            if let (Some(old), Some(new)) = (field("oldPath"), field("newPath"))
                && last.as_ref() == Some(&old)
            {
                last = Some(new);
            }
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use kb_domain::{ConversationId, ToolCall};

    fn msg(role: Role, content: &str) -> Message {
        Message {
            id: String::new(),
            conversation_id: ConversationId::new("c"),
            role,
            content: content.to_string(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            filed_entry_path: None,
            filed_confidence: None,
            created_at: Utc::now(),
        }
    }

    #[test]
    fn the_window_starts_at_a_person_message() {
        let mut calls = msg(Role::Assistant, "");
        calls.tool_calls =
            vec![ToolCall { id: "1".into(), name: "list_entries".into(), arguments: "{}".into() }];
        let mut result = msg(Role::Tool, "{}");
        result.tool_call_id = Some("1".into());
        let messages =
            vec![msg(Role::User, "a"), calls, result, msg(Role::Assistant, "b"), msg(Role::User, "c")];
        let w = window(&messages, 3);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].content, "c");
        assert_eq!(window(&messages, 10).len(), 5);
        assert!(window(&messages[1..4], 2).is_empty());
    }

    #[test]
    fn last_filed_follows_moves() {
        let mut answer = msg(Role::Assistant, "filed");
        answer.filed_entry_path = Some("inbox/shed.md".into());
        let mut calls = msg(Role::Assistant, "");
        calls.tool_calls =
            vec![ToolCall { id: "m".into(), name: "move_entry".into(), arguments: "{}".into() }];
        let mut moved = msg(
            Role::Tool,
            r#"{"success":true,"data":{"oldPath":"inbox/shed.md","newPath":"projects/shed.md","category":"projects"}}"#,
        );
        moved.tool_call_id = Some("m".into());
        let messages = vec![msg(Role::User, "x"), answer, msg(Role::User, "y"), calls, moved];
        assert_eq!(last_filed(None, &messages), Some(EntryPath::parse("projects/shed.md").unwrap()));
        assert_eq!(last_filed(None, &messages[..2]), Some(EntryPath::parse("inbox/shed.md").unwrap()));
        assert_eq!(last_filed(None, &[]), None);
        // One filed before these messages is kept, and followed through their moves.
        let earlier = EntryPath::parse("inbox/shed.md").ok();
        assert_eq!(last_filed(earlier.clone(), &messages[2..]), EntryPath::parse("projects/shed.md").ok());
        assert_eq!(last_filed(earlier.clone(), &[]), earlier);
    }
}
