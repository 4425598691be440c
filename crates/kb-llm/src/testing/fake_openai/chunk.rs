//! The `chat.completion.chunk`s a streaming server sends, one builder per shape.

use serde_json::{Value, json};

/// A chunk around these choices.
pub fn with_choices(choices: Value) -> Value {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1_727_346_000,
        "model": "fake-model",
        "choices": choices
    })
}

/// A chunk of one choice holding `delta`.
fn delta(delta: Value, finish_reason: Option<&str>) -> Value {
    with_choices(json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}]))
}

/// The first chunk of a text answer: the role, and an empty text (as OpenAI sends).
pub fn role_then_text() -> Value {
    delta(json!({"role": "assistant", "content": ""}), None)
}

/// The first chunk of an answer of tool calls: the role, and no text.
pub fn role_then_calls() -> Value {
    delta(json!({"role": "assistant", "content": null}), None)
}

/// A piece of the answer's text.
pub fn content(text: &str) -> Value {
    delta(json!({"content": text}), None)
}

/// The first piece of tool call `index`: its id, its name and the start of its arguments.
pub fn tool_call(index: u32, id: &str, name: &str, arguments: &str) -> Value {
    delta(
        json!({"tool_calls": [{
            "index": index, "id": id, "type": "function",
            "function": {"name": name, "arguments": arguments}
        }]}),
        None,
    )
}

/// A further piece of tool call `index`'s arguments.
pub fn tool_arguments(index: u32, arguments: &str) -> Value {
    delta(json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}), None)
}

/// The chunk that ends the answer (`stop`, `tool_calls`, `length`…).
pub fn finish(reason: &str) -> Value {
    delta(json!({}), Some(reason))
}

/// The usage chunk sent last when `stream_options.include_usage` is set (no choices).
pub fn usage(prompt_tokens: u32, completion_tokens: u32) -> Value {
    let mut chunk = with_choices(json!([]));
    chunk["usage"] = json!({
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens
    });
    chunk
}
