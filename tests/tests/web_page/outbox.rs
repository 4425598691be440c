//! The page's queue of captures waiting for kb, when kb's answer needs the person: two
//! captures typed while kb cannot be reached, the first about "Sam" (kb has Sam Lee and Sam
//! Ortiz: 409 `possible_duplicate`), the second a plain one. When kb is back, the second is
//! filed although the first came before it; the first leaves the queue and waits under
//! "Not filed yet" with its choices (kept across a reload); the person's pick is sent as a
//! new request with a new key and filed there.

use serde_json::{Value, json};

use crate::phone::Reach;
use crate::webdriver::{ENTER, Session};
use crate::{browser_available, open_page, start_kb};

/// `POST /api/capture {text}` straight to kb, as a client; answers the JSON.
async fn capture(base: &str, text: &str) -> Value {
    let reply =
        reqwest::Client::new().post(format!("{base}api/capture")).json(&json!({"text": text})).send().await;
    reply.unwrap().json().await.unwrap()
}

/// Keeps, in `window.kbSent`, the `Idempotency-Key` and body of every capture the page
/// sends from now on (until the page is reloaded).
async fn record_captures(page: &Session) {
    page.execute(
        "window.kbSent = []; const fetchOf = window.fetch.bind(window); \
         window.fetch = (path, init) => { \
           if (String(path).endsWith('/api/capture')) \
             window.kbSent.push({ key: init.headers['Idempotency-Key'], body: JSON.parse(init.body) }); \
           return fetchOf(path, init); };",
        json!([]),
    )
    .await;
}

/// The captures recorded by [`record_captures`].
async fn sent(page: &Session) -> Vec<Value> {
    page.execute("return window.kbSent;", json!([])).await.as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_needs_the_person_leaves_the_queue_and_blocks_nothing_behind_it() {
    if !browser_available() {
        return;
    }
    let kb_dir = tempfile::tempdir().unwrap();
    let url = start_kb(kb_dir.path()).await;
    let lee = capture(&url, "[person:Sam Lee] met at the climbing gym").await;
    let ortiz = capture(&url, "[person:Sam Ortiz] ClientCo contact").await;
    let (lee, ortiz) = (
        kb_dir.path().join(lee["path"].as_str().unwrap()),
        kb_dir.path().join(ortiz["path"].as_str().unwrap()),
    );
    let (lee_before, ortiz_before) = (std::fs::read(&lee).unwrap(), std::fs::read(&ortiz).unwrap());
    let reach = Reach::to(&url).await;
    let (_driver, _profile, page) = open_page(&reach.url).await;
    page.wait_until(
        "the page to load",
        "return /offline model/.test(document.querySelector('#status').textContent);",
        json!([]),
    )
    .await;

    // kb out of reach: both wait, the one about Sam first.
    reach.set(false);
    let about_sam = "[person:Sam] lent me his ladder";
    for text in [about_sam, "Renew passport by Dec 15"] {
        let input = page.wait_for("#message-input").await;
        page.type_into(&input, &format!("{text}{ENTER}")).await;
        page.wait_until(
            "the capture to wait",
            "return document.querySelector('#outbox').textContent.includes(arguments[0]);",
            json!([text]),
        )
        .await;
    }
    assert_eq!(
        page.execute("return document.querySelectorAll('#outbox li').length;", json!([])).await,
        json!(2)
    );
    record_captures(&page).await;

    // kb in reach again: the second is filed although the first came before it…
    reach.set(true);
    page.wait_until(
        "the capture behind the one kb asks about to be filed",
        "return /admin\\/renew-passport\\.md/.test(document.querySelector('#chat-log').textContent);",
        json!([]),
    )
    .await;
    // …and the first is shown with its choices, off the queue, filed nowhere.
    page.wait_until(
        "the capture kb asks about to be shown with its choices",
        "const held = document.querySelector('#held'); \
         return !held.hidden && held.textContent.includes(arguments[0]) && document.querySelector('#outbox').hidden;",
        json!([about_sam]),
    )
    .await;
    let choices = page
        .execute(
            "return [...document.querySelectorAll('#held li button')].map((b) => b.textContent);",
            json!([]),
        )
        .await;
    assert_eq!(choices, json!(["Add to Sam Lee", "Add to Sam Ortiz", "File as new", "Don’t file"]));
    assert_eq!(page.execute("return localStorage.getItem('kb-outbox');", json!([])).await, Value::Null);
    let first_tries = sent(&page).await;
    assert_eq!(first_tries.len(), 2, "each sent once, not retried: {first_tries:?}");
    assert_eq!(std::fs::read(&lee).unwrap(), lee_before);
    assert_eq!(std::fs::read(&ortiz).unwrap(), ortiz_before);
    // Nothing is sent again while it waits for the person.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    assert_eq!(sent(&page).await.len(), 2, "a capture that needs the person was sent again");

    // Kept across a reload, until the person picks.
    page.refresh().await;
    let still = page.text_of("#held li").await;
    assert!(still.contains(about_sam), "after a reload: {still}");
    record_captures(&page).await;

    // The pick: a new request, with a new key, adding it to Sam Ortiz.
    let pick = page.wait_for("#held li button:nth-of-type(2)").await;
    assert_eq!(page.text(&pick).await, "Add to Sam Ortiz");
    page.click(&pick).await;
    page.wait_until(
        "the pick to be filed",
        "return /added to Sam Ortiz/.test(document.querySelector('#chat-log').textContent) && \
         document.querySelector('#held').hidden;",
        json!([]),
    )
    .await;
    let picked = sent(&page).await;
    assert_eq!(picked.len(), 1, "{picked:?}");
    let old_keys: Vec<&Value> = first_tries.iter().map(|s| &s["key"]).collect();
    assert!(picked[0]["key"].as_str().is_some_and(|k| !k.is_empty()), "{picked:?}");
    assert!(
        !old_keys.contains(&&picked[0]["key"]),
        "the pick reused a key: {picked:?} after {first_tries:?}"
    );
    let ortiz_path = ortiz.strip_prefix(kb_dir.path()).unwrap().to_string_lossy().into_owned();
    assert_eq!(picked[0]["body"], json!({"text": about_sam, "mergeInto": ortiz_path}));
    let ortiz_after = std::fs::read_to_string(&ortiz).unwrap();
    assert!(ortiz_after.contains("lent me his ladder"), "{ortiz_after}");
    assert_eq!(std::fs::read(&lee).unwrap(), lee_before, "Sam Lee's entry changed");
    assert_eq!(page.execute("return localStorage.getItem('kb-held');", json!([])).await, Value::Null);
}
