//! [`FakeReply`]: what the fake server answers one request with, and builders for the
//! chat completions and streams it scripts.

use serde_json::{Value, json};

use super::chunk;

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub enum FakeReply {
    /// An HTTP response.
    Http {
        /// The status code.
        status: u16,
        /// Extra headers (`Retry-After`, …).
        headers: Vec<(String, String)>,
        /// The body, sent as `application/json` whatever it holds.
        body: String,
    },
    /// A 200 streaming Server-Sent Events (chunked): each payload as a `data:` event, then
    /// `data: [DONE]` and the end of the body when `complete`; when not, the connection is
    /// closed mid-body, without the last chunk of the encoding (a stream cut off).
    Stream {
        /// The `data:` payloads, in order (`chat.completion.chunk` objects).
        events: Vec<String>,
        /// Whether the stream ends properly.
        complete: bool,
    },
    /// A 200 streaming these `data:` payloads, then nothing more, the connection left open
    /// (a model that stalls mid-answer).
    StreamThenHang {
        /// The `data:` payloads sent before the stall.
        events: Vec<String>,
    },
    /// Read the request, then never answer (a hung model).
    Hang,
}

/// One tool call of a streamed reply: its id, its name and its arguments in pieces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamedCall<'a> {
    /// The call's id.
    pub id: &'a str,
    /// The tool.
    pub name: &'a str,
    /// The arguments' text, in the pieces it arrives in.
    pub arguments: &'a [&'a str],
}

impl FakeReply {
    /// A 200 with this JSON body.
    pub fn json(body: &Value) -> FakeReply {
        FakeReply::raw(200, body.to_string())
    }

    /// A response with this status and body, as given (possibly not JSON at all).
    pub fn raw(status: u16, body: impl Into<String>) -> FakeReply {
        FakeReply::Http { status, headers: Vec::new(), body: body.into() }
    }

    /// A chat completion answering with text.
    pub fn text(content: &str) -> FakeReply {
        FakeReply::json(&completion(json!({"role": "assistant", "content": content}), "stop"))
    }

    /// A streamed answer of these chunks (see [`chunk`]), ended by `data: [DONE]`.
    pub fn stream(chunks: Vec<Value>) -> FakeReply {
        FakeReply::Stream { events: chunks.iter().map(Value::to_string).collect(), complete: true }
    }

    /// A stream of these chunks that breaks off: no `[DONE]`, the connection closed mid-body.
    pub fn stream_cut(chunks: Vec<Value>) -> FakeReply {
        FakeReply::Stream { events: chunks.iter().map(Value::to_string).collect(), complete: false }
    }

    /// A stream of these chunks that stalls: no more chunks, no end, the connection open.
    pub fn stream_then_hang(chunks: Vec<Value>) -> FakeReply {
        FakeReply::StreamThenHang { events: chunks.iter().map(Value::to_string).collect() }
    }

    /// A streamed answer: its text in these pieces (none: no text), then these tool calls
    /// with their arguments in pieces, the finish chunk, and the usage chunk when given.
    pub fn streamed(content: &[&str], calls: &[StreamedCall<'_>], usage: Option<(u32, u32)>) -> FakeReply {
        FakeReply::stream(streamed_chunks(content, calls, usage))
    }

    /// The same answer as [`FakeReply::streamed`], unstreamed: one chat completion with the
    /// text joined (`null` when there are no pieces), the calls' arguments joined, and the
    /// usage when given (none at all otherwise).
    pub fn unstreamed(content: &[&str], calls: &[StreamedCall<'_>], usage: Option<(u32, u32)>) -> FakeReply {
        let text = (!content.is_empty()).then(|| content.concat());
        let mut message = json!({"role": "assistant", "content": text});
        if !calls.is_empty() {
            let calls: Vec<Value> = calls
                .iter()
                .map(|c| {
                    json!({"id": c.id, "type": "function",
                           "function": {"name": c.name, "arguments": c.arguments.concat()}})
                })
                .collect();
            message["tool_calls"] = Value::Array(calls);
        }
        let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
        let mut body = completion(message, finish);
        match usage {
            Some((prompt, completion)) => {
                body["usage"] = json!({"prompt_tokens": prompt, "completion_tokens": completion,
                                       "total_tokens": prompt + completion});
            }
            None => {
                if let Value::Object(map) = &mut body {
                    map.remove("usage");
                }
            }
        }
        FakeReply::json(&body)
    }

    /// The capture classifier's structured answer (kb-tools' classification schema) with
    /// no fields filled in.
    pub fn classification(category: &str, confidence: f64, name: &str) -> FakeReply {
        let answer = json!({
            "category": category,
            "confidence": confidence,
            "name": name,
            "tags": [],
            "fields": {
                "context": null, "follow_ups": [], "status": null,
                "next_action": null, "due_date": null, "one_liner": null
            }
        });
        FakeReply::text(&answer.to_string())
    }

    /// A chat completion asking for tool calls `(id, name, arguments)`, in order.
    pub fn tool_calls(calls: &[(&str, &str, &str)]) -> FakeReply {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(id, name, arguments)| {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
            })
            .collect();
        let message = json!({"role": "assistant", "content": null, "tool_calls": calls});
        FakeReply::json(&completion(message, "tool_calls"))
    }

    /// OpenAI's 429, with a `Retry-After` when given.
    pub fn rate_limited(retry_after_secs: Option<u64>) -> FakeReply {
        let reply = FakeReply::error(429, "rate_limit_exceeded", "Rate limit reached for requests");
        match retry_after_secs {
            Some(secs) => reply.with_header("Retry-After", &secs.to_string()),
            None => reply,
        }
    }

    /// An error in OpenAI's form (`{"error": {message, type, param, code}}`).
    pub fn error(status: u16, code: &str, message: &str) -> FakeReply {
        let body = json!({"error": {"message": message, "type": code, "param": null, "code": code}});
        FakeReply::raw(status, body.to_string())
    }

    /// This reply with one more header.
    pub fn with_header(self, name: &str, value: &str) -> FakeReply {
        match self {
            FakeReply::Http { status, mut headers, body } => {
                headers.push((name.to_string(), value.to_string()));
                FakeReply::Http { status, headers, body }
            }
            other => other,
        }
    }
}

/// The chunks of [`FakeReply::streamed`].
pub fn streamed_chunks(
    content: &[&str],
    calls: &[StreamedCall<'_>],
    usage: Option<(u32, u32)>,
) -> Vec<Value> {
    let mut chunks =
        vec![if content.is_empty() { chunk::role_then_calls() } else { chunk::role_then_text() }];
    chunks.extend(content.iter().map(|piece| chunk::content(piece)));
    for (index, call) in (0_u32..).zip(calls) {
        let (first, rest) = call.arguments.split_first().map_or(("", &[][..]), |(f, r)| (*f, r));
        chunks.push(chunk::tool_call(index, call.id, call.name, first));
        chunks.extend(rest.iter().map(|piece| chunk::tool_arguments(index, piece)));
    }
    chunks.push(chunk::finish(if calls.is_empty() { "stop" } else { "tool_calls" }));
    if let Some((prompt, completion)) = usage {
        chunks.push(chunk::usage(prompt, completion));
    }
    chunks
}

/// A chat completion envelope around one choice, with usage 10/5.
fn completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_727_346_000,
        "model": "fake-model",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
}
