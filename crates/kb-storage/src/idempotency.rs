//! [`SqliteIdempotencyStore`]: kb-domain's `IdempotencyStore` in the SQLite database kb
//! already keeps (`migrations/0008_idempotency.sql`), so every kb process on one vault
//! (`kb serve` twice, `kb mcp`) sees the same keys.
//!
//! A claim is one write transaction (`BEGIN IMMEDIATE`): it forgets old keys, then inserts
//! the key or, when it is there, reads what it holds. Two claims of one key are never both
//! granted, in one process or several.

use std::path::Path;

use async_trait::async_trait;
use chrono::{DateTime, SecondsFormat, Utc};
use kb_domain::StoreError;
use kb_domain::ports::{Claim, IdempotencyStore, KeptAnswer, KeyClaim};
use sqlx::{Row, SqlitePool};

use crate::conversations::SqliteConversationStore;
use crate::database;

/// A transaction that writes from its first statement: it waits for other writers at its
/// start, never half-way.
const WRITE_TRANSACTION: &str = "BEGIN IMMEDIATE";

/// The idempotency keys of one kb database.
#[derive(Debug, Clone)]
pub struct SqliteIdempotencyStore {
    pool: SqlitePool,
    /// Checkpoints the database while this is open.
    _checkpoints: Option<database::Checkpoints>,
}

impl SqliteIdempotencyStore {
    /// Opens the database at `url` (as the conversation store does).
    pub async fn connect(url: &str) -> Result<SqliteIdempotencyStore, StoreError> {
        let database = database::connect(url).await?;
        Ok(SqliteIdempotencyStore { pool: database.pool, _checkpoints: database.checkpoints })
    }

    /// Opens the default database of a kb folder.
    pub async fn open_in(kb_dir: &Path) -> Result<SqliteIdempotencyStore, StoreError> {
        let database = database::open_in(kb_dir).await?;
        Ok(SqliteIdempotencyStore { pool: database.pool, _checkpoints: database.checkpoints })
    }

    /// The keys in the database `conversations` is open on, over its connections (no
    /// second pool to open).
    pub fn beside(conversations: &SqliteConversationStore) -> SqliteIdempotencyStore {
        SqliteIdempotencyStore { pool: conversations.pool().clone(), _checkpoints: None }
    }
}

/// A time as stored: RFC 3339 in UTC to the microsecond, so text order is time order.
fn text(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

fn failed(error: sqlx::Error) -> StoreError {
    StoreError::database("the idempotency key store failed", error)
}

#[async_trait]
impl IdempotencyStore for SqliteIdempotencyStore {
    async fn claim(
        &self,
        claim: KeyClaim<'_>,
        keep_for: chrono::Duration,
        abandoned_after: chrono::Duration,
    ) -> Result<Claim, StoreError> {
        let mut tx = self.pool.begin_with(WRITE_TRANSACTION).await.map_err(failed)?;
        sqlx::query(
            "DELETE FROM idempotency_keys WHERE claimed_at < ? OR (status IS NULL AND claimed_at < ?)",
        )
        .bind(text(claim.at - keep_for))
        .bind(text(claim.at - abandoned_after))
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
        let inserted = sqlx::query(
            "INSERT INTO idempotency_keys (key, fingerprint, claimed_at) VALUES (?, ?, ?) \
             ON CONFLICT (key) DO NOTHING",
        )
        .bind(claim.key)
        .bind(claim.fingerprint)
        .bind(text(claim.at))
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
        let found = if inserted.rows_affected() == 1 {
            Claim::Claimed
        } else {
            let row = sqlx::query(
                "SELECT fingerprint, status, content_type, body FROM idempotency_keys WHERE key = ?",
            )
            .bind(claim.key)
            .fetch_one(&mut *tx)
            .await
            .map_err(failed)?;
            let fingerprint: String = row.try_get("fingerprint").map_err(failed)?;
            let status: Option<i64> = row.try_get("status").map_err(failed)?;
            match status {
                _ if fingerprint != claim.fingerprint => Claim::Mismatch,
                None => Claim::InProgress,
                Some(status) => Claim::Answered(KeptAnswer {
                    status: u16::try_from(status).unwrap_or(500),
                    content_type: row
                        .try_get::<Option<String>, _>("content_type")
                        .map_err(failed)?
                        .unwrap_or_default(),
                    body: row.try_get::<Option<Vec<u8>>, _>("body").map_err(failed)?.unwrap_or_default(),
                }),
            }
        };
        tx.commit().await.map_err(failed)?;
        Ok(found)
    }

    async fn finish(&self, key: &str, answer: &KeptAnswer) -> Result<(), StoreError> {
        sqlx::query("UPDATE idempotency_keys SET status = ?, content_type = ?, body = ? WHERE key = ?")
            .bind(i64::from(answer.status))
            .bind(&answer.content_type)
            .bind(&answer.body)
            .bind(key)
            .execute(&self.pool)
            .await
            .map_err(failed)?;
        Ok(())
    }

    async fn release(&self, key: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM idempotency_keys WHERE key = ? AND status IS NULL")
            .bind(key)
            .execute(&self.pool)
            .await
            .map_err(failed)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const DAY: chrono::Duration = chrono::Duration::hours(24);
    const STUCK: chrono::Duration = chrono::Duration::minutes(10);

    fn answer(body: &str) -> KeptAnswer {
        KeptAnswer { status: 200, content_type: "application/json".into(), body: body.as_bytes().to_vec() }
    }

    fn claim<'a>(key: &'a str, fingerprint: &'a str, at: DateTime<Utc>) -> KeyClaim<'a> {
        KeyClaim { key, fingerprint, at }
    }

    #[tokio::test]
    async fn a_key_is_claimed_once_and_answers_its_first_result_in_every_process() {
        let dir = tempfile::tempdir().unwrap();
        // Two stores on one file: two kb processes on one vault.
        let first = SqliteIdempotencyStore::open_in(dir.path()).await.unwrap();
        let second = SqliteIdempotencyStore::open_in(dir.path()).await.unwrap();
        let now = Utc::now();
        assert_eq!(
            first.claim(claim("k1", "POST /api/capture a", now), DAY, STUCK).await.unwrap(),
            Claim::Claimed
        );
        assert_eq!(
            second.claim(claim("k1", "POST /api/capture a", now), DAY, STUCK).await.unwrap(),
            Claim::InProgress,
            "a key being answered is not claimed again, even by another process"
        );
        first.finish("k1", &answer("{\"path\":\"x.md\"}")).await.unwrap();
        assert_eq!(
            second.claim(claim("k1", "POST /api/capture a", now), DAY, STUCK).await.unwrap(),
            Claim::Answered(answer("{\"path\":\"x.md\"}"))
        );
        assert_eq!(
            second.claim(claim("k1", "POST /api/capture b", now), DAY, STUCK).await.unwrap(),
            Claim::Mismatch,
            "the same key with another body is refused"
        );
    }

    #[tokio::test]
    async fn released_expired_and_abandoned_keys_can_be_claimed_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteIdempotencyStore::open_in(dir.path()).await.unwrap();
        let now = Utc::now();
        assert_eq!(store.claim(claim("k", "f", now), DAY, STUCK).await.unwrap(), Claim::Claimed);
        store.release("k").await.unwrap();
        assert_eq!(store.claim(claim("k", "f", now), DAY, STUCK).await.unwrap(), Claim::Claimed);
        // Left unfinished (its process died): taken over once it is old enough.
        let later = now + STUCK + chrono::Duration::seconds(1);
        assert_eq!(store.claim(claim("k", "f", later), DAY, STUCK).await.unwrap(), Claim::Claimed);
        store.finish("k", &answer("{}")).await.unwrap();
        assert_eq!(
            store.claim(claim("k", "f", later), DAY, STUCK).await.unwrap(),
            Claim::Answered(answer("{}"))
        );
        // A kept answer is forgotten after a day; releasing it does nothing before then.
        store.release("k").await.unwrap();
        let next_day = later + DAY + chrono::Duration::seconds(1);
        assert_eq!(store.claim(claim("k", "f", next_day), DAY, STUCK).await.unwrap(), Claim::Claimed);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_claims_of_one_key_grant_it_once() {
        let dir = tempfile::tempdir().unwrap();
        // Four processes' stores on one database (opened one by one, as the database is
        // made by the first), claiming one key at the same time.
        let mut stores = Vec::new();
        for _ in 0..4 {
            stores.push(SqliteIdempotencyStore::open_in(dir.path()).await.unwrap());
        }
        let now = Utc::now();
        let claims: Vec<_> = stores
            .into_iter()
            .map(|store| {
                tokio::spawn(async move { store.claim(claim("same", "f", now), DAY, STUCK).await.unwrap() })
            })
            .collect();
        let mut granted = 0;
        for claim in claims {
            if claim.await.unwrap() == Claim::Claimed {
                granted += 1;
            }
        }
        assert_eq!(granted, 1);
    }
}
