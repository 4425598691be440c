//! Several people on one kb: two people with vaults of their own and a shared vault, across
//! two `kb serve` processes on the same data. One never reaches another's vault — by
//! `Kb-Vault`, a guessed path, a conversation id, an Idempotency-Key or an MCP session —
//! a reader's change is refused and changes no byte, and every change names its person.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::accounts::kb;
use crate::common::{KbServer, Reply};

/// Every file under `folder` with its bytes, `.kb/` aside (kb's own bookkeeping).
fn files(folder: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, into: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(read) = std::fs::read_dir(dir) else { return };
        for entry in read.flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(root).unwrap().display().to_string();
            if relative == ".kb" {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, into);
            } else {
                into.insert(relative, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut found = BTreeMap::new();
    walk(folder, folder, &mut found);
    found
}

/// One person's way in: a token, and the vault asked for (`None`: their own).
struct As<'a> {
    server: &'a KbServer,
    token: String,
    vault: Option<&'a str>,
}

impl As<'_> {
    async fn send(&self, method: &str, target: &str, body: Option<Value>, extra: &[(&str, &str)]) -> Reply {
        let bearer = format!("Bearer {}", self.token);
        let mut headers = vec![("Authorization", bearer.as_str()), ("Content-Type", "application/json")];
        if let Some(vault) = self.vault {
            headers.push(("Kb-Vault", vault));
        }
        headers.extend_from_slice(extra);
        let body = body.map(|b| b.to_string());
        self.server.request(method, target, &headers, body.as_deref().map(str::as_bytes)).await
    }

    async fn get(&self, target: &str) -> Reply {
        self.send("GET", target, None, &[]).await
    }

    async fn capture(&self, text: &str) -> Reply {
        self.send("POST", "/api/capture", Some(json!({"text": text})), &[]).await
    }

    fn in_vault<'b>(&'b self, vault: &'b str) -> As<'b> {
        As { server: self.server, token: self.token.clone(), vault: Some(vault) }
    }

    fn on<'b>(&'b self, server: &'b KbServer) -> As<'b> {
        As { server, token: self.token.clone(), vault: self.vault }
    }
}

/// The paths `/api/search?q=` finds.
async fn found(who: &As<'_>, words: &str) -> Vec<String> {
    let reply = who.get(&format!("/api/search?q={}", words.replace(' ', "+"))).await;
    let body = reply.expect(200);
    body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_reach_their_own_vaults_and_shared_ones_by_role_only() {
    let data = tempfile::tempdir().unwrap();
    let root = data.path();
    kb(root, &["users", "add", "ana", "--email", "ana@example.org"]);
    let bo_added = kb(root, &["users", "add", "bo"]);
    kb(root, &["users", "add", "cy"]);
    let family = root.join("family");
    kb(root, &["vaults", "add", "family", family.to_str().unwrap()]);
    kb(root, &["vaults", "grant", "family", "bo", "editor"]);
    kb(root, &["vaults", "grant", "family", "ana", "editor"]);
    kb(root, &["vaults", "grant", "family", "cy", "reader"]);
    let token = |name: &str, extra: &[&str]| {
        let mut args = vec!["tokens", "issue", name];
        args.extend_from_slice(extra);
        kb(root, &args)["token"].as_str().unwrap().to_string()
    };
    let (ana_token, bo_token, cy_token, bo_reading) =
        (token("ana", &[]), token("bo", &[]), token("cy", &[]), token("bo", &["--read-only"]));
    let dir = root.to_string_lossy().into_owned();
    let one = KbServer::start(&[("KB_DATA_DIR", dir.as_str())]).await;
    let two = KbServer::start_on(&one.vault(), &[("KB_DATA_DIR", dir.as_str())]).await;
    let ana = As { server: &one, token: ana_token, vault: None };
    let bo = As { server: &two, token: bo_token, vault: None };
    let cy = As { server: &one, token: cy_token, vault: None };

    // Each files in their own vault: ana's is the one kb serve is given, bo's his own folder.
    ana.capture("[idea] Ana's secret lighthouse plan").await.expect(200);
    let bo_note = bo.capture("[idea] Bo's private greenhouse").await.expect(200);
    let bo_path = bo_note["path"].as_str().unwrap().to_string();
    assert!(files(&one.vault()).keys().any(|f| f.contains("lighthouse")));
    assert!(!files(&one.vault()).keys().any(|f| f.contains("greenhouse")), "bo's note is not in ana's vault");
    let bo_folder = Path::new(bo_added["vault"].as_str().unwrap());
    assert!(files(bo_folder).keys().any(|f| f.contains("greenhouse")));

    // Neither finds, reads or guesses into the other's vault, on either server.
    for server in [&one, &two] {
        assert!(found(&bo.on(server), "lighthouse").await.is_empty(), "bo searched ana's vault");
        assert!(found(&ana.on(server), "greenhouse").await.is_empty(), "ana searched bo's vault");
        let guessed = ana.on(server).get(&format!("/api/entries/{bo_path}")).await;
        assert_eq!(guessed.status, 404, "{}", guessed.text());
        for target in ["/api/entries", "/api/search?q=greenhouse", "/api/digests", "/api/index"] {
            let there = ana.on(server);
            let refused = there.in_vault("bo").get(target).await;
            let missing = ana.on(server).in_vault("nosuch").get(target).await;
            assert_eq!((refused.status, missing.status), (404, 404), "{target}: {}", refused.text());
            assert_eq!(refused.json()["error"]["code"], "vault_not_found", "{}", refused.text());
            assert_eq!(
                missing.json()["error"]["code"],
                "vault_not_found",
                "another's vault reads as none at all"
            );
        }
        let history = ana.on(server).get(&format!("/api/entries/{bo_path}/history")).await;
        assert!(history.status == 404 || history.json()["revisions"] == json!([]), "{}", history.text());
    }

    // The shared vault: bo and ana edit it, cy reads it and changes nothing.
    let bo_family = bo.in_vault("family");
    let shared = bo_family.capture("[project] Family reunion in June").await.expect(200);
    let shared_path = shared["path"].as_str().unwrap().to_string();
    assert_eq!(found(&cy.in_vault("family"), "reunion").await, std::slice::from_ref(&shared_path));
    let before = files(&family);
    let cy_family = cy.in_vault("family");
    for (method, target, body) in [
        ("POST", "/api/capture".to_string(), json!({"text": "[idea] cy was here"})),
        ("PATCH", format!("/api/entries/{shared_path}"), json!({"fields": {"status": "done"}})),
        ("DELETE", format!("/api/entries/{shared_path}"), json!({})),
        ("POST", "/api/undo".to_string(), json!({})),
        ("POST", format!("/api/entries/{shared_path}/move"), json!({"category": "ideas"})),
    ] {
        let refused = cy_family.send(method, &target, Some(body), &[]).await;
        assert_eq!(refused.status, 403, "{method} {target}: {}", refused.text());
        assert_eq!(refused.json()["error"]["code"], "forbidden_role");
    }
    // A reader's chat is offered only the tools that read: a capture it asks for is not made.
    let chat =
        cy_family.send("POST", "/api/chat", Some(json!({"message": "remember to buy a cake"})), &[]).await;
    assert_eq!(chat.status, 200, "a reader chats: {}", chat.text());
    assert_eq!(files(&family), before, "a reader's attempts changed no byte");
    // A read-only token reads, and changes nothing even in bo's own vault.
    let reading = As { server: &one, token: bo_reading, vault: None };
    assert!(found(&reading, "greenhouse").await.len() == 1);
    assert_eq!(reading.capture("[idea] not allowed").await.status, 403);

    // Each change names its person; each undo reaches only its person's changes.
    let ana_family = ana.in_vault("family");
    ana_family.capture("[idea] Ana's cake recipe for the reunion").await.expect(200);
    let history = bo_family.get(&format!("/api/entries/{shared_path}/history")).await.expect(200);
    assert_eq!(history["revisions"][0]["person"], "bo", "{history}");
    let undone = bo_family.send("POST", "/api/undo", None, &[]).await.expect(200);
    assert!(undone.to_string().contains("reunion"), "bo undid his own capture: {undone}");
    assert_eq!(found(&bo_family, "cake recipe").await.len(), 1, "ana's change stays");

    // Idempotency-Keys are each person's: the same key from two people files two notes.
    let key = [("Idempotency-Key", "shared-key-1")];
    let first =
        bo_family.send("POST", "/api/capture", Some(json!({"text": "[idea] bo key note"})), &key).await;
    let second =
        ana_family.send("POST", "/api/capture", Some(json!({"text": "[idea] ana key note"})), &key).await;
    assert_eq!((first.status, second.status), (200, 200), "{}", second.text());
    assert_ne!(first.json()["path"], second.json()["path"], "ana's request was not answered with bo's");

    // Conversations are their person's, even in a shared vault.
    let said = ana_family
        .send("POST", "/api/chat", Some(json!({"message": "what is planned for June?"})), &[])
        .await;
    let conversation = said.expect(200)["conversationId"].as_str().unwrap().to_string();
    assert_eq!(bo_family.get(&format!("/api/conversations/{conversation}")).await.status, 404);
    let listed = bo_family.get("/api/conversations").await.expect(200);
    assert!(!listed.to_string().contains(&conversation), "{listed}");
    let guessed_undo =
        bo_family.send("POST", "/api/undo", Some(json!({"conversationId": conversation})), &[]).await;
    assert_eq!(guessed_undo.status, 404, "{}", guessed_undo.text());

    // Each person's list of vaults, with their role.
    let vaults = cy.get("/api/vaults").await.expect(200);
    assert_eq!(
        vaults["vaults"],
        json!([
            {"name": "cy", "role": "editor", "own": true, "current": true},
            {"name": "family", "role": "reader", "own": false, "current": false},
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_session_is_bound_to_its_person_and_a_reader_gets_reading_tools() {
    let data = tempfile::tempdir().unwrap();
    let root = data.path();
    kb(root, &["users", "add", "ana"]);
    kb(root, &["users", "add", "cy"]);
    let family = root.join("family");
    kb(root, &["vaults", "add", "family", family.to_str().unwrap()]);
    kb(root, &["vaults", "grant", "family", "cy", "reader"]);
    let ana = kb(root, &["tokens", "issue", "ana"])["token"].as_str().unwrap().to_string();
    let cy = kb(root, &["tokens", "issue", "cy"])["token"].as_str().unwrap().to_string();
    let dir = root.to_string_lossy().into_owned();
    let server = KbServer::start(&[("KB_DATA_DIR", dir.as_str())]).await;
    let client = reqwest::Client::new();
    let url = format!("http://{}/mcp", server.addr);
    let post = |token: &str, vault: Option<&str>, session: Option<&str>, body: Value| {
        let mut request = client
            .post(&url)
            .bearer_auth(token)
            .header("Accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(vault) = vault {
            request = request.header("Kb-Vault", vault);
        }
        if let Some(session) = session {
            request = request.header("Mcp-Session-Id", session);
        }
        request.send()
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    let opened = post(&cy, Some("family"), None, initialize.clone()).await.unwrap();
    assert_eq!(opened.status(), 200);
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_string();
    post(
        &cy,
        Some("family"),
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await
    .unwrap();

    // Another person with the same session id (or the same person in another vault) is
    // refused: the id is known only where it was opened.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let stolen = post(&ana, Some("cy"), Some(&session), list.clone()).await.unwrap();
    assert_eq!(stolen.status(), 404, "ana is not let into cy's vault at all");
    let elsewhere = post(&ana, None, Some(&session), list.clone()).await.unwrap();
    assert!(elsewhere.status().is_client_error(), "a session id from another person: {}", elsewhere.status());
    let own_vault = post(&cy, None, Some(&session), list.clone()).await.unwrap();
    assert!(own_vault.status().is_client_error(), "the session belongs to family: {}", own_vault.status());

    // A reader's session lists only the reading tools; a changing tool is an error result.
    let listed = post(&cy, Some("family"), Some(&session), list).await.unwrap().text().await.unwrap();
    assert!(listed.contains("search_entries") && !listed.contains("classify_and_capture"), "{listed}");
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "classify_and_capture", "arguments": {"text": "[idea] a reader's note"}}});
    let refused = post(&cy, Some("family"), Some(&session), call).await.unwrap().text().await.unwrap();
    assert!(refused.contains("\"isError\":true") && refused.contains("reader"), "{refused}");
    assert!(files(&family).is_empty(), "nothing was written: {:?}", files(&family).keys());
}

/// The code of the sign-in link in `mail` (after `#sign-in=`), with the link's base.
fn link_in(mail: &str) -> (String, String) {
    let text = mail.replace("=\r\n", "").replace("=3D", "=");
    let start = text.find("/#sign-in=").expect("a sign-in link in the mail");
    let base_start = text[..start].rfind(char::is_whitespace).map_or(0, |i| i + 1);
    let code: String =
        text[start + "/#sign-in=".len()..].chars().take_while(char::is_ascii_hexdigit).collect();
    (text[base_start..start].to_string(), code)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_link_is_mailed_to_the_person_and_works_once() {
    let data = tempfile::tempdir().unwrap();
    let root = data.path();
    kb(root, &["users", "add", "ana", "--email", "ana@example.org"]);
    let sink = crate::outreach::smtp::SmtpSink::start(crate::outreach::smtp::Behaviour::default()).await;
    let dir = root.to_string_lossy().into_owned();
    let smtp = sink.url();
    let server = KbServer::start(&[
        ("KB_DATA_DIR", dir.as_str()),
        ("KB_PUBLIC_URL", "https://kb.example.org/"),
        ("KB_SMTP_URL", smtp.as_str()),
        ("KB_EMAIL_FROM", "kb <kb@kb.test>"),
        ("KB_EMAIL_TO", "owner@kb.test"),
        ("KB_RATE_LIMIT", "3"),
    ])
    .await;
    let server = &server;
    let ask = |name: &str| {
        let body = json!({"name": name}).to_string();
        let host = [("Host", "evil.example"), ("Content-Type", "application/json")];
        async move { server.request("POST", "/api/sign-in", &host, Some(body.as_bytes())).await }
    };
    let known = ask("Ana").await;
    let unknown = ask("nobody").await;
    assert_eq!((known.status, unknown.status), (202, 202), "{}", known.text());
    assert_eq!(known.json(), unknown.json(), "the same answer for a name kb does not know");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while sink.received().is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let mails = sink.received();
    assert_eq!(mails.len(), 1, "one mail, to ana only");
    assert_eq!(mails[0].rcpt_to, ["ana@example.org"]);
    assert!(mails[0].data.contains("Auto-Submitted: auto-generated"), "{}", mails[0].data);
    let (base, code) = link_in(&mails[0].data);
    assert_eq!(base, "https://kb.example.org", "the link's base is KB_PUBLIC_URL, never the request's Host");
    assert_eq!(code.len(), 64);

    // A GET of the link (a mail scanner) is the page, and uses nothing up.
    assert_eq!(server.get("/").await.status, 200);
    let redeem = |code: &str| {
        let body = json!({"code": code}).to_string();
        async move { server.request("POST", "/api/sign-in/redeem", &[], Some(body.as_bytes())).await }
    };
    let signed = redeem(&code).await.expect(200);
    assert_eq!(signed["person"], "ana");
    let again = redeem(&code).await;
    assert_eq!((again.status, again.json()["error"]["code"].as_str()), (410, Some("sign_in_link_spent")));
    let token = signed["token"].as_str().unwrap().to_string();
    let listed = kb(root, &["tokens", "list"]);
    assert_eq!(listed["tokens"][0]["label"], "sign-in", "{listed}");

    // The token works like any other, within KB_RATE_LIMIT: a burst beyond it is 429.
    let bearer = format!("Bearer {token}");
    let mut statuses = Vec::new();
    for _ in 0..8 {
        statuses.push(
            server.request("GET", "/api/entries", &[("Authorization", bearer.as_str())], None).await.status,
        );
    }
    assert_eq!(statuses[0], 200);
    assert!(statuses.contains(&429), "a burst beyond 3 a second: {statuses:?}");
    let limited = loop {
        let reply = server.request("GET", "/api/entries", &[("Authorization", bearer.as_str())], None).await;
        if reply.status == 429 {
            break reply;
        }
    };
    assert!(limited.header("retry-after").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unclear_requests_gone_folders_and_reused_names_are_refused() {
    let data = tempfile::tempdir().unwrap();
    let root = data.path();
    kb(root, &["users", "add", "ana"]);
    let bo_added = kb(root, &["users", "add", "bo"]);
    let family = root.join("family");
    kb(root, &["vaults", "add", "family", family.to_str().unwrap()]);
    kb(root, &["vaults", "grant", "family", "bo", "reader"]);
    let ana = kb(root, &["tokens", "issue", "ana"])["token"].as_str().unwrap().to_string();
    let bo = kb(root, &["tokens", "issue", "bo"])["token"].as_str().unwrap().to_string();
    let dir = root.to_string_lossy().into_owned();
    let server = KbServer::start(&[("KB_DATA_DIR", dir.as_str())]).await;
    let (ana_bearer, bo_bearer) = (format!("Bearer {ana}"), format!("Bearer {bo}"));

    // Two of a header a proxy may have added: who or where is unclear, so nothing is answered.
    let two_vaults = server
        .request(
            "GET",
            "/api/entries",
            &[("Authorization", &bo_bearer), ("Kb-Vault", "bo"), ("Kb-Vault", "family")],
            None,
        )
        .await;
    assert_eq!(two_vaults.status, 400, "{}", two_vaults.text());
    let two_tokens = server
        .request(
            "GET",
            "/api/entries",
            &[("Authorization", &bo_bearer), ("Authorization", &ana_bearer)],
            None,
        )
        .await;
    assert_eq!(two_tokens.status, 400);

    // A person whose own vault is forgotten still lists the vaults they may use.
    kb(root, &["vaults", "remove", "bo"]);
    let listed =
        server.request("GET", "/api/vaults", &[("Authorization", &bo_bearer)], None).await.expect(200);
    assert_eq!(
        listed["vaults"],
        json!([{"name": "family", "role": "reader", "own": false, "current": false}])
    );

    // A vault whose folder goes away while kb serves it is unavailable, and nothing is written.
    let ana_vault = [("Authorization", ana_bearer.as_str())];
    server
        .request(
            "POST",
            "/api/capture",
            &ana_vault,
            Some(json!({"text": "[idea] before the move"}).to_string().as_bytes()),
        )
        .await
        .expect(200);
    let moved = root.join("moved");
    std::fs::rename(server.vault(), &moved).unwrap();
    let gone = server
        .request(
            "POST",
            "/api/capture",
            &ana_vault,
            Some(json!({"text": "[idea] after the move"}).to_string().as_bytes()),
        )
        .await;
    assert_eq!(
        (gone.status, gone.json()["error"]["code"].as_str()),
        (503, Some("vault_unavailable")),
        "{}",
        gone.text()
    );
    assert!(!server.vault().exists(), "the folder was not made again");
    std::fs::rename(&moved, server.vault()).unwrap();
    assert_eq!(
        server.request("GET", "/api/entries", &ana_vault, None).await.status,
        200,
        "back, it serves again"
    );

    // A shared vault moved away and back is opened afresh: what is filed then is found.
    kb(root, &["vaults", "grant", "family", "ana", "editor"]);
    let in_family = [("Authorization", ana_bearer.as_str()), ("Kb-Vault", "family")];
    let capture = |text: &str| json!({"text": text}).to_string();
    server
        .request("POST", "/api/capture", &in_family, Some(capture("[idea] lanterns").as_bytes()))
        .await
        .expect(200);
    let family_moved = root.join("family-moved");
    std::fs::rename(&family, &family_moved).unwrap();
    let away =
        server.request("POST", "/api/capture", &in_family, Some(capture("[idea] away").as_bytes())).await;
    assert_eq!(away.status, 503, "{}", away.text());
    let again = server.request("GET", "/api/entries", &in_family, None).await;
    assert_eq!(again.status, 503, "still away: {}", again.text());
    assert!(!family.exists());
    std::fs::rename(&family_moved, &family).unwrap();
    server
        .request("POST", "/api/capture", &in_family, Some(capture("[idea] paper boats").as_bytes()))
        .await
        .expect(200);
    let found = server.request("GET", "/api/search?q=boats", &in_family, None).await.expect(200);
    assert_eq!(found["total"], 1, "{found}");
    // One folder is one vault: another name for it is refused.
    let twice = Command::new(env!("CARGO_BIN_EXE_kb"))
        .args(["vaults", "add", "family2"])
        .arg(&family)
        .env("KB_DATA_DIR", root)
        .output()
        .unwrap();
    assert_eq!(twice.status.code(), Some(2), "{}", String::from_utf8_lossy(&twice.stderr));
    let private = Command::new(env!("CARGO_BIN_EXE_kb"))
        .args(["vaults", "add", "bo2", bo_added["vault"].as_str().unwrap()])
        .env("KB_DATA_DIR", root)
        .output()
        .unwrap();
    assert_eq!(private.status.code(), Some(2), "{}", String::from_utf8_lossy(&private.stderr));

    // A removed person's name is never given again: what the vaults keep still names them.
    kb(root, &["users", "remove", "bo"]);
    let again = Command::new(env!("CARGO_BIN_EXE_kb"))
        .args(["users", "add", "bo"])
        .env("KB_DATA_DIR", root)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2), "{}", String::from_utf8_lossy(&again.stderr));
    assert!(String::from_utf8_lossy(&again.stderr).contains("removed"));
    assert!(Path::new(bo_added["vault"].as_str().unwrap()).exists(), "bo's files stay");
}

/// The recipients of the mails `sink` received, once there are `count` (or 15 s passed).
async fn mails(sink: &crate::outreach::smtp::SmtpSink, count: usize) -> Vec<Vec<String>> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while recipients(sink).len() < count && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    recipients(sink)
}

/// The recipients of every mail `sink` received, in order.
fn recipients(sink: &crate::outreach::smtp::SmtpSink) -> Vec<Vec<String>> {
    sink.received().into_iter().map(|mail| mail.rcpt_to).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_vaults_digest_goes_to_its_people_and_stops_for_one_ungranted() {
    let data = tempfile::tempdir().unwrap();
    let root = data.path();
    kb(root, &["users", "add", "ana", "--email", "ana@example.org"]);
    kb(root, &["users", "add", "bo", "--email", "bo@example.org"]);
    kb(root, &["users", "add", "cy", "--email", "cy@example.org"]);
    let family = root.join("family");
    kb(root, &["vaults", "add", "family", family.to_str().unwrap()]);
    kb(root, &["vaults", "grant", "family", "bo", "editor"]);
    kb(root, &["vaults", "grant", "family", "cy", "reader"]);
    let bo = kb(root, &["tokens", "issue", "bo"])["token"].as_str().unwrap().to_string();
    let sink = crate::outreach::smtp::SmtpSink::start(crate::outreach::smtp::Behaviour::default()).await;
    let (dir, smtp) = (root.to_string_lossy().into_owned(), sink.url());
    let server = KbServer::start(&[
        ("KB_DATA_DIR", dir.as_str()),
        ("KB_SMTP_URL", smtp.as_str()),
        ("KB_EMAIL_FROM", "kb <kb@kb.test>"),
        ("KB_EMAIL_TO", "owner@kb.test"),
    ])
    .await;
    let bo = As { server: &server, token: bo, vault: Some("family") };
    bo.capture("[project] Family reunion in June").await.expect(200);
    bo.send("POST", "/api/digests", Some(json!({"type": "daily"})), &[]).await.expect(200);
    let first = mails(&sink, 1).await;
    assert_eq!(
        first,
        [vec!["bo@example.org".to_string(), "cy@example.org".to_string()]],
        "only family's people"
    );

    // cy is ungranted: once kb looks again (at a request, every 10 s at most), the next
    // digest is not sent to cy.
    kb(root, &["vaults", "ungrant", "family", "cy"]);
    tokio::time::sleep(std::time::Duration::from_secs(11)).await;
    bo.get("/api/entries").await.expect(200);
    let reopened = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let sent = bo.send("POST", "/api/digests", Some(json!({"type": "daily"})), &[]).await;
        let before = recipients(&sink).len();
        if sent.status == 200 {
            let after = mails(&sink, before + 1).await;
            if after.last().is_some_and(|to| to == &vec!["bo@example.org".to_string()]) {
                break;
            }
        }
        assert!(
            std::time::Instant::now() < reopened,
            "cy still gets family's digests: {:?}",
            recipients(&sink)
        );
    }
    assert!(recipients(&sink).iter().all(|to| !to.contains(&"ana@example.org".to_string())), "never ana");
}
