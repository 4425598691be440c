//! The idempotency port: [`IdempotencyStore`] remembers, for a while, the answer given to a
//! request that carried an `Idempotency-Key`, so a repeat of it (a phone resending a
//! capture it queued offline) gets the first answer and changes nothing.
//!
//! A key is *claimed* before the request runs and *finished* with its answer after. The
//! claim is atomic across every process on one database: of two requests with one key
//! exactly one runs; the other sees the key in progress, or the first answer once it is
//! kept.

use chrono::{DateTime, Utc};

use super::conversations::StoreError;

/// The answer kept for a key: the HTTP status and the body sent the first time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptAnswer {
    /// The status code (200, 404, …).
    pub status: u16,
    /// The `Content-Type` sent with it.
    pub content_type: String,
    /// The body, as sent.
    pub body: Vec<u8>,
}

/// What claiming a key found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The key is new (or its last claim was abandoned): the caller runs the request and
    /// then finishes or releases the key.
    Claimed,
    /// A request with this key already ran: its answer.
    Answered(KeptAnswer),
    /// A request with this key is running now (here or in another process).
    InProgress,
    /// The key was used for another request (another method, path or body).
    Mismatch,
}

/// A key, the request it was claimed for, and when.
#[derive(Debug, Clone, Copy)]
pub struct KeyClaim<'a> {
    /// The client's `Idempotency-Key`.
    pub key: &'a str,
    /// What identifies the request (method, path and a hash of the body): a key sent
    /// again with another request is refused.
    pub fingerprint: &'a str,
    /// Now.
    pub at: DateTime<Utc>,
}

/// Where idempotency keys and their answers are kept.
#[async_trait::async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Claims `claim.key`, first forgetting keys claimed before `claim.at - keep_for`
    /// (and taking over a claim left unfinished for longer than `abandoned_after`, as its
    /// process died).
    async fn claim(
        &self,
        claim: KeyClaim<'_>,
        keep_for: chrono::Duration,
        abandoned_after: chrono::Duration,
    ) -> Result<Claim, StoreError>;
    /// Keeps `answer` for a key this caller claimed.
    async fn finish(&self, key: &str, answer: &KeptAnswer) -> Result<(), StoreError>;
    /// Lets go of a key this caller claimed without keeping an answer (the request failed
    /// in a way a retry may fix): the next request with it runs.
    async fn release(&self, key: &str) -> Result<(), StoreError>;
}
