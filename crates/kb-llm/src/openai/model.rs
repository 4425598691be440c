//! [`OpenAiChatModel`]: kb's [`ChatModel`] on any OpenAI-compatible chat-completions server
//! (OpenAI, Ollama, vLLM, llama.cpp, LM Studio), through async-openai.
//!
//! Each call is bounded by [`OpenAiSettings::timeout`] (retries included); the HTTP client
//! has the same timeout and a shorter connect timeout. Rate limits are retried by
//! [`crate::openai::retry`], which replaces async-openai's own retry. Spans carry the model,
//! the duration and the tokens, never the key nor what was said.

use std::time::Instant;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::types::chat::{
    ChatCompletionStreamOptions, CreateChatCompletionRequest, CreateChatCompletionResponse,
};
use async_trait::async_trait;
use kb_domain::{
    ChatCompletion, ChatModel, ChatRequest, LlmError, StructuredCompletion, StructuredRequest, Usage,
};
use tokio_stream::StreamExt;
use tracing::Instrument;

use crate::openai::convert;
use crate::openai::failure::llm_error;
use crate::openai::retry::RetryPolicy;
use crate::openai::settings::{OpenAiSettings, SettingsError};
use crate::openai::stream::Assembly;

/// The language model behind an OpenAI-compatible HTTP API.
pub struct OpenAiChatModel {
    client: Client<OpenAIConfig>,
    settings: OpenAiSettings,
}

impl std::fmt::Debug for OpenAiChatModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiChatModel").field("settings", &self.settings).finish_non_exhaustive()
    }
}

/// Why an [`OpenAiChatModel`] could not be built.
#[derive(Debug, thiserror::Error)]
pub enum OpenAiSetupError {
    /// A setting is unusable.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The HTTP client could not be built (TLS set-up).
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(String),
}

impl OpenAiChatModel {
    /// A model with these settings (checked first).
    pub fn new(settings: OpenAiSettings) -> Result<OpenAiChatModel, OpenAiSetupError> {
        settings.validate()?;
        let policy = RetryPolicy {
            max_tries: settings.max_tries,
            base_delay: settings.retry_base_delay,
            max_delay: settings.max_retry_delay,
            budget: settings.timeout,
        };
        let client = crate::openai::client::client(&settings.api_key, &settings.api_base(), policy)?;
        Ok(OpenAiChatModel { client, settings })
    }

    /// The settings in use.
    pub fn settings(&self) -> &OpenAiSettings {
        &self.settings
    }

    /// Sends one request, bounded by the timeout, and records duration and tokens.
    async fn send(
        &self,
        request: CreateChatCompletionRequest,
    ) -> Result<CreateChatCompletionResponse, LlmError> {
        let started = Instant::now();
        let timeout_secs = self.settings.timeout_secs();
        let outcome = tokio::time::timeout(self.settings.timeout, self.client.chat().create(request)).await;
        let span = tracing::Span::current();
        span.record("duration_ms", started.elapsed().as_millis() as u64);
        match outcome {
            Err(_elapsed) => {
                tracing::warn!(timeout_secs, "the language model did not answer in time");
                Err(LlmError::Timeout(timeout_secs))
            }
            Ok(Err(error)) => {
                let error = llm_error(error, timeout_secs);
                tracing::warn!(%error, "language model call failed");
                Err(error)
            }
            Ok(Ok(response)) => Ok(response),
        }
    }
}

impl OpenAiChatModel {
    /// Sends one streamed request and reads its chunks to the end, the whole bounded by the
    /// timeout. A 429 is retried (by the HTTP service) only before the first chunk: once
    /// the stream has begun, a failure fails the call.
    async fn send_streaming(
        &self,
        request: CreateChatCompletionRequest,
        on_delta: &(dyn for<'s> Fn(&'s str) + Send + Sync),
    ) -> Result<ChatCompletion, LlmError> {
        let started = Instant::now();
        let timeout_secs = self.settings.timeout_secs();
        let read = async {
            let mut chunks = self.client.chat().create_stream(request).await?;
            let mut assembly = Assembly::default();
            while let Some(chunk) = chunks.next().await {
                assembly.push(chunk?, on_delta);
            }
            Ok::<_, async_openai::error::OpenAIError>(assembly)
        };
        let outcome = tokio::time::timeout(self.settings.timeout, read).await;
        tracing::Span::current().record("duration_ms", started.elapsed().as_millis() as u64);
        match outcome {
            Err(_elapsed) => {
                tracing::warn!(timeout_secs, "the language model did not finish its answer in time");
                Err(LlmError::Timeout(timeout_secs))
            }
            Ok(Err(error)) => {
                let error = llm_error(error, timeout_secs);
                tracing::warn!(%error, "streamed language model call failed");
                Err(error)
            }
            Ok(Ok(assembly)) => assembly.finish().inspect_err(|error| {
                tracing::warn!(%error, "streamed language model answer unusable");
            }),
        }
    }
}

fn record_usage(usage: Usage) {
    let span = tracing::Span::current();
    span.record("prompt_tokens", usage.prompt_tokens);
    span.record("completion_tokens", usage.completion_tokens);
    tracing::info!(
        prompt_tokens = usage.prompt_tokens,
        completion_tokens = usage.completion_tokens,
        "language model answered"
    );
}

#[async_trait]
impl ChatModel for OpenAiChatModel {
    async fn complete(&self, request: &ChatRequest) -> Result<ChatCompletion, LlmError> {
        let span = tracing::info_span!(
            "llm.complete",
            model = %self.settings.model,
            messages = request.messages.len(),
            tools = request.tools.len(),
            duration_ms = tracing::field::Empty,
            prompt_tokens = tracing::field::Empty,
            completion_tokens = tracing::field::Empty,
        );
        async {
            let response = self.send(convert::chat_request(&self.settings.model, request)).await?;
            let completion = convert::chat_completion(response)?;
            tracing::debug!(
                tool_calls = completion.tool_calls.len(),
                text = completion.content.is_some(),
                "answer"
            );
            record_usage(completion.usage);
            Ok(completion)
        }
        .instrument(span)
        .await
    }

    async fn complete_structured(
        &self,
        request: &StructuredRequest,
    ) -> Result<StructuredCompletion, LlmError> {
        let span = tracing::info_span!(
            "llm.complete_structured",
            model = %self.settings.model,
            schema = %request.schema_name,
            messages = request.messages.len(),
            duration_ms = tracing::field::Empty,
            prompt_tokens = tracing::field::Empty,
            completion_tokens = tracing::field::Empty,
        );
        async {
            let response = self.send(convert::structured_request(&self.settings.model, request)).await?;
            let completion = convert::structured_completion(response)?;
            record_usage(completion.usage);
            Ok(completion)
        }
        .instrument(span)
        .await
    }

    async fn complete_streaming(
        &self,
        request: &ChatRequest,
        on_delta: &(dyn for<'s> Fn(&'s str) + Send + Sync),
    ) -> Result<ChatCompletion, LlmError> {
        let span = tracing::info_span!(
            "llm.complete_streaming",
            model = %self.settings.model,
            messages = request.messages.len(),
            tools = request.tools.len(),
            duration_ms = tracing::field::Empty,
            prompt_tokens = tracing::field::Empty,
            completion_tokens = tracing::field::Empty,
        );
        async {
            let mut wire = convert::chat_request(&self.settings.model, request);
            wire.stream = Some(true);
            wire.stream_options =
                Some(ChatCompletionStreamOptions { include_usage: Some(true), include_obfuscation: None });
            let completion = self.send_streaming(wire, on_delta).await?;
            tracing::debug!(
                tool_calls = completion.tool_calls.len(),
                text = completion.content.is_some(),
                "streamed answer"
            );
            record_usage(completion.usage);
            Ok(completion)
        }
        .instrument(span)
        .await
    }

    fn describe(&self) -> String {
        self.settings.model.clone()
    }
}
