//! Language model adapters: [`OpenAiChatModel`] on any OpenAI-compatible server, with its
//! [`OpenAiSettings`], request/answer translation, kb's own 429 retry and error mapping.

mod convert;
mod failure;
mod model;
pub mod retry;
mod settings;
mod stream;

pub use model::{OpenAiChatModel, OpenAiSetupError};
pub use retry::{RateLimitExhausted, RetryPolicy};
pub use settings::{
    DEFAULT_BASE_URL, DEFAULT_MAX_RETRY_DELAY, DEFAULT_MAX_TRIES, DEFAULT_MODEL, DEFAULT_RETRY_BASE_DELAY,
    DEFAULT_TIMEOUT, OpenAiSettings, SettingsError,
};
