//! Digests by email: [`EmailChannel`] sends each one by SMTP (lettre) as a
//! `multipart/alternative` mail, the markdown as `text/plain` and rendered as `text/html`;
//! and the plain-text replies to mail kb filed ([`EmailChannel::reply`]).

use std::error::Error as _;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kb_domain::delivery::{DeliveryChannel, DeliveryError, DigestMessage};
use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart, SinglePart};
use lettre::transport::smtp::AsyncSmtpTransportBuilder;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use reqwest::Url;

use crate::render;

/// Where and how digests are emailed.
#[derive(Clone, PartialEq, Eq)]
pub struct EmailSettings {
    /// The SMTP server, in lettre's URL form: `smtps://user:pass@host:465` (implicit TLS),
    /// `smtp://user:pass@host:587?tls=required` (STARTTLS) or `smtp://host:25` (no TLS:
    /// only for a server on loopback). User and password are percent-encoded; a path
    /// (`smtp://host/ehlo.name`) sets the name kb gives in `EHLO`.
    pub smtp_url: String,
    /// The sender: `kb@example.org` or `kb <kb@example.org>`.
    pub from: String,
    /// The recipients (see [`EmailSettings::parse_recipients`]).
    pub to: Vec<String>,
}

impl EmailSettings {
    /// Splits a comma-separated list of addresses (`a@example.org, Bo <b@example.org>`;
    /// a comma inside a quoted name does not split), checking each; empty items are
    /// skipped. At least one address is needed.
    pub fn parse_recipients(list: &str) -> Result<Vec<String>, EmailSetupError> {
        let mut items = Vec::new();
        let mut current = String::new();
        let mut quoted = false;
        let mut escaped = false;
        for c in list.chars() {
            match c {
                _ if escaped => escaped = false,
                '\\' if quoted => escaped = true,
                '"' => quoted = !quoted,
                ',' if !quoted => {
                    items.push(std::mem::take(&mut current));
                    continue;
                }
                _ => {}
            }
            current.push(c);
        }
        items.push(current);
        let mut out = Vec::new();
        for item in items {
            let address = item.trim();
            if address.is_empty() {
                continue;
            }
            parse_mailbox(address)
                .map_err(|reason| EmailSetupError::Recipient { address: address.to_owned(), reason })?;
            out.push(address.to_owned());
        }
        if out.is_empty() {
            return Err(EmailSetupError::NoRecipients);
        }
        Ok(out)
    }
}

impl fmt::Debug for EmailSettings {
    /// Shows the SMTP URL without its password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmailSettings")
            .field("smtp_url", &redacted_url(&self.smtp_url))
            .field("from", &self.from)
            .field("to", &self.to)
            .finish()
    }
}

/// The SMTP URL with its password replaced by `***` (or a placeholder if it does not parse).
fn redacted_url(smtp_url: &str) -> String {
    match Url::parse(smtp_url) {
        Ok(mut url) => {
            if url.password().is_some() {
                // Only fails for URLs that cannot have a password, and this one has one.
                let _ = url.set_password(Some("***"));
            }
            url.to_string()
        }
        Err(_) => "<not a URL>".to_owned(),
    }
}

/// Parses one address, as the reason it is not one on failure.
fn parse_mailbox(address: &str) -> Result<Mailbox, String> {
    address.parse::<Mailbox>().map_err(|error| error.to_string())
}

/// Why an [`EmailChannel`] could not be built from its [`EmailSettings`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmailSetupError {
    /// The SMTP URL is not one lettre can use (the reason never holds the password).
    #[error(
        "invalid SMTP URL: {reason} (expected smtps://user:pass@host:465, \
         smtp://user:pass@host:587?tls=required or smtp://host:25)"
    )]
    SmtpUrl {
        /// What is wrong with it.
        reason: String,
    },
    /// The sender is not an email address.
    #[error("invalid sender address {address:?}: {reason}")]
    From {
        /// The address as given.
        address: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A recipient is not an email address.
    #[error("invalid recipient address {address:?}: {reason}")]
    Recipient {
        /// The address as given.
        address: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No recipient at all.
    #[error("no recipient address")]
    NoRecipients,
}

/// Sends digests by SMTP, one connection per digest.
///
/// Each digest is one mail to every recipient: subject = the digest's title (RFC 2047
/// encoded when not ASCII), `Message-ID` = the delivery's stable id when it has one (see
/// [`DigestMessage::id`]), a `multipart/alternative` body with the plain text
/// ([`render::plain_text`]) and the HTML ([`render::html`]). A 4xx reply, a refused or
/// dropped connection and a timeout are worth a retry; a 5xx reply, a refused login or a
/// TLS certificate problem are not.
#[derive(Clone)]
pub struct EmailChannel {
    /// The transport as configured from the URL, kept to rebuild with another timeout.
    builder: AsyncSmtpTransportBuilder,
    /// The transport sends go through.
    transport: AsyncSmtpTransport<Tokio1Executor>,
    /// The sender.
    from: Mailbox,
    /// The recipients.
    to: Vec<Mailbox>,
    /// The SMTP server's host, for messages and logs.
    host: String,
    /// What must never show in a message: the password, as written and decoded.
    secrets: Vec<String>,
    /// How long one send may take, all in all.
    timeout: Duration,
}

impl EmailChannel {
    /// How long one send may take by default, from connecting to the server's last reply.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

    /// A channel for these settings, checked now: the URL (scheme, host, `tls=` mode), the
    /// sender and each recipient. Nothing is sent or connected to yet.
    pub fn new(settings: &EmailSettings) -> Result<EmailChannel, EmailSetupError> {
        if settings.smtp_url.trim().is_empty() {
            return Err(EmailSetupError::SmtpUrl { reason: "empty".to_owned() });
        }
        let url = Url::parse(settings.smtp_url.trim())
            .map_err(|error| EmailSetupError::SmtpUrl { reason: error.to_string() })?;
        let mut secrets = Vec::new();
        if let Some(password) = url.password() {
            secrets.push(password.to_owned());
            secrets.push(crate::percent_decode(password));
        }
        check_url(&url)?;
        let host = url.host_str().unwrap_or_default().to_owned();
        let builder =
            AsyncSmtpTransport::<Tokio1Executor>::from_url(settings.smtp_url.trim()).map_err(|error| {
                let reason = match error.source() {
                    Some(source) => source.to_string(),
                    None => error.to_string(),
                };
                EmailSetupError::SmtpUrl { reason: crate::scrub(&reason, &secrets) }
            })?;
        warn_if_password_in_clear(&url, &host);

        let from = parse_mailbox(settings.from.trim())
            .map_err(|reason| EmailSetupError::From { address: settings.from.clone(), reason })?;
        let mut to = Vec::new();
        for address in &settings.to {
            let mailbox = parse_mailbox(address.trim())
                .map_err(|reason| EmailSetupError::Recipient { address: address.clone(), reason })?;
            to.push(mailbox);
        }
        if to.is_empty() {
            return Err(EmailSetupError::NoRecipients);
        }

        let timeout = Self::DEFAULT_TIMEOUT;
        let transport = builder.clone().timeout(Some(timeout)).build();
        Ok(EmailChannel { builder, transport, from, to, host, secrets, timeout })
    }

    /// The same channel with another limit on how long one send may take (the default is
    /// [`EmailChannel::DEFAULT_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> EmailChannel {
        self.transport = self.builder.clone().timeout(Some(timeout)).build();
        self.timeout = timeout;
        self
    }

    /// The SMTP server's host.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The mail for a digest.
    fn compose(&self, message: &DigestMessage) -> Result<Message, DeliveryError> {
        let mut builder = Message::builder()
            .from(self.from.clone())
            .subject(render::one_line(&message.title))
            .message_id(Some(self.message_id(message.id.as_deref())));
        for to in &self.to {
            builder = builder.to(to.clone());
        }
        builder
            .multipart(MultiPart::alternative_plain_html(render::plain_text(message), render::html(message)))
            .map_err(|error| DeliveryError::permanent(format!("could not build the email: {error}")))
    }

    /// The `Message-ID`, in the sender's domain: `<{id}@{domain}>` for a delivery with a
    /// stable id (the same on every attempt, so a receiver can drop a repeat), else a
    /// fresh one.
    fn message_id(&self, id: Option<&str>) -> String {
        if let Some(id) = id.filter(|id| is_id_left(id)) {
            return format!("<{id}@{}>", self.from.email.domain());
        }
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default();
        let count = COUNTER.fetch_add(1, Ordering::Relaxed);
        format!("<kb.{nanos:x}.{:x}.{count:x}@{}>", std::process::id(), self.from.email.domain())
    }

    /// Sends a plain-text reply to the channel's recipients: `subject`, `text`, answering
    /// the mail whose `Message-ID` is `in_reply_to` (without angle brackets), when known.
    pub async fn reply(
        &self,
        subject: &str,
        text: &str,
        in_reply_to: Option<&str>,
    ) -> Result<(), DeliveryError> {
        self.plain(subject, text, in_reply_to, "auto-replied").await
    }

    /// Sends a plain-text notice kb writes on its own (a sign-in link) to the channel's
    /// recipients, marked `Auto-Submitted: auto-generated`.
    pub async fn notice(&self, subject: &str, text: &str) -> Result<(), DeliveryError> {
        self.plain(subject, text, None, "auto-generated").await
    }

    /// A plain-text mail marked `Auto-Submitted: {automatic}`, so an autoresponder does
    /// not answer it back.
    async fn plain(
        &self,
        subject: &str,
        text: &str,
        in_reply_to: Option<&str>,
        automatic: &str,
    ) -> Result<(), DeliveryError> {
        let mut builder = Message::builder()
            .from(self.from.clone())
            .subject(render::one_line(subject))
            .message_id(Some(self.message_id(None)));
        if let Some(id) = in_reply_to.filter(|id| !id.contains(['<', '>', '\r', '\n'])) {
            builder = builder.in_reply_to(format!("<{id}>")).references(format!("<{id}>"));
        }
        for to in &self.to {
            builder = builder.to(to.clone());
        }
        let automatic = HeaderValue::new(HeaderName::new_from_ascii_str("Auto-Submitted"), automatic.into());
        let email = builder
            .raw_header(automatic)
            .singlepart(SinglePart::plain(text.to_string()))
            .map_err(|error| DeliveryError::permanent(format!("could not build the email: {error}")))?;
        match tokio::time::timeout(self.timeout, self.transport.send(email)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(self.classify(&error)),
            Err(_) => Err(DeliveryError::retry(format!("SMTP server {} did not answer in time", self.host))),
        }
    }

    /// Sends one digest, without the log.
    async fn send(&self, message: &DigestMessage) -> Result<(), DeliveryError> {
        let email = self.compose(message)?;
        match tokio::time::timeout(self.timeout, self.transport.send(email)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(self.classify(&error)),
            Err(_) => Err(DeliveryError::retry(format!(
                "SMTP server {} did not finish within {} s",
                self.host,
                self.timeout.as_secs_f64()
            ))),
        }
    }

    /// A lettre error as a delivery error: retryable or not, and said without secrets.
    fn classify(&self, error: &lettre::transport::smtp::Error) -> DeliveryError {
        let text = crate::scrub(&crate::excerpt(&error.to_string(), 500), &self.secrets);
        let message = format!("sending email via {} failed: {text}", self.host);
        if error.is_permanent() {
            DeliveryError::permanent(message)
        } else if error.is_transient() || error.is_timeout() {
            DeliveryError::retry(message)
        } else if error.is_tls() {
            // A connection dropped during the handshake may pass; a certificate refused won't.
            if has_io_source(error) {
                DeliveryError::retry(message)
            } else {
                DeliveryError::permanent(message)
            }
        } else if error.is_client() {
            // lettre's own refusals: no login mechanism in common with the server and the like.
            DeliveryError::permanent(message)
        } else {
            // Connection refused or dropped, DNS, an unreadable reply, a shut-down transport.
            DeliveryError::retry(message)
        }
    }
}

/// Whether `id` may stand left of the `@` of a `Message-ID` as it is: dot-separated words
/// of letters, digits, `-` and `_` (kb's delivery ids are).
fn is_id_left(id: &str) -> bool {
    !id.is_empty()
        && id.split('.').all(|word| {
            !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// Checks what lettre's own errors say less clearly: the scheme, the host, the `tls=` mode.
fn check_url(url: &Url) -> Result<(), EmailSetupError> {
    let invalid = |reason: String| Err(EmailSetupError::SmtpUrl { reason });
    if !matches!(url.scheme(), "smtp" | "smtps") {
        return invalid(format!("scheme {:?} is not smtp or smtps", url.scheme()));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return invalid("no host".to_owned());
    }
    if url.scheme() == "smtp"
        && let Some((_, mode)) = url.query_pairs().find(|(key, _)| key == "tls")
        && !matches!(mode.as_ref(), "required" | "opportunistic")
    {
        return invalid(format!("tls={mode:?} is neither \"required\" nor \"opportunistic\""));
    }
    Ok(())
}

/// Whether an I/O error is among the error's causes.
fn has_io_source(error: &lettre::transport::smtp::Error) -> bool {
    let mut source = error.source();
    while let Some(cause) = source {
        if cause.downcast_ref::<std::io::Error>().is_some() {
            return true;
        }
        source = cause.source();
    }
    false
}

/// Logs a warning when the URL would send a password over a connection without TLS to a
/// host other than loopback.
fn warn_if_password_in_clear(url: &Url, host: &str) {
    let tls_param = url.query_pairs().find(|(key, _)| key == "tls").map(|(_, value)| value.into_owned());
    let in_clear = url.scheme() == "smtp" && tls_param.as_deref() != Some("required");
    let loopback = host == "localhost"
        || host.trim_matches(['[', ']']).parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if url.password().is_some() && in_clear && !loopback {
        tracing::warn!(
            channel = "email",
            host,
            "the SMTP URL has a password but no required TLS: use smtps:// or ?tls=required"
        );
    }
}

impl fmt::Debug for EmailChannel {
    /// Shows the host, sender, recipients and timeout; never the password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmailChannel")
            .field("host", &self.host)
            .field("from", &self.from.to_string())
            .field("to", &self.to.iter().map(ToString::to_string).collect::<Vec<_>>())
            .field("timeout", &self.timeout)
            .finish()
    }
}

#[async_trait::async_trait]
impl DeliveryChannel for EmailChannel {
    fn name(&self) -> &str {
        "email"
    }

    async fn deliver(&self, message: &DigestMessage) -> Result<(), DeliveryError> {
        let started = Instant::now();
        let result = self.send(message).await;
        let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match &result {
            Ok(()) => tracing::info!(
                channel = "email",
                host = %self.host,
                recipients = self.to.len(),
                elapsed_ms,
                success = true,
                "digest sent"
            ),
            Err(error) => tracing::warn!(
                channel = "email",
                host = %self.host,
                recipients = self.to.len(),
                elapsed_ms,
                success = false,
                retryable = error.retryable,
                error = %error.message,
                "digest not sent"
            ),
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipients_split_on_commas_outside_quotes() {
        assert_eq!(
            EmailSettings::parse_recipients(" a@example.org, \"Doe, Jo\" <jo@example.org>,, ").ok(),
            Some(vec!["a@example.org".to_owned(), "\"Doe, Jo\" <jo@example.org>".to_owned()])
        );
        assert_eq!(EmailSettings::parse_recipients(" , "), Err(EmailSetupError::NoRecipients));
        assert!(matches!(
            EmailSettings::parse_recipients("a@example.org, nope"),
            Err(EmailSetupError::Recipient { address, .. }) if address == "nope"
        ));
    }

    #[test]
    fn settings_debug_hides_the_password() {
        let settings = EmailSettings {
            smtp_url: "smtps://me%40example.org:s3cr%2Ft@mail.example.org:465".into(),
            from: "kb@example.org".into(),
            to: vec!["me@example.org".into()],
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains("s3cr"), "{shown}");
        assert!(shown.contains("mail.example.org"), "{shown}");
        let channel = EmailChannel::new(&settings).map(|channel| format!("{channel:?}"));
        assert!(channel.as_ref().is_ok_and(|shown| !shown.contains("s3cr")), "{channel:?}");
    }
}
