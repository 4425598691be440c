//! [`MemoryConversations`]: the conversation store port kept in memory, for tests of the
//! chat turn that need no database.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use chrono::Utc;
use kb_domain::conversation::SummaryCoverage;
use kb_domain::{
    Conversation, ConversationId, ConversationStore, Message, NewMessage, PendingCall, StoreError,
};

/// One conversation and its messages.
#[derive(Debug, Clone)]
struct Stored {
    conversation: Conversation,
    messages: Vec<Message>,
}

/// Conversations in memory, with the same contract as the SQLite store.
#[derive(Debug, Default)]
pub struct MemoryConversations {
    conversations: Mutex<BTreeMap<ConversationId, Stored>>,
}

impl MemoryConversations {
    /// An empty store.
    pub fn new() -> MemoryConversations {
        MemoryConversations::default()
    }

    /// The call a conversation keeps waiting for the person's yes, without taking it.
    pub fn pending(&self, id: &ConversationId) -> Option<PendingCall> {
        self.lock().get(id).and_then(|s| s.conversation.pending.clone())
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<ConversationId, Stored>> {
        kb_domain::sync::lock(&self.conversations)
    }

    fn with<T>(&self, id: &ConversationId, f: impl FnOnce(&mut Stored) -> T) -> Result<T, StoreError> {
        self.lock().get_mut(id).map(f).ok_or_else(|| StoreError::NotFound(id.clone()))
    }
}

#[async_trait::async_trait]
impl ConversationStore for MemoryConversations {
    async fn create_for(&self, title: &str, person: Option<&str>) -> Result<Conversation, StoreError> {
        let now = Utc::now();
        let conversation = Conversation {
            id: ConversationId::generate(),
            title: title.to_string(),
            created_at: now,
            updated_at: now,
            summary: None,
            summary_covers: None,
            pending: None,
            person: person.map(str::to_string),
        };
        let stored = Stored { conversation: conversation.clone(), messages: Vec::new() };
        self.lock().insert(conversation.id.clone(), stored);
        Ok(conversation)
    }

    async fn get(&self, id: &ConversationId) -> Result<Option<Conversation>, StoreError> {
        Ok(self.lock().get(id).map(|s| s.conversation.clone()))
    }

    async fn list(&self) -> Result<Vec<Conversation>, StoreError> {
        let mut all: Vec<Conversation> = self.lock().values().map(|s| s.conversation.clone()).collect();
        all.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| b.id.cmp(&a.id)));
        Ok(all)
    }

    async fn rename(&self, id: &ConversationId, title: &str) -> Result<(), StoreError> {
        self.with(id, |s| {
            s.conversation.title = title.to_string();
            s.conversation.updated_at = Utc::now();
        })
    }

    async fn delete(&self, id: &ConversationId) -> Result<(), StoreError> {
        self.lock().remove(id).map(drop).ok_or_else(|| StoreError::NotFound(id.clone()))
    }

    async fn set_summary(
        &self,
        id: &ConversationId,
        summary: &str,
        covers: &SummaryCoverage,
    ) -> Result<(), StoreError> {
        self.with(id, |s| {
            s.conversation.summary = Some(summary.to_string());
            s.conversation.summary_covers = Some(covers.clone());
        })
    }

    async fn messages(&self, id: &ConversationId) -> Result<Vec<Message>, StoreError> {
        self.with(id, |s| s.messages.clone())
    }

    async fn messages_after(&self, id: &ConversationId, skip: u64) -> Result<Vec<Message>, StoreError> {
        let skip = usize::try_from(skip).unwrap_or(usize::MAX);
        self.with(id, |s| s.messages.iter().skip(skip).cloned().collect())
    }

    async fn recent_messages(&self, id: &ConversationId, limit: usize) -> Result<Vec<Message>, StoreError> {
        self.with(id, |s| s.messages[s.messages.len().saturating_sub(limit)..].to_vec())
    }

    async fn append_turn(
        &self,
        id: &ConversationId,
        messages: Vec<NewMessage>,
    ) -> Result<Vec<Message>, StoreError> {
        self.with(id, |s| append(s, messages))
    }

    async fn append_turn_with_pending(
        &self,
        id: &ConversationId,
        messages: Vec<NewMessage>,
        pending: Option<&PendingCall>,
    ) -> Result<Vec<Message>, StoreError> {
        self.with(id, |s| {
            s.conversation.pending = pending.cloned();
            append(s, messages)
        })
    }

    async fn take_pending(&self, id: &ConversationId) -> Result<Option<PendingCall>, StoreError> {
        self.with(id, |s| s.conversation.pending.take())
    }
}

/// Appends a turn's messages and moves `updated_at`.
fn append(stored: &mut Stored, messages: Vec<NewMessage>) -> Vec<Message> {
    let at = Utc::now();
    stored.conversation.updated_at = at;
    let added: Vec<Message> = messages
        .into_iter()
        .map(|new| Message {
            id: ConversationId::generate().to_string(),
            conversation_id: stored.conversation.id.clone(),
            role: new.role(),
            content: new.content,
            tool_calls: new.tool_calls,
            tool_call_id: new.tool_call_id,
            filed_entry_path: new.filed_entry_path,
            filed_confidence: new.filed_confidence,
            created_at: at,
        })
        .collect();
    stored.messages.extend(added.iter().cloned());
    added
}
