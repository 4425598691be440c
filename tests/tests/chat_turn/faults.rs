//! LLM faults come out of a turn as typed errors (the server maps them to 429/502/503/504),
//! and a failed turn stores nothing of itself.

use std::time::Duration;

use kb_domain::LlmError;
use kb_llm::testing::FakeReply;
use kb_orchestrator::turn::TurnError;
use serde_json::json;

use super::{Kit, call, kit, kit_with};

/// Every conversation holds only messages of turns that finished.
async fn nothing_half_stored(k: &Kit) {
    for conversation in k.kb.chat().conversations().await.unwrap() {
        let stored = k.stored(&conversation.id).await;
        assert!(!stored.is_empty(), "an empty conversation was left behind: {conversation:?}");
        assert_eq!(stored.last().unwrap().role, kb_domain::Role::Assistant);
    }
}

#[tokio::test]
async fn a_429_is_retried_and_the_turn_succeeds() {
    let k = kit().await;
    k.fake.push(FakeReply::rate_limited(None));
    k.fake.push(FakeReply::text("Here I am."));

    let response = k.kb.chat().send(None, "hello?").await.unwrap();

    assert_eq!(response.message.content, "Here I am.");
    assert_eq!(k.fake.requests().len(), 2);
    assert_eq!(response.usage.llm_calls, 1, "a retried call is one call");
}

#[tokio::test]
async fn a_persistent_429_is_rate_limited() {
    let k = kit().await;
    for _ in 0..3 {
        k.fake.push(FakeReply::rate_limited(None));
    }

    let error = k.kb.chat().send(None, "hello?").await.unwrap_err();

    assert!(matches!(error, TurnError::Llm(LlmError::RateLimited { retry_after_secs: None })), "{error:?}");
    assert_eq!(k.fake.requests().len(), 3);
    nothing_half_stored(&k).await;
}

#[tokio::test]
async fn a_server_error_is_unavailable_and_not_retried() {
    let k = kit().await;
    k.fake.push(FakeReply::error(503, "server_error", "The engine is overloaded"));

    let error = k.kb.chat().send(None, "hello?").await.unwrap_err();

    assert!(
        matches!(&error, TurnError::Llm(LlmError::Unavailable { detail, .. }) if detail.contains("overloaded")),
        "{error:?}"
    );
    assert_eq!(k.fake.requests().len(), 1);
    nothing_half_stored(&k).await;
}

#[tokio::test]
async fn a_hung_model_times_out() {
    let k = kit_with(|_, settings| settings.timeout = Duration::from_secs(2)).await;
    k.fake.push(FakeReply::Hang);

    let error = k.kb.chat().send(None, "hello?").await.unwrap_err();

    assert!(matches!(error, TurnError::Llm(LlmError::Timeout(2))), "{error:?}");
    nothing_half_stored(&k).await;
}

#[tokio::test]
async fn a_malformed_answer_is_malformed() {
    let k = kit().await;
    k.fake.push(FakeReply::raw(200, "<html>this is no chat completion</html>"));

    let error = k.kb.chat().send(None, "hello?").await.unwrap_err();

    assert!(matches!(error, TurnError::Llm(LlmError::Malformed { .. })), "{error:?}");
    nothing_half_stored(&k).await;
}

#[tokio::test]
async fn a_turn_that_fails_midway_leaves_the_conversation_as_it_was() {
    let k = kit().await;
    k.fake.push(FakeReply::text("Noted."));
    let first = k.kb.chat().send(None, "first message").await.unwrap();
    let before = k.stored(&first.conversation_id).await;
    assert_eq!(before.len(), 2);

    // The model calls a tool, then fails on the next call of the same turn.
    k.fake.push(call("call_1", "list_entries", &json!({})));
    k.fake.push(FakeReply::error(500, "server_error", "boom"));
    let error = k.kb.chat().send(Some(&first.conversation_id), "list everything").await.unwrap_err();
    assert!(matches!(error, TurnError::Llm(LlmError::Unavailable { .. })), "{error:?}");

    let after = k.stored(&first.conversation_id).await;
    assert_eq!(
        after.iter().map(|m| &m.id).collect::<Vec<_>>(),
        before.iter().map(|m| &m.id).collect::<Vec<_>>()
    );
    assert_eq!(k.kb.chat().conversations().await.unwrap().len(), 1);
    nothing_half_stored(&k).await;

    // The conversation goes on afterwards, without the failed turn in its history.
    k.fake.push(FakeReply::text("Back again."));
    k.kb.chat().send(Some(&first.conversation_id), "are you there?").await.unwrap();
    let sent = super::messages(k.chat_requests().last().unwrap());
    let texts: Vec<_> = sent.iter().filter_map(|m| m["content"].as_str()).collect();
    assert!(!texts.contains(&"list everything"), "{texts:?}");
    assert!(texts.contains(&"first message"));
}

#[tokio::test]
async fn a_model_failure_after_a_capture_keeps_the_turn_and_says_what_was_filed() {
    let k = kit().await;
    k.fake.push(call("call_1", "classify_and_capture", &json!({"text": "Fix the shed roof"})));
    k.fake.push(FakeReply::classification("projects", 0.9, "Shed roof"));
    k.fake.push(FakeReply::error(500, "server_error", "boom"));
    let response = k.kb.chat().send(None, "Fix the shed roof").await.unwrap();
    assert_eq!(k.entry_files(), ["projects/shed-roof.md"]);
    assert!(response.message.content.contains("language model failed"), "{}", response.message.content);
    assert_eq!(response.entry.as_ref().map(|e| e.path.to_string()), Some("projects/shed-roof.md".into()));
    assert_eq!(response.tools_used, ["classify_and_capture"]);
    let stored = k.stored(&response.conversation_id).await;
    assert_eq!(stored.len(), 4, "user, tool call, tool result, answer");
    assert_eq!(stored[3].filed_entry_path.as_deref(), Some("projects/shed-roof.md"));
}
