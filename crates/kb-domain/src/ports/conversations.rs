//! The conversation storage port: [`ConversationStore`] and its errors.

use crate::cause::Cause;
use crate::conversation::{Conversation, ConversationId, Message, NewMessage, PendingCall, SummaryCoverage};

/// Errors of a [`ConversationStore`], and of kb's other stores on SQLite (accounts,
/// Idempotency-Keys, outreach, vectors).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No conversation with that id.
    #[error("conversation not found: {0}")]
    NotFound(ConversationId),
    /// The database failed: `message` says what kb was doing, its source why it failed.
    #[error("{message}")]
    Database {
        /// What failed, in words.
        message: String,
        /// The error underneath, when there is one.
        #[source]
        source: Option<Cause>,
    },
}

impl StoreError {
    /// The database failed doing `message`, because of `source`.
    pub fn database(message: impl Into<String>, source: impl Into<Cause>) -> StoreError {
        StoreError::Database { message: message.into(), source: Some(source.into()) }
    }

    /// The database failed as `message` says, with no error underneath to keep.
    pub fn database_message(message: impl Into<String>) -> StoreError {
        StoreError::Database { message: message.into(), source: None }
    }
}

/// Where conversations persist.
#[async_trait::async_trait]
pub trait ConversationStore: Send + Sync {
    /// Starts a conversation of the local owner.
    async fn create(&self, title: &str) -> Result<Conversation, StoreError> {
        self.create_for(title, None).await
    }
    /// Starts a conversation of `person` (`None`: the local owner).
    async fn create_for(&self, title: &str, person: Option<&str>) -> Result<Conversation, StoreError>;
    /// A conversation, if it exists.
    async fn get(&self, id: &ConversationId) -> Result<Option<Conversation>, StoreError>;
    /// All conversations, most recently updated first.
    async fn list(&self) -> Result<Vec<Conversation>, StoreError>;
    /// Renames a conversation.
    async fn rename(&self, id: &ConversationId, title: &str) -> Result<(), StoreError>;
    /// Deletes a conversation and its messages.
    async fn delete(&self, id: &ConversationId) -> Result<(), StoreError>;
    /// Stores the summary of turns older than the context window, with what it covers.
    async fn set_summary(
        &self,
        id: &ConversationId,
        summary: &str,
        covers: &SummaryCoverage,
    ) -> Result<(), StoreError>;
    /// Every message, oldest first.
    async fn messages(&self, id: &ConversationId) -> Result<Vec<Message>, StoreError>;
    /// The messages after the first `skip`, oldest first (reads only those).
    async fn messages_after(&self, id: &ConversationId, skip: u64) -> Result<Vec<Message>, StoreError>;
    /// The last `limit` messages, oldest first.
    async fn recent_messages(&self, id: &ConversationId, limit: usize) -> Result<Vec<Message>, StoreError>;
    /// Appends the messages of one turn in one transaction (the pending call stays as it is).
    async fn append_turn(
        &self,
        id: &ConversationId,
        messages: Vec<NewMessage>,
    ) -> Result<Vec<Message>, StoreError>;
    /// Appends the messages of one turn and sets the conversation's pending call to
    /// `pending` (`None` clears it), in one transaction.
    async fn append_turn_with_pending(
        &self,
        id: &ConversationId,
        messages: Vec<NewMessage>,
        pending: Option<&PendingCall>,
    ) -> Result<Vec<Message>, StoreError>;
    /// Takes the conversation's pending call away: answers it and clears it, atomically, so
    /// that of several turns (or kb processes) racing for it at most one gets it.
    async fn take_pending(&self, id: &ConversationId) -> Result<Option<PendingCall>, StoreError>;
}
