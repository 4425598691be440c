//! Deleting and undoing in a chat, end to end: the real `kb serve` over
//! real HTTP, with a scripted OpenAI-compatible model and with the offline model. In a chat,
//! delete_entry only proposes; the proposal waits in the conversation (in the database, so
//! a restart or another kb process sees it) and the person's next message confirms it or
//! cancels it. Each test checks the files on disk, the history, the answers and the stored
//! conversation.

use std::path::Path;

use crate::common::{KbServer, url_path};
use kb_llm::testing::{FakeOpenAi, FakeReply};
use serde_json::{Value, json};

/// The entry every test deletes, written by hand: odd bytes (a comment, `1.10`, no final
/// newline) that an undo must bring back exactly.
const OLD_SITE: &str = "projects/old-site.md";
const OLD_SITE_TEXT: &str = "---\nid: 01JOLDSITE0000000000000000\nname: Old site\nstatus: active # for now\n\
rating: 1.10\ncreated_at: 2026-01-02T03:04:05Z\nupdated_at: 2026-01-02T03:04:05Z\n---\n\
The old website.\n\n## Log\n- 2026-01-02: archived the domain";
/// A second entry, which nothing may touch.
const GARDEN: &str = "ideas/garden.md";
const GARDEN_TEXT: &str = "---\nname: Garden\none_liner: Raised beds\n---\nCompost first.\n";

fn seed(vault: &Path) {
    for (path, text) in [(OLD_SITE, OLD_SITE_TEXT), (GARDEN, GARDEN_TEXT)] {
        let file = vault.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
}

/// A `kb serve` over the seeded vault, wired to a fresh scripted model.
async fn with_model() -> (FakeOpenAi, KbServer) {
    let fake = FakeOpenAi::start().await.unwrap();
    let base = fake.base_url();
    let env = [("OPENAI_API_KEY", "sk-test"), ("OPENAI_BASE_URL", base.as_str()), ("KB_MODEL", "test-model")];
    let server = KbServer::start_with_vault(&env, seed).await;
    (fake, server)
}

/// A `kb serve` over the seeded vault with the offline model.
async fn offline() -> KbServer {
    let kb = KbServer::start_with_vault(&[], seed).await;
    assert_eq!(kb.get("/healthz").await.expect(200)["model"], "offline");
    kb
}

/// One tool call as the model sends it.
fn call(id: &str, name: &str, arguments: &Value) -> FakeReply {
    FakeReply::tool_calls(&[(id, name, &arguments.to_string())])
}

/// One chat turn; its answer.
async fn chat(kb: &KbServer, message: &str, conversation: Option<&str>) -> Value {
    let body = match conversation {
        Some(id) => json!({"conversationId": id, "message": message}),
        None => json!({"message": message}),
    };
    kb.post("/api/chat", &body).await.expect(200)
}

fn conversation_id(answer: &Value) -> String {
    answer["conversationId"].as_str().unwrap().to_string()
}

fn content(answer: &Value) -> String {
    answer["message"]["content"].as_str().unwrap().to_string()
}

fn tools_used(answer: &Value) -> Vec<String> {
    serde_json::from_value(answer["toolsUsed"].clone()).unwrap()
}

fn file(kb: &KbServer, path: &str) -> Option<Vec<u8>> {
    std::fs::read(kb.vault().join(path)).ok()
}

/// The stored messages of a conversation.
async fn stored(kb: &KbServer, id: &str) -> Vec<Value> {
    kb.get(&format!("/api/conversations/{id}")).await.expect(200)["messages"].as_array().unwrap().clone()
}

/// The newest revision of the entry at (or last at) `path`.
async fn newest_revision(kb: &KbServer, path: &str) -> Value {
    let history = kb.get(&format!("/api/entries/{}/history", url_path(path))).await.expect(200);
    history["revisions"][0].clone()
}

/// The newest revision is this conversation's delete of `path`, as a chat did it.
async fn assert_deleted_in_history(kb: &KbServer, path: &str, conversation: &str) {
    let revision = newest_revision(kb, path).await;
    assert_eq!(revision["source"], "chat", "{revision}");
    assert_eq!(revision["tool"], "delete_entry", "{revision}");
    assert_eq!(revision["conversationId"], conversation, "{revision}");
    assert_eq!(revision["pathBefore"], path, "{revision}");
    assert_eq!(revision["pathAfter"], Value::Null, "{revision}");
}

/// The messages of the model's `n`th request.
fn sent_messages(fake: &FakeOpenAi, n: usize) -> Vec<Value> {
    fake.requests()[n].json()["messages"].as_array().unwrap().clone()
}

/// "delete the old site" with the scripted model: it calls delete_entry, which proposes,
/// and asks. Nothing is deleted yet. The conversation's id.
async fn scripted_proposal(fake: &FakeOpenAi, kb: &KbServer) -> String {
    fake.push(call("call_1", "delete_entry", &json!({"path": OLD_SITE})));
    fake.push(FakeReply::text("Delete projects/old-site.md? Say yes to delete it."));
    let asked = chat(kb, "delete the old site", None).await;
    assert_eq!(content(&asked), "Delete projects/old-site.md? Say yes to delete it.");
    assert_eq!(tools_used(&asked), ["delete_entry"]);
    assert_eq!(file(kb, OLD_SITE).as_deref(), Some(OLD_SITE_TEXT.as_bytes()), "a proposal deleted the file");
    // The model read the proposal, not a deletion.
    let sent = sent_messages(fake, 1);
    let result: Value = serde_json::from_str(sent.last().unwrap()["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        result,
        json!({"success": true, "data": {"path": OLD_SITE, "deleted": false, "confirmationRequired": true,
               "proposal": "Delete projects/old-site.md?"}})
    );
    conversation_id(&asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_delete_confirmed_removes_the_file_and_history_keeps_it() {
    let (fake, kb) = with_model().await;
    let id = scripted_proposal(&fake, &kb).await;

    fake.push(FakeReply::text("Deleted projects/old-site.md."));
    let done = chat(&kb, "Yes!", Some(&id)).await;
    assert_eq!(conversation_id(&done), id);
    assert_eq!(content(&done), "Deleted projects/old-site.md.");
    assert_eq!(tools_used(&done), ["delete_entry"]);
    assert_eq!(file(&kb, OLD_SITE), None);
    assert_eq!(file(&kb, GARDEN).as_deref(), Some(GARDEN_TEXT.as_bytes()));
    assert_deleted_in_history(&kb, OLD_SITE, &id).await;
    assert_eq!(fake.requests().len(), 3, "a confirmation costs one model call");
    assert_eq!(fake.pending(), 0);

    // The model was sent the yes, kb's own call and its result, and answered from them.
    let sent = sent_messages(&fake, 2);
    let n = sent.len();
    assert_eq!(sent[n - 3], json!({"role": "user", "content": "Yes!"}));
    let confirmed = &sent[n - 2]["tool_calls"][0];
    assert_eq!(confirmed["function"]["name"], "delete_entry");
    assert_eq!(
        serde_json::from_str::<Value>(confirmed["function"]["arguments"].as_str().unwrap()).unwrap(),
        json!({"path": OLD_SITE})
    );
    assert_eq!(sent[n - 1]["tool_call_id"], confirmed["id"]);
    let result: Value = serde_json::from_str(sent[n - 1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["data"]["deleted"], true);
    assert!(result["data"]["revision"].as_i64().is_some(), "{result}");

    // Stored like any call: the yes, the call, its result, the answer.
    let messages = stored(&kb, &id).await;
    let turn: Vec<(&str, &str)> = messages[4..]
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(turn.len(), 4, "{messages:#?}");
    assert_eq!(turn[0], ("user", "Yes!"));
    assert_eq!(turn[1].0, "assistant");
    assert_eq!(messages[5]["toolCalls"][0]["name"], "delete_entry");
    assert_eq!(turn[2].0, "tool");
    assert_eq!(messages[6]["toolCallId"], messages[5]["toolCalls"][0]["id"]);
    assert_eq!(turn[3], ("assistant", "Deleted projects/old-site.md."));

    // Nothing is pending any more: another yes is an ordinary message.
    fake.push(FakeReply::text("Yes to what?"));
    let again = chat(&kb, "yes", Some(&id)).await;
    assert!(tools_used(&again).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_delete_cancelled_keeps_the_file_and_the_other_message_is_handled_as_new() {
    let (fake, kb) = with_model().await;
    let id = scripted_proposal(&fake, &kb).await;

    fake.push(call("call_2", "list_entries", &json!({"category": "projects"})));
    fake.push(FakeReply::text("You have one project: Old site."));
    let listed = chat(&kb, "what projects do I have?", Some(&id)).await;
    assert_eq!(tools_used(&listed), ["list_entries"]);
    assert_eq!(content(&listed), "You have one project: Old site.");
    assert_eq!(file(&kb, OLD_SITE).as_deref(), Some(OLD_SITE_TEXT.as_bytes()));

    // The model was told, just before the message, that the proposal is off.
    let sent = sent_messages(&fake, 2);
    let n = sent.len();
    assert_eq!(sent[n - 1], json!({"role": "user", "content": "what projects do I have?"}));
    assert_eq!(sent[n - 2]["role"], "system");
    let note = sent[n - 2]["content"].as_str().unwrap();
    assert!(note.starts_with("Cancelled:") && note.contains("Delete projects/old-site.md?"), "{note}");
    // The list it asked for came back with the entry in it.
    let result: Value =
        serde_json::from_str(sent_messages(&fake, 3).last().unwrap()["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["data"]["entries"][0]["path"], OLD_SITE);

    // A yes now confirms nothing: the cancelled proposal is gone.
    fake.push(FakeReply::text("Yes to what?"));
    let late = chat(&kb, "yes", Some(&id)).await;
    assert!(tools_used(&late).is_empty());
    assert_eq!(file(&kb, OLD_SITE).as_deref(), Some(OLD_SITE_TEXT.as_bytes()));
    let sent = sent_messages(&fake, 4);
    assert_eq!(sent.last().unwrap(), &json!({"role": "user", "content": "yes"}));
    assert!(sent.iter().all(|m| !m["content"].as_str().unwrap_or("").starts_with("Cancelled:")), "{sent:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_delete_then_undo_that_brings_the_file_back_byte_for_byte() {
    let (fake, kb) = with_model().await;
    let id = scripted_proposal(&fake, &kb).await;
    fake.push(FakeReply::text("Deleted."));
    chat(&kb, "do it", Some(&id)).await;
    assert_eq!(file(&kb, OLD_SITE), None);

    fake.push(call("call_3", "undo_last_change", &json!({})));
    fake.push(FakeReply::text("It's back."));
    let undone = chat(&kb, "undo that", Some(&id)).await;
    assert_eq!(tools_used(&undone), ["undo_last_change"]);
    assert_eq!(content(&undone), "It's back.");
    assert_eq!(file(&kb, OLD_SITE).as_deref(), Some(OLD_SITE_TEXT.as_bytes()));
    assert_eq!(file(&kb, GARDEN).as_deref(), Some(GARDEN_TEXT.as_bytes()));
    let result: Value =
        serde_json::from_str(sent_messages(&fake, 4).last().unwrap()["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["data"]["files"][0]["pathAfter"], OLD_SITE, "{result}");
    let revision = newest_revision(&kb, OLD_SITE).await;
    assert_eq!(
        (revision["tool"].as_str(), revision["pathAfter"].as_str()),
        (Some("undo_last_change"), Some(OLD_SITE))
    );
    // The entry is listed again.
    let listed = kb.get("/api/entries?category=projects").await.expect(200);
    assert_eq!(listed["entries"][0]["path"], OLD_SITE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_delete_confirmed_then_undo_that() {
    let kb = offline().await;
    let asked = chat(&kb, "delete projects/old-site.md", None).await;
    let id = conversation_id(&asked);
    assert_eq!(
        content(&asked),
        "Delete projects/old-site.md? Say “yes” to delete it; anything else keeps it."
    );
    assert_eq!(tools_used(&asked), ["delete_entry"]);
    assert_eq!(file(&kb, OLD_SITE).as_deref(), Some(OLD_SITE_TEXT.as_bytes()));

    let done = chat(&kb, "yes", Some(&id)).await;
    assert_eq!(content(&done), "Deleted projects/old-site.md. Say “undo” to bring it back.");
    assert_eq!(tools_used(&done), ["delete_entry"]);
    assert_eq!(file(&kb, OLD_SITE), None);
    assert_deleted_in_history(&kb, OLD_SITE, &id).await;

    let undone = chat(&kb, "undo that", Some(&id)).await;
    assert_eq!(tools_used(&undone), ["undo_last_change"]);
    assert_eq!(content(&undone), "Undone: Deleted projects/old-site.md.\n- projects/old-site.md is back");
    assert_eq!(file(&kb, OLD_SITE).as_deref(), Some(OLD_SITE_TEXT.as_bytes()));
    assert_eq!(file(&kb, GARDEN).as_deref(), Some(GARDEN_TEXT.as_bytes()));

    // Undoing again walks further back: this conversation changed nothing before.
    let nothing = chat(&kb, "undo", Some(&id)).await;
    assert!(content(&nothing).starts_with("That didn't work"), "{nothing}");
    assert_eq!(file(&kb, OLD_SITE).as_deref(), Some(OLD_SITE_TEXT.as_bytes()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_delete_cancelled_by_another_request_or_a_no() {
    let kb = offline().await;
    // Named in words: the tool resolves the name, and the proposal says both.
    let asked = chat(&kb, "remove the old site entry", None).await;
    let id = conversation_id(&asked);
    assert!(content(&asked).starts_with("Delete Old site (projects/old-site.md)?"), "{asked}");

    let listed = chat(&kb, "list my projects", Some(&id)).await;
    assert_eq!(tools_used(&listed), ["list_entries"]);
    assert!(content(&listed).contains("Old site [active]"), "{listed}");
    assert_eq!(file(&kb, OLD_SITE).as_deref(), Some(OLD_SITE_TEXT.as_bytes()));
    let late = chat(&kb, "yes", Some(&id)).await;
    assert!(tools_used(&late).is_empty(), "{late}");
    assert_eq!(file(&kb, OLD_SITE).as_deref(), Some(OLD_SITE_TEXT.as_bytes()));

    // A plain no is acknowledged.
    let asked = chat(&kb, "delete that", Some(&id)).await;
    assert!(content(&asked).starts_with("Delete projects/old-site.md?"), "{asked}");
    let no = chat(&kb, "No.", Some(&id)).await;
    assert_eq!(content(&no), "Okay, I won't: nothing was changed.");
    assert!(tools_used(&no).is_empty());
    assert_eq!(kb.entry_files(), [GARDEN, OLD_SITE]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_survives_a_restart_and_another_process_runs_it_once() {
    let root = tempfile::tempdir().unwrap();
    let vault = root.path().join("vault");
    seed(&vault);
    let first = KbServer::start_on(&vault, &[]).await;
    let asked = chat(&first, "delete projects/old-site.md", None).await;
    let id = conversation_id(&asked);
    drop(first);

    // A new process on the same vault and database: the proposal is still waiting.
    let second = KbServer::start_on(&vault, &[]).await;
    let third = KbServer::start_on(&vault, &[]).await;
    let done = chat(&second, "go ahead", Some(&id)).await;
    assert_eq!(tools_used(&done), ["delete_entry"], "{done}");
    assert!(!vault.join(OLD_SITE).exists());
    // The other process sees it taken: its yes runs nothing.
    let again = chat(&third, "yes", Some(&id)).await;
    assert!(tools_used(&again).is_empty(), "{again}");
    assert_deleted_in_history(&third, OLD_SITE, &id).await;
}
