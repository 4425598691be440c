//! Conversations and their messages, as stored and as sent back to the model.

use chrono::{DateTime, Utc};

use crate::entry::one_line;

/// A conversation id (a ULID as text).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConversationId(String);

impl ConversationId {
    /// A new, unique, time-ordered id.
    pub fn generate() -> ConversationId {
        ConversationId(ulid::Ulid::new().to_string())
    }

    /// Wraps an id given from outside (it is only ever used as a bound query parameter).
    pub fn new(id: impl Into<String>) -> ConversationId {
        ConversationId(id.into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ConversationId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A conversation with kb.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// Its id.
    pub id: ConversationId,
    /// Its title (the first message, shortened, until renamed).
    pub title: String,
    /// When it started.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// A summary of the turns older than the context window, once there are any.
    pub summary: Option<String>,
    /// What the summary covers; `None` without a summary, or for one stored before this was
    /// recorded. Bookkeeping of the chat turn, never shown.
    pub summary_covers: Option<SummaryCoverage>,
    /// A tool call waiting for the person's yes (a chat's delete_entry proposal): the next
    /// message confirms or cancels it. Bookkeeping of the chat turn, never shown.
    pub pending: Option<PendingCall>,
    /// The person it belongs to when kb serves several people (only they see it); `None`
    /// for the local owner's.
    pub person: Option<String>,
}

/// A tool call a chat turn proposed and keeps until the person's next message in the
/// conversation: a confirmation runs it, anything else drops it.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingCall {
    /// The tool to run once confirmed.
    pub tool: String,
    /// Its arguments (a JSON object, as the tool itself wrote them).
    pub arguments: serde_json::Value,
    /// The question put to the person ("Delete projects/old-site.md?").
    pub proposal: String,
    /// When the call waits for the person to pick one of several entries rather than for
    /// a yes: the choices, each with the arguments the call runs with once picked. Empty
    /// for a confirmation.
    pub choices: Vec<PendingChoice>,
}

/// One answer to a pending question of which entry was meant.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingChoice {
    /// What the person may call it: an entry's name, or "new" for "none of these, a new one".
    pub label: String,
    /// The entry's path, when the choice is an entry.
    pub path: Option<String>,
    /// The arguments the pending call runs with when this is picked.
    pub arguments: serde_json::Value,
}

/// How far a conversation's summary reaches: the chat turn loads only the messages after it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SummaryCoverage {
    /// How many of the oldest messages the summary covers.
    pub messages: u64,
    /// The entry filed last in those messages, followed through later moves (a vault path).
    pub last_filed: Option<String>,
}

/// The longest automatic title.
pub const TITLE_CHARS: usize = 60;

/// The title of a conversation that starts with `first_message`.
pub fn title_from_message(first_message: &str) -> String {
    let title = one_line(first_message, TITLE_CHARS);
    if title.is_empty() { "New conversation".to_string() } else { title }
}

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The person.
    User,
    /// kb (text, tool calls, or both).
    Assistant,
    /// The result of one tool call.
    Tool,
}

impl Role {
    /// The role as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// Parses a stored role.
    pub fn parse(text: &str) -> Option<Role> {
        match text {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "tool" => Some(Role::Tool),
            _ => None,
        }
    }
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The id the model gave it; the result message carries it back.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model wrote them (JSON text, not yet trusted).
    pub arguments: String,
}

/// A message to be stored.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewMessage {
    /// Who said it.
    pub role: Option<Role>,
    /// The text (for a tool message, the JSON result).
    pub content: String,
    /// The tool calls of an assistant message.
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message, the call it answers.
    pub tool_call_id: Option<String>,
    /// For a final answer, the entry captured in the turn.
    pub filed_entry_path: Option<String>,
    /// For a final answer, the confidence of that capture.
    pub filed_confidence: Option<f64>,
}

impl NewMessage {
    /// A message from the person.
    pub fn user(content: impl Into<String>) -> NewMessage {
        NewMessage { role: Some(Role::User), content: content.into(), ..NewMessage::default() }
    }

    /// A text answer from kb.
    pub fn assistant(content: impl Into<String>) -> NewMessage {
        NewMessage { role: Some(Role::Assistant), content: content.into(), ..NewMessage::default() }
    }

    /// kb asking for tool calls (with whatever text came with them).
    pub fn assistant_tool_calls(content: impl Into<String>, calls: Vec<ToolCall>) -> NewMessage {
        NewMessage {
            role: Some(Role::Assistant),
            content: content.into(),
            tool_calls: calls,
            ..NewMessage::default()
        }
    }

    /// The result of a tool call.
    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<String>) -> NewMessage {
        NewMessage {
            role: Some(Role::Tool),
            content: content.into(),
            tool_call_id: Some(tool_call_id.into()),
            ..NewMessage::default()
        }
    }

    /// The role, defaulting to the person's.
    pub fn role(&self) -> Role {
        self.role.unwrap_or(Role::User)
    }
}

/// A stored message.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Its id.
    pub id: String,
    /// The conversation it belongs to.
    pub conversation_id: ConversationId,
    /// Who said it.
    pub role: Role,
    /// The text (for a tool message, the JSON result).
    pub content: String,
    /// The tool calls of an assistant message.
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message, the call it answers.
    pub tool_call_id: Option<String>,
    /// The entry captured in the turn this answer ends.
    pub filed_entry_path: Option<String>,
    /// The confidence of that capture.
    pub filed_confidence: Option<f64>,
    /// When it was stored.
    pub created_at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_short_single_lines() {
        assert_eq!(title_from_message("  met Priya\nat the meetup "), "met Priya at the meetup");
        assert_eq!(title_from_message(""), "New conversation");
        assert!(title_from_message(&"word ".repeat(50)).chars().count() <= TITLE_CHARS);
    }

    #[test]
    fn roles_round_trip() {
        for r in [Role::User, Role::Assistant, Role::Tool] {
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
        assert_eq!(Role::parse("system"), None);
    }
}
