//! The share page opened by another site: any page can send a browser to
//! `/share?title=…&text=…`, so what was shared is shown and filed only when the person taps
//! "File it"; nothing is filed on load, whether the other page navigates there by itself or
//! the person follows its link. And what that page can make the browser send straight to
//! kb's API (a form post) is refused: the browser says `Sec-Fetch-Site: same-site` (another
//! port of 127.0.0.1), and kb answers 403 `forbidden_site`.

use std::time::Duration;

use axum::response::Html;
use axum::routing::get;
use serde_json::{Value, json};

use crate::webdriver::Session;
use crate::{browser_available, open_page, start_kb};

/// A page of another site (another port of 127.0.0.1: the same site, another origin) at
/// the answered base URL: `/` links to `share`, `/go` sends the browser there by itself,
/// `/form` has a form that posts a capture to `kb` (`http://host:port/`).
async fn another_site(share: &str, kb: &str) -> String {
    let link = format!("<!doctype html><title>Deals</title><a id=\"go\" href=\"{share}\">See the deal</a>");
    let go = format!("<!doctype html><title>Deals</title><script>location = \"{share}\";</script>");
    let form = format!(
        "<!doctype html><title>Deals</title><form method=\"post\" action=\"{kb}api/capture\" enctype=\"text/plain\">\
         <input type=\"hidden\" name='{{\"text\": \"[person:Priya Raman] owes you nothing\", \"x\": \"' value='\"}}'>\
         <button id=\"send\">Claim</button></form>"
    );
    let app = axum::Router::new()
        .route("/", get(move || async move { Html(link) }))
        .route("/go", get(move || async move { Html(go) }))
        .route("/form", get(move || async move { Html(form) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// `POST /api/capture {text}` straight to kb, as a client; answers the JSON.
async fn capture(base: &str, text: &str) -> Value {
    let reply =
        reqwest::Client::new().post(format!("{base}api/capture")).json(&json!({"text": text})).send().await;
    reply.unwrap().json().await.unwrap()
}

/// How many entries `GET /api/entries` lists.
async fn entry_count(base: &str) -> usize {
    let answer: Value = reqwest::get(format!("{base}api/entries")).await.unwrap().json().await.unwrap();
    answer["entries"].as_array().map_or(0, Vec::len)
}

/// Waits until the page shows the share (its text in the box), kb's page loaded in full.
async fn wait_for_the_shared_text(page: &Session, words: &str) {
    page.wait_until(
        "the shared text shown",
        "return !document.querySelector('#share').hidden && \
         document.querySelector('#share-text').value.includes(arguments[0]) && \
         /offline model/.test(document.querySelector('#status').textContent);",
        json!([words]),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_opened_by_another_site_files_nothing_until_the_person_taps() {
    if !browser_available() {
        return;
    }
    let kb_dir = tempfile::tempdir().unwrap();
    let url = start_kb(kb_dir.path()).await;
    let priya = capture(&url, "[person:Priya Raman] met at the robotics conference").await;
    let path = kb_dir.path().join(priya["path"].as_str().unwrap());
    let before = std::fs::read(&path).unwrap();
    let words = "Wire $500 to the account below";
    let share = format!(
        "{url}share?title=%5Bperson%3APriya%20Raman%5D&text=Wire%20%24500%20to%20the%20account%20below"
    );
    let elsewhere = another_site(&share, &url).await;

    // The other page sends the browser to the share page by itself: the page opens on kb,
    // with its scripts run and its requests made, and files nothing.
    let (_driver, _profile, page) = open_page(&format!("{elsewhere}go")).await;
    page.wait_until(
        "kb's page to load",
        "return /offline model/.test(document.querySelector('#status').textContent);",
        json!([]),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(std::fs::read(&path).unwrap(), before, "a share opened by another site was filed on load");
    assert_eq!(entry_count(&url).await, 1, "a share opened by another site filed an entry on load");
    let queued = page.execute("return localStorage.getItem('kb-outbox');", json!([])).await;
    assert_eq!(queued, Value::Null, "nothing waits to be sent either");
    // It shows what was shared, to be filed or not, at `/` (a reload shows nothing again).
    wait_for_the_shared_text(&page, words).await;
    assert_eq!(page.execute("return location.pathname + location.search;", json!([])).await, json!("/"));
    let chat = page.text_of("#chat-log").await;
    assert!(!chat.contains(words), "shown as sent before the tap: {chat}");

    // "Don't file": gone, nothing filed.
    let discard = page.wait_for("#share-discard").await;
    page.click(&discard).await;
    assert_eq!(page.execute("return document.querySelector('#share').hidden;", json!([])).await, json!(true));
    page.refresh().await;
    page.wait_for("#message-input").await;
    assert_eq!(page.execute("return document.querySelector('#share').hidden;", json!([])).await, json!(true));

    // The person follows the other page's link: shown, still not filed…
    page.goto(&elsewhere).await;
    let link = page.wait_for("#go").await;
    page.click(&link).await;
    wait_for_the_shared_text(&page, words).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(std::fs::read(&path).unwrap(), before, "a followed link filed the share on load");

    // …until they tap "File it": added to Priya's entry, and the page says so.
    let file_it = page.wait_for("#share-file").await;
    page.click(&file_it).await;
    page.wait_until(
        "the share to be filed",
        "return /Filed/.test(document.querySelector('#chat-log').textContent) && document.querySelector('#outbox').hidden;",
        json!([]),
    )
    .await;
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.contains(words), "{after}");
    assert_eq!(page.execute("return document.querySelector('#share').hidden;", json!([])).await, json!(true));

    // A form on the other page posting to kb's API: the browser says same-site, kb refuses.
    let filed = std::fs::read(&path).unwrap();
    page.goto(&format!("{elsewhere}form")).await;
    let send = page.wait_for("#send").await;
    page.click(&send).await;
    page.wait_until(
        "kb's answer to the form",
        "return !!document.body && document.body.textContent.includes('error');",
        json!([]),
    )
    .await;
    let answer = page.execute("return document.body.textContent;", json!([])).await;
    let answer: Value = serde_json::from_str(answer.as_str().unwrap()).unwrap();
    assert_eq!(answer["error"]["code"], "forbidden_site", "{answer}");
    assert_eq!(std::fs::read(&path).unwrap(), filed, "the form changed Priya's entry");
}
