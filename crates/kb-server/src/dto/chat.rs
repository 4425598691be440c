//! Conversations, their messages and the answer of one chat turn, as clients read them
//! (`POST /api/chat`, `/api/conversations`, `kb conversations --json`, `kb chat --json`).

use chrono::{DateTime, Utc};
use kb_core::domain::{Conversation, Message, ToolCall, Usage};
use kb_core::{AnswerMessage, ChatResponse, FiledEntry};
use serde::Serialize;

/// A conversation: `{id, title, createdAt, updatedAt, summary}` (`summary` is `null` until
/// the conversation outgrows the context window).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationJson<'a> {
    /// Its id.
    pub id: &'a str,
    /// Its title.
    pub title: &'a str,
    /// When it started.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// The summary of its older turns.
    pub summary: Option<&'a str>,
}

impl<'a> From<&'a Conversation> for ConversationJson<'a> {
    fn from(conversation: &'a Conversation) -> ConversationJson<'a> {
        ConversationJson {
            id: conversation.id.as_str(),
            title: &conversation.title,
            created_at: conversation.created_at,
            updated_at: conversation.updated_at,
            summary: conversation.summary.as_deref(),
        }
    }
}

/// `{conversations}`: the stored conversations, most recent first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConversationsJson<'a> {
    /// The conversations.
    pub conversations: Vec<ConversationJson<'a>>,
}

impl<'a> From<&'a [Conversation]> for ConversationsJson<'a> {
    fn from(conversations: &'a [Conversation]) -> ConversationsJson<'a> {
        ConversationsJson { conversations: conversations.iter().map(ConversationJson::from).collect() }
    }
}

/// A conversation's fields with its `messages`, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConversationWithMessages<'a> {
    /// The conversation's own fields.
    #[serde(flatten)]
    pub conversation: ConversationJson<'a>,
    /// Its messages.
    pub messages: Vec<MessageJson<'a>>,
}

impl<'a> ConversationWithMessages<'a> {
    /// The conversation and its messages.
    pub fn new(conversation: &'a Conversation, messages: &'a [Message]) -> ConversationWithMessages<'a> {
        ConversationWithMessages {
            conversation: ConversationJson::from(conversation),
            messages: messages.iter().map(MessageJson::from).collect(),
        }
    }
}

/// A stored message; the optional fields appear only where they apply.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageJson<'a> {
    /// Its id.
    pub id: &'a str,
    /// The conversation it belongs to.
    pub conversation_id: &'a str,
    /// `user`, `assistant` or `tool`.
    pub role: &'static str,
    /// The text (for a tool message, the JSON result).
    pub content: &'a str,
    /// The tool calls of an assistant message.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallJson<'a>>,
    /// For a tool message, the call it answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<&'a str>,
    /// The entry captured in the turn this answer ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filed_entry_path: Option<&'a str>,
    /// The confidence of that capture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filed_confidence: Option<f64>,
    /// When it was stored.
    pub created_at: DateTime<Utc>,
}

impl<'a> From<&'a Message> for MessageJson<'a> {
    fn from(message: &'a Message) -> MessageJson<'a> {
        MessageJson {
            id: &message.id,
            conversation_id: message.conversation_id.as_str(),
            role: message.role.as_str(),
            content: &message.content,
            tool_calls: message.tool_calls.iter().map(ToolCallJson::from).collect(),
            tool_call_id: message.tool_call_id.as_deref(),
            filed_entry_path: message.filed_entry_path.as_deref(),
            filed_confidence: message.filed_confidence,
            created_at: message.created_at,
        }
    }
}

/// A tool call the model asked for: `{id, name, arguments}` (the arguments as the model
/// wrote them, JSON text).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallJson<'a> {
    /// The model's id for it.
    pub id: &'a str,
    /// The tool.
    pub name: &'a str,
    /// Its arguments, as text.
    pub arguments: &'a str,
}

impl<'a> From<&'a ToolCall> for ToolCallJson<'a> {
    fn from(call: &'a ToolCall) -> ToolCallJson<'a> {
        ToolCallJson { id: &call.id, name: &call.name, arguments: &call.arguments }
    }
}

/// The answer of one chat turn:
/// `{conversationId, message, entry?, toolsUsed, usage}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatAnswer<'a> {
    /// The conversation the turn belongs to.
    pub conversation_id: &'a str,
    /// kb's final message.
    pub message: AnswerMessageJson<'a>,
    /// The entry captured in the turn, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<FiledEntryJson<'a>>,
    /// The tools called, in order.
    pub tools_used: &'a [String],
    /// LLM calls and tokens spent on the turn.
    pub usage: UsageJson,
}

impl<'a> From<&'a ChatResponse> for ChatAnswer<'a> {
    fn from(response: &'a ChatResponse) -> ChatAnswer<'a> {
        ChatAnswer {
            conversation_id: response.conversation_id.as_str(),
            message: AnswerMessageJson::from(&response.message),
            entry: response.entry.as_ref().map(FiledEntryJson::from),
            tools_used: &response.tools_used,
            usage: UsageJson::from(&response.usage),
        }
    }
}

/// kb's final message of a turn: `{id, role, content, filedEntryPath?, filedConfidence?,
/// createdAt}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerMessageJson<'a> {
    /// Its id.
    pub id: &'a str,
    /// Always `assistant`.
    pub role: &'static str,
    /// The text.
    pub content: &'a str,
    /// The entry captured in the turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filed_entry_path: Option<String>,
    /// The confidence of that capture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filed_confidence: Option<f64>,
    /// When it was made.
    pub created_at: DateTime<Utc>,
}

impl<'a> From<&'a AnswerMessage> for AnswerMessageJson<'a> {
    fn from(message: &'a AnswerMessage) -> AnswerMessageJson<'a> {
        AnswerMessageJson {
            id: &message.id,
            role: message.role.as_str(),
            content: &message.content,
            filed_entry_path: message.filed_entry_path.as_ref().map(ToString::to_string),
            filed_confidence: message.filed_confidence,
            created_at: message.created_at,
        }
    }
}

/// The entry a turn captured: `{path, category, name, confidence, clarificationNeeded}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FiledEntryJson<'a> {
    /// Where it was filed.
    pub path: String,
    /// Its folder (`inbox` when kb was unsure).
    pub category: &'static str,
    /// Its name.
    pub name: &'a str,
    /// The classification's confidence.
    pub confidence: f64,
    /// Whether kb asks the person where it belongs.
    pub clarification_needed: bool,
}

impl<'a> From<&'a FiledEntry> for FiledEntryJson<'a> {
    fn from(entry: &'a FiledEntry) -> FiledEntryJson<'a> {
        FiledEntryJson {
            path: entry.path.to_string(),
            category: entry.category.as_str(),
            name: &entry.name,
            confidence: entry.confidence,
            clarification_needed: entry.clarification_needed,
        }
    }
}

/// LLM calls and tokens: `{llmCalls, promptTokens, completionTokens}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageJson {
    /// Calls made.
    pub llm_calls: u32,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
}

impl From<&Usage> for UsageJson {
    fn from(usage: &Usage) -> UsageJson {
        UsageJson {
            llm_calls: usage.llm_calls,
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use kb_core::domain::conversation::SummaryCoverage;
    use kb_core::domain::{ConversationId, PendingCall, Role};
    use serde_json::json;

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 26, 9, 30, 0).single().unwrap_or_default()
    }

    #[test]
    fn a_conversation_shows_its_five_fields_and_none_of_its_bookkeeping() {
        let conversation = Conversation {
            id: ConversationId::new("01J"),
            title: "Shed roof".into(),
            created_at: at(),
            updated_at: at(),
            summary: None,
            summary_covers: Some(SummaryCoverage { messages: 10, last_filed: None }),
            pending: Some(PendingCall {
                tool: "delete_entry".into(),
                arguments: json!({}),
                proposal: "Delete?".into(),
                choices: Vec::new(),
            }),
            person: None,
        };
        assert_eq!(
            serde_json::to_value(ConversationJson::from(&conversation)).unwrap(),
            json!({"id": "01J", "title": "Shed roof", "createdAt": "2026-11-26T09:30:00Z",
                   "updatedAt": "2026-11-26T09:30:00Z", "summary": null})
        );
    }

    #[test]
    fn a_message_names_its_fields_in_camel_case_and_leaves_out_what_does_not_apply() {
        let call = ToolCall { id: "call_1".into(), name: "get_entry".into(), arguments: "{}".into() };
        let asked = Message {
            id: "m1".into(),
            conversation_id: ConversationId::new("01J"),
            role: Role::Assistant,
            content: String::new(),
            tool_calls: vec![call],
            tool_call_id: None,
            filed_entry_path: None,
            filed_confidence: None,
            created_at: at(),
        };
        assert_eq!(
            serde_json::to_value(MessageJson::from(&asked)).unwrap(),
            json!({"id": "m1", "conversationId": "01J", "role": "assistant", "content": "",
                   "toolCalls": [{"id": "call_1", "name": "get_entry", "arguments": "{}"}],
                   "createdAt": "2026-11-26T09:30:00Z"})
        );
        let answered = Message {
            role: Role::Tool,
            tool_calls: Vec::new(),
            tool_call_id: Some("call_1".into()),
            ..asked
        };
        let json = serde_json::to_value(MessageJson::from(&answered)).unwrap();
        assert_eq!(json["role"], "tool");
        assert_eq!(json["toolCallId"], "call_1");
        assert!(json.get("toolCalls").is_none(), "{json}");
    }
}
