//! What kb's MCP server does with bad input, sent raw (no SDK smoothing it over): lines
//! that are not JSON, messages too large, unknown methods and tools, params that do not
//! fit, requests without the token, and a client that hangs up mid-call. Each gets a
//! clear error, the server stays up, and nothing is left half-written.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{self, KbServer, assert_parses};

/// How long one answer may take.
const ANSWER_WITHIN: Duration = Duration::from_secs(20);
/// Larger than kb's limit for one message (4 MiB).
const OVERSIZE: usize = 5 * 1024 * 1024;

/// `kb mcp` with its stdin and stdout in hand.
struct RawStdio {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl RawStdio {
    fn start(vault: &Path) -> RawStdio {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kb"))
            .arg("mcp")
            .env("KB_DIR", vault)
            .env_remove("OPENAI_API_KEY")
            .env_remove("KB_MODEL")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        RawStdio { stdin: child.stdin.take(), child, lines }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message kb writes: every line on stdout must be JSON-RPC.
    fn answer(&self) -> Value {
        let line = self.lines.recv_timeout(ANSWER_WITHIN).expect("kb mcp answered nothing");
        let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        let answer = self.answer();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

fn initialize(kb: &mut RawStdio) {
    let answer = kb.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
    );
    assert_eq!(answer["result"]["serverInfo"]["name"], "kb", "{answer}");
    kb.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
}

fn error_of(answer: &Value) -> (i64, String) {
    let error = &answer["error"];
    let message = error["message"].as_str().unwrap_or_default().to_string();
    assert!(!message.is_empty(), "an error without a message: {answer}");
    (error["code"].as_i64().unwrap_or_default(), message)
}

#[test]
fn bad_lines_on_stdio_get_clear_errors_and_the_server_stays_up() {
    let dir = tempfile::tempdir().unwrap();
    let mut kb = RawStdio::start(dir.path());
    initialize(&mut kb);

    kb.send("{not json");
    let (code, message) = error_of(&kb.answer());
    assert_eq!(code, -32700, "{message}");
    assert!(message.contains("not JSON"), "{message}");

    kb.send(&"x".repeat(OVERSIZE));
    let (code, message) = error_of(&kb.answer());
    assert_eq!(code, -32600, "{message}");
    assert!(message.contains("larger than"), "{message}");

    let (code, message) = error_of(&kb.request(2, "vault/format", json!({})));
    assert_eq!((code, message.as_str()), (-32601, "Unknown method: vault/format"));

    let (code, message) =
        error_of(&kb.request(3, "tools/call", json!({"name": "get_entry", "arguments": 5})));
    assert_eq!(code, -32602, "{message}");
    assert!(message.contains("tools/call"), "{message}");

    let (code, message) =
        error_of(&kb.request(4, "tools/call", json!({"name": "format_disk", "arguments": {}})));
    assert_eq!((code, message.as_str()), (-32602, "Unknown tool: format_disk"));

    // A tool's own failure is a result the model can read.
    let answer =
        kb.request(5, "tools/call", json!({"name": "get_entry", "arguments": {"path": "../../etc/passwd"}}));
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let answer = kb.request(6, "resources/read", json!({"uri": "kb://entries/../../etc/passwd"}));
    assert_eq!(error_of(&answer).0, -32602);

    // Still serving.
    let answer = kb.request(7, "tools/list", json!({}));
    assert_eq!(answer["result"]["tools"].as_array().map(Vec::len), Some(13), "{answer}");
    assert_eq!(common::entry_files(dir.path()), Vec::<String>::new(), "bad input changed the vault");
    drop(kb.stdin.take());
    let _ = kb.child.wait();
}

#[test]
fn a_client_that_hangs_up_mid_call_leaves_the_capture_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut kb = RawStdio::start(dir.path());
    initialize(&mut kb);
    kb.send(
        &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "classify_and_capture",
            "arguments": {"text": "Met Priya Raman at the robotics meetup", "classification": {
                "category": "people", "confidence": 0.9, "name": "Priya Raman"}}}})
        .to_string(),
    );
    // The client goes away before the answer.
    drop(kb.stdin.take());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = kb.child.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < ANSWER_WITHIN, "kb mcp did not exit after its client hung up");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
    let text = assert_parses(dir.path(), "people/priya-raman.md");
    assert!(text.contains("source: mcp") && text.contains("robotics meetup"), "{text}");
    // Recorded too, with its MCP session: another client's undo does not reach it, and
    // `kb undo` (anyone's newest change) does.
    let mut next = RawStdio::start(dir.path());
    initialize(&mut next);
    let answer = next.request(2, "tools/call", json!({"name": "undo_last_change", "arguments": {}}));
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(dir.path().join("people/priya-raman.md").exists());
    drop(next.stdin.take());
    let _ = next.child.wait();
    let undone = std::process::Command::new(env!("CARGO_BIN_EXE_kb"))
        .env_remove("KB_DIR")
        .env_remove("DATABASE_URL")
        .arg("--kb-dir")
        .arg(dir.path())
        .args(["undo", "--json"])
        .output()
        .unwrap();
    assert!(undone.status.success(), "{}", String::from_utf8_lossy(&undone.stderr));
    let undone: Value = serde_json::from_slice(&undone.stdout).unwrap();
    assert_eq!(undone["by"], "mcp", "{undone}");
    assert!(!dir.path().join("people/priya-raman.md").exists());
}

/// The JSON-RPC messages of a streamable HTTP answer (SSE `data:` lines or a JSON body).
fn messages(reply: &common::Reply) -> Vec<Value> {
    let text = reply.text();
    if let Ok(value) = serde_json::from_str::<Value>(&text) {
        return vec![value];
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// A request in the MCP session `session`, with the token.
async fn in_session(server: &KbServer, session: &str, body: Value) -> common::Reply {
    let mut headers = MCP_HEADERS.to_vec();
    headers.extend([
        ("Authorization", "Bearer s3cret"),
        ("MCP-Protocol-Version", "2025-06-18"),
        ("Mcp-Session-Id", session),
    ]);
    server.request("POST", "/mcp", &headers, Some(body.to_string().as_bytes())).await
}

const MCP_HEADERS: [(&str, &str); 2] =
    [("Accept", "application/json, text/event-stream"), ("Content-Type", "application/json")];

#[tokio::test]
async fn bad_requests_to_mcp_over_http_are_refused_clearly_and_the_server_stays_up() {
    let server = KbServer::start(&[("KB_API_TOKEN", "s3cret")]).await;
    let auth = ("Authorization", "Bearer s3cret");
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut headers = MCP_HEADERS.to_vec();
        headers.extend_from_slice(extra);
        headers
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string();

    // No token, a wrong one: refused before MCP sees anything.
    let refused = server.request("POST", "/mcp", &with(&[]), Some(init.as_bytes())).await;
    assert_eq!(refused.status, 401, "{}", refused.text());
    let refused = server
        .request("POST", "/mcp", &with(&[("Authorization", "Bearer nope")]), Some(init.as_bytes()))
        .await;
    assert_eq!(refused.status, 401, "{}", refused.text());

    // Not JSON; too large: 4xx with a message.
    let garbage = server.request("POST", "/mcp", &with(&[auth]), Some(b"{not json")).await;
    assert!((400..500).contains(&garbage.status), "{} {}", garbage.status, garbage.text());
    assert!(garbage.text().contains("deserialize"), "{}", garbage.text());
    let huge = vec![b'x'; OVERSIZE];
    let too_large = server.request("POST", "/mcp", &with(&[auth]), Some(&huge)).await;
    assert_eq!(too_large.status, 413, "{}", too_large.text());

    // A session: an unknown method and an unknown tool are JSON-RPC errors.
    let opened = server.request("POST", "/mcp", &with(&[auth]), Some(init.as_bytes())).await;
    assert_eq!(opened.status, 200, "{}", opened.text());
    let session = opened.header("mcp-session-id").expect("a session id").to_string();
    let in_session = |body: Value| in_session(&server, &session, body);
    let reply = in_session(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(reply.status, 202, "{}", reply.text());
    let reply = in_session(json!({"jsonrpc": "2.0", "id": 2, "method": "vault/format"})).await;
    let answer = messages(&reply).into_iter().find(|m| m["id"] == 2).expect("an answer");
    assert_eq!(error_of(&answer), (-32601, "Unknown method: vault/format".to_string()));
    let reply =
        in_session(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "nope"}}))
            .await;
    let answer = messages(&reply).into_iter().find(|m| m["id"] == 3).expect("an answer");
    assert_eq!(error_of(&answer).0, -32602);

    // A client that sends a capture and hangs up without reading the answer.
    let call =
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "classify_and_capture",
        "arguments": {"text": "Renew the passport", "classification": {
            "category": "admin", "confidence": 0.9, "name": "Renew passport"}}}})
        .to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer s3cret\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nMCP-Protocol-Version: 2025-06-18\r\nMcp-Session-Id: {session}\r\n\
         Content-Length: {}\r\n\r\n{call}",
        server.addr,
        call.len()
    );
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.flush().await.unwrap();
        // The answer's stream has begun (the call was taken): hang up before its result.
        let mut first = [0u8; 12];
        tokio::time::timeout(ANSWER_WITHIN, stream.read_exact(&mut first)).await.unwrap().unwrap();
        assert_eq!(&first, b"HTTP/1.1 200");
    }
    let started = Instant::now();
    while !server.vault().join("admin/renew-passport.md").exists() {
        assert!(started.elapsed() < ANSWER_WITHIN, "the capture of a client that hung up was lost");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_parses(&server.vault(), "admin/renew-passport.md");

    // Still serving, MCP and the rest.
    assert_eq!(server.get("/healthz").await.status, 200);
    let reply = in_session(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})).await;
    let answer = messages(&reply).into_iter().find(|m| m["id"] == 5).expect("an answer");
    assert_eq!(answer["result"]["tools"].as_array().map(Vec::len), Some(13));
}

#[test]
fn a_vault_that_cannot_be_opened_is_named_to_every_request_until_the_client_leaves() {
    let dir = tempfile::tempdir().unwrap();
    // A file where the vault folder should be: kb cannot open it.
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "not a vault\n").unwrap();
    let mut kb = RawStdio::start(&file);
    // Opening fails in a few milliseconds: an initialize sent after is answered the reason.
    std::thread::sleep(Duration::from_secs(1));
    let init = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}});
    for (id, method, params) in [
        (1, "initialize", init),
        (2, "tools/list", json!({})),
        (3, "tools/call", json!({"name": "list_entries", "arguments": {}})),
        (4, "resources/read", json!({"uri": "kb://index"})),
        (5, "ping", json!({})),
    ] {
        let answer = kb.request(id, method, params);
        let (code, message) = error_of(&answer);
        assert_eq!(code, -32603, "{method}: {answer}");
        assert!(message.starts_with("kb could not be opened"), "{method}: {message}");
        assert!(message.contains("notes.txt"), "{method}: the reason names the path: {message}");
    }
    // A notification needs no answer; the next request still hears why.
    kb.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(error_of(&kb.request(6, "prompts/list", json!({}))).0, -32603);
    // Once the client leaves, kb mcp ends with the error.
    drop(kb.stdin.take());
    let deadline = Instant::now() + ANSWER_WITHIN;
    let status = loop {
        if let Some(status) = kb.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "kb mcp did not end once its client left");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!status.success(), "{status:?}");

    // A client that sends its requests and closes stdin at once still hears every answer.
    let mut kb = RawStdio::start(&file);
    std::thread::sleep(Duration::from_secs(1));
    kb.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
    kb.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    drop(kb.stdin.take());
    let mut ids: Vec<i64> =
        (0..2).map(|_| kb.answer()).map(|a| a["id"].as_i64().unwrap_or_default()).collect();
    ids.sort_unstable();
    assert_eq!(ids, [1, 2]);
    let _ = kb.child.wait();

    // A client that asks at once may have `initialize` answered before opening fails, but
    // the tool list waits for the vault: it is never a list no call would answer.
    let mut kb = RawStdio::start(&file);
    kb.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init_params()}).to_string());
    kb.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    kb.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let answers = [kb.answer(), kb.answer()];
    let listed = answers.iter().find(|a| a["id"] == 2).cloned().unwrap_or_default();
    assert_eq!(error_of(&listed).0, -32603, "tools/list answered before the vault was open: {listed}");
    drop(kb.stdin.take());
    let _ = kb.child.wait();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a vault\n", "the file was changed");
}

/// The parameters of a client's `initialize`.
fn init_params() -> serde_json::Value {
    json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}})
}
