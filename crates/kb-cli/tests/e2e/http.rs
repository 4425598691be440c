//! The HTTP API of docs/HTTP.md end to end: the real `kb` binary serving a temporary vault
//! (`kb serve` as a child process), talking to a scripted OpenAI-compatible server over
//! real HTTP. Each test checks what a client and the person would notice: statuses, the
//! JSON shapes, the files on disk, and what the model was sent.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{self, KbServer, assert_error_shape, query_value, url_path};
use kb_llm::testing::{FakeOpenAi, FakeReply};
use serde_json::{Value, json};

/// A `kb serve` wired to a fresh scripted model, with `extra` environment variables.
async fn with_model(extra: &[(&str, &str)]) -> (FakeOpenAi, KbServer) {
    let fake = FakeOpenAi::start().await.unwrap();
    let base = fake.base_url();
    let mut env =
        vec![("OPENAI_API_KEY", "sk-test"), ("OPENAI_BASE_URL", base.as_str()), ("KB_MODEL", "test-model")];
    env.extend_from_slice(extra);
    let server = KbServer::start(&env).await;
    (fake, server)
}

/// One tool call as the model sends it.
fn call(id: &str, name: &str, arguments: &Value) -> FakeReply {
    FakeReply::tool_calls(&[(id, name, &arguments.to_string())])
}

fn chat(message: &str, conversation: Option<&str>) -> Value {
    match conversation {
        Some(id) => json!({"conversationId": id, "message": message}),
        None => json!({"message": message}),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_turns_capture_ask_move_and_keep_their_conversations() {
    let (fake, kb) = with_model(&[]).await;

    let health = kb.get("/healthz").await.expect(200);
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(health["model"], "test-model");
    assert_eq!(health["entries"], 0);
    assert_eq!(health["indexReady"], true);
    assert_eq!(health["indexFile"], "index.md");
    assert_eq!(health["notices"], json!([]));
    assert_eq!(health["malformedFiles"], 0);
    assert!(fake.requests().is_empty(), "kb called the model at start-up");

    // A confident capture: filed in projects/, the answer says where.
    let words = "Fix the shed roof before the rains";
    fake.push(call("call_1", "classify_and_capture", &json!({"text": words})));
    fake.push(FakeReply::classification("projects", 0.9, "Shed roof repair"));
    fake.push(FakeReply::text("Filed it under projects: Shed roof repair."));
    let first = kb.post("/api/chat", &chat(words, None)).await.expect(200);
    let first_id = first["conversationId"].as_str().unwrap().to_string();
    assert!(!first_id.is_empty());
    assert_eq!(first["message"]["role"], "assistant");
    assert_eq!(first["message"]["content"], "Filed it under projects: Shed roof repair.");
    assert_eq!(first["message"]["filedEntryPath"], "projects/shed-roof-repair.md");
    assert_eq!(first["message"]["filedConfidence"], 0.9);
    assert!(first["message"]["id"].as_str().is_some_and(|id| !id.is_empty()));
    assert!(first["message"]["createdAt"].as_str().is_some());
    assert_eq!(
        first["entry"],
        json!({"path": "projects/shed-roof-repair.md", "category": "projects", "name": "Shed roof repair",
               "confidence": 0.9, "clarificationNeeded": false})
    );
    assert_eq!(first["toolsUsed"], json!(["classify_and_capture"]));
    let file = std::fs::read_to_string(kb.vault().join("projects/shed-roof-repair.md")).unwrap();
    assert!(file.contains(words), "{file}");
    assert_eq!(fake.pending(), 0);

    // An unsure capture lands in the inbox and kb asks.
    let vague = "Look into widgets sometime";
    fake.push(call("call_1", "classify_and_capture", &json!({"text": vague})));
    fake.push(FakeReply::classification("ideas", 0.3, "Widgets"));
    fake.push(FakeReply::text("I filed it in the inbox: is it an idea or a project?"));
    let second = kb.post("/api/chat", &chat(vague, None)).await.expect(200);
    let second_id = second["conversationId"].as_str().unwrap().to_string();
    assert_ne!(second_id, first_id);
    assert_eq!(second["entry"]["path"], "inbox/widgets.md");
    assert_eq!(second["entry"]["category"], "inbox");
    assert_eq!(second["entry"]["clarificationNeeded"], true);
    assert_eq!(second["message"]["filedEntryPath"], "inbox/widgets.md");
    assert_eq!(second["message"]["filedConfidence"], 0.3);
    assert!(kb.vault().join("inbox/widgets.md").is_file());

    // "actually that's an idea": the model moves it; the earlier turn was in its context.
    let before = fake.requests().len();
    fake.push(call("call_2", "move_entry", &json!({"path": "inbox/widgets.md", "targetCategory": "ideas"})));
    fake.push(FakeReply::text("Moved it to ideas."));
    let third = kb.post("/api/chat", &chat("actually that's an idea", Some(&second_id))).await.expect(200);
    assert_eq!(third["conversationId"], second_id.as_str());
    assert_eq!(third["toolsUsed"], json!(["move_entry"]));
    assert_eq!(third["message"]["content"], "Moved it to ideas.");
    assert!(!kb.vault().join("inbox/widgets.md").exists());
    let moved = std::fs::read_to_string(kb.vault().join("ideas/widgets.md")).unwrap();
    assert!(moved.contains(vague), "{moved}");
    assert_eq!(kb.entry_files(), ["ideas/widgets.md", "projects/shed-roof-repair.md"]);
    let sent = fake.requests()[before].json().to_string();
    assert!(sent.contains(vague) && sent.contains("actually that's an idea"), "{sent}");

    let health = kb.get("/healthz").await.expect(200);
    assert_eq!(health["entries"], 2);

    // Conversations: list, get with messages, rename, delete.
    let list = kb.get("/api/conversations").await.expect(200);
    let ids: Vec<&str> =
        list["conversations"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "{list}");
    assert!(ids.contains(&first_id.as_str()) && ids.contains(&second_id.as_str()));

    let got = kb.get(&format!("/api/conversations/{second_id}")).await.expect(200);
    assert_eq!(got["id"], second_id.as_str());
    assert_eq!(got["title"], vague);
    let messages = got["messages"].as_array().unwrap();
    let users: Vec<&str> =
        messages.iter().filter(|m| m["role"] == "user").map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(users, [vague, "actually that's an idea"]);
    assert_eq!(messages.last().unwrap()["content"], "Moved it to ideas.");

    let renamed = kb.patch(&format!("/api/conversations/{second_id}"), &json!({"title": "Widgets"})).await;
    assert_eq!(renamed.expect(200)["title"], "Widgets");
    assert_eq!(kb.get(&format!("/api/conversations/{second_id}")).await.expect(200)["title"], "Widgets");
    let empty_title = kb.patch(&format!("/api/conversations/{second_id}"), &json!({"title": "  "})).await;
    empty_title.expect_error(400);

    let deleted = kb.delete(&format!("/api/conversations/{second_id}")).await;
    assert_eq!(deleted.status, 204, "{}", deleted.text());
    assert_eq!(kb.get(&format!("/api/conversations/{second_id}")).await.expect_error(404), "not_found");
    kb.delete(&format!("/api/conversations/{second_id}")).await.expect_error(404);
    kb.patch(&format!("/api/conversations/{second_id}"), &json!({"title": "x"})).await.expect_error(404);
    let list = kb.get("/api/conversations").await.expect(200);
    assert_eq!(list["conversations"].as_array().unwrap().len(), 1);
    assert_eq!(list["conversations"][0]["id"], first_id.as_str());
    // The entries the deleted conversation filed stay.
    assert!(kb.vault().join("ideas/widgets.md").is_file());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_endpoints_capture_update_list_search_get_digest_and_index() {
    let (fake, kb) = with_model(&[]).await;

    let mut filed = Vec::new();
    for (text, category, confidence, name) in [
        ("Finish the ClientCo API integration", "projects", 0.95, "ClientCo integration"),
        ("Renew passport by Dec 15", "admin", 0.8, "Renew passport"),
        ("Met Priya at the robotics meetup", "people", 0.85, "Priya"),
    ] {
        fake.push(FakeReply::classification(category, confidence, name));
        let answer = kb.post("/api/capture", &json!({"text": text})).await.expect(200);
        assert_eq!(answer["category"], category);
        assert_eq!(answer["name"], name);
        assert_eq!(answer["confidence"], confidence);
        assert_eq!(answer["clarificationNeeded"], false);
        let path = answer["path"].as_str().unwrap().to_string();
        assert!(path.starts_with(&format!("{category}/")), "{path}");
        let file = std::fs::read_to_string(kb.vault().join(&path)).unwrap();
        assert!(file.contains(text) && file.contains("source: api"), "{file}");
        filed.push(path);
    }
    let (project, admin, person) = (&filed[0], &filed[1], &filed[2]);
    assert_eq!(fake.pending(), 0);

    // Update, both body forms.
    let updated = kb.patch(&format!("/api/entries/{}", url_path(project)), &json!({"status": "done"})).await;
    let updated = updated.expect(200);
    assert_eq!(updated["path"], project.as_str());
    assert!(updated["updatedFields"].as_array().unwrap().contains(&json!("status")), "{updated}");
    let updated = kb
        .patch(&format!("/api/entries/{}", url_path(admin)), &json!({"updates": {"due_date": "2026-12-15"}}))
        .await
        .expect(200);
    assert!(updated["updatedFields"].as_array().unwrap().contains(&json!("due_date")), "{updated}");
    let on_disk = std::fs::read_to_string(kb.vault().join(project)).unwrap();
    assert!(on_disk.contains("status: done"), "{on_disk}");
    let bad_status =
        kb.patch(&format!("/api/entries/{}", url_path(project)), &json!({"status": "sleeping"})).await;
    bad_status.expect_error(400);
    kb.patch("/api/entries/projects/nobody.md", &json!({"status": "done"})).await.expect_error(404);

    // Get.
    let got = kb.get(&format!("/api/entries/{}", url_path(project))).await.expect(200);
    assert_eq!(got["entry"]["path"], project.as_str());
    assert_eq!(got["entry"]["category"], "projects");
    assert_eq!(got["entry"]["name"], "ClientCo integration");
    assert_eq!(got["entry"]["frontmatter"]["status"], "done");
    assert!(got["entry"]["content"].as_str().unwrap().contains("ClientCo API integration"));
    assert_eq!(kb.get("/api/entries/projects/nobody.md").await.expect_error(404), "not_found");

    // List with filters and paging; `total` counts every match.
    let page = kb.get("/api/entries?category=projects&limit=5&offset=0").await.expect(200);
    assert_eq!(page["total"], 1);
    assert_eq!(page["entries"][0]["path"], project.as_str());
    assert_eq!(page["entries"][0]["status"], "done");
    let mut seen = Vec::new();
    for offset in [0, 2] {
        let page = kb.get(&format!("/api/entries?limit=2&offset={offset}")).await.expect(200);
        assert_eq!(page["total"], 3);
        for entry in page["entries"].as_array().unwrap() {
            seen.push(entry["path"].as_str().unwrap().to_string());
        }
    }
    seen.sort();
    let mut all = filed.clone();
    all.sort();
    assert_eq!(seen, all);
    let done = kb.get("/api/entries?status=done").await.expect(200);
    assert_eq!(done["total"], 1);
    assert_eq!(kb.get("/api/entries?category=inbox").await.expect(200)["total"], 0);

    // Search.
    let hits = kb.get(&format!("/api/search?q={}", query_value("passport"))).await.expect(200);
    assert_eq!(hits["total"], 1);
    assert_eq!(hits["entries"][0]["path"], admin.as_str());
    assert!(hits["entries"][0]["score"].is_number());
    let hits = kb.get("/api/search?q=robotics%20meetup&category=people").await.expect(200);
    assert_eq!(hits["entries"][0]["path"], person.as_str());
    assert_eq!(kb.get("/api/search?q=robotics&category=admin").await.expect(200)["total"], 0);
    assert_eq!(kb.get("/api/search?q=").await.expect(200)["total"], 0);

    // Digest: kb gathers the facts, the model writes them up.
    let written = "## Top 3 actions\n- Renew passport\n## People to connect with\n- Priya";
    fake.push(FakeReply::text(written));
    let digest = kb.post("/api/digest", &json!({"type": "daily"})).await.expect(200);
    assert_eq!(digest["type"], "daily");
    assert!(digest["content"].as_str().unwrap().contains("Renew passport"), "{digest}");
    let asked = fake.requests().last().unwrap().json();
    let prompt = asked["messages"][0]["content"].as_str().unwrap();
    assert!(prompt.contains("daily digest"), "{prompt}");
    assert!(asked["messages"].to_string().contains("Renew passport"), "{asked}");

    // The index.
    let index = kb.get("/api/index").await;
    assert_eq!(index.status, 200);
    assert!(index.header("content-type").unwrap().starts_with("text/markdown"), "{:?}", index.headers);
    let index = index.text();
    for path in &filed {
        assert!(index.contains(&format!("({path})")), "{path} missing from:\n{index}");
    }
    // The file is written off the request path: the same text within a second.
    let file = kb.vault().join("index.md");
    assert!(
        eventually(async || std::fs::read_to_string(&file).is_ok_and(|text| text == index)).await,
        "index.md never matched GET /api/index"
    );

    // Move over REST.
    let moved = kb
        .post(&format!("/api/entries/{}/move", url_path(person)), &json!({"targetCategory": "projects"}))
        .await
        .expect(200);
    assert_eq!(moved["oldPath"], person.as_str());
    assert_eq!(moved["category"], "projects");
    let new_path = moved["newPath"].as_str().unwrap();
    assert!(new_path.starts_with("projects/") && kb.vault().join(new_path).is_file());
    assert!(!kb.vault().join(person).exists());
    assert!(kb.get("/api/index").await.text().contains(&format!("({new_path})")));
    assert_eq!(kb.get("/healthz").await.expect(200)["entries"], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_guards_every_api_call_but_not_health_or_the_page() {
    let kb = KbServer::start(&[("KB_API_TOKEN", "s3cret-token")]).await;
    let capture = json!({"text": "Renew passport by Dec 15"}).to_string();
    for (method, target, body) in [
        ("GET", "/api/entries", None),
        ("GET", "/api/index", None),
        ("GET", "/api/conversations", None),
        ("GET", "/api/search?q=passport", None),
        ("POST", "/api/capture", Some(capture.as_bytes())),
        ("POST", "/api/chat", Some(br#"{"message":"Renew passport by Dec 15"}"#.as_slice())),
    ] {
        for header in [
            None,
            Some("Bearer wrong-token"),
            Some("Bearer "),
            Some("s3cret-token"),
            Some("Basic s3cret-token"),
        ] {
            let headers: Vec<(&str, &str)> = header.map(|h| ("Authorization", h)).into_iter().collect();
            let reply = kb.request(method, target, &headers, body).await;
            assert_eq!(reply.expect_error(401), "unauthorized", "{method} {target} with {header:?}");
        }
    }
    assert!(kb.entry_files().is_empty(), "an unauthorised call filed something");
    // A refusal leaves the body unread, so the connection is dropped: the answer says so,
    // and a client does not send its next request down it.
    let post = format!(
        "POST /api/capture HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        kb.addr,
        capture.len()
    );
    let head = refused_on_a_kept_connection(&kb, &post, capture.as_bytes()).await;
    assert!(head.starts_with("HTTP/1.1 401") && head.contains("\r\nconnection: close\r\n"), "{head}");
    let get = format!("GET /api/entries HTTP/1.1\r\nHost: {}\r\n\r\n", kb.addr);
    let head = refused_on_a_kept_connection(&kb, &get, b"").await;
    assert!(head.starts_with("HTTP/1.1 401") && !head.contains("connection: close"), "{head}");

    let auth = [("Authorization", "Bearer s3cret-token")];
    let filed = kb.request("POST", "/api/capture", &auth, Some(capture.as_bytes())).await.expect(200);
    assert!(kb.vault().join(filed["path"].as_str().unwrap()).is_file());
    let list = kb.request("GET", "/api/entries", &auth, None).await.expect(200);
    assert_eq!(list["total"], 1);

    assert_eq!(kb.get("/healthz").await.expect(200)["entries"], 1);
    let page = kb.get("/").await;
    assert_eq!(page.status, 200);
    assert!(page.header("content-type").unwrap().starts_with("text/html"));

    // Without a token set, no header is needed and any header is ignored.
    let open = KbServer::start(&[]).await;
    assert_eq!(open.get("/api/entries").await.expect(200)["total"], 0);
    let reply = open.request("GET", "/api/entries", &[("Authorization", "Bearer whatever")], None).await;
    reply.expect(200);

    // Without a token, only requests addressed to this machine are answered (DNS rebinding).
    for host in ["evil.example", "evil.example:8080", "192.0.2.7:8080"] {
        let reply = open.request("GET", "/api/entries", &[("Host", host)], None).await;
        assert_eq!(reply.expect_error(403), "forbidden_host", "Host: {host}");
        let reply = open.request("POST", "/api/capture", &[("Host", host)], Some(capture.as_bytes())).await;
        assert_eq!(reply.expect_error(403), "forbidden_host", "Host: {host}");
    }
    assert!(open.entry_files().is_empty(), "a request for another host filed something");
    open.request("GET", "/api/entries", &[("Host", "localhost:8080")], None).await.expect(200);
    // With a token the token decides, whatever the host.
    kb.request("GET", "/api/entries", &[("Host", "kb.example"), auth[0]], None).await.expect(200);
}

/// The head of the answer to `head`, sent on a connection kept open, its `body` sent a
/// moment later in a second write (as many clients send them).
async fn refused_on_a_kept_connection(kb: &KbServer, head: &str, body: &[u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(kb.addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    if !body.is_empty() {
        // The server may have answered and dropped the connection already.
        let _ = stream.write_all(body).await;
    }
    let mut answer = vec![0u8; 8192];
    let read =
        tokio::time::timeout(Duration::from_secs(10), stream.read(&mut answer)).await.unwrap().unwrap();
    let answer = String::from_utf8_lossy(&answer[..read]).to_ascii_lowercase();
    answer.split("\r\n\r\n").next().unwrap_or_default().replace("http/1.1", "HTTP/1.1") + "\r\n"
}

/// What a page of another site makes a browser send to `POST /api/undo` with a plain
/// `<form method=post>` (no body, a form type), with or without the `Origin` it names.
async fn cross_site_undo(kb: &KbServer, origin: Option<&str>, content_type: &str) -> common::Reply {
    let mut headers = vec![("Content-Type", content_type)];
    headers.extend(origin.map(|origin| ("Origin", origin)));
    kb.request("POST", "/api/undo", &headers, Some(b"")).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_of_another_site_cannot_undo_or_change_anything() {
    let kb = KbServer::start(&[]).await;
    let filed = kb.post("/api/capture", &json!({"text": "Paint the fence"})).await.expect(200);
    let path = filed["path"].as_str().unwrap().to_string();
    let (files, captured) = (kb.entry_files(), std::fs::read(kb.vault().join(&path)).unwrap());

    // The exact request a `<form method=post action=.../api/undo>` sends, without a token.
    let form = "application/x-www-form-urlencoded";
    assert_eq!(cross_site_undo(&kb, None, form).await.expect_error(415), "unsupported_media_type");
    assert_eq!(
        cross_site_undo(&kb, Some("http://evil.example"), form).await.expect_error(403),
        "forbidden_origin"
    );
    // The other types a page may send without asking the server first, and an empty one.
    for content_type in ["text/plain", "text/plain;charset=UTF-8", "multipart/form-data; boundary=x"] {
        assert_eq!(
            cross_site_undo(&kb, None, content_type).await.expect_error(415),
            "unsupported_media_type"
        );
    }
    let untyped = kb.request("POST", "/api/undo", &[("Content-Type", "")], None).await;
    assert_eq!(untyped.expect_error(415), "unsupported_media_type");
    // Declared JSON but from another site's page (a fetch the browser would preflight, or a
    // rebinding page), a sandboxed frame (`null`), or another port of this machine.
    let port = kb.addr.port().to_string();
    for origin in [
        "http://evil.example",
        "null",
        "http://localhost:1",
        "https://127.0.0.1",
        "http://evil.example:{port}",
    ] {
        let origin = origin.replace("{port}", &port);
        let headers = [("Origin", origin.as_str())];
        let reply = kb.request("POST", "/api/undo", &headers, None).await;
        assert_eq!(reply.expect_error(403), "forbidden_origin", "Origin: {origin}");
        let reply = kb.request("GET", "/api/entries", &headers, None).await;
        assert_eq!(reply.expect_error(403), "forbidden_origin", "Origin: {origin}");
        let capture = json!({"text": "Buy a boat"});
        let reply = kb.request("POST", "/api/capture", &headers, Some(capture.to_string().as_bytes())).await;
        assert_eq!(reply.expect_error(403), "forbidden_origin", "Origin: {origin}");
        let reply = kb.request("DELETE", &format!("/api/entries/{}", url_path(&path)), &headers, None).await;
        assert_eq!(reply.expect_error(403), "forbidden_origin", "Origin: {origin}");
        let reply = kb.request("POST", "/mcp", &headers, Some(b"{}")).await;
        assert_eq!(reply.expect_error(403), "forbidden_origin", "/mcp with Origin: {origin}");
    }
    // The MCP transport refuses a form too.
    let reply = kb.request("POST", "/mcp", &[("Content-Type", form)], Some(b"")).await;
    assert!((400..500).contains(&reply.status), "POST /mcp as a form: {}", reply.status);
    assert_eq!(kb.entry_files(), files, "a cross-site request changed the vault");
    assert_eq!(std::fs::read(kb.vault().join(&path)).ok(), Some(captured), "the last capture changed");

    // kb's own page (its Origin is the address it is served on) works, bodyless POST too.
    let own = format!("http://{}", kb.addr);
    let headers = [("Origin", own.as_str()), ("Content-Type", "application/json; charset=utf-8")];
    kb.request("GET", "/api/entries", &headers[..1], None).await.expect(200);
    let undone = kb.request("POST", "/api/undo", &headers, None).await.expect(200);
    assert!(!undone["undone"].as_str().unwrap().is_empty());
    assert!(!kb.vault().join(&path).exists(), "kb's own undo did not undo the capture");
    // A bodyless DELETE needs no type.
    let filed = kb.post("/api/capture", &json!({"text": "Fix the gate"})).await.expect(200);
    let gate = url_path(filed["path"].as_str().unwrap());
    kb.request("DELETE", &format!("/api/entries/{gate}"), &headers[..1], None).await.expect(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_origin_rule_holds_with_a_token_and_health_follows_the_host_rule_without_one() {
    let token = [("Authorization", "Bearer s3cret-token")];
    let kb = KbServer::start(&[("KB_API_TOKEN", "s3cret-token")]).await;
    // With the token, another site's Origin is still refused.
    let evil = [token[0], ("Origin", "http://evil.example")];
    assert_eq!(kb.request("GET", "/api/entries", &evil, None).await.expect_error(403), "forbidden_origin");
    assert_eq!(kb.request("POST", "/api/undo", &evil, None).await.expect_error(403), "forbidden_origin");
    // The page served on a LAN address (a phone): Origin and Host name the same server.
    for (host, origin) in [
        ("192.168.1.20:8080", "http://192.168.1.20:8080"),
        ("kb.example", "https://kb.example"),
        ("kb.example:80", "http://kb.example"),
    ] {
        let headers = [token[0], ("Host", host), ("Origin", origin)];
        kb.request("GET", "/api/entries", &headers, None).await.expect(200);
    }
    // With a token, health is open to any host.
    assert_eq!(kb.request("GET", "/healthz", &[("Host", "kb.example")], None).await.status, 200);

    // Without a token, health answers only requests addressed to this machine (a DNS
    // rebinding page must not read the model and the counts).
    let open = KbServer::start(&[]).await;
    for host in ["evil.example", "evil.example:8080", "192.0.2.7:8080"] {
        let reply = open.request("GET", "/healthz", &[("Host", host)], None).await;
        assert_eq!(reply.expect_error(403), "forbidden_host", "Host: {host}");
    }
    let local = open.request("GET", "/healthz", &[("Host", "localhost:8080")], None).await.expect(200);
    assert_eq!(local["entries"], 0);
}

/// Every file under `root` (but kb's own state and log), with its bytes.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for item in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = item.path();
            let name = item.file_name().to_string_lossy().into_owned();
            if name == ".kb" || name == "kb.log" {
                continue;
            }
            let kind = item.file_type().unwrap();
            if kind.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                files.insert(path.strip_prefix(root).unwrap().display().to_string(), bytes);
            }
        }
    }
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paths_leading_out_of_the_vault_are_refused_and_touch_nothing() {
    let kb = KbServer::start(&[]).await;
    let filed = kb.post("/api/capture", &json!({"text": "Fix the shed roof", "hints": "[project]"})).await;
    let project = filed.expect(200)["path"].as_str().unwrap().to_string();

    // A secret beside the vault, and a link inside the vault pointing at it.
    let secret = kb.root.path().join("secret.md");
    std::fs::write(&secret, "---\nname: secret\n---\nroot:x:0:0 do not leak\n").unwrap();
    #[cfg(unix)]
    {
        std::fs::create_dir_all(kb.vault().join("people")).unwrap();
        std::os::unix::fs::symlink(&secret, kb.vault().join("people/evil-link.md")).unwrap();
    }

    let sentinel = format!("kb-sentinel-{}.md", std::process::id());
    let outside = [kb.root.path().to_path_buf(), kb.root.path().parent().unwrap().to_path_buf()];
    let existed: Vec<bool> = outside.iter().map(|dir| dir.join(&sentinel).exists()).collect();
    // index.md follows the capture a moment later (off the request path): the snapshot is
    // taken once it has, so only what the refused requests might do is compared.
    let index = kb.vault().join("index.md");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !std::fs::read_to_string(&index).unwrap_or_default().contains(&format!("({project})"))
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let before = snapshot(kb.root.path());

    let targets = [
        "..%2F..%2Fetc%2Fpasswd".to_string(),
        "../../etc/passwd".to_string(),
        format!("../../{sentinel}"),
        format!("../{sentinel}"),
        "/etc/passwd".to_string(),
        "%2Fetc%2Fpasswd".to_string(),
        format!("%2Ftmp%2F{sentinel}"),
        format!("people/..%2F..%2F{sentinel}"),
        format!("people/../../{sentinel}"),
        format!("projects/./../../{sentinel}"),
        format!("people%5C..%5C..%5C{sentinel}"),
        format!("..%5C..%5C{sentinel}"),
        format!("people/{}%00.md", sentinel.trim_end_matches(".md")),
        format!("{project}%00"),
        format!("{project}%00.md"),
        "people/..".to_string(),
        "people".to_string(),
        "secret.md".to_string(),
        "people/evil-link.md".to_string(),
        format!("{}/..%2F..%2Fsecret.md", project.trim_end_matches(".md")),
        "C:%5CWindows%5Cwin.ini".to_string(),
    ];
    for target in &targets {
        let url = format!("/api/entries/{target}");
        let replies = [
            ("GET", kb.get(&url).await),
            ("PATCH", kb.patch(&url, &json!({"status": "done", "name": "pwned"})).await),
            ("POST move", kb.post(&format!("{url}/move"), &json!({"targetCategory": "ideas"})).await),
        ];
        for (method, reply) in replies {
            assert!(
                reply.status == 400 || reply.status == 404,
                "{method} {url} answered {}: {}",
                reply.status,
                reply.text()
            );
            assert_error_shape(&reply.json(), &reply.text());
            let text = reply.text();
            assert!(
                !text.contains("root:x:0") && !text.contains("do not leak"),
                "{method} {url} leaked: {text}"
            );
        }
    }

    for (dir, existed) in outside.iter().zip(existed) {
        assert_eq!(dir.join(&sentinel).exists(), existed, "something was created in {}", dir.display());
    }
    assert_eq!(snapshot(kb.root.path()), before, "a refused request changed a file");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "---\nname: secret\n---\nroot:x:0:0 do not leak\n");
    // The real entry still answers.
    kb.get(&format!("/api/entries/{}", url_path(&project))).await.expect(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversize_malformed_and_mistyped_requests_get_clear_errors() {
    let kb = KbServer::start(&[]).await;

    // Over the 1 MiB body cap.
    let huge = json!({"text": "x".repeat(2 * 1024 * 1024)}).to_string();
    let reply = kb.request("POST", "/api/capture", &[], Some(huge.as_bytes())).await;
    assert_eq!(reply.expect_error(413), "payload_too_large");
    let huge = json!({"message": "x".repeat(2 * 1024 * 1024)}).to_string();
    kb.request("POST", "/api/chat", &[], Some(huge.as_bytes())).await.expect_error(413);
    // A chat message or capture over 32 KiB.
    let long = "word ".repeat(8 * 1024);
    assert_eq!(kb.post("/api/chat", &json!({"message": long})).await.expect_error(413), "payload_too_large");
    kb.post("/api/capture", &json!({"text": long})).await.expect_error(413);

    // Malformed JSON.
    for (method, target) in [
        ("POST", "/api/chat"),
        ("POST", "/api/capture"),
        ("POST", "/api/digest"),
        ("PATCH", "/api/entries/projects/x.md"),
        ("POST", "/api/entries/projects/x.md/move"),
        ("PATCH", "/api/conversations/abc"),
    ] {
        let reply = kb.request(method, target, &[], Some(br#"{"message": "unclosed"#)).await;
        reply.expect_error(400);
        let reply = kb.request(method, target, &[], Some(b"not json at all")).await;
        reply.expect_error(400);
    }
    // Not declared as JSON.
    let reply =
        kb.request("POST", "/api/capture", &[("Content-Type", "text/plain")], Some(br#"{"text":"a"}"#)).await;
    assert!(reply.status == 415 || reply.status == 400, "{}", reply.status);
    assert_error_shape(&reply.json(), &reply.text());

    // Wrong types and values.
    for (method, target, body) in [
        ("POST", "/api/chat", json!({"message": 42})),
        ("POST", "/api/chat", json!({"message": "hi", "conversationId": 7})),
        ("POST", "/api/chat", json!({})),
        ("POST", "/api/chat", json!({"message": "   "})),
        ("POST", "/api/chat", json!({"message": "hi", "surprise": true})),
        ("POST", "/api/chat", json!(["hi"])),
        ("POST", "/api/capture", json!({"text": ["a"]})),
        ("POST", "/api/capture", json!({"text": "a", "hints": 3})),
        ("POST", "/api/capture", json!({"text": ""})),
        ("POST", "/api/digest", json!({"type": "monthly"})),
        ("POST", "/api/digest", json!({"type": 1})),
        ("PATCH", "/api/entries/projects/x.md", json!([1, 2])),
        ("PATCH", "/api/entries/projects/x.md", json!("done")),
        ("POST", "/api/entries/projects/x.md/move", json!({"targetCategory": 5})),
        ("PATCH", "/api/conversations/abc", json!({"title": 5})),
    ] {
        let reply = kb.request(method, target, &[], Some(body.to_string().as_bytes())).await;
        assert_eq!(reply.status, 400, "{method} {target} {body}: {}", reply.text());
        assert_error_shape(&reply.json(), &reply.text());
    }
    for target in [
        "/api/entries?limit=abc",
        "/api/entries?limit=0",
        "/api/entries?offset=-1",
        "/api/entries?category=bogus",
        "/api/search?q=a&limit=-1",
        "/api/search?q=a&category=bogus",
    ] {
        let reply = kb.get(target).await;
        assert_eq!(reply.status, 400, "{target}: {}", reply.text());
        assert_error_shape(&reply.json(), &reply.text());
    }

    // A limit above 100 is capped, as list_entries caps it (docs/TOOLS.md).
    kb.get("/api/entries?limit=1000").await.expect(200);

    // Unknown endpoints.
    for (method, target) in [
        ("GET", "/api/nope"),
        ("POST", "/api/entries/projects/x.md/frobnicate"),
        ("GET", "/api/conversations/no-such-conversation"),
        ("GET", "/nope"),
    ] {
        let body = (method == "POST").then_some(br#"{"targetCategory":"ideas"}"#.as_slice());
        let reply = kb.request(method, target, &[], body).await;
        assert_eq!(reply.status, 404, "{method} {target}: {}", reply.text());
        assert_error_shape(&reply.json(), &reply.text());
    }

    // Known paths, wrong methods.
    for (method, target) in
        [("DELETE", "/api/entries"), ("GET", "/api/chat"), ("PUT", "/api/capture"), ("POST", "/healthz")]
    {
        let reply = kb.request(method, target, &[], None).await;
        assert_eq!(reply.status, 405, "{method} {target}: {}", reply.text());
        assert_error_shape(&reply.json(), &reply.text());
    }

    assert!(kb.entry_files().is_empty(), "a refused request filed something");
    assert!(kb.get("/api/conversations").await.expect(200)["conversations"].as_array().unwrap().is_empty());
    assert_eq!(kb.get("/healthz").await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_written_index_survives_serve_byte_for_byte() {
    let own = "# My vault home\n\n- [[Reading list]]\n- Projects I care about\n";
    let kb =
        KbServer::start_with_vault(&[], |vault| std::fs::write(vault.join("index.md"), own).unwrap()).await;
    let health = kb.get("/healthz").await.expect(200);
    assert_eq!(health["indexFile"], "kb-index.md");
    assert!(health["notices"][0].as_str().unwrap().contains("kb-index.md"), "{health}");
    let filed = kb.post("/api/capture", &json!({"text": "Fix the shed roof", "hints": "[project]"})).await;
    let path = filed.expect(200)["path"].as_str().unwrap().to_string();
    kb.patch(&format!("/api/entries/{}", url_path(&path)), &json!({"updates": {"next_action": "buy nails"}}))
        .await
        .expect(200);
    let index = kb.get("/api/index").await;
    assert_eq!(index.status, 200);
    assert!(index.text().contains(&path), "GET /api/index serves kb's index: {}", index.text());
    assert_eq!(std::fs::read_to_string(kb.vault().join("index.md")).unwrap(), own);
    let generated = kb.vault().join("kb-index.md");
    let lists = async || std::fs::read_to_string(&generated).is_ok_and(|text| text.contains(&path));
    assert!(eventually(lists).await, "kb-index.md does not list {path}");
    assert!(kb.log().matches("kb-index.md").count() >= 1, "the log says where the index went");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_faults_come_out_as_fitting_statuses() {
    let (fake, kb) = with_model(&[]).await;
    let ask = json!({"message": "What is on my plate?"});

    // Rate limited on every try: kb retries (3 tries in all), then answers 429.
    for _ in 0..3 {
        fake.push(FakeReply::rate_limited(Some(1)));
    }
    let reply = kb.post("/api/chat", &ask).await;
    assert_eq!(reply.expect_error(429), "llm_rate_limited");
    assert_eq!(reply.header("retry-after"), Some("1"));
    assert_eq!(fake.requests().len(), 3);
    assert_eq!(fake.pending(), 0);

    // The model's server failing: 503 with a retry hint.
    for status in [500, 503] {
        fake.push(FakeReply::error(status, "server_error", "The engine is overloaded"));
        let reply = kb.post("/api/chat", &ask).await;
        assert_eq!(reply.expect_error(503), "llm_unavailable");
        assert!(reply.header("retry-after").is_some());
    }

    // An answer that is no chat completion: 502.
    fake.push(FakeReply::raw(200, "<html>this is no chat completion</html>"));
    let reply = kb.post("/api/chat", &ask).await;
    assert_eq!(reply.expect_error(502), "llm_malformed");
    fake.push(FakeReply::raw(200, r#"{"choices": "nope"}"#));
    kb.post("/api/chat", &ask).await.expect_error(502);

    // Outside a chat turn: a capture whose classifier cannot be asked files nothing and
    // answers as chat does (503, 429 with Retry-After); one whose answers are unusable
    // answers 502 with advice; one with a hint is filed anyway; and a digest falls back to
    // the plain facts.
    let capture = json!({"text": "Renew passport by Dec 15"});
    fake.push(FakeReply::error(503, "server_error", "The engine is overloaded"));
    let reply = kb.post("/api/capture", &capture).await;
    assert_eq!(reply.expect_error(503), "llm_unavailable");
    assert!(reply.header("retry-after").is_some());
    assert!(
        reply.json()["error"]["message"].as_str().unwrap().contains("nothing was filed"),
        "{}",
        reply.text()
    );
    for _ in 0..3 {
        fake.push(FakeReply::rate_limited(Some(2)));
    }
    let reply = kb.post("/api/capture", &capture).await;
    assert_eq!(reply.expect_error(429), "llm_rate_limited");
    assert_eq!(reply.header("retry-after"), Some("2"));
    for _ in 0..2 {
        fake.push(FakeReply::raw(200, r#"{"choices": "nope"}"#));
    }
    let reply = kb.post("/api/capture", &capture).await;
    assert_eq!(reply.expect_error(502), "classification_failed");
    assert!(kb.entry_files().is_empty());
    assert_eq!(fake.pending(), 0);
    fake.push(FakeReply::error(503, "server_error", "The engine is overloaded"));
    let hinted = json!({"text": "Renew passport by Dec 15", "hints": "[admin]"});
    let filed = kb.post("/api/capture", &hinted).await.expect(200);
    assert_eq!(filed["category"], "admin");
    assert_eq!(kb.entry_files(), [filed["path"].as_str().unwrap()]);
    fake.push(FakeReply::error(503, "server_error", "The engine is overloaded"));
    let digest = kb.post("/api/digest", &json!({"type": "daily"})).await.expect(200);
    assert!(digest["content"].as_str().unwrap().contains("Renew passport"), "{digest}");
    assert_eq!(fake.pending(), 0);

    // Nothing of a failed turn is kept, and kb still answers.
    assert!(kb.get("/api/conversations").await.expect(200)["conversations"].as_array().unwrap().is_empty());
    fake.push(FakeReply::text("Nothing urgent."));
    assert_eq!(kb.post("/api/chat", &ask).await.expect(200)["message"]["content"], "Nothing urgent.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_model_times_out_with_504() {
    let (fake, kb) = with_model(&[("KB_LLM_TIMEOUT_SECS", "1")]).await;
    fake.push(FakeReply::Hang);
    let started = Instant::now();
    let reply = kb.post("/api/chat", &json!({"message": "hello?"})).await;
    assert_eq!(reply.expect_error(504), "llm_timeout");
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());

    // A capture whose classifier does not answer in time: 504, nothing filed.
    fake.push(FakeReply::Hang);
    let reply = kb.post("/api/capture", &json!({"text": "Renew passport by Dec 15"})).await;
    assert_eq!(reply.expect_error(504), "llm_timeout");
    assert!(kb.entry_files().is_empty());

    fake.push(FakeReply::text("Here I am."));
    assert_eq!(
        kb.post("/api/chat", &json!({"message": "hello?"})).await.expect(200)["message"]["content"],
        "Here I am."
    );
}

/// Polls `check` every 50 ms for up to 10 s; true once it holds.
async fn eventually(mut check: impl AsyncFnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_made_outside_kb_reach_the_api_and_health_counts_broken_files() {
    let kb = KbServer::start(&[]).await;
    let health = kb.get("/healthz").await.expect(200);
    assert_eq!((health["model"].as_str(), health["entries"].as_u64()), (Some("offline"), Some(0)));

    std::fs::create_dir_all(kb.vault().join("ideas")).unwrap();
    std::fs::write(
        kb.vault().join("ideas/solar-kettle.md"),
        "---\nname: Solar kettle\none_liner: boil water with sunlight\n---\nSketch a parabolic dish.\n",
    )
    .unwrap();
    std::fs::write(kb.vault().join("ideas/broken.md"), "---\nname: [unclosed\n---\nbody\n").unwrap();

    let found = eventually(async || {
        let hits = kb.get("/api/search?q=parabolic").await.json();
        hits["entries"][0]["path"] == "ideas/solar-kettle.md"
    })
    .await;
    assert!(found, "a hand-written entry never became searchable");
    let got = kb.get("/api/entries/ideas/solar-kettle.md").await.expect(200);
    assert_eq!(got["entry"]["frontmatter"]["one_liner"], "boil water with sunlight");
    let counted = eventually(async || {
        let health = kb.get("/healthz").await.json();
        health["entries"] == 1 && health["malformedFiles"] == 1
    })
    .await;
    assert!(counted, "{}", kb.get("/healthz").await.text());
    assert!(kb.get("/api/index").await.text().contains("(ideas/solar-kettle.md)"));
    assert_eq!(kb.get("/api/entries").await.expect(200)["total"], 1);
    // The broken file is reported, never rewritten.
    assert_eq!(
        std::fs::read_to_string(kb.vault().join("ideas/broken.md")).unwrap(),
        "---\nname: [unclosed\n---\nbody\n"
    );
    let reply = kb.patch("/api/entries/ideas/broken.md", &json!({"status": "done"})).await;
    assert!(reply.status >= 400, "{}", reply.text());
    assert_error_shape(&reply.json(), &reply.text());
    assert_eq!(
        std::fs::read_to_string(kb.vault().join("ideas/broken.md")).unwrap(),
        "---\nname: [unclosed\n---\nbody\n"
    );
}

/// PATCH with `{updates?, body?}`: each body mode edits the notes in one write, fields and
/// notes change together, the rest of the file keeps its bytes, and a refused edit
/// answers 4xx and changes nothing. The older body (the fields themselves) still works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patch_edits_the_notes_and_a_refused_edit_changes_nothing() {
    let hand =
        "---\n# by hand\nname: \"Shed roof\"\nversion: 1.10\nstatus: active\n---\nThe north side leaks.\n";
    let kb = KbServer::start_with_vault(&[], |vault| {
        std::fs::create_dir_all(vault.join("projects")).unwrap();
        std::fs::write(vault.join("projects/shed.md"), hand).unwrap();
    })
    .await;
    let url = "/api/entries/projects/shed.md";
    let file = kb.vault().join("projects/shed.md");
    let read = || std::fs::read_to_string(&file).unwrap();
    let notes = || read().split_once("---\n").unwrap().1.split_once("---\n").unwrap().1.to_string();

    // The older form: the fields themselves; only their lines change.
    let done = kb.patch(url, &json!({"status": "done"})).await.expect(200);
    assert_eq!(done, json!({"path": "projects/shed.md", "updatedFields": ["status"]}));
    let text = read();
    assert!(
        text.starts_with("---\n# by hand\nname: \"Shed roof\"\nversion: 1.10\nstatus: done\nupdated_at: "),
        "{text}"
    );
    assert!(text.ends_with("---\nThe north side leaks.\n"), "{text}");

    for (body, expected) in [
        (json!({"mode": "append", "content": "Felt bought."}), "The north side leaks.\n\nFelt bought.\n"),
        (
            json!({"mode": "prepend", "content": "Urgent."}),
            "Urgent.\n\nThe north side leaks.\n\nFelt bought.\n",
        ),
        (
            json!({"mode": "find_replace", "find": "north", "content": "south"}),
            "Urgent.\n\nThe south side leaks.\n\nFelt bought.\n",
        ),
    ] {
        let reply = kb.patch(url, &json!({"body": body})).await.expect(200);
        assert_eq!(reply["updatedFields"], json!(["content"]));
        assert_eq!(notes(), expected);
    }
    let both = kb
        .patch(
            url,
            &json!({"updates": {"next_action": "Call the roofer"},
                    "body": {"mode": "section", "section": "Log", "content": "Measured the roof"}}),
        )
        .await
        .expect(200);
    assert_eq!(both["updatedFields"], json!(["next_action", "content"]));
    let notes_now = notes();
    let last = notes_now.lines().last().unwrap();
    assert!(notes_now.contains("Felt bought.\n\n## Log\n\n- 20"), "{notes_now}");
    assert!(last.starts_with("- 20") && last.ends_with(": Measured the roof"), "{last}");
    assert!(read().contains("next_action: Call the roofer\n"), "{}", read());
    let got = kb.get(url).await.expect(200);
    assert_eq!(got["entry"]["content"], notes_now.as_str());
    let replaced = kb.patch(url, &json!({"body": {"mode": "replace", "content": "All fixed.\n"}})).await;
    replaced.expect(200);
    assert_eq!(notes(), "All fixed.\n");

    // Refused: 400 with the error shape, and the file is the same bytes.
    let before = read();
    for body in [
        json!({"updates": {"status": "blocked"}, "body": {"mode": "find_replace", "find": "fixed", "content": "x", "expectedReplacements": 2}}),
        json!({"body": {"mode": "find_replace", "find": "nowhere", "content": "x"}}),
        json!({"body": {"mode": "append", "content": "  "}}),
        json!({"body": {"mode": "section", "content": "x"}}),
        json!({"body": {"mode": "rewrite", "content": "x"}}),
        json!({"body": {"mode": "append"}}),
        json!({"body": {"mode": "append", "content": "x"}, "status": "done"}),
        json!({"updates": {"status": "sleeping"}, "body": {"mode": "append", "content": "x"}}),
        json!({"updates": {"content": "x"}, "body": {"mode": "append", "content": "y"}}),
    ] {
        let reply = kb.patch(url, &body).await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.text());
        assert_error_shape(&reply.json(), &reply.text());
        assert_eq!(read(), before, "{body} changed the file");
    }
    let mismatch = kb
        .patch(url, &json!({"body": {"mode": "find_replace", "find": "fixed", "content": "x", "expectedReplacements": 2}}))
        .await;
    assert!(mismatch.text().contains("1 time, not 2"), "{}", mismatch.text());
    kb.patch("/api/entries/projects/nobody.md", &json!({"body": {"mode": "append", "content": "x"}}))
        .await
        .expect_error(404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entrys_links_and_backlinks_are_answered_with_it_and_on_their_own() {
    let kb = KbServer::start_with_vault(&[], |vault| {
        for (file, text) in [
            ("people/priya.md", "---\nname: Priya Raman\naliases: [Pri]\n---\nRuns the meetup.\n"),
            ("projects/kiln.md", "---\nname: Kiln\n---\nAsk [[Priya]] about firing.\n```\n[[Priya]]\n```\n"),
            ("ideas/glaze.md", "---\nname: Glaze\n---\nFrom [[Pri|her]]; see [kiln](../projects/kiln.md).\n"),
        ] {
            std::fs::create_dir_all(vault.join(file).parent().unwrap()).unwrap();
            std::fs::write(vault.join(file), text).unwrap();
        }
    })
    .await;
    let entry = kb.get("/api/entries/projects/kiln.md").await.expect(200);
    assert_eq!(
        entry["links"],
        json!([{"path": "people/priya.md", "name": "Priya Raman", "line": "Ask [[Priya]] about firing.", "kind": "note"}])
    );
    assert_eq!(entry["backlinks"][0]["path"], "ideas/glaze.md");
    let links = kb.get("/api/entries/people/priya.md/links").await.expect(200);
    let from: Vec<&str> =
        links["backlinks"].as_array().unwrap().iter().map(|b| b["path"].as_str().unwrap()).collect();
    assert_eq!(from, ["ideas/glaze.md", "projects/kiln.md"]);
    assert_eq!(links["links"], json!([]));
    let missing = kb.get("/api/entries/people/nobody.md/links").await;
    assert_eq!(missing.status, 404);

    // build_context over HTTP: the notes around an entry, two links away.
    let context = kb.get("/api/entries/projects/kiln.md/context?depth=2").await.expect(200);
    assert_eq!(context["entry"]["name"], "Kiln");
    let around: Vec<(&str, u64)> = context["related"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["path"].as_str().unwrap(), n["distance"].as_u64().unwrap()))
        .collect();
    assert!(around.contains(&("people/priya.md", 1)) && around.contains(&("ideas/glaze.md", 1)), "{context}");
    assert_eq!(context["total"], 2);
    let refused = kb.get("/api/entries/projects/kiln.md/context?depth=9").await;
    assert_eq!(refused.status, 400, "{}", refused.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_kb_cannot_write_to_answers_why_without_the_machines_paths() {
    let kb = KbServer::start(&[]).await;
    kb.post("/api/capture", &json!({"text": "Fix the shed roof", "hints": "[project]"})).await.expect(200);
    // Where the ideas folder belongs, a file: no idea can be written there.
    let _ = std::fs::remove_dir(kb.vault().join("ideas"));
    std::fs::write(kb.vault().join("ideas"), "not a folder\n").unwrap();

    let reply = kb.post("/api/capture", &json!({"text": "[idea] a shared garden plan"})).await;
    assert_eq!(reply.status, 500, "{}", reply.text());
    let body = reply.json();
    assert_error_shape(&body, &reply.text());
    assert_eq!(body["error"]["code"], "disk_error", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    let vault_name = kb.vault().file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        message.contains(&format!("at {vault_name}/ideas:")) && message.contains("os error"),
        "{message}"
    );
    let root = kb.root.path().display().to_string();
    assert!(!message.contains(&root), "the vault's place on the machine leaked: {message}");
    assert_eq!(std::fs::read_to_string(kb.vault().join("ideas")).unwrap(), "not a folder\n");

    // A file handed to kb, with a file where its attachments folder belongs: the same.
    let _ = std::fs::remove_dir_all(kb.vault().join("attachments"));
    std::fs::write(kb.vault().join("attachments"), "not a folder\n").unwrap();
    let note = b"# Seeds\n\nTomatoes, basil.\n";
    let reply = kb
        .request("POST", "/api/files?name=seeds.md", &[("Content-Type", "text/markdown")], Some(note))
        .await;
    assert_eq!(reply.status, 500, "{}", reply.text());
    assert_eq!(reply.json()["error"]["code"], "disk_error", "{}", reply.text());
    assert!(!reply.text().contains(&root), "{}", reply.text());
}
