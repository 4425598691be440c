//! The pending call of a chat turn over in-memory ports and a scripted model: a proposal
//! is kept, a confirmation runs it, anything else cancels it and is answered as new; and the
//! date every request of a turn carries.

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use kb_domain::{
    ChatCompletion, ChatMessage, ConversationId, ConversationStore, Entry, EntryPath, LlmError, Role,
    ToolCall,
};
use kb_tools::testing::{MemoryRepository, ScriptedChatModel, ScriptedClassifier, memory_services};
use serde_json::{Value, json};

use super::{Orchestrator, TurnError, TurnSettings};
use crate::testing::MemoryConversations;

const OLD_SITE: &str = "projects/old-site.md";

struct Kit {
    orchestrator: Orchestrator,
    model: Arc<ScriptedChatModel>,
    store: Arc<MemoryConversations>,
    vault: Arc<MemoryRepository>,
}

fn kit() -> Kit {
    let now = Utc.with_ymd_and_hms(2026, 11, 21, 9, 0, 0).single().unwrap_or_default();
    let classifier = Arc::new(ScriptedClassifier::new(Vec::new()));
    let (services, vault) = memory_services(classifier, None, now);
    let path = EntryPath::parse(OLD_SITE).unwrap();
    let text = "---\nid: 01OLD\nname: Old site\nstatus: active\n---\nThe old website.\n";
    vault.insert(Entry::from_document(path, text).unwrap());
    let model = Arc::new(ScriptedChatModel::new());
    let store = Arc::new(MemoryConversations::new());
    let registry = Arc::new(kb_tools::standard_registry().unwrap());
    let orchestrator =
        Orchestrator::new(model.clone(), registry, services, store.clone(), TurnSettings::default());
    Kit { orchestrator, model, store, vault }
}

fn calls(name: &str, arguments: Value) -> Result<ChatCompletion, LlmError> {
    let call = ToolCall { id: "call_1".into(), name: name.into(), arguments: arguments.to_string() };
    Ok(ChatCompletion { tool_calls: vec![call], ..ChatCompletion::default() })
}

impl Kit {
    fn has_old_site(&self) -> bool {
        self.vault.get(&EntryPath::parse(OLD_SITE).unwrap()).is_ok()
    }

    /// "delete the old site": the model calls delete_entry, which only proposes, and asks.
    async fn propose(&self) -> ConversationId {
        self.model.push_completion(calls("delete_entry", json!({"path": OLD_SITE})));
        self.model.push_text("Delete projects/old-site.md? Say yes to delete it.");
        let answer = self.orchestrator.chat(None, "delete the old site").await.unwrap();
        assert_eq!(answer.tools_used, ["delete_entry"]);
        assert!(self.has_old_site(), "a proposal deleted the entry");
        answer.conversation_id
    }

    /// The messages of the last request the model received.
    fn last_request(&self) -> Vec<ChatMessage> {
        self.model.chat_requests().last().map(|r| r.messages.clone()).unwrap_or_default()
    }
}

use kb_domain::{EntryReader as _, EntryWriter as _};

#[tokio::test]
async fn a_proposal_is_kept_pending_and_a_yes_runs_it_as_a_call_of_its_own() {
    let kit = kit();
    let id = kit.propose().await;
    let pending = kit.store.pending(&id).unwrap();
    assert_eq!(pending.tool, "delete_entry");
    assert_eq!(pending.arguments, json!({"path": OLD_SITE}));
    assert_eq!(pending.proposal, "Delete projects/old-site.md?");
    let proposal: Value = serde_json::from_str(&kit.store.messages(&id).await.unwrap()[2].content).unwrap();
    assert_eq!(proposal["data"]["confirmationRequired"], true);

    kit.model.push_text("Deleted projects/old-site.md.");
    let answer = kit.orchestrator.chat(Some(&id), "Yes!").await.unwrap();
    assert_eq!(answer.message.content, "Deleted projects/old-site.md.");
    assert_eq!(answer.tools_used, ["delete_entry"]);
    assert!(!kit.has_old_site());
    assert_eq!(kit.store.pending(&id), None);

    // The model read the confirmed call and its result after the person's yes.
    let sent = kit.last_request();
    let n = sent.len();
    assert!(matches!(&sent[n - 3], ChatMessage::User { content } if content == "Yes!"));
    let ChatMessage::Assistant { tool_calls, .. } = &sent[n - 2] else { panic!("{sent:?}") };
    assert_eq!(tool_calls[0].name, "delete_entry");
    let ChatMessage::Tool { content, tool_call_id } = &sent[n - 1] else { panic!("{sent:?}") };
    assert_eq!(tool_call_id, &tool_calls[0].id);
    let result: Value = serde_json::from_str(content).unwrap();
    assert_eq!(result["data"]["deleted"], true);

    // Stored like any call: yes, the call, its result, the answer.
    let stored = kit.store.messages(&id).await.unwrap();
    let turn = &stored[stored.len() - 4..];
    let roles: Vec<Role> = turn.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Assistant]);
    assert_eq!(turn[1].tool_calls[0].arguments, json!({"path": OLD_SITE}).to_string());
    assert_eq!(turn[2].tool_call_id.as_deref(), Some(tool_calls[0].id.as_str()));
    assert_eq!(turn[3].content, "Deleted projects/old-site.md.");

    // A second yes confirms nothing: it is a message like any other.
    kit.model.push_text("Okay.");
    let again = kit.orchestrator.chat(Some(&id), "yes").await.unwrap();
    assert!(again.tools_used.is_empty());
    assert!(matches!(kit.last_request().last(), Some(ChatMessage::User { content }) if content == "yes"));
}

#[tokio::test]
async fn anything_else_cancels_the_proposal_and_is_answered_as_a_new_message() {
    let kit = kit();
    let id = kit.propose().await;

    kit.model.push_completion(calls("list_entries", json!({"category": "projects"})));
    kit.model.push_text("You have one project: Old site.");
    let answer = kit.orchestrator.chat(Some(&id), "what projects do I have?").await.unwrap();
    assert_eq!(answer.tools_used, ["list_entries"]);
    assert!(kit.has_old_site());
    assert_eq!(kit.store.pending(&id), None);

    // The model was told, just before the message, that the proposal was dropped.
    let first_request = &kit.model.chat_requests()[2].messages;
    let n = first_request.len();
    assert!(
        matches!(&first_request[n - 2], ChatMessage::System { content }
            if content.starts_with(super::confirm::CANCELLED_PREFIX) && content.contains("Delete projects/old-site.md?")),
        "{first_request:?}"
    );
    assert!(
        matches!(&first_request[n - 1], ChatMessage::User { content } if content == "what projects do I have?")
    );
    // The note is not stored: the conversation holds only what was said and done.
    let stored = kit.store.messages(&id).await.unwrap();
    assert!(stored.iter().all(|m| !m.content.starts_with(super::confirm::CANCELLED_PREFIX)));

    // And a yes after that confirms nothing.
    kit.model.push_text("Yes to what?");
    let later = kit.orchestrator.chat(Some(&id), "yes").await.unwrap();
    assert!(later.tools_used.is_empty());
    assert!(kit.has_old_site());
}

#[tokio::test]
async fn a_no_cancels_too() {
    let kit = kit();
    let id = kit.propose().await;
    kit.model.push_text("Okay, I kept it.");
    let answer = kit.orchestrator.chat(Some(&id), "no").await.unwrap();
    assert_eq!(answer.message.content, "Okay, I kept it.");
    assert!(answer.tools_used.is_empty());
    assert!(kit.has_old_site());
    assert_eq!(kit.store.pending(&id), None);
}

#[tokio::test]
async fn a_turn_whose_model_fails_after_only_a_proposal_fails_and_keeps_nothing_pending() {
    let kit = kit();
    let conversation = kit.store.create("earlier").await.unwrap();
    kit.model.push_completion(calls("delete_entry", json!({"path": OLD_SITE})));
    kit.model.push_completion(Err(LlmError::unavailable("down")));
    let result = kit.orchestrator.chat(Some(&conversation.id), "delete the old site").await;
    assert!(matches!(result, Err(TurnError::Llm(LlmError::Unavailable { .. }))), "{result:?}");
    assert!(kit.has_old_site());
    assert_eq!(kit.store.pending(&conversation.id), None);
    assert!(kit.store.messages(&conversation.id).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_model_failure_after_the_confirmed_call_keeps_the_turn() {
    let kit = kit();
    let id = kit.propose().await;
    kit.model.push_completion(Err(LlmError::Timeout(30)));
    let answer = kit.orchestrator.chat(Some(&id), "do it").await.unwrap();
    assert!(answer.message.content.starts_with("I did part of that (delete_entry)"), "{answer:?}");
    assert!(!kit.has_old_site());
    let stored = kit.store.messages(&id).await.unwrap();
    assert_eq!(stored.last().map(|m| m.content.as_str()), Some(answer.message.content.as_str()));
}

#[tokio::test]
async fn a_confirmed_call_that_fails_is_reported_to_the_model() {
    let kit = kit();
    let id = kit.propose().await;
    // Someone else deleted the entry in the meantime.
    kit.vault.delete(&EntryPath::parse(OLD_SITE).unwrap()).unwrap();
    kit.model.push_text("It was already gone.");
    let answer = kit.orchestrator.chat(Some(&id), "go ahead").await.unwrap();
    assert_eq!(answer.tools_used, ["delete_entry"]);
    let ChatMessage::Tool { content, .. } = kit.last_request().last().cloned().unwrap() else { panic!() };
    let result: Value = serde_json::from_str(&content).unwrap();
    assert_eq!(result["success"], false);
    assert!(result["error"].as_str().unwrap().contains("not found"), "{result}");
}

#[tokio::test]
async fn a_pending_call_another_turn_took_is_not_run_twice() {
    let kit = kit();
    let id = kit.propose().await;
    // Another kb process answered first and took it.
    assert!(kit.store.take_pending(&id).await.unwrap().is_some());
    kit.store.append_turn_with_pending(&id, Vec::new(), None).await.unwrap();
    kit.model.push_text("Yes to what?");
    let answer = kit.orchestrator.chat(Some(&id), "yes").await.unwrap();
    assert!(answer.tools_used.is_empty());
    assert!(kit.has_old_site());
}

#[tokio::test]
async fn every_request_of_a_turn_carries_the_date_its_prompt_states() {
    let kit = kit();
    kit.propose().await;
    let requests = kit.model.chat_requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.today, chrono::NaiveDate::from_ymd_opt(2026, 11, 21));
        assert!(format!("{:?}", request.messages[0]).contains("Saturday 2026-11-21"));
    }
}
