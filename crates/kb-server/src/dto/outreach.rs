//! The digests kept and how their deliveries went (`/api/digests`, `kb digests --json`,
//! `/healthz`), and the nudges of the moment (`/api/nudges`, `kb nudges --json`).

use chrono::{DateTime, Utc};
use kb_core::OutreachStatus;
use kb_core::domain::nudges::Nudge;
use kb_core::domain::outreach::{DeliveryRecord, StoredDigest};
use kb_core::outreach::{NextRun, NudgeJson};
use serde::Serialize;
use serde_json::Value;

/// `{nudges}`: the nudges of the moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NudgesJson<'a> {
    /// The nudges.
    pub nudges: Vec<NudgeJson<'a>>,
}

impl<'a> From<&'a [Nudge]> for NudgesJson<'a> {
    fn from(nudges: &'a [Nudge]) -> NudgesJson<'a> {
        NudgesJson { nudges: nudges.iter().map(NudgeJson::from).collect() }
    }
}

/// One attempt to send a digest to one channel.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryJson<'a> {
    /// The digest.
    pub digest_id: i64,
    /// `email` or `webhook`.
    pub channel: &'a str,
    /// 1 for the first try.
    pub attempt: u32,
    /// Whether it went through.
    pub delivered: bool,
    /// Why not, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
    /// Whether kb tries again later.
    pub will_retry: bool,
    /// When.
    pub at: DateTime<Utc>,
}

impl<'a> From<&'a DeliveryRecord> for DeliveryJson<'a> {
    fn from(record: &'a DeliveryRecord) -> DeliveryJson<'a> {
        DeliveryJson {
            digest_id: record.digest_id,
            channel: &record.channel,
            attempt: record.attempt,
            delivered: record.delivered,
            error: record.error.as_deref(),
            will_retry: record.will_retry,
            at: record.at,
        }
    }
}

/// A digest kb wrote, with how its deliveries went.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DigestJson<'a> {
    /// Its id.
    pub id: i64,
    /// `daily` or `weekly`.
    #[serde(rename = "type")]
    pub kind: &'a str,
    /// Its title.
    pub title: &'a str,
    /// Its markdown.
    pub markdown: &'a str,
    /// The nudges of the moment.
    pub nudges: &'a Value,
    /// `schedule` or `manual`.
    pub trigger: &'a str,
    /// When it was written.
    pub created_at: DateTime<Utc>,
    /// Every delivery attempt, oldest first.
    pub deliveries: Vec<DeliveryJson<'a>>,
}

impl<'a> From<&'a StoredDigest> for DigestJson<'a> {
    fn from(digest: &'a StoredDigest) -> DigestJson<'a> {
        DigestJson {
            id: digest.id,
            kind: &digest.kind,
            title: &digest.title,
            markdown: &digest.markdown,
            nudges: &digest.nudges,
            trigger: &digest.trigger,
            created_at: digest.created_at,
            deliveries: digest.deliveries.iter().map(DeliveryJson::from).collect(),
        }
    }
}

/// `{digests}`: the digests kept, newest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DigestsJson<'a> {
    /// The digests.
    pub digests: Vec<DigestJson<'a>>,
}

impl<'a> From<&'a [StoredDigest]> for DigestsJson<'a> {
    fn from(digests: &'a [StoredDigest]) -> DigestsJson<'a> {
        DigestsJson { digests: digests.iter().map(DigestJson::from).collect() }
    }
}

/// A schedule's next run: `{schedule, at}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NextRunJson {
    /// `daily` or `weekly`.
    pub schedule: &'static str,
    /// When, in UTC.
    pub at: DateTime<Utc>,
}

impl From<&NextRun> for NextRunJson {
    fn from(run: &NextRun) -> NextRunJson {
        NextRunJson { schedule: run.schedule, at: run.at }
    }
}

/// What `/healthz` says of kb reaching out.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutreachStatusJson<'a> {
    /// The next run of each schedule that is on.
    pub next_runs: Vec<NextRunJson>,
    /// Where digests are sent (`email`, `webhook`).
    pub channels: &'a [String],
    /// The latest delivery attempt, when there was one.
    pub last_delivery: Option<DeliveryJson<'a>>,
}

impl<'a> From<&'a OutreachStatus> for OutreachStatusJson<'a> {
    fn from(status: &'a OutreachStatus) -> OutreachStatusJson<'a> {
        OutreachStatusJson {
            next_runs: status.next_runs.iter().map(NextRunJson::from).collect(),
            channels: &status.channels,
            last_delivery: status.last_delivery.as_ref().map(DeliveryJson::from),
        }
    }
}
