//! Sending a digest out of kb: the [`DigestMessage`] every channel gets, and the
//! [`DeliveryChannel`] port that email and webhook adapters implement.

use crate::nudges::Nudge;

/// A digest as channels send it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigestMessage {
    /// The delivery's stable id (`kb.{ulid}.{channel}`): the same on every attempt to send
    /// this digest to this channel, before and after a restart, so that a receiver can drop
    /// a repeat. Email sends it as the `Message-ID`, a webhook as `Idempotency-Key` (and
    /// `id` in kb's JSON). `None` for a message kb keeps no delivery of (a fresh id then).
    pub id: Option<String>,
    /// `daily` or `weekly`.
    pub kind: String,
    /// A subject line: "kb daily digest — 2026-11-23".
    pub title: String,
    /// The digest, as markdown.
    pub markdown: String,
    /// The nudges of the moment.
    pub nudges: Vec<Nudge>,
}

/// Why a delivery failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DeliveryError {
    /// Whether trying again may help (a server down or busy) or not (an address refused,
    /// a settings mistake).
    pub retryable: bool,
    /// What went wrong, for the record and the log (never a secret).
    pub message: String,
}

impl DeliveryError {
    /// A failure worth trying again.
    pub fn retry(message: impl Into<String>) -> DeliveryError {
        DeliveryError { retryable: true, message: message.into() }
    }

    /// A failure that trying again will not fix.
    pub fn permanent(message: impl Into<String>) -> DeliveryError {
        DeliveryError { retryable: false, message: message.into() }
    }
}

/// Somewhere a digest is sent: an email address, a webhook.
#[async_trait::async_trait]
pub trait DeliveryChannel: Send + Sync {
    /// Its name in the record and in `/healthz`: `email`, `webhook`.
    fn name(&self) -> &str;
    /// Sends one digest, once (retries are the caller's).
    async fn deliver(&self, message: &DigestMessage) -> Result<(), DeliveryError>;
}
