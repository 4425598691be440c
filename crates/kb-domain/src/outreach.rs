//! What kb keeps about reaching out: which scheduled runs happened (so a missed one runs
//! once, and only one kb process runs each), the digests it wrote, how each delivery
//! went, and the nudges a person snoozed. The [`OutreachStore`] port; kb-storage keeps it
//! in SQLite beside the conversations.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::nudges::{Nudge, Snoozes};
use crate::ports::StoreError;

/// Why a digest was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DigestTrigger {
    /// Its schedule came round.
    Schedule,
    /// Someone asked for it to be sent now (`kb digest --send`, the API).
    Manual,
}

impl DigestTrigger {
    /// `schedule` or `manual`.
    pub fn as_str(self) -> &'static str {
        match self {
            DigestTrigger::Schedule => "schedule",
            DigestTrigger::Manual => "manual",
        }
    }
}

/// A digest to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDigest {
    /// `daily` or `weekly`.
    pub kind: String,
    /// Its title.
    pub title: String,
    /// Its markdown.
    pub markdown: String,
    /// The nudges of the moment.
    pub nudges: Vec<Nudge>,
    /// Why it was written.
    pub trigger: DigestTrigger,
    /// When.
    pub created_at: DateTime<Utc>,
}

/// A digest kb wrote, with how its deliveries went.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredDigest {
    /// Its id.
    pub id: i64,
    /// `daily` or `weekly`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its title.
    pub title: String,
    /// Its markdown.
    pub markdown: String,
    /// The nudges of the moment (as JSON).
    pub nudges: serde_json::Value,
    /// `schedule` or `manual`.
    pub trigger: String,
    /// When it was written.
    pub created_at: DateTime<Utc>,
    /// Every delivery attempt, oldest first.
    pub deliveries: Vec<DeliveryRecord>,
}

/// One attempt to send a digest to one channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryRecord {
    /// The digest.
    pub digest_id: i64,
    /// `email` or `webhook`.
    pub channel: String,
    /// 1 for the first try.
    pub attempt: u32,
    /// Whether it went through.
    pub delivered: bool,
    /// Why not, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whether kb tries again later.
    pub will_retry: bool,
    /// When.
    pub at: DateTime<Utc>,
}

/// Where kb keeps what it needs to reach out.
#[async_trait::async_trait]
pub trait OutreachStore: Send + Sync {
    /// Takes the run of `schedule` due at `slot`: `true` for exactly one caller, however
    /// many kb processes ask; `false` when it was taken already.
    async fn claim_run(&self, schedule: &str, slot: DateTime<Utc>, ran: bool) -> Result<bool, StoreError>;
    /// The latest slot of `schedule` taken, and whether it ran (`false`: it was only
    /// noted, as the first start does).
    async fn last_run(&self, schedule: &str) -> Result<Option<(DateTime<Utc>, bool)>, StoreError>;
    /// Keeps a digest.
    async fn save_digest(&self, digest: &NewDigest) -> Result<i64, StoreError>;
    /// The latest digests, newest first, with their deliveries.
    async fn digests(&self, limit: usize) -> Result<Vec<StoredDigest>, StoreError>;
    /// Records one delivery attempt.
    async fn record_delivery(&self, record: &DeliveryRecord) -> Result<(), StoreError>;
    /// The latest delivery attempt of all.
    async fn last_delivery(&self) -> Result<Option<DeliveryRecord>, StoreError>;
    /// Snoozes the nudge `key` until `until`.
    async fn snooze(&self, key: &str, until: DateTime<Utc>) -> Result<(), StoreError>;
    /// The snoozes that have not ended at `now`.
    async fn snoozes(&self, now: DateTime<Utc>) -> Result<Snoozes, StoreError>;
}
