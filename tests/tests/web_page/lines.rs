//! An entry opened at a line: a search hit links to `#/entry/PATH?line=START`, and the
//! entry shows the lines of its file around the passage, numbered, the passage's lines
//! marked and brought into view; an address naming a line from elsewhere marks that line;
//! a line past the end (or not a number) opens the entry without them.

use serde_json::json;

use crate::webdriver::ENTER;
use crate::{browser_available, open_page, start_kb, target_dir};

/// A long note: the passage about the roof's battens is on lines 31 and 32 of its file, of 34.
fn shed() -> String {
    let mut text = String::from("---\nname: Garden shed\nstatus: active\n---\n# Shed\n\n");
    for i in 1..=12 {
        text.push_str(&format!("Step {i}: measure and cut the boards.\n\n"));
    }
    // Step 12 is on line 29, a blank line 30.
    text.push_str("The felt needs battens every forty centimetres,\nnailed with galvanised clouts.\n\nPaint it green.\n");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_hit_opens_its_entry_at_the_passage_marked() {
    if !browser_available() {
        return;
    }
    let kb_dir = tempfile::tempdir().unwrap();
    let text = shed();
    assert_eq!(text.lines().nth(30), Some("The felt needs battens every forty centimetres,"));
    std::fs::create_dir_all(kb_dir.path().join("projects")).unwrap();
    std::fs::write(kb_dir.path().join("projects/shed.md"), &text).unwrap();
    let url = start_kb(kb_dir.path()).await;
    let (_driver, _profile, page) = open_page(&url).await;
    page.resize(1280, 500).await;

    let search = page.wait_for("#search-input").await;
    page.type_into(&search, &format!("galvanised battens{ENTER}")).await;
    let link = page.wait_for("#search-results a.entry-link").await;
    let href = page
        .execute(
            "return document.querySelector('#search-results a.entry-link').getAttribute('href');",
            json!([]),
        )
        .await;
    assert_eq!(href, json!("#/entry/projects/shed.md?line=31"));
    page.click(&link).await;
    page.wait_for("#entry-view [data-testid=entry-passage] .passage-line").await;
    let shown = page
        .execute(
            "const lines = [...document.querySelectorAll('#entry-view [data-testid=entry-passage] .source-line')]; \
             const marked = lines.filter((l) => l.classList.contains('passage-line')); \
             const box = marked[0].getBoundingClientRect(); \
             return {numbers: lines.map((l) => Number(l.dataset.line)), \
                     marked: marked.map((l) => l.querySelector('mark').textContent), \
                     inView: box.top >= 0 && box.bottom <= window.innerHeight, \
                     hash: location.hash, name: document.querySelector('#entry-name').textContent, \
                     body: document.querySelector('#entry-view .entry-body').textContent.includes('Paint it green')};",
            json!([]),
        )
        .await;
    assert_eq!(shown["numbers"], json!([29, 30, 31, 32, 33, 34]), "{shown}");
    assert_eq!(
        shown["marked"],
        json!(["The felt needs battens every forty centimetres,", "nailed with galvanised clouts."]),
        "{shown}"
    );
    assert_eq!(shown["inView"], json!(true), "the passage is brought into view: {shown}");
    assert_eq!(
        (&shown["hash"], &shown["name"], &shown["body"]),
        (&json!("#/entry/projects/shed.md?line=31"), &json!("Garden shed"), &json!(true))
    );
    page.screenshot(&target_dir().join("web-page-passage.png")).await;

    // An address naming a line from elsewhere marks that line.
    page.goto(&format!("{url}#/entry/projects/shed.md?line=2")).await;
    page.wait_until(
        "line 2 marked",
        "const m = document.querySelectorAll('#entry-view .passage-line'); \
         return m.length === 1 && m[0].dataset.line === '2';",
        json!([]),
    )
    .await;
    assert_eq!(page.text_of("#entry-view .passage-line mark").await, "name: Garden shed");

    // A line past the end, or not a line: the entry, without lines.
    for address in ["#/entry/projects/shed.md?line=999", "#/entry/projects/shed.md?line=x"] {
        page.goto("about:blank").await;
        page.goto(&format!("{url}{address}")).await;
        page.wait_for("#entry-view #entry-name").await;
        let passage = page
            .execute(
                "return document.querySelectorAll('#entry-view [data-testid=entry-passage]').length;",
                json!([]),
            )
            .await;
        assert_eq!(passage, json!(0), "{address}");
        assert!(page.text_of("#entry-view .entry-body").await.contains("Paint it green"), "{address}");
    }
    page.quit().await;
}
