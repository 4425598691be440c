//! kb reaching out: the settings of its schedules, nudges and delivery channels
//! ([`OutreachConfig`]), and the [`Outbox`] an [`crate::Assistant`] runs them
//! with — writing a digest with the nudges of the moment, keeping it, sending it to every
//! channel with retries (each attempt recorded), and running the schedules that are due.
//!
//! Deliveries are kept in the store from the digest's own transaction until they went
//! through or were given up, and driven from there: a process that stops mid-way (a crash,
//! a kill, a restart) leaves them for the next `kb serve` to resume ([`Outbox::resume`]),
//! with the attempts already made counted. Every attempt of one delivery sends the same
//! stable id, so a receiver can drop a repeat.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kb_delivery::email::{EmailChannel, EmailSettings};
/// One nudge in kb's JSON, the same in a webhook's body and in the HTTP API's answers.
pub use kb_delivery::webhook::NudgeJson;
use kb_delivery::webhook::{WebhookChannel, WebhookFormat, WebhookSettings, WebhookSetupError};
use kb_domain::StoreError;
use kb_domain::delivery::{DeliveryChannel, DigestMessage};
use kb_domain::nudges::NudgeSettings;
use kb_domain::outreach::{
    DeliveryHold, DeliveryRecord, NewDigest, Outgoing, OutreachStore, PendingDelivery, TakenDelivery,
};
use kb_domain::schedule::{Schedule, ScheduleKind};
use kb_domain::sync::lock;

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
#[derive(Debug, Clone, PartialEq)]
pub struct NextRun {
    /// `daily` or `weekly`.
    pub schedule: &'static str,
    /// When, in UTC.
    pub at: DateTime<Utc>,
}

/// A digest written and kept: its id, the message channels are sent, and its deliveries.
#[derive(Debug)]
pub struct SentDigest {
    /// Its id in the store.
    pub id: i64,
    /// What was sent.
    pub message: DigestMessage,
    /// The delivery kept for each channel.
    pub deliveries: Vec<Outgoing>,
}

/// What an attempt interrupted by the end of its process is recorded with.
const INTERRUPTED: &str = "kb stopped before this attempt ended (whether it arrived is not known)";

/// How often a process waiting for a delivery another process is sending looks again.
const BUSY_POLL: Duration = Duration::from_secs(1);

/// The outbox of one kb process: the digests it keeps, the channels it sends them to and
/// the schedules that write them.
pub struct Outbox {
    store: Arc<dyn OutreachStore>,
    config: OutreachConfig,
    zone: Option<Tz>,
    courier: Courier,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox")
            .field("channels", &self.channel_names())
            .field("config", &self.config)
            .finish()
    }
}

impl Outbox {
    /// The outreach over `store`, sending to `channels`, with schedules in `zone` (the
    /// machine's when `None`).
    pub fn new(
        store: Arc<dyn OutreachStore>,
        channels: Vec<Arc<dyn DeliveryChannel>>,
        config: OutreachConfig,
        zone: Option<Tz>,
    ) -> Outbox {
        let courier = Courier {
            store: Arc::clone(&store),
            channels: Arc::new(channels),
            policy: config.retry,
            driving: Arc::default(),
        };
        Outbox { store, config, zone, courier }
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
        self.courier.channels.iter().map(|c| c.name().to_string()).collect()
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

    /// The schedules due at `now`, each with its slot: each schedule's latest slot at or
    /// before `now`, when no kb process took it yet. Nothing is taken here: the slot is
    /// taken with its digest ([`Outbox::keep`]), so a digest that cannot be written
    /// leaves its slot to the next check. A schedule seen for the first time only notes
    /// its latest slot (nothing was missed before kb knew of it). A slot missed while kb
    /// was down is the latest one at the next start: it runs once.
    pub async fn due(&self, now: DateTime<Utc>) -> Result<Vec<(ScheduleKind, DateTime<Utc>)>, StoreError> {
        let mut due = Vec::new();
        for schedule in self.config.schedules() {
            let name = schedule.kind.as_str();
            let Some(slot) = self.latest_slot(&schedule, now) else { continue };
            match self.store.last_run(name).await? {
                None => {
                    if self.store.note_slot(name, slot).await? {
                        tracing::info!(
                            schedule = name,
                            %slot,
                            "schedule noted: it runs from its next time on"
                        );
                    }
                }
                Some((last, _)) if slot > last => due.push((schedule.kind, slot)),
                Some(_) => {}
            }
        }
        Ok(due)
    }

    /// Keeps `digest` and a delivery to each channel, in one transaction; for a scheduled
    /// one (`slot`), its slot is taken in that transaction too: `None` when another kb
    /// process took it. Answers what to send.
    pub async fn keep(
        &self,
        digest: NewDigest,
        slot: Option<DateTime<Utc>>,
    ) -> Result<Option<SentDigest>, StoreError> {
        let names = self.channel_names();
        let channels: Vec<&str> = names.iter().map(String::as_str).collect();
        let slot = slot.map(|slot| (digest.kind.as_str(), slot));
        let Some(kept) = self.store.keep_digest(&digest, slot, &channels).await? else { return Ok(None) };
        let message = DigestMessage {
            id: None,
            kind: digest.kind,
            title: digest.title,
            markdown: digest.markdown,
            nudges: digest.nudges,
        };
        Ok(Some(SentDigest { id: kept.id, message, deliveries: kept.deliveries }))
    }

    /// Sends a kept digest to every channel, each with its retries, every attempt
    /// recorded; returns when every channel delivered or gave up (or, when the store
    /// fails, when the delivery was left for a later [`Outbox::resume`]). Never fails:
    /// failures are records.
    pub async fn deliver(&self, digest: &SentDigest) {
        let mut sends = tokio::task::JoinSet::new();
        for outgoing in &digest.deliveries {
            sends.spawn(self.courier.clone().drive(outgoing.id));
        }
        while sends.join_next().await.is_some() {}
    }

    /// Resumes, in the background, every delivery neither delivered nor given up that
    /// this process is not driving yet: those a stopped process left, and those waiting
    /// for their next attempt. Answers how many it took up.
    pub async fn resume(&self) -> Result<usize, StoreError> {
        let unfinished = self.store.unfinished_deliveries().await?;
        let mut resumed = 0;
        for id in unfinished {
            if !lock(&self.courier.driving).contains(&id) {
                tokio::spawn(self.courier.clone().drive(id));
                resumed += 1;
            }
        }
        if resumed > 0 {
            tracing::info!(deliveries = resumed, "resuming the deliveries left unfinished");
        }
        Ok(resumed)
    }
}

/// What drives deliveries: the store they are kept in, the channels, the retry policy,
/// and the deliveries a task of this process is driving already.
#[derive(Clone)]
struct Courier {
    store: Arc<dyn OutreachStore>,
    channels: Arc<Vec<Arc<dyn DeliveryChannel>>>,
    policy: RetryPolicy,
    driving: Arc<Mutex<HashSet<i64>>>,
}

/// One delivery driven by a task of this process: taken out of the set when it ends.
struct Driving {
    driving: Arc<Mutex<HashSet<i64>>>,
    id: i64,
}

impl Drop for Driving {
    fn drop(&mut self) {
        lock(&self.driving).remove(&self.id);
    }
}

impl Courier {
    /// Drives delivery `id` until it went through or was given up: waits while another
    /// process sends it or until its next attempt is due, then tries it. Stops early when
    /// its channel is no longer configured or the store fails (it stays kept for a later
    /// [`Outbox::resume`]), and at once when a task of this process drives it already.
    async fn drive(self, id: i64) {
        if !lock(&self.driving).insert(id) {
            return;
        }
        let _driving = Driving { driving: Arc::clone(&self.driving), id };
        let mut logged_busy = false;
        loop {
            let now = Utc::now();
            match self.store.take_delivery(id, now).await {
                Err(error) => {
                    tracing::warn!(%error, delivery = id, "could not take a delivery: left for later");
                    return;
                }
                Ok(TakenDelivery::Finished) => return,
                Ok(TakenDelivery::Busy) => {
                    if !logged_busy {
                        tracing::info!(delivery = id, "another kb process is sending this delivery: waiting");
                        logged_busy = true;
                    }
                    tokio::time::sleep(BUSY_POLL).await;
                }
                Ok(TakenDelivery::Later(at)) => {
                    tokio::time::sleep((at - now).to_std().unwrap_or_default()).await;
                }
                Ok(TakenDelivery::Due(pending, hold)) => {
                    let Some(channel) = self.channels.iter().find(|c| c.name() == pending.channel) else {
                        // Kept for when the channel is configured again; logged at debug
                        // level, as every schedule check comes here.
                        tracing::debug!(
                            delivery = id,
                            channel = %pending.channel,
                            "a delivery waits for a channel no longer configured"
                        );
                        return;
                    };
                    if !self.attempt(Arc::clone(channel), pending, hold).await {
                        return;
                    }
                }
            }
        }
    }

    /// Makes one attempt of a held delivery (recording first an attempt its last holder
    /// left unfinished), and lets go of it. Answers whether another attempt is due later.
    async fn attempt(
        &self,
        channel: Arc<dyn DeliveryChannel>,
        pending: PendingDelivery,
        hold: DeliveryHold,
    ) -> bool {
        pause_for_tests().await;
        let max = self.policy.attempts.max(1);
        if pending.interrupted && !self.record_cut_short(&pending, &hold).await {
            return false;
        }
        let attempt = pending.attempts.saturating_add(1);
        if let Err(error) = self.store.begin_attempt(&hold, attempt).await {
            tracing::warn!(
                %error,
                delivery = pending.id,
                "could not record a delivery attempt: left for later"
            );
            return false;
        }
        let outcome = channel.deliver(&pending.message).await;
        let will_retry = matches!(&outcome, Err(e) if e.retryable) && attempt < max;
        let at = Utc::now();
        let record = DeliveryRecord {
            digest_id: pending.digest_id,
            channel: pending.channel.clone(),
            attempt,
            delivered: outcome.is_ok(),
            error: outcome.as_ref().err().map(|e| e.message.clone()),
            will_retry,
            at,
        };
        match &outcome {
            Ok(()) => {
                tracing::info!(
                    channel = channel.name(),
                    digest = pending.digest_id,
                    attempt,
                    "digest delivered"
                )
            }
            Err(error) => tracing::warn!(
                channel = channel.name(),
                digest = pending.digest_id,
                attempt,
                will_retry,
                error = %error,
                "digest not delivered"
            ),
        }
        let wait =
            chrono::Duration::from_std(self.policy.wait_after(attempt)).unwrap_or(chrono::Duration::MAX);
        let next = will_retry.then(|| at.checked_add_signed(wait).unwrap_or(at));
        self.end(&hold, &record, next).await && will_retry
    }

    /// Records the attempt the delivery's last holder began and never ended (its process
    /// stopped), due again at once when attempts are left. Answers whether one is.
    async fn record_cut_short(&self, pending: &PendingDelivery, hold: &DeliveryHold) -> bool {
        let will_retry = pending.attempts < self.policy.attempts.max(1);
        let record = DeliveryRecord {
            digest_id: pending.digest_id,
            channel: pending.channel.clone(),
            attempt: pending.attempts,
            delivered: false,
            error: Some(INTERRUPTED.to_string()),
            will_retry,
            at: Utc::now(),
        };
        tracing::warn!(
            channel = %pending.channel,
            digest = pending.digest_id,
            attempt = pending.attempts,
            will_retry,
            "a delivery attempt was cut short by the end of its process"
        );
        self.end(hold, &record, will_retry.then(Utc::now)).await && will_retry
    }

    /// Records how an attempt went (and what comes next); `false` when the store failed.
    async fn end(&self, hold: &DeliveryHold, record: &DeliveryRecord, next: Option<DateTime<Utc>>) -> bool {
        match self.store.end_attempt(hold, record, next).await {
            Ok(()) => true,
            Err(error) => {
                // The attempt stays begun: whoever takes the delivery next records it as
                // cut short and tries again.
                tracing::warn!(%error, delivery = hold.id(), "could not record a delivery attempt");
                false
            }
        }
    }
}

/// A hook for tests, in debug builds only (release builds never read it): with
/// `KB_TEST_DELIVERY_PAUSE_MS` set, a process waits that many milliseconds after it takes
/// a delivery, before it does anything with it, so that a test can kill it between a
/// slot's claim and its send, or have another process find the delivery held.
async fn pause_for_tests() {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("KB_TEST_DELIVERY_PAUSE_MS").ok().and_then(|ms| ms.parse::<u64>().ok()) {
        tracing::info!(ms, "pausing before a delivery (KB_TEST_DELIVERY_PAUSE_MS, debug builds only)");
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

/// Why a plain mail ([`send_plain`]) was not sent.
#[derive(Debug, thiserror::Error)]
pub enum PlainMailError {
    /// The SMTP settings or the address cannot be used.
    #[error("the mail cannot be sent: {0}")]
    Setup(#[from] kb_delivery::email::EmailSetupError),
    /// The SMTP server refused it or could not be reached.
    #[error(transparent)]
    Delivery(#[from] kb_domain::delivery::DeliveryError),
}

/// Sends one plain-text mail, `subject` and `text`, to the one address `to` through the
/// SMTP server of `email` (a sign-in link), marked as sent by a program.
pub async fn send_plain(
    email: &EmailConfig,
    to: &str,
    subject: &str,
    text: &str,
) -> Result<(), PlainMailError> {
    let settings = EmailSettings {
        smtp_url: email.smtp_url.clone(),
        from: email.from.clone(),
        to: EmailSettings::parse_recipients(to)?,
    };
    let channel = EmailChannel::new(&settings)?;
    channel.notice(subject, text).await?;
    Ok(())
}
