//! Shared by the HTTP suites: a `kb serve` child process over a temporary vault (killed
//! when dropped) and a small HTTP/1.1 client over a raw TCP stream, so that request
//! targets reach the server exactly as written (`..`, `//`, `%00` are not normalised away
//! as a URL library would).

#![allow(dead_code)]

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long kb may take to answer `/healthz` after starting.
const START_TIMEOUT: Duration = Duration::from_secs(40);
/// How long one request may take (the slowest are the 429 retries, a few seconds).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(45);

/// The categories of the vault.
pub const CATEGORIES: [&str; 5] = ["people", "projects", "ideas", "admin", "inbox"];

/// A running `kb serve`, over `root/vault`, logging to `root/kb.log`.
pub struct KbServer {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    /// The temporary folder holding the log (and the vault, unless given).
    pub root: TempDir,
    /// The vault folder.
    vault: PathBuf,
}

impl KbServer {
    /// Starts `kb serve` with these extra environment variables (and no others that could
    /// reach a real model or another vault), and waits until `/healthz` answers.
    pub async fn start(env: &[(&str, &str)]) -> KbServer {
        KbServer::start_with_vault(env, |_| {}).await
    }

    /// [`KbServer::start`] on a vault folder that `prepare` fills first (files a person
    /// already had).
    pub async fn start_with_vault(env: &[(&str, &str)], prepare: impl FnOnce(&Path)) -> KbServer {
        let root = tempfile::tempdir().unwrap();
        let vault = root.path().join("vault");
        std::fs::create_dir_all(&vault).unwrap();
        prepare(&vault);
        KbServer::launch(root, vault, env).await
    }

    /// [`KbServer::start`] on the vault folder `vault`, which other kb processes may share.
    pub async fn start_on(vault: &Path, env: &[(&str, &str)]) -> KbServer {
        KbServer::launch(tempfile::tempdir().unwrap(), vault.to_path_buf(), env).await
    }

    async fn launch(root: TempDir, vault: PathBuf, env: &[(&str, &str)]) -> KbServer {
        let mut last_log = String::new();
        // A port picked free may be taken by someone else before kb binds it: try again.
        for _ in 0..3 {
            let port = free_port();
            let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
            let log = std::fs::File::create(root.path().join("kb.log")).unwrap();
            let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
            for var in [
                "OPENAI_API_KEY",
                "OPENAI_BASE_URL",
                "KB_MODEL",
                "KB_DIR",
                "DATABASE_URL",
                "KB_API_TOKEN",
                "KB_ADDR",
                "KB_LLM_TIMEOUT_SECS",
                "KB_CONFIDENCE_THRESHOLD",
                "KB_EMBEDDINGS_MODEL",
                "KB_EMBEDDINGS_BASE_URL",
                "KB_EMBEDDINGS_API_KEY",
                "KB_DATA_DIR",
            ] {
                command.env_remove(var);
            }
            command
                .env("RUST_LOG", "info")
                .envs(env.iter().copied())
                .arg("serve")
                .arg("--addr")
                .arg(addr.to_string())
                .arg("--kb-dir")
                .arg(&vault)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log);
            let mut child = command.spawn().unwrap();
            if wait_ready(addr, &mut child).await {
                return KbServer { child, addr, root, vault };
            }
            let _ = child.kill();
            let _ = child.wait();
            last_log = std::fs::read_to_string(root.path().join("kb.log")).unwrap_or_default();
        }
        panic!("kb serve did not answer /healthz within {START_TIMEOUT:?}; its log:\n{last_log}");
    }

    /// The vault folder.
    pub fn vault(&self) -> PathBuf {
        self.vault.clone()
    }

    /// Kills the process at once (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends the process the signal `name` (`TERM`, `INT`), as a service manager or a
    /// Ctrl-C would.
    pub fn signal(&self, name: &str) {
        let sent =
            Command::new("kill").arg("-s").arg(name).arg(self.child.id().to_string()).status().unwrap();
        assert!(sent.success(), "kill -s {name} failed");
    }

    /// Waits up to `limit` for the process to end: its exit status, or `None` if it still runs.
    pub async fn exited_within(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// What kb logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.root.path().join("kb.log")).unwrap_or_default()
    }

    /// Sends a request; `body` as given, with `Content-Type: application/json` (on every
    /// POST too) unless `headers` name another.
    pub async fn request(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Reply {
        let sent =
            tokio::time::timeout(REQUEST_TIMEOUT, send(self.addr, method, target, headers, body)).await;
        match sent {
            Ok(Ok(reply)) => reply,
            Ok(Err(error)) => panic!("{method} {target} failed: {error}\nkb log:\n{}", self.log()),
            Err(_) => panic!("{method} {target}: no answer within {REQUEST_TIMEOUT:?}"),
        }
    }

    /// `GET target`.
    pub async fn get(&self, target: &str) -> Reply {
        self.request("GET", target, &[], None).await
    }

    /// `DELETE target`.
    pub async fn delete(&self, target: &str) -> Reply {
        self.request("DELETE", target, &[], None).await
    }

    /// `POST target` with a JSON body.
    pub async fn post(&self, target: &str, body: &Value) -> Reply {
        self.request("POST", target, &[], Some(body.to_string().as_bytes())).await
    }

    /// `PATCH target` with a JSON body.
    pub async fn patch(&self, target: &str, body: &Value) -> Reply {
        self.request("PATCH", target, &[], Some(body.to_string().as_bytes())).await
    }

    /// The entry files on disk (`category/name.md`), sorted.
    pub fn entry_files(&self) -> Vec<String> {
        entry_files(&self.vault())
    }
}

impl Drop for KbServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `/healthz` until it answers 200 (true), the process ends or time runs out.
pub async fn wait_ready(addr: SocketAddr, child: &mut Child) -> bool {
    let deadline = Instant::now() + START_TIMEOUT;
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        let attempt =
            tokio::time::timeout(Duration::from_secs(2), send(addr, "GET", "/healthz", &[], None)).await;
        if let Ok(Ok(reply)) = attempt
            && reply.status == 200
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// A port nobody listened on a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Every `{category}/*.md` file under `vault`, relative and sorted.
pub fn entry_files(vault: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for category in CATEGORIES {
        let Ok(read) = std::fs::read_dir(vault.join(category)) else { continue };
        for item in read.flatten() {
            let name = item.file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") {
                files.push(format!("{category}/{name}"));
            }
        }
    }
    files.sort();
    files
}

/// An HTTP answer.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers, names in lowercase.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked).
    pub body: Vec<u8>,
}

impl Reply {
    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON; panics with the body when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}), status {}: {}", self.status, self.text()))
    }

    /// A header by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    /// Asserts the status and answers the JSON body.
    pub fn expect(&self, status: u16) -> Value {
        assert_eq!(self.status, status, "unexpected status; body: {}", self.text());
        self.json()
    }

    /// Asserts `status` with kb's error shape `{"error": {"code", "message"}}` and nothing
    /// of a Rust panic or source location in it; answers the code.
    pub fn expect_error(&self, status: u16) -> String {
        let body = self.expect(status);
        assert_error_shape(&body, &self.text());
        body["error"]["code"].as_str().unwrap().to_string()
    }
}

/// `{"error": {"code": non-empty string, "message": non-empty string}}` and no internals.
pub fn assert_error_shape(body: &Value, text: &str) {
    let error = body["error"].as_object().unwrap_or_else(|| panic!("no error object: {text}"));
    assert!(error["code"].as_str().is_some_and(|c| !c.is_empty()), "{text}");
    assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{text}");
    assert_eq!(body.as_object().unwrap().len(), 1, "{text}");
    for leak in ["panicked", "stack backtrace", "RUST_BACKTRACE", ".rs:", "src/", "thread '"] {
        assert!(!text.contains(leak), "the error body leaks {leak:?}: {text}");
    }
}

/// One request over a fresh connection (`Connection: close`), reading the answer to EOF.
/// The body is written while the answer is read, so that an early answer (413) is seen
/// even when the server stops reading.
pub async fn send(
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> std::io::Result<Reply> {
    let stream = TcpStream::connect(addr).await?;
    let (mut reader, mut writer) = stream.into_split();
    let mut head = format!("{method} {target} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let body = body.map(<[u8]>::to_vec);
    // kb's clients say JSON on every body, and on every POST (kb refuses a POST that does
    // not, body or not), unless the test names its own type.
    let typed = headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("content-type"));
    if !typed && (body.is_some() || method == "POST") {
        head.push_str("Content-Type: application/json\r\n");
    }
    if let Some(body) = &body {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    let write = async move {
        writer.write_all(head.as_bytes()).await?;
        if let Some(body) = body {
            writer.write_all(&body).await?;
        }
        writer.flush().await?;
        // Keep the write half open: shutting it could end the request early for the server.
        Ok::<_, std::io::Error>(writer)
    };
    let read = async move {
        let mut raw = Vec::new();
        let mut chunk = [0_u8; 16 * 1024];
        loop {
            match reader.read(&mut chunk).await {
                Ok(0) => break,
                Ok(n) => raw.extend_from_slice(&chunk[..n]),
                // A reset after the answer arrived (the server refused to read a large body).
                Err(error) if !raw.is_empty() => {
                    let _ = error;
                    break;
                }
                Err(error) => return Err(error),
            }
        }
        Ok(raw)
    };
    let (written, raw) = tokio::join!(write, read);
    let raw = raw?;
    if raw.is_empty() {
        written?;
        return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "empty answer"));
    }
    parse(&raw)
}

fn parse(raw: &[u8]) -> std::io::Result<Reply> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(|| bad("no end of head"))?;
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| bad("no status"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    let chunked = headers.iter().any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    if chunked {
        body = dechunk(&body).ok_or_else(|| bad("bad chunked body"))?;
    }
    Ok(Reply { status, headers, body })
}

fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n")?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

/// Percent-encodes a vault path for a URL (keeping `/`).
pub fn url_path(path: &str) -> String {
    let mut out = String::new();
    for byte in path.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// Percent-encodes a query value.
pub fn query_value(value: &str) -> String {
    url_path(value).replace('/', "%2F")
}

/// A vault file starts with frontmatter that closes: `---\n…\n---\n`.
pub fn assert_parses(vault: &Path, path: &str) -> String {
    let text = std::fs::read_to_string(vault.join(path)).unwrap();
    assert!(text.starts_with("---\n"), "{path} has no frontmatter:\n{text}");
    assert!(text[4..].contains("\n---\n"), "{path}'s frontmatter does not close:\n{text}");
    text
}
