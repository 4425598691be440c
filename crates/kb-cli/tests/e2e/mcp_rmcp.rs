//! kb's MCP server driven by rmcp's own client: over stdio against `kb mcp`, over
//! streamable HTTP against `kb serve` (with its token), and several kb processes on one
//! vault at once, each client hearing of the others' changes.

#![allow(deprecated)]

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, GetPromptRequestParams, JsonObject, ReadResourceRequestParams,
    ResourceContents, SubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::common::KbServer;

/// How long a change may take to reach a subscribed client.
const NOTICE_WITHIN: Duration = Duration::from_secs(15);

/// A client that records what the server tells it.
#[derive(Clone)]
struct Recorder {
    updated: mpsc::UnboundedSender<String>,
    list_changed: Arc<AtomicUsize>,
}

impl ClientHandler for Recorder {
    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.updated.send(params.uri);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
    }
}

struct Client {
    service: RunningService<RoleClient, Recorder>,
    updated: mpsc::UnboundedReceiver<String>,
    list_changed: Arc<AtomicUsize>,
}

fn recorder() -> (Recorder, mpsc::UnboundedReceiver<String>, Arc<AtomicUsize>) {
    let (sender, updated) = mpsc::unbounded_channel();
    let list_changed = Arc::new(AtomicUsize::new(0));
    (Recorder { updated: sender, list_changed: Arc::clone(&list_changed) }, updated, list_changed)
}

/// `kb mcp` on `vault`, started as an MCP client starts it.
async fn over_stdio(vault: &Path) -> Client {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_kb"));
    for var in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "KB_MODEL", "DATABASE_URL", "KB_API_TOKEN"] {
        command.env_remove(var);
    }
    command.arg("mcp").env("KB_DIR", vault);
    let (transport, _stderr) = TokioChildProcess::builder(command).stderr(Stdio::null()).spawn().unwrap();
    let (handler, updated, list_changed) = recorder();
    let service = handler.serve(transport).await.unwrap();
    Client { service, updated, list_changed }
}

/// kb serve's `/mcp`, with `token` as the bearer token.
async fn over_http(server: &KbServer, token: &str) -> Result<Client, String> {
    let config = StreamableHttpClientTransportConfig::with_uri(format!("http://{}/mcp", server.addr))
        .auth_header(token);
    let transport = StreamableHttpClientTransport::from_config(config);
    let (handler, updated, list_changed) = recorder();
    let service = handler.serve(transport).await.map_err(|e| e.to_string())?;
    Ok(Client { service, updated, list_changed })
}

impl Client {
    async fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        let Value::Object(arguments) = arguments else { panic!("arguments must be an object") };
        self.service
            .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments))
            .await
            .unwrap()
    }

    async fn read(&self, uri: &str) -> Result<String, ServiceError> {
        let result = self.service.read_resource(ReadResourceRequestParams::new(uri)).await?;
        match result.contents.into_iter().next() {
            Some(ResourceContents::TextResourceContents { text, .. }) => Ok(text),
            other => panic!("{uri}: not text: {other:?}"),
        }
    }

    /// Waits for `notifications/resources/updated` about `uri`.
    async fn heard_of(&mut self, uri: &str) -> bool {
        tokio::time::timeout(NOTICE_WITHIN, async {
            while let Some(heard) = self.updated.recv().await {
                if heard == uri {
                    return true;
                }
            }
            false
        })
        .await
        .unwrap_or(false)
    }
}

fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

fn data(result: &CallToolResult) -> &Value {
    assert_ne!(result.is_error, Some(true), "the tool failed: {}", text_of(result));
    result.structured_content.as_ref().expect("structured content")
}

fn error_code(error: ServiceError) -> i32 {
    match error {
        ServiceError::McpError(data) => data.code.0,
        other => panic!("not a protocol error: {other:?}"),
    }
}

/// What every transport must do: tools with their schemas, calls that succeed and fail as
/// tools do, resources, a subscription to an entry edited outside kb, and prompts.
async fn exercise(client: &mut Client, vault: &Path) {
    let info = client.service.peer_info().expect("server info");
    assert_eq!(info.server_info.as_ref().map(|s| s.name.as_str()), Some("kb"));

    let tools = client.service.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 13, "{:?}", tools.iter().map(|t| &t.name).collect::<Vec<_>>());
    for tool in &tools {
        assert_eq!(tool.input_schema.get("type"), Some(&json!("object")), "{}", tool.name);
        let output =
            tool.output_schema.as_ref().unwrap_or_else(|| panic!("{} has no output schema", tool.name));
        assert_eq!(output.get("type"), Some(&json!("object")), "{}", tool.name);
        let hints = tool.annotations.as_ref().expect("annotations");
        let read_only = [
            "list_entries",
            "get_entry",
            "search_entries",
            "generate_digest",
            "find_duplicates",
            "build_context",
        ]
        .contains(&tool.name.as_ref());
        assert_eq!(hints.read_only_hint, Some(read_only), "{}", tool.name);
        let destructive = ["delete_entry", "merge_entries", "resolve_conflict"].contains(&tool.name.as_ref());
        assert_eq!(hints.destructive_hint, Some(destructive), "{}", tool.name);
        // Only a capture reaches beyond the vault (a link's page).
        let open_world = tool.name == "classify_and_capture";
        assert_eq!(hints.open_world_hint, Some(open_world), "{}", tool.name);
    }
    // Each link of get_entry says what it leads to.
    let get_entry = tools.iter().find(|tool| tool.name == "get_entry").expect("get_entry");
    let schema = serde_json::to_string(&get_entry.output_schema).unwrap();
    assert!(
        schema.contains("\"kind\"") && schema.contains("\"missing\"") && schema.contains("\"file\""),
        "{schema}"
    );

    // The client's model classifies; kb files as told, marked as coming through MCP.
    let filed = client
        .call(
            "classify_and_capture",
            json!({"text": "Met Priya Raman at the robotics meetup", "classification": {
                "category": "people", "confidence": 0.95, "name": "Priya Raman"}}),
        )
        .await;
    assert_eq!(data(&filed)["path"], "people/priya-raman.md");
    let on_disk = std::fs::read_to_string(vault.join("people/priya-raman.md")).unwrap();
    assert!(on_disk.contains("source: mcp"), "{on_disk}");

    let found = client.call("get_entry", json!({"path": "Priya"})).await;
    assert_eq!(data(&found)["entry"]["path"], "people/priya-raman.md");
    let hits = client.call("search_entries", json!({"query": "robotics"})).await;
    assert_eq!(data(&hits)["total"], 1);

    // Failures are results the model reads, not protocol errors; nothing changes.
    let missing = client.call("get_entry", json!({"path": "people/nobody.md"})).await;
    assert_eq!(missing.is_error, Some(true));
    assert!(text_of(&missing).contains("not found"), "{}", text_of(&missing));
    let bad = client.call("list_entries", json!({"limit": "many"})).await;
    assert_eq!(bad.is_error, Some(true));
    let outside =
        client.call("update_entry", json!({"path": "../../etc/passwd", "updates": {"status": "x"}})).await;
    assert_eq!(outside.is_error, Some(true), "{}", text_of(&outside));
    let unknown = client.service.call_tool(CallToolRequestParams::new("drop_vault")).await;
    assert_eq!(error_code(unknown.unwrap_err()), -32602);

    // Resources: the index and each entry's file as it is on disk.
    let resources = client.service.list_all_resources().await.unwrap();
    assert!(resources.iter().any(|r| r.uri == "kb://index"));
    assert!(resources.iter().any(|r| r.uri == "kb://entries/people/priya-raman"));
    assert_eq!(client.read("kb://entries/people/priya-raman").await.unwrap(), on_disk);
    assert!(client.read("kb://index").await.unwrap().contains("Priya Raman"));
    assert_eq!(error_code(client.read("kb://entries/people/nobody").await.unwrap_err()), -32002);
    assert_eq!(error_code(client.read("kb://entries/../../secret").await.unwrap_err()), -32602);
    // The person's own notes, in any folder, by their vault path.
    std::fs::create_dir_all(vault.join("Journal/2025")).unwrap();
    std::fs::write(vault.join("Journal/2025/Day one.md"), "Walked to the lake.\n").unwrap();
    let note = client.read("kb://vault/Journal/2025/Day%20one.md").await.unwrap();
    assert_eq!(note, "Walked to the lake.\n");
    assert_eq!(error_code(client.read("kb://vault/.obsidian/app.md").await.unwrap_err()), -32602);
    let templates = client.service.list_all_resource_templates().await.unwrap();
    let templates: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert!(templates.contains(&"kb://vault/{+path}"), "{templates:?}");

    // An edit made outside kb reaches the subscriber.
    let uri = "kb://entries/people/priya-raman";
    client.service.subscribe(SubscribeRequestParams::new(uri)).await.unwrap();
    let lists_before = client.list_changed.load(Ordering::SeqCst);
    std::fs::write(vault.join("people/priya-raman.md"), format!("{on_disk}She is moving to MIT.\n")).unwrap();
    assert!(client.heard_of(uri).await, "no notifications/resources/updated for {uri}");
    assert!(client.list_changed.load(Ordering::SeqCst) > lists_before, "no list_changed");
    // And so does a change made through kb itself (what was heard so far is set aside).
    tokio::time::sleep(Duration::from_millis(500)).await;
    while client.updated.try_recv().is_ok() {}
    let updated = client
        .call("update_entry", json!({"path": "Priya", "updates": {"context": "robotics meetup"}}))
        .await;
    assert_eq!(data(&updated)["path"], "people/priya-raman.md");
    assert!(client.heard_of(uri).await, "kb's own change never reached the subscriber");

    // Prompts.
    let prompts = client.service.list_all_prompts().await.unwrap();
    let names: Vec<_> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["daily_digest", "weekly_review", "capture"]);
    let mut arguments = JsonObject::new();
    arguments.insert("text".into(), json!("call the plumber"));
    let capture = client
        .service
        .get_prompt(GetPromptRequestParams::new("capture").with_arguments(arguments))
        .await
        .unwrap();
    let text = capture.messages[0].content.as_text().map(|t| t.text.clone()).unwrap_or_default();
    assert!(text.contains("call the plumber"), "{text}");
    let daily = client.service.get_prompt(GetPromptRequestParams::new("daily_digest")).await.unwrap();
    assert_eq!(daily.messages.len(), 1);
    let nameless = client.service.get_prompt(GetPromptRequestParams::new("capture")).await;
    assert_eq!(error_code(nameless.unwrap_err()), -32602);
}

#[tokio::test]
async fn rmcp_drives_kb_mcp_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = over_stdio(dir.path()).await;
    exercise(&mut client, dir.path()).await;
    client.service.cancel().await.unwrap();
}

#[tokio::test]
async fn rmcp_drives_kb_serve_over_streamable_http_with_its_token() {
    let server = KbServer::start(&[("KB_API_TOKEN", "s3cret")]).await;
    assert!(over_http(&server, "wrong").await.is_err(), "a wrong token is refused");
    let mut client = over_http(&server, "s3cret").await.unwrap();
    exercise(&mut client, &server.vault()).await;
    client.service.cancel().await.unwrap();
}

/// `kb serve` and two `kb mcp` on one vault: each hears of the others' changes.
#[tokio::test]
async fn kb_mcp_runs_beside_kb_serve_and_another_kb_mcp() {
    let server = KbServer::start(&[]).await;
    let vault = server.vault();
    let first = over_stdio(&vault).await;
    let mut second = over_stdio(&vault).await;

    let filed = first
        .call(
            "classify_and_capture",
            json!({"text": "Renew the passport", "classification": {
                "category": "admin", "confidence": 0.9, "name": "Renew passport"}}),
        )
        .await;
    assert_eq!(data(&filed)["path"], "admin/renew-passport.md");
    // The other MCP process and the web API find it.
    let mut seen = false;
    for _ in 0..50 {
        let hits = second.call("search_entries", json!({"query": "passport"})).await;
        if data(&hits)["total"] == 1 {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(seen, "the second kb mcp never found the first one's capture");
    let listed = server.get("/api/search?q=passport").await.expect(200);
    assert_eq!(listed["total"], 1, "{listed}");

    // A change through the web API reaches the subscriber in the second process.
    let uri = "kb://entries/admin/renew-passport";
    second.service.subscribe(SubscribeRequestParams::new(uri)).await.unwrap();
    server.patch("/api/entries/admin/renew-passport.md", &json!({"status": "done"})).await.expect(200);
    assert!(second.heard_of(uri).await, "the web API's change never reached the other kb mcp");
    assert!(second.read(uri).await.unwrap().contains("status: done"));

    first.service.cancel().await.unwrap();
    second.service.cancel().await.unwrap();
}

/// Runs `kb ARGS…` on `vault` as a person in a terminal does; its stdout, parsed as JSON.
fn kb_json(vault: &Path, args: &[&str]) -> Value {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_kb"));
    for var in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "KB_MODEL", "DATABASE_URL", "KB_API_TOKEN", "KB_DIR"] {
        command.env_remove(var);
    }
    let output = command.arg("--kb-dir").arg(vault).args(args).arg("--json").output().unwrap();
    assert!(output.status.success(), "kb {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// An MCP client's undo reaches only the changes of its own session: never a capture made
/// meanwhile in a terminal or by another MCP client; `kb undo` reaches anyone's newest and
/// says whose it was.
#[tokio::test]
async fn an_mcp_clients_undo_reaches_only_its_own_session() {
    let server = KbServer::start(&[]).await;
    let vault = server.vault();
    let stdio = over_stdio(&vault).await;
    let http = over_http(&server, "no token is set").await.unwrap();
    let capture = |name: &str| json!({"text": name, "classification": {"category": "admin", "confidence": 0.9, "name": name}});

    // Nothing of its own to undo yet: it says so and changes nothing.
    let filed = kb_json(&vault, &["capture", "Call the plumber", "--hints", "[admin]"]);
    let plumber = vault.join(filed["path"].as_str().unwrap());
    let none = stdio.call("undo_last_change", json!({})).await;
    assert_eq!(none.is_error, Some(true), "{}", text_of(&none));
    assert!(text_of(&none).contains("no change to undo made in this MCP session"), "{}", text_of(&none));
    assert!(plumber.exists());

    let passport = stdio.call("classify_and_capture", capture("Renew passport")).await;
    assert_eq!(data(&passport)["path"], "admin/renew-passport.md");
    let paint = http.call("classify_and_capture", capture("Buy paint")).await;
    assert_eq!(data(&paint)["path"], "admin/buy-paint.md");
    kb_json(&vault, &["capture", "Water the plants", "--hints", "[admin]"]);

    // Each session undoes its own capture, and only that.
    let undone = data(&stdio.call("undo_last_change", json!({})).await).clone();
    assert_eq!(undone["by"], "mcp", "{undone}");
    assert!(undone["undone"].as_str().unwrap().contains("Renew passport"), "{undone}");
    assert!(!vault.join("admin/renew-passport.md").exists());
    let again = stdio.call("undo_last_change", json!({})).await;
    assert_eq!(again.is_error, Some(true), "nothing else is this session's: {}", text_of(&again));
    let undone = data(&http.call("undo_last_change", json!({})).await).clone();
    assert!(undone["undone"].as_str().unwrap().contains("Buy paint"), "{undone}");
    assert!(plumber.exists() && vault.join("admin/water-the-plants.md").exists());

    // The terminal's undo takes the newest change of anyone's, and says where it came from.
    let undone = kb_json(&vault, &["undo"]);
    assert_eq!(undone["by"], "cli", "{undone}");
    assert!(!vault.join("admin/water-the-plants.md").exists());
    let over_api = server.post("/api/undo", &json!({})).await.expect(200);
    assert_eq!(over_api["by"], "cli", "{over_api}");
    assert!(!plumber.exists());

    stdio.service.cancel().await.unwrap();
    http.service.cancel().await.unwrap();
}

/// With sync on, `kb://sync` is listed and says where sync stands; without, it is not found.
#[tokio::test]
async fn kb_sync_is_a_resource_with_sync_on() {
    let dir = tempfile::tempdir().unwrap();
    let remote = dir.path().join("remote.git");
    assert!(
        std::process::Command::new("git")
            .args(["init", "--quiet", "--bare"])
            .arg(&remote)
            .status()
            .unwrap()
            .success()
    );
    let remote = remote.to_string_lossy().into_owned();
    let server = KbServer::start(&[("KB_SYNC_REMOTE", remote.as_str()), ("KB_DEVICE", "nas")]).await;
    let client = over_http(&server, "").await.unwrap();
    let listed = client.service.list_resources(None).await.unwrap();
    assert!(listed.resources.iter().any(|r| r.uri == "kb://sync"), "{listed:?}");
    let status: Value = serde_json::from_str(&client.read("kb://sync").await.unwrap()).unwrap();
    assert_eq!(
        (status["device"].clone(), status["remote"].clone()),
        (json!("nas"), json!(remote)),
        "{status}"
    );
    client.service.cancel().await.unwrap();

    let plain = KbServer::start(&[]).await;
    let client = over_http(&plain, "").await.unwrap();
    assert!(client.read("kb://sync").await.is_err());
    client.service.cancel().await.unwrap();
}
