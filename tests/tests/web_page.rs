#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The web page at `/` in a real headless Chromium, driven over W3C WebDriver
//! (chromedriver), against kb-server running in-process on the offline model.
//!
//! One person's session: type a capture and press Enter, see the answer and what kb filed,
//! answer kb's inbox question, search, open the hit, browse a category — then check the
//! markdown renderer on hostile input and that a phone-width window has no sideways scroll.
//! Another: an entry's history in its view, the diff of a change, restoring an older version.
//! Another: Today's nudges (done, snoozed, opened) and writing the day's digest.
//! And the markdown (marked, then DOMPurify): an entry's tables, code, task lists and links
//! render while its raw HTML stays text and never runs; every prefix of a half-written answer
//! renders (as streamed deltas do).
//! And a turn watched while it runs, against a slow scripted model: the tool's line shows
//! it running, then what it filed; the answer grows on the page before the turn completes.
//! And an entry opened at a line (`web_page/lines.rs`): a search hit opens its entry at its
//! passage, the file's lines around it numbered and the passage marked.
//! And the page as a phone's app (`web_page/phone.rs`): installable (the manifest valid,
//! the service worker controlling the page and keeping its files), a capture typed with the
//! network off shown waiting, the page reopened offline, and the capture filed exactly once
//! when the network is back; a share (`/share?…`) filed at a tap with the token asked for
//! once. A share opened by another site's page files nothing until the person taps
//! (`web_page/share.rs`); a queued capture kb answers with a question leaves the queue, shown
//! with its choices, and blocks nothing behind it (`web_page/outbox.rs`). A citation in an
//! answer is a link to the entry at its line; one kb took out is gone (`web_page/citations.rs`).
//! Screenshots land in `target/web-page.png`, `target/web-page-phone.png`,
//! `target/web-page-phone-entry.png`, `target/web-page-history.png`, `target/web-page-today.png`,
//! `target/web-page-today-phone.png`, `target/web-page-markdown.png`, `target/web-page-streaming.png`,
//! `target/web-page-streamed.png`, `target/web-page-citations.png`, `target/web-page-offline.png`
//! and `target/web-page-passage.png`.
//!
//! Needs Debian's `chromium` and `chromium-driver`. Without them the test prints a notice
//! and passes, unless `CI` is set: then it fails, so CI never skips it silently.

#[path = "web_page/citations.rs"]
mod citations;
#[path = "web_page/intake.rs"]
mod intake;
#[path = "web_page/lines.rs"]
mod lines;
#[path = "web_page/outbox.rs"]
mod outbox;
#[path = "web_page/people.rs"]
mod people;
#[path = "web_page/phone.rs"]
mod phone;
#[path = "web_page/share.rs"]
mod share;
#[path = "web_page/slow_model.rs"]
mod slow_model;
#[path = "web_page/webdriver.rs"]
mod webdriver;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use webdriver::{Driver, ENTER, SHIFT, Session};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The entry files of the vault at `dir` (`category/name.md`), sorted. A file kb is still
/// writing (a hidden temporary beside the entry, renamed into place when whole) is not one.
fn entry_files(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for category in ["people", "projects", "ideas", "admin", "inbox"] {
        let Ok(read) = std::fs::read_dir(dir.join(category)) else { continue };
        for file in read.flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") && !name.starts_with('.') {
                files.push(format!("{category}/{name}"));
            }
        }
    }
    files.sort();
    files
}

/// Whether the browser is here; fails under CI when it is not.
fn browser_available() -> bool {
    let missing: Vec<&str> =
        [CHROMIUM, CHROMEDRIVER].into_iter().filter(|p| !Path::new(p).exists()).collect();
    if missing.is_empty() {
        return true;
    }
    let message = format!(
        "the web page test needs {} (Debian packages chromium and chromium-driver: \
         apt-get install -y chromium chromium-driver)",
        missing.join(" and ")
    );
    assert!(std::env::var_os("CI").is_none(), "CI is set and {message}");
    eprintln!("NOTICE: skipping the web page test: {message}");
    false
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join("target"))
}

/// Starts kb-server on a free loopback port; answers its base URL.
async fn start_kb(dir: &Path) -> String {
    start_kb_with(kb_core::Config::offline(dir)).await
}

/// Starts kb-server with `config` on a free loopback port; answers its base URL.
async fn start_kb_with(config: kb_core::Config) -> String {
    let server = kb_server::Server::bind(config, "127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.run());
    format!("http://{addr}/")
}

/// Starts kb-server whose `/api` needs `token`; answers its base URL.
async fn start_kb_with_token(dir: &Path, token: &str) -> String {
    let assistant = kb_core::Assistant::open(kb_core::Config::offline(dir)).await.unwrap();
    let state = kb_server::AppState::new(Arc::new(assistant), Some(token.to_string()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, kb_server::router(state)).await });
    format!("http://{addr}/")
}

/// Chromium at 1280x900 on `url` (keep the driver and profile alive while the page is used).
async fn open_page(url: &str) -> (Driver, tempfile::TempDir, Session) {
    let profile = tempfile::tempdir().unwrap();
    let driver = Driver::start(Path::new(CHROMEDRIVER)).await;
    let page = Session::new(&driver, Path::new(CHROMIUM), profile.path(), 1280, 900).await;
    page.goto(url).await;
    (driver, profile, page)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_captures_searches_and_reads_an_entry_in_the_browser() {
    if !browser_available() {
        return;
    }
    let kb_dir = tempfile::tempdir().unwrap();
    let url = start_kb(kb_dir.path()).await;
    let (_driver, _profile, page) = open_page(&url).await;

    // The page is kb's, titled, with a labelled message box and a polite live chat log.
    assert_eq!(page.execute("return document.title;", json!([])).await, json!("kb"));
    let input = page.wait_for("#message-input").await;
    let labelled = "return !!document.querySelector('label[for=message-input]') \
                    && document.querySelector('#chat-log').getAttribute('aria-live') === 'polite';";
    assert_eq!(page.execute(labelled, json!([])).await, json!(true));
    page.wait_until(
        "the model status",
        "return /offline model/.test(document.querySelector('#status').textContent);",
        json!([]),
    )
    .await;

    // Shift+Enter makes a new line and sends nothing; Enter sends.
    page.type_into(&input, &format!("draft{SHIFT}{ENTER}{SHIFT}")).await;
    let draft = page.execute("return document.querySelector('#message-input').value;", json!([])).await;
    assert_eq!(draft, json!("draft\n"), "Shift+Enter adds a line break without sending");
    page.execute("document.querySelector('#message-input').value = '';", json!([])).await;
    page.type_into(&input, &format!("Renew passport by Dec 15{ENTER}")).await;

    // The answer, and the note of what kb did with a link to the filed entry.
    let note = page.wait_for(".turn-note").await;
    let answer = page.text_of(".msg.assistant").await;
    assert!(answer.contains("Renew passport") && answer.contains("admin"), "answer: {answer}");
    let note_text = page.text(&note).await;
    assert!(note_text.contains("classify_and_capture"), "note: {note_text}");
    assert!(note_text.contains("admin/renew-passport.md"), "note: {note_text}");
    assert!(note_text.contains("0.90"), "the note shows the confidence: {note_text}");
    let linked = page
        .execute("return document.querySelector('.turn-note a.entry-link').dataset.path;", json!([]))
        .await;
    assert_eq!(linked, json!("admin/renew-passport.md"));
    assert_eq!(page.execute("return document.activeElement.id;", json!([])).await, json!("message-input"));
    page.wait_until(
        "the conversation in the list",
        "return document.querySelector('#conversation-list').textContent.includes('Renew passport by Dec 15');",
        json!([]),
    )
    .await;

    // A capture kb is unsure of: the markup shows as text, kb asks where it belongs, and the
    // person answers with a button.
    let input = page.wait_for("#message-input").await;
    page.type_into(&input, &format!("Call <b>Mom</b> about the <img src=x onerror=alert(1)> tickets{ENTER}"))
        .await;
    page.wait_until(
        "the second answer",
        "return document.querySelectorAll('.turn-note').length === 2;",
        json!([]),
    )
    .await;
    let injected = page
        .execute("return document.querySelectorAll('#chat-log b, #chat-log img').length;", json!([]))
        .await;
    assert_eq!(injected, json!(0), "user and model text is never markup");
    let second = page.text_of(".turn-note:last-of-type .inbox-question").await;
    assert!(second.contains("inbox"), "inbox question: {second}");
    let to_people = page.wait_for(".turn-note:last-of-type .inbox-question button:first-of-type").await;
    assert_eq!(page.text(&to_people).await, "people");
    page.click(&to_people).await;
    page.wait_until(
        "the move to people",
        "return /Moved to people\\//.test(document.querySelector('.turn-note:last-of-type').textContent);",
        json!([]),
    )
    .await;

    // Search, see the hit with its marked term, open it.
    let search = page.wait_for("#search-input").await;
    page.type_into(&search, &format!("passport{ENTER}")).await;
    let hit = page.wait_for("#search-results li").await;
    let hit_text = page.text(&hit).await;
    assert!(hit_text.contains("Renew passport") && hit_text.contains("admin"), "hit: {hit_text}");
    let marked =
        page.execute("return document.querySelector('#search-results mark').textContent;", json!([])).await;
    assert_eq!(marked, json!("passport"));
    let link = page.wait_for("#search-results a.entry-link").await;
    page.click(&link).await;
    let name = page.text_of("#entry-view #entry-name").await;
    assert_eq!(name, "Renew passport");
    let view = page.text_of("#entry-view").await;
    assert!(view.contains("admin/renew-passport.md"), "entry view: {view}");
    assert!(view.contains("due date") && view.contains("pending"), "the fields show: {view}");
    assert!(view.contains("Renew passport by Dec 15"), "the body shows: {view}");
    // The hit opens the entry at its passage's line, marked above the notes.
    let hash = page.execute("return location.hash;", json!([])).await;
    assert!(hash.as_str().unwrap().starts_with("#/entry/admin/renew-passport.md?line="), "{hash}");
    let marked = page.text_of("#entry-view [data-testid=entry-passage] .passage-line mark").await;
    assert!(marked.to_lowercase().contains("passport"), "{marked}");

    // Browse by category: people holds the entry moved there.
    page.execute(
        "const s = document.querySelector('#category-select'); s.value = 'people'; \
         s.dispatchEvent(new Event('change'));",
        json!([]),
    )
    .await;
    page.wait_until(
        "the people list",
        "const t = document.querySelector('#entry-list').textContent; \
         return t.includes('Call') && !t.includes('Renew passport');",
        json!([]),
    )
    .await;
    page.screenshot(&target_dir().join("web-page.png")).await;

    // The renderer: markdown becomes markup, anything else stays text, links only http(s)
    // or entries.
    let rendered = page
        .execute(
            "const r = window.kbRender; return [
               r.markdown('# Title\\n\\n**bold** and *it* and `<code>`\\n\\n- one\\n- two\\n\\n```\\n<b>x</b>\\n```'),
               r.markdown('[bad](javascript:alert(1)) [ok](https://example.org/a?b=1&c=2) see admin/renew-passport.md'),
               r.markdown('<script>alert(1)</script> <img src=x onerror=alert(1)>'),
               r.snippet('Renew **passport** <i>x</i>'),
             ];",
            json!([]),
        )
        .await;
    // (Compared without the line breaks marked puts between block tags.)
    let [basic, links, hostile, snippet] =
        [0, 1, 2, 3].map(|i| rendered[i].as_str().unwrap().replace('\n', ""));
    assert!(basic.contains("<h3>Title</h3>"), "{basic}");
    assert!(basic.contains("<strong>bold</strong>") && basic.contains("<em>it</em>"), "{basic}");
    assert!(basic.contains("<code>&lt;code&gt;</code>"), "{basic}");
    assert!(basic.contains("<ul><li>one</li><li>two</li></ul>"), "{basic}");
    assert!(basic.contains("<pre><code>&lt;b&gt;x&lt;/b&gt;</code></pre>"), "{basic}");
    assert!(!links.contains("javascript:"), "{links}");
    assert!(links.contains("href=\"https://example.org/a?b=1&amp;c=2\""), "{links}");
    assert!(links.contains("class=\"entry-link\" data-path=\"admin/renew-passport.md\""), "{links}");
    assert!(!hostile.contains("<script") && !hostile.contains("<img"), "{hostile}");
    assert!(hostile.contains("&lt;script&gt;") && hostile.contains("&lt;img"), "{hostile}");
    assert_eq!(snippet, "Renew <mark>passport</mark> &lt;i&gt;x&lt;/i&gt;");

    // A phone: one view at a time, no sideways scroll in any of them.
    page.resize(390, 844).await;
    page.wait_until("the phone layout", "return window.innerWidth <= 400;", json!([])).await;
    let tabs = page.wait_for("#view-tabs").await;
    assert!(page.text(&tabs).await.contains("Chat"));
    for view in ["chat", "conversations", "browse"] {
        let tab = page.wait_for(&format!("#view-tabs button[data-view={view}]")).await;
        page.click(&tab).await;
        let widths = page
            .execute(
                "return [document.documentElement.scrollWidth, document.documentElement.clientWidth];",
                json!([]),
            )
            .await;
        let (scroll, client) = (widths[0].as_u64().unwrap(), widths[1].as_u64().unwrap());
        assert!(scroll <= client, "the {view} view scrolls sideways on a phone: {scroll} > {client}");
        if view != "conversations" {
            let name = if view == "chat" { "web-page-phone.png" } else { "web-page-phone-entry.png" };
            page.screenshot(&target_dir().join(name)).await;
        }
    }
    page.wait_for("#entry-view #entry-name").await;

    page.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_search_box_lists_results_while_a_person_types() {
    if !browser_available() {
        return;
    }
    let kb_dir = tempfile::tempdir().unwrap();
    for (path, text) in [
        ("admin/lease.md", "---\nname: Lease renewal\n---\nMeeting with the landlord about the lease.\n"),
        ("ideas/land-art.md", "---\nname: Land art\n---\nStones in a field.\n"),
    ] {
        let file = kb_dir.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let url = start_kb(kb_dir.path()).await;
    let (_driver, _profile, page) = open_page(&url).await;

    // "landl", no Enter: the landlord note is listed, its completed word marked.
    let search = page.wait_for("#search-input").await;
    page.type_into(&search, "landl").await;
    page.wait_until(
        "the landlord note listed while typing",
        "const items = [...document.querySelectorAll('#search-results li')]; \
         return items.length === 1 && /Lease renewal/.test(items[0].textContent);",
        json!([]),
    )
    .await;
    let marked =
        page.execute("return document.querySelector('#search-results mark').textContent;", json!([])).await;
    assert_eq!(marked, json!("landlord"));
    // Deleting back to "land" lists the entry named so first, then the landlord note.
    page.type_into(&search, "\u{E003}").await;
    page.wait_until(
        "both entries listed for land, the one named so first",
        "const items = [...document.querySelectorAll('#search-results li')]; \
         return items.length === 2 && /Land art/.test(items[0].textContent) && /Lease renewal/.test(items[1].textContent);",
        json!([]),
    )
    .await;
    let typed = page.execute("return document.querySelector('#search-input').value;", json!([])).await;
    assert_eq!(typed, json!("land"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_asks_for_the_token_and_shows_errors_inline() {
    if !browser_available() {
        return;
    }
    let kb_dir = tempfile::tempdir().unwrap();
    let url = start_kb_with_token(kb_dir.path(), "s3cret-token").await;
    let (_driver, _profile, page) = open_page(&url).await;

    // The API answers 401: the page asks for the token; a wrong one is asked for again.
    let dialog_open = "return document.querySelector('#token-dialog').open;";
    page.wait_until("the token prompt", dialog_open, json!([])).await;
    let token_input = page.wait_for("#token-input").await;
    page.type_into(&token_input, &format!("wrong{ENTER}")).await;
    page.wait_until(
        "the token asked again",
        "return document.querySelector('#token-dialog').open && \
         /not accepted/.test(document.querySelector('#token-title').textContent);",
        json!([]),
    )
    .await;
    let token_input = page.wait_for("#token-input").await;
    page.type_into(&token_input, &format!("s3cret-token{ENTER}")).await;
    page.wait_until(
        "the prompt to close",
        "return !document.querySelector('#token-dialog').open;",
        json!([]),
    )
    .await;
    // (Kept by the dialog's close event, which fires a moment after it closes.)
    page.wait_until(
        "the token kept in this browser",
        "return localStorage.getItem('kb-token') === 's3cret-token';",
        json!([]),
    )
    .await;

    // With the token, chat works.
    let input = page.wait_for("#message-input").await;
    page.type_into(&input, &format!("Renew passport by Dec 15{ENTER}")).await;
    let note = page.text_of(".turn-note").await;
    assert!(note.contains("admin/renew-passport.md"), "note: {note}");

    // The conversation list: rename with the keyboard, start a new one, switch back, delete.
    let rename = page.wait_for("#conversation-list li.current button.rename").await;
    page.click(&rename).await;
    let title = page.wait_for("#conversation-list .rename-form input").await;
    page.execute("arguments[0].value = '';", json!([{ "element-6066-11e4-a52e-4f735466cecf": title.id() }]))
        .await;
    page.type_into(&title, &format!("Paperwork{ENTER}")).await;
    page.wait_until(
        "the new title",
        "return document.querySelector('#conversation-list li.current').textContent.includes('Paperwork');",
        json!([]),
    )
    .await;
    let new = page.wait_for("#new-conversation").await;
    page.click(&new).await;
    page.wait_until("an empty chat", "return !document.querySelector('#chat-log .msg');", json!([])).await;
    let old = page.wait_for("#conversation-list .conversation-open").await;
    page.click(&old).await;
    let reloaded = page.text_of(".turn-note").await;
    assert!(
        reloaded.contains("classify_and_capture") && reloaded.contains("admin/renew-passport.md"),
        "{reloaded}"
    );
    let delete = page.wait_for("#conversation-list li.current button.delete").await;
    page.click(&delete).await;
    page.accept_alert().await;
    page.wait_until(
        "the list to empty",
        "return !document.querySelector('#conversation-list .conversation-open') \
         && !document.querySelector('#chat-log .msg');",
        json!([]),
    )
    .await;

    // An error of the API shows inline, and the message stays in the box to retry.
    page.execute("document.querySelector('#message-input').value = 'x'.repeat(40 * 1024);", json!([])).await;
    let send = page.wait_for("#send").await;
    page.click(&send).await;
    let error = page.text_of("[data-testid=chat-error]").await;
    assert!(error.contains("32 KiB") || error.to_lowercase().contains("long"), "error: {error}");
    let kept = page.execute("return document.querySelector('#message-input').value.length;", json!([])).await;
    assert_eq!(kept, json!(40 * 1024));

    // An entry that is not there says so in the entry view.
    page.goto(&format!("{url}#/entry/admin/no-such-entry.md")).await;
    let missing = page.text_of("#entry-view .error").await;
    assert!(!missing.is_empty(), "the entry view shows the error");
    page.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_sees_an_entrys_history_and_restores_an_older_version() {
    if !browser_available() {
        return;
    }
    let kb_dir = tempfile::tempdir().unwrap();
    let url = start_kb(kb_dir.path()).await;

    // Captured, then updated over the API: a field and a line added to the notes.
    let http = reqwest::Client::new();
    let filed: serde_json::Value = http
        .post(format!("{url}api/capture"))
        .json(&json!({"text": "Fix the shed roof before the rains", "hints": "[projects]"}))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap()
        .json()
        .await
        .unwrap();
    let path = filed["path"].as_str().unwrap().to_string();
    let file = kb_dir.path().join(&path);
    let captured = std::fs::read(&file).unwrap();
    let captured_text = String::from_utf8(captured.clone()).unwrap();
    let old_status = captured_text
        .lines()
        .find(|line| line.starts_with("status:"))
        .unwrap_or_else(|| panic!("a status line in:\n{captured_text}"))
        .to_string();
    http.patch(format!("{url}api/entries/{path}"))
        .json(&json!({
            "updates": {"status": "done"},
            "body": {"mode": "append", "content": "Bought <b>shingles</b> at the yard"},
        }))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap();
    assert_ne!(std::fs::read(&file).unwrap(), captured);

    // Open the entry: its history lists both changes, newest first.
    let (_driver, _profile, page) = open_page(&format!("{url}#/entry/{path}")).await;
    page.wait_for("#entry-view #entry-name").await;
    let body = page.text_of("#entry-view .entry-body").await;
    assert!(body.contains("Bought <b>shingles</b>"), "the update shows: {body}");
    page.wait_until(
        "two revisions",
        "return document.querySelectorAll('#entry-view .history-list > li').length === 2;",
        json!([]),
    )
    .await;
    let newest = page.text_of("#entry-view .history-list > li:first-child summary").await;
    assert!(newest.contains("api") && newest.contains("update_entry"), "newest: {newest}");
    let oldest = page.text_of("#entry-view .history-list > li:last-child summary").await;
    assert!(oldest.contains("api") && oldest.contains("classify_and_capture"), "oldest: {oldest}");

    // The update's diff: the status line changed, the notes' line added — as text, never markup.
    let summary = page.wait_for("#entry-view .history-list > li:first-child summary").await;
    page.click(&summary).await;
    page.wait_for("#entry-view .history-list > li:first-child .diff").await;
    let diff = page
        .execute(
            "const d = document.querySelector('#entry-view .history-list > li:first-child .diff'); \
             const lines = (sel) => [...d.querySelectorAll(sel)].map((n) => n.lastChild.textContent); \
             return { removed: lines('del.diff-line'), added: lines('ins.diff-line'), \
                      markup: d.querySelectorAll('b').length, \
                      restore: !!document.querySelector('#entry-view .history-list > li:first-child button.restore') };",
            json!([]),
        )
        .await;
    // (`updated_at` changes too when the capture and the update fall in different seconds.)
    let removed: Vec<&str> = diff["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .filter(|l| !l.starts_with("updated_at:"))
        .collect();
    assert_eq!(removed, [old_status.as_str()], "{diff}");
    let added: Vec<&str> = diff["added"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(added.contains(&"status: done"), "{diff}");
    assert!(added.iter().any(|l| l.contains("Bought <b>shingles</b> at the yard")), "{diff}");
    assert_eq!(diff["markup"], json!(0), "entry text in a diff is never markup");
    assert_eq!(diff["restore"], json!(false), "the newest revision is the entry as it is");

    // The capture's diff is all added; restore it.
    let summary = page.wait_for("#entry-view .history-list > li:last-child summary").await;
    page.click(&summary).await;
    let created = page.text_of("#entry-view .history-list > li:last-child .diff-summary").await;
    assert!(created.starts_with("Created"), "{created}");
    page.screenshot(&target_dir().join("web-page-history.png")).await;
    let restore = page.wait_for("#entry-view .history-list > li:last-child button.restore").await;
    assert_eq!(page.text(&restore).await, "Restore this version");
    page.click(&restore).await;

    // The entry shows its captured text again, with the restore in its history; the file
    // is byte for byte the captured one.
    let notice = page.text_of("#entry-view [data-testid=entry-notice]").await;
    assert!(notice.starts_with("Restored the version of"), "{notice}");
    page.wait_until(
        "three revisions",
        "return document.querySelectorAll('#entry-view .history-list > li').length === 3;",
        json!([]),
    )
    .await;
    let body = page.text_of("#entry-view .entry-body").await;
    assert!(body.contains("Fix the shed roof") && !body.contains("shingles"), "restored: {body}");
    let view = page.text_of("#entry-view dl").await;
    assert!(!view.contains("done"), "the status is back: {view}");
    assert_eq!(std::fs::read(&file).unwrap(), captured, "the file is the captured version, byte for byte");
    let newest = page.text_of("#entry-view .history-list > li:first-child summary").await;
    assert!(newest.contains("api"), "the restore is recorded: {newest}");
    let hash = page.execute("return location.hash;", json!([])).await;
    assert_eq!(hash, json!(format!("#/entry/{path}")));

    // The line diff itself.
    let ops = page
        .execute(
            "return window.kbRender.lineDiff(['a', 'b', 'c', 'd'], ['a', 'x', 'c', 'd', 'e']);",
            json!([]),
        )
        .await;
    assert_eq!(
        ops,
        json!([["same", "a"], ["del", "b"], ["add", "x"], ["same", "c"], ["same", "d"], ["add", "e"]])
    );

    // Deleted since: the entry still opens by its path, says it is gone, shows its history,
    // and restoring the delete brings the file back.
    http.delete(format!("{url}api/entries/{path}")).send().await.unwrap().error_for_status().unwrap();
    assert!(!file.exists());
    page.goto("about:blank").await;
    page.goto(&format!("{url}#/entry/{path}")).await;
    page.wait_for("#entry-view .error").await;
    page.wait_until(
        "four revisions",
        "return document.querySelectorAll('#entry-view .history-list > li').length === 4;",
        json!([]),
    )
    .await;
    let newest = page.text_of("#entry-view .history-list > li:first-child summary").await;
    assert!(newest.contains("delete_entry"), "newest: {newest}");
    let summary = page.wait_for("#entry-view .history-list > li:first-child summary").await;
    page.click(&summary).await;
    let deleted = page.text_of("#entry-view .history-list > li:first-child .diff-summary").await;
    assert!(deleted.starts_with("Deleted"), "{deleted}");
    let restore = page.wait_for("#entry-view .history-list > li:first-child button.restore").await;
    page.click(&restore).await;
    page.wait_for("#entry-view [data-testid=entry-notice]").await;
    let name = page.text_of("#entry-view #entry-name").await;
    assert_eq!(name, "Fix the shed roof");
    assert_eq!(std::fs::read(&file).unwrap(), captured, "the deleted bytes are back");
    page.quit().await;
}

/// The UTC date `days` days from now, as `YYYY-MM-DD` (civil from days, after Howard Hinnant).
fn utc_date_in(days: i64) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let z = i64::try_from(now.as_secs()).unwrap().div_euclid(86_400) + days + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[test]
fn utc_dates_are_civil_dates() {
    let today = utc_date_in(0);
    assert_eq!(today.len(), 10, "{today}");
    let year: i64 = today[..4].parse().unwrap();
    assert!((2024..2200).contains(&year), "{today}");
    // 1970-01-01 is day 0: the arithmetic on known days.
    let days_to_epoch = -(i64::try_from(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs(),
    )
    .unwrap()
    .div_euclid(86_400));
    assert_eq!(utc_date_in(days_to_epoch), "1970-01-01");
    assert_eq!(utc_date_in(days_to_epoch + 59), "1970-03-01");
    assert_eq!(utc_date_in(days_to_epoch + 11_016), "2000-02-29");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_acts_on_todays_nudges_and_writes_the_digest() {
    if !browser_available() {
        return;
    }
    // An admin item due tomorrow (created now, so kb does not also say nothing was captured
    // lately), a person with a follow-up untouched for long, an inbox entry waiting since
    // long. Dates are UTC, the zone the server is given; no scheduled digest runs.
    let kb_dir = tempfile::tempdir().unwrap();
    let tomorrow = utc_date_in(1);
    let now = format!("{}T00:00:00Z", utc_date_in(0));
    let admin = "admin/renew-passport.md";
    for (path, text) in [
        (
            admin,
            format!(
                "---\nname: Renew passport\nstatus: pending\ndue_date: {tomorrow}\ncreated_at: {now}\n---\n\
                 At the town hall.\n"
            ),
        ),
        (
            "people/sarah-lee.md",
            "---\nname: Sarah Lee\nfollow_ups: [Send the API spec]\nlast_touched: 2025-01-02\n---\nMet at a conference.\n"
                .to_string(),
        ),
        (
            "inbox/shed-idea.md",
            "---\nname: Shed idea\ncreated_at: 2025-01-02T10:00:00Z\n---\nbuild a shed by the pond\n".to_string(),
        ),
    ] {
        let file = kb_dir.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let mut config = kb_core::Config::offline(kb_dir.path());
    config.time_zone = Some("UTC".to_string());
    config.outreach.daily = None;
    config.outreach.weekly = None;
    let url = start_kb_with(config).await;
    let (_driver, _profile, page) = open_page(&url).await;

    // Today, from its tab: the three nudges, each with the actions its rule allows.
    let tab = page.wait_for("#view-tabs button[data-view=today]").await;
    page.click(&tab).await;
    page.wait_until(
        "three nudges",
        "return document.querySelectorAll('#nudge-list > li').length === 3;",
        json!([]),
    )
    .await;
    assert!(
        page.execute("return getComputedStyle(document.querySelector('#chat-panel')).display;", json!([]))
            .await
            == json!("none"),
        "Today takes the chat's place"
    );
    let rows = page
        .execute(
            "return [...document.querySelectorAll('#nudge-list > li')].map((li) => ({ \
               rule: li.dataset.rule, text: li.querySelector('.nudge-message').textContent, \
               actions: [...li.querySelectorAll('.nudge-actions button, .nudge-actions a')].map((b) => b.textContent) }));",
            json!([]),
        )
        .await;
    let expected = [
        ("admin_due", "Renew passport is due tomorrow", json!(["Done", "Snooze a week", "Open"])),
        (
            "follow_up",
            "Follow up with Sarah Lee: Send the API spec",
            json!(["Done", "Snooze a week", "Open"]),
        ),
        ("inbox_waiting", "Shed idea has waited in the inbox", json!(["Snooze a week", "Open"])),
    ];
    for (row, (rule, message, actions)) in rows.as_array().unwrap().iter().zip(expected) {
        assert_eq!(row["rule"], json!(rule), "{rows}");
        assert!(row["text"].as_str().unwrap().contains(message), "{rows}");
        assert_eq!(row["actions"], actions, "{rows}");
    }
    let written = page.wait_for("#write-digest").await;
    assert_eq!(page.text(&written).await, "Write today’s digest");
    assert!(page.text_of("#digest-view").await.contains("No digest kept yet"));

    // Done on the admin item: it leaves the list, and its file says done.
    let done = page.wait_for("#nudge-list li[data-rule=admin_due] button.nudge-done").await;
    page.click(&done).await;
    page.wait_until(
        "the admin nudge to go",
        "return document.querySelectorAll('#nudge-list > li').length === 2 \
         && !document.querySelector('#nudge-list li[data-rule=admin_due]');",
        json!([]),
    )
    .await;
    let notice = page.text_of("#nudges-notice").await;
    assert_eq!(notice, "Marked “Renew passport” done.");
    let file = std::fs::read_to_string(kb_dir.path().join(admin)).unwrap();
    assert!(file.lines().any(|line| line == "status: done"), "{file}");

    // Snooze the follow-up: it leaves the list, and the API no longer lists it.
    let snooze = page.wait_for("#nudge-list li[data-rule=follow_up] button.nudge-snooze").await;
    page.click(&snooze).await;
    page.wait_until(
        "the follow-up nudge to go",
        "return document.querySelectorAll('#nudge-list > li').length === 1 \
         && !!document.querySelector('#nudge-list li[data-rule=inbox_waiting]');",
        json!([]),
    )
    .await;
    let listed: serde_json::Value = reqwest::get(format!("{url}api/nudges"))
        .await
        .unwrap()
        .error_for_status()
        .unwrap()
        .json()
        .await
        .unwrap();
    let rules: Vec<&str> =
        listed["nudges"].as_array().unwrap().iter().map(|n| n["rule"].as_str().unwrap()).collect();
    assert_eq!(rules, ["inbox_waiting"], "{listed}");

    // The day's digest, written now: its heading, and the nudge still standing.
    let written = page.wait_for("#write-digest").await;
    page.click(&written).await;
    let heading = page.text_of("#digest-view .digest-body h3").await;
    assert_eq!(heading, format!("Daily digest for {}", utc_date_in(0)));
    let digest = page.text_of("#digest-view .digest-body").await;
    assert!(digest.contains("Shed idea has waited in the inbox"), "{digest}");
    assert!(!digest.contains("Follow up with Sarah Lee"), "the snoozed nudge is not in the digest: {digest}");
    page.wait_until(
        "the write button to go",
        "return document.querySelector('#write-digest').hidden;",
        json!([]),
    )
    .await;
    page.screenshot(&target_dir().join("web-page-today.png")).await;

    // Open on the inbox nudge shows that entry.
    let open = page.wait_for("#nudge-list li[data-rule=inbox_waiting] a.nudge-open").await;
    page.click(&open).await;
    let name = page.text_of("#entry-view #entry-name").await;
    assert_eq!(name, "Shed idea");
    let view = page.text_of("#entry-view").await;
    assert!(view.contains("inbox/shed-idea.md") && view.contains("build a shed by the pond"), "{view}");
    assert_eq!(page.execute("return location.hash;", json!([])).await, json!("#/entry/inbox/shed-idea.md"));

    // A reload: the kept digest shows, and Today on a phone has no sideways scroll.
    page.goto("about:blank").await;
    page.goto(&url).await;
    page.resize(390, 844).await;
    page.wait_until("the phone layout", "return window.innerWidth <= 400;", json!([])).await;
    let tab = page.wait_for("#view-tabs button[data-view=today]").await;
    page.click(&tab).await;
    let heading = page.text_of("#digest-view .digest-body h3").await;
    assert!(heading.starts_with("Daily digest for"), "{heading}");
    page.wait_for("#nudge-list li[data-rule=inbox_waiting]").await;
    let widths = page
        .execute(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth];",
            json!([]),
        )
        .await;
    assert!(widths[0].as_u64() <= widths[1].as_u64(), "Today scrolls sideways on a phone: {widths}");
    page.screenshot(&target_dir().join("web-page-today-phone.png")).await;
    page.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entrys_markdown_renders_tables_code_and_links_and_its_html_never_runs() {
    if !browser_available() {
        return;
    }
    let kb_dir = tempfile::tempdir().unwrap();
    let body = "# Plan\n\n\
                | item | cost |\n|---|--:|\n| **shingles** | 40 |\n| nails | 5 |\n\n\
                ```sh\necho '<b>x</b>' && rm -rf /tmp/x\n```\n\n\
                - [x] measure the roof\n- [ ] buy wood\n\n\
                See [the supplier](https://example.org/wood?a=1&b=2), [the lease](../admin/lease.md), \
                admin/lease.md and [odd](javascript:window.kbPwned=3).\n\n\
                <script>window.kbPwned = 1; document.title = 'pwned';</script>\n\n\
                Before <img src=x onerror=\"window.kbPwned = 2\"> after.\n";
    for (path, text) in [
        ("projects/shed.md".to_string(), format!("---\nname: Shed\n---\n{body}")),
        ("admin/lease.md".to_string(), "---\nname: Lease renewal\n---\nMeet the landlord.\n".to_string()),
    ] {
        let file = kb_dir.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let url = start_kb(kb_dir.path()).await;
    let (_driver, _profile, page) = open_page(&format!("{url}#/entry/projects/shed.md")).await;
    page.wait_for("#entry-view .entry-body table").await;
    // Time for an onerror that was let through to fire.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;

    let seen = page
        .execute(
            "const b = document.querySelector('#entry-view .entry-body'); \
             const cells = (sel) => [...b.querySelectorAll(sel)].map((c) => c.textContent.trim()); \
             const link = b.querySelector('a[href^=\"https:\"]'); \
             return { \
               heading: b.querySelector('h3') && b.querySelector('h3').textContent, \
               head: cells('table thead th'), cells: cells('table tbody td'), \
               strongInTable: cells('table tbody td strong'), \
               align: b.querySelector('table tbody td:last-child').getAttribute('align'), \
               code: b.querySelector('pre code') && b.querySelector('pre code').textContent, \
               codeMarkup: b.querySelectorAll('pre b').length, \
               tasks: [...b.querySelectorAll('li input[type=checkbox]')].map((i) => [i.checked, i.disabled]), \
               href: link && link.getAttribute('href'), target: link && link.target, rel: link && link.rel, \
               entryLinks: [...b.querySelectorAll('a.entry-link')].map((a) => [a.textContent, a.dataset.path, a.getAttribute('href')]), \
               javascriptLinks: b.querySelectorAll('a[href^=\"javascript\"]').length, \
               scripts: b.querySelectorAll('script').length, images: b.querySelectorAll('img').length, \
               onerror: document.querySelectorAll('[onerror]').length, \
               pwned: window.kbPwned === undefined ? null : window.kbPwned, title: document.title, \
               text: b.textContent };",
            json!([]),
        )
        .await;
    assert_eq!(seen["heading"], json!("Plan"), "{seen}");
    assert_eq!(seen["head"], json!(["item", "cost"]), "{seen}");
    assert_eq!(seen["cells"], json!(["shingles", "40", "nails", "5"]), "{seen}");
    assert_eq!(seen["strongInTable"], json!(["shingles"]), "{seen}");
    assert_eq!(seen["align"], json!("right"), "{seen}");
    assert_eq!(seen["code"], json!("echo '<b>x</b>' && rm -rf /tmp/x\n"), "{seen}");
    assert_eq!(seen["codeMarkup"], json!(0), "{seen}");
    assert_eq!(seen["tasks"], json!([[true, true], [false, true]]), "{seen}");
    assert_eq!(seen["href"], json!("https://example.org/wood?a=1&b=2"), "{seen}");
    assert_eq!(seen["target"], json!("_blank"), "{seen}");
    assert_eq!(seen["rel"], json!("noopener noreferrer"), "{seen}");
    let lease = json!(["admin/lease.md", "#/entry/admin/lease.md"]);
    assert_eq!(
        seen["entryLinks"],
        json!([["the lease", lease[0], lease[1]], ["admin/lease.md", lease[0], lease[1]]]),
        "{seen}"
    );
    assert_eq!(seen["javascriptLinks"], json!(0), "{seen}");
    // The raw HTML shows as text: no script ran, no image loaded, no handler anywhere.
    assert_eq!(seen["scripts"], json!(0), "{seen}");
    assert_eq!(seen["images"], json!(0), "{seen}");
    assert_eq!(seen["onerror"], json!(0), "{seen}");
    assert_eq!(seen["pwned"], json!(null), "{seen}");
    assert_eq!(seen["title"], json!("kb"), "{seen}");
    let text = seen["text"].as_str().unwrap();
    assert!(text.contains("<script>window.kbPwned = 1;"), "{text}");
    assert!(text.contains("Before <img src=x onerror=\"window.kbPwned = 2\"> after."), "{text}");

    // The page's policy: a script injected inline does not run.
    let inline = page
        .execute(
            "const s = document.createElement('script'); s.textContent = 'window.kbInline = 1;'; \
             document.body.append(s); return window.kbInline === undefined;",
            json!([]),
        )
        .await;
    assert_eq!(inline, json!(true), "the Content-Security-Policy stops inline scripts");
    page.screenshot(&target_dir().join("web-page-markdown.png")).await;

    // An entry link in the markdown opens that entry.
    let link = page.wait_for("#entry-view .entry-body a.entry-link").await;
    page.click(&link).await;
    page.wait_until(
        "the lease entry",
        "return document.querySelector('#entry-view #entry-name')?.textContent === 'Lease renewal';",
        json!([]),
    )
    .await;
    assert_eq!(page.execute("return location.hash;", json!([])).await, json!("#/entry/admin/lease.md"));

    // The lease lists the entry that links to it, with the line, and that note opens it.
    let from = page.wait_for("#entry-view [data-testid=linked-from] a.entry-link").await;
    let listed = page
        .execute(
            "return document.querySelector('#entry-view [data-testid=linked-from] li').textContent;",
            json!([]),
        )
        .await;
    assert!(listed.as_str().unwrap().starts_with("Shed — See [the supplier]"), "{listed}");
    page.click(&from).await;
    page.wait_until(
        "the shed entry again",
        "return document.querySelector('#entry-view #entry-name')?.textContent === 'Shed';",
        json!([]),
    )
    .await;
    let links_to = page
        .execute(
            "return [...document.querySelectorAll('#entry-view [data-testid=links-to] a.entry-link')].map((a) => a.dataset.path);",
            json!([]),
        )
        .await;
    assert_eq!(links_to, json!(["admin/lease.md"]));
    page.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_written_markdown_renders_at_every_length() {
    if !browser_available() {
        return;
    }
    let kb_dir = tempfile::tempdir().unwrap();
    let url = start_kb(kb_dir.path()).await;
    let (_driver, _profile, page) = open_page(&url).await;
    page.wait_for("#message-input").await;

    // An answer arriving in pieces: every prefix renders (as the page would on each delta),
    // to a string, and never to markup that was not markdown.
    let answer = "## Filed\n\nI put **Renew passport** in `admin/renew-passport.md` \
                  (see admin/renew-passport.md).\n\n| due | what |\n|---|---|\n| Dec 15 | renew |\n\n\
                  ```js\nconst x = '<b>';\n```\n\n- one\n- [link](https://example.org)\n\n\
                  <img src=x onerror=alert(1)> and a <pre>x <b onclick=alert(1)</pre> tail\n";
    let checked = page
        .execute(
            "const text = arguments[0]; const failures = []; const box = document.createElement('div'); \
             for (let n = 0; n <= text.length; n++) { \
               try { \
                 const html = window.kbRender.markdown(text.slice(0, n)); \
                 if (typeof html !== 'string') { failures.push([n, typeof html]); continue; } \
                 box.innerHTML = html; \
                 if (box.querySelector('script, img, b, [onerror], [onclick]')) failures.push([n, html]); \
               } catch (e) { failures.push([n, String(e)]); } \
             } \
             const r = window.kbRender.markdown; \
             return { failures, steps: text.length + 1, \
                      bold: r('**bold and `code'), fence: r('```js\\nlet x = \"<b>\";\\nif ('), \
                      table: r('| a | b |\\n|---|-'), empty: r(''), nothing: r(null) };",
            json!([answer]),
        )
        .await;
    assert_eq!(checked["failures"], json!([]), "{checked}");
    assert!(checked["steps"].as_u64().unwrap() > 250, "{checked}");
    let bold = checked["bold"].as_str().unwrap();
    assert!(bold.starts_with("<p>") && bold.contains("**bold and `code"), "an unclosed ** is text: {bold}");
    let fence = checked["fence"].as_str().unwrap();
    assert!(
        fence.starts_with("<pre><code class=\"language-js\">let x = \"&lt;b&gt;\";\nif (")
            && fence.contains("</code></pre>"),
        "an unclosed fence runs to the end: {fence}"
    );
    let table = checked["table"].as_str().unwrap();
    assert!(table.contains("<th>a</th>") && table.contains("<th>b</th>"), "the table so far: {table}");
    assert_eq!(checked["empty"], json!(""));
    assert_eq!(checked["nothing"], json!(""));
    page.quit().await;
}

/// What the page showed of a turn, recorded in the page at each change of the chat log.
/// (Run again, it starts a new record.)
const RECORD_THE_CHAT_LOG: &str = "\
    const log = document.querySelector('#chat-log'); const start = performance.now(); \
    const again = Array.isArray(window.kbSeen); window.kbSeen = []; if (again) return; \
    const snap = () => { \
      const msg = [...log.querySelectorAll('.msg.assistant')].pop(); \
      window.kbSeen.push({ \
        at: Math.round(performance.now() - start), \
        tools: [...log.querySelectorAll('.tool-line')].map((l) => ({ \
          state: l.className.replace('tool-line', '').trim(), tool: l.dataset.tool, text: l.textContent, \
          links: [...l.querySelectorAll('a.entry-link')].map((a) => a.dataset.path) })), \
        answer: msg && !msg.classList.contains('pending') ? msg.textContent.trim() : '', \
        completed: !!log.querySelector('.turn-note'), error: !!log.querySelector('[data-testid=chat-error]') }); \
    }; \
    new MutationObserver(() => snap()).observe(log, { childList: true, subtree: true, characterData: true, attributes: true });";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_shows_its_tools_and_its_answer_while_they_are_written() {
    if !browser_available() {
        return;
    }
    let words = "Renew passport by Dec 15";
    let model = slow_model::SlowModel::start(words).await;
    let kb_dir = tempfile::tempdir().unwrap();
    let mut config = kb_core::Config::offline(kb_dir.path());
    config.model = kb_core::ModelChoice::OpenAi(kb_core::OpenAiSettings {
        base_url: Some(model.base_url().to_string()),
        ..kb_core::OpenAiSettings::new("sk-test", "slow-model")
    });
    let url = start_kb_with(config).await;
    let (_driver, _profile, page) = open_page(&url).await;
    let input = page.wait_for("#message-input").await;
    page.execute(RECORD_THE_CHAT_LOG, json!([])).await;

    page.type_into(&input, &format!("{words}{ENTER}")).await;
    page.wait_until(
        "the tool's line",
        "return !!document.querySelector('#chat-log .tool-line.running');",
        json!([]),
    )
    .await;
    page.screenshot(&target_dir().join("web-page-streaming.png")).await;
    page.wait_until(
        "the turn to complete",
        "return !!document.querySelector('#chat-log .turn-note');",
        json!([]),
    )
    .await;
    let seen = page.execute("return window.kbSeen;", json!([])).await;
    let seen = seen.as_array().unwrap();
    let before: Vec<&serde_json::Value> = seen.iter().filter(|s| s["completed"] == json!(false)).collect();
    let last = seen.last().unwrap();
    assert_eq!(last["completed"], json!(true), "{seen:?}");

    // The tool's line, while it ran: running, saying what it files; then done, with the path
    // it filed as a link — both before the turn completed.
    let line = |s: &serde_json::Value| s["tools"].as_array().and_then(|t| t.first()).cloned();
    let running = before
        .iter()
        .position(|s| line(s).is_some_and(|l| l["state"] == json!("running")))
        .unwrap_or_else(|| panic!("no running tool line before the turn completed: {seen:?}"));
    let running_line = line(before[running]).unwrap();
    assert_eq!(running_line["tool"], json!("classify_and_capture"), "{seen:?}");
    assert_eq!(running_line["text"], json!(format!("Filing “{words}”…")), "{seen:?}");
    let done = before
        .iter()
        .position(|s| line(s).is_some_and(|l| l["state"] == json!("done")))
        .unwrap_or_else(|| panic!("no finished tool line before the turn completed: {seen:?}"));
    assert!(running < done, "{seen:?}");
    let done_line = line(before[done]).unwrap();
    assert!(done_line["text"].as_str().unwrap().starts_with('✓'), "{done_line}");
    assert!(done_line["text"].as_str().unwrap().contains("admin/renew-passport.md"), "{done_line}");
    assert_eq!(done_line["links"], json!(["admin/renew-passport.md"]), "{done_line}");
    // It ran for as long as the classifier took, in sight.
    let ran_for = before[done]["at"].as_u64().unwrap() - before[running]["at"].as_u64().unwrap();
    assert!(ran_for >= 800, "the running line showed for {ran_for} ms: {seen:?}");

    // What the page showed of the turn before it completed: at least two different views,
    // not empty, over time; a page that showed the turn only at its end shows none.
    let views: Vec<String> = before
        .iter()
        .map(|s| format!("{}|{}", s["tools"], s["answer"].as_str().unwrap()))
        .filter(|v| v != "[]|")
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(views.len() >= 2, "the turn showed {} views before it completed: {seen:?}", views.len());

    // The answer, growing on the page before the turn completed.
    let answers: Vec<&str> = before
        .iter()
        .map(|s| s["answer"].as_str().unwrap())
        .filter(|a| !a.is_empty())
        .fold(Vec::new(), |mut distinct, a| {
            if distinct.last() != Some(&a) {
                distinct.push(a);
            }
            distinct
        });
    let final_answer = "Filed Renew passport in admin/renew-passport.md — due Dec 15.";
    assert_eq!(last["answer"], json!(final_answer), "{seen:?}");
    // kb asked the model for a stream; the answer showed its pieces as they came, each text
    // longer than the one before, over the time the model took to write them.
    assert_eq!(model.answer_streamed(), Some(true), "kb asks for the answer as a stream");
    assert!(answers.len() >= 2, "the answer showed {} texts before it completed: {seen:?}", answers.len());
    assert!(
        answers.windows(2).all(|w| w[0].len() < w[1].len()),
        "each text is longer than the one before: {answers:?}"
    );
    let first = before.iter().find(|s| s["answer"] != json!("")).unwrap();
    let grew_for = last["at"].as_u64().unwrap() - first["at"].as_u64().unwrap();
    assert!(grew_for >= 2 * slow_model::PIECE_DELAY.as_millis() as u64, "{grew_for} ms: {seen:?}");

    // Completed: the answer rendered whole, the note of what kb filed, the conversation listed.
    let rendered = page
        .execute(
            "const m = [...document.querySelectorAll('#chat-log .msg.assistant')].pop(); \
             return { strong: m.querySelector('strong')?.textContent, em: m.querySelector('em')?.textContent, \
                      link: m.querySelector('a.entry-link')?.dataset.path, busy: m.getAttribute('aria-busy'), \
                      pending: document.querySelectorAll('#chat-log .pending').length, \
                      note: document.querySelector('#chat-log .turn-note').textContent, \
                      toolLines: document.querySelectorAll('#chat-log .tool-line').length };",
            json!([]),
        )
        .await;
    assert_eq!(rendered["strong"], json!("Renew passport"), "{rendered}");
    assert_eq!(rendered["em"], json!("Dec 15"), "{rendered}");
    assert_eq!(rendered["link"], json!("admin/renew-passport.md"), "{rendered}");
    assert_eq!(rendered["busy"], json!(null), "{rendered}");
    assert_eq!(rendered["pending"], json!(0), "{rendered}");
    assert_eq!(rendered["toolLines"], json!(1), "{rendered}");
    let note = rendered["note"].as_str().unwrap();
    assert!(note.contains("classify_and_capture") && note.contains("admin/renew-passport.md"), "{note}");
    page.wait_until(
        "the conversation in the list",
        "return document.querySelector('#conversation-list').textContent.includes('Renew passport by Dec 15');",
        json!([]),
    )
    .await;

    // An answer cut off mid-way: what was written of it goes, the error shows as the JSON
    // API's would, and the message waits in the box to be sent again.
    page.execute(RECORD_THE_CHAT_LOG, json!([])).await;
    let input = page.wait_for("#message-input").await;
    let cut = format!("And now get {}", slow_model::CUT_OFF);
    page.type_into(&input, &format!("{cut}{ENTER}")).await;
    let error = page.text_of("[data-testid=chat-error]").await;
    assert!(!error.is_empty());
    let seen = page.execute("return window.kbSeen;", json!([])).await;
    let half = slow_model::CUT_OFF_PIECES.concat();
    assert!(
        seen.as_array().unwrap().iter().any(|s| s["answer"] == json!(half) && s["error"] == json!(false)),
        "the half answer showed before the error: {seen}"
    );
    let after = page
        .execute(
            "return { answers: [...document.querySelectorAll('#chat-log .msg.assistant')].map((m) => m.textContent.trim()), \
                      input: document.querySelector('#message-input').value, \
                      toolLines: document.querySelectorAll('#chat-log .tool-line').length };",
            json!([]),
        )
        .await;
    assert_eq!(after["answers"], json!([final_answer]), "the half answer is gone: {after}");
    assert_eq!(after["input"], json!(cut), "{after}");
    assert_eq!(after["toolLines"], json!(1), "{after}");

    // The tool line's link opens the entry it filed.
    let link = page.wait_for("#chat-log .tool-line a.entry-link").await;
    page.click(&link).await;
    let name = page.text_of("#entry-view #entry-name").await;
    assert_eq!(name, "Renew passport");
    page.screenshot(&target_dir().join("web-page-streamed.png")).await;
    page.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_by_meaning_is_marked_and_an_entry_lists_its_related_entries() {
    if !browser_available() {
        return;
    }
    // The fake server's word vectors stand in for a model: notes that share words are near
    // (in 256 dimensions, two words seldom share one).
    let fake = kb_llm::testing::FakeOpenAi::start().await.unwrap();
    fake.answer_embeddings(256);
    let kb_dir = tempfile::tempdir().unwrap();
    for (path, text) in [
        ("inbox/sam.md", "---\nname: Sam\n---\nSam still owes me for the concert tickets.\n"),
        (
            "ideas/concert-night.md",
            "---\nname: Concert night\n---\nTickets for the concert in May, with Sam.\n",
        ),
        ("admin/passport.md", "---\nname: Renew passport\n---\nBook the appointment at the town hall.\n"),
    ] {
        let file = kb_dir.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let mut config = kb_core::Config::offline(kb_dir.path());
    config.embeddings = Some(kb_llm::openai::EmbeddingSettings::new("fake-embed", fake.base_url()));
    let url = start_kb_with(config).await;
    let client = reqwest::Client::new();
    let began = std::time::Instant::now();
    loop {
        let health: serde_json::Value =
            client.get(format!("{url}healthz")).send().await.unwrap().json().await.unwrap();
        // Embedded, and the cut of matches by meaning measured on the vault.
        if health["embeddings"]["embedded"] == 3 && health["embeddings"]["calibrated"] == true {
            break;
        }
        assert!(began.elapsed() < std::time::Duration::from_secs(30), "not embedded: {health}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let (_driver, _profile, page) = open_page(&url).await;

    // No entry holds "refund", and words search leaves out the others (which the fake
    // server's word vectors count): the hits are found by meaning, and say so.
    let search = page.wait_for("#search-input").await;
    page.type_into(&search, &format!("refund me for the{ENTER}")).await;
    page.wait_until(
        "hits by meaning",
        "return /by meaning/.test(document.querySelector('#search-count').textContent) \
         && document.querySelectorAll('#search-results .by-meaning').length > 0;",
        json!([]),
    )
    .await;
    let first = page
        .execute("return document.querySelector('#search-results a.entry-link').dataset.path;", json!([]))
        .await;
    assert!(first == json!("inbox/sam.md") || first == json!("ideas/concert-night.md"), "{first}");

    // Sam's entry lists the concert note as related, and it opens it.
    page.goto(&format!("{url}#/entry/inbox/sam.md")).await;
    let related = page.wait_for("#entry-view [data-testid=related-list] a.entry-link").await;
    let listed = page
        .execute(
            "return [...document.querySelectorAll('#entry-view [data-testid=related-list] a.entry-link')].map((a) => a.dataset.path);",
            json!([]),
        )
        .await;
    assert_eq!(listed[0], json!("ideas/concert-night.md"), "{listed}");
    assert!(!listed.as_array().unwrap().contains(&json!("inbox/sam.md")), "{listed}");
    page.click(&related).await;
    page.wait_until(
        "the concert note",
        "return document.querySelector('#entry-view #entry-name')?.textContent === 'Concert night';",
        json!([]),
    )
    .await;
    page.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_conflict_shows_in_the_status_and_is_resolved_from_today() {
    if !browser_available() {
        return;
    }
    // A synced vault with a note and the copy a merge left beside it.
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
    let vault = dir.path().join("vault");
    let note = "projects/shed.md";
    let copy = "projects/shed.conflict-laptop-20261129-101500.md";
    for (path, text) in [
        (note, "---\nid: 01SHED\nname: Shed\nstatus: done\n---\nThe roof leaks.\n"),
        (
            copy,
            "---\nid: 01COPY\nname: Shed\nstatus: someday\nconflict_of: projects/shed.md\n---\nThe roof leaks.\n",
        ),
    ] {
        let file = vault.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let mut config = kb_core::Config::offline(&vault);
    config.outreach.daily = None;
    config.outreach.weekly = None;
    config.sync = Some(kb_core::config::SyncConfig {
        remote: remote.to_string_lossy().into_owned(),
        interval: std::time::Duration::from_secs(3600),
        device: "desktop".into(),
        timeout: std::time::Duration::from_secs(60),
    });
    let url = start_kb_with(config).await;
    let (_driver, _profile, page) = open_page(&url).await;

    // The status line says where sync stands and that a conflict waits.
    page.wait_until(
        "the conflict in the status",
        "return document.querySelector('#status').textContent.includes('1 conflict');",
        json!([]),
    )
    .await;

    // Today: the conflict first, with a button for each way out; keeping the copy's
    // version makes it the note and removes the copy.
    let tab = page.wait_for("#view-tabs button[data-view=today]").await;
    page.click(&tab).await;
    page.wait_until(
        "the conflict nudge first",
        "const li = document.querySelector('#nudge-list > li'); \
         return !!li && li.dataset.rule === 'sync_conflict';",
        json!([]),
    )
    .await;
    let buttons = page
        .execute(
            "return [...document.querySelectorAll('#nudge-list > li:first-child button.nudge-keep')] \
               .map((b) => b.textContent).join('|');",
            json!([]),
        )
        .await;
    assert_eq!(buttons, json!("Keep this copy|Keep the note|Keep both"));
    let keep = page.wait_for("#nudge-list li[data-rule=sync_conflict] button.nudge-keep").await;
    page.click(&keep).await;
    page.wait_until(
        "the conflict nudge to go",
        "return !document.querySelector('#nudge-list li[data-rule=sync_conflict]');",
        json!([]),
    )
    .await;
    assert_eq!(page.text_of("#nudges-notice").await, "Resolved: the copy's version is the note now.");
    let kept = std::fs::read_to_string(vault.join(note)).unwrap();
    assert!(kept.contains("status: someday") && kept.contains("id: 01SHED"), "{kept}");
    assert!(!vault.join(copy).exists());
}
