//! Digests by webhook: [`WebhookChannel`] POSTs each one to a URL (reqwest), as kb's JSON,
//! as an ntfy notification or as a Slack incoming-webhook message.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use base64::Engine as _;
use kb_domain::delivery::{DeliveryChannel, DeliveryError, DigestMessage};
use kb_domain::nudges::Nudge;
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use reqwest::{StatusCode, Url};
use serde::Serialize;

use crate::render;

/// kb's own JSON body of a digest (`format = "json"`): `{id?, type, title, markdown, nudges}`.
#[derive(Debug, Serialize)]
pub struct JsonBody<'a> {
    /// The delivery's stable id, also sent as `Idempotency-Key`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
    /// `daily` or `weekly`.
    #[serde(rename = "type")]
    pub kind: &'a str,
    /// The subject line.
    pub title: &'a str,
    /// The digest, as markdown.
    pub markdown: &'a str,
    /// The nudges of the moment.
    pub nudges: Vec<NudgeJson<'a>>,
}

/// One nudge in kb's JSON: `{key, rule, path?, name?, message}`, as a webhook sends it
/// and the HTTP API answers it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NudgeJson<'a> {
    /// What identifies it for snoozing.
    pub key: &'a str,
    /// The rule's name (`admin_due`, …).
    pub rule: &'static str,
    /// The entry it is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<&'a str>,
    /// That entry's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'a str>,
    /// What to tell the person.
    pub message: &'a str,
}

impl<'a> From<&'a Nudge> for NudgeJson<'a> {
    fn from(nudge: &'a Nudge) -> NudgeJson<'a> {
        NudgeJson {
            key: &nudge.key,
            rule: nudge.rule.as_str(),
            path: nudge.path.as_deref(),
            name: nudge.name.as_deref(),
            message: &nudge.message,
        }
    }
}

impl<'a> From<&'a DigestMessage> for JsonBody<'a> {
    fn from(message: &'a DigestMessage) -> JsonBody<'a> {
        JsonBody {
            id: message.id.as_deref(),
            kind: &message.kind,
            title: &message.title,
            markdown: &message.markdown,
            nudges: message.nudges.iter().map(NudgeJson::from).collect(),
        }
    }
}

/// What a webhook is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WebhookFormat {
    /// `POST` `application/json`: the [`DigestMessage`] as it serialises,
    /// `{"id", "type", "title", "markdown", "nudges"}` (`id` when the delivery has one).
    #[default]
    Json,
    /// ntfy's publish-as-body: `POST` `text/plain` with the markdown and the nudges
    /// ([`render::plain_text`], cut to [`WebhookChannel::NTFY_MAX_BYTES`]), headers
    /// `Title` (RFC 2047 encoded when not ASCII) and `Markdown: yes`.
    Ntfy,
    /// A Slack incoming webhook: `POST` `application/json` `{"text": …}` in Slack's
    /// `mrkdwn` ([`render::slack_text`]).
    Slack,
}

impl WebhookFormat {
    /// Every format, in the order they are listed.
    pub const ALL: [WebhookFormat; 3] = [WebhookFormat::Json, WebhookFormat::Ntfy, WebhookFormat::Slack];

    /// The format as written in settings: `json`, `ntfy`, `slack`.
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookFormat::Json => "json",
            WebhookFormat::Ntfy => "ntfy",
            WebhookFormat::Slack => "slack",
        }
    }
}

impl FromStr for WebhookFormat {
    type Err = WebhookSetupError;

    /// `json`, `ntfy` or `slack`, in any case; empty text is the default, `json`.
    fn from_str(text: &str) -> Result<WebhookFormat, WebhookSetupError> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(WebhookFormat::default());
        }
        WebhookFormat::ALL
            .into_iter()
            .find(|format| format.as_str().eq_ignore_ascii_case(text))
            .ok_or_else(|| WebhookSetupError::Format { given: text.to_owned() })
    }
}

impl fmt::Display for WebhookFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where and how digests are POSTed.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSettings {
    /// The `http` or `https` URL. It may hold a secret (a Slack webhook's path, an ntfy
    /// topic, a token in the query): kb shows only its host.
    pub url: String,
    /// What the webhook is sent.
    pub format: WebhookFormat,
}

impl fmt::Debug for WebhookSettings {
    /// Shows the URL's host only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = Url::parse(self.url.trim())
            .ok()
            .and_then(|url| url.host_str().map(str::to_owned))
            .unwrap_or_else(|| "<no host>".to_owned());
        f.debug_struct("WebhookSettings").field("host", &host).field("format", &self.format).finish()
    }
}

/// Why a [`WebhookChannel`] could not be built, or a [`WebhookFormat`] read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookSetupError {
    /// Not a format kb knows.
    #[error("unknown webhook format {given:?}: expected json, ntfy or slack")]
    Format {
        /// The text given.
        given: String,
    },
    /// Not an `http` or `https` URL with a host (the reason never holds the URL).
    #[error("invalid webhook URL: {reason}")]
    Url {
        /// What is wrong with it.
        reason: String,
    },
    /// The HTTP client could not be set up (TLS roots and the like).
    #[error("could not set up the webhook's HTTP client: {reason}")]
    Client {
        /// What went wrong.
        reason: String,
    },
}

/// POSTs digests to a webhook.
///
/// Every format sends a delivery's stable id as the `Idempotency-Key` header (see
/// [`DigestMessage::id`]). A 2xx answer is success. A 5xx, 429 (too many requests) or 408
/// (request timeout), a connection refused or dropped and a timeout are worth a retry; any
/// other answer is not (redirects are not followed: the URL must be the final one).
/// Messages and logs name the host only, never the full URL.
#[derive(Clone)]
pub struct WebhookChannel {
    /// The HTTP client (rustls; no redirects).
    client: reqwest::Client,
    /// Where to POST.
    url: Url,
    /// The URL's host, for messages and logs.
    host: String,
    /// What to send.
    format: WebhookFormat,
    /// How long one POST may take, answer included.
    timeout: Duration,
    /// What must never show in a message: the URL and its parts, longest first.
    secrets: Vec<String>,
}

impl WebhookChannel {
    /// How long one POST may take by default.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

    /// The most an ntfy body holds: ntfy's default message limit (a longer body becomes a
    /// file attachment, or is refused). A longer digest is cut, its nudges kept.
    pub const NTFY_MAX_BYTES: usize = 4096;

    /// A channel for these settings, the URL checked now (`http` or `https`, with a host).
    /// Nothing is sent or connected to yet.
    pub fn new(settings: &WebhookSettings) -> Result<WebhookChannel, WebhookSetupError> {
        if settings.url.trim().is_empty() {
            return Err(WebhookSetupError::Url { reason: "empty".to_owned() });
        }
        let url = Url::parse(settings.url.trim())
            .map_err(|error| WebhookSetupError::Url { reason: error.to_string() })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(WebhookSetupError::Url {
                reason: format!("scheme {:?} is not http or https", url.scheme()),
            });
        }
        let host = match url.host_str() {
            Some(host) if !host.is_empty() => host.to_owned(),
            _ => return Err(WebhookSetupError::Url { reason: "no host".to_owned() }),
        };
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("kb/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| WebhookSetupError::Client {
                reason: kb_domain::Chain(&error.without_url()).to_string(),
            })?;
        let secrets = url_secrets(&url);
        Ok(WebhookChannel {
            client,
            url,
            host,
            format: settings.format,
            timeout: Self::DEFAULT_TIMEOUT,
            secrets,
        })
    }

    /// The same channel with another limit on how long one POST may take (the default is
    /// [`WebhookChannel::DEFAULT_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> WebhookChannel {
        self.timeout = timeout;
        self
    }

    /// The webhook's host.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// What the webhook is sent.
    pub fn format(&self) -> WebhookFormat {
        self.format
    }

    /// The request for a digest; a delivery's stable id goes in `Idempotency-Key` (and in
    /// kb's JSON as `id`), the same on every attempt.
    fn request(&self, message: &DigestMessage) -> reqwest::RequestBuilder {
        let mut request = self.client.post(self.url.clone());
        if let Some(id) = message.id.as_deref().filter(|id| HeaderValue::from_str(id).is_ok()) {
            request = request.header("Idempotency-Key", id);
        }
        let request = match self.format {
            WebhookFormat::Json => request.json(&JsonBody::from(message)),
            WebhookFormat::Ntfy => request
                .header(CONTENT_TYPE, "text/plain; charset=utf-8")
                .header("Title", ntfy_title(&message.title))
                .header("Markdown", "yes")
                .body(ntfy_body(message)),
            WebhookFormat::Slack => request.json(&serde_json::json!({ "text": render::slack_text(message) })),
        };
        request.timeout(self.timeout)
    }

    /// Sends one digest, without the log.
    async fn send(&self, message: &DigestMessage) -> Result<StatusCode, DeliveryError> {
        let response = self.request(message).send().await.map_err(|error| self.transport_error(error))?;
        let status = response.status();
        if status.is_success() {
            return Ok(status);
        }
        let body = body_excerpt(response).await;
        let body = crate::scrub(&body, &self.secrets);
        let mut text = format!("webhook {} answered {status}", self.host);
        if !body.is_empty() {
            text.push_str(&format!(": {body}"));
        }
        if status.is_server_error()
            || status.is_informational()
            || status == StatusCode::TOO_MANY_REQUESTS
            || status == StatusCode::REQUEST_TIMEOUT
        {
            Err(DeliveryError::retry(text))
        } else if status.is_redirection() {
            Err(DeliveryError::permanent(format!("{text} (redirects are not followed: give the final URL)")))
        } else {
            Err(DeliveryError::permanent(text))
        }
    }

    /// A failed request (no answer) as a delivery error, without the URL.
    fn transport_error(&self, error: reqwest::Error) -> DeliveryError {
        let error = error.without_url();
        if error.is_timeout() {
            return DeliveryError::retry(format!(
                "webhook {} did not answer within {} s",
                self.host,
                self.timeout.as_secs_f64()
            ));
        }
        let detail = crate::scrub(&crate::excerpt(&kb_domain::Chain(&error).to_string(), 300), &self.secrets);
        let text = format!("webhook {} could not be reached: {detail}", self.host);
        if error.is_builder() || error.is_redirect() {
            DeliveryError::permanent(text)
        } else {
            // Connection refused or dropped, DNS, TLS handshake: the network's or the server's.
            DeliveryError::retry(text)
        }
    }
}

impl fmt::Debug for WebhookChannel {
    /// Shows the host, format and timeout; never the full URL.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookChannel")
            .field("host", &self.host)
            .field("format", &self.format)
            .field("timeout", &self.timeout)
            .finish()
    }
}

#[async_trait::async_trait]
impl DeliveryChannel for WebhookChannel {
    fn name(&self) -> &str {
        "webhook"
    }

    async fn deliver(&self, message: &DigestMessage) -> Result<(), DeliveryError> {
        let started = Instant::now();
        let result = self.send(message).await;
        let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match &result {
            Ok(status) => tracing::info!(
                channel = "webhook",
                format = self.format.as_str(),
                host = %self.host,
                status = status.as_u16(),
                elapsed_ms,
                success = true,
                "digest sent"
            ),
            Err(error) => tracing::warn!(
                channel = "webhook",
                format = self.format.as_str(),
                host = %self.host,
                elapsed_ms,
                success = false,
                retryable = error.retryable,
                error = %error.message,
                "digest not sent"
            ),
        }
        result.map(|_| ())
    }
}

/// The parts of a URL that may be secret, longest first: the whole URL, its path and
/// query, long path segments and query values, and the password.
fn url_secrets(url: &Url) -> Vec<String> {
    let mut secrets = vec![url.as_str().to_owned()];
    if url.path().len() > 1 {
        secrets.push(url.path().to_owned());
    }
    if let Some(query) = url.query() {
        secrets.push(query.to_owned());
        secrets
            .extend(url.query_pairs().map(|(_, value)| value.into_owned()).filter(|value| value.len() >= 8));
    }
    if let Some(segments) = url.path_segments() {
        secrets.extend(segments.filter(|segment| segment.len() >= 8).map(str::to_owned));
    }
    if let Some(password) = url.password() {
        secrets.push(password.to_owned());
        secrets.push(crate::percent_decode(password));
    }
    secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
    secrets.dedup();
    secrets
}

/// The start of an error answer's body, on one line (at most about 1 KiB is read).
async fn body_excerpt(mut response: reqwest::Response) -> String {
    let mut bytes = Vec::new();
    while bytes.len() < 1024 {
        match response.chunk().await {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            _ => break,
        }
    }
    crate::excerpt(&String::from_utf8_lossy(&bytes), 200)
}

/// The ntfy `Title` header: the title on one line, as is when it is printable ASCII, else
/// an RFC 2047 encoded word (ntfy decodes those).
fn ntfy_title(title: &str) -> String {
    let title = render::one_line(title);
    if title.bytes().all(|byte| (0x20..0x7f).contains(&byte)) && !title.contains("=?") {
        title
    } else {
        format!("=?UTF-8?B?{}?=", base64::engine::general_purpose::STANDARD.encode(title.as_bytes()))
    }
}

/// The ntfy body: [`render::plain_text`], cut to [`WebhookChannel::NTFY_MAX_BYTES`] if
/// longer (the markdown is cut, the nudges kept).
fn ntfy_body(message: &DigestMessage) -> String {
    const LIMIT: usize = WebhookChannel::NTFY_MAX_BYTES;
    const CUT: &str = "\n\n… (cut)\n";
    let full = render::plain_text(message);
    if full.len() <= LIMIT {
        return full;
    }
    let mut nudges = render::nudges_markdown(&message.nudges);
    if !nudges.is_empty() {
        nudges.insert(0, '\n');
    }
    let markdown = message.markdown.trim_end();
    let budget = LIMIT.saturating_sub(CUT.len() + nudges.len());
    let mut out = String::with_capacity(LIMIT);
    out.push_str(&markdown[..floor_char_boundary(markdown, budget)]);
    out.push_str(CUT);
    out.push_str(&nudges);
    let end = floor_char_boundary(&out, LIMIT);
    out.truncate(end);
    out
}

/// The largest char boundary of `text` at or below `index`.
fn floor_char_boundary(text: &str, index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    (0..=index).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kb_domain::nudges::{Nudge, NudgeRule};

    #[test]
    fn formats_parse_from_text() {
        assert_eq!("".parse::<WebhookFormat>(), Ok(WebhookFormat::Json));
        assert_eq!(" JSON ".parse::<WebhookFormat>(), Ok(WebhookFormat::Json));
        assert_eq!("ntfy".parse::<WebhookFormat>(), Ok(WebhookFormat::Ntfy));
        assert_eq!("Slack".parse::<WebhookFormat>(), Ok(WebhookFormat::Slack));
        let error = "discord".parse::<WebhookFormat>().err().map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("unknown webhook format \"discord\": expected json, ntfy or slack")
        );
    }

    #[test]
    fn ntfy_title_is_encoded_when_not_ascii() {
        assert_eq!(ntfy_title("kb daily\ndigest"), "kb daily digest");
        assert_eq!(ntfy_title("é"), "=?UTF-8?B?w6k=?=");
    }

    #[test]
    fn ntfy_body_is_cut_keeping_the_nudges() {
        let nudge = Nudge {
            key: "no_capture".into(),
            rule: NudgeRule::NoCapture,
            path: None,
            name: None,
            message: "Capture something".into(),
        };
        let message = DigestMessage {
            id: None,
            kind: "daily".into(),
            title: "t".into(),
            markdown: "é".repeat(3000),
            nudges: vec![nudge],
        };
        let body = ntfy_body(&message);
        assert!(body.len() <= WebhookChannel::NTFY_MAX_BYTES, "{}", body.len());
        assert!(body.ends_with("… (cut)\n\n## Nudges\n\n- Capture something\n"), "{body}");
        assert!(body.starts_with("éé"));
    }

    #[test]
    fn url_secrets_cover_path_and_query() {
        let url = Url::parse("https://hooks.example.org/services/T0/B0/abcdefghij?token=0123456789").ok();
        let secrets = url.as_ref().map(url_secrets).unwrap_or_default();
        let text = crate::scrub("no /services/T0/B0/abcdefghij here, nor abcdefghij or 0123456789", &secrets);
        assert_eq!(text, "no *** here, nor *** or ***");
    }

    #[test]
    fn settings_debug_shows_only_the_host() {
        let settings = WebhookSettings {
            url: "https://hooks.slack.com/services/T0/B0/secret".into(),
            format: WebhookFormat::Slack,
        };
        let shown = format!("{settings:?}");
        assert!(shown.contains("hooks.slack.com") && !shown.contains("secret"), "{shown}");
    }
}
