//! The site rule of docs/HTTP.md against the real `kb serve`: a change (POST, PUT, PATCH,
//! DELETE) that a browser says another site sent, or a page on another port of this machine
//! (`Sec-Fetch-Site: cross-site` or `same-site`), is refused with 403 `forbidden_site` on
//! every route, `/mcp` included, and changes nothing — not even the `Idempotency-Key` it
//! carried. kb's own page (`same-origin`), the person's own navigation (`none`) and clients
//! that send no such header (curl, the SDKs) are let through; reading is never refused.

use crate::common::{KbServer, Reply, url_path};
use serde_json::{Value, json};

/// What an MCP client says it accepts, and its JSON type.
const MCP_HEADERS: [(&str, &str); 2] =
    [("Accept", "application/json, text/event-stream"), ("Content-Type", "application/json")];

/// `POST /api/capture {text}` with `headers`.
async fn capture(kb: &KbServer, text: &str, headers: &[(&str, &str)]) -> Reply {
    kb.request("POST", "/api/capture", headers, Some(json!({"text": text}).to_string().as_bytes())).await
}

/// A `tools/call` of `classify_and_capture` filing `text` as an admin entry.
fn mcp_capture(id: u64, text: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "classify_and_capture",
        "arguments": {"text": text, "classification": {"category": "admin", "confidence": 0.9, "name": text}}}})
    .to_string()
    .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_a_browser_says_another_site_or_port_sent_are_refused_and_change_nothing() {
    let kb = KbServer::start(&[]).await;
    let filed = capture(&kb, "[person:Priya Raman] met at the robotics conference", &[]).await.expect(200);
    let path = filed["path"].as_str().unwrap().to_string();
    let entry = format!("/api/entries/{}", url_path(&path));
    // An MCP session opened by a client (no such header).
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let opened = kb.request("POST", "/mcp", &MCP_HEADERS, Some(init.to_string().as_bytes())).await;
    assert_eq!(opened.status, 200, "{}", opened.text());
    let session = opened.header("mcp-session-id").expect("a session id").to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let in_session = [
        MCP_HEADERS[0],
        MCP_HEADERS[1],
        ("MCP-Protocol-Version", "2025-06-18"),
        ("Mcp-Session-Id", &session),
    ];
    assert_eq!(kb.request("POST", "/mcp", &in_session, Some(initialized.as_bytes())).await.status, 202);
    let (files, priya) = (kb.entry_files(), std::fs::read(kb.vault().join(&path)).unwrap());

    // Another site, a page on another port of 127.0.0.1 or localhost (same-site), and values
    // kb does not know: every change refused, on every route and method.
    for site in ["cross-site", "same-site", "Cross-Site", "same-site, same-origin", "something-new"] {
        let sent = [("Sec-Fetch-Site", site)];
        let keyed = [("Sec-Fetch-Site", site), ("Idempotency-Key", "share-1")];
        let refused: Vec<(&str, Reply)> = vec![
            ("capture", capture(&kb, "[person:Priya Raman] wants the slides", &sent).await),
            ("capture with a key", capture(&kb, "[person:Priya Raman] wants the slides", &keyed).await),
            ("undo", kb.request("POST", "/api/undo", &sent, None).await),
            (
                "update",
                kb.request("PATCH", &entry, &sent, Some(br#"{"updates": {"context": "stolen"}}"#)).await,
            ),
            (
                "move",
                kb.request("POST", &format!("{entry}/move"), &sent, Some(br#"{"targetCategory": "ideas"}"#))
                    .await,
            ),
            ("delete", kb.request("DELETE", &entry, &sent, None).await),
            ("put", kb.request("PUT", &entry, &sent, Some(b"{}")).await),
            ("digest", kb.request("POST", "/api/digest", &sent, Some(br#"{"type": "daily"}"#)).await),
            ("chat", kb.request("POST", "/api/chat", &sent, Some(br#"{"message": "hi"}"#)).await),
            (
                "mcp initialize",
                kb.request(
                    "POST",
                    "/mcp",
                    &[MCP_HEADERS[0], MCP_HEADERS[1], sent[0]],
                    Some(init.to_string().as_bytes()),
                )
                .await,
            ),
            ("mcp tool call", {
                let headers = [in_session[0], in_session[1], in_session[2], in_session[3], sent[0]];
                kb.request("POST", "/mcp", &headers, Some(&mcp_capture(2, "Wire the money"))).await
            }),
            (
                "mcp session end",
                kb.request("DELETE", "/mcp", &[in_session[2], in_session[3], sent[0]], None).await,
            ),
        ];
        for (what, reply) in refused {
            assert_eq!(reply.expect_error(403), "forbidden_site", "{what} with Sec-Fetch-Site: {site}");
            assert!(reply.text().contains("Sec-Fetch-Site"), "{what}: {}", reply.text());
        }
        // Reading changes nothing and is not refused: the share page, the API, health.
        let page = kb.request("GET", "/share?text=hello", &sent, None).await;
        assert_eq!(page.status, 200, "GET /share with Sec-Fetch-Site: {site}");
        kb.request("GET", "/api/entries", &sent, None).await.expect(200);
        kb.request("GET", "/healthz", &sent, None).await.expect(200);
    }
    assert_eq!(kb.entry_files(), files, "a refused change filed or removed an entry");
    assert_eq!(std::fs::read(kb.vault().join(&path)).unwrap(), priya, "a refused change wrote Priya's entry");

    // The refused key was never claimed: a client sending it now gets a fresh answer.
    let fresh =
        capture(&kb, "[person:Priya Raman] wants the slides", &[("Idempotency-Key", "share-1")]).await;
    let fresh_body = fresh.expect(200);
    assert!(fresh.header("idempotent-replayed").is_none(), "{fresh_body}");
    assert_eq!(fresh_body["path"], json!(path), "added to Priya's entry: {fresh_body}");

    // kb's own page (same-origin, with its Origin), the person's own navigation (none) and
    // clients that send no such header: filed.
    let own = format!("http://{}", kb.addr);
    let senders: [(&str, Vec<(&str, &str)>); 4] = [
        ("same-origin", vec![("Sec-Fetch-Site", "same-origin"), ("Origin", own.as_str())]),
        ("Same-Origin", vec![("Sec-Fetch-Site", "Same-Origin")]),
        ("none", vec![("Sec-Fetch-Site", "none")]),
        ("no header", vec![]),
    ];
    for (i, (what, headers)) in senders.iter().enumerate() {
        let text = format!("Book the dentist, errand {i}");
        let answer: Value = capture(&kb, &text, headers).await.expect(200);
        let filed = std::fs::read_to_string(kb.vault().join(answer["path"].as_str().unwrap())).unwrap();
        assert!(filed.contains(&text), "{what}: {filed}");
    }
    let headers =
        [in_session[0], in_session[1], in_session[2], in_session[3], ("Sec-Fetch-Site", "same-origin")];
    let called = kb.request("POST", "/mcp", &headers, Some(&mcp_capture(3, "Renew the passport"))).await;
    assert_eq!(called.status, 200, "{}", called.text());
    assert!(kb.vault().join("admin/renew-the-passport.md").exists(), "{}", called.text());
    assert_eq!(kb.request("DELETE", &entry, &[("Sec-Fetch-Site", "none")], None).await.status, 200);
    assert!(!kb.vault().join(&path).exists(), "the person's own delete did not delete");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_does_not_let_another_site_change_anything() {
    let kb = KbServer::start(&[("KB_API_TOKEN", "s3cret-token")]).await;
    let token = ("Authorization", "Bearer s3cret-token");
    for site in ["cross-site", "same-site"] {
        let reply = capture(&kb, "Buy a boat", &[token, ("Sec-Fetch-Site", site)]).await;
        assert_eq!(reply.expect_error(403), "forbidden_site", "{site}");
    }
    assert!(kb.entry_files().is_empty(), "{:?}", kb.entry_files());
    capture(&kb, "Buy a boat", &[token, ("Sec-Fetch-Site", "same-origin")]).await.expect(200);
    // Without the token the answer is still 401: the site rule refuses, it never lets in.
    assert_eq!(
        capture(&kb, "Buy a boat", &[("Sec-Fetch-Site", "none")]).await.expect_error(401),
        "unauthorized"
    );
}
