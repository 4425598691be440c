//! The language model port: [`ChatModel`].

use crate::llm::{ChatCompletion, ChatRequest, LlmError, StructuredCompletion, StructuredRequest};

/// A language model with tool calls and structured output.
#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    /// The next step of a conversation with tools.
    async fn complete(&self, request: &ChatRequest) -> Result<ChatCompletion, LlmError>;
    /// [`ChatModel::complete`], passing `on_delta` each piece of the answer's text as it is
    /// written; the pieces joined are the completion's content. The completion is the one
    /// `complete` would give. By default the text is passed in word pieces
    /// ([`crate::turn_events::deltas`]) once the answer is whole; a model that streams
    /// (the OpenAI-compatible adapter) passes them on as they arrive.
    async fn complete_streaming(
        &self,
        request: &ChatRequest,
        on_delta: &(dyn for<'s> Fn(&'s str) + Send + Sync),
    ) -> Result<ChatCompletion, LlmError> {
        let completion = self.complete(request).await?;
        if let Some(content) = &completion.content {
            for piece in crate::turn_events::deltas(content) {
                on_delta(&piece);
            }
        }
        Ok(completion)
    }
    /// An answer following a JSON schema.
    async fn complete_structured(
        &self,
        request: &StructuredRequest,
    ) -> Result<StructuredCompletion, LlmError>;
    /// Which model this is (`offline`, or the model name).
    fn describe(&self) -> String;
}
