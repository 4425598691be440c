//! What kb keeps about reaching out: which scheduled runs happened (so a missed one runs
//! once, and only one kb process runs each), the digests it wrote, the deliveries still
//! to make (so the next kb process resumes them after a crash or a restart), how each
//! attempt went, and the nudges a person snoozed. The [`OutreachStore`] port; kb-storage
//! keeps it in SQLite beside the conversations.

use chrono::{DateTime, Utc};

use crate::delivery::DigestMessage;
use crate::nudges::{Nudge, Snoozes};
use crate::ports::StoreError;

/// Why a digest was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
#[derive(Debug, Clone, PartialEq)]
pub struct StoredDigest {
    /// Its id.
    pub id: i64,
    /// `daily` or `weekly`.
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
#[derive(Debug, Clone, PartialEq, Eq)]
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
    pub error: Option<String>,
    /// Whether kb tries again later.
    pub will_retry: bool,
    /// When.
    pub at: DateTime<Utc>,
}

/// A digest kept, with the delivery waiting for each channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptDigest {
    /// Its id.
    pub id: i64,
    /// One delivery per channel, in the order the channels were given.
    pub deliveries: Vec<Outgoing>,
}

/// A delivery kb keeps until it went through or was given up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// Its id in the store.
    pub id: i64,
    /// `email` or `webhook`.
    pub channel: String,
    /// Its stable id, sent with every attempt (see [`DigestMessage::id`]).
    pub key: String,
}

/// A delivery due to be tried, as [`OutreachStore::take_delivery`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDelivery {
    /// Its id in the store.
    pub id: i64,
    /// The digest.
    pub digest_id: i64,
    /// `email` or `webhook`.
    pub channel: String,
    /// The attempts begun so far.
    pub attempts: u32,
    /// Whether the last attempt begun never ended: the kb process making it stopped
    /// (a crash, a kill) before it could record how it went.
    pub interrupted: bool,
    /// What to send, its [`DigestMessage::id`] set to the delivery's stable id.
    pub message: DigestMessage,
}

/// What keeps every other kb process (and every other task of this one) off a delivery
/// while this one tries it. Dropping it lets them on again; a process that dies lets go
/// of it with its last breath (the operating system releases its locks).
pub struct DeliveryHold {
    id: i64,
    _guard: Box<dyn Send + Sync>,
}

impl DeliveryHold {
    /// The hold of delivery `id`, kept as long as `guard` lives.
    pub fn new(id: i64, guard: impl Send + Sync + 'static) -> DeliveryHold {
        DeliveryHold { id, _guard: Box::new(guard) }
    }

    /// The delivery held.
    pub fn id(&self) -> i64 {
        self.id
    }
}

impl std::fmt::Debug for DeliveryHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeliveryHold").field("id", &self.id).finish_non_exhaustive()
    }
}

/// What [`OutreachStore::take_delivery`] found.
#[derive(Debug)]
pub enum TakenDelivery {
    /// Due now, and held by the caller until the hold is dropped.
    Due(PendingDelivery, DeliveryHold),
    /// Waiting after a failure: the next attempt is due then.
    Later(DateTime<Utc>),
    /// Another kb process (or task) is trying it right now.
    Busy,
    /// Delivered or given up (or gone): nothing left to do.
    Finished,
}

/// Where kb keeps what it needs to reach out.
#[async_trait::async_trait]
pub trait OutreachStore: Send + Sync {
    /// Notes `slot` as the latest of `schedule` without running it (the first start of a
    /// schedule: nothing was missed before kb knew of it). `false` when it was taken.
    async fn note_slot(&self, schedule: &str, slot: DateTime<Utc>) -> Result<bool, StoreError>;
    /// The latest slot of `schedule` taken, and whether it ran (`false`: it was only
    /// noted, as the first start does).
    async fn last_run(&self, schedule: &str) -> Result<Option<(DateTime<Utc>, bool)>, StoreError>;
    /// Keeps `digest` and a delivery to each of `channels`, all in one transaction. With
    /// a `slot` (`(schedule, slot)`), the slot is taken in that same transaction: `None`
    /// when another kb process took it already (and nothing is kept), so each slot is
    /// taken and its digest kept exactly once, however many processes try.
    async fn keep_digest(
        &self,
        digest: &NewDigest,
        slot: Option<(&str, DateTime<Utc>)>,
        channels: &[&str],
    ) -> Result<Option<KeptDigest>, StoreError>;
    /// The deliveries neither delivered nor given up, oldest first.
    async fn unfinished_deliveries(&self) -> Result<Vec<i64>, StoreError>;
    /// Takes delivery `id` for one attempt when it is due at `now` and nobody else is
    /// trying it. Only the holder of the answer's hold may begin and end an attempt.
    async fn take_delivery(&self, id: i64, now: DateTime<Utc>) -> Result<TakenDelivery, StoreError>;
    /// Records that attempt `attempt` of the held delivery begins (until it ends, a
    /// process that takes the delivery finds it interrupted).
    async fn begin_attempt(&self, hold: &DeliveryHold, attempt: u32) -> Result<(), StoreError>;
    /// Records how an attempt of the held delivery went, in one transaction with what
    /// comes next: delivered, due again at `next`, or (no `next`) given up.
    async fn end_attempt(
        &self,
        hold: &DeliveryHold,
        record: &DeliveryRecord,
        next: Option<DateTime<Utc>>,
    ) -> Result<(), StoreError>;
    /// The latest digests, newest first, with their deliveries.
    async fn digests(&self, limit: usize) -> Result<Vec<StoredDigest>, StoreError>;
    /// The latest delivery attempt of all.
    async fn last_delivery(&self) -> Result<Option<DeliveryRecord>, StoreError>;
    /// Snoozes the nudge `key` until `until`.
    async fn snooze(&self, key: &str, until: DateTime<Utc>) -> Result<(), StoreError>;
    /// The snoozes that have not ended at `now`.
    async fn snoozes(&self, now: DateTime<Utc>) -> Result<Snoozes, StoreError>;
}
