//! Turns that build on earlier ones: the history sent back, the sliding window and its
//! summary, moving the entry filed last, and what a turn reports it spent.

use kb_domain::ConversationId;
use kb_llm::testing::FakeReply;
use kb_orchestrator::turn::{SUMMARY_BATCH, SUMMARY_UNAVAILABLE};
use serde_json::json;

use super::{call, is_chat, is_summary, kit, kit_with, messages};

#[tokio::test]
async fn a_second_turn_sends_the_whole_first_turn_back() {
    let k = kit().await;
    k.fake.push(call("call_1", "classify_and_capture", &json!({"text": "Priya designs gardens"})));
    k.fake.push(FakeReply::classification("people", 0.92, "Priya"));
    k.fake.push(FakeReply::text("Saved Priya."));
    let first = k.kb.chat().send(None, "Priya designs gardens").await.unwrap();
    let first_turn_requests = k.fake.requests().len();

    k.fake.push(FakeReply::text("Priya designs gardens."));
    let second = k.kb.chat().send(Some(&first.conversation_id), "what does Priya do?").await.unwrap();
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
    k.kb.chat().send(id, message).await.unwrap().conversation_id
}

/// The contents of a chat request's messages after the system prompt.
fn sent_after_system(chat: &serde_json::Value) -> Vec<String> {
    messages(chat).iter().skip(1).map(|m| m["content"].as_str().unwrap_or_default().to_string()).collect()
}

fn system(body: &serde_json::Value) -> String {
    messages(body)[0]["content"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_long_conversation_slides_its_window_and_summarises_what_left_it_in_batches() {
    let k = kit_with(|config, _| config.conversation_window = 4).await;
    assert_eq!(SUMMARY_BATCH, 10);
    // Distinct markers: `w1z` is not part of `w10z`.
    let message = |i: usize| format!("message {i} about w{i}z");
    let answer = |i: usize| format!("A{i}z");

    // Seven turns: what leaves the window of four stays in the prompt until ten messages
    // have left it, so no summary call is made yet and nothing is out of the model's sight.
    let id = plain_turn(&k, None, &message(0), &answer(0)).await;
    for i in 1..7 {
        plain_turn(&k, Some(&id), &message(i), &answer(i)).await;
    }
    assert!(!k.fake.requests().iter().any(|r| is_summary(&r.json())));
    let chat = k.chat_requests().last().unwrap().clone();
    assert!(system(&chat).contains(kb_orchestrator::prompt::NO_SUMMARY));
    let mut everything: Vec<String> = (0..6).flat_map(|i| [message(i), answer(i)]).collect();
    everything.push(message(6));
    assert_eq!(sent_after_system(&chat), everything);

    // Turn 7: ten messages (turns 0–4) have left the window: one call folds them first.
    k.fake.push(FakeReply::text("SUMMARY-ONE: w0z to w4z."));
    plain_turn(&k, Some(&id), &message(7), &answer(7)).await;
    let requests: Vec<_> = k.fake.requests().iter().map(|r| r.json()).collect();
    let summary_request = &requests[requests.len() - 2];
    assert!(is_summary(summary_request), "{summary_request}");
    assert!(
        summary_request.get("tools").is_none() || summary_request["tools"].as_array().unwrap().is_empty()
    );
    let transcript = summary_request["messages"][1]["content"].as_str().unwrap();
    for i in 0..5 {
        assert!(transcript.contains(&format!("w{i}z")) && transcript.contains(&answer(i)), "{transcript}");
    }
    assert!(!transcript.contains("w5z"), "still in the window: {transcript}");
    let chat = requests.last().unwrap();
    assert!(system(chat).contains("SUMMARY-ONE: w0z to w4z."));
    assert_eq!(sent_after_system(chat), [message(5), answer(5), message(6), answer(6), message(7)]);
    let (conversation, _) = k.kb.chat().conversation(&id).await.unwrap();
    assert_eq!(conversation.summary.as_deref(), Some("SUMMARY-ONE: w0z to w4z."));
    assert_eq!(conversation.summary_covers.map(|c| c.messages), Some(10));

    // Turns 8–11: fewer than ten unsummarised messages out of the window: one call each.
    let before = k.fake.requests().len();
    for i in 8..12 {
        plain_turn(&k, Some(&id), &message(i), &answer(i)).await;
    }
    assert_eq!(k.fake.requests().len(), before + 4);
    let chat = k.chat_requests().last().unwrap().clone();
    assert_eq!(sent_after_system(&chat)[0], message(5), "turns 5 and later are not summarised yet");

    // Turn 12: ten more have left (turns 5–9); summarising them fails. The turn still
    // answers, with the earlier summary and a note, and the stored summary is kept.
    k.fake.push(FakeReply::error(503, "server_error", "overloaded"));
    let answered = {
        k.fake.push(FakeReply::text(&answer(12)));
        k.kb.chat().send(Some(&id), &message(12)).await.unwrap()
    };
    assert_eq!(answered.message.content, answer(12));
    let chat = k.chat_requests().last().unwrap().clone();
    assert!(system(&chat).contains("SUMMARY-ONE") && system(&chat).contains(SUMMARY_UNAVAILABLE));
    assert_eq!(sent_after_system(&chat), [message(10), answer(10), message(11), answer(11), message(12)]);
    let (conversation, _) = k.kb.chat().conversation(&id).await.unwrap();
    assert_eq!(conversation.summary.as_deref(), Some("SUMMARY-ONE: w0z to w4z."));
    assert_eq!(conversation.summary_covers.map(|c| c.messages), Some(10));

    // Turn 13: the retry folds everything not yet summarised and out of the window (turns
    // 5–10), the batch whose summary failed included.
    k.fake.push(FakeReply::text("SUMMARY-TWO: w0z to w10z."));
    plain_turn(&k, Some(&id), &message(13), &answer(13)).await;
    let requests: Vec<_> = k.fake.requests().iter().map(|r| r.json()).collect();
    let summary_request = &requests[requests.len() - 2];
    assert!(is_summary(summary_request));
    let transcript = summary_request["messages"][1]["content"].as_str().unwrap();
    assert!(transcript.contains("Earlier summary:\nSUMMARY-ONE: w0z to w4z."), "{transcript}");
    for i in 5..11 {
        assert!(transcript.contains(&format!("w{i}z")), "w{i}z missing: {transcript}");
    }
    assert!(!transcript.contains("w4z\n") && !transcript.contains("w11z"), "{transcript}");
    assert!(system(requests.last().unwrap()).contains("SUMMARY-TWO"));

    // Every chat request: the system prompt, fewer than window + batch earlier messages,
    // the new message.
    for chat in k.chat_requests() {
        assert!(messages(&chat).len() < 1 + 4 + SUMMARY_BATCH + 1, "{chat}");
    }
    let (conversation, stored) = k.kb.chat().conversation(&id).await.unwrap();
    assert_eq!(conversation.summary.as_deref(), Some("SUMMARY-TWO: w0z to w10z."));
    assert_eq!(conversation.summary_covers.map(|c| c.messages), Some(22));
    assert_eq!(stored.len(), 28, "every message is kept, whatever the window");
}

#[tokio::test]
async fn a_summary_from_before_coverage_was_recorded_covers_what_it_did_then() {
    let k = kit_with(|config, _| config.conversation_window = 4).await;
    let message = |i: usize| format!("message {i} about w{i}z");
    let id = plain_turn(&k, None, &message(0), "A0z").await;
    for i in 1..6 {
        plain_turn(&k, Some(&id), &message(i), &format!("A{i}z")).await;
    }
    // An older kb summarised at the start of turn 5 what was before its window (turns 0–2)
    // and did not record how far that reached.
    let url = format!("sqlite://{}", k.dir.path().join(".kb").join("kb.sqlite").display());
    let raw = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::query("UPDATE conversations SET summary = 'OLD: w0z to w2z.', summary_covers = NULL WHERE id = ?")
        .bind(id.as_str())
        .execute(&raw)
        .await
        .unwrap();

    plain_turn(&k, Some(&id), &message(6), "A6z").await;
    assert!(!k.fake.requests().iter().any(|r| is_summary(&r.json())));
    let chat = k.chat_requests().last().unwrap().clone();
    assert!(system(&chat).contains("OLD: w0z to w2z."));
    let sent = sent_after_system(&chat);
    assert_eq!(sent.first(), Some(&message(3)), "turn 3 onwards is not in the old summary: {sent:?}");
    assert_eq!(sent.len(), 7);
    let (conversation, _) = k.kb.chat().conversation(&id).await.unwrap();
    assert_eq!(conversation.summary_covers.map(|c| c.messages), Some(6), "recorded once worked out");
}

#[tokio::test]
async fn a_60_turn_conversation_costs_about_2_model_calls_per_query_turn() {
    // Default window (20 messages). Each query turn is a search and an answer: 2 chat
    // calls and 4 stored messages. Summary calls are answered whenever they come.
    let k = kit().await;
    k.fake.always_answer(is_summary, FakeReply::text("SUMMARY: the person asked about many topics."));
    let turns = 60;
    let question = |i: usize| format!("what do I have about t{i}q?");
    let mut id: Option<ConversationId> = None;
    let mut calls_per_turn = Vec::new();
    let mut starts = Vec::new();
    for i in 0..turns {
        let before = k.fake.requests().len();
        starts.push(before);
        k.fake.push(call(&format!("call_{i}"), "search_entries", &json!({"query": format!("t{i}q")})));
        k.fake.push(FakeReply::text(&format!("Nothing about t{i}q yet.")));
        let response = k.kb.chat().send(id.as_ref(), &question(i)).await.unwrap();
        assert_eq!(k.fake.pending(), 0, "turn {i} made both chat calls");
        let calls = k.fake.requests().len() - before;
        assert_eq!(response.usage.llm_calls as usize, calls, "usage counts every call of turn {i}");
        calls_per_turn.push(calls);
        id = Some(response.conversation_id);
    }

    let requests: Vec<_> = k.fake.requests().iter().map(|r| r.json()).collect();
    let summaries = requests.iter().filter(|r| is_summary(r)).count();
    let chats = requests.iter().filter(|r| is_chat(r)).count();
    assert_eq!(chats, 2 * turns);
    assert_eq!(chats + summaries, requests.len());
    let average = requests.len() as f64 / turns as f64;
    println!(
        "{} model calls in {turns} query turns ({summaries} summaries): {average:.2} per turn",
        requests.len()
    );
    // At most one summary call per ten messages that left the window (the last turn's
    // window of 20 never left), and never more than one in a turn.
    assert!(summaries <= (4 * turns - 20) / SUMMARY_BATCH, "{summaries} summary calls");
    assert!(calls_per_turn.iter().all(|c| *c <= 3), "{calls_per_turn:?}");
    // Summarising every turn would cost 3 calls a turn once the window is full (2.92 on average).
    assert!(average < 2.5, "{average:.2} model calls per query turn on average");

    // Nothing older is lost: in each turn's first chat request, every earlier question is
    // either sent back or in a transcript the summariser was given before it; and what is
    // sent back stays under the window plus one batch.
    for (turn, start) in starts.iter().enumerate() {
        let first_chat = (*start..requests.len()).find(|n| is_chat(&requests[*n])).unwrap();
        let summarised: String = requests[..first_chat]
            .iter()
            .filter(|r| is_summary(r))
            .map(|r| r["messages"][1]["content"].as_str().unwrap())
            .collect();
        let body = &requests[first_chat];
        let sent = sent_after_system(body).join("\n");
        for j in 0..turn {
            let marker = format!("t{j}q");
            assert!(sent.contains(&marker) || summarised.contains(&marker), "turn {turn} lost {marker}");
        }
        assert!(messages(body).len() < 1 + 20 + SUMMARY_BATCH + 1, "turn {turn} sent too much: {body}");
    }
}

#[tokio::test]
async fn actually_that_is_a_project_moves_the_inbox_capture() {
    let k = kit().await;
    let words = "Maybe build a treehouse for the kids";
    k.fake.push(call("call_1", "classify_and_capture", &json!({"text": words})));
    k.fake.push(FakeReply::classification("ideas", 0.3, "Treehouse"));
    k.fake.push(FakeReply::text("I put it in the inbox: is it an idea or a project?"));
    let first = k.kb.chat().send(None, words).await.unwrap();
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
    let second = k.kb.chat().send(Some(&first.conversation_id), "actually that's a project").await.unwrap();

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
    let k = kit_with(|config, _| config.conversation_window = 2).await;
    // Four tool rounds and the answer: ten messages, none of which fits the next window.
    k.fake.push(call("call_1", "list_entries", &json!({})));
    k.fake.push(call("call_2", "search_entries", &json!({"query": "garden"})));
    k.fake.push(call("call_3", "list_entries", &json!({"category": "ideas"})));
    k.fake.push(call("call_4", "search_entries", &json!({"query": "gardens"})));
    k.fake.push(FakeReply::text("Nothing yet."));
    let response = k.kb.chat().send(None, "what do I have about gardens?").await.unwrap();
    assert_eq!(response.usage.llm_calls, 5);
    assert_eq!(k.fake.requests().len(), 5);
    // The fake reports 10 prompt and 5 completion tokens per call.
    assert_eq!(response.usage.prompt_tokens, 50);
    assert_eq!(response.usage.completion_tokens, 25);
    assert_eq!(
        serde_json::to_value(kb_server::dto::ChatAnswer::from(&response)).unwrap()["usage"]["llmCalls"],
        5
    );

    // A summary call (of a batch of ten messages out of the window) is part of the turn
    // that needed it.
    k.fake.push(FakeReply::text("They asked about gardens."));
    k.fake.push(FakeReply::text("Still nothing."));
    let response = k.kb.chat().send(Some(&response.conversation_id), "and now?").await.unwrap();
    assert_eq!(k.fake.requests().len(), 7);
    assert!(is_summary(&k.fake.requests()[5].json()));
    assert_eq!(response.usage.llm_calls, 2);
    assert_eq!((response.usage.prompt_tokens, response.usage.completion_tokens), (20, 10));
}

#[tokio::test]
async fn usage_counts_the_classifier_call_of_a_capture() {
    let k = kit_with(|_, _| {}).await;
    k.fake.push(call("call_1", "classify_and_capture", &json!({"text": "Build a treehouse"})));
    k.fake.push(FakeReply::classification("projects", 0.9, "Treehouse"));
    k.fake.push(FakeReply::text("Filed."));
    let response = k.kb.chat().send(None, "Build a treehouse").await.unwrap();
    assert_eq!(k.fake.requests().len(), 3);
    assert_eq!(response.usage.llm_calls, 3, "the classifier's call is part of the turn");
    assert_eq!((response.usage.prompt_tokens, response.usage.completion_tokens), (30, 15));
}
