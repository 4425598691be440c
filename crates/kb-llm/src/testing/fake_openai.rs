//! [`FakeOpenAi`]: a small HTTP/1.1 server on 127.0.0.1 that answers each request with the
//! next scripted [`FakeReply`] (or a standing one, for requests a test picks out by their
//! body) and records the request. A request asking for a stream (`"stream": true`) gets a
//! scripted chat completion streamed ([`FakeReply::stream`] scripts the chunks themselves).
//! It speaks just enough HTTP for
//! reqwest (one request per connection, `Content-Length` bodies, `Connection: close`).
//!
//! ```ignore
//! let server = FakeOpenAi::start().await?;
//! server.push(FakeReply::tool_calls(&[("call_1", "search", r#"{"query":"priya"}"#)]));
//! server.push(FakeReply::text("Priya is a designer."));
//! let settings = OpenAiSettings { base_url: Some(server.base_url()), ..OpenAiSettings::new("k", "m") };
//! ```

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use kb_domain::sync::lock;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// The longest request head accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;

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

/// The `chat.completion.chunk`s a streaming server sends, one builder per shape.
pub mod chunk {
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

    fn delta(delta: Value, finish_reason: Option<&str>) -> Value {
        with_choices(json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}]))
    }

    /// The first chunk: the role, and an empty text when `text` is set (as OpenAI sends
    /// before a text answer), none before tool calls.
    pub fn role(text: bool) -> Value {
        let content = if text { json!("") } else { Value::Null };
        delta(json!({"role": "assistant", "content": content}), None)
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
    let mut chunks = vec![chunk::role(!content.is_empty())];
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

/// A request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `POST`, …
    pub method: String,
    /// The path, such as `/v1/chat/completions`.
    pub path: String,
    /// The headers, names in lowercase.
    pub headers: Vec<(String, String)>,
    /// The body as text.
    pub body: String,
    /// When it arrived in full.
    pub received_at: Instant,
}

impl RecordedRequest {
    /// The body parsed as JSON (`Value::Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    /// A header's value, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }
}

/// Picks requests out by their JSON body.
type RequestTest = fn(&Value) -> bool;

#[derive(Debug, Default)]
struct Script {
    replies: VecDeque<FakeReply>,
    standing: Vec<(RequestTest, FakeReply)>,
    requests: Vec<RecordedRequest>,
}

impl Script {
    /// The answer to `request`: a standing reply whose test its body passes, else the next queued.
    fn reply_to(&mut self, request: &RecordedRequest) -> Option<FakeReply> {
        if !self.standing.is_empty() {
            let body = request.json();
            if let Some((_, reply)) = self.standing.iter().find(|(matches, _)| matches(&body)) {
                return Some(reply.clone());
            }
        }
        self.replies.pop_front()
    }
}

/// The scripted server; it stops when dropped.
#[derive(Debug)]
pub struct FakeOpenAi {
    addr: SocketAddr,
    script: Arc<Mutex<Script>>,
    task: JoinHandle<()>,
}

impl FakeOpenAi {
    /// Starts a server on a free port of 127.0.0.1.
    pub async fn start() -> std::io::Result<FakeOpenAi> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let script = Arc::new(Mutex::new(Script::default()));
        let task = tokio::spawn(serve(listener, Arc::clone(&script)));
        Ok(FakeOpenAi { addr, script, task })
    }

    /// The API root to configure the adapter with (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Queues the answer to a coming request. With nothing queued the server answers 500.
    pub fn push(&self, reply: FakeReply) {
        lock(&self.script).replies.push_back(reply);
    }

    /// Answers every coming request whose JSON body passes `matches` with `reply`, however
    /// often, without taking from the queue (summary calls whose timing a test leaves open).
    pub fn always_answer(&self, matches: RequestTest, reply: FakeReply) {
        lock(&self.script).standing.push((matches, reply));
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.script).requests.clone()
    }

    /// Drops the scripted replies still unused (a property test's next case starts clean).
    pub fn clear(&self) {
        lock(&self.script).replies.clear();
    }

    /// How many scripted replies are still unused.
    pub fn pending(&self) -> usize {
        lock(&self.script).replies.len()
    }
}

impl Drop for FakeOpenAi {
    fn drop(&mut self) {
        // Dropping the accept loop drops its JoinSet, which aborts every open connection.
        self.task.abort();
    }
}

async fn serve(listener: TcpListener, script: Arc<Mutex<Script>>) {
    let mut connections = JoinSet::new();
    while let Ok((stream, _)) = listener.accept().await {
        connections.spawn(answer(stream, Arc::clone(&script)));
        // Reap finished connections so the set does not grow without bound.
        while connections.try_join_next().is_some() {}
    }
}

async fn answer(mut stream: TcpStream, script: Arc<Mutex<Script>>) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    let asks_to_stream = request.json()["stream"] == true;
    let reply = {
        let mut script = lock(&script);
        let reply = script.reply_to(&request);
        script.requests.push(request);
        reply
    };
    let reply =
        reply.unwrap_or_else(|| FakeReply::error(500, "server_error", "fake server: no scripted reply"));
    let reply = if asks_to_stream { as_stream(reply) } else { reply };
    match reply {
        FakeReply::Hang => std::future::pending::<()>().await,
        FakeReply::StreamThenHang { events } => {
            let head =
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
            if stream.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            for data in events {
                let event = format!("data: {data}\n\n");
                let framed = format!("{:x}\r\n{event}\r\n", event.len());
                if stream.write_all(framed.as_bytes()).await.is_err() || stream.flush().await.is_err() {
                    return;
                }
            }
            std::future::pending::<()>().await;
        }
        FakeReply::Stream { events, complete } => {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                        transfer-encoding: chunked\r\nconnection: close\r\n\r\n";
            if stream.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            let mut events: Vec<String> = events.iter().map(|data| format!("data: {data}\n\n")).collect();
            if complete {
                events.push("data: [DONE]\n\n".to_string());
            }
            for event in events {
                // One HTTP chunk per event, flushed, so the client sees them arrive apart.
                let framed = format!("{:x}\r\n{event}\r\n", event.len());
                if stream.write_all(framed.as_bytes()).await.is_err() || stream.flush().await.is_err() {
                    return;
                }
            }
            if complete {
                let _ = stream.write_all(b"0\r\n\r\n").await;
            } else {
                // Half of a chunk, then the connection goes: the body never ends properly.
                let _ = stream.write_all(b"40\r\ndata: {\"id\":").await;
            }
            let _ = stream.shutdown().await;
        }
        FakeReply::Http { status, headers, body } => {
            let mut head = format!(
                "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                reason(status),
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            // The client may have gone (a timeout): nothing to do about a failed write.
            let _ = stream.write_all(head.as_bytes()).await;
            let _ = stream.write_all(body.as_bytes()).await;
            let _ = stream.shutdown().await;
        }
    }
}

/// A scripted 200 chat completion sent to a request that asked for a stream: the same answer
/// streamed, its text in word pieces, each tool call in one chunk, its usage last. Other
/// replies (errors, bodies that are no chat completion, streams) go out as they are.
fn as_stream(reply: FakeReply) -> FakeReply {
    let FakeReply::Http { status: 200, ref body, .. } = reply else {
        return reply;
    };
    let Ok(body) = serde_json::from_str::<Value>(body) else {
        return reply;
    };
    if body["object"] != "chat.completion" {
        return reply;
    }
    let message = &body["choices"][0]["message"];
    let text = message["content"].as_str();
    let mut chunks = vec![chunk::role(text.is_some())];
    if let Some(text) = text {
        let mut piece = String::new();
        for c in text.chars() {
            piece.push(c);
            if c == ' ' {
                chunks.push(chunk::content(&std::mem::take(&mut piece)));
            }
        }
        if !piece.is_empty() {
            chunks.push(chunk::content(&piece));
        }
    }
    let calls = message["tool_calls"].as_array().cloned().unwrap_or_default();
    for (index, call) in (0_u32..).zip(&calls) {
        let text =
            |pointer: &str| call.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_string();
        chunks.push(chunk::tool_call(
            index,
            &text("/id"),
            &text("/function/name"),
            &text("/function/arguments"),
        ));
    }
    chunks.push(chunk::finish(body["choices"][0]["finish_reason"].as_str().unwrap_or("stop")));
    if let Some(usage) = body.get("usage").filter(|u| u.is_object()) {
        let tokens = |key: &str| usage[key].as_u64().and_then(|n| u32::try_from(n).ok()).unwrap_or(0);
        chunks.push(chunk::usage(tokens("prompt_tokens"), tokens("completion_tokens")));
    }
    FakeReply::stream(chunks)
}

/// Reads one request (head and `Content-Length` body); `None` on a broken connection.
async fn read_request(stream: &mut TcpStream) -> Option<RecordedRequest> {
    let mut buffer = Vec::new();
    let mut chunk = [0_u8; 8192];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return None;
        }
        let read = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split_whitespace();
    let method = request_line.next()?.to_string();
    let path = request_line.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let read = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        body.extend_from_slice(&chunk[..read]);
    }
    let body = String::from_utf8_lossy(&body).into_owned();
    Some(RecordedRequest { method, path, headers, body, received_at: Instant::now() })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}
