//! Citations in answers, over the OpenAI-compatible adapter and the fake server: the model
//! cites a path a tool returned and one it made up; what the person gets and what the
//! conversation keeps hold the first and not the second, in this turn and in later ones
//! (an earlier turn's results count, even once they are summarised out of the window).

use kb_domain::Role;
use kb_llm::testing::FakeReply;
use serde_json::json;

use super::{call, is_summary, kit_with};

const PRIYA: &str = "people/priya.md";
const PRIYA_TEXT: &str = "---\nname: Priya\n---\nDesigns gardens.\n\nLives in Paris.\n";

#[tokio::test]
async fn a_citation_of_a_path_no_tool_returned_is_taken_out_of_the_answer_and_the_conversation() {
    let k = kit_with(|config, _| {
        config.conversation_window = 2;
        let file = config.kb_dir.join(PRIYA);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, PRIYA_TEXT).unwrap();
    })
    .await;
    k.fake.push(call("call_1", "get_entry", &json!({"path": "Priya"})));
    k.fake.push(FakeReply::text(
        "Priya designs gardens [people/priya.md:4] and lives in Paris [people/priya-raman.md:6].",
    ));
    let first = k.kb.chat().send(None, "what do I know about Priya?").await.unwrap();
    let checked = "Priya designs gardens [people/priya.md:4] and lives in Paris.";
    assert_eq!(first.message.content, checked);
    assert_eq!(first.dropped_citations, ["people/priya-raman.md"]);
    let wire = serde_json::to_value(kb_server::dto::ChatAnswer::from(&first)).unwrap();
    assert_eq!(wire["message"]["content"], checked);
    let id = first.conversation_id.clone();
    let stored = k.stored(&id).await;
    let answer = stored.last().unwrap();
    assert_eq!((answer.role, answer.content.as_str()), (Role::Assistant, checked));
    assert!(stored.iter().any(|m| m.role == Role::Tool && m.content.contains(PRIYA)));

    // Four plain turns push the get_entry result out of the window of two; the next turn's
    // summary folds it away, and a citation of Priya still stands: the conversation's
    // stored results are read.
    for i in 0..4 {
        k.fake.push(FakeReply::text(&format!("Answer {i}.")));
        k.kb.chat().send(Some(&id), &format!("message {i}")).await.unwrap();
    }
    k.fake.push(FakeReply::text("The person asked about Priya; kb read people/priya.md."));
    k.fake.push(FakeReply::text(
        "Again: Paris [people/priya.md:6]\n[ideas/garden.md:1]\nand gardens [people/priya.md:4].",
    ));
    let later = k.kb.chat().send(Some(&id), "where does she live again?").await.unwrap();
    assert!(k.fake.requests().iter().any(|r| is_summary(&r.json())), "the turn folded a summary");
    let last_request = k.chat_requests().last().unwrap().clone();
    let sent: Vec<String> = last_request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect();
    assert!(sent.is_empty(), "the get_entry result left what the model is sent: {sent:?}");
    assert_eq!(later.message.content, "Again: Paris [people/priya.md:6]\nand gardens [people/priya.md:4].");
    assert_eq!(later.dropped_citations, ["ideas/garden.md"]);
    assert_eq!(k.stored(&id).await.last().unwrap().content, later.message.content);
}
