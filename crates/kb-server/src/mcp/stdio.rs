//! `kb mcp`'s stdio: newline-delimited JSON-RPC between the client and rmcp, with the
//! lines rmcp would drop in silence answered instead. A line that is not JSON gets a
//! JSON-RPC parse error (-32700) and a line longer than [`MAX_MESSAGE_BYTES`] an invalid
//! request (-32600), each also logged on stderr; the connection stays up. Everything
//! else passes through unchanged, and the answers reach stdout whole, one line at a time.
//!
//! Once kb could not be opened, every request that comes after (`initialize` included) is
//! answered here with the reason (-32603), notifications are dropped, and the connection
//! stays up until the client leaves: a client always hears why.

use std::sync::Arc;

use bytes::BytesMut;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::codec::{Decoder, LinesCodec, LinesCodecError};

use super::{MAX_MESSAGE_BYTES, Opening, not_opened};

/// How much of a client's input or rmcp's output may wait in memory between the two.
const PIPE_BYTES: usize = 256 * 1024;

/// The two ends rmcp works on, and the tasks that connect them to `input` and `output`.
pub struct Framed {
    /// What rmcp reads: the client's well-formed lines.
    pub server_in: tokio::io::DuplexStream,
    /// What rmcp writes: its messages, copied to `output`.
    pub server_out: tokio::io::DuplexStream,
    /// Ends when the client's input ended and every answer was written.
    pub done: tokio::task::JoinHandle<()>,
}

/// Connects rmcp to `input` and `output` through the checks above, answering every
/// request itself once `opening` says kb could not be opened.
pub fn frame<R, W>(input: R, output: W, opening: Opening) -> Framed
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (server_in, to_server) = tokio::io::duplex(PIPE_BYTES);
    let (server_out, from_server) = tokio::io::duplex(PIPE_BYTES);
    let (refusals, refused) = mpsc::unbounded_channel();
    let reading = tokio::spawn(read_client(input, to_server, refusals, opening));
    let writing = tokio::spawn(write_client(from_server, refused, output));
    let done = tokio::spawn(async move {
        let _ = reading.await;
        let _ = writing.await;
    });
    Framed { server_in, server_out, done }
}

/// Reads the client's lines: well-formed ones go to rmcp, the others become refusals.
async fn read_client<R>(
    mut input: R,
    mut to_server: tokio::io::DuplexStream,
    refusals: mpsc::UnboundedSender<String>,
    opening: Opening,
) where
    R: AsyncRead + Unpin,
{
    let mut codec = LinesCodec::new_with_max_length(MAX_MESSAGE_BYTES);
    let mut buffer = BytesMut::with_capacity(64 * 1024);
    loop {
        let line = match codec.decode(&mut buffer) {
            Ok(Some(line)) => Some(line),
            Ok(None) => match input.read_buf(&mut buffer).await {
                Ok(0) => match codec.decode_eof(&mut buffer) {
                    Ok(Some(line)) => Some(line),
                    _ => break,
                },
                Ok(_) => continue,
                Err(error) => {
                    tracing::warn!(%error, "cannot read from the MCP client");
                    break;
                }
            },
            Err(LinesCodecError::MaxLineLengthExceeded) => {
                tracing::warn!(limit = MAX_MESSAGE_BYTES, "refused an MCP message larger than the limit");
                let _ =
                    refusals.send(refusal(-32600, &format!("message larger than {MAX_MESSAGE_BYTES} bytes")));
                continue;
            }
            Err(LinesCodecError::Io(error)) => {
                // The only I/O error of decoding: a line that is not UTF-8.
                tracing::warn!(%error, "refused an MCP message that is not UTF-8");
                let _ = refusals.send(refusal(-32700, "parse error: the message is not UTF-8"));
                continue;
            }
        };
        let Some(line) = line else { continue };
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let message = match serde_json::from_str::<serde_json::Value>(trimmed) {
            Ok(message) => message,
            Err(error) => {
                tracing::warn!(%error, "refused an MCP message that is not JSON");
                let _ = refusals
                    .send(refusal(-32700, &format!("parse error: the message is not JSON ({error})")));
                continue;
            }
        };
        let failed = match opening.borrow().as_ref() {
            Some(Err(why)) => Some(Arc::clone(why)),
            _ => None,
        };
        if let Some(why) = failed {
            // A request (a method and an id) is answered why; a notification or an answer
            // to kb needs no reply.
            if let (Some(_), Some(id)) = (message.get("method"), message.get("id")) {
                let _ = refusals.send(answer_error(id, -32603, &not_opened(&why)));
            }
            continue;
        }
        let passed = async {
            to_server.write_all(trimmed.as_bytes()).await?;
            to_server.write_all(b"\n").await?;
            to_server.flush().await
        };
        if passed.await.is_err() {
            break;
        }
    }
    // rmcp sees the end of the input and finishes.
    let _ = to_server.shutdown().await;
}

/// A JSON-RPC error answer without an id (the message could not be read).
fn refusal(code: i64, message: &str) -> String {
    answer_error(&serde_json::Value::Null, code, message)
}

/// A JSON-RPC error answer to the request numbered `id`.
fn answer_error(id: &serde_json::Value, code: i64, message: &str) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }).to_string()
}

/// Writes rmcp's lines and the refusals to the client, each line whole.
async fn write_client<W>(
    from_server: tokio::io::DuplexStream,
    mut refused: mpsc::UnboundedReceiver<String>,
    mut output: W,
) where
    W: AsyncWrite + Unpin,
{
    let mut lines = BufReader::new(from_server).lines();
    let mut refusals_open = true;
    loop {
        let line = tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(line)) => line,
                // The server is done: the refusals already made are still answered.
                _ => break,
            },
            refusal = refused.recv(), if refusals_open => match refusal {
                Some(line) => line,
                None => {
                    refusals_open = false;
                    continue;
                }
            },
        };
        if write_line(&mut output, &line).await.is_err() {
            return;
        }
    }
    while let Ok(line) = refused.try_recv() {
        if write_line(&mut output, &line).await.is_err() {
            return;
        }
    }
}

async fn write_line<W: AsyncWrite + Unpin>(output: &mut W, line: &str) -> std::io::Result<()> {
    output.write_all(line.as_bytes()).await?;
    output.write_all(b"\n").await?;
    output.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bad_lines_are_answered_and_good_ones_pass_whole() {
        let (mut client, input) = tokio::io::duplex(PIPE_BYTES);
        let (output, mut answers) = tokio::io::duplex(PIPE_BYTES);
        let (_, opening) = tokio::sync::watch::channel(None);
        let framed = frame(input, output, opening);
        let (mut server_reads, mut server_writes) = (framed.server_in, framed.server_out);
        let oversize = "x".repeat(MAX_MESSAGE_BYTES + 10);
        let sent =
            format!("{{not json\n{oversize}\n\n{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}\n");
        let writer = tokio::spawn(async move {
            client.write_all(sent.as_bytes()).await?;
            client.shutdown().await
        });
        let mut passed = String::new();
        server_reads.read_to_string(&mut passed).await.unwrap_or_default();
        assert_eq!(passed, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
        assert!(writer.await.is_ok_and(|r| r.is_ok()));
        server_writes.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n").await.unwrap_or_default();
        server_writes.shutdown().await.unwrap_or_default();
        drop(server_writes);
        let _ = framed.done.await;
        let mut out = String::new();
        answers.read_to_string(&mut out).await.unwrap_or_default();
        let lines: Vec<serde_json::Value> =
            out.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        assert_eq!(lines.len(), 3, "{out}");
        let codes: Vec<_> = lines.iter().filter_map(|l| l["error"]["code"].as_i64()).collect();
        assert_eq!(codes, [-32700, -32600]);
        assert!(lines.iter().any(|l| l["id"] == 1 && l["result"].is_object()));
    }

    #[tokio::test]
    async fn once_kb_cannot_be_opened_every_request_hears_why() {
        let (mut client, input) = tokio::io::duplex(PIPE_BYTES);
        let (output, mut answers) = tokio::io::duplex(PIPE_BYTES);
        let (_, opening) = tokio::sync::watch::channel(Some(Err(Arc::from("/tmp/x is not a folder"))));
        let framed = frame(input, output, opening);
        let (mut server_reads, server_writes) = (framed.server_in, framed.server_out);
        let sent = concat!(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"method\":\"tools/list\"}\n",
        );
        client.write_all(sent.as_bytes()).await.unwrap_or_default();
        client.shutdown().await.unwrap_or_default();
        let mut passed = String::new();
        server_reads.read_to_string(&mut passed).await.unwrap_or_default();
        assert_eq!(passed, "", "nothing reaches rmcp");
        drop(server_writes);
        let _ = framed.done.await;
        let mut out = String::new();
        answers.read_to_string(&mut out).await.unwrap_or_default();
        let lines: Vec<serde_json::Value> =
            out.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let ids: Vec<_> = lines.iter().map(|l| l["id"].clone()).collect();
        assert_eq!(ids, [json!(1), json!("two")], "{out}");
        for line in &lines {
            assert_eq!(line["error"]["code"], -32603, "{line}");
            assert_eq!(line["error"]["message"], "kb could not be opened: /tmp/x is not a folder", "{line}");
        }
    }
}
