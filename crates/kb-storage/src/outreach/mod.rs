//! [`SqliteOutreachStore`]: kb-domain's `OutreachStore` in the SQLite database kb already
//! keeps (`migrations/0005_outreach.sql`, `0007_outreach_outbox.sql`). Times are RFC 3339
//! text in UTC, to the microsecond, so they sort as they compare.
//!
//! A scheduled slot is taken, its digest kept and a delivery row written for each channel
//! in one transaction (`outbox`): nothing is lost between them, and a slot another process
//! took keeps nothing. A delivery is tried only by whoever holds its lock file
//! (`{database}.deliveries/{id}.lock`, see `DeliveryLocks`): two processes never try one
//! at the same time, and one that dies lets go of it at once.

mod delivery_locks;
mod nudge_record;

use std::path::Path;

use chrono::{DateTime, SecondsFormat, Utc};
use kb_domain::StoreError;
use kb_domain::delivery::DigestMessage;
use kb_domain::nudges::{Nudge, Snoozes};
use kb_domain::outreach::{
    DeliveryHold, DeliveryRecord, KeptDigest, NewDigest, Outgoing, OutreachStore, PendingDelivery,
    StoredDigest, TakenDelivery,
};
use sqlx::{Row, SqlitePool};

use self::delivery_locks::DeliveryLocks;
use crate::database;

/// A transaction that writes from its first statement: it waits for other writers at its
/// start, never half-way.
const WRITE_TRANSACTION: &str = "BEGIN IMMEDIATE";

/// The outreach records of one kb database.
#[derive(Debug, Clone)]
pub struct SqliteOutreachStore {
    pool: SqlitePool,
    /// Who may try which delivery.
    locks: DeliveryLocks,
    /// Checkpoints the database while this is open.
    _checkpoints: Option<crate::database::Checkpoints>,
}

impl SqliteOutreachStore {
    /// Opens the database at `url` (as the conversation store does).
    pub async fn connect(url: &str) -> Result<SqliteOutreachStore, StoreError> {
        Ok(SqliteOutreachStore::over(database::connect(url).await?))
    }

    /// Opens the default database of a kb folder.
    pub async fn open_in(kb_dir: &Path) -> Result<SqliteOutreachStore, StoreError> {
        Ok(SqliteOutreachStore::over(database::open_in(kb_dir).await?))
    }

    fn over(database: database::Database) -> SqliteOutreachStore {
        let locks = DeliveryLocks::beside(database.file.as_deref());
        SqliteOutreachStore { pool: database.pool, locks, _checkpoints: database.checkpoints }
    }

    /// Closes the connections.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

fn text(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

fn time(text: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| StoreError::database(format!("a stored time cannot be read ({text:?})"), e))
}

fn failed(error: sqlx::Error) -> StoreError {
    StoreError::database("the outreach store failed", error)
}

/// A count kept as an SQLite integer, as a `u32` (clamped).
fn count(value: i64) -> u32 {
    u32::try_from(value.max(0)).unwrap_or(u32::MAX)
}

fn delivery(row: &sqlx::sqlite::SqliteRow) -> Result<DeliveryRecord, StoreError> {
    Ok(DeliveryRecord {
        digest_id: row.try_get("digest_id").map_err(failed)?,
        channel: row.try_get("channel").map_err(failed)?,
        attempt: count(row.try_get("attempt").map_err(failed)?),
        delivered: row.try_get("delivered").map_err(failed)?,
        error: row.try_get("error").map_err(failed)?,
        will_retry: row.try_get("will_retry").map_err(failed)?,
        at: time(&row.try_get::<String, _>("at").map_err(failed)?)?,
    })
}

/// A delivery's stable id: `kb.{ulid}.{channel}` (lowercase, so it reads the same in a
/// `Message-ID` and a header).
fn delivery_key(channel: &str) -> String {
    format!("kb.{}.{channel}", ulid::Ulid::new().to_string().to_ascii_lowercase())
}

/// What a delivery row says it is, read under its hold.
struct OutboxRow {
    state: String,
    next_at: DateTime<Utc>,
    sending: bool,
    pending: PendingDelivery,
}

/// The delivery row `id` joined with its digest, when there is one.
async fn outbox_row(pool: &SqlitePool, id: i64) -> Result<Option<OutboxRow>, StoreError> {
    let row = sqlx::query(
        "SELECT o.digest_id, o.channel, o.delivery_key, o.state, o.attempts, o.sending, o.next_at, \
         d.kind, d.title, d.markdown, d.nudges FROM outbox o JOIN digests d ON d.id = o.digest_id \
         WHERE o.id = ?",
    )
    .bind(id)
    .fetch_optional(pool)
    .await
    .map_err(failed)?;
    let Some(row) = row else { return Ok(None) };
    let nudges: String = row.try_get("nudges").map_err(failed)?;
    let nudges: Vec<Nudge> = nudge_record::decode(&nudges).unwrap_or_else(|error| {
        tracing::warn!(%error, digest = id, "a kept digest's nudges cannot be read: sent without them");
        Vec::new()
    });
    let sending: bool = row.try_get("sending").map_err(failed)?;
    let message = DigestMessage {
        id: Some(row.try_get("delivery_key").map_err(failed)?),
        kind: row.try_get("kind").map_err(failed)?,
        title: row.try_get("title").map_err(failed)?,
        markdown: row.try_get("markdown").map_err(failed)?,
        nudges,
    };
    Ok(Some(OutboxRow {
        state: row.try_get("state").map_err(failed)?,
        next_at: time(&row.try_get::<String, _>("next_at").map_err(failed)?)?,
        sending,
        pending: PendingDelivery {
            id,
            digest_id: row.try_get("digest_id").map_err(failed)?,
            channel: row.try_get("channel").map_err(failed)?,
            attempts: count(row.try_get("attempts").map_err(failed)?),
            interrupted: sending,
            message,
        },
    }))
}

#[async_trait::async_trait]
impl OutreachStore for SqliteOutreachStore {
    async fn note_slot(&self, schedule: &str, slot: DateTime<Utc>) -> Result<bool, StoreError> {
        let inserted = sqlx::query(
            "INSERT INTO schedule_runs (schedule, slot, ran, claimed_at) VALUES (?, ?, 0, ?) \
             ON CONFLICT (schedule, slot) DO NOTHING",
        )
        .bind(schedule)
        .bind(text(slot))
        .bind(text(Utc::now()))
        .execute(&self.pool)
        .await
        .map_err(failed)?;
        Ok(inserted.rows_affected() == 1)
    }

    async fn last_run(&self, schedule: &str) -> Result<Option<(DateTime<Utc>, bool)>, StoreError> {
        let row =
            sqlx::query("SELECT slot, ran FROM schedule_runs WHERE schedule = ? ORDER BY slot DESC LIMIT 1")
                .bind(schedule)
                .fetch_optional(&self.pool)
                .await
                .map_err(failed)?;
        row.map(|row| {
            let slot: String = row.try_get("slot").map_err(failed)?;
            Ok((time(&slot)?, row.try_get("ran").map_err(failed)?))
        })
        .transpose()
    }

    async fn keep_digest(
        &self,
        digest: &NewDigest,
        slot: Option<(&str, DateTime<Utc>)>,
        channels: &[&str],
    ) -> Result<Option<KeptDigest>, StoreError> {
        let nudges = nudge_record::encode(&digest.nudges)
            .map_err(|e| StoreError::database("cannot encode the nudges", e))?;
        let mut tx = self.pool.begin_with(WRITE_TRANSACTION).await.map_err(failed)?;
        if let Some((schedule, slot)) = slot {
            let taken = sqlx::query(
                "INSERT INTO schedule_runs (schedule, slot, ran, claimed_at) VALUES (?, ?, 1, ?) \
                 ON CONFLICT (schedule, slot) DO NOTHING",
            )
            .bind(schedule)
            .bind(text(slot))
            .bind(text(Utc::now()))
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
            if taken.rows_affected() == 0 {
                // Another process took the slot: nothing of this one is kept.
                tx.rollback().await.map_err(failed)?;
                return Ok(None);
            }
        }
        let id: i64 = sqlx::query(
            "INSERT INTO digests (kind, title, markdown, nudges, trigger, created_at) VALUES (?, ?, ?, ?, ?, ?) \
             RETURNING id",
        )
        .bind(&digest.kind)
        .bind(&digest.title)
        .bind(&digest.markdown)
        .bind(nudges)
        .bind(digest.trigger.as_str())
        .bind(text(digest.created_at))
        .fetch_one(&mut *tx)
        .await
        .map_err(failed)?
        .try_get("id")
        .map_err(failed)?;
        if let Some((schedule, slot)) = slot {
            sqlx::query("UPDATE schedule_runs SET digest_id = ? WHERE schedule = ? AND slot = ?")
                .bind(id)
                .bind(schedule)
                .bind(text(slot))
                .execute(&mut *tx)
                .await
                .map_err(failed)?;
        }
        let mut deliveries = Vec::with_capacity(channels.len());
        for channel in channels {
            let key = delivery_key(channel);
            let outgoing: i64 = sqlx::query(
                "INSERT INTO outbox (digest_id, channel, delivery_key, state, next_at) \
                 VALUES (?, ?, ?, 'pending', ?) RETURNING id",
            )
            .bind(id)
            .bind(*channel)
            .bind(&key)
            .bind(text(digest.created_at))
            .fetch_one(&mut *tx)
            .await
            .map_err(failed)?
            .try_get("id")
            .map_err(failed)?;
            deliveries.push(Outgoing { id: outgoing, channel: (*channel).to_string(), key });
        }
        tx.commit().await.map_err(failed)?;
        Ok(Some(KeptDigest { id, deliveries }))
    }

    async fn unfinished_deliveries(&self) -> Result<Vec<i64>, StoreError> {
        let rows = sqlx::query("SELECT id FROM outbox WHERE state = 'pending' ORDER BY id")
            .fetch_all(&self.pool)
            .await
            .map_err(failed)?;
        rows.iter().map(|row| row.try_get("id").map_err(failed)).collect()
    }

    async fn take_delivery(&self, id: i64, now: DateTime<Utc>) -> Result<TakenDelivery, StoreError> {
        let Some(hold) = self.locks.hold(id)? else { return Ok(TakenDelivery::Busy) };
        // Read under the hold: what it says cannot change until the hold is dropped.
        let Some(row) = outbox_row(&self.pool, id).await? else {
            self.locks.forget(id);
            return Ok(TakenDelivery::Finished);
        };
        if row.state != "pending" {
            self.locks.forget(id);
            return Ok(TakenDelivery::Finished);
        }
        if !row.sending && row.next_at > now {
            return Ok(TakenDelivery::Later(row.next_at));
        }
        Ok(TakenDelivery::Due(row.pending, hold))
    }

    async fn begin_attempt(&self, hold: &DeliveryHold, attempt: u32) -> Result<(), StoreError> {
        sqlx::query("UPDATE outbox SET attempts = ?, sending = 1 WHERE id = ?")
            .bind(i64::from(attempt))
            .bind(hold.id())
            .execute(&self.pool)
            .await
            .map_err(failed)?;
        Ok(())
    }

    async fn end_attempt(
        &self,
        hold: &DeliveryHold,
        record: &DeliveryRecord,
        next: Option<DateTime<Utc>>,
    ) -> Result<(), StoreError> {
        let state = match (record.delivered, next) {
            (true, _) => "delivered",
            (false, Some(_)) => "pending",
            (false, None) => "failed",
        };
        let mut tx = self.pool.begin_with(WRITE_TRANSACTION).await.map_err(failed)?;
        sqlx::query(
            "INSERT INTO deliveries (digest_id, channel, attempt, delivered, error, will_retry, at) \
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(record.digest_id)
        .bind(&record.channel)
        .bind(i64::from(record.attempt))
        .bind(record.delivered)
        .bind(&record.error)
        .bind(record.will_retry)
        .bind(text(record.at))
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
        sqlx::query("UPDATE outbox SET state = ?, sending = 0, next_at = ? WHERE id = ?")
            .bind(state)
            .bind(text(next.unwrap_or(record.at)))
            .bind(hold.id())
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        tx.commit().await.map_err(failed)?;
        if state != "pending" {
            self.locks.forget(hold.id());
        }
        Ok(())
    }

    async fn digests(&self, limit: usize) -> Result<Vec<StoredDigest>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = sqlx::query(
            "SELECT id, kind, title, markdown, nudges, trigger, created_at FROM digests ORDER BY id DESC LIMIT ?",
        )
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(failed)?;
        let mut digests = Vec::with_capacity(rows.len());
        for row in rows {
            let id: i64 = row.try_get("id").map_err(failed)?;
            let nudges: String = row.try_get("nudges").map_err(failed)?;
            let deliveries = sqlx::query(
                "SELECT digest_id, channel, attempt, delivered, error, will_retry, at FROM deliveries \
                 WHERE digest_id = ? ORDER BY id",
            )
            .bind(id)
            .fetch_all(&self.pool)
            .await
            .map_err(failed)?
            .iter()
            .map(delivery)
            .collect::<Result<Vec<_>, _>>()?;
            digests.push(StoredDigest {
                id,
                kind: row.try_get("kind").map_err(failed)?,
                title: row.try_get("title").map_err(failed)?,
                markdown: row.try_get("markdown").map_err(failed)?,
                nudges: serde_json::from_str(&nudges).unwrap_or(serde_json::Value::Array(Vec::new())),
                trigger: row.try_get("trigger").map_err(failed)?,
                created_at: time(&row.try_get::<String, _>("created_at").map_err(failed)?)?,
                deliveries,
            });
        }
        Ok(digests)
    }

    async fn last_delivery(&self) -> Result<Option<DeliveryRecord>, StoreError> {
        sqlx::query(
            "SELECT digest_id, channel, attempt, delivered, error, will_retry, at FROM deliveries ORDER BY id DESC LIMIT 1",
        )
        .fetch_optional(&self.pool)
        .await
        .map_err(failed)?
        .as_ref()
        .map(delivery)
        .transpose()
    }

    async fn snooze(&self, key: &str, until: DateTime<Utc>) -> Result<(), StoreError> {
        sqlx::query("INSERT INTO snoozes (nudge_key, until) VALUES (?, ?) ON CONFLICT (nudge_key) DO UPDATE SET until = excluded.until")
            .bind(key)
            .bind(text(until))
            .execute(&self.pool)
            .await
            .map_err(failed)?;
        Ok(())
    }

    async fn snoozes(&self, now: DateTime<Utc>) -> Result<Snoozes, StoreError> {
        let rows = sqlx::query("SELECT nudge_key, until FROM snoozes WHERE until > ?")
            .bind(text(now))
            .fetch_all(&self.pool)
            .await
            .map_err(failed)?;
        rows.iter()
            .map(|row| {
                let key: String = row.try_get("nudge_key").map_err(failed)?;
                let until: String = row.try_get("until").map_err(failed)?;
                Ok((key, time(&until)?))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kb_domain::outreach::DigestTrigger;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn daily(created_at: DateTime<Utc>) -> NewDigest {
        NewDigest {
            kind: "daily".into(),
            title: "kb daily digest".into(),
            markdown: "# Daily digest".into(),
            nudges: Vec::new(),
            trigger: DigestTrigger::Schedule,
            created_at,
        }
    }

    /// Two stores on one database file, as two kb processes have.
    async fn two_stores() -> (tempfile::TempDir, SqliteOutreachStore, SqliteOutreachStore) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("kb.sqlite").display());
        let first = SqliteOutreachStore::connect(&url).await.unwrap();
        let second = SqliteOutreachStore::connect(&url).await.unwrap();
        (dir, first, second)
    }

    #[tokio::test]
    async fn a_slot_and_its_digest_are_kept_once_across_processes() {
        let (_dir, first, second) = two_stores().await;
        let slot = at("2026-11-23T06:00:00Z");
        let digest = daily(slot);
        let mut kept = Vec::new();
        for _ in 0..3 {
            let (x, y) = tokio::join!(
                first.keep_digest(&digest, Some(("daily", slot)), &["email"]),
                second.keep_digest(&digest, Some(("daily", slot)), &["email"]),
            );
            kept.extend([x.unwrap(), y.unwrap()].into_iter().flatten());
        }
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert_eq!(first.digests(10).await.unwrap().len(), 1, "the losers kept nothing");
        assert_eq!(second.last_run("daily").await.unwrap(), Some((slot, true)));
        assert_eq!(first.unfinished_deliveries().await.unwrap(), [kept[0].deliveries[0].id]);
        assert!(
            kept[0].deliveries[0].key.starts_with("kb.") && kept[0].deliveries[0].key.ends_with(".email")
        );

        // A slot only noted is not run, and a noted slot cannot be noted again.
        assert!(first.note_slot("weekly", slot).await.unwrap());
        assert!(!second.note_slot("weekly", slot).await.unwrap());
        assert_eq!(first.last_run("weekly").await.unwrap(), Some((slot, false)));
    }

    #[tokio::test]
    async fn a_digest_that_cannot_be_kept_takes_no_slot() {
        let store = SqliteOutreachStore::connect("sqlite::memory:").await.unwrap();
        let slot = at("2026-11-23T06:00:00Z");
        // The digest's insert fails (as a full disk would), after the slot's.
        sqlx::query(
            "CREATE TEMP TRIGGER full BEFORE INSERT ON digests BEGIN SELECT RAISE(ABORT, 'disk full'); END",
        )
        .execute(&store.pool)
        .await
        .unwrap();
        let failed = store.keep_digest(&daily(slot), Some(("daily", slot)), &["email"]).await;
        assert!(failed.is_err(), "{failed:?}");
        assert_eq!(store.last_run("daily").await.unwrap(), None, "the slot is still free");
        assert!(store.unfinished_deliveries().await.unwrap().is_empty());

        sqlx::query("DROP TRIGGER full").execute(&store.pool).await.unwrap();
        let kept = store.keep_digest(&daily(slot), Some(("daily", slot)), &["email"]).await.unwrap();
        assert!(kept.is_some(), "the next try takes the slot and keeps its digest");
        assert_eq!(store.last_run("daily").await.unwrap(), Some((slot, true)));
    }

    #[tokio::test]
    async fn one_process_at_a_time_tries_a_delivery_and_a_dead_ones_attempt_is_resumed() {
        let (dir, first, second) = two_stores().await;
        let now = at("2026-11-23T06:00:00Z");
        let kept = first.keep_digest(&daily(now), None, &["email"]).await.unwrap().unwrap();
        let outgoing = &kept.deliveries[0];

        let TakenDelivery::Due(pending, hold) = first.take_delivery(outgoing.id, now).await.unwrap() else {
            panic!("a new delivery is due at once")
        };
        assert_eq!((pending.attempts, pending.interrupted), (0, false));
        assert_eq!(pending.message.id.as_deref(), Some(outgoing.key.as_str()));
        assert!(matches!(second.take_delivery(outgoing.id, now).await.unwrap(), TakenDelivery::Busy));
        assert!(matches!(first.take_delivery(outgoing.id, now).await.unwrap(), TakenDelivery::Busy));
        first.begin_attempt(&hold, 1).await.unwrap();
        // The holder dies mid-attempt: its lock goes with it.
        drop(hold);

        let TakenDelivery::Due(resumed, hold) = second.take_delivery(outgoing.id, now).await.unwrap() else {
            panic!("an interrupted delivery is due at once")
        };
        assert_eq!((resumed.attempts, resumed.interrupted), (1, true));
        assert_eq!(resumed.message, pending.message, "the same message and id after the interruption");
        let record = DeliveryRecord {
            digest_id: kept.id,
            channel: "email".into(),
            attempt: 2,
            delivered: true,
            error: None,
            will_retry: false,
            at: now,
        };
        second.end_attempt(&hold, &record, None).await.unwrap();
        drop(hold);
        assert!(matches!(first.take_delivery(outgoing.id, now).await.unwrap(), TakenDelivery::Finished));
        assert!(first.unfinished_deliveries().await.unwrap().is_empty());
        assert_eq!(first.digests(1).await.unwrap()[0].deliveries, [record]);
        let locks: Vec<_> = std::fs::read_dir(dir.path().join("kb.sqlite.deliveries")).unwrap().collect();
        assert!(locks.is_empty(), "a finished delivery's lock file is removed: {locks:?}");
    }

    #[tokio::test]
    async fn a_failed_attempt_is_due_again_at_its_time_and_deliveries_are_listed() {
        let store = SqliteOutreachStore::connect("sqlite::memory:").await.unwrap();
        let now = at("2026-11-23T06:00:00Z");
        let kept = store.keep_digest(&daily(now), None, &["email", "webhook"]).await.unwrap().unwrap();
        let email = kept.deliveries[0].id;
        let TakenDelivery::Due(_, hold) = store.take_delivery(email, now).await.unwrap() else {
            panic!("due at once")
        };
        assert!(matches!(store.take_delivery(email, now).await.unwrap(), TakenDelivery::Busy));
        store.begin_attempt(&hold, 1).await.unwrap();
        let record = DeliveryRecord {
            digest_id: kept.id,
            channel: "email".into(),
            attempt: 1,
            delivered: false,
            error: Some("connection refused".into()),
            will_retry: true,
            at: at("2026-11-23T06:00:01Z"),
        };
        let next = at("2026-11-23T06:00:31Z");
        store.end_attempt(&hold, &record, Some(next)).await.unwrap();
        drop(hold);
        assert!(
            matches!(store.take_delivery(email, now).await.unwrap(), TakenDelivery::Later(t) if t == next)
        );
        let TakenDelivery::Due(again, _hold) = store.take_delivery(email, next).await.unwrap() else {
            panic!("due at its time")
        };
        assert_eq!((again.attempts, again.interrupted), (1, false));
        assert_eq!(store.unfinished_deliveries().await.unwrap(), [email, kept.deliveries[1].id]);

        let listed = store.digests(10).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].deliveries, std::slice::from_ref(&record));
        assert_eq!(store.last_delivery().await.unwrap(), Some(record));
    }

    #[tokio::test]
    async fn snoozes_end_at_their_time() {
        let store = SqliteOutreachStore::connect("sqlite::memory:").await.unwrap();
        store.snooze("admin_due:admin/passport.md", at("2026-11-30T06:00:00Z")).await.unwrap();
        assert_eq!(store.snoozes(at("2026-11-29T00:00:00Z")).await.unwrap().len(), 1);
        assert!(
            store.snoozes(at("2026-11-30T06:00:00Z")).await.unwrap().is_empty(),
            "a snooze ends at its time"
        );
    }
}
