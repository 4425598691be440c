//! kb reaching out, end to end through the binary: `kb digest --send` emails the digest
//! to a real SMTP server on loopback; with the server down, `kb serve` retries with
//! backoff, records every attempt and keeps answering; a webhook that answers 500 is
//! tried again; the nudges over HTTP, snoozed and done.

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

mod common;
#[path = "../../kb-delivery/tests/support/mime.rs"]
mod mime;
#[path = "../../kb-delivery/tests/support/smtp.rs"]
mod smtp;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use chrono::{Duration as Days, Local};
use serde_json::{Value, json};

use common::KbServer;

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

/// A webhook receiver that answers 500 to the first request and 200 after.
async fn flaky_webhook() -> (String, Arc<Mutex<Vec<Value>>>) {
    let bodies: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = Arc::clone(&bodies);
    let app = axum::Router::new().route(
        "/hook/{secret}",
        axum::routing::post(move |body: String| {
            let seen = Arc::clone(&seen);
            async move {
                let mut seen = seen.lock().unwrap();
                seen.push(serde_json::from_str(&body).unwrap_or(Value::String(body)));
                if seen.len() == 1 { StatusCode::INTERNAL_SERVER_ERROR } else { StatusCode::OK }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook/s3cret-token", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, bodies)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_that_answers_500_is_tried_again_with_the_json_body() {
    let (url, bodies) = flaky_webhook().await;
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

    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0], bodies[1], "the same digest both times");
    let body = &bodies[1];
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
