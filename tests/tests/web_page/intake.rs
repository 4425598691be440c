//! Voice notes and files from the page: the microphone is Chromium's fake device (a tone),
//! the transcript the fake OpenAI-compatible server's; a file is attached through the file
//! box. Each is kept in `attachments/` and filed as a note the page links to.

use std::time::Duration;

use kb_llm::testing::FakeOpenAi;
use serde_json::{Value, json};

use crate::{browser_available, open_page, start_kb_with};

const SAID: &str = "Buy oat milk and rye flour on the way home";

async fn search(base: &str, words: &str) -> Value {
    reqwest::get(format!("{base}api/search?q={words}")).await.unwrap().json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voice_note_and_a_file_are_filed_from_the_page() {
    if !browser_available() {
        return;
    }
    let server = FakeOpenAi::start().await.unwrap();
    server.answer_transcriptions(SAID);
    let kb_dir = tempfile::tempdir().unwrap();
    let mut config = kb_core::Config::offline(kb_dir.path());
    let base_url = server.base_url();
    config.intake.transcription = kb_llm::openai::TranscriptionSettings::from_lookup(|name| match name {
        "KB_TRANSCRIBE_MODEL" => Some("whisper-1".to_string()),
        "KB_TRANSCRIBE_BASE_URL" => Some(base_url.clone()),
        _ => None,
    })
    .unwrap();
    let url = start_kb_with(config).await;
    let (_driver, _profile, page) = open_page(&url).await;
    page.wait_until(
        "the page loaded",
        "return /offline model/.test(document.querySelector('#status').textContent);",
        json!([]),
    )
    .await;

    // A voice note: pressed, a second and a half of the fake microphone's tone, pressed again.
    let record = page.wait_for("#record").await;
    page.click(&record).await;
    page.wait_until(
        "recording",
        "return document.querySelector('#record').getAttribute('aria-pressed') === 'true';",
        json!([]),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    page.click(&record).await;
    page.wait_until(
        "the voice note filed",
        "return [...document.querySelectorAll('#chat-log .msg.assistant')].some((m) => /^Filed/.test(m.textContent));",
        json!([]),
    )
    .await;
    let sent = server.transcription_requests();
    assert_eq!(sent.len(), 1, "one recording sent to be transcribed");
    assert!(
        sent[0].body.contains("voice-note.webm") || sent[0].body.contains("voice-note.ogg"),
        "a recording"
    );
    let found = search(&url, "rye").await;
    let path =
        found["entries"][0]["path"].as_str().unwrap_or_else(|| panic!("the transcript is filed: {found}"));
    let note = std::fs::read_to_string(kb_dir.path().join(path)).unwrap();
    assert!(note.contains("source: voice") && note.contains("![[attachments/"), "{note}");
    let attachment = note.lines().find_map(|l| l.strip_prefix("attachment: ")).unwrap().to_string();
    assert!(std::fs::metadata(kb_dir.path().join(&attachment)).unwrap().len() > 500, "the audio is kept");

    // A file, chosen in the file box.
    page.execute(
        "const dt = new DataTransfer(); \
         dt.items.add(new File(['# Garden\\n\\nPrune the quince in February.\\n'], 'garden.md', { type: 'text/markdown' })); \
         const input = document.querySelector('#attach-input'); input.files = dt.files; \
         input.dispatchEvent(new Event('change'));",
        json!([]),
    )
    .await;
    page.wait_until(
        "the file filed",
        "return [...document.querySelectorAll('#chat-log .msg.assistant')].some((m) => /kept as attachments\\/.*garden\\.md/.test(m.textContent));",
        json!([]),
    )
    .await;
    let found = search(&url, "quince").await;
    assert_eq!(found["total"], 1, "{found}");
}
