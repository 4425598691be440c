#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The OpenAI-compatible adapter against a scripted server over real HTTP: what it sends,
//! how it reads real recorded answers, and which typed error each fault becomes.

use std::time::{Duration, Instant};

use kb_domain::{
    ChatMessage, ChatModel, ChatRequest, LlmError, StructuredRequest, ToolCall, ToolDefinition, Usage,
};
use kb_llm::openai::{OpenAiChatModel, OpenAiSettings};
use kb_llm::testing::{FakeOpenAi, FakeReply};
use serde_json::json;

const KEY: &str = "sk-test-secret-key";
const BASE_DELAY: Duration = Duration::from_millis(50);

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/openai/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn recorded(name: &str) -> FakeReply {
    FakeReply::raw(200, fixture(name))
}

fn settings(server: &FakeOpenAi) -> OpenAiSettings {
    OpenAiSettings {
        base_url: Some(server.base_url()),
        timeout: Duration::from_secs(10),
        retry_base_delay: BASE_DELAY,
        max_retry_delay: Duration::from_secs(5),
        ..OpenAiSettings::new(KEY, "test-model")
    }
}

async fn start() -> (FakeOpenAi, OpenAiChatModel) {
    let server = FakeOpenAi::start().await.unwrap();
    let model = OpenAiChatModel::new(settings(&server)).unwrap();
    (server, model)
}

fn search_tool() -> ToolDefinition {
    ToolDefinition {
        name: "search_entries".into(),
        description: "Search the knowledge base".into(),
        parameters: json!({
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"]
        }),
    }
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![
            ChatMessage::System { content: "You are a personal knowledge management assistant.".into() },
            ChatMessage::User { content: text.into() },
        ],
        tools: vec![search_tool()],
        ..ChatRequest::default()
    }
}

#[tokio::test]
async fn a_recorded_tool_call_comes_back_with_id_name_arguments_and_usage() {
    let (server, model) = start().await;
    server.push(recorded("test_parse_pydantic_tool.json"));

    let answer = model.complete(&ask("weather in Edinburgh?")).await.unwrap();

    assert_eq!(answer.content, None);
    assert_eq!(
        answer.tool_calls,
        vec![ToolCall {
            id: "call_Y6qJ7ofLgOrBnMD5WbVAeiRV".into(),
            name: "GetWeatherArgs".into(),
            arguments: r#"{"city":"Edinburgh","country":"UK","units":"c"}"#.into(),
        }]
    );
    assert_eq!(answer.usage, Usage { llm_calls: 1, prompt_tokens: 76, completion_tokens: 24 });

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(request.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    let body = request.json();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "search_entries");
    assert_eq!(body["tools"][0]["function"]["description"], "Search the knowledge base");
    assert_eq!(body["tools"][0]["function"]["parameters"]["required"], json!(["query"]));
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][1], json!({"role": "user", "content": "weather in Edinburgh?"}));
    assert!(body.get("stream").is_none() || body["stream"] == false);
}

#[tokio::test]
async fn recorded_parallel_tool_calls_keep_their_order() {
    let (server, model) = start().await;
    server.push(recorded("test_parse_multiple_pydantic_tools.json"));

    let answer = model.complete(&ask("weather and AAPL")).await.unwrap();

    let calls: Vec<(&str, &str)> =
        answer.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str())).collect();
    assert_eq!(
        calls,
        [
            ("call_fdNz3vOBKYgOIpMdWotB9MjY", "GetWeatherArgs"),
            ("call_h1DWI1POMJLb0KwIyQHWXD4p", "get_stock_price")
        ]
    );
    assert_eq!(answer.tool_calls[1].arguments, r#"{"ticker": "AAPL", "exchange": "NASDAQ"}"#);
    assert_eq!(answer.usage, Usage { llm_calls: 1, prompt_tokens: 149, completion_tokens: 60 });
}

#[tokio::test]
async fn a_plain_text_answer_has_no_tool_calls() {
    let (server, model) = start().await;
    server.push(recorded("chat_completions_default.response.json"));

    let answer = model.complete(&ask("hello")).await.unwrap();

    assert_eq!(answer.content.as_deref(), Some("Hello! How can I assist you today?"));
    assert!(answer.tool_calls.is_empty());
    assert_eq!(answer.usage, Usage { llm_calls: 1, prompt_tokens: 19, completion_tokens: 10 });
}

#[tokio::test]
async fn earlier_tool_calls_and_their_results_are_sent_back_with_their_ids() {
    let (server, model) = start().await;
    server.push(FakeReply::text("Priya is a designer you met at the meetup."));
    let mut request = ask("who is Priya?");
    request.messages.push(ChatMessage::Assistant {
        content: None,
        tool_calls: vec![
            ToolCall {
                id: "call_a".into(),
                name: "search_entries".into(),
                arguments: r#"{"query":"Priya"}"#.into(),
            },
            ToolCall {
                id: "call_b".into(),
                name: "read_entry".into(),
                arguments: r#"{"path":"people/priya.md"}"#.into(),
            },
        ],
    });
    request
        .messages
        .push(ChatMessage::Tool { tool_call_id: "call_a".into(), content: r#"{"total":1}"#.into() });
    request
        .messages
        .push(ChatMessage::Tool { tool_call_id: "call_b".into(), content: r#"{"name":"Priya"}"#.into() });

    let answer = model.complete(&request).await.unwrap();
    assert_eq!(answer.content.as_deref(), Some("Priya is a designer you met at the meetup."));

    let body = server.requests()[0].json();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5);
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_a");
    assert_eq!(messages[2]["tool_calls"][1]["function"]["name"], "read_entry");
    assert_eq!(messages[2]["tool_calls"][1]["function"]["arguments"], r#"{"path":"people/priya.md"}"#);
    assert_eq!(messages[3], json!({"role": "tool", "tool_call_id": "call_a", "content": r#"{"total":1}"#}));
    assert_eq!(messages[4]["tool_call_id"], "call_b");
}

fn classify() -> StructuredRequest {
    StructuredRequest {
        messages: vec![ChatMessage::User { content: "what's the weather in SF?".into() }],
        schema_name: "Location".into(),
        schema: json!({
            "type": "object",
            "properties": {"city": {"type": "string"}, "temperature": {"type": "number"}, "units": {"enum": ["c", "f"]}},
            "required": ["city", "temperature", "units"],
            "additionalProperties": false
        }),
        ..StructuredRequest::default()
    }
}

#[tokio::test]
async fn structured_output_asks_for_a_strict_schema_and_parses_the_answer() {
    let (server, model) = start().await;
    server.push(recorded("test_parse_pydantic_model.json"));

    let answer = model.complete_structured(&classify()).await.unwrap();

    assert_eq!(answer.value, json!({"city": "San Francisco", "temperature": 65, "units": "f"}));
    assert_eq!(answer.usage, Usage { llm_calls: 1, prompt_tokens: 79, completion_tokens: 14 });
    let body = server.requests()[0].json();
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(body["response_format"]["json_schema"]["name"], "Location");
    assert_eq!(body["response_format"]["json_schema"]["strict"], true);
    assert_eq!(body["response_format"]["json_schema"]["schema"], classify().schema);
    assert!(body.get("tools").is_none());
}

#[tokio::test]
async fn a_cut_off_structured_answer_is_malformed_and_a_refusal_is_refused() {
    let (server, model) = start().await;
    server.push(recorded("test_parse_max_tokens_reached.json"));
    server.push(recorded("test_parse_pydantic_model_refusal.json"));

    let cut = model.complete_structured(&classify()).await.unwrap_err();
    assert!(matches!(cut, LlmError::Malformed { .. }), "{cut:?}");
    let refused = model.complete_structured(&classify()).await.unwrap_err();
    assert!(
        matches!(&refused, LlmError::Refused { detail, .. } if detail.contains("can't assist")),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_429_is_retried_after_a_backoff_and_then_succeeds() {
    let (server, model) = start().await;
    server.push(FakeReply::rate_limited(None));
    server.push(FakeReply::text("done"));

    let answer = model.complete(&ask("hi")).await.unwrap();

    assert_eq!(answer.content.as_deref(), Some("done"));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let waited = requests[1].received_at - requests[0].received_at;
    assert!(waited >= BASE_DELAY, "retried after {waited:?}");
    assert_eq!(requests[0].body, requests[1].body, "the same request is sent again");
}

#[tokio::test]
async fn a_persistent_429_ends_rate_limited_after_three_tries_with_growing_waits() {
    let (server, model) = start().await;
    for _ in 0..3 {
        server.push(FakeReply::rate_limited(None));
    }
    server.push(FakeReply::text("never reached"));

    let error = model.complete(&ask("hi")).await.unwrap_err();

    assert_eq!(error, LlmError::RateLimited { retry_after_secs: None });
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].received_at - requests[0].received_at >= BASE_DELAY);
    assert!(requests[2].received_at - requests[1].received_at >= BASE_DELAY * 2);
    assert_eq!(server.pending(), 1);
}

#[tokio::test]
async fn retry_after_is_honoured_and_reported() {
    let (server, model) = start().await;
    server.push(FakeReply::rate_limited(Some(1)));
    server.push(FakeReply::rate_limited(Some(1)));
    server.push(FakeReply::rate_limited(Some(2)));

    let error = model.complete(&ask("hi")).await.unwrap_err();

    assert_eq!(error, LlmError::RateLimited { retry_after_secs: Some(2) });
    assert!(error.to_string().contains("retry after 2s"), "{error}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for pair in requests.windows(2) {
        let waited = pair[1].received_at - pair[0].received_at;
        assert!(waited >= Duration::from_secs(1), "waited only {waited:?}");
    }
}

#[tokio::test]
async fn a_retry_after_longer_than_allowed_fails_at_once() {
    let (server, model) = start().await;
    server.push(FakeReply::rate_limited(Some(120)));
    server.push(FakeReply::text("never reached"));

    let error = model.complete(&ask("hi")).await.unwrap_err();

    assert_eq!(error, LlmError::RateLimited { retry_after_secs: Some(120) });
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_wait_that_would_pass_the_timeout_ends_rate_limited_not_timed_out() {
    let server = FakeOpenAi::start().await.unwrap();
    let model = OpenAiChatModel::new(OpenAiSettings { timeout: Duration::from_secs(2), ..settings(&server) })
        .unwrap();
    for _ in 0..3 {
        server.push(FakeReply::rate_limited(Some(1)));
    }

    let error = model.complete(&ask("hi")).await.unwrap_err();

    assert_eq!(error, LlmError::RateLimited { retry_after_secs: Some(1) });
    assert_eq!(server.requests().len(), 2, "the second wait would have ended past the timeout");
}

#[tokio::test]
async fn a_used_up_quota_is_not_retried() {
    let (server, model) = start().await;
    server.push(FakeReply::error(429, "insufficient_quota", "You exceeded your current quota"));
    server.push(FakeReply::text("never reached"));

    let error = model.complete(&ask("hi")).await.unwrap_err();

    assert!(matches!(&error, LlmError::Refused { detail, .. } if detail.contains("quota")), "{error:?}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn server_errors_are_unavailable_and_not_retried() {
    let (server, model) = start().await;
    server.push(FakeReply::error(503, "server_error", "The engine is currently overloaded"));
    server.push(FakeReply::raw(500, "<html>Internal Server Error</html>"));

    let first = model.complete(&ask("hi")).await.unwrap_err();
    assert!(
        matches!(&first, LlmError::Unavailable { detail, .. } if detail.contains("overloaded")),
        "{first:?}"
    );
    assert_eq!(server.requests().len(), 1);
    let second = model.complete(&ask("hi")).await.unwrap_err();
    assert!(matches!(second, LlmError::Unavailable { .. }), "{second:?}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn an_unreachable_server_is_unavailable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let settings = OpenAiSettings {
        base_url: Some(format!("http://127.0.0.1:{port}/v1")),
        ..OpenAiSettings::new(KEY, "test-model")
    };
    let model = OpenAiChatModel::new(settings).unwrap();

    let error = model.complete(&ask("hi")).await.unwrap_err();

    assert!(matches!(error, LlmError::Unavailable { .. }), "{error:?}");
    assert!(!error.to_string().contains(KEY));
}

#[tokio::test]
async fn a_hung_model_times_out_within_the_configured_timeout() {
    let server = FakeOpenAi::start().await.unwrap();
    server.push(FakeReply::Hang);
    let settings = OpenAiSettings { timeout: Duration::from_secs(1), ..settings(&server) };
    let model = OpenAiChatModel::new(settings).unwrap();

    let started = Instant::now();
    let error = model.complete(&ask("hi")).await.unwrap_err();

    assert_eq!(error, LlmError::Timeout(1));
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert_eq!(server.requests().len(), 1, "the request did arrive");
}

#[tokio::test]
async fn answers_that_are_not_chat_completions_are_malformed() {
    let (server, model) = start().await;
    server.push(FakeReply::raw(200, "this is not json"));
    server
        .push(FakeReply::json(&json!({"id": "x", "object": "chat.completion", "created": 1, "model": "m"})));
    server.push(FakeReply::json(
        &json!({"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []}),
    ));

    for case in ["not json", "no choices field", "empty choices"] {
        let error = model.complete(&ask("hi")).await.unwrap_err();
        assert!(matches!(error, LlmError::Malformed { .. }), "{case}: {error:?}");
    }
    server.push(FakeReply::text("not a JSON object"));
    let error = model.complete_structured(&classify()).await.unwrap_err();
    assert!(matches!(error, LlmError::Malformed { .. }), "{error:?}");
}

#[tokio::test]
async fn client_errors_are_refused_with_the_server_reason() {
    let (server, model) = start().await;
    server.push(FakeReply::error(401, "invalid_api_key", "Incorrect API key provided"));
    server.push(FakeReply::error(404, "model_not_found", "The model `test-model` does not exist"));
    server.push(FakeReply::error(400, "invalid_request_error", "Invalid schema for function"));

    for expected in ["Incorrect API key", "does not exist", "Invalid schema"] {
        let error = model.complete(&ask("hi")).await.unwrap_err();
        assert!(matches!(&error, LlmError::Refused { detail, .. } if detail.contains(expected)), "{error:?}");
    }
    assert_eq!(server.requests().len(), 3, "client errors are not retried");
}

#[tokio::test]
async fn the_model_describes_itself_by_name_and_hides_its_key() {
    let (_server, model) = start().await;
    assert_eq!(model.describe(), "test-model");
    assert!(!format!("{model:?}").contains(KEY));
}
