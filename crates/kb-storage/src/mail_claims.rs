//! [`SqliteMailClaims`]: the mail kb files from a mailbox, claimed in kb's SQLite database
//! (`migrations/0010_mail_claims.sql`) before it is filed, so every kb process watching the
//! mailbox files each message once. History marks a claim filed in the transaction that
//! records the capture ([`kb_domain::ChangeContext::claim`]).

use std::path::Path;

use chrono::{DateTime, Utc};
use kb_domain::StoreError;
use sqlx::{Row, SqlitePool};

use crate::conversations::SqliteConversationStore;
use crate::conversations::rows::format_time;
use crate::database;

/// What a claim of a message found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailClaim {
    /// It is this process's to file now.
    Granted,
    /// It is this process's to file now, taken over from a process that stopped while
    /// filing it: that one may have written its note without recording it.
    TakenOver,
    /// It was filed already (under this UID, or its Message-ID under another).
    Filed,
    /// Another process is filing it now.
    Busy,
}

/// The mail claims of one kb database.
#[derive(Debug, Clone)]
pub struct SqliteMailClaims {
    pool: SqlitePool,
    /// Checkpoints the database while this is open.
    _checkpoints: Option<database::Checkpoints>,
}

impl SqliteMailClaims {
    /// Opens the default database of a kb folder.
    pub async fn open_in(kb_dir: &Path) -> Result<SqliteMailClaims, StoreError> {
        let database = database::open_in(kb_dir).await?;
        Ok(SqliteMailClaims { pool: database.pool, _checkpoints: database.checkpoints })
    }

    /// The claims in the database `conversations` is open on, over its connections.
    pub fn beside(conversations: &SqliteConversationStore) -> SqliteMailClaims {
        SqliteMailClaims { pool: conversations.pool().clone(), _checkpoints: None }
    }

    /// Claims `message` (its `Message-ID` is `message_id`) at `now`. A claim left unfinished
    /// since before `abandoned_after` ago (its process stopped half-way) is taken over.
    pub async fn claim(
        &self,
        message: &str,
        message_id: Option<&str>,
        now: DateTime<Utc>,
        abandoned_after: chrono::Duration,
    ) -> Result<MailClaim, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await.map_err(failed)?;
        let rows = sqlx::query(
            "SELECT message, operation, claimed_at FROM mail_claims \
             WHERE message = ?1 OR (?2 IS NOT NULL AND message_id = ?2)",
        )
        .bind(message)
        .bind(message_id)
        .fetch_all(&mut *tx)
        .await
        .map_err(failed)?;
        let cutoff = format_time(now - abandoned_after);
        for row in &rows {
            let operation: Option<i64> = row.try_get("operation").map_err(failed)?;
            let claimed_at: String = row.try_get("claimed_at").map_err(failed)?;
            if operation.is_some() {
                return Ok(MailClaim::Filed);
            }
            if claimed_at >= cutoff {
                return Ok(MailClaim::Busy);
            }
        }
        let taken_over = !rows.is_empty();
        for row in &rows {
            let stale: String = row.try_get("message").map_err(failed)?;
            sqlx::query("DELETE FROM mail_claims WHERE message = ?")
                .bind(stale)
                .execute(&mut *tx)
                .await
                .map_err(failed)?;
        }
        sqlx::query("INSERT INTO mail_claims (message, message_id, claimed_at) VALUES (?, ?, ?)")
            .bind(message)
            .bind(message_id)
            .bind(format_time(now))
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        tx.commit().await.map_err(failed)?;
        Ok(if taken_over { MailClaim::TakenOver } else { MailClaim::Granted })
    }

    /// Marks `message` filed by a note found in the vault (written by a process that
    /// stopped before recording it in history).
    pub async fn found_filed(&self, message: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE mail_claims SET operation = 0 WHERE message = ? AND operation IS NULL")
            .bind(message)
            .execute(&self.pool)
            .await
            .map_err(failed)?;
        Ok(())
    }

    /// Gives up the claim of `message` when it was not filed (filing failed: the next look
    /// tries again).
    pub async fn release(&self, message: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM mail_claims WHERE message = ? AND operation IS NULL")
            .bind(message)
            .execute(&self.pool)
            .await
            .map_err(failed)?;
        Ok(())
    }
}

fn failed(error: sqlx::Error) -> StoreError {
    StoreError::database("the mail claims failed", error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kb_domain::{ChangeContext, ChangeSource};

    #[tokio::test]
    async fn a_message_is_filed_once_by_uid_or_message_id() {
        let dir = tempfile::tempdir().unwrap();
        let claims = SqliteMailClaims::open_in(dir.path()).await.unwrap();
        let history = crate::history::SqliteHistory::open_in(dir.path()).await.unwrap();
        let now = Utc::now();
        let wait = chrono::Duration::minutes(10);
        let first = "kb@host:143/INBOX 7:1";
        assert_eq!(claims.claim(first, Some("a@x"), now, wait).await.unwrap(), MailClaim::Granted);
        // Another process meanwhile: busy, by UID or by Message-ID.
        assert_eq!(claims.claim(first, Some("a@x"), now, wait).await.unwrap(), MailClaim::Busy);
        assert_eq!(
            claims.claim("kb@host:143/INBOX 8:1", Some("a@x"), now, wait).await.unwrap(),
            MailClaim::Busy
        );
        // Filing fails: released, it is claimed again.
        claims.release(first).await.unwrap();
        assert_eq!(claims.claim(first, Some("a@x"), now, wait).await.unwrap(), MailClaim::Granted);
        // The capture is recorded with the claim: filed, under any UID.
        let by = ChangeContext {
            claim: Some(first.to_string()),
            ..ChangeContext::from_source(ChangeSource::Email)
        };
        let change = kb_domain::FileChange {
            entry_id: None,
            path_before: None,
            path_after: Some(kb_domain::EntryPath::parse("ideas/a.md").unwrap()),
            before: None,
            after: Some(b"a".to_vec()),
            description: "filed".into(),
        };
        history.record(now, &by, None, vec![change]).await.unwrap();
        claims.release(first).await.unwrap();
        for message in [first, "kb@host:143/INBOX 8:1"] {
            assert_eq!(claims.claim(message, Some("a@x"), now, wait).await.unwrap(), MailClaim::Filed);
        }
        // A claim left unfinished is taken over once abandoned; one without a Message-ID too.
        let later = now + chrono::Duration::minutes(11);
        assert_eq!(claims.claim("kb@host:143/INBOX 7:2", None, now, wait).await.unwrap(), MailClaim::Granted);
        assert_eq!(claims.claim("kb@host:143/INBOX 7:2", None, now, wait).await.unwrap(), MailClaim::Busy);
        let again = claims.claim("kb@host:143/INBOX 7:2", None, later, wait).await.unwrap();
        assert_eq!(again, MailClaim::TakenOver);
        claims.found_filed("kb@host:143/INBOX 7:2").await.unwrap();
        let found = claims.claim("kb@host:143/INBOX 7:2", None, later, wait).await.unwrap();
        assert_eq!(found, MailClaim::Filed);
    }
}
