//! `POST /api/chat` with `Accept: text/event-stream`: the turn's events in order, the
//! same final body as the JSON answer, errors with the JSON API's codes, and a client that
//! hangs up mid-turn leaves the capture and the conversation stored whole.

use std::time::{Duration, Instant};

use crate::common::{self, KbServer};
use kb_llm::testing::{FakeOpenAi, FakeReply, StreamedCall, chunk};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The events of an SSE body: (name, data).
fn events(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter_map(|block| {
            let name = block.lines().find_map(|l| l.strip_prefix("event:"))?.trim().to_string();
            let data: String = block.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).collect();
            Some((name, serde_json::from_str(&data).unwrap_or(Value::String(data))))
        })
        .collect()
}

/// `POST /api/chat` asking for events: the events of the turn.
pub(crate) async fn stream(kb: &KbServer, body: &Value) -> Vec<(String, Value)> {
    let reply = kb
        .request("POST", "/api/chat", &[("Accept", "text/event-stream")], Some(body.to_string().as_bytes()))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(reply.header("content-type").is_some_and(|t| t.starts_with("text/event-stream")));
    events(&reply.text())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_turn_tells_its_tools_and_answer_in_order_and_ends_as_the_json_answer_would() {
    let kb = KbServer::start(&[]).await;
    let streamed = stream(&kb, &json!({"message": "Met Priya Raman at the robotics meetup"})).await;
    let names: Vec<&str> = streamed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.first(), Some(&"turn.started"));
    assert_eq!(names.last(), Some(&"message.completed"));
    let started = names.iter().position(|n| *n == "tool.started").expect("a tool started");
    let finished = names.iter().position(|n| *n == "tool.finished").expect("a tool finished");
    let first_delta = names.iter().position(|n| *n == "message.delta").expect("deltas");
    assert!(started < finished && finished < first_delta, "{names:?}");
    assert_eq!(streamed[started].1["name"], "classify_and_capture");
    assert_eq!(streamed[started].1["arguments"]["text"], "Met Priya Raman at the robotics meetup");
    assert_eq!(streamed[finished].1["success"], true);
    assert_eq!(streamed[finished].1["path"], "people/priya-raman.md");
    let deltas: Vec<&str> = streamed
        .iter()
        .filter(|(n, _)| n == "message.delta")
        .map(|(_, d)| d["text"].as_str().unwrap())
        .collect();
    assert!(deltas.len() > 2, "the answer came in pieces: {deltas:?}");

    let completed = &streamed.last().unwrap().1;
    let conversation = completed["conversationId"].as_str().unwrap();
    assert_eq!(streamed[0].1["conversationId"], conversation);
    assert_eq!(
        deltas.concat(),
        completed["message"]["content"].as_str().unwrap(),
        "deltas add up to the answer"
    );
    assert_eq!(completed["entry"]["path"], "people/priya-raman.md");
    // The same turn stored as the JSON API stores it.
    let stored = kb.get(&format!("/api/conversations/{conversation}")).await.expect(200);
    let last = stored["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"], completed["message"]["content"]);
    assert_eq!(last["id"], completed["message"]["id"]);

    // Without the header, the JSON answer is as it was.
    let plain = kb.post("/api/chat", &json!({"message": "what do I know about Priya?"})).await.expect(200);
    assert!(plain["message"]["content"].as_str().unwrap().contains("Priya Raman"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_turn_that_fails_ends_with_an_error_event_of_the_json_codes() {
    let kb = KbServer::start(&[]).await;
    let streamed = stream(&kb, &json!({"message": "   "})).await;
    assert_eq!(streamed.len(), 1, "{streamed:?}");
    assert_eq!(streamed[0].0, "error");
    assert_eq!(streamed[0].1["code"], "bad_request");

    let fake = FakeOpenAi::start().await.unwrap();
    let base = fake.base_url();
    let with_model = KbServer::start(&[
        ("OPENAI_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", base.as_str()),
        ("KB_MODEL", "m"),
    ])
    .await;
    fake.push(FakeReply::raw(200, "<html>no chat completion</html>"));
    let streamed = stream(&with_model, &json!({"message": "hello"})).await;
    let (name, data) = streamed.last().unwrap();
    assert_eq!(name, "error", "{streamed:?}");
    // As the JSON API answers it: 502 bad_gateway.
    let plain = {
        fake.push(FakeReply::raw(200, "<html>no chat completion</html>"));
        with_model.post("/api/chat", &json!({"message": "hello"})).await
    };
    assert_eq!(plain.status, 502);
    assert_eq!(data["code"], plain.json()["error"]["code"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_hangs_up_mid_turn_leaves_the_capture_and_conversation_stored() {
    let fake = FakeOpenAi::start().await.unwrap();
    let base = fake.base_url();
    let kb = KbServer::start(&[
        ("OPENAI_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", base.as_str()),
        ("KB_MODEL", "m"),
        ("KB_LLM_TIMEOUT_SECS", "2"),
    ])
    .await;
    let words = "Renew the passport before the trip";
    fake.push(FakeReply::tool_calls(&[(
        "call_1",
        "classify_and_capture",
        &json!({"text": words}).to_string(),
    )]));
    fake.push(FakeReply::classification("admin", 0.9, "Renew passport"));
    // The model never writes its answer: the client gives up first.
    fake.push(FakeReply::Hang);

    let body = json!({"message": words}).to_string();
    let head = format!(
        "POST /api/chat HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        kb.addr,
        body.len()
    );
    {
        let mut stream = tokio::net::TcpStream::connect(kb.addr).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        let mut seen = String::new();
        let mut buffer = [0u8; 4096];
        let started = Instant::now();
        while !seen.contains("event: tool.finished") {
            assert!(started.elapsed() < Duration::from_secs(20), "no tool.finished: {seen}");
            let n = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut buffer))
                .await
                .unwrap()
                .unwrap();
            assert!(n > 0, "the stream ended early: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
        // Hang up mid-turn: the model has not answered yet.
    }
    // The turn goes on without the client: the model times out, and since the vault
    // changed, the turn is kept.
    let started = Instant::now();
    let conversation = loop {
        let listed = kb.get("/api/conversations").await.expect(200);
        if let Some(first) = listed["conversations"].as_array().and_then(|c| c.first()).cloned() {
            let id = first["id"].as_str().unwrap().to_string();
            let whole = kb.get(&format!("/api/conversations/{id}")).await.expect(200);
            if whole["messages"].as_array().is_some_and(|m| m.len() >= 2) {
                break whole;
            }
        }
        assert!(started.elapsed() < Duration::from_secs(30), "the turn was never stored");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let messages = conversation["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(messages[0]["content"], words);
    let answer = messages.last().unwrap();
    assert_eq!(answer["role"], "assistant");
    assert_eq!(answer["filedEntryPath"], "admin/renew-passport.md", "{answer}");
    common::assert_parses(&kb.vault(), "admin/renew-passport.md");
    assert_eq!(
        kb.get("/api/conversations").await.expect(200)["conversations"].as_array().map(Vec::len),
        Some(1)
    );
}

/// kb serve over a fake model, with the fake server kept to script it.
async fn with_fake_model() -> (FakeOpenAi, KbServer) {
    let fake = FakeOpenAi::start().await.unwrap();
    let base = fake.base_url();
    let kb = KbServer::start(&[
        ("OPENAI_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", base.as_str()),
        ("KB_MODEL", "m"),
        ("KB_LLM_TIMEOUT_SECS", "10"),
    ])
    .await;
    (fake, kb)
}

/// The texts of the `message.delta` events, in order.
pub(crate) fn delta_texts(streamed: &[(String, Value)]) -> Vec<String> {
    streamed
        .iter()
        .filter(|(n, _)| n == "message.delta")
        .map(|(_, d)| d["text"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_streamed_pieces_arrive_as_message_deltas_split_as_it_split_them() {
    let (fake, kb) = with_fake_model().await;
    let arguments = ["{\"query\":", " \"pri", "ya\"}"];
    fake.push(FakeReply::streamed(
        &[],
        &[StreamedCall { id: "call_1", name: "search_entries", arguments: &arguments }],
        Some((20, 4)),
    ));
    let pieces = ["Nothing on Pri", "ya y", "et: want me to ", "file her?"];
    fake.push(FakeReply::streamed(&pieces, &[], Some((30, 8))));
    let streamed = stream(&kb, &json!({"message": "what do I know about priya?"})).await;
    let names: Vec<&str> = streamed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "turn.started",
            "tool.started",
            "tool.finished",
            "message.delta",
            "message.delta",
            "message.delta",
            "message.delta",
            "message.completed"
        ]
    );
    assert_eq!(streamed[1].1["arguments"], json!({"query": "priya"}), "arguments joined across chunks");
    assert_eq!(delta_texts(&streamed), pieces, "the deltas are the model's pieces, not re-split");
    let completed = &streamed.last().unwrap().1;
    assert_eq!(completed["message"]["content"], pieces.concat());
    assert_eq!(completed["usage"], json!({"llmCalls": 2, "promptTokens": 50, "completionTokens": 12}));
    let sent = fake.requests();
    assert!(sent.iter().all(|r| r.json()["stream"] == true), "every round streamed");

    // The JSON API asks unstreamed, and answers the same body.
    fake.push(FakeReply::unstreamed(&pieces, &[], Some((30, 8))));
    let plain = kb.post("/api/chat", &json!({"message": "and now?"})).await.expect(200);
    assert_eq!(plain["message"]["content"], pieces.concat());
    assert!(fake.requests().last().unwrap().json().get("stream").is_none_or(|s| s != true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_stream_cut_off_mid_way_ends_with_the_error_event_of_the_json_502() {
    let (fake, kb) = with_fake_model().await;
    fake.push(FakeReply::stream_cut(vec![chunk::role_then_text(), chunk::content("Priya is a des")]));
    let streamed = stream(&kb, &json!({"message": "who is priya?"})).await;
    assert_eq!(delta_texts(&streamed), ["Priya is a des"], "what came was sent");
    let (name, data) = streamed.last().unwrap();
    assert_eq!(name, "error", "{streamed:?}");

    // The same failure unstreamed: the answer's body cut off mid-way.
    fake.push(FakeReply::raw(200, r#"{"id":"chatcmpl-fake","object":"chat.completion","choices":[{"ind"#));
    let plain = kb.post("/api/chat", &json!({"message": "who is priya?"})).await;
    assert_eq!(plain.status, 502);
    assert_eq!(data["code"], plain.json()["error"]["code"]);
    assert_eq!(data["code"], "llm_malformed");
    // Nothing of either failed turn is stored.
    let listed = kb.get("/api/conversations").await.expect(200);
    assert_eq!(listed["conversations"].as_array().map(Vec::len), Some(0), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_of_a_round_that_calls_tools_is_told_as_it_comes_and_stored_with_its_calls() {
    let (fake, kb) = with_fake_model().await;
    fake.push(FakeReply::streamed(
        &["Let me ", "look."],
        &[StreamedCall { id: "call_1", name: "list_entries", arguments: &["{", "}"] }],
        None,
    ));
    fake.push(FakeReply::streamed(&["The vault ", "is empty."], &[], None));
    let streamed = stream(&kb, &json!({"message": "what is there?"})).await;
    let names: Vec<&str> = streamed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "turn.started",
            "message.delta",
            "message.delta",
            "tool.started",
            "tool.finished",
            "message.delta",
            "message.delta",
            "message.completed"
        ]
    );
    assert_eq!(delta_texts(&streamed), ["Let me ", "look.", "The vault ", "is empty."]);
    let completed = &streamed.last().unwrap().1;
    assert_eq!(completed["message"]["content"], "The vault is empty.", "the answer is the last round's text");
    let conversation = completed["conversationId"].as_str().unwrap();
    let stored = kb.get(&format!("/api/conversations/{conversation}")).await.expect(200);
    let messages = stored["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "{stored}");
    assert_eq!(messages[1]["content"], "Let me look.");
    assert_eq!(messages[1]["toolCalls"][0]["name"], "list_entries");
    assert_eq!(messages[3]["content"], "The vault is empty.");
}
