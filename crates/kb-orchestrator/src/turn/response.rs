//! What a chat turn answers, in the JSON shape of `POST /api/chat`.

use chrono::{DateTime, Utc};
use kb_domain::{Category, ConversationId, EntryPath, Role, Usage};
use serde::{Serialize, Serializer};

/// The answer of one chat turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatResponse {
    /// The conversation the turn belongs to (new when none was given).
    pub conversation_id: ConversationId,
    /// kb's final message.
    pub message: AnswerMessage,
    /// The entry captured in this turn, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<FiledEntry>,
    /// The tools called, in order.
    pub tools_used: Vec<String>,
    /// LLM calls and tokens spent on the turn.
    #[serde(serialize_with = "usage")]
    pub usage: Usage,
}

/// LLM calls and tokens as `/api/chat` writes them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UsageJson {
    /// Calls made.
    llm_calls: u32,
    /// Prompt tokens.
    prompt_tokens: u64,
    /// Completion tokens.
    completion_tokens: u64,
}

/// Writes a [`Usage`] as `{llmCalls, promptTokens, completionTokens}`.
fn usage<S: Serializer>(usage: &Usage, serializer: S) -> Result<S::Ok, S::Error> {
    let json = UsageJson {
        llm_calls: usage.llm_calls,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
    };
    json.serialize(serializer)
}

/// kb's final message of a turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerMessage {
    /// Its id.
    pub id: String,
    /// Always `assistant`.
    pub role: Role,
    /// The text.
    pub content: String,
    /// The entry captured in the turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filed_entry_path: Option<EntryPath>,
    /// The confidence of that capture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filed_confidence: Option<f64>,
    /// When it was made.
    pub created_at: DateTime<Utc>,
}

/// The entry a turn captured.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FiledEntry {
    /// Where it was filed.
    pub path: EntryPath,
    /// Its category (`inbox` when kb was unsure).
    #[serde(serialize_with = "kb_tools::output::category")]
    pub category: Category,
    /// Its name.
    pub name: String,
    /// The classification's confidence.
    pub confidence: f64,
    /// Whether kb asks the person where it belongs.
    pub clarification_needed: bool,
}
