//! Language model adapters: [`OpenAiChatModel`], [`OpenAiEmbedder`] and
//! [`OpenAiTranscriber`] on any
//! OpenAI-compatible server, with their settings,
//! request/answer translation, kb's own 429 retry and error mapping.

mod client;
mod convert;
mod embedder;
mod failure;
mod model;
mod pause;
pub mod retry;
mod settings;
mod stream;
mod transcriber;

pub use embedder::{
    DEFAULT_COOLDOWN, DEFAULT_EMBEDDINGS_BATCH, DEFAULT_EMBEDDINGS_TIMEOUT, DEFAULT_QUERY_TIMEOUT,
    EmbeddingSettings, OpenAiEmbedder,
};
pub use model::{OpenAiChatModel, OpenAiSetupError};
pub use retry::{RateLimitExhausted, RetryPolicy};
pub use settings::{
    DEFAULT_BASE_URL, DEFAULT_MAX_RETRY_DELAY, DEFAULT_MAX_TRIES, DEFAULT_MODEL, DEFAULT_RETRY_BASE_DELAY,
    DEFAULT_TIMEOUT, OpenAiSettings, SettingsError,
};
pub use transcriber::{DEFAULT_TRANSCRIBE_TIMEOUT, OpenAiTranscriber, TranscriptionSettings};
