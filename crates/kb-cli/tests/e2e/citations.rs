//! Citations in chat answers over real HTTP (`kb serve`, a scripted model): the model
//! cites a path a tool returned and one it made up; the JSON answer, the last event of a
//! streamed turn and the stored conversation hold the first and not the second, whose path
//! kb logs as a warning.

use std::path::Path;

use crate::chat_stream::{delta_texts, stream};
use crate::common::KbServer;
use kb_llm::testing::{FakeOpenAi, FakeReply};
use serde_json::{Value, json};

const PRIYA: &str = "people/priya.md";
const PRIYA_TEXT: &str = "---\nname: Priya\n---\nDesigns gardens.\n\nLives in Paris.\n";

fn seed(vault: &Path) {
    let file = vault.join(PRIYA);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, PRIYA_TEXT).unwrap();
}

/// The content of the last stored message of a conversation.
async fn last_stored(kb: &KbServer, conversation: &str) -> Value {
    let stored = kb.get(&format!("/api/conversations/{conversation}")).await.expect(200);
    stored["messages"].as_array().unwrap().last().unwrap()["content"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_endpoint_keeps_only_citations_of_paths_the_conversations_tools_returned() {
    let fake = FakeOpenAi::start().await.unwrap();
    let base = fake.base_url();
    let env = [("OPENAI_API_KEY", "sk-test"), ("OPENAI_BASE_URL", base.as_str()), ("KB_MODEL", "m")];
    let kb = KbServer::start_with_vault(&env, seed).await;

    // The JSON answer.
    fake.push(FakeReply::tool_calls(&[("call_1", "get_entry", r#"{"path": "Priya"}"#)]));
    fake.push(FakeReply::text("Priya designs gardens [people/priya.md:4] in Paris [people/nobody.md:6]."));
    let answer = kb.post("/api/chat", &json!({"message": "what do I know about Priya?"})).await.expect(200);
    let checked = "Priya designs gardens [people/priya.md:4] in Paris.";
    assert_eq!(answer["message"]["content"], checked, "{answer}");
    let conversation = answer["conversationId"].as_str().unwrap().to_string();
    assert_eq!(last_stored(&kb, &conversation).await, checked);

    // A streamed turn of the same conversation: the deltas are the model's text as written,
    // the last event the checked answer, which is what is stored. Priya was returned by the
    // turn before.
    let raw =
        "She lives in Paris [people/priya.md:6-6] [ideas/made-up.md:1], near [admin/x%5Dy.md:2] a park.";
    fake.push(FakeReply::text(raw));
    let streamed = stream(&kb, &json!({"message": "where?", "conversationId": conversation})).await;
    assert_eq!(delta_texts(&streamed).concat(), raw);
    let (name, completed) = streamed.last().unwrap();
    assert_eq!(name, "message.completed", "{streamed:?}");
    let checked = "She lives in Paris [people/priya.md:6-6], near a park.";
    assert_eq!(completed["message"]["content"], checked, "{completed}");
    assert_eq!(completed["conversationId"], conversation.as_str());
    assert_eq!(last_stored(&kb, &conversation).await, checked);

    // Each citation taken out is logged by its path.
    let log = kb.log();
    for path in ["people/nobody.md", "ideas/made-up.md", "admin/x]y.md"] {
        assert!(
            log.lines()
                .any(|line| line.contains("WARN") && line.contains(path) && line.contains("taken out")),
            "{path} not logged:\n{log}"
        );
    }
}
