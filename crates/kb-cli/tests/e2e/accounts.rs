//! Accounts: `kb users` and `kb tokens` in `KB_DATA_DIR`, and a `kb serve` that, once anyone
//! has an account, answers only requests carrying a person's token (loopback included),
//! refuses a revoked one at its next request, and will not start with `KB_API_TOKEN`.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{KbServer, free_port};

/// Runs `kb ARGS --json` with `KB_DATA_DIR=data`; its JSON answer.
pub(crate) fn kb(data: &Path, args: &[&str]) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_kb"))
        .args(args)
        .arg("--json")
        .env("KB_DATA_DIR", data)
        .env("KB_DIR", data.join("unused-vault"))
        .output()
        .unwrap();
    assert!(output.status.success(), "kb {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_anyone_has_an_account_every_request_needs_a_persons_token() {
    let data = tempfile::tempdir().unwrap();
    let first = kb(data.path(), &["users", "add", "Ana", "--admin", "--email", "ana@example.org"]);
    assert_eq!((first["name"].as_str(), first["first"].as_bool()), (Some("ana"), Some(true)), "{first}");
    kb(data.path(), &["users", "add", "bo"]);
    let issued = kb(data.path(), &["tokens", "issue", "ana", "--label", "phone"]);
    let secret = issued["token"].as_str().unwrap().to_string();
    let dir = data.path().to_string_lossy().into_owned();
    let server = KbServer::start(&[("KB_DATA_DIR", dir.as_str())]).await;

    let bearer = format!("Bearer {secret}");
    let without = server.get("/api/entries").await;
    assert_eq!(without.status, 401, "loopback without a token: {}", without.text());
    let wrong = server.request("GET", "/api/entries", &[("Authorization", "Bearer kb_guess")], None).await;
    assert_eq!(wrong.status, 401);
    let capture = server
        .request(
            "POST",
            "/api/capture",
            &[("Authorization", bearer.as_str()), ("Content-Type", "application/json")],
            Some(json!({"text": "[idea] a shared shopping list"}).to_string().as_bytes()),
        )
        .await;
    assert_eq!(capture.status, 200, "{}", capture.text());
    let listed = server.request("GET", "/api/entries", &[("Authorization", bearer.as_str())], None).await;
    assert_eq!(listed.status, 200);
    assert!(listed.text().contains("shopping list"), "{}", listed.text());
    let tokens = kb(data.path(), &["tokens", "list"]);
    assert_eq!(tokens["tokens"][0]["state"], "valid", "{tokens}");
    assert!(!tokens["tokens"][0]["lastUsedAt"].is_null(), "its last use is kept: {tokens}");
    assert!(!tokens.to_string().contains(&secret), "the secret is never shown again");

    // The CLI beside it acts as the vault's local owner, with no token.
    let local = Command::new(env!("CARGO_BIN_EXE_kb"))
        .args(["list", "--json"])
        .env("KB_DIR", server.vault())
        .output()
        .unwrap();
    assert!(local.status.success(), "{}", String::from_utf8_lossy(&local.stderr));
    assert!(String::from_utf8_lossy(&local.stdout).contains("shopping list"));

    // Revoked, it is refused at its next request, without a restart.
    kb(data.path(), &["tokens", "revoke", issued["id"].as_str().unwrap()]);
    let revoked = server.request("GET", "/api/entries", &[("Authorization", bearer.as_str())], None).await;
    assert_eq!(revoked.status, 401, "{}", revoked.text());

    // KB_API_TOKEN is refused at start once kb has accounts, saying what to do instead.
    let port = free_port().to_string();
    let refused = Command::new(env!("CARGO_BIN_EXE_kb"))
        .args(["serve", "--addr", &format!("127.0.0.1:{port}"), "--kb-dir"])
        .arg(server.vault())
        .env("KB_DATA_DIR", data.path())
        .env("KB_API_TOKEN", "shared-secret")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("kb tokens issue"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_accounts_kb_serves_as_before_and_writes_no_server_data() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().join("server");
    let dir_text = dir.to_string_lossy().into_owned();
    let server = KbServer::start(&[("KB_DATA_DIR", dir_text.as_str())]).await;
    assert_eq!(server.get("/api/entries").await.status, 200, "loopback without a token, as ever");
    assert!(!dir.exists(), "kb serve makes no server data of its own");
    let listed = Command::new(env!("CARGO_BIN_EXE_kb"))
        .args(["tokens", "list"])
        .env("KB_DATA_DIR", &dir)
        .output()
        .unwrap();
    assert_eq!(listed.status.code(), Some(2), "{}", String::from_utf8_lossy(&listed.stderr));
    assert!(!dir.exists(), "nor does a command that only reads");
    // A database kb cannot read stops kb serve: it will not guess there are no accounts.
    let odd = data.path().join("odd");
    std::fs::create_dir_all(odd.join("server.sqlite")).unwrap();
    let port = free_port().to_string();
    let refused = Command::new(env!("CARGO_BIN_EXE_kb"))
        .args(["serve", "--addr", &format!("127.0.0.1:{port}"), "--kb-dir"])
        .arg(server.vault())
        .env("KB_DATA_DIR", &odd)
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("cannot tell whether it has accounts"));
    // A data folder that cannot be made says where and why, in plain words.
    let blocked = data.path().join("a-file");
    std::fs::write(&blocked, "not a folder\n").unwrap();
    let unmade = Command::new(env!("CARGO_BIN_EXE_kb"))
        .args(["users", "add", "ana"])
        .env("KB_DATA_DIR", blocked.join("data"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&unmade.stderr);
    assert_eq!(unmade.status.code(), Some(1), "{said}");
    assert!(said.contains("cannot make") && said.contains("os error"), "{said}");
    assert!(!said.contains("conversation"), "{said}");
    // Names are checked; a person removed takes their tokens along.
    let bad = Command::new(env!("CARGO_BIN_EXE_kb"))
        .args(["users", "add", "local"])
        .env("KB_DATA_DIR", &dir)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{}", String::from_utf8_lossy(&bad.stderr));
    kb(&dir, &["users", "add", "cy"]);
    kb(&dir, &["tokens", "issue", "cy"]);
    kb(&dir, &["users", "remove", "cy"]);
    assert_eq!(kb(&dir, &["tokens", "list"])["tokens"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_account_made_while_kb_serves_protects_it_at_once() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().join("server");
    let dir_text = dir.to_string_lossy().into_owned();
    let server = KbServer::start(&[("KB_DATA_DIR", dir_text.as_str())]).await;
    assert_eq!(server.get("/api/entries").await.status, 200);
    kb(&dir, &["users", "add", "ana", "--admin"]);
    let secret = kb(&dir, &["tokens", "issue", "ana"])["token"].as_str().unwrap().to_string();
    assert_eq!(server.get("/api/entries").await.status, 401, "no restart needed");
    let bearer = format!("Bearer {secret}");
    let with = server.request("GET", "/api/entries", &[("Authorization", bearer.as_str())], None).await;
    assert_eq!(with.status, 200, "{}", with.text());
}

/// Opens an MCP session on `server` with `secret` and its event stream (`GET /mcp`).
async fn mcp_stream(server: &KbServer, secret: &str) -> reqwest::Response {
    let client = reqwest::Client::new();
    let url = format!("http://{}/mcp", server.addr);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    let opened = client
        .post(&url)
        .bearer_auth(secret)
        .header("Accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), 200);
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let sent = client
        .post(&url)
        .bearer_auth(secret)
        .header("Accept", "application/json, text/event-stream")
        .header("Mcp-Session-Id", &session)
        .json(&initialized)
        .send()
        .await
        .unwrap();
    assert!(sent.status().is_success(), "{}", sent.status());
    let stream = client
        .get(&url)
        .bearer_auth(secret)
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    stream
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_stream_ends_when_its_token_is_revoked() {
    let data = tempfile::tempdir().unwrap();
    kb(data.path(), &["users", "add", "ana"]);
    let revoked = kb(data.path(), &["tokens", "issue", "ana"]);
    let kept = kb(data.path(), &["tokens", "issue", "ana"]);
    let dir = data.path().to_string_lossy().into_owned();
    let server = KbServer::start(&[("KB_DATA_DIR", dir.as_str())]).await;
    let mut cut = mcp_stream(&server, revoked["token"].as_str().unwrap()).await;
    let mut open = mcp_stream(&server, kept["token"].as_str().unwrap()).await;
    kb(data.path(), &["tokens", "revoke", revoked["id"].as_str().unwrap()]);
    let ended = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while let Ok(Some(_)) = cut.chunk().await {}
    })
    .await;
    assert!(ended.is_ok(), "the revoked token's stream is still open");
    let still = tokio::time::timeout(std::time::Duration::from_secs(1), open.chunk()).await;
    assert!(!matches!(still, Ok(Ok(None))), "the other token's stream stays open");
}
