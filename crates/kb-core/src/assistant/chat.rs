//! [`Chat`]: an [`Assistant`]'s conversations — a chat turn, and the conversations kept
//! with their messages.

use kb_domain::turn_events::TurnEvent;
use kb_domain::{Conversation, ConversationId, ConversationStore, Message, StoreError};
use kb_orchestrator::turn::{ChatResponse, TurnError};

use super::Assistant;

/// Chat turns and the conversations they are kept in (see [`Assistant::chat`]).
#[derive(Debug, Clone)]
pub struct Chat<'a> {
    kb: &'a Assistant,
    /// Whose conversations these are: a person sees and continues only their own.
    actor: kb_domain::Actor,
}

impl<'a> Chat<'a> {
    pub(super) fn new(kb: &'a Assistant) -> Chat<'a> {
        Chat { kb, actor: kb_domain::Actor::local() }
    }

    /// The same, for `actor`: only their conversations, their turns naming them, and a
    /// reader's turn offering the model only the tools that read.
    pub fn as_actor(self, actor: &kb_domain::Actor) -> Chat<'a> {
        Chat { actor: actor.clone(), ..self }
    }

    /// The conversation `id`, when it is the actor's to see.
    async fn seen(&self, id: &ConversationId) -> Result<Conversation, StoreError> {
        match self.kb.store.get(id).await? {
            Some(conversation) if self.actor.sees(conversation.person.as_deref()) => Ok(conversation),
            _ => Err(StoreError::NotFound(id.clone())),
        }
    }

    /// One chat turn: the answer to `message` in `conversation` (a new one when `None`).
    pub async fn send(
        self,
        conversation: Option<&ConversationId>,
        message: &str,
    ) -> Result<ChatResponse, TurnError> {
        self.kb.orchestrator.chat_as(&self.actor, conversation, message, None).await
    }

    /// One chat turn, sending `events` of what happens while it runs (the turn began, each
    /// tool call, the answer in pieces); the answer is also returned whole. Events nobody
    /// receives any more (the receiver gone) are dropped; the turn goes on.
    pub async fn send_with_events(
        self,
        conversation: Option<&ConversationId>,
        message: &str,
        events: tokio::sync::mpsc::UnboundedSender<TurnEvent>,
    ) -> Result<ChatResponse, TurnError> {
        self.kb.orchestrator.chat_as(&self.actor, conversation, message, Some(events)).await
    }

    /// Every conversation, most recent first.
    pub async fn conversations(self) -> Result<Vec<Conversation>, StoreError> {
        let all = self.kb.store.list().await?;
        Ok(all.into_iter().filter(|c| self.actor.sees(c.person.as_deref())).collect())
    }

    /// A conversation with its messages.
    pub async fn conversation(self, id: &ConversationId) -> Result<(Conversation, Vec<Message>), StoreError> {
        let conversation = self.seen(id).await?;
        let messages = self.kb.store.messages(id).await?;
        Ok((conversation, messages))
    }

    /// Renames a conversation.
    pub async fn rename(self, id: &ConversationId, title: &str) -> Result<(), StoreError> {
        self.seen(id).await?;
        self.kb.store.rename(id, title).await
    }

    /// Deletes a conversation and its messages.
    pub async fn delete(self, id: &ConversationId) -> Result<(), StoreError> {
        self.seen(id).await?;
        self.kb.store.delete(id).await
    }
}
