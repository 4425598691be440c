//! `kb serve` as a person starts and stops it: on the default vault `kb` of the folder it
//! runs in (commands there are answered by it), refusing a token that could never match or
//! that would travel in clear text, and stopping promptly on SIGTERM or Ctrl-C while a
//! client holds half a request, with the chat turn under way still answered whole.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use kb_llm::testing::FakeReply;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use crate::common::{self, KbServer};

/// How long kb serve may take to stop once nothing it answers is under way.
const STOPS_WITHIN: Duration = Duration::from_secs(5);
/// How long kb serve may take to refuse a setting (it does before opening the vault).
const REFUSES_WITHIN: Duration = Duration::from_secs(20);

/// `kb ARGS…` run in `dir`, with no setting from the environment that names a vault,
/// a model or a token.
fn kb_in(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "KB_MODEL",
        "KB_DIR",
        "DATABASE_URL",
        "KB_API_TOKEN",
        "KB_ALLOW_PLAIN_HTTP",
        "KB_ADDR",
        "KB_NO_SERVER",
        "KB_TLS_CERT",
        "KB_TLS_KEY",
        "KB_EMBEDDINGS_MODEL",
    ] {
        command.env_remove(var);
    }
    command.current_dir(dir).args(args).stdin(Stdio::null());
    command
}

/// Starts `command` (a `kb serve` on `addr`) and waits until `/healthz` answers.
async fn started(mut command: Command, addr: SocketAddr, log: &Path) -> Child {
    let mut child =
        command.stdout(Stdio::null()).stderr(std::fs::File::create(log).unwrap()).spawn().unwrap();
    if !common::wait_ready(addr, &mut child).await {
        let _ = child.kill();
        panic!("kb serve did not start: {}", std::fs::read_to_string(log).unwrap_or_default());
    }
    child
}

/// The output of `command` if it ends within [`REFUSES_WITHIN`]; panics (killing it)
/// when it goes on running.
fn ended(mut command: Command) -> Output {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + REFUSES_WITHIN;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() >= deadline {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!("kb serve started instead of refusing: {}", String::from_utf8_lossy(&output.stderr));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beside_kb_serve_on_the_default_vault_a_command_is_answered_by_it() {
    // A fresh folder, no KB_DIR: `kb serve` and `kb search` both use `kb` in it.
    let work = tempfile::tempdir().unwrap();
    let addr: SocketAddr = format!("127.0.0.1:{}", common::free_port()).parse().unwrap();
    let mut serve = kb_in(work.path(), &["serve", "--addr", &addr.to_string()]);
    serve.env("RUST_LOG", "info");
    let mut server = started(serve, addr, &work.path().join("serve.log")).await;
    assert!(work.path().join("kb").is_dir(), "kb serve made no vault `kb` in its folder");
    // An edit made the instant before the command is in its answer.
    std::fs::create_dir_all(work.path().join("kb/ideas")).unwrap();
    std::fs::write(work.path().join("kb/ideas/quokka.md"), "---\nname: Quokka\n---\nA quokka smiled.\n")
        .unwrap();

    let began = Instant::now();
    let output = kb_in(work.path(), &["search", "quokka", "--json"])
        .env("RUST_LOG", "warn,kb::commands::forward=debug")
        .output()
        .unwrap();
    let took = began.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        !stderr.contains("declined"),
        "kb serve declined, the command opened the vault ({took:?}): {stderr}"
    );
    assert!(stderr.contains("answered by kb serve"), "not answered by kb serve ({took:?}): {stderr}");
    let found: Value = serde_json::from_slice(&output.stdout).unwrap();
    let paths: Vec<&str> =
        found["entries"].as_array().unwrap().iter().filter_map(|e| e["path"].as_str()).collect();
    assert_eq!(paths, ["ideas/quokka.md"], "{found}");
}

#[test]
fn a_token_with_spaces_around_it_stops_kb_serve_with_a_clear_message() {
    let work = tempfile::tempdir().unwrap();
    let addr = format!("127.0.0.1:{}", common::free_port());
    let mut serve = kb_in(work.path(), &["serve", "--addr", &addr]);
    serve.env("KB_API_TOKEN", " s3cret ");
    let output = ended(serve);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("KB_API_TOKEN") && stderr.contains("white space"), "{stderr}");
    assert!(!work.path().join("kb").exists(), "the vault was opened before the refusal");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_beyond_loopback_over_plain_http_needs_consent_and_is_warned_of() {
    let work = tempfile::tempdir().unwrap();
    let port = common::free_port();
    let everywhere = format!("0.0.0.0:{port}");

    let mut serve = kb_in(work.path(), &["serve", "--addr", &everywhere]);
    serve.env("KB_API_TOKEN", "s3cret");
    let output = ended(serve);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("clear text") && stderr.contains("KB_ALLOW_PLAIN_HTTP=1"), "{stderr}");
    assert!(stderr.contains("--tls-cert"), "{stderr}");

    // With consent it serves, and says so at start and in /healthz.
    let mut serve = kb_in(work.path(), &["serve", "--addr", &everywhere]);
    serve.env("KB_API_TOKEN", "s3cret").env("KB_ALLOW_PLAIN_HTTP", "1").env("RUST_LOG", "info");
    let log = work.path().join("serve.log");
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut server = started(serve, addr, &log).await;
    let health = common::send(addr, "GET", "/healthz", &[], None).await.unwrap();
    let answered =
        common::send(addr, "GET", "/api/entries", &[("Authorization", "Bearer s3cret")], None).await;
    let _ = server.kill();
    let _ = server.wait();
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("WARN") && logged.contains("clear text"), "{logged}");
    let health = health.expect(200);
    let notices: Vec<&str> = health["notices"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(notices.iter().any(|n| n.contains("clear text") && n.contains("--tls-cert")), "{health}");
    assert_eq!(answered.unwrap().status, 200);
}

/// Opens a connection to `addr` and sends half a request head, as a stalled client does.
async fn half_a_request(addr: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nAccept: ").as_bytes()).await.unwrap();
    stream
}

/// Whether the server closed `stream` (it reads the end, or a reset) within a second,
/// whatever it still had to read.
async fn closed(stream: &mut TcpStream) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    let mut buffer = [0_u8; 4096];
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
            Err(_) => return false,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_a_request_does_not_hold_kb_serve_when_it_stops() {
    let mut kb = KbServer::start(&[]).await;
    let mut half = half_a_request(kb.addr).await;
    // And a connection left open after its answer (a browser keeps them).
    let mut idle = TcpStream::connect(kb.addr).await.unwrap();
    idle.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n", kb.addr).as_bytes()).await.unwrap();
    let mut answer = [0_u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(10), idle.read(&mut answer)).await;
    assert!(read.is_ok_and(|r| r.is_ok_and(|n| n > 0)), "no answer on the kept connection");
    tokio::time::sleep(Duration::from_millis(300)).await;

    let began = Instant::now();
    kb.signal("TERM");
    let status = kb.exited_within(STOPS_WITHIN).await;
    assert!(status.is_some(), "kb serve still runs {STOPS_WITHIN:?} after SIGTERM:\n{}", kb.log());
    assert!(status.is_some_and(|s| s.success()), "{status:?}\n{}", kb.log());
    assert!(closed(&mut half).await, "the half request's connection is still open");
    assert!(closed(&mut idle).await, "the idle connection is still open");
    println!("stopped in {:?}", began.elapsed());
}

/// A model whose first answer waits until it is released; later requests are answered
/// at once (with the same text).
struct HeldModel {
    addr: SocketAddr,
    asked: Option<oneshot::Receiver<()>>,
    release: Option<oneshot::Sender<()>>,
}

/// The held answer's text.
const HELD_ANSWER: &str = "Held until the very end.";

impl HeldModel {
    async fn start() -> HeldModel {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (asked_tx, asked) = oneshot::channel();
        let (release, released) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let mut hold = Some((asked_tx, released));
            while let Ok((stream, _)) = listener.accept().await {
                let held = hold.take();
                tokio::spawn(async move {
                    let mut stream = stream;
                    let Some(streams) = read_request(&mut stream).await else { return };
                    if let Some((asked, released)) = held {
                        let _ = asked.send(());
                        let _ = released.await;
                    }
                    let _ = stream.write_all(answer(streams).as_bytes()).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        HeldModel { addr, asked: Some(asked), release: Some(release) }
    }

    fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Waits until kb asked the model.
    async fn asked(&mut self) {
        let asked = self.asked.take().unwrap();
        tokio::time::timeout(Duration::from_secs(30), asked)
            .await
            .expect("kb never asked the model")
            .unwrap();
    }

    fn release(&mut self) {
        let _ = self.release.take().unwrap().send(());
    }
}

/// Reads one request (head and `Content-Length` body); whether it asks for a stream.
async fn read_request(stream: &mut TcpStream) -> Option<bool> {
    let mut raw = Vec::new();
    let mut chunk = [0_u8; 8192];
    loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        raw.extend_from_slice(&chunk[..n]);
        let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
        let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if raw.len() >= end + 4 + length {
            let body: Value = serde_json::from_slice(&raw[end + 4..end + 4 + length]).unwrap_or(Value::Null);
            return Some(body["stream"] == true);
        }
    }
}

/// The whole HTTP answer with [`HELD_ANSWER`], streamed or not, the connection closed after.
fn answer(streams: bool) -> String {
    let reply =
        if streams { FakeReply::streamed(&[HELD_ANSWER], &[], None) } else { FakeReply::text(HELD_ANSWER) };
    match reply {
        FakeReply::Stream { events, .. } => {
            let mut body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
            body.push_str("data: [DONE]\n\n");
            format!("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{body}")
        }
        FakeReply::Http { body, .. } => format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        ),
        other => panic!("unexpected reply {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_turn_under_way_is_answered_whole_when_kb_serve_stops() {
    let mut model = HeldModel::start().await;
    let base = model.base_url();
    let mut kb = KbServer::start(&[
        ("OPENAI_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", base.as_str()),
        ("KB_MODEL", "test-model"),
    ])
    .await;
    let addr = kb.addr;
    let body = json!({"message": "what should I do today?"}).to_string();
    let turn = tokio::spawn(async move {
        common::send(addr, "POST", "/api/chat", &[("Accept", "text/event-stream")], Some(body.as_bytes()))
            .await
    });
    model.asked().await;
    let mut half = half_a_request(addr).await;
    tokio::time::sleep(Duration::from_millis(200)).await;

    kb.signal("INT");
    // The turn is under way: kb serve waits for it.
    assert!(kb.exited_within(Duration::from_secs(1)).await.is_none(), "kb serve left a turn unanswered");
    model.release();
    let reply = tokio::time::timeout(Duration::from_secs(30), turn).await.expect("the turn never ended");
    let reply = reply.unwrap().expect("the turn's connection failed");
    assert_eq!(reply.status, 200, "{}", reply.text());
    let text = reply.text();
    assert!(text.contains("message.completed") && text.contains(HELD_ANSWER), "{text}");
    let status = kb.exited_within(STOPS_WITHIN).await;
    assert!(status.is_some(), "kb serve still runs after the turn ended:\n{}", kb.log());
    assert!(closed(&mut half).await, "the half request's connection is still open");
}
