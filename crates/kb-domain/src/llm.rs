//! Value types of the conversation with a language model: what is sent, what comes back,
//! and the typed ways it can fail.

use chrono::NaiveDate;
use serde_json::Value;

use crate::category::Category;
use crate::cause::SharedCause;
use crate::conversation::ToolCall;

/// How the system note telling the model that a proposal was cancelled starts: the chat
/// turn writes it just before the person's message, and the offline model recognises it.
pub const CANCELLED_PREFIX: &str = "Cancelled:";

/// One message sent to the model.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    /// Instructions.
    System {
        /// The prompt.
        content: String,
    },
    /// The person.
    User {
        /// What they said.
        content: String,
    },
    /// The model, earlier.
    Assistant {
        /// Its text, if any.
        content: Option<String>,
        /// The tool calls it made.
        tool_calls: Vec<ToolCall>,
    },
    /// A tool's answer to one call.
    Tool {
        /// The call answered.
        tool_call_id: String,
        /// The result as JSON text.
        content: String,
    },
}

/// A tool offered to the model, in OpenAI function-calling form.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// The function name.
    pub name: String,
    /// When to use it.
    pub description: String,
    /// The JSON schema of its arguments (`type: object`).
    pub parameters: Value,
}

/// A request for the next step of a conversation.
///
/// Besides the messages, a request carries as data what its prompt tells the model in words
/// (today's date), for models that read data rather than prose (the offline model). A
/// language model reads the prompt and may ignore these fields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    /// The messages, system prompt first.
    pub messages: Vec<ChatMessage>,
    /// The tools the model may call (`tool_choice: auto`).
    pub tools: Vec<ToolDefinition>,
    /// Today's date where the person is, as the prompt states it (relative dates such as
    /// "by Friday" resolve against it); `None` when the prompt states no date.
    pub today: Option<NaiveDate>,
}

/// Tokens spent by one or more calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Calls made.
    pub llm_calls: u32,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
}

impl Usage {
    /// Adds another call's usage.
    pub fn add(&mut self, other: Usage) {
        self.llm_calls += other.llm_calls;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

/// The model's answer: text, tool calls, or both.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatCompletion {
    /// Its text, if any.
    pub content: Option<String>,
    /// The tool calls it asks for, in order.
    pub tool_calls: Vec<ToolCall>,
    /// What it cost.
    pub usage: Usage,
}

/// A request for an answer that follows a JSON schema (a capture's classification).
///
/// Like [`ChatRequest`], it carries as data what its prompt states in words.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StructuredRequest {
    /// The messages, system prompt first.
    pub messages: Vec<ChatMessage>,
    /// A name for the schema (letters, digits, `_`).
    pub schema_name: String,
    /// The JSON schema the answer must follow.
    pub schema: Value,
    /// Today's date where the person is, as the prompt states it; `None` when it states none.
    pub today: Option<NaiveDate>,
    /// The category the person's hint fixed for a capture ("`[project]` …"), as the prompt
    /// states it; `None` when there was no hint.
    pub forced_category: Option<Category>,
}

/// A structured answer.
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredCompletion {
    /// The answer, parsed as JSON (not yet checked against the schema).
    pub value: Value,
    /// What it cost.
    pub usage: Usage,
}

/// How a call to the model failed. The server maps each to the HTTP status in its doc.
/// Where the failure came from an error underneath (the HTTP client's, the JSON parser's),
/// that error is kept as the `source()`, so a log shows the whole chain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// The model could not be reached or answered 5xx (503).
    #[error("the language model is unavailable: {detail}")]
    Unavailable {
        /// What went wrong, in a few words.
        detail: String,
        /// The error underneath, when there is one.
        #[source]
        cause: Option<SharedCause>,
    },
    /// Too many requests, after retries (429).
    #[error("the language model is rate limited{}", retry_after_secs.map(|s| format!(", retry after {s}s")).unwrap_or_default())]
    RateLimited {
        /// Seconds the server asked to wait, when it said.
        retry_after_secs: Option<u64>,
    },
    /// No answer in time (504).
    #[error("the language model did not answer within {0} seconds")]
    Timeout(u64),
    /// An answer that could not be understood (502).
    #[error("the language model gave a malformed answer: {detail}")]
    Malformed {
        /// What was wrong with it.
        detail: String,
        /// The error underneath, when there is one.
        #[source]
        cause: Option<SharedCause>,
    },
    /// The request was refused: bad key, unknown model, bad request (502).
    #[error("the language model refused the request: {detail}")]
    Refused {
        /// Why, as the server said it.
        detail: String,
        /// The error underneath, when there is one.
        #[source]
        cause: Option<SharedCause>,
    },
}

impl LlmError {
    /// The model cannot be reached or failed on its side.
    pub fn unavailable(detail: impl Into<String>) -> LlmError {
        LlmError::Unavailable { detail: detail.into(), cause: None }
    }

    /// The model's answer cannot be understood.
    pub fn malformed(detail: impl Into<String>) -> LlmError {
        LlmError::Malformed { detail: detail.into(), cause: None }
    }

    /// The model's server refused the request.
    pub fn refused(detail: impl Into<String>) -> LlmError {
        LlmError::Refused { detail: detail.into(), cause: None }
    }

    /// The same failure, keeping `error` as its source (no change for the variants without
    /// one: a rate limit or a timeout says all there is).
    pub fn caused_by(self, error: SharedCause) -> LlmError {
        match self {
            LlmError::Unavailable { detail, .. } => LlmError::Unavailable { detail, cause: Some(error) },
            LlmError::Malformed { detail, .. } => LlmError::Malformed { detail, cause: Some(error) },
            LlmError::Refused { detail, .. } => LlmError::Refused { detail, cause: Some(error) },
            other => other,
        }
    }
}
