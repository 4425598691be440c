//! Citations on the page: a turn whose model cites a path a tool returned and one it made
//! up, streamed to the page as written, ends showing the checked answer: the kept citation
//! a link to the entry at its line (`#/entry/PATH?line=N`), the other gone. The link opens
//! the entry and says which line was cited; the address opened again does too.

use kb_llm::testing::{FakeOpenAi, FakeReply};
use serde_json::json;

use crate::webdriver::ENTER;
use crate::{browser_available, open_page, start_kb_with, target_dir};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_citation_in_an_answer_is_a_link_to_the_entry_at_its_line_and_an_unchecked_one_is_gone() {
    if !browser_available() {
        return;
    }
    let fake = FakeOpenAi::start().await.unwrap();
    let kb_dir = tempfile::tempdir().unwrap();
    let file = kb_dir.path().join("people/priya.md");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "---\nname: Priya\n---\nDesigns gardens.\n\nLives in Paris.\n").unwrap();
    let mut config = kb_core::Config::offline(kb_dir.path());
    config.model = kb_core::ModelChoice::OpenAi(kb_core::OpenAiSettings {
        base_url: Some(fake.base_url()),
        ..kb_core::OpenAiSettings::new("sk-test", "test-model")
    });
    let url = start_kb_with(config).await;
    fake.push(FakeReply::tool_calls(&[("call_1", "get_entry", r#"{"path": "Priya"}"#)]));
    fake.push(FakeReply::text("Priya lives in Paris [people/priya.md:6] and Lyon [people/nobody.md:2]."));

    let (_driver, _profile, page) = open_page(&url).await;
    let input = page.wait_for("#message-input").await;
    page.type_into(&input, &format!("where does Priya live?{ENTER}")).await;
    page.wait_until(
        "the turn to complete",
        "return !!document.querySelector('#chat-log .turn-note');",
        json!([]),
    )
    .await;
    let shown = page
        .execute(
            "const m = [...document.querySelectorAll('#chat-log .msg.assistant')].pop(); \
             const links = [...m.querySelectorAll('a.citation')]; \
             return { text: m.textContent.trim(), \
                      links: links.map((a) => ({ href: a.getAttribute('href'), path: a.dataset.path, text: a.textContent })) };",
            json!([]),
        )
        .await;
    assert_eq!(shown["text"], json!("Priya lives in Paris [people/priya.md:6] and Lyon."), "{shown}");
    assert_eq!(
        shown["links"],
        json!([{ "href": "#/entry/people/priya.md?line=6", "path": "people/priya.md", "text": "[people/priya.md:6]" }]),
        "{shown}"
    );
    page.screenshot(&target_dir().join("web-page-citations.png")).await;

    // The link opens the entry and says which line the answer cited.
    let link = page.wait_for("#chat-log a.citation").await;
    page.click(&link).await;
    assert_eq!(page.text_of("#entry-view #entry-name").await, "Priya");
    assert_eq!(page.text_of("[data-testid=entry-notice]").await, "The answer cited line 6 of this note.");
    assert_eq!(
        page.execute("return location.hash;", json!([])).await,
        json!("#/entry/people/priya.md?line=6")
    );

    // The cited line is shown marked among the note's lines.
    page.wait_for("#entry-view .source-line.passage-line[data-line='6']").await;

    // The same address opened afresh opens the same entry at the same line.
    page.refresh().await;
    assert_eq!(page.text_of("#entry-view #entry-name").await, "Priya");
    page.wait_for("#entry-view .source-line.passage-line[data-line='6']").await;
    page.quit().await;
}
