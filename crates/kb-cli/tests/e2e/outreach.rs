//! kb reaching out, end to end through the binary: `kb digest --send` emails the digest
//! to a real SMTP server on loopback; with the server down, `kb serve` retries with
//! backoff, records every attempt and keeps answering; a webhook that answers 500 is
//! tried again with the same `Idempotency-Key`, an email with the same `Message-ID`; the
//! nudges over HTTP, snoozed and done. Digests never lost, never doubled: a `kb serve`
//! killed (`kill -9`) between a slot's claim and its send leaves it to the next one, which
//! sends it once; one killed mid-send leaves it to be sent again with the same id; while
//! one process holds a delivery, another never sends it.

#![allow(dead_code)]

#[path = "../../../kb-delivery/tests/support/mime.rs"]
mod mime;
#[path = "../../../kb-delivery/tests/support/smtp.rs"]
pub(crate) mod smtp;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use chrono::{Duration as Days, Local};
use serde_json::{Value, json};

use crate::common::{self, KbServer};

/// How long a delivery may take to show.
const WITHIN: Duration = Duration::from_secs(30);

/// A vault with an admin item due tomorrow and a person with an old follow-up.
fn prepare(vault: &Path) {
    for folder in common::CATEGORIES {
        std::fs::create_dir_all(vault.join(folder)).unwrap();
    }
    let tomorrow = (Local::now().date_naive() + Days::days(1)).to_string();
    std::fs::write(
        vault.join("admin/renew-passport.md"),
        format!("---\nname: Renew passport\nstatus: pending\ndue_date: {tomorrow}\n---\n"),
    )
    .unwrap();
    std::fs::write(
        vault.join("people/priya-raman.md"),
        "---\nname: Priya Raman\nfollow_ups:\n  - send her the paper\nlast_touched: 2026-01-05\n---\n",
    )
    .unwrap();
}

async fn eventually<T>(mut check: impl AsyncFnMut() -> Option<T>) -> Option<T> {
    let started = Instant::now();
    while started.elapsed() < WITHIN {
        if let Some(found) = check().await {
            return Some(found);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

/// The delivery attempts of digest `id`, once there are `count` of them.
async fn deliveries_of(server: &KbServer, id: i64, count: usize) -> Vec<Value> {
    eventually(async || {
        let digests = server.get("/api/digests").await.expect(200);
        let digest = digests["digests"].as_array()?.iter().find(|d| d["id"] == id)?.clone();
        let deliveries = digest["deliveries"].as_array()?.clone();
        (deliveries.len() == count).then_some(deliveries)
    })
    .await
    .unwrap_or_else(|| panic!("{count} delivery attempts of digest {id} were never recorded"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kb_digest_send_emails_the_digest_with_a_text_and_an_html_part() {
    let sink = smtp::SmtpSink::start(smtp::Behaviour::default()).await;
    let dir = tempfile::tempdir().unwrap();
    prepare(dir.path());
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_kb"))
        .args(["digest", "daily", "--send"])
        .env("KB_DIR", dir.path())
        .env("KB_SMTP_URL", sink.url())
        .env("KB_EMAIL_FROM", "kb <kb@example.org>")
        .env("KB_EMAIL_TO", "me@example.org")
        .env_remove("OPENAI_API_KEY")
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("Sent by email."), "{stdout}");

    let received = sink.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].rcpt_to, ["me@example.org"]);
    let mail = mime::Entity::parse(&received[0].data);
    let subject = mime::decode_words(mail.header("Subject").unwrap_or_default());
    assert!(subject.starts_with("kb daily digest — "), "{subject}");
    assert_eq!(mail.mime_type(), "multipart/alternative");
    let parts = mail.parts();
    let part =
        |kind: &str| parts.iter().find(|p| p.mime_type() == kind).map(mime::Entity::text).unwrap_or_default();
    let (plain, html) = (part("text/plain"), part("text/html"));
    assert!(plain.contains("# Daily digest") && plain.contains("Renew passport is due tomorrow"), "{plain}");
    assert!(html.contains("<h1>") && html.contains("Follow up with Priya Raman"), "{html}");

    // Kept, with its delivery.
    let listed = tokio::process::Command::new(env!("CARGO_BIN_EXE_kb"))
        .args(["--json", "digests"])
        .env("KB_DIR", dir.path())
        .output()
        .await
        .unwrap();
    let digests: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let delivery = &digests["digests"][0]["deliveries"][0];
    assert_eq!((delivery["channel"].as_str(), delivery["delivered"].as_bool()), (Some("email"), Some(true)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_delivery_is_retried_with_backoff_and_recorded_while_kb_keeps_answering() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let smtp_url = format!("smtp://127.0.0.1:{closed}");
    let env = [
        ("KB_SMTP_URL", smtp_url.as_str()),
        ("KB_EMAIL_FROM", "kb@example.org"),
        ("KB_EMAIL_TO", "me@example.org"),
        ("KB_DELIVERY_BACKOFF_MS", "300"),
    ];
    let server = KbServer::start_with_vault(&env, prepare).await;
    let sent = server.post("/api/digests", &json!({"type": "daily"})).await.expect(200);
    let id = sent["id"].as_i64().unwrap();
    assert_eq!(sent["channels"], json!(["email"]));

    // While the deliveries fail and wait, kb answers as usual.
    assert_eq!(server.get("/healthz").await.status, 200);
    assert_eq!(server.get("/api/entries").await.status, 200);
    server.post("/api/capture", &json!({"text": "[idea] a glass shed"})).await.expect(200);

    let attempts = deliveries_of(&server, id, 5).await;
    for (n, attempt) in attempts.iter().enumerate() {
        assert_eq!(attempt["attempt"], n + 1);
        assert_eq!(attempt["delivered"], false);
        assert_eq!(attempt["willRetry"], n < 4, "{attempt}");
        assert!(attempt["error"].as_str().is_some_and(|e| !e.is_empty()));
    }
    // Backoff: the waits double (0.3, 0.6, 1.2, 2.4 s), so the last came 4.5 s after the first.
    let at = |n: usize| chrono::DateTime::parse_from_rfc3339(attempts[n]["at"].as_str().unwrap()).unwrap();
    assert!(at(4) - at(0) >= chrono::Duration::milliseconds(4300), "{} .. {}", at(0), at(4));
    let health = server.get("/healthz").await.expect(200);
    assert_eq!(health["outreach"]["lastDelivery"]["attempt"], 5, "{health}");
    assert_eq!(health["outreach"]["lastDelivery"]["delivered"], false);
    assert_eq!(health["outreach"]["nextRuns"].as_array().map(Vec::len), Some(2), "{health}");
}

/// One request a webhook receiver got: its `Idempotency-Key` and its body.
#[derive(Debug, Clone, PartialEq)]
struct Hooked {
    key: Option<String>,
    body: Value,
}

/// How a test webhook answers its first request.
#[derive(Clone, Copy)]
enum FirstAnswer {
    /// 500, then 200 to every later request.
    Fails,
    /// Never (the request hangs), then 200 to every later request.
    Hangs,
}

/// A webhook receiver that records every request and answers the first as `first` says.
async fn test_webhook(first: FirstAnswer) -> (String, Arc<Mutex<Vec<Hooked>>>) {
    let requests: Arc<Mutex<Vec<Hooked>>> = Arc::default();
    let seen = Arc::clone(&requests);
    let app = axum::Router::new().route(
        "/hook/{secret}",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: String| {
            let seen = Arc::clone(&seen);
            async move {
                let key = headers.get("idempotency-key").and_then(|v| v.to_str().ok()).map(str::to_owned);
                let body = serde_json::from_str(&body).unwrap_or(Value::String(body));
                let count = {
                    let mut seen = seen.lock().unwrap();
                    seen.push(Hooked { key, body });
                    seen.len()
                };
                match first {
                    _ if count > 1 => StatusCode::OK,
                    FirstAnswer::Fails => StatusCode::INTERNAL_SERVER_ERROR,
                    FirstAnswer::Hangs => {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        StatusCode::OK
                    }
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook/s3cret-token", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, requests)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_that_answers_500_is_tried_again_with_the_json_body() {
    let (url, requests) = test_webhook(FirstAnswer::Fails).await;
    let env =
        [("KB_WEBHOOK_URL", url.as_str()), ("KB_WEBHOOK_FORMAT", "json"), ("KB_DELIVERY_BACKOFF_MS", "100")];
    let server = KbServer::start_with_vault(&env, prepare).await;
    let sent = server.post("/api/digests", &json!({"type": "weekly"})).await.expect(200);
    let id = sent["id"].as_i64().unwrap();
    let deliveries = deliveries_of(&server, id, 2).await;
    assert_eq!(
        (deliveries[0]["delivered"].as_bool(), deliveries[0]["willRetry"].as_bool()),
        (Some(false), Some(true))
    );
    assert_eq!(deliveries[1]["delivered"], true);
    let error = deliveries[0]["error"].as_str().unwrap_or_default();
    assert!(error.contains("500") && !error.contains("s3cret"), "{error}");

    let requests = requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0], requests[1], "the same digest and the same Idempotency-Key both times");
    let key = requests[0].key.as_deref().unwrap_or_default();
    assert!(key.starts_with("kb.") && key.ends_with(".webhook"), "{key:?}");
    let body = &requests[1].body;
    assert_eq!(body["id"], key, "the JSON's id is the Idempotency-Key");
    assert_eq!(body["type"], "weekly");
    assert!(body["title"].as_str().is_some_and(|t| t.starts_with("kb weekly review")));
    assert!(body["markdown"].as_str().is_some_and(|m| m.contains("# Weekly review")), "{body}");
    let keys: Vec<&str> =
        body["nudges"].as_array().unwrap().iter().filter_map(|n| n["key"].as_str()).collect();
    assert!(keys.contains(&"admin_due:admin/renew-passport.md"), "{keys:?}");
    assert!(server.log().lines().all(|l| !l.contains("s3cret")), "the webhook's secret reached the log");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nudges_over_http_are_listed_snoozed_and_done() {
    let server = KbServer::start_with_vault(&[], prepare).await;
    let keys = |nudges: &Value| -> Vec<String> {
        nudges["nudges"].as_array().unwrap().iter().map(|n| n["key"].as_str().unwrap().to_string()).collect()
    };
    let listed = server.get("/api/nudges").await.expect(200);
    // Nothing was captured lately either (the files have no created_at).
    assert_eq!(
        keys(&listed),
        ["admin_due:admin/renew-passport.md", "follow_up:people/priya-raman.md", "no_capture"],
        "{listed}"
    );

    let snoozed = server
        .post("/api/nudges/snooze", &json!({"key": "admin_due:admin/renew-passport.md"}))
        .await
        .expect(200);
    assert!(snoozed["until"].is_string());
    assert_eq!(
        keys(&server.get("/api/nudges").await.expect(200)),
        ["follow_up:people/priya-raman.md", "no_capture"]
    );

    server.post("/api/nudges/done", &json!({"key": "follow_up:people/priya-raman.md"})).await.expect(200);
    let person = std::fs::read_to_string(server.vault().join("people/priya-raman.md")).unwrap();
    assert!(!person.contains("send her the paper"), "{person}");
    assert_eq!(keys(&server.get("/api/nudges").await.expect(200)), ["no_capture"]);
    // A capture ends the quiet days.
    server.post("/api/capture", &json!({"text": "[idea] a glass shed"})).await.expect(200);
    assert!(keys(&server.get("/api/nudges").await.expect(200)).is_empty());

    let refused = server.post("/api/nudges/done", &json!({"key": "no_capture"})).await;
    assert_eq!(refused.status, 400, "{}", refused.text());
    let refused = server.post("/api/nudges/snooze", &json!({"key": "x", "days": 0})).await;
    assert_eq!(refused.status, 400, "{}", refused.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_email_sent_again_carries_the_same_message_id() {
    let sink = smtp::SmtpSink::start(smtp::Behaviour { defer_first: 1, ..Default::default() }).await;
    let smtp_url = sink.url();
    let env = [
        ("KB_SMTP_URL", smtp_url.as_str()),
        ("KB_EMAIL_FROM", "kb@example.org"),
        ("KB_EMAIL_TO", "me@example.org"),
        ("KB_DELIVERY_BACKOFF_MS", "100"),
    ];
    let server = KbServer::start_with_vault(&env, prepare).await;
    let sent = server.post("/api/digests", &json!({"type": "daily"})).await.expect(200);
    let deliveries = deliveries_of(&server, sent["id"].as_i64().unwrap(), 2).await;
    assert_eq!(
        (deliveries[0]["delivered"].as_bool(), deliveries[1]["delivered"].as_bool()),
        (Some(false), Some(true))
    );
    let ids = message_ids(&sink.seen());
    assert_eq!(ids.len(), 2, "the server saw both attempts");
    assert_eq!(ids[0], ids[1], "one Message-ID for both attempts");
    assert!(ids[0].starts_with("<kb.") && ids[0].ends_with(".email@example.org>"), "{ids:?}");
}

/// The `Message-ID` of each mail.
fn message_ids(mails: &[smtp::Received]) -> Vec<String> {
    mails
        .iter()
        .map(|mail| mime::Entity::parse(&mail.data).header("Message-ID").unwrap_or_default().to_string())
        .collect()
}

/// Two times of day (UTC, `HH:MM`) a few minutes back: the first for a kb to note as its
/// daily digest's latest slot, the second, later, for the next start to find missed.
fn two_past_times() -> (String, String) {
    let now = chrono::Utc::now();
    let time = |minutes: i64| (now - Days::minutes(minutes)).format("%H:%M").to_string();
    (time(3), time(1))
}

/// The environment of a daily digest at `at` (UTC), nothing else scheduled, by email.
fn daily_by_email<'a>(at: &'a str, smtp_url: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("KB_TIMEZONE", "UTC"),
        ("KB_DAILY_DIGEST_AT", at),
        ("KB_WEEKLY_REVIEW_AT", "off"),
        ("KB_SMTP_URL", smtp_url),
        ("KB_EMAIL_FROM", "kb@example.org"),
        ("KB_EMAIL_TO", "me@example.org"),
    ]
}

/// A vault (in the stopped server's folder, kept while it lives) whose kb noted the daily
/// slot at `noted`: a start with a later time of day then finds that slot missed and
/// runs it at once, as after a night kb was down.
async fn vault_that_noted(noted: &str) -> KbServer {
    let env = [("KB_TIMEZONE", "UTC"), ("KB_DAILY_DIGEST_AT", noted), ("KB_WEEKLY_REVIEW_AT", "off")];
    let mut server = KbServer::start_with_vault(&env, prepare).await;
    eventually(async || server.log().contains("schedule noted").then_some(()))
        .await
        .unwrap_or_else(|| panic!("the daily slot was never noted:\n{}", server.log()));
    server.kill();
    server
}

/// The digests kept.
async fn digests(server: &KbServer) -> Vec<Value> {
    server.get("/api/digests").await.expect(200)["digests"].as_array().cloned().unwrap_or_default()
}

/// Waits until `server` logged `text`.
async fn logged(server: &KbServer, text: &str) {
    eventually(async || server.log().contains(text).then_some(()))
        .await
        .unwrap_or_else(|| panic!("never logged {text:?}:\n{}", server.log()));
}

/// A pause (ms) after a delivery is taken, longer than any test: the process is killed
/// in it (`KB_TEST_DELIVERY_PAUSE_MS`, read by debug builds only).
const HELD: &str = "600000";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kb_serve_killed_between_claim_and_send_leaves_the_slot_to_the_next_which_sends_it_once() {
    let sink = smtp::SmtpSink::start(smtp::Behaviour::default()).await;
    let smtp_url = sink.url();
    let (noted, missed) = two_past_times();
    let before = vault_that_noted(&noted).await;
    let vault = before.vault();
    let env = daily_by_email(&missed, &smtp_url);

    let mut paused =
        KbServer::start_on(&vault, &[env.clone(), vec![("KB_TEST_DELIVERY_PAUSE_MS", HELD)]].concat()).await;
    // The slot is claimed and its digest kept; the process waits before sending it.
    let kept =
        eventually(async || digests(&paused).await.first().cloned()).await.expect("the missed slot ran");
    assert_eq!(kept["trigger"], "schedule");
    logged(&paused, "pausing before a delivery").await;
    paused.kill();
    assert!(sink.seen().is_empty(), "nothing was sent before the kill");

    let next = KbServer::start_on(&vault, &env).await;
    let deliveries = deliveries_of(&next, kept["id"].as_i64().unwrap(), 1).await;
    assert_eq!(
        (deliveries[0]["attempt"].as_u64(), deliveries[0]["delivered"].as_bool()),
        (Some(1), Some(true))
    );
    assert_eq!(sink.received().len(), 1, "the slot's digest arrived once");
    let listed = digests(&next).await;
    assert_eq!(listed.len(), 1, "the slot was not written again: {listed:?}");
    // Nothing else comes later either.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(sink.seen().len(), 1);
    assert!(message_ids(&sink.seen())[0].ends_with(".email@example.org>"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_cut_short_by_a_kill_is_sent_again_by_the_next_kb_serve_with_the_same_id() {
    let (url, requests) = test_webhook(FirstAnswer::Hangs).await;
    let env = [("KB_WEBHOOK_URL", url.as_str()), ("KB_DELIVERY_BACKOFF_MS", "100")];
    let mut first = KbServer::start_with_vault(&env, prepare).await;
    let sent = first.post("/api/digests", &json!({"type": "daily"})).await.expect(200);
    let id = sent["id"].as_i64().unwrap();
    // The receiver has the digest, kb does not know yet: killed mid-send.
    eventually(async || (requests.lock().unwrap().len() == 1).then_some(()))
        .await
        .expect("the webhook was called");
    first.kill();

    let second = KbServer::start_on(&first.vault(), &env).await;
    let deliveries = deliveries_of(&second, id, 2).await;
    assert_eq!(
        (deliveries[0]["attempt"].as_u64(), deliveries[0]["delivered"].as_bool()),
        (Some(1), Some(false))
    );
    assert_eq!(deliveries[0]["willRetry"], true);
    assert!(deliveries[0]["error"].as_str().is_some_and(|e| e.contains("kb stopped")), "{deliveries:?}");
    assert_eq!(
        (deliveries[1]["attempt"].as_u64(), deliveries[1]["delivered"].as_bool()),
        (Some(2), Some(true))
    );

    let requests = requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2, "sent again after the restart, not more");
    assert_eq!(
        requests[0], requests[1],
        "the same body and Idempotency-Key: the receiver can drop the repeat"
    );
    assert!(requests[0].key.is_some());
    assert_eq!(requests[0].body["id"].as_str(), requests[0].key.as_deref());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_one_kb_serve_holds_a_delivery_another_never_sends_it_and_takes_over_when_it_dies() {
    let sink = smtp::SmtpSink::start(smtp::Behaviour::default()).await;
    let smtp_url = sink.url();
    let (noted, missed) = two_past_times();
    let before = vault_that_noted(&noted).await;
    let vault = before.vault();
    let env = daily_by_email(&missed, &smtp_url);

    let mut holder =
        KbServer::start_on(&vault, &[env.clone(), vec![("KB_TEST_DELIVERY_PAUSE_MS", HELD)]].concat()).await;
    let kept =
        eventually(async || digests(&holder).await.first().cloned()).await.expect("the missed slot ran");
    logged(&holder, "pausing before a delivery").await;

    // Another kb serve on the vault: the slot is taken, and its start-up finds the
    // delivery unfinished but held.
    let other = KbServer::start_on(&vault, &env).await;
    logged(&other, "resuming the deliveries left unfinished").await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(sink.seen().is_empty(), "the other process sent a delivery the first one holds");
    assert!(other.log().contains("another kb process is sending this delivery"), "{}", other.log());
    assert_eq!(digests(&other).await.len(), 1, "one digest for the slot");

    // The holder dies: the other takes the delivery over and sends it, once.
    holder.kill();
    let deliveries = deliveries_of(&other, kept["id"].as_i64().unwrap(), 1).await;
    assert_eq!(deliveries[0]["delivered"], true);
    assert_eq!(sink.seen().len(), 1);
}
