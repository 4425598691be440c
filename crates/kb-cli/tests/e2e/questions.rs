//! Questions typed as they are said, through the real `kb` binary with no embedding model:
//! `/api/search` finds the notes holding some of a question's words after those holding
//! all of them (`matchedBy: "partial"`, `partialTotal`), and the offline model answers a
//! question with the passages found and their citations.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{self, KbServer};

fn prepare(vault: &Path) {
    for category in common::CATEGORIES {
        std::fs::create_dir_all(vault.join(category)).unwrap();
    }
    let files = [
        (
            "admin/lease.md",
            "---\nname: Lease\n---\nRent is due on the first.\n\nThe landlord keeps the deposit\nuntil the inspection.\n",
        ),
        ("people/caroline.md", "---\nname: Caroline\n---\nWent to the support group on Tuesday.\n"),
        ("ideas/groups.md", "---\nname: Reading group\n---\nA group that reads one book a month.\n"),
    ];
    for (path, text) in files {
        std::fs::write(vault.join(path), text).unwrap();
    }
}

async fn search(kb: &KbServer, query: &str) -> Value {
    kb.get(&format!("/api/search?q={}", common::query_value(query))).await.expect(200)
}

#[tokio::test]
async fn a_question_finds_the_notes_holding_some_of_its_words_and_chat_cites_them() {
    let kb = KbServer::start_with_vault(&[], prepare).await;

    // No note holds "go": Caroline's holds "support group", the reading group "group".
    let found = search(&kb, "when did Caroline go to the support group?").await;
    assert_eq!((found["total"].clone(), found["partialTotal"].clone()), (json!(0), json!(2)), "{found}");
    let paths: Vec<&str> =
        found["entries"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["people/caroline.md", "ideas/groups.md"], "{found}");
    assert!(found["entries"].as_array().unwrap().iter().all(|h| h["matchedBy"] == "partial"), "{found}");
    // Every word held: an ordinary hit, and the count of the others beside it.
    let found = search(&kb, "caroline support group").await;
    assert_eq!((found["total"].clone(), found["partialTotal"].clone()), (json!(1), json!(1)), "{found}");
    assert_eq!(found["entries"][0]["matchedBy"], "keyword");

    // The offline model answers with the passage and where it is.
    let answer = kb
        .post("/api/chat", &json!({"message": "what does the landlord do with the deposit?"}))
        .await
        .expect(200);
    let content = answer["message"]["content"].as_str().unwrap();
    assert!(content.contains("[admin/lease.md:6-7]"), "{content}");
    assert!(content.contains("The landlord keeps the deposit until the inspection."), "{content}");
    assert_eq!(answer["toolsUsed"], json!(["search_entries"]), "{answer}");
}
