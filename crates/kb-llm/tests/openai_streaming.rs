#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The OpenAI-compatible adapter's streamed answers against a scripted server over real
//! HTTP (through async-openai's `create_stream`): text split mid-word, tool-call arguments
//! split across chunks, two calls in one message, usage in the last chunk or none, a stream
//! cut off, and the 429 retry and timeout kept.

use std::sync::Mutex;
use std::time::Duration;

use kb_domain::{ChatCompletion, ChatMessage, ChatModel, ChatRequest, LlmError, ToolDefinition, Usage};
use kb_llm::openai::{OpenAiChatModel, OpenAiSettings};
use kb_llm::testing::{FakeOpenAi, FakeReply, StreamedCall, chunk};
use serde_json::json;

fn settings(server: &FakeOpenAi) -> OpenAiSettings {
    OpenAiSettings {
        base_url: Some(server.base_url()),
        timeout: Duration::from_secs(10),
        retry_base_delay: Duration::from_millis(20),
        max_retry_delay: Duration::from_secs(5),
        ..OpenAiSettings::new("sk-test", "test-model")
    }
}

async fn start() -> (FakeOpenAi, OpenAiChatModel) {
    let server = FakeOpenAi::start().await.unwrap();
    let model = OpenAiChatModel::new(settings(&server)).unwrap();
    (server, model)
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![
            ChatMessage::System { content: "Be brief.".into() },
            ChatMessage::User { content: text.into() },
        ],
        tools: vec![ToolDefinition {
            name: "search_entries".into(),
            description: "Search".into(),
            parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}}),
        }],
        ..ChatRequest::default()
    }
}

/// Streams one answer, returning it and the deltas passed on.
async fn streamed(
    model: &OpenAiChatModel,
    request: &ChatRequest,
) -> (Result<ChatCompletion, LlmError>, Vec<String>) {
    let deltas = Mutex::new(Vec::new());
    let on_delta = |text: &str| deltas.lock().unwrap().push(text.to_string());
    let answer = model.complete_streaming(request, &on_delta).await;
    (answer, deltas.into_inner().unwrap())
}

fn calls(completion: &ChatCompletion) -> Vec<(String, String, String)> {
    completion.tool_calls.iter().map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone())).collect()
}

#[tokio::test]
async fn text_split_mid_word_is_passed_on_piece_by_piece_and_joins_to_the_answer() {
    let (server, model) = start().await;
    let pieces = ["Pri", "ya is a desi", "gner at ", "Acme", "."];
    server.push(FakeReply::streamed(&pieces, &[], Some((12, 7))));
    let (answer, deltas) = streamed(&model, &ask("who is priya?")).await;
    let answer = answer.unwrap();
    assert_eq!(deltas, pieces);
    assert_eq!(answer.content.as_deref(), Some("Priya is a designer at Acme."));
    assert!(answer.tool_calls.is_empty());
    assert_eq!(answer.usage, Usage { llm_calls: 1, prompt_tokens: 12, completion_tokens: 7 });

    // What went out: a streamed request asking for the usage.
    let sent = server.requests()[0].json();
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["stream_options"]["include_usage"], true);
    assert_eq!(sent["tool_choice"], "auto");
}

#[tokio::test]
async fn tool_call_arguments_split_across_chunks_are_joined() {
    let (server, model) = start().await;
    let arguments = ["{\"qu", "ery\": \"pri", "ya\"", "}"];
    server.push(FakeReply::streamed(
        &[],
        &[StreamedCall { id: "call_1", name: "search_entries", arguments: &arguments }],
        Some((30, 9)),
    ));
    let (answer, deltas) = streamed(&model, &ask("find priya")).await;
    let answer = answer.unwrap();
    assert!(deltas.is_empty(), "no text to pass on: {deltas:?}");
    assert_eq!(answer.content, None);
    assert_eq!(calls(&answer), [("call_1".into(), "search_entries".into(), r#"{"query": "priya"}"#.into())]);
    assert_eq!(answer.usage.prompt_tokens, 30);
}

#[tokio::test]
async fn two_tool_calls_in_one_message_keep_their_order_even_interleaved() {
    let (server, model) = start().await;
    // As some servers send them: the second call begins before the first one's arguments end.
    server.push(FakeReply::stream(vec![
        chunk::role_then_calls(),
        chunk::tool_call(0, "call_a", "search_entries", "{\"query\":"),
        chunk::tool_call(1, "call_b", "get_entry", ""),
        chunk::tool_arguments(1, "{\"path\":\"people/sam.md\"}"),
        chunk::tool_arguments(0, "\"sam\"}"),
        chunk::finish("tool_calls"),
        chunk::usage(5, 6),
    ]));
    let (answer, _) = streamed(&model, &ask("sam?")).await;
    let answer = answer.unwrap();
    assert_eq!(
        calls(&answer),
        [
            ("call_a".into(), "search_entries".into(), r#"{"query":"sam"}"#.into()),
            ("call_b".into(), "get_entry".into(), r#"{"path":"people/sam.md"}"#.into()),
        ]
    );
    assert_eq!(answer.usage, Usage { llm_calls: 1, prompt_tokens: 5, completion_tokens: 6 });
}

#[tokio::test]
async fn text_with_tool_calls_comes_back_with_both() {
    let (server, model) = start().await;
    server.push(FakeReply::streamed(
        &["Let me ", "look."],
        &[StreamedCall { id: "c1", name: "search_entries", arguments: &["{}"] }],
        None,
    ));
    let (answer, deltas) = streamed(&model, &ask("look")).await;
    let answer = answer.unwrap();
    assert_eq!(deltas, ["Let me ", "look."]);
    assert_eq!(answer.content.as_deref(), Some("Let me look."));
    assert_eq!(answer.tool_calls.len(), 1);
}

#[tokio::test]
async fn no_usage_chunk_costs_one_call_and_zero_tokens() {
    let (server, model) = start().await;
    server.push(FakeReply::streamed(&["Hi", "!"], &[], None));
    let (answer, _) = streamed(&model, &ask("hi")).await;
    assert_eq!(answer.unwrap().usage, Usage { llm_calls: 1, prompt_tokens: 0, completion_tokens: 0 });
}

#[tokio::test]
async fn the_streamed_answer_is_the_unstreamed_one() {
    let (server, model) = start().await;
    let text = ["Filed ", "it un", "der people."];
    let arguments = ["{\"text\":", "\"x\"}"];
    let call = [StreamedCall { id: "call_9", name: "search_entries", arguments: &arguments }];
    for usage in [Some((3, 4)), None] {
        server.push(FakeReply::unstreamed(&text, &call, usage));
        server.push(FakeReply::streamed(&text, &call, usage));
        let whole = model.complete(&ask("x")).await.unwrap();
        let (pieces, _) = streamed(&model, &ask("x")).await;
        assert_eq!(pieces.unwrap(), whole, "usage {usage:?}");
    }
}

#[tokio::test]
async fn a_stream_cut_off_mid_way_is_malformed_after_telling_what_came() {
    let (server, model) = start().await;
    server.push(FakeReply::stream_cut(vec![chunk::role_then_text(), chunk::content("Half an ans")]));
    let (answer, deltas) = streamed(&model, &ask("x")).await;
    assert!(matches!(answer, Err(LlmError::Malformed { .. })), "{answer:?}");
    assert_eq!(deltas, ["Half an ans"]);
}

#[tokio::test]
async fn a_stream_that_ends_cleanly_without_a_finish_reason_is_malformed() {
    let (server, model) = start().await;
    // [DONE] comes, but the answer never finished (the tool call has no end).
    server.push(FakeReply::stream(vec![
        chunk::role_then_calls(),
        chunk::tool_call(0, "c", "search_entries", "{\"que"),
    ]));
    let (answer, _) = streamed(&model, &ask("x")).await;
    assert!(
        matches!(answer, Err(LlmError::Malformed { ref detail, .. }) if detail.contains("cut off")),
        "{answer:?}"
    );
}

#[tokio::test]
async fn a_chunk_that_is_not_json_is_malformed() {
    let (server, model) = start().await;
    server.push(FakeReply::Stream { events: vec!["{not json".into()], complete: true });
    let (answer, _) = streamed(&model, &ask("x")).await;
    assert!(matches!(answer, Err(LlmError::Malformed { .. })), "{answer:?}");
}

#[tokio::test]
async fn a_429_before_the_stream_begins_is_retried() {
    let (server, model) = start().await;
    server.push(FakeReply::rate_limited(None));
    server.push(FakeReply::streamed(&["ok"], &[], None));
    let (answer, deltas) = streamed(&model, &ask("x")).await;
    assert_eq!(answer.unwrap().content.as_deref(), Some("ok"));
    assert_eq!(deltas, ["ok"]);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn errors_before_the_stream_map_as_unstreamed() {
    let (server, model) = start().await;
    server.push(FakeReply::error(503, "server_error", "overloaded"));
    assert!(matches!(streamed(&model, &ask("x")).await.0, Err(LlmError::Unavailable { .. })));
    server.push(FakeReply::error(401, "invalid_api_key", "bad key"));
    assert!(matches!(streamed(&model, &ask("x")).await.0, Err(LlmError::Refused { .. })));
}

#[tokio::test]
async fn a_hung_stream_times_out() {
    let server = FakeOpenAi::start().await.unwrap();
    let model =
        OpenAiChatModel::new(OpenAiSettings { timeout: Duration::from_millis(500), ..settings(&server) })
            .unwrap();
    server.push(FakeReply::Hang);
    let (answer, _) = streamed(&model, &ask("x")).await;
    assert_eq!(answer, Err(LlmError::Timeout(1)));
}

#[tokio::test]
async fn a_stream_that_stalls_mid_way_times_out_after_telling_what_came() {
    let server = FakeOpenAi::start().await.unwrap();
    let model =
        OpenAiChatModel::new(OpenAiSettings { timeout: Duration::from_millis(800), ..settings(&server) })
            .unwrap();
    server.push(FakeReply::stream_then_hang(vec![chunk::role_then_text(), chunk::content("I was say")]));
    let started = std::time::Instant::now();
    let (answer, deltas) = streamed(&model, &ask("x")).await;
    assert_eq!(answer, Err(LlmError::Timeout(1)));
    assert_eq!(deltas, ["I was say"]);
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
}
