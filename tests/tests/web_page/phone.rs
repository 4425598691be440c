//! The page as a phone's app: installable (manifest and service worker), a capture typed
//! while kb cannot be reached waits on the page and is filed exactly once when it can, and a
//! share from another app (`/share?…`) files what was shared, at the person's tap, with the
//! kept token.

use serde_json::{Value, json};

use crate::webdriver::ENTER;
use crate::{browser_available, entry_files, open_page, start_kb, start_kb_with_token};

/// Everything `GET /api/entries` lists (with `token` when kb needs one).
async fn entries(base: &str, token: Option<&str>) -> Vec<Value> {
    let mut request = reqwest::Client::new().get(format!("{base}api/entries"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let answer: Value = request.send().await.unwrap().json().await.unwrap();
    answer["entries"].as_array().cloned().unwrap_or_default()
}

/// The way from the browser to kb, as a phone's: a loopback relay in front of kb that can
/// be cut (a phone out of the home Wi-Fi's range) and restored. Cut, it closes every
/// connection it relays and refuses new ones, so the page's requests fail as they do when
/// kb cannot be reached; nothing in the browser is emulated.
pub(crate) struct Reach {
    /// The relay's address: the page is opened there.
    pub(crate) url: String,
    open: tokio::sync::watch::Sender<bool>,
}

impl Reach {
    /// A relay to kb at `kb_url` (`http://host:port/`), open.
    pub(crate) async fn to(kb_url: &str) -> Reach {
        let kb = kb_url.trim_start_matches("http://").trim_end_matches('/').to_string();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let (open, watch) = tokio::sync::watch::channel(true);
        tokio::spawn(async move {
            loop {
                let Ok((mut browser, _)) = listener.accept().await else { return };
                let mut cut = watch.clone();
                if !*cut.borrow() {
                    continue; // refused: dropped at once
                }
                let kb = kb.clone();
                tokio::spawn(async move {
                    let Ok(mut server) = tokio::net::TcpStream::connect(&kb).await else { return };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut browser, &mut server) => {}
                        _ = cut.wait_for(|open| !open) => {}
                    }
                });
            }
        });
        Reach { url, open }
    }

    /// Cuts the way to kb (`false`) or restores it.
    pub(crate) fn set(&self, open: bool) {
        self.open.send_replace(open);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_installs_as_an_app_whose_worker_keeps_its_files() {
    installs_and_queues(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_installs_as_an_app_that_opens_and_queues_captures_offline() {
    installs_and_queues(true).await;
}

/// The install criteria and the service worker; then, when `offline`, a capture made while
/// kb cannot be reached is filed once when it can be again.
async fn installs_and_queues(offline: bool) {
    if !browser_available() {
        return;
    }
    let kb_dir = tempfile::tempdir().unwrap();
    let url = start_kb(kb_dir.path()).await;
    let reach = Reach::to(&url).await;
    let (_driver, _profile, page) = open_page(&reach.url).await;
    page.wait_for("#message-input").await;

    // Install criteria: Chromium finds the manifest valid and the page installable.
    page.wait_until(
        "the service worker to be ready",
        "navigator.serviceWorker.ready.then(() => { window.kbWorkerReady = true; }); return window.kbWorkerReady === true;",
        json!([]),
    )
    .await;
    let manifest = page.cdp("Page.getAppManifest", json!({})).await;
    assert!(manifest["url"].as_str().unwrap_or_default().ends_with("/manifest.webmanifest"), "{manifest}");
    assert_eq!(manifest["errors"], json!([]), "{manifest}");
    let installable = page.cdp("Page.getInstallabilityErrors", json!({})).await;
    assert_eq!(installable["installabilityErrors"], json!([]), "{installable}");

    // After a reload the worker controls the page, and it keeps the page's files.
    page.refresh().await;
    page.wait_until(
        "the service worker to control the page",
        "return !!navigator.serviceWorker.controller;",
        json!([]),
    )
    .await;
    let kept = page
        .execute_async(
            "const done = arguments[arguments.length - 1]; \
             caches.open('kb-page-v1').then((c) => c.keys()).then((keys) => done(keys.map((r) => new URL(r.url).pathname).sort()));",
        )
        .await;
    for file in ["/", "/page.js", "/page.css", "/manifest.webmanifest", "/icons/kb-192.png"] {
        assert!(kept.as_array().unwrap().contains(&json!(file)), "{file} kept: {kept}");
    }

    if !offline {
        return;
    }
    // kb goes out of reach: a capture typed now waits, shown as waiting, and nothing is filed.
    reach.set(false);
    let input = page.wait_for("#message-input").await;
    page.type_into(&input, &format!("Renew passport by Dec 15{ENTER}")).await;
    page.wait_until(
        "the capture to wait",
        "const box = document.querySelector('#outbox'); \
         return !box.hidden && /Renew passport by Dec 15/.test(box.textContent) && /waiting/.test(box.textContent);",
        json!([]),
    )
    .await;
    assert!(entries(&url, None).await.is_empty(), "nothing filed while kb is out of reach");

    // Reopened with kb still out of reach, the page opens and still shows it waiting.
    page.refresh().await;
    let waiting = page.text_of("#outbox li").await;
    assert!(waiting.contains("Renew passport by Dec 15"), "after a reload: {waiting}");
    page.resize(390, 844).await;
    page.screenshot(&crate::target_dir().join("web-page-offline.png")).await;
    page.resize(1280, 900).await;

    // kb is in reach again: it is filed, once, and the page says where.
    reach.set(true);
    page.wait_until(
        "the waiting capture to be filed",
        "return document.querySelector('#outbox').hidden && \
         /admin\\/renew-passport\\.md/.test(document.querySelector('#chat-log').textContent);",
        json!([]),
    )
    .await;
    // Sent again (another tab, a retry after a lost answer): still filed once.
    page.execute_async(
        "const done = arguments[arguments.length - 1]; \
         localStorage.setItem('kb-outbox', JSON.stringify([{ key: 'k-1', text: 'Water the ferns' }])); \
         const send = () => fetch('/api/capture', { method: 'POST', headers: { 'Content-Type': 'application/json', \
           'Idempotency-Key': 'k-1' }, body: JSON.stringify({ text: 'Water the ferns' }) }); \
         send().then(send).then(() => done(true));",
    )
    .await;
    page.refresh().await;
    page.wait_until(
        "the resent capture to be answered",
        "return document.querySelector('#outbox').hidden && /Water the ferns/.test(document.querySelector('#chat-log').textContent);",
        json!([]),
    )
    .await;
    let files = entry_files(kb_dir.path());
    assert_eq!(files.len(), 2, "each capture filed exactly once: {files:?}");
    assert_eq!(files.iter().filter(|f| f.contains("renew-passport")).count(), 1, "{files:?}");
    assert_eq!(entries(&url, None).await.len(), 2);
    // The list beside refreshed as each was filed, and shows each entry once.
    page.wait_until(
        "the entry list to show both",
        "return document.querySelector('#browse-count').textContent === 'Showing 2 of 2';",
        json!([]),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_opens_the_page_and_files_what_was_shared_at_a_tap_with_the_kept_token() {
    if !browser_available() {
        return;
    }
    let kb_dir = tempfile::tempdir().unwrap();
    let url = start_kb_with_token(kb_dir.path(), "ph0ne-token").await;

    // The first share: kb asks for its token once (as the page loads), and what was shared
    // is filed at the tap.
    let share = format!("{url}share?title=Oat%20milk&text=Buy%20oat%20milk%20for%20the%20office&url=");
    let (_driver, _profile, page) = open_page(&share).await;
    page.wait_until("the token prompt", "return document.querySelector('#token-dialog').open;", json!([]))
        .await;
    let token_input = page.wait_for("#token-input").await;
    page.type_into(&token_input, &format!("ph0ne-token{ENTER}")).await;
    let file_it = page.wait_for("#share:not([hidden]) #share-file").await;
    page.click(&file_it).await;
    page.wait_until(
        "the share to be filed",
        "return /Filed/.test(document.querySelector('#chat-log').textContent) && document.querySelector('#outbox').hidden;",
        json!([]),
    )
    .await;
    let filed = entries(&url, Some("ph0ne-token")).await;
    assert_eq!(filed.len(), 1, "{filed:?}");
    let path = filed[0]["path"].as_str().unwrap().to_string();
    let text = std::fs::read_to_string(kb_dir.path().join(&path)).unwrap();
    assert!(text.contains("Oat milk") && text.contains("Buy oat milk for the office"), "{path}: {text}");
    assert_eq!(page.execute("return location.pathname + location.search;", json!([])).await, json!("/"));

    // The next share files at its tap with the token kept in this browser.
    page.goto(&format!("{url}share?text=Call%20the%20plumber%20about%20the%20leak")).await;
    let file_it = page.wait_for("#share:not([hidden]) #share-file").await;
    page.click(&file_it).await;
    page.wait_until(
        "the second share to be filed",
        "return /Filed/.test(document.querySelector('#chat-log').textContent) && document.querySelector('#outbox').hidden;",
        json!([]),
    )
    .await;
    assert_eq!(
        page.execute("return document.querySelector('#token-dialog').open;", json!([])).await,
        json!(false)
    );
    assert_eq!(entries(&url, Some("ph0ne-token")).await.len(), 2);
}
