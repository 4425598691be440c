//! [`Outreach`]: an [`Assistant`] reaching out — nudges (with snoozes and their actions),
//! digests written, kept and sent, and the schedules that send them on their own.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use kb_domain::StoreError;
use kb_domain::fields::{keys, statuses};
use kb_domain::nudges::{Nudge, NudgeRule, Snoozes, evaluate};
use kb_domain::outreach::{DeliveryRecord, DigestTrigger, NewDigest, StoredDigest};
use kb_domain::schedule::ScheduleKind;
use kb_tools::tools::update::{UpdateEntry, UpdateEntryArgs, UpdateEntryData};
use kb_tools::{CaptureSource, ErrorCode};
use serde_json::{Map, Value};

use super::{Assistant, in_vault};
use crate::error::ToolFailure;
use crate::outreach::{NextRun, SentDigest};

/// How often a process running the schedules looks at the clock, at most.
const SCHEDULE_CHECK: Duration = Duration::from_secs(30);

/// What `/healthz` says of kb reaching out (written as JSON by kb-server).
#[derive(Debug, Clone, PartialEq)]
pub struct OutreachStatus {
    /// The next run of each schedule that is on.
    pub next_runs: Vec<NextRun>,
    /// Where digests are sent (`email`, `webhook`).
    pub channels: Vec<String>,
    /// The latest delivery attempt, when there was one.
    pub last_delivery: Option<DeliveryRecord>,
}

fn store_failure(error: StoreError) -> ToolFailure {
    ToolFailure::new(ErrorCode::Internal, error.to_string())
}

/// Nudges, digests and delivery (see [`Assistant::outreach`]), with the changes a nudge's
/// action makes recorded as coming from one source ([`Outreach::by`]).
#[derive(Debug, Clone)]
pub struct Outreach<'a> {
    kb: &'a Assistant,
    source: CaptureSource,
    /// Who asks: their changes name them, and their role bounds what the tools may do.
    actor: kb_domain::Actor,
}

/// A snoozed nudge: its key, and when it shows again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snoozed {
    /// The nudge's key.
    pub key: String,
    /// When it shows again.
    pub until: DateTime<Utc>,
}

impl<'a> Outreach<'a> {
    pub(super) fn new(kb: &'a Assistant, source: CaptureSource) -> Outreach<'a> {
        Outreach { kb, source, actor: kb_domain::Actor::local() }
    }

    /// The same outreach, with the changes it makes recorded as asked from `source`.
    pub fn by(self, source: CaptureSource) -> Outreach<'a> {
        Outreach { source, ..self }
    }

    /// The same, asked by `actor`: the changes made name them, and a reader's changes are
    /// refused.
    pub fn as_actor(self, actor: &kb_domain::Actor) -> Outreach<'a> {
        Outreach { actor: actor.clone(), ..self }
    }

    /// The nudges of the moment, without the snoozed ones.
    pub async fn nudges(self) -> Result<Vec<Nudge>, ToolFailure> {
        let kb = self.kb;
        let now = kb.services.clock.now();
        let today = kb.services.clock.today();
        let settings = kb.outbox.config().nudges;
        let snoozes = own_snoozes(kb.outbox.store().snoozes(now).await.map_err(store_failure)?, &self.actor);
        let vault = Arc::clone(&kb.vault);
        let candidates = in_vault(move || {
            kb_domain::EntryCatalogue::nudge_candidates(vault.as_ref(), today, now, settings)
        })
        .await?;
        let mut nudges =
            evaluate(candidates.records.iter().map(AsRef::as_ref), today, now, settings, &snoozes);
        // Conflict copies first: a decision only the person can make, on a synced vault.
        if kb.sync.is_some() {
            let root = kb.vault.root().to_path_buf();
            let copies = tokio::task::spawn_blocking(move || kb_storage::sync::conflict_copies(&root))
                .await
                .unwrap_or_default();
            let conflicts = copies
                .iter()
                .map(|copy| Nudge::conflict(copy))
                .filter(|nudge| snoozes.get(&nudge.key).is_none_or(|until| *until <= now));
            nudges.splice(0..0, conflicts);
        }
        Ok(nudges)
    }

    /// Snoozes the nudge `key` for `days` days.
    pub async fn snooze(self, key: &str, days: u32) -> Result<Snoozed, ToolFailure> {
        if key.trim().is_empty() || !(1..=365).contains(&days) {
            return Err(ToolFailure::new(
                ErrorCode::InvalidArguments,
                "give the nudge's key and a number of days from 1 to 365",
            ));
        }
        let until = self.kb.services.clock.now() + chrono::Duration::days(i64::from(days));
        self.kb.outbox.store().snooze(&snooze_key(key, &self.actor), until).await.map_err(store_failure)?;
        Ok(Snoozed { key: key.to_string(), until })
    }

    /// Does what a nudge asks: an admin item or a stale project is marked done, a person's
    /// follow-ups are cleared and `last_touched` set to today. Inbox and quiet nudges have
    /// nothing to mark done (file the entry, or snooze them).
    pub async fn done(self, key: &str) -> Result<UpdateEntryData, ToolFailure> {
        let (rule, path) = key.split_once(':').unwrap_or((key, ""));
        let mut updates = Map::new();
        match rule {
            r if r == NudgeRule::AdminDue.as_str() || r == NudgeRule::StaleProject.as_str() => {
                updates.insert(keys::STATUS.to_string(), Value::from(statuses::DONE));
            }
            r if r == NudgeRule::FollowUp.as_str() => {
                updates.insert(keys::FOLLOW_UPS.to_string(), Value::Array(Vec::new()));
                let today = self.kb.services.clock.today().to_string();
                updates.insert(keys::LAST_TOUCHED.to_string(), Value::from(today));
            }
            r if r == NudgeRule::InboxWaiting.as_str() || r == NudgeRule::NoCapture.as_str() => {
                return Err(ToolFailure::new(
                    ErrorCode::InvalidArguments,
                    "this nudge has nothing to mark done: file the entry, or snooze the nudge",
                ));
            }
            r if r == NudgeRule::SyncConflict.as_str() => {
                return Err(ToolFailure::new(
                    ErrorCode::InvalidArguments,
                    "a conflict is resolved, not marked done: keep mine, theirs or both (`kb sync resolve`)",
                ));
            }
            _ => return Err(ToolFailure::new(ErrorCode::InvalidArguments, format!("not a nudge: {key:?}"))),
        }
        if !path.contains('/') {
            return Err(ToolFailure::new(
                ErrorCode::InvalidArguments,
                format!("not a nudge about an entry: {key:?}"),
            ));
        }
        let args = UpdateEntryArgs { path: path.to_string(), updates: Some(updates), body: None };
        self.kb.run_as::<UpdateEntry>(args, self.source, &self.actor).await
    }

    /// The `kind` digest (`daily`, `weekly`) with the nudges of the moment: its title,
    /// markdown and nudges.
    async fn compose_digest(self, kind: &str) -> Result<(String, String, Vec<Nudge>), ToolFailure> {
        let data = self.kb.entries().digest(kind).await?;
        let mut markdown = data.content.trim_end().to_string();
        let nudges = self.clone().nudges().await?;
        if !nudges.is_empty() {
            markdown.push_str("\n\n## Nudges\n");
            for nudge in &nudges {
                markdown.push_str(&format!("- {}\n", nudge.message));
            }
        }
        let today = self.kb.services.clock.today();
        let title = match kind {
            "weekly" => format!("kb weekly review — week of {today}"),
            _ => format!("kb daily digest — {today}"),
        };
        Ok((title, markdown, nudges))
    }

    /// Writes the `kind` digest (`daily`, `weekly`) with the nudges of the moment and
    /// keeps it, with a delivery to each channel; [`Outreach::deliver`] sends it.
    pub async fn write_digest(self, kind: &str, trigger: DigestTrigger) -> Result<SentDigest, ToolFailure> {
        let (title, markdown, nudges) = self.clone().compose_digest(kind).await?;
        let now = self.kb.services.clock.now();
        let digest = NewDigest { kind: kind.to_string(), title, markdown, nudges, trigger, created_at: now };
        let kept = self.kb.outbox.keep(digest, None).await;
        kept.map_err(store_failure)?
            .ok_or_else(|| ToolFailure::new(ErrorCode::Internal, "the digest was not kept"))
    }

    /// Writes the digest of a scheduled slot and keeps it, taking the slot in the same
    /// transaction: `None` when another kb process took the slot first.
    async fn write_scheduled(
        self,
        kind: ScheduleKind,
        slot: DateTime<Utc>,
    ) -> Result<Option<SentDigest>, ToolFailure> {
        let (title, markdown, nudges) = self.clone().compose_digest(kind.as_str()).await?;
        let now = self.kb.services.clock.now();
        let digest = NewDigest {
            kind: kind.as_str().to_string(),
            title,
            markdown,
            nudges,
            trigger: DigestTrigger::Schedule,
            created_at: now,
        };
        self.kb.outbox.keep(digest, Some(slot)).await.map_err(store_failure)
    }

    /// Sends a kept digest to every channel, retrying as configured; returns when each
    /// channel delivered or gave up (every attempt is recorded).
    pub async fn deliver(self, digest: &SentDigest) {
        self.kb.outbox.deliver(digest).await;
    }

    /// The latest digests kept, newest first, with their deliveries.
    pub async fn digests(self, limit: usize) -> Result<Vec<StoredDigest>, ToolFailure> {
        self.kb.outbox.store().digests(limit).await.map_err(store_failure)
    }

    /// Where digests are sent (`email`, `webhook`).
    pub fn delivery_channels(self) -> Vec<String> {
        self.kb.outbox.channel_names()
    }

    /// The schedules' next runs, the channels and the last delivery.
    pub async fn status(self) -> OutreachStatus {
        let last_delivery = match self.kb.outbox.store().last_delivery().await {
            Ok(last) => last,
            Err(error) => {
                tracing::warn!(%error, "could not read the last delivery");
                None
            }
        };
        OutreachStatus {
            next_runs: self.kb.outbox.next_runs(self.kb.services.clock.now()),
            channels: self.delivery_channels(),
            last_delivery,
        }
    }
}

impl Assistant {
    /// Runs the schedules due at `now` that this process wins (see
    /// [`crate::outreach::Outbox::due`]): writes each digest, keeping it in one
    /// transaction with its slot and its deliveries, and sends it in the background.
    /// A digest that cannot be written takes no slot: the next check tries it again.
    /// Answers the digests written.
    pub async fn run_schedules(self: &Arc<Self>, now: DateTime<Utc>) -> Result<Vec<i64>, ToolFailure> {
        let due = self.outbox.due(now).await.map_err(store_failure)?;
        let mut written = Vec::new();
        for (kind, slot) in due {
            match self.outreach().write_scheduled(kind, slot).await {
                Ok(Some(digest)) => {
                    tracing::info!(
                        schedule = kind.as_str(),
                        %slot,
                        digest = digest.id,
                        "scheduled digest written"
                    );
                    written.push(digest.id);
                    let kb = Arc::clone(self);
                    tokio::spawn(async move { kb.outreach().deliver(&digest).await });
                }
                Ok(None) => {
                    tracing::debug!(schedule = kind.as_str(), %slot, "another kb process took the slot")
                }
                Err(failure) => tracing::warn!(
                    schedule = kind.as_str(),
                    %slot,
                    error = %failure.message,
                    "could not write a scheduled digest: tried again at the next check"
                ),
            }
        }
        Ok(written)
    }

    /// Runs the schedules from now on, checking the clock every 30 seconds at most (and
    /// at each schedule's time), and at each check takes up the deliveries left
    /// unfinished (at the first check, right away: those a stopped process left); stops
    /// when the returned handle is aborted.
    /// With sync on, only the device `KB_OUTREACH_DEVICE` names runs them: elsewhere the
    /// task ends at once (health's notices say why).
    pub fn start_schedules(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        if let Some(why) = &self.outreach_held_back {
            tracing::info!("{why}");
            return tokio::spawn(async {});
        }
        let kb = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let Some(assistant) = kb.upgrade() else { return };
                let now = assistant.services.clock.now();
                if let Err(failure) = assistant.run_schedules(now).await {
                    tracing::warn!(error = %failure.message, "could not run the schedules");
                }
                if let Err(error) = assistant.outbox.resume().await {
                    tracing::warn!(%error, "could not look for unfinished deliveries");
                }
                let next = assistant.outbox.next_runs(now).iter().map(|run| run.at).min();
                drop(assistant);
                let until_next = next.and_then(|at| (at - now).to_std().ok()).unwrap_or(SCHEDULE_CHECK);
                tokio::time::sleep(until_next.min(SCHEDULE_CHECK).max(Duration::from_millis(200))).await;
            }
        })
    }
}

/// What separates a person's name from the nudge key in a snooze of theirs (no key or
/// name holds it).
const PERSON_SNOOZE: char = '\u{1f}';

/// The key `key`'s snooze is kept under for `actor`: each person snoozes for themselves.
fn snooze_key(key: &str, actor: &kb_domain::Actor) -> String {
    match actor.name() {
        Some(person) => format!("{person}{PERSON_SNOOZE}{key}"),
        None => key.to_string(),
    }
}

/// The snoozes of `actor` among `all`, by nudge key: a person's own, or the local owner's.
fn own_snoozes(all: Snoozes, actor: &kb_domain::Actor) -> Snoozes {
    all.into_iter()
        .filter_map(|(key, until)| match (actor.name(), key.split_once(PERSON_SNOOZE)) {
            (Some(person), Some((whose, key))) if whose == person => Some((key.to_string(), until)),
            (None, None) => Some((key, until)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use kb_domain::{Actor, PersonName, VaultRole};

    use super::*;

    #[test]
    fn each_person_sees_only_their_own_snoozes() {
        let ana = Actor::person(PersonName::parse("ana").unwrap(), VaultRole::Editor);
        let bo = Actor::person(PersonName::parse("bo").unwrap(), VaultRole::Reader);
        let local = Actor::local();
        let until = Utc::now();
        let key = "admin_due:admin/renew passport.md";
        let all: Snoozes = [snooze_key(key, &ana), snooze_key("stale:projects/x.md", &local)]
            .into_iter()
            .map(|k| (k, until))
            .collect();
        assert_eq!(own_snoozes(all.clone(), &ana).into_keys().collect::<Vec<_>>(), [key]);
        assert!(own_snoozes(all.clone(), &bo).is_empty());
        assert_eq!(own_snoozes(all, &local).into_keys().collect::<Vec<_>>(), ["stale:projects/x.md"]);
    }
}
