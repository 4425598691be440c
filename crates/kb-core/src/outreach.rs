//! kb reaching out: the settings of its schedules, nudges and delivery channels
//! ([`OutreachConfig`]), and the [`Outreach`] service an [`crate::Assistant`] runs them
//! with — writing a digest with the nudges of the moment, keeping it, sending it to every
//! channel with retries (each attempt recorded), and running the schedules that are due.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kb_delivery::email::{EmailChannel, EmailSettings};
use kb_delivery::webhook::{WebhookChannel, WebhookFormat, WebhookSettings, WebhookSetupError};
use kb_domain::StoreError;
use kb_domain::delivery::{DeliveryChannel, DigestMessage};
use kb_domain::nudges::{Nudge, NudgeSettings};
use kb_domain::outreach::{DeliveryRecord, DigestTrigger, NewDigest, OutreachStore};
use kb_domain::schedule::{Schedule, ScheduleKind};
use serde::Serialize;

/// Email delivery settings, as given (`KB_SMTP_URL`, `KB_EMAIL_FROM`, `KB_EMAIL_TO`).
#[derive(Clone, PartialEq, Eq)]
pub struct EmailConfig {
    /// `smtps://user:pass@host:465`, `smtp://user:pass@host:587?tls=required`, …
    pub smtp_url: String,
    /// The sender address.
    pub from: String,
    /// The recipients, comma-separated.
    pub to: String,
}

impl std::fmt::Debug for EmailConfig {
    // The URL may hold a password: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmailConfig").field("from", &self.from).field("to", &self.to).finish_non_exhaustive()
    }
}

/// Webhook delivery settings (`KB_WEBHOOK_URL`, `KB_WEBHOOK_FORMAT`).
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookConfig {
    /// Where to POST.
    pub url: String,
    /// `json` (default), `ntfy` or `slack`.
    pub format: String,
}

impl std::fmt::Debug for WebhookConfig {
    // A webhook URL is often a secret (Slack's are): never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookConfig").field("format", &self.format).finish_non_exhaustive()
    }
}

/// How a failed delivery is tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all (5).
    pub attempts: u32,
    /// The wait after the first failure, doubled after each (30 s; `KB_DELIVERY_BACKOFF_MS`).
    pub first_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy { attempts: 5, first_wait: Duration::from_secs(30) }
    }
}

impl RetryPolicy {
    /// The wait before attempt `attempt + 1`.
    pub fn wait_after(&self, attempt: u32) -> Duration {
        self.first_wait.saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)))
    }
}

/// What kb does on its own, and where it sends it.
#[derive(Debug, Clone, PartialEq)]
pub struct OutreachConfig {
    /// The daily digest (`KB_DAILY_DIGEST_AT`, 07:00; `off`).
    pub daily: Option<Schedule>,
    /// The weekly review (`KB_WEEKLY_REVIEW_AT`, sunday 16:00; `off`).
    pub weekly: Option<Schedule>,
    /// The nudge rules' thresholds (`KB_STALE_DAYS`, 14).
    pub nudges: NudgeSettings,
    /// Email, when configured.
    pub email: Option<EmailConfig>,
    /// A webhook, when configured.
    pub webhook: Option<WebhookConfig>,
    /// Retries of failed deliveries.
    pub retry: RetryPolicy,
}

impl Default for OutreachConfig {
    fn default() -> OutreachConfig {
        OutreachConfig {
            daily: Schedule::daily("KB_DAILY_DIGEST_AT", "07:00").ok().flatten(),
            weekly: Schedule::weekly("KB_WEEKLY_REVIEW_AT", "sunday 16:00").ok().flatten(),
            nudges: NudgeSettings::default(),
            email: None,
            webhook: None,
            retry: RetryPolicy::default(),
        }
    }
}

impl OutreachConfig {
    /// The schedules that are on.
    pub fn schedules(&self) -> Vec<Schedule> {
        self.daily.into_iter().chain(self.weekly).collect()
    }
}

/// The delivery channels of `config` (kb-delivery's email and webhook adapters), each
/// checked now: a bad address or URL stops kb at start with a clear error, not at 07:00.
pub fn channels(config: &OutreachConfig) -> Result<Vec<Arc<dyn DeliveryChannel>>, crate::CoreError> {
    let invalid = |name: &'static str, problem: String| {
        crate::CoreError::Config(crate::ConfigError::Setting { name, problem })
    };
    let mut channels: Vec<Arc<dyn DeliveryChannel>> = Vec::new();
    if let Some(email) = &config.email {
        let to =
            EmailSettings::parse_recipients(&email.to).map_err(|e| invalid("KB_EMAIL_TO", e.to_string()))?;
        let settings = EmailSettings { smtp_url: email.smtp_url.clone(), from: email.from.clone(), to };
        let channel = EmailChannel::new(&settings).map_err(|e| invalid("KB_SMTP_URL", e.to_string()))?;
        channels.push(Arc::new(channel));
    }
    if let Some(webhook) = &config.webhook {
        let format: WebhookFormat = webhook
            .format
            .parse()
            .map_err(|e: WebhookSetupError| invalid("KB_WEBHOOK_FORMAT", e.to_string()))?;
        let settings = WebhookSettings { url: webhook.url.clone(), format };
        let channel = WebhookChannel::new(&settings).map_err(|e| invalid("KB_WEBHOOK_URL", e.to_string()))?;
        channels.push(Arc::new(channel));
    }
    Ok(channels)
}

/// A schedule's next run, for `/healthz`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NextRun {
    /// `daily` or `weekly`.
    pub schedule: &'static str,
    /// When, in UTC.
    pub at: DateTime<Utc>,
}

/// A digest written and kept: its id, and the message channels are sent.
#[derive(Debug)]
pub struct SentDigest {
    /// Its id in the store.
    pub id: i64,
    /// What was sent.
    pub message: DigestMessage,
}

/// The outreach of one kb process.
pub struct Outreach {
    store: Arc<dyn OutreachStore>,
    channels: Vec<Arc<dyn DeliveryChannel>>,
    config: OutreachConfig,
    zone: Option<Tz>,
}

impl std::fmt::Debug for Outreach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let channels: Vec<&str> = self.channels.iter().map(|c| c.name()).collect();
        f.debug_struct("Outreach").field("channels", &channels).field("config", &self.config).finish()
    }
}

impl Outreach {
    /// The outreach over `store`, sending to `channels`, with schedules in `zone` (the
    /// machine's when `None`).
    pub fn new(
        store: Arc<dyn OutreachStore>,
        channels: Vec<Arc<dyn DeliveryChannel>>,
        config: OutreachConfig,
        zone: Option<Tz>,
    ) -> Outreach {
        Outreach { store, channels, config, zone }
    }

    /// The settings.
    pub fn config(&self) -> &OutreachConfig {
        &self.config
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn OutreachStore> {
        &self.store
    }

    /// The names of the channels digests go to.
    pub fn channel_names(&self) -> Vec<String> {
        self.channels.iter().map(|c| c.name().to_string()).collect()
    }

    fn latest_slot(&self, schedule: &Schedule, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self.zone {
            Some(zone) => schedule.latest_slot(now, &zone),
            None => schedule.latest_slot(now, &chrono::Local),
        }
    }

    fn next_slot(&self, schedule: &Schedule, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self.zone {
            Some(zone) => schedule.next_slot(now, &zone),
            None => schedule.next_slot(now, &chrono::Local),
        }
    }

    /// The next run of each schedule that is on.
    pub fn next_runs(&self, now: DateTime<Utc>) -> Vec<NextRun> {
        self.config
            .schedules()
            .iter()
            .filter_map(|s| self.next_slot(s, now).map(|at| NextRun { schedule: s.kind.as_str(), at }))
            .collect()
    }

    /// The schedules due at `now` that this process won: each schedule's latest slot at or
    /// before `now`, when no kb process took it yet. A schedule seen for the first time
    /// only notes its latest slot (nothing was missed before kb knew of it). A slot missed
    /// while kb was down is the latest one at the next start: it runs once.
    pub async fn claim_due(&self, now: DateTime<Utc>) -> Result<Vec<ScheduleKind>, StoreError> {
        let mut due = Vec::new();
        for schedule in self.config.schedules() {
            let name = schedule.kind.as_str();
            let Some(slot) = self.latest_slot(&schedule, now) else { continue };
            match self.store.last_run(name).await? {
                None => {
                    self.store.claim_run(name, slot, false).await?;
                }
                Some((last, _)) if slot > last => {
                    if self.store.claim_run(name, slot, true).await? {
                        tracing::info!(schedule = name, %slot, "a scheduled digest is due");
                        due.push(schedule.kind);
                    }
                }
                Some(_) => {}
            }
        }
        Ok(due)
    }

    /// Keeps a digest and answers what to send.
    pub async fn keep(
        &self,
        kind: &str,
        title: String,
        markdown: String,
        nudges: Vec<Nudge>,
        trigger: DigestTrigger,
        now: DateTime<Utc>,
    ) -> Result<SentDigest, StoreError> {
        let digest = NewDigest { kind: kind.to_string(), title, markdown, nudges, trigger, created_at: now };
        let id = self.store.save_digest(&digest).await?;
        let message = DigestMessage {
            kind: digest.kind,
            title: digest.title,
            markdown: digest.markdown,
            nudges: digest.nudges,
        };
        Ok(SentDigest { id, message })
    }

    /// Sends a kept digest to every channel, each with its retries, every attempt
    /// recorded; returns when every channel delivered or gave up. Never fails: failures
    /// are records.
    pub async fn deliver(&self, digest: &SentDigest) {
        let mut sends = tokio::task::JoinSet::new();
        for channel in &self.channels {
            let send = deliver_to(
                Arc::clone(&self.store),
                Arc::clone(channel),
                digest.id,
                digest.message.clone(),
                self.config.retry,
            );
            sends.spawn(send);
        }
        while sends.join_next().await.is_some() {}
    }
}

/// Sends one digest to one channel with `policy`'s retries, recording every attempt.
async fn deliver_to(
    store: Arc<dyn OutreachStore>,
    channel: Arc<dyn DeliveryChannel>,
    digest_id: i64,
    message: DigestMessage,
    policy: RetryPolicy,
) {
    for attempt in 1..=policy.attempts.max(1) {
        let outcome = channel.deliver(&message).await;
        let will_retry = matches!(&outcome, Err(e) if e.retryable) && attempt < policy.attempts;
        let record = DeliveryRecord {
            digest_id,
            channel: channel.name().to_string(),
            attempt,
            delivered: outcome.is_ok(),
            error: outcome.as_ref().err().map(|e| e.message.clone()),
            will_retry,
            at: Utc::now(),
        };
        match &outcome {
            Ok(()) => {
                tracing::info!(channel = channel.name(), digest = digest_id, attempt, "digest delivered")
            }
            Err(error) => tracing::warn!(
                channel = channel.name(),
                digest = digest_id,
                attempt,
                will_retry,
                error = %error,
                "digest not delivered"
            ),
        }
        if let Err(error) = store.record_delivery(&record).await {
            tracing::warn!(%error, "could not record a delivery");
        }
        if !will_retry {
            return;
        }
        tokio::time::sleep(policy.wait_after(attempt)).await;
    }
}
