//! [`LlmDigestWriter`]: a [`DigestWriter`] that asks a [`ChatModel`] to write the gathered
//! facts up as a short, friendly digest under the same headings.

use std::sync::Arc;

use kb_domain::{ChatMessage, ChatModel, ChatRequest};

use super::DigestFacts;
use super::render::render_full;
use crate::ports::{DigestError, DigestWriter, WrittenDigest};

/// Writes digests with a language model.
#[derive(Clone)]
pub struct LlmDigestWriter {
    model: Arc<dyn ChatModel>,
}

impl LlmDigestWriter {
    /// A writer over `model`.
    pub fn new(model: Arc<dyn ChatModel>) -> LlmDigestWriter {
        LlmDigestWriter { model }
    }
}

impl std::fmt::Debug for LlmDigestWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmDigestWriter").field("model", &self.model.describe()).finish()
    }
}

/// The instructions for writing a digest from `facts`.
pub fn digest_prompt(facts: &DigestFacts) -> String {
    let headings: Vec<String> = facts.kind.headings().iter().map(|h| format!("## {h}")).collect();
    format!(
        "You write a {kind} digest for a person's second brain. Use only the facts given; invent nothing. \
         Write markdown under exactly these headings, in this order:\n{headings}\n\
         Keep the whole digest under {limit} words: short bullet points, concrete and friendly. \
         Under a heading with no facts, write one short line saying so.",
        kind = facts.kind.as_str(),
        headings = headings.join("\n"),
        limit = facts.kind.word_limit(),
    )
}

#[async_trait::async_trait]
impl DigestWriter for LlmDigestWriter {
    async fn write(&self, facts: &DigestFacts) -> Result<WrittenDigest, DigestError> {
        let request = ChatRequest {
            messages: vec![
                ChatMessage::System { content: digest_prompt(facts) },
                ChatMessage::User { content: format!("The facts:\n\n{}", render_full(facts)) },
            ],
            tools: Vec::new(),
            today: Some(facts.today),
        };
        let completion = self.model.complete(&request).await?;
        match completion.content.map(|c| c.trim().to_string()) {
            Some(content) if !content.is_empty() => Ok(WrittenDigest { content, usage: completion.usage }),
            _ => Err(DigestError::Empty),
        }
    }
}
