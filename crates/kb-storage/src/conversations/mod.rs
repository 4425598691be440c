//! The SQLite conversation store: [`SqliteConversationStore`], kb's
//! [`kb_domain::ConversationStore`] on sqlx.
//!
//! The schema (`migrations/`) is embedded in the binary and applied at connection. Queries
//! are checked at run time (no database is needed to build) and use only standard SQL:
//! ids (ULIDs) and timestamps (RFC 3339 text) are made here, not by the database, so a
//! PostgreSQL adapter would mostly change the placeholders. Messages keep their order with
//! a per-conversation `seq` (1, 2, 3, … with no gaps: messages are never removed one by one,
//! so the first `n` messages are those with `seq <= n`); a turn is appended in one
//! transaction that also moves the conversation's `updated_at` (and, for a chat turn, sets
//! the call it left waiting for the person's yes: `pending_call`, JSON text, taken away by
//! the next turn with a compare-and-clear so that only one turn ever runs it).

mod records;
pub(crate) mod rows;

use crate::database;

use std::path::Path;

use async_trait::async_trait;
use kb_domain::conversation::SummaryCoverage;
use kb_domain::{
    Conversation, ConversationId, ConversationStore, Message, NewMessage, PendingCall, StoreError,
};
use sqlx::sqlite::{SqlitePool, SqliteQueryResult};
use sqlx::{Row, Sqlite, Transaction};

use rows::{
    conversation_columns, conversation_from_row, db_error, format_time, message_columns, message_from_row,
    now, pending_from_json, pending_to_json, tool_calls_to_json,
};

/// The conversation store on a SQLite database.
#[derive(Debug, Clone)]
pub struct SqliteConversationStore {
    pool: SqlitePool,
    /// Checkpoints the database while this is open.
    _checkpoints: Option<crate::database::Checkpoints>,
}

impl SqliteConversationStore {
    /// Opens the database at `url` (`sqlite://path/kb.sqlite` or `sqlite::memory:`),
    /// creating the file and its folder when missing, and applies the migrations.
    pub async fn connect(url: &str) -> Result<SqliteConversationStore, StoreError> {
        let database = database::connect(url).await?;
        Ok(SqliteConversationStore { pool: database.pool, _checkpoints: database.checkpoints })
    }

    /// Opens (or creates) the default database of a kb folder, `{kb_dir}/.kb/kb.sqlite`.
    pub async fn open_in(kb_dir: &Path) -> Result<SqliteConversationStore, StoreError> {
        let database = database::open_in(kb_dir).await?;
        Ok(SqliteConversationStore { pool: database.pool, _checkpoints: database.checkpoints })
    }

    /// Its connections, for another store of the same database.
    pub(crate) fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Empties the database's write-ahead log into the database file when no other process
    /// is using it, and closes every connection (waiting for them to be returned).
    pub async fn close(&self) {
        database::empty_the_log(&self.pool).await;
        self.pool.close().await;
    }

    /// Fails with [`StoreError::NotFound`] unless the conversation exists.
    async fn ensure_exists(&self, id: &ConversationId) -> Result<(), StoreError> {
        let found = sqlx::query("SELECT 1 FROM conversations WHERE id = ?")
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err(db_error("cannot read conversation"))?;
        found.map(|_| ()).ok_or_else(|| StoreError::NotFound(id.clone()))
    }
}

/// Fails with [`StoreError::NotFound`] when a change touched no conversation.
fn changed_one(done: SqliteQueryResult, id: &ConversationId) -> Result<(), StoreError> {
    if done.rows_affected() == 0 { Err(StoreError::NotFound(id.clone())) } else { Ok(()) }
}

/// Inserts the messages of a turn after the last one of the conversation.
async fn insert_messages(
    tx: &mut Transaction<'_, Sqlite>,
    id: &ConversationId,
    messages: Vec<NewMessage>,
    created_at: chrono::DateTime<chrono::Utc>,
) -> Result<Vec<Message>, StoreError> {
    let last: i64 =
        sqlx::query("SELECT COALESCE(MAX(seq), 0) AS last FROM messages WHERE conversation_id = ?")
            .bind(id.as_str())
            .fetch_one(&mut **tx)
            .await
            .map_err(db_error("cannot read the last message"))?
            .try_get("last")
            .map_err(db_error("cannot read the last message"))?;
    let stamp = format_time(created_at);
    let mut stored = Vec::with_capacity(messages.len());
    for (seq, new) in (last + 1..).zip(messages) {
        let message_id = ulid::Ulid::new().to_string();
        let role = new.role();
        sqlx::query(concat!(
            "INSERT INTO messages (",
            message_columns!(),
            ", seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ))
        .bind(message_id.as_str())
        .bind(id.as_str())
        .bind(role.as_str())
        .bind(new.content.as_str())
        .bind(tool_calls_to_json(&new.tool_calls)?)
        .bind(new.tool_call_id.as_deref())
        .bind(new.filed_entry_path.as_deref())
        .bind(new.filed_confidence)
        .bind(stamp.as_str())
        .bind(seq)
        .execute(&mut **tx)
        .await
        .map_err(db_error("cannot store a message"))?;
        stored.push(Message {
            id: message_id,
            conversation_id: id.clone(),
            role,
            content: new.content,
            tool_calls: new.tool_calls,
            tool_call_id: new.tool_call_id,
            filed_entry_path: new.filed_entry_path,
            filed_confidence: new.filed_confidence,
            created_at,
        });
    }
    Ok(stored)
}

#[async_trait]
impl ConversationStore for SqliteConversationStore {
    #[tracing::instrument(skip(self, title))]
    async fn create_for(&self, title: &str, person: Option<&str>) -> Result<Conversation, StoreError> {
        let at = now();
        let conversation = Conversation {
            id: ConversationId::generate(),
            title: title.to_string(),
            created_at: at,
            updated_at: at,
            summary: None,
            summary_covers: None,
            pending: None,
            person: person.map(str::to_string),
        };
        let stamp = format_time(at);
        sqlx::query(
            "INSERT INTO conversations (id, title, created_at, updated_at, person) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(conversation.id.as_str())
        .bind(title)
        .bind(stamp.as_str())
        .bind(stamp.as_str())
        .bind(person)
        .execute(&self.pool)
        .await
        .map_err(db_error("cannot create conversation"))?;
        Ok(conversation)
    }

    #[tracing::instrument(skip(self), fields(id = %id))]
    async fn get(&self, id: &ConversationId) -> Result<Option<Conversation>, StoreError> {
        sqlx::query(concat!("SELECT ", conversation_columns!(), " FROM conversations WHERE id = ?"))
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err(db_error("cannot read conversation"))?
            .map(|row| conversation_from_row(&row))
            .transpose()
    }

    #[tracing::instrument(skip(self))]
    async fn list(&self) -> Result<Vec<Conversation>, StoreError> {
        sqlx::query(concat!(
            "SELECT ",
            conversation_columns!(),
            " FROM conversations ORDER BY updated_at DESC, id DESC"
        ))
        .fetch_all(&self.pool)
        .await
        .map_err(db_error("cannot list conversations"))?
        .iter()
        .map(conversation_from_row)
        .collect()
    }

    #[tracing::instrument(skip(self, title), fields(id = %id))]
    async fn rename(&self, id: &ConversationId, title: &str) -> Result<(), StoreError> {
        let done = sqlx::query("UPDATE conversations SET title = ?, updated_at = ? WHERE id = ?")
            .bind(title)
            .bind(format_time(now()))
            .bind(id.as_str())
            .execute(&self.pool)
            .await
            .map_err(db_error("cannot rename conversation"))?;
        changed_one(done, id)
    }

    #[tracing::instrument(skip(self), fields(id = %id))]
    async fn delete(&self, id: &ConversationId) -> Result<(), StoreError> {
        // Messages go with it (ON DELETE CASCADE, foreign keys are on for every connection).
        let done = sqlx::query("DELETE FROM conversations WHERE id = ?")
            .bind(id.as_str())
            .execute(&self.pool)
            .await
            .map_err(db_error("cannot delete conversation"))?;
        changed_one(done, id)
    }

    #[tracing::instrument(skip(self, summary, covers), fields(id = %id, covers = covers.messages))]
    async fn set_summary(
        &self,
        id: &ConversationId,
        summary: &str,
        covers: &SummaryCoverage,
    ) -> Result<(), StoreError> {
        let count = i64::try_from(covers.messages).map_err(|_| {
            StoreError::database_message(format!("summary coverage {} is too large", covers.messages))
        })?;
        // The summary is derived data, not a change by the person: `updated_at` stays.
        let done = sqlx::query(
            "UPDATE conversations SET summary = ?, summary_covers = ?, summary_last_filed = ? WHERE id = ?",
        )
        .bind(summary)
        .bind(count)
        .bind(covers.last_filed.as_deref())
        .bind(id.as_str())
        .execute(&self.pool)
        .await
        .map_err(db_error("cannot store summary"))?;
        changed_one(done, id)
    }

    async fn messages(&self, id: &ConversationId) -> Result<Vec<Message>, StoreError> {
        // Sequence numbers start at 1: every message comes after the first 0.
        self.messages_after(id, 0).await
    }

    #[tracing::instrument(skip(self), fields(id = %id))]
    async fn messages_after(&self, id: &ConversationId, skip: u64) -> Result<Vec<Message>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            message_columns!(),
            " FROM messages WHERE conversation_id = ? AND seq > ? ORDER BY seq ASC"
        ))
        .bind(id.as_str())
        .bind(i64::try_from(skip).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await
        .map_err(db_error("cannot read messages"))?;
        if rows.is_empty() {
            self.ensure_exists(id).await?;
        }
        rows.iter().map(message_from_row).collect()
    }

    #[tracing::instrument(skip(self), fields(id = %id))]
    async fn recent_messages(&self, id: &ConversationId, limit: usize) -> Result<Vec<Message>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            message_columns!(),
            " FROM messages WHERE conversation_id = ? ORDER BY seq DESC LIMIT ?"
        ))
        .bind(id.as_str())
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await
        .map_err(db_error("cannot read messages"))?;
        if rows.is_empty() {
            self.ensure_exists(id).await?;
        }
        let mut messages = rows.iter().map(message_from_row).collect::<Result<Vec<_>, _>>()?;
        messages.reverse();
        Ok(messages)
    }

    async fn append_turn(
        &self,
        id: &ConversationId,
        messages: Vec<NewMessage>,
    ) -> Result<Vec<Message>, StoreError> {
        self.store_turn(id, messages, None).await
    }

    async fn append_turn_with_pending(
        &self,
        id: &ConversationId,
        messages: Vec<NewMessage>,
        pending: Option<&PendingCall>,
    ) -> Result<Vec<Message>, StoreError> {
        self.store_turn(id, messages, Some(pending)).await
    }

    #[tracing::instrument(skip(self), fields(id = %id))]
    async fn take_pending(&self, id: &ConversationId) -> Result<Option<PendingCall>, StoreError> {
        let found = sqlx::query("SELECT pending_call FROM conversations WHERE id = ?")
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err(db_error("cannot read the pending call"))?;
        let Some(row) = found else {
            return Err(StoreError::NotFound(id.clone()));
        };
        let text: Option<String> =
            row.try_get("pending_call").map_err(db_error("cannot read the pending call"))?;
        let Some(text) = text else {
            return Ok(None);
        };
        // Cleared only if it is still the call read: of several takers, one changes the row.
        let taken =
            sqlx::query("UPDATE conversations SET pending_call = NULL WHERE id = ? AND pending_call = ?")
                .bind(id.as_str())
                .bind(text.as_str())
                .execute(&self.pool)
                .await
                .map_err(db_error("cannot clear the pending call"))?;
        if taken.rows_affected() == 0 {
            return Ok(None);
        }
        pending_from_json(&text, id.as_str()).map(Some)
    }
}

impl SqliteConversationStore {
    /// Appends a turn's messages and, when `pending` is given, sets the pending call to it,
    /// in one transaction that also moves `updated_at`.
    #[tracing::instrument(skip(self, messages, pending), fields(id = %id, count = messages.len()))]
    async fn store_turn(
        &self,
        id: &ConversationId,
        messages: Vec<NewMessage>,
        pending: Option<Option<&PendingCall>>,
    ) -> Result<Vec<Message>, StoreError> {
        let at = now();
        let mut tx = self.pool.begin().await.map_err(db_error("cannot start a transaction"))?;
        // Writing first takes the write lock at once (no read-then-upgrade conflict) and
        // tells whether the conversation exists.
        let bumped = sqlx::query("UPDATE conversations SET updated_at = ? WHERE id = ?")
            .bind(format_time(at))
            .bind(id.as_str())
            .execute(&mut *tx)
            .await
            .map_err(db_error("cannot update conversation"))?;
        // On an unknown id, dropping the transaction rolls it back (nothing was written).
        changed_one(bumped, id)?;
        let stored = insert_messages(&mut tx, id, messages, at).await?;
        if let Some(pending) = pending {
            let text = pending.map(pending_to_json).transpose()?;
            sqlx::query("UPDATE conversations SET pending_call = ? WHERE id = ?")
                .bind(text.as_deref())
                .bind(id.as_str())
                .execute(&mut *tx)
                .await
                .map_err(db_error("cannot store the pending call"))?;
        }
        tx.commit().await.map_err(db_error("cannot commit the turn"))?;
        Ok(stored)
    }
}
