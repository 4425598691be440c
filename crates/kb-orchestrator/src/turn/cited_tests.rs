//! A turn's answer keeps the citations of paths its conversation's tools returned and
//! loses the others, in what it answers, stores and sends, over in-memory ports and a
//! scripted model.

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use kb_domain::turn_events::TurnEvent;
use kb_domain::{ChatCompletion, ConversationStore, Entry, EntryPath, LlmError, NewMessage, Role, ToolCall};
use kb_tools::testing::{ScriptedChatModel, ScriptedClassifier, memory_services};
use serde_json::json;

use super::cited::{SeenPaths, check};
use super::{Orchestrator, TurnSettings};
use crate::testing::MemoryConversations;

const SITE: &str = "projects/old-site.md";
const KILN: &str = "ideas/kiln.md";

fn kit() -> (Orchestrator, Arc<ScriptedChatModel>, Arc<MemoryConversations>) {
    let now = Utc.with_ymd_and_hms(2026, 11, 21, 9, 0, 0).single().unwrap_or_default();
    let (services, vault) = memory_services(Arc::new(ScriptedClassifier::new(Vec::new())), None, now);
    for (path, text) in [
        (SITE, "---\nname: Old site\n---\nThe old website.\n"),
        (KILN, "---\nname: Kiln\n---\nA wood-fired kiln.\n"),
    ] {
        vault.insert(Entry::from_document(EntryPath::parse(path).unwrap(), text).unwrap());
    }
    let model = Arc::new(ScriptedChatModel::new());
    let store = Arc::new(MemoryConversations::new());
    let registry = Arc::new(kb_tools::standard_registry().unwrap());
    let orchestrator =
        Orchestrator::new(model.clone(), registry, services, store.clone(), TurnSettings::default());
    (orchestrator, model, store)
}

fn get_entry(path: &str) -> Result<ChatCompletion, LlmError> {
    let arguments = json!({ "path": path }).to_string();
    let call = ToolCall { id: "call_1".into(), name: "get_entry".into(), arguments };
    Ok(ChatCompletion { tool_calls: vec![call], ..ChatCompletion::default() })
}

#[tokio::test]
async fn a_citation_of_a_path_no_tool_returned_is_taken_out_of_what_is_answered_stored_and_sent() {
    let (orchestrator, model, store) = kit();
    model.push_completion(get_entry(SITE));
    // The kiln is in the vault overview, but no tool returned it.
    let raw = format!("It was the old website [{SITE}:4] [{KILN}:4], built in 2019 [people/made-up.md:2].");
    model.push_text(&raw);
    let (sender, mut events) = tokio::sync::mpsc::unbounded_channel();
    let answer = orchestrator.chat_with_events(None, "what was the old site?", Some(sender)).await.unwrap();
    let checked = format!("It was the old website [{SITE}:4], built in 2019.");
    assert_eq!(answer.message.content, checked);
    assert_eq!(answer.dropped_citations, [KILN, "people/made-up.md"]);
    let stored = store.messages(&answer.conversation_id).await.unwrap();
    let last = stored.last().unwrap();
    assert_eq!((last.role, last.content.as_str()), (Role::Assistant, checked.as_str()));
    // The deltas were the model's text as it wrote it; the answer replaces them.
    let mut told = String::new();
    while let Ok(event) = events.try_recv() {
        if let TurnEvent::MessageDelta { text } = event {
            told.push_str(&text);
        }
    }
    assert_eq!(told, raw);

    // A later turn may cite what an earlier turn's tool returned.
    model.push_text(&format!("Yes, the old website [{SITE}:4-5] [{KILN}:1]."));
    let later = orchestrator.chat(Some(&answer.conversation_id), "and again?").await.unwrap();
    assert_eq!(later.message.content, format!("Yes, the old website [{SITE}:4-5]."));
    assert_eq!(later.dropped_citations, [KILN]);
}

#[tokio::test]
async fn an_answer_without_unseen_citations_is_kept_as_written() {
    let (orchestrator, model, _) = kit();
    let text = "Nothing cited here [not a citation] at [10:30], and [a.md] is text.";
    model.push_text(text);
    let answer = orchestrator.chat(None, "hello").await.unwrap();
    assert_eq!(answer.message.content, text);
    assert!(answer.dropped_citations.is_empty());
}

#[tokio::test]
async fn the_conversations_older_results_are_read_when_a_citation_is_not_among_the_recent_ones() {
    let store = MemoryConversations::new();
    let conversation = store.create("old").await.unwrap();
    let result = json!({"success": true, "data": {"path": SITE}}).to_string();
    store
        .append_turn(&conversation.id, vec![NewMessage::user("q"), NewMessage::tool_result("call_1", result)])
        .await
        .unwrap();
    let mut seen = SeenPaths::default();
    let checked =
        check(&format!("See [{SITE}:1] and [{KILN}:1]."), &mut seen, &store, &conversation.id).await;
    assert_eq!(checked.text, format!("See [{SITE}:1] and."));
    assert_eq!(checked.dropped, [KILN]);
    assert!(seen.contains(SITE));
}
