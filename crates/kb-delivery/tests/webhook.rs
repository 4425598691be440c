//! WebhookChannel against a real HTTP server on loopback (axum) that records requests.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use base64::Engine as _;
use kb_delivery::webhook::JsonBody;
use kb_delivery::{WebhookChannel, WebhookFormat, WebhookSettings, WebhookSetupError};
use kb_domain::delivery::{DeliveryChannel, DigestMessage};
use kb_domain::nudges::NudgeRule;
use support::{closed_port, digest, nudge};

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Recorded {
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|value| value.to_str().expect("ASCII header"))
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }

    fn text(&self) -> &str {
        std::str::from_utf8(&self.body).expect("UTF-8 body")
    }
}

/// A server that records every request and answers each with the same response.
struct Server {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    async fn start(
        status: u16,
        headers: &'static [(&'static str, &'static str)],
        body: &'static str,
    ) -> Server {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let store = Arc::clone(&requests);
        let app = axum::Router::new().fallback(
            move |method: Method, uri: Uri, request_headers: HeaderMap, bytes: Bytes| {
                let store = Arc::clone(&store);
                async move {
                    store.lock().unwrap().push(Recorded {
                        method,
                        uri,
                        headers: request_headers,
                        body: bytes,
                    });
                    let mut response = Response::builder().status(status);
                    for (name, value) in headers {
                        response = response.header(*name, *value);
                    }
                    response.body(axum::body::Body::from(body)).unwrap()
                }
            },
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Server { addr, requests, task }
    }

    async fn ok() -> Server {
        Server::start(200, &[], "ok").await
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    fn only_request(&self) -> Recorded {
        let requests = self.requests();
        assert_eq!(requests.len(), 1, "{requests:?}");
        requests.into_iter().next().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn channel(url: &str, format: WebhookFormat) -> WebhookChannel {
    WebhookChannel::new(&WebhookSettings { url: url.to_owned(), format }).expect("channel")
}

fn sample() -> DigestMessage {
    digest(
        "kb daily digest 2026-11-23",
        "# Today\n\nSome **bold** & <b>raw</b> text.\n\n- one\n- two\n",
        vec![
            nudge(NudgeRule::AdminDue, Some("admin/tax.md"), "Tax return is due tomorrow"),
            nudge(NudgeRule::NoCapture, None, "Nothing captured for 3 days"),
        ],
    )
}

#[tokio::test]
async fn json_posts_the_message_as_it_serialises() {
    let server = Server::ok().await;
    let message = sample();
    channel(&server.url("/hooks/kb?key=abc"), WebhookFormat::Json).deliver(&message).await.unwrap();

    let request = server.only_request();
    assert_eq!(request.method, Method::POST);
    assert_eq!(request.uri.to_string(), "/hooks/kb?key=abc");
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.json(), serde_json::to_value(JsonBody::from(&message)).unwrap());
    assert_eq!(
        request.json(),
        serde_json::json!({
            "type": "daily",
            "title": "kb daily digest 2026-11-23",
            "markdown": "# Today\n\nSome **bold** & <b>raw</b> text.\n\n- one\n- two\n",
            "nudges": [
                {"key": "admin_due:admin/tax.md", "rule": "admin_due", "path": "admin/tax.md", "name": "tax",
                 "message": "Tax return is due tomorrow"},
                {"key": "no_capture", "rule": "no_capture", "message": "Nothing captured for 3 days"}
            ]
        })
    );
}

#[tokio::test]
async fn ntfy_posts_the_markdown_with_title_and_markdown_headers() {
    let server = Server::ok().await;
    channel(&server.url("/kb-digest"), WebhookFormat::Ntfy).deliver(&sample()).await.unwrap();

    let request = server.only_request();
    assert_eq!(request.method, Method::POST);
    assert_eq!(request.uri.path(), "/kb-digest");
    assert_eq!(request.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(request.header("title"), Some("kb daily digest 2026-11-23"));
    assert_eq!(request.header("markdown"), Some("yes"));
    assert_eq!(
        request.text(),
        "# Today\n\nSome **bold** & <b>raw</b> text.\n\n- one\n- two\n\n\
         ## Nudges\n\n- Tax return is due tomorrow\n- Nothing captured for 3 days\n"
    );
}

#[tokio::test]
async fn ntfy_encodes_a_non_ascii_title() {
    let server = Server::ok().await;
    let message = digest("kb daily digest — 2026-11-23", "Quiet day.", vec![]);
    channel(&server.url("/kb"), WebhookFormat::Ntfy).deliver(&message).await.unwrap();

    let request = server.only_request();
    let title = request.header("title").unwrap();
    let encoded = title.strip_prefix("=?UTF-8?B?").and_then(|rest| rest.strip_suffix("?=")).expect(title);
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded).unwrap();
    assert_eq!(String::from_utf8(decoded).unwrap(), "kb daily digest — 2026-11-23");
    assert_eq!(request.text(), "Quiet day.\n");
}

#[tokio::test]
async fn slack_posts_mrkdwn_text() {
    let server = Server::ok().await;
    channel(&server.url("/services/T000/B000/XXXX"), WebhookFormat::Slack).deliver(&sample()).await.unwrap();

    let request = server.only_request();
    assert_eq!(request.method, Method::POST);
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.json(),
        serde_json::json!({
            "text": "*kb daily digest 2026-11-23*\n*Today*\n\n\
                     Some *bold* &amp; &lt;b&gt;raw&lt;/b&gt; text.\n\n• one\n• two\n\n\
                     *Nudges*\n• Tax return is due tomorrow\n• Nothing captured for 3 days"
        })
    );
}

#[tokio::test]
async fn a_delivery_id_is_the_idempotency_key_and_the_json_id_of_every_attempt() {
    let server = Server::ok().await;
    let mut message = sample();
    message.id = Some("kb.01jd0000000000000000000000.webhook".to_owned());
    let json = channel(&server.url("/hook"), WebhookFormat::Json);
    json.deliver(&message).await.unwrap();
    json.deliver(&message).await.unwrap();
    channel(&server.url("/ntfy"), WebhookFormat::Ntfy).deliver(&message).await.unwrap();
    channel(&server.url("/slack"), WebhookFormat::Slack).deliver(&message).await.unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    for request in &requests {
        assert_eq!(request.header("idempotency-key"), Some("kb.01jd0000000000000000000000.webhook"));
    }
    assert_eq!(requests[0].json()["id"], "kb.01jd0000000000000000000000.webhook");
    assert_eq!(requests[0].body, requests[1].body, "the same body on a retry");

    // Without an id: no header and no `id` field.
    json.deliver(&sample()).await.unwrap();
    let last = server.requests().pop().unwrap();
    assert_eq!(last.header("idempotency-key"), None);
    assert!(last.json().get("id").is_none());
}

#[tokio::test]
async fn any_2xx_is_success() {
    for status in [200, 201, 202, 204] {
        let server = Server::start(status, &[], "").await;
        let result = channel(&server.url("/"), WebhookFormat::Json).deliver(&sample()).await;
        assert_eq!(result, Ok(()), "{status}");
    }
}

#[tokio::test]
async fn server_errors_and_throttling_are_worth_a_retry() {
    for status in [500, 502, 503, 429, 408] {
        let server = Server::start(status, &[], "busy, try later").await;
        let error = channel(&server.url("/hook"), WebhookFormat::Json).deliver(&sample()).await.unwrap_err();
        assert!(error.retryable, "{status}: {error:?}");
        assert!(error.message.contains(&status.to_string()), "{error:?}");
        assert!(error.message.contains("busy, try later"), "{error:?}");
        assert_eq!(server.requests().len(), 1, "sent once, retries are the caller's");
    }
}

#[tokio::test]
async fn other_4xx_are_permanent() {
    for status in [400, 401, 403, 404, 413] {
        let server = Server::start(status, &[], "no_service").await;
        let error = channel(&server.url("/hook"), WebhookFormat::Slack).deliver(&sample()).await.unwrap_err();
        assert!(!error.retryable, "{status}: {error:?}");
        assert!(
            error.message.contains(&status.to_string()) && error.message.contains("no_service"),
            "{error:?}"
        );
    }
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let server = Server::start(302, &[("location", "/elsewhere")], "").await;
    let error = channel(&server.url("/hook"), WebhookFormat::Json).deliver(&sample()).await.unwrap_err();
    assert!(!error.retryable, "{error:?}");
    assert!(error.message.contains("302"), "{error:?}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn messages_name_the_host_never_the_secret_path() {
    // The body echoes the path, as some error pages do.
    let server = Server::start(404, &[], "No hook at /services/T000/B000/SECRETTOKEN123").await;
    let url = server.url("/services/T000/B000/SECRETTOKEN123");
    let channel = channel(&url, WebhookFormat::Slack);
    assert!(!format!("{channel:?}").contains("SECRET"));
    let error = channel.deliver(&sample()).await.unwrap_err();
    assert!(!error.message.contains("SECRETTOKEN123"), "{error:?}");
    assert!(error.message.contains("127.0.0.1"), "{error:?}");

    let port = closed_port().await;
    let url = format!("http://127.0.0.1:{port}/services/T000/B000/SECRETTOKEN123?token=HIDDENVALUE");
    let error = self::channel(&url, WebhookFormat::Slack).deliver(&sample()).await.unwrap_err();
    assert!(!error.message.contains("SECRET") && !error.message.contains("HIDDEN"), "{error:?}");
}

#[tokio::test]
async fn a_closed_port_is_worth_a_retry() {
    let port = closed_port().await;
    let error = channel(&format!("http://127.0.0.1:{port}/hook"), WebhookFormat::Ntfy)
        .deliver(&sample())
        .await
        .unwrap_err();
    assert!(error.retryable, "{error:?}");
    assert!(error.message.contains("127.0.0.1"), "{error:?}");
}

#[tokio::test]
async fn a_hung_server_times_out_and_is_worth_a_retry() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let channel =
        channel(&format!("http://{addr}/hook"), WebhookFormat::Json).with_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let error = channel.deliver(&sample()).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(error.retryable, "{error:?}");
    assert!(error.message.contains("did not answer"), "{error:?}");
    hold.abort();
}

#[test]
fn bad_settings_fail_at_construction() {
    for url in ["not a url", "ftp://example.org/hook", "mailto:me@example.org", "", "http://"] {
        let result =
            WebhookChannel::new(&WebhookSettings { url: url.to_owned(), format: WebhookFormat::Json });
        let error = result.unwrap_err();
        assert!(matches!(error, WebhookSetupError::Url { .. }), "{url}: {error:?}");
        assert!(error.to_string().starts_with("invalid webhook URL: "), "{error}");
    }
    let error = "teams".parse::<WebhookFormat>().unwrap_err();
    assert_eq!(error, WebhookSetupError::Format { given: "teams".to_owned() });
    assert_eq!(error.to_string(), "unknown webhook format \"teams\": expected json, ntfy or slack");
    assert_eq!("".parse::<WebhookFormat>(), Ok(WebhookFormat::Json));
    assert_eq!("NTFY".parse::<WebhookFormat>(), Ok(WebhookFormat::Ntfy));
    assert_eq!("slack".parse::<WebhookFormat>(), Ok(WebhookFormat::Slack));
}

#[test]
fn the_channel_is_called_webhook() {
    let channel = channel("https://hooks.slack.com/services/T/B/X", WebhookFormat::Slack);
    assert_eq!(channel.name(), "webhook");
    assert_eq!(channel.host(), "hooks.slack.com");
    assert_eq!(channel.format(), WebhookFormat::Slack);
}
