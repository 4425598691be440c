//! Captures of a link: kb reads the page (real-world pages from Readability's test suite,
//! served from loopback with `KB_FETCH_ALLOW_PRIVATE=1`) and files its article as a note
//! with `source: web`; a link kb will not or cannot read files nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::header;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use serde_json::{Value, json};

use crate::common::{KbServer, url_path};

/// The pages, by folder name.
fn pages() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pages")
}

/// Serves `/pages/NAME` (a fixture page) and `/loop`; counts the requests.
async fn page_server() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(AtomicUsize::new(0));
    let app = Router::new()
        .route("/pages/{name}", get(page))
        .route(
            "/loop",
            get(|State(requests): State<Arc<AtomicUsize>>| async move {
                requests.fetch_add(1, Ordering::SeqCst);
                Redirect::to("/loop")
            }),
        )
        .with_state(requests.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, requests)
}

async fn page(State(requests): State<Arc<AtomicUsize>>, UrlPath(name): UrlPath<String>) -> Response {
    requests.fetch_add(1, Ordering::SeqCst);
    match std::fs::read(pages().join(&name).join("source.html")) {
        Ok(html) => ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response(),
        Err(_) => axum::http::StatusCode::NOT_FOUND.into_response(),
    }
}

/// The fixture's expected title.
fn expected_title(name: &str) -> String {
    let metadata = std::fs::read_to_string(pages().join(name).join("expected-metadata.json")).unwrap();
    serde_json::from_str::<Value>(&metadata).unwrap()["title"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_link_is_filed_as_its_pages_article_with_where_it_came_from() {
    let (base, _) = page_server().await;
    let kb = KbServer::start(&[("KB_FETCH_ALLOW_PRIVATE", "1")]).await;
    let phrases = [
        ("daringfireball-1", "Daring Fireball is written and produced by John Gruber"),
        ("v8-blog", "emcc -O3 add.c -o add.wasm"),
        ("heise", "AgileBits hat Version 5.3 seines bekannten Passwortmanagers"),
        ("hukumusume", "欲張りなイヌ"),
    ];
    for (name, phrase) in phrases {
        let url = format!("{base}/pages/{name}");
        let reply = kb.post("/api/capture", &json!({ "text": url })).await;
        assert_eq!(reply.status, 200, "{name}: {}\n{}", reply.text(), kb.log());
        let path = reply.json()["path"].as_str().unwrap().to_string();
        let note = std::fs::read_to_string(kb.vault().join(&path)).unwrap();
        assert!(note.contains("source: web"), "{name}: {note}");
        assert!(note.contains(&format!("url: {url}")), "{name}: {note}");
        assert!(note.contains("fetched_at: "), "{name}: {note}");
        assert!(note.contains(phrase), "{name}: the article is kept: {note}");
        let title = expected_title(name);
        let entry = kb.get(&format!("/api/entries/{}", url_path(&path))).await.json();
        let filed_name = entry["name"].as_str().unwrap_or_default().to_string();
        assert!(
            title.contains(&filed_name) || filed_name.contains(&title) || note.contains(&title),
            "{name}: the title {title:?} names or heads the note: {filed_name:?}"
        );
        let history = kb.get(&format!("/api/entries/{}/history", url_path(&path))).await.json();
        assert_eq!(history["revisions"][0]["source"], "web", "{name}: {history}");
    }
    let found = kb.get("/api/search?q=Passwortmanagers").await.json();
    assert!(found["total"].as_u64().unwrap_or(0) >= 1, "the article is searchable: {found}");
}

#[tokio::test]
async fn a_link_kb_will_not_or_cannot_read_files_nothing() {
    let (base, requests) = page_server().await;
    let guarded = KbServer::start(&[]).await;
    let reply = guarded.post("/api/capture", &json!({ "text": format!("{base}/pages/heise") })).await;
    assert_eq!(reply.status, 422, "{}", reply.text());
    assert_eq!(reply.json()["error"]["code"], "link_refused", "{}", reply.text());
    assert!(reply.text().contains("KB_FETCH_ALLOW_PRIVATE"), "{}", reply.text());
    assert_eq!(requests.load(Ordering::SeqCst), 0, "no request reached the page's server");
    assert!(guarded.entry_files().is_empty(), "{:?}", guarded.entry_files());

    let open = KbServer::start(&[("KB_FETCH_ALLOW_PRIVATE", "1")]).await;
    let looping = open.post("/api/capture", &json!({ "text": format!("{base}/loop") })).await;
    assert_eq!(looping.status, 502, "{}", looping.text());
    assert_eq!(looping.json()["error"]["code"], "page_unreadable");
    assert!(looping.text().contains("redirects more than 5 times"), "{}", looping.text());
    let missing = open.post("/api/capture", &json!({ "text": format!("{base}/pages/none") })).await;
    assert_eq!(missing.status, 502, "{}", missing.text());
    assert!(open.entry_files().is_empty(), "{:?}", open.entry_files());

    // A link with words beside it is text, filed without reading anything.
    let before = requests.load(Ordering::SeqCst);
    let said = open.post("/api/capture", &json!({ "text": format!("read later {base}/pages/heise") })).await;
    assert_eq!(said.status, 200, "{}", said.text());
    assert_eq!(requests.load(Ordering::SeqCst), before);
}
