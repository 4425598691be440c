//! [`SqliteOutreachStore`]: kb-domain's `OutreachStore` in the SQLite database kb already
//! keeps (`migrations/0005_outreach.sql`). Times are RFC 3339 text in UTC, to the
//! microsecond, so they sort as they compare.

use std::path::Path;

use chrono::{DateTime, SecondsFormat, Utc};
use kb_domain::StoreError;
use kb_domain::nudges::Snoozes;
use kb_domain::outreach::{DeliveryRecord, NewDigest, OutreachStore, StoredDigest};
use sqlx::{Row, SqlitePool};

use crate::database;

/// The outreach records of one kb database.
#[derive(Debug, Clone)]
pub struct SqliteOutreachStore {
    pool: SqlitePool,
    /// Checkpoints the database while this is open.
    _checkpoints: Option<crate::database::Checkpoints>,
}

impl SqliteOutreachStore {
    /// Opens the database at `url` (as the conversation store does).
    pub async fn connect(url: &str) -> Result<SqliteOutreachStore, StoreError> {
        let database = database::connect(url).await?;
        Ok(SqliteOutreachStore { pool: database.pool, _checkpoints: database.checkpoints })
    }

    /// Opens the default database of a kb folder.
    pub async fn open_in(kb_dir: &Path) -> Result<SqliteOutreachStore, StoreError> {
        let database = database::open_in(kb_dir).await?;
        Ok(SqliteOutreachStore { pool: database.pool, _checkpoints: database.checkpoints })
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
        .map_err(|e| StoreError::Database(format!("a stored time cannot be read ({text:?}): {e}")))
}

fn failed(error: sqlx::Error) -> StoreError {
    StoreError::Database(error.to_string())
}

fn delivery(row: &sqlx::sqlite::SqliteRow) -> Result<DeliveryRecord, StoreError> {
    Ok(DeliveryRecord {
        digest_id: row.try_get("digest_id").map_err(failed)?,
        channel: row.try_get("channel").map_err(failed)?,
        attempt: row.try_get::<i64, _>("attempt").map_err(failed)?.try_into().unwrap_or(u32::MAX),
        delivered: row.try_get("delivered").map_err(failed)?,
        error: row.try_get("error").map_err(failed)?,
        will_retry: row.try_get("will_retry").map_err(failed)?,
        at: time(&row.try_get::<String, _>("at").map_err(failed)?)?,
    })
}

#[async_trait::async_trait]
impl OutreachStore for SqliteOutreachStore {
    async fn claim_run(&self, schedule: &str, slot: DateTime<Utc>, ran: bool) -> Result<bool, StoreError> {
        let inserted = sqlx::query(
            "INSERT INTO schedule_runs (schedule, slot, ran, claimed_at) VALUES (?, ?, ?, ?) \
             ON CONFLICT (schedule, slot) DO NOTHING",
        )
        .bind(schedule)
        .bind(text(slot))
        .bind(ran)
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

    async fn save_digest(&self, digest: &NewDigest) -> Result<i64, StoreError> {
        let nudges =
            serde_json::to_string(&digest.nudges).map_err(|e| StoreError::Database(e.to_string()))?;
        let row = sqlx::query(
            "INSERT INTO digests (kind, title, markdown, nudges, trigger, created_at) VALUES (?, ?, ?, ?, ?, ?) \
             RETURNING id",
        )
        .bind(&digest.kind)
        .bind(&digest.title)
        .bind(&digest.markdown)
        .bind(nudges)
        .bind(digest.trigger.as_str())
        .bind(text(digest.created_at))
        .fetch_one(&self.pool)
        .await
        .map_err(failed)?;
        row.try_get("id").map_err(failed)
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

    async fn record_delivery(&self, record: &DeliveryRecord) -> Result<(), StoreError> {
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
        .execute(&self.pool)
        .await
        .map_err(failed)?;
        Ok(())
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

    #[tokio::test]
    async fn a_slot_is_claimed_once_across_processes() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("kb.sqlite").display());
        let (first, second) = (
            SqliteOutreachStore::connect(&url).await.unwrap(),
            SqliteOutreachStore::connect(&url).await.unwrap(),
        );
        let slot = at("2026-11-23T06:00:00Z");
        let claims = futures_claims(&first, &second, slot).await;
        assert_eq!(claims.iter().filter(|c| **c).count(), 1, "{claims:?}");
        assert_eq!(second.last_run("daily").await.unwrap(), Some((slot, true)));
        assert_eq!(first.last_run("weekly").await.unwrap(), None);
    }

    async fn futures_claims(
        a: &SqliteOutreachStore,
        b: &SqliteOutreachStore,
        slot: DateTime<Utc>,
    ) -> Vec<bool> {
        let mut claims = Vec::new();
        for _ in 0..3 {
            let (x, y) = tokio::join!(a.claim_run("daily", slot, true), b.claim_run("daily", slot, true));
            claims.push(x.unwrap());
            claims.push(y.unwrap());
        }
        claims
    }

    #[tokio::test]
    async fn digests_keep_their_deliveries_and_snoozes_end() {
        let store = SqliteOutreachStore::connect("sqlite::memory:").await.unwrap();
        let digest = NewDigest {
            kind: "daily".into(),
            title: "kb daily digest".into(),
            markdown: "# Daily digest".into(),
            nudges: Vec::new(),
            trigger: DigestTrigger::Manual,
            created_at: at("2026-11-23T06:00:00Z"),
        };
        let id = store.save_digest(&digest).await.unwrap();
        let record = DeliveryRecord {
            digest_id: id,
            channel: "email".into(),
            attempt: 1,
            delivered: false,
            error: Some("connection refused".into()),
            will_retry: true,
            at: at("2026-11-23T06:00:01Z"),
        };
        store.record_delivery(&record).await.unwrap();
        let listed = store.digests(10).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].deliveries, std::slice::from_ref(&record));
        assert_eq!(store.last_delivery().await.unwrap(), Some(record));

        store.snooze("admin_due:admin/passport.md", at("2026-11-30T06:00:00Z")).await.unwrap();
        assert_eq!(store.snoozes(at("2026-11-29T00:00:00Z")).await.unwrap().len(), 1);
        assert!(
            store.snoozes(at("2026-11-30T06:00:00Z")).await.unwrap().is_empty(),
            "a snooze ends at its time"
        );
    }
}
