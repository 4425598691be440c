//! Turns that build on earlier ones: the history sent back, the sliding window and its
//! summary, moving the entry filed last, and what a turn reports it spent.

use kb_domain::ConversationId;
use kb_orchestrator::testing::FakeReply;
use kb_orchestrator::turn::SUMMARY_UNAVAILABLE;
use serde_json::json;

use super::{call, is_chat, is_summary, kit, kit_with, messages};

#[tokio::test]
async fn a_second_turn_sends_the_whole_first_turn_back() {
    let k = kit().await;
    k.fake.push(call("call_1", "classify_and_capture", &json!({"text": "Priya designs gardens"})));
    k.fake.push(FakeReply::classification("people", 0.92, "Priya"));
    k.fake.push(FakeReply::text("Saved Priya."));
    let first = k.kb.chat(None, "Priya designs gardens").await.unwrap();
    let first_turn_requests = k.fake.requests().len();

    k.fake.push(FakeReply::text("Priya designs gardens."));
    let second = k.kb.chat(Some(&first.conversation_id), "what does Priya do?").await.unwrap();
    assert_eq!(second.conversation_id, first.conversation_id);

    let body = k.fake.requests()[first_turn_requests].json();
    assert!(is_chat(&body));
    let sent = messages(&body);
    let roles: Vec<_> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant", "user"]);
    assert_eq!(sent[1]["content"], "Priya designs gardens");
    assert_eq!(sent[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(sent[2]["tool_calls"][0]["function"]["name"], "classify_and_capture");
    assert_eq!(sent[3]["tool_call_id"], "call_1");
    assert!(sent[3]["content"].as_str().unwrap().contains("people/priya.md"));
    assert_eq!(sent[4]["content"], "Saved Priya.");
    assert_eq!(sent[5]["content"], "what does Priya do?");
    // The index in the system prompt knows the new entry.
    assert!(sent[0]["content"].as_str().unwrap().contains("people/priya.md"));
}

/// One plain turn: `reply` answers `message`.
async fn plain_turn(
    k: &super::Kit,
    id: Option<&ConversationId>,
    message: &str,
    reply: &str,
) -> ConversationId {
    k.fake.push(FakeReply::text(reply));
    k.kb.chat(id, message).await.unwrap().conversation_id
}

#[tokio::test]
async fn a_long_conversation_slides_its_window_and_summarises_what_left_it() {
    let k = kit_with(|config, _| config.history_window = 4).await;
    let words = ["apples", "bicycles", "cellos", "dahlias", "elephants", "figs", "gongs"];
    let message = |i: usize| format!("message {i} about {}", words[i]);

    // Three turns fit the window of four messages: no summary yet.
    let id = plain_turn(&k, None, &message(0), "A0").await;
    for i in 1..3 {
        plain_turn(&k, Some(&id), &message(i), &format!("A{i}")).await;
    }
    assert!(!k.fake.requests().iter().any(|r| is_summary(&r.json())));
    let system = |body: &serde_json::Value| messages(body)[0]["content"].as_str().unwrap().to_string();
    assert!(system(&k.chat_requests()[2]).contains(kb_orchestrator::prompt::NO_SUMMARY));

    // Turn 4: the first turn leaves the window and is summarised first.
    k.fake.push(FakeReply::text("SUMMARY-ONE: they talked about apples."));
    plain_turn(&k, Some(&id), &message(3), "A3").await;
    let requests: Vec<_> = k.fake.requests().iter().map(|r| r.json()).collect();
    let summary_request = &requests[requests.len() - 2];
    assert!(is_summary(summary_request), "{summary_request}");
    assert!(
        summary_request.get("tools").is_none() || summary_request["tools"].as_array().unwrap().is_empty()
    );
    let transcript = summary_request["messages"][1]["content"].as_str().unwrap();
    assert!(transcript.contains("apples") && transcript.contains("A0"), "{transcript}");
    assert!(!transcript.contains("bicycles"), "still in the window: {transcript}");
    let chat = requests.last().unwrap();
    assert!(system(chat).contains("SUMMARY-ONE: they talked about apples."));
    let sent: Vec<_> =
        messages(chat).iter().skip(1).map(|m| m["content"].as_str().unwrap().to_string()).collect();
    assert_eq!(sent, [message(1), "A1".into(), message(2), "A2".into(), message(3)]);
    let (conversation, _) = k.kb.conversation(&id).await.unwrap();
    assert_eq!(conversation.summary.as_deref(), Some("SUMMARY-ONE: they talked about apples."));

    // Turn 5: summarising fails; the turn still answers, saying older turns exist.
    k.fake.push(FakeReply::error(503, "server_error", "overloaded"));
    let answer = {
        k.fake.push(FakeReply::text("A4"));
        k.kb.chat(Some(&id), &message(4)).await.unwrap()
    };
    assert_eq!(answer.message.content, "A4");
    let chat = k.chat_requests().last().unwrap().clone();
    assert!(system(&chat).contains(SUMMARY_UNAVAILABLE), "{}", system(&chat));

    // Turn 6: the summary catches up with everything older than the window, including
    // the turn whose summary failed.
    k.fake.push(FakeReply::text("SUMMARY-TWO: apples, bicycles and cellos."));
    plain_turn(&k, Some(&id), &message(5), "A5").await;
    let requests: Vec<_> = k.fake.requests().iter().map(|r| r.json()).collect();
    let summary_request = &requests[requests.len() - 2];
    assert!(is_summary(summary_request));
    let transcript = summary_request["messages"][1]["content"].as_str().unwrap();
    assert!(transcript.contains("bicycles") && transcript.contains("cellos"), "{transcript}");
    assert!(system(requests.last().unwrap()).contains("SUMMARY-TWO"));

    // Every chat request: the system prompt, at most the window, the new message.
    for chat in k.chat_requests() {
        assert!(messages(&chat).len() <= 4 + 2, "{chat}");
    }
    let (conversation, stored) = k.kb.conversation(&id).await.unwrap();
    assert_eq!(conversation.summary.as_deref(), Some("SUMMARY-TWO: apples, bicycles and cellos."));
    assert_eq!(stored.len(), 12, "every message is kept, whatever the window");
}

#[tokio::test]
async fn actually_that_is_a_project_moves_the_inbox_capture() {
    let k = kit().await;
    let words = "Maybe build a treehouse for the kids";
    k.fake.push(call("call_1", "classify_and_capture", &json!({"text": words})));
    k.fake.push(FakeReply::classification("ideas", 0.3, "Treehouse"));
    k.fake.push(FakeReply::text("I put it in the inbox: is it an idea or a project?"));
    let first = k.kb.chat(None, words).await.unwrap();
    let entry = first.entry.clone().unwrap();
    assert_eq!(entry.path.to_string(), "inbox/treehouse.md");
    assert!(entry.clarification_needed);
    assert_eq!(first.message.filed_confidence, Some(0.3));
    assert_eq!(k.entry_files(), ["inbox/treehouse.md"]);

    k.fake.push(call(
        "call_2",
        "move_entry",
        &json!({"path": entry.path.to_string(), "targetCategory": "projects"}),
    ));
    k.fake.push(FakeReply::text("Moved it to projects."));
    let second = k.kb.chat(Some(&first.conversation_id), "actually that's a project").await.unwrap();

    assert_eq!(second.tools_used, ["move_entry"]);
    assert!(second.entry.is_none(), "a move is not a capture");
    assert_eq!(k.entry_files(), ["projects/treehouse.md"]);
    let file = std::fs::read_to_string(k.dir.path().join("projects/treehouse.md")).unwrap();
    assert!(file.contains(words), "{file}");
    assert!(file.contains("status: active"), "{file}");
    let result = super::tool_result(k.chat_requests().last().unwrap(), "call_2");
    assert_eq!(result["data"]["oldPath"], "inbox/treehouse.md");
    assert_eq!(result["data"]["newPath"], "projects/treehouse.md");
}

#[tokio::test]
async fn usage_counts_every_model_call_of_the_turn() {
    let k = kit_with(|config, _| config.history_window = 2).await;
    k.fake.push(call("call_1", "list_entries", &json!({})));
    k.fake.push(call("call_2", "search_entries", &json!({"query": "garden"})));
    k.fake.push(FakeReply::text("Nothing yet."));
    let response = k.kb.chat(None, "what do I have about gardens?").await.unwrap();
    assert_eq!(response.usage.llm_calls, 3);
    assert_eq!(k.fake.requests().len(), 3);
    // The fake reports 10 prompt and 5 completion tokens per call.
    assert_eq!(response.usage.prompt_tokens, 30);
    assert_eq!(response.usage.completion_tokens, 15);
    assert_eq!(serde_json::to_value(&response).unwrap()["usage"]["llmCalls"], 3);

    // A summary call is part of the turn that needed it.
    k.fake.push(FakeReply::text("They asked about gardens."));
    k.fake.push(FakeReply::text("Still nothing."));
    let response = k.kb.chat(Some(&response.conversation_id), "and now?").await.unwrap();
    assert_eq!(k.fake.requests().len(), 5);
    assert_eq!(response.usage.llm_calls, 2);
    assert_eq!((response.usage.prompt_tokens, response.usage.completion_tokens), (20, 10));
}

#[tokio::test]
async fn usage_counts_the_classifier_call_of_a_capture() {
    let k = kit_with(|_, _| {}).await;
    k.fake.push(call("call_1", "classify_and_capture", &json!({"text": "Build a treehouse"})));
    k.fake.push(FakeReply::classification("projects", 0.9, "Treehouse"));
    k.fake.push(FakeReply::text("Filed."));
    let response = k.kb.chat(None, "Build a treehouse").await.unwrap();
    assert_eq!(k.fake.requests().len(), 3);
    assert_eq!(response.usage.llm_calls, 3, "the classifier's call is part of the turn");
    assert_eq!((response.usage.prompt_tokens, response.usage.completion_tokens), (30, 15));
}
