//! `Idempotency-Key` on `POST /api/capture` (and a move), across two `kb serve` processes
//! on one vault: a capture sent again with its key (a phone's queued capture resent, to
//! either process) answers the first result and files nothing new; many sent at once file
//! once.

use serde_json::json;
use tokio::task::JoinSet;

use crate::common::{KbServer, Reply};

/// `POST /api/capture {text}` with `Idempotency-Key: key`.
async fn capture(server: &KbServer, key: &str, text: &str) -> Reply {
    let body = json!({ "text": text }).to_string();
    server.request("POST", "/api/capture", &[("Idempotency-Key", key)], Some(body.as_bytes())).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_capture_sent_again_with_its_key_is_filed_once_by_any_process() {
    let first = KbServer::start(&[]).await;
    let second = KbServer::start_on(&first.vault(), &[]).await;

    // Filed once; the same capture again, to the other process, answers the same.
    let filed = capture(&first, "8d0c7a9e-3f1b-4c2a-9e57-0b7d2f6c1a01", "Renew passport by Dec 15").await;
    let filed_body = filed.expect(200);
    assert!(filed_body["path"].as_str().is_some_and(|p| p.ends_with(".md")), "{filed_body}");
    assert_eq!(filed.header("idempotent-replayed"), None);
    let again = capture(&second, "8d0c7a9e-3f1b-4c2a-9e57-0b7d2f6c1a01", "Renew passport by Dec 15").await;
    assert_eq!(again.expect(200), filed_body, "a repeat answers the first result");
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(first.entry_files().len(), 1, "files: {:?}", first.entry_files());

    // A move sent twice with its key moves once and answers the first result twice (without
    // the key the second would find nothing left to move).
    let body = json!({ "targetCategory": "projects" }).to_string();
    let target = "/api/entries/admin/renew-passport.md/move";
    let moved = first.request("POST", target, &[("Idempotency-Key", "move-1")], Some(body.as_bytes())).await;
    let moved_body = moved.expect(200);
    let again = second.request("POST", target, &[("Idempotency-Key", "move-1")], Some(body.as_bytes())).await;
    assert_eq!(again.expect(200), moved_body);
    assert_eq!(first.entry_files(), vec!["projects/renew-passport.md".to_string()]);

    // The key with another capture is refused; a key that is not visible ASCII too.
    let reused = capture(&first, "8d0c7a9e-3f1b-4c2a-9e57-0b7d2f6c1a01", "Something else").await;
    assert!(reused.expect_error(422).contains("idempotency_key_reused"), "{}", reused.text());
    let long = "k".repeat(256);
    capture(&first, &long, "Too long a key").await.expect_error(400);
    assert_eq!(first.entry_files().len(), 1);

    // Eight sends of one new capture at once, to both processes: one files it, each other
    // answers its result or that it is still being answered.
    let first = std::sync::Arc::new(first);
    let second = std::sync::Arc::new(second);
    let mut sends = JoinSet::new();
    for n in 0..8 {
        let server = std::sync::Arc::clone(if n % 2 == 0 { &first } else { &second });
        sends.spawn(async move { capture(&server, "same-key-8", "Buy oat milk for the office").await });
    }
    let mut answers = Vec::new();
    while let Some(reply) = sends.join_next().await {
        answers.push(reply.unwrap());
    }
    let filed: Vec<_> = answers.iter().filter(|r| r.status == 200).map(Reply::json).collect();
    assert!(!filed.is_empty());
    assert!(filed.iter().all(|body| *body == filed[0]), "every 200 is the one result: {filed:?}");
    for busy in answers.iter().filter(|r| r.status != 200) {
        assert!(busy.expect_error(409).contains("idempotency_in_progress"), "{}", busy.text());
    }
    assert_eq!(first.entry_files().len(), 2, "filed once: {:?}", first.entry_files());
    let late = capture(&second, "same-key-8", "Buy oat milk for the office").await;
    assert_eq!(late.expect(200), filed[0]);
}
