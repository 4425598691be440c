//! A slow OpenAI-compatible model on 127.0.0.1, for watching a turn in the browser while it
//! runs: asked to chat, it calls `classify_and_capture`; the classifier's answer takes
//! [`CLASSIFY_DELAY`]; the answer after the tool comes in [`ANSWER_PIECES`], one every
//! [`PIECE_DELAY`] — as a stream of chunks when the request asks for one (`"stream": true`),
//! else as one completion once all of them would have been sent.
//!
//! It picks its reply by the request: a `response_format` is the classifier; a conversation
//! that ends with a tool result gets the answer; one that ends with a message saying
//! [`CUT_OFF`] gets the start of an answer, then the connection drops; any other gets the
//! tool call.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// How long the classifier's answer takes (the tool's line shows it running meanwhile).
pub const CLASSIFY_DELAY: Duration = Duration::from_millis(1200);
/// The time between two pieces of the answer.
pub const PIECE_DELAY: Duration = Duration::from_millis(350);
/// The answer, as the model writes it: pieces split mid-word and mid-markup.
pub const ANSWER_PIECES: [&str; 5] =
    ["Filed **Renew pass", "port** in admin/renew-", "passport.md", " — due *Dec", " 15*."];

/// A message asking for an answer that is cut off: two pieces, then the connection drops.
pub const CUT_OFF: &str = "cut off";
/// The pieces sent before the cut.
pub const CUT_OFF_PIECES: [&str; 2] = ["Half an", " answer"];

/// The server; it stops when dropped.
pub struct SlowModel {
    base_url: String,
    streamed: Arc<Mutex<Vec<bool>>>,
    task: JoinHandle<()>,
}

impl SlowModel {
    /// Starts it on a free port; `captured` is the text its tool call files.
    pub async fn start(captured: &str) -> SlowModel {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let streamed = Arc::new(Mutex::new(Vec::new()));
        let (seen, captured) = (Arc::clone(&streamed), captured.to_string());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(answer(stream, captured.clone(), Arc::clone(&seen)));
            }
        });
        SlowModel { base_url, streamed, task }
    }

    /// The API root (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Whether the answer was asked for as a stream (`None`: it was not asked for yet).
    pub fn answer_streamed(&self) -> Option<bool> {
        self.streamed.lock().unwrap().last().copied()
    }
}

impl Drop for SlowModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(mut stream: TcpStream, captured: String, streamed: Arc<Mutex<Vec<bool>>>) {
    let Some(request) = read_body(&mut stream).await else {
        return;
    };
    let wants_stream = request["stream"] == json!(true);
    let last = request["messages"].as_array().and_then(|m| m.last()).cloned().unwrap_or_default();
    let has_tool_result = last["role"] == "tool";
    if last["role"] == "user" && last["content"].as_str().is_some_and(|c| c.contains(CUT_OFF)) {
        // Two pieces of an answer, then the connection drops (a JSON request gets nothing).
        if wants_stream {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
            let _ = stream.write_all(head.as_bytes()).await;
            for piece in CUT_OFF_PIECES {
                let _ = send_chunk(&mut stream, &json!({"role": "assistant", "content": piece}), None).await;
                tokio::time::sleep(PIECE_DELAY).await;
            }
        }
        return;
    }
    let (message, finish, pieces): (Value, &str, Vec<String>) = if request.get("response_format").is_some() {
        tokio::time::sleep(CLASSIFY_DELAY).await;
        let classification = json!({
            "category": "admin", "confidence": 0.9, "name": "Renew passport", "tags": [],
            "fields": {"context": null, "follow_ups": [], "status": null,
                       "next_action": null, "due_date": "2026-12-15", "one_liner": null}
        });
        let content = classification.to_string();
        (json!({"role": "assistant", "content": content}), "stop", vec![content])
    } else if has_tool_result {
        streamed.lock().unwrap().push(wants_stream);
        if !wants_stream {
            tokio::time::sleep(PIECE_DELAY * ANSWER_PIECES.len() as u32).await;
        }
        let content = ANSWER_PIECES.concat();
        (json!({"role": "assistant", "content": content}), "stop", ANSWER_PIECES.map(str::to_string).to_vec())
    } else {
        let call = json!({
            "id": "call_1", "type": "function",
            "function": {"name": "classify_and_capture", "arguments": json!({"text": captured}).to_string()}
        });
        (json!({"role": "assistant", "content": null, "tool_calls": [call]}), "tool_calls", Vec::new())
    };
    if !wants_stream {
        let body = json!({
            "id": "chatcmpl-slow", "object": "chat.completion", "created": 1_727_346_000, "model": "slow-model",
            "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        })
        .to_string();
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes()).await;
        let _ = stream.write_all(body.as_bytes()).await;
        let _ = stream.shutdown().await;
        return;
    }
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
    if stream.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let mut deltas: Vec<Value> = Vec::new();
    if let Some(calls) = message["tool_calls"].as_array() {
        let calls: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(index, call)| {
                let mut call = call.clone();
                call["index"] = json!(index);
                call
            })
            .collect();
        deltas.push(json!({"role": "assistant", "tool_calls": calls}));
    } else {
        deltas.extend(pieces.iter().map(|piece| json!({"role": "assistant", "content": piece})));
    }
    for (n, delta) in deltas.into_iter().enumerate() {
        if n > 0 && has_tool_result {
            tokio::time::sleep(PIECE_DELAY).await;
        }
        if send_chunk(&mut stream, &delta, None).await.is_err() {
            return;
        }
    }
    if send_chunk(&mut stream, &json!({}), Some(finish)).await.is_err() {
        return;
    }
    let _ = stream.write_all(b"data: [DONE]\n\n").await;
    let _ = stream.shutdown().await;
}

async fn send_chunk(stream: &mut TcpStream, delta: &Value, finish: Option<&str>) -> std::io::Result<()> {
    let chunk = json!({
        "id": "chatcmpl-slow", "object": "chat.completion.chunk", "created": 1_727_346_000, "model": "slow-model",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]
    });
    stream.write_all(format!("data: {chunk}\n\n").as_bytes()).await?;
    stream.flush().await
}

/// Reads one request (head and `Content-Length` body); its body as JSON.
async fn read_body(stream: &mut TcpStream) -> Option<Value> {
    let mut buffer = Vec::new();
    let mut chunk = [0_u8; 8192];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let read = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let read = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        body.extend_from_slice(&chunk[..read]);
    }
    serde_json::from_slice(&body).ok()
}
