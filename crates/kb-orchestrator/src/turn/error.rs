//! How a chat turn can fail. Tool failures are not here: they go back to the model as data.

use kb_domain::{ConversationId, LlmError, StoreError};

/// The longest chat message accepted, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 32 * 1024;

/// Why a turn could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    /// The message is empty.
    #[error("message is empty")]
    EmptyMessage,
    /// The message is longer than [`MAX_MESSAGE_BYTES`].
    #[error("message is {0} bytes, more than the 32 KiB a chat message may have")]
    MessageTooLong(usize),
    /// The model failed (mapped to 429/502/503/504 by the server).
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// The conversation store failed before the turn could start.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A conversation asked for by id does not exist.
    #[error("conversation not found: {0}")]
    ConversationNotFound(ConversationId),
}
