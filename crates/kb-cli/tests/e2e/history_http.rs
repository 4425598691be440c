//! Revision history over HTTP, end to end: the real `kb serve` on a temporary vault, its
//! history, restore, undo and delete routes, and the files on disk (docs/HISTORY.md).

use std::time::{Duration, Instant};

use crate::common::{KbServer, url_path};
use serde_json::{Value, json};

/// Files a project through `POST /api/capture` with a hint (no model needed); its path.
async fn capture(kb: &KbServer, text: &str) -> String {
    let filed = kb.post("/api/capture", &json!({"text": text, "hints": "[projects]"})).await.expect(200);
    filed["path"].as_str().unwrap().to_string()
}

fn read(kb: &KbServer, path: &str) -> Vec<u8> {
    std::fs::read(kb.vault().join(path)).unwrap()
}

async fn history(kb: &KbServer, path: &str) -> Vec<Value> {
    let answer = kb.get(&format!("/api/entries/{}/history", url_path(path))).await.expect(200);
    answer["revisions"].as_array().unwrap().clone()
}

fn id(revision: &Value) -> i64 {
    revision["id"].as_i64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_lists_changes_newest_first_and_restore_brings_bytes_back() {
    let kb = KbServer::start(&[]).await;
    let path = capture(&kb, "Fix the shed roof before the rains").await;
    let captured = read(&kb, &path);

    kb.patch(&format!("/api/entries/{}", url_path(&path)), &json!({"status": "done"})).await.expect(200);
    let updated = read(&kb, &path);
    assert_ne!(captured, updated);

    let revisions = history(&kb, &path).await;
    assert_eq!(revisions.len(), 2, "{revisions:#?}");
    let (update, first) = (&revisions[0], &revisions[1]);
    assert!(id(update) > id(first), "not newest first: {revisions:#?}");
    for revision in &revisions {
        assert_eq!(revision["source"], "api");
        assert!(revision["at"].as_str().unwrap().ends_with('Z'));
        assert!(!revision["description"].as_str().unwrap().is_empty());
        assert!(revision.get("conversationId").is_none(), "no conversation: {revision}");
    }
    assert_eq!(first["tool"], "classify_and_capture");
    assert_eq!(first["pathBefore"], Value::Null);
    assert_eq!(first["pathAfter"], path.as_str());
    assert_eq!(update["tool"], "update_entry");
    assert_eq!(update["pathBefore"], path.as_str());
    assert_eq!(update["pathAfter"], path.as_str());

    // One revision with its texts, for a diff.
    let one = kb.get(&format!("/api/entries/{}/history/{}", url_path(&path), id(update))).await.expect(200);
    assert_eq!(one["id"], update["id"]);
    assert_eq!(one["before"].as_str().unwrap().as_bytes(), captured.as_slice());
    assert_eq!(one["after"].as_str().unwrap().as_bytes(), updated.as_slice());
    let created =
        kb.get(&format!("/api/entries/{}/history/{}", url_path(&path), id(first))).await.expect(200);
    assert_eq!(created["before"], Value::Null);
    kb.get(&format!("/api/entries/{}/history/999999", url_path(&path))).await.expect_error(404);

    // Restore to the capture: byte-identical, and recorded.
    let restored = kb
        .post(&format!("/api/entries/{}/restore", url_path(&path)), &json!({"revision": id(first)}))
        .await
        .expect(200);
    assert_eq!(restored["path"], path.as_str());
    assert!(restored["revision"].as_i64().unwrap() > id(update));
    assert_eq!(read(&kb, &path), captured);
    assert_eq!(history(&kb, &path).await.len(), 3);
    // The same bytes again: nothing recorded, no revision in the answer.
    let again = kb
        .post(&format!("/api/entries/{}/restore", url_path(&path)), &json!({"revision": id(first)}))
        .await
        .expect(200);
    assert!(again.get("revision").is_none(), "{again}");
    kb.post(&format!("/api/entries/{}/restore", url_path(&path)), &json!({"revision": 999_999}))
        .await
        .expect_error(404);
    kb.post(&format!("/api/entries/{}/restore", url_path(&path)), &json!({"rev": 1})).await.expect_error(400);

    // The entry GET and move still answer under the same route.
    kb.get(&format!("/api/entries/{}", url_path(&path))).await.expect(200);
    // A path kb never saw has no history; a path outside the vault is refused.
    assert!(history(&kb, "projects/never-was.md").await.is_empty());
    assert_eq!(kb.get("/api/entries/..%2Fx.md/history").await.expect_error(400), "invalid_path");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_then_restore_brings_the_entry_back_at_its_path() {
    let kb = KbServer::start(&[]).await;
    let path = capture(&kb, "Paint the garden fence").await;
    let before = read(&kb, &path);

    let deleted = kb.delete(&format!("/api/entries/{}", url_path(&path))).await.expect(200);
    assert_eq!(deleted["path"], path.as_str());
    assert_eq!(deleted["deleted"], true);
    let revision = deleted["revision"].as_i64().unwrap();
    assert!(!kb.vault().join(&path).exists());
    kb.get(&format!("/api/entries/{}", url_path(&path))).await.expect_error(404);
    kb.delete(&format!("/api/entries/{}", url_path(&path))).await.expect_error(404);

    // History stays reachable by the last path.
    let revisions = history(&kb, &path).await;
    assert_eq!(id(&revisions[0]), revision);
    assert_eq!(revisions[0]["tool"], "delete_entry");
    assert_eq!(revisions[0]["pathAfter"], Value::Null);

    let restored = kb
        .post(&format!("/api/entries/{}/restore", url_path(&path)), &json!({"revision": revision}))
        .await
        .expect(200);
    assert_eq!(restored["path"], path.as_str());
    assert_eq!(read(&kb, &path), before);
    kb.get(&format!("/api/entries/{}", url_path(&path))).await.expect(200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_walks_back_and_refuses_over_an_outside_edit() {
    let kb = KbServer::start(&[]).await;
    let path = capture(&kb, "Clean the gutters").await;
    let captured = read(&kb, &path);
    kb.patch(&format!("/api/entries/{}", url_path(&path)), &json!({"status": "done"})).await.expect(200);

    // Undo (no body): the update goes, byte-identical.
    let undone = kb.request("POST", "/api/undo", &[], None).await.expect(200);
    assert!(!undone["undone"].as_str().unwrap().is_empty());
    assert_eq!(undone["files"][0]["pathAfter"], path.as_str());
    assert_eq!(read(&kb, &path), captured);

    // An update again, then an outside edit: undo refuses and names the file.
    kb.patch(&format!("/api/entries/{}", url_path(&path)), &json!({"status": "someday"})).await.expect(200);
    let mut edited = String::from_utf8(read(&kb, &path)).unwrap();
    edited.push_str("\nWritten by hand.\n");
    std::fs::write(kb.vault().join(&path), &edited).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let revisions = history(&kb, &path).await;
        if revisions[0]["source"] == "outside" {
            break;
        }
        assert!(Instant::now() < deadline, "the outside edit never showed in history: {revisions:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let refused = kb.post("/api/undo", &json!({})).await;
    assert_eq!(refused.expect_error(409), "changed_since");
    let message = refused.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains(&path), "{message}");
    assert_eq!(read(&kb, &path), edited.as_bytes());

    // Forced, it goes ahead (the outside edit stays in history).
    kb.post("/api/undo", &json!({"force": true})).await.expect(200);
    assert_eq!(read(&kb, &path), captured);
    assert!(history(&kb, &path).await.iter().any(|r| r["source"] == "outside"));

    // Undo of a conversation with no changes: nothing to undo.
    let none = kb.post("/api/undo", &json!({"conversationId": "01JD3M2V6Q8T0W4Y7B1C3E5G7H"})).await;
    assert_eq!(none.expect_error(409), "nothing_to_undo");
    kb.post("/api/undo", &json!({"forced": true})).await.expect_error(400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_by_a_former_path_restores_where_the_entry_is_now_and_says_so() {
    let kb = KbServer::start(&[]).await;
    let filed = kb.post("/api/capture", &json!({"text": "Glass shed", "hints": "[ideas]"})).await.expect(200);
    assert_eq!(filed["path"], "ideas/glass-shed.md");
    let captured = read(&kb, "ideas/glass-shed.md");
    let first = id(&history(&kb, "ideas/glass-shed.md").await[0]);
    let moved = kb
        .post("/api/entries/ideas/glass-shed.md/move", &json!({"targetCategory": "projects"}))
        .await
        .expect(200);
    assert_eq!(moved["newPath"], "projects/glass-shed.md");
    kb.patch("/api/entries/projects/glass-shed.md", &json!({"status": "someday"})).await.expect(200);

    let restored =
        kb.post("/api/entries/ideas/glass-shed.md/restore", &json!({"revision": first})).await.expect(200);
    assert_eq!(restored["path"], "projects/glass-shed.md");
    assert!(restored["revision"].is_i64(), "{restored}");
    assert_eq!(
        restored["note"],
        "the entry has moved from ideas/glass-shed.md to projects/glass-shed.md since; \
         it was restored where it is now"
    );
    assert_eq!(read(&kb, "projects/glass-shed.md"), captured);
    // Exactly one file of that name, and one entry listed.
    assert_eq!(kb.entry_files(), ["projects/glass-shed.md"]);
    let listed = kb.get("/api/entries").await.expect(200);
    assert_eq!(listed["total"], 1, "{listed}");
    // Restored where it is, the entry answers no note.
    let here =
        kb.post("/api/entries/projects/glass-shed.md/restore", &json!({"revision": first})).await.expect(200);
    assert!(here.get("note").is_none(), "{here}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_says_a_change_came_from_the_api_or_a_chat() {
    let kb = KbServer::start(&[]).await;
    assert_eq!(kb.get("/healthz").await.expect(200)["model"], "offline");

    // A capture and an update over the HTTP API: undone, each is `by: "api"`.
    let path = capture(&kb, "Clean the gutters").await;
    kb.patch(&format!("/api/entries/{}", url_path(&path)), &json!({"status": "done"})).await.expect(200);
    let undone = kb.post("/api/undo", &json!({})).await.expect(200);
    assert!(undone["undone"].as_str().unwrap().starts_with("Updated status"), "{undone}");
    assert_eq!(undone["by"], "api", "{undone}");
    let undone = kb.post("/api/undo", &json!({})).await.expect(200);
    assert!(undone["undone"].as_str().unwrap().starts_with("Captured \"Clean the gutters\""), "{undone}");
    assert_eq!(undone["by"], "api", "{undone}");
    assert!(kb.entry_files().is_empty());

    // A capture in a chat turn: undone over the API without a conversation, `by: "chat"`.
    let turn = kb.post("/api/chat", &json!({"message": "remember to renew passport"})).await.expect(200);
    let files = kb.entry_files();
    assert_eq!(files.len(), 1, "the chat filed one entry: {turn}");
    let revisions = history(&kb, &files[0]).await;
    assert_eq!(revisions[0]["source"], "chat", "{revisions:#?}");
    let undone = kb.post("/api/undo", &json!({})).await.expect(200);
    assert_eq!(undone["by"], "chat", "{undone}");
    assert_eq!(undone["files"][0]["pathBefore"], files[0].as_str(), "{undone}");
    assert!(kb.entry_files().is_empty(), "the chat's capture is undone");
}
