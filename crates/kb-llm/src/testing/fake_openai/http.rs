//! The fake server's side of one connection: reading the request, and writing a scripted
//! reply (a JSON body, a stream, or nothing at all).

use std::time::Instant;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::chunk;
use super::reply::FakeReply;
use super::server::RecordedRequest;

/// The longest request head accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// A scripted 200 chat completion sent to a request that asked for a stream: the same answer
/// streamed, its text in word pieces, each tool call in one chunk, its usage last. Other
/// replies (errors, bodies that are no chat completion, streams) go out as they are.
pub(super) fn as_stream(reply: FakeReply) -> FakeReply {
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
    let mut chunks = vec![if text.is_some() { chunk::role_then_text() } else { chunk::role_then_calls() }];
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

/// Writes `reply` to `stream` (waiting forever for the replies that hang).
pub(super) async fn write_reply(stream: &mut TcpStream, reply: FakeReply) {
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

/// Reads one request (head and `Content-Length` body); `None` on a broken connection.
pub(super) async fn read_request(stream: &mut TcpStream) -> Option<RecordedRequest> {
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

/// The reason phrase of `status`.
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
