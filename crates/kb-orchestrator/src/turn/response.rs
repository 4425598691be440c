//! What a chat turn answers (kb-server writes it as the JSON of `POST /api/chat`).

use chrono::{DateTime, Utc};
use kb_domain::{Category, ConversationId, EntryPath, Role, Usage};

/// The answer of one chat turn.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// The conversation the turn belongs to (new when none was given).
    pub conversation_id: ConversationId,
    /// kb's final message.
    pub message: AnswerMessage,
    /// The entry captured in this turn, if any.
    pub entry: Option<FiledEntry>,
    /// The tools called, in order.
    pub tools_used: Vec<String>,
    /// The paths of the citations taken out of the answer, in order: no tool result of the
    /// conversation named them. The answer streamed in deltas still held them.
    pub dropped_citations: Vec<String>,
    /// LLM calls and tokens spent on the turn.
    pub usage: Usage,
}

/// kb's final message of a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerMessage {
    /// Its id.
    pub id: String,
    /// Always `assistant`.
    pub role: Role,
    /// The text.
    pub content: String,
    /// The entry captured in the turn.
    pub filed_entry_path: Option<EntryPath>,
    /// The confidence of that capture.
    pub filed_confidence: Option<f64>,
    /// When it was made.
    pub created_at: DateTime<Utc>,
}

/// The entry a turn captured.
#[derive(Debug, Clone, PartialEq)]
pub struct FiledEntry {
    /// Where it was filed.
    pub path: EntryPath,
    /// Its category (`inbox` when kb was unsure).
    pub category: Category,
    /// Its name.
    pub name: String,
    /// The classification's confidence.
    pub confidence: f64,
    /// Whether kb asks the person where it belongs.
    pub clarification_needed: bool,
}
