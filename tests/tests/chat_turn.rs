#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The chat turn end to end: a real `kb_core::Assistant` (vault, tantivy index,
//! SQLite conversations) over the OpenAI-compatible adapter, talking real HTTP to a scripted
//! fake server. The suites script what the model answers and check what a person would
//! notice: files on disk, the answer, the stored conversation, and what the model was sent.
//!
//! - `tools`: tool selection, plain answers, several calls in order, tool errors, the round cap.
//! - `faults`: LLM faults as typed errors; a failed turn stores nothing.
//! - `earlier_turns`: earlier turns sent back, the sliding window and its summary in batches, a
//!   60-turn conversation's model calls, "actually that's a project", usage accounting.
//! - `props`: a turn that captured stores what the capture filed.
//! - `citations`: a cited path no tool returned is taken out of the answer and the stored
//!   conversation; one an earlier turn's tool returned stands.

#[path = "chat_turn/citations.rs"]
mod citations;
#[path = "chat_turn/earlier_turns.rs"]
mod earlier_turns;
#[path = "chat_turn/faults.rs"]
mod faults;
#[path = "chat_turn/props.rs"]
mod props;
#[path = "chat_turn/tools.rs"]
mod tools;

use std::path::Path;
use std::time::Duration;

use kb_core::{Assistant, Config, ModelChoice};
use kb_domain::{ConversationId, Message};
use kb_llm::openai::OpenAiSettings;
use kb_llm::testing::{FakeOpenAi, FakeReply, RecordedRequest};
use serde_json::Value;

/// A running assistant over a temp vault, wired to a fake model server.
pub struct Kit {
    /// The scripted model.
    pub fake: FakeOpenAi,
    /// kb.
    pub kb: Assistant,
    /// The vault (kept alive while the kit lives).
    pub dir: tempfile::TempDir,
}

/// A kit with every default but a 10 s timeout and short retry waits.
pub async fn kit() -> Kit {
    kit_with(|_, _| {}).await
}

/// A kit whose configuration and model settings `adjust` may change.
pub async fn kit_with(adjust: impl FnOnce(&mut Config, &mut OpenAiSettings)) -> Kit {
    let fake = FakeOpenAi::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut settings = OpenAiSettings {
        base_url: Some(fake.base_url()),
        timeout: Duration::from_secs(10),
        retry_base_delay: Duration::from_millis(20),
        max_retry_delay: Duration::from_secs(1),
        ..OpenAiSettings::new("sk-test", "test-model")
    };
    let mut config = Config::offline(dir.path());
    adjust(&mut config, &mut settings);
    config.model = ModelChoice::OpenAi(settings);
    let kb = Assistant::open(config).await.unwrap();
    Kit { fake, kb, dir }
}

impl Kit {
    /// The stored messages of a conversation.
    pub async fn stored(&self, id: &ConversationId) -> Vec<Message> {
        self.kb.chat().conversation(id).await.unwrap().1
    }

    /// Entry files on disk, as relative paths, sorted.
    pub fn entry_files(&self) -> Vec<String> {
        entry_files(self.dir.path())
    }

    /// The chat requests (those offering tools) the model received, in order.
    pub fn chat_requests(&self) -> Vec<Value> {
        self.fake.requests().iter().map(RecordedRequest::json).filter(is_chat).collect()
    }
}

/// Every `{category}/*.md` file under `root`, relative and sorted.
pub fn entry_files(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for category in ["people", "projects", "ideas", "admin", "inbox"] {
        let Ok(read) = std::fs::read_dir(root.join(category)) else { continue };
        for item in read.flatten() {
            let name = item.file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") {
                files.push(format!("{category}/{name}"));
            }
        }
    }
    files.sort();
    files
}

/// A chat request offers tools.
pub fn is_chat(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|t| !t.is_empty())
}

/// A structured (classification) request asks for a JSON schema answer.
pub fn is_structured(body: &Value) -> bool {
    body.get("response_format").is_some()
}

/// A summary request: no tools, no schema, the summariser's instructions.
pub fn is_summary(body: &Value) -> bool {
    !is_chat(body)
        && !is_structured(body)
        && body["messages"][0]["content"].as_str().is_some_and(|c| c.starts_with("You summarise"))
}

/// The messages of a request body.
pub fn messages(body: &Value) -> Vec<Value> {
    body["messages"].as_array().cloned().unwrap_or_default()
}

/// The `tool` message answering `call_id` in a request body.
pub fn tool_message(body: &Value, call_id: &str) -> Value {
    messages(body)
        .into_iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .unwrap_or_else(|| panic!("no tool message for {call_id} in {body}"))
}

/// A tool message's content parsed as the ToolResult JSON.
pub fn tool_result(body: &Value, call_id: &str) -> Value {
    let content = tool_message(body, call_id)["content"].as_str().unwrap().to_string();
    serde_json::from_str(&content).unwrap()
}

/// One tool call as the model sends it.
pub fn call(id: &str, name: &str, arguments: &Value) -> FakeReply {
    FakeReply::tool_calls(&[(id, name, &arguments.to_string())])
}
