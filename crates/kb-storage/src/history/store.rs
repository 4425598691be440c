//! [`SqliteHistory`]: revision history in kb's SQLite database (`migrations/0003`), async
//! on sqlx. Each blob is stored once under its SHA-256; an operation and its revisions are
//! written in one transaction, which also moves the `heads` (what was last recorded at
//! each path). Every query is by index, so recording costs the same in any vault.

use chrono::{DateTime, Utc};
use kb_domain::{
    ChangeContext, ChangeSource, ContentHash, ConversationId, EntryPath, FileChange, HistoryError,
    ObservedFile, Revision, StoreError, UndoScope,
};
use sha2::{Digest, Sha256};
use sqlx::sqlite::{SqlitePool, SqliteRow};
use sqlx::{Row, Sqlite, Transaction};

use crate::conversations::rows::format_time;

/// How a transaction that reads then writes begins: holding the write lock from the start.
const WRITE_TRANSACTION: &str = "BEGIN IMMEDIATE";

/// The SHA-256 of `bytes`, as history names them.
pub fn content_hash(bytes: &[u8]) -> ContentHash {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    ContentHash(hex)
}

/// A file's content in a revision being written.
enum Content {
    /// No file.
    None,
    /// Bytes, stored when new.
    Bytes(Vec<u8>),
    /// Bytes already stored.
    Stored(ContentHash),
}

/// One revision being written.
struct Pending {
    entry_id: Option<String>,
    path_before: Option<EntryPath>,
    path_after: Option<EntryPath>,
    before: Content,
    after: Content,
    description: String,
}

impl From<FileChange> for Pending {
    fn from(change: FileChange) -> Pending {
        let content = |bytes: Option<Vec<u8>>| bytes.map_or(Content::None, Content::Bytes);
        Pending {
            entry_id: change.entry_id,
            path_before: change.path_before,
            path_after: change.path_after,
            before: content(change.before),
            after: content(change.after),
            description: change.description,
        }
    }
}

/// Selects revisions joined with their operation, with the columns in the order
/// `revision_from_row` reads them (a macro so queries stay `&'static str` through
/// `concat!`).
macro_rules! select_revisions {
    () => {
        "SELECT r.id, r.operation, o.at, o.source, o.tool, o.conversation_id, r.description, \
         r.entry_id, r.path_before, r.path_after, r.before_hash, r.after_hash, o.reverts \
         FROM revisions r JOIN operations o ON o.id = r.operation "
    };
}

/// Operations kb made that may still be undone.
macro_rules! undoable {
    () => {
        "o.source != 'outside' AND o.reverts IS NULL \
         AND NOT EXISTS (SELECT 1 FROM operations u WHERE u.reverts = o.id)"
    };
}

fn db(doing: &'static str) -> impl Fn(sqlx::Error) -> HistoryError {
    move |err| HistoryError::database(doing, err)
}

fn store_error(err: StoreError) -> HistoryError {
    HistoryError::database("the history database failed", err)
}

/// Revision history on kb's SQLite database.
#[derive(Debug, Clone)]
pub struct SqliteHistory {
    pool: SqlitePool,
    /// Checkpoints the database while this is open.
    _checkpoints: Option<crate::database::Checkpoints>,
}

impl SqliteHistory {
    /// Opens the database at `url` (see [`crate::conversations::SqliteConversationStore::connect`]).
    pub async fn connect(url: &str) -> Result<SqliteHistory, HistoryError> {
        let database = crate::database::connect(url).await.map_err(store_error)?;
        Ok(SqliteHistory { pool: database.pool, _checkpoints: database.checkpoints })
    }

    /// Opens the default database of a kb folder, `{kb_dir}/.kb/kb.sqlite`.
    pub async fn open_in(kb_dir: &std::path::Path) -> Result<SqliteHistory, HistoryError> {
        let database = crate::database::open_in(kb_dir).await.map_err(store_error)?;
        Ok(SqliteHistory { pool: database.pool, _checkpoints: database.checkpoints })
    }

    /// Closes every connection.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// See [`kb_domain::RevisionLog::record`].
    pub async fn record(
        &self,
        at: DateTime<Utc>,
        by: &ChangeContext,
        reverts: Option<i64>,
        changes: Vec<FileChange>,
    ) -> Result<Vec<Revision>, HistoryError> {
        if changes.is_empty() {
            return Ok(Vec::new());
        }
        // IMMEDIATE: the write lock is taken at the start (waiting up to the busy timeout), so
        // a read-then-write never fails with SQLITE_BUSY_SNAPSHOT when another process wrote
        // in between.
        let mut tx = self.pool.begin_with(WRITE_TRANSACTION).await.map_err(db("cannot begin recording"))?;
        let ids = write_operation(&mut tx, at, by, reverts, changes.into_iter().map(Pending::from)).await?;
        tx.commit().await.map_err(db("cannot record the change"))?;
        self.revisions_by_id(&ids).await
    }

    /// See [`kb_domain::RevisionLog::observe`].
    pub async fn observe(
        &self,
        at: DateTime<Utc>,
        files: Vec<ObservedFile>,
    ) -> Result<Vec<Revision>, HistoryError> {
        if files.is_empty() {
            return Ok(Vec::new());
        }
        // IMMEDIATE: the write lock is taken at the start (waiting up to the busy timeout), so
        // a read-then-write never fails with SQLITE_BUSY_SNAPSHOT when another process wrote
        // in between.
        let mut tx = self.pool.begin_with(WRITE_TRANSACTION).await.map_err(db("cannot begin recording"))?;
        let mut pending = Vec::new();
        for file in files {
            let head = head_of(&mut tx, &file.path).await?;
            let now = file.bytes.as_deref().map(content_hash);
            if head == now {
                continue;
            }
            let description = match (&head, &now) {
                (None, _) => format!("{} appeared outside kb", file.path),
                (Some(_), None) => format!("{} was removed outside kb", file.path),
                (Some(_), Some(_)) => format!("{} was edited outside kb", file.path),
            };
            // A file removed outside kb is the removal of the entry history last saw there.
            let entry_id = match (file.entry_id, &file.bytes) {
                (None, None) => last_id_at(&mut tx, &file.path).await?,
                (id, _) => id,
            };
            pending.push(Pending {
                entry_id,
                path_before: head.is_some().then(|| file.path.clone()),
                path_after: file.bytes.is_some().then(|| file.path.clone()),
                before: head.map_or(Content::None, Content::Stored),
                after: file.bytes.map_or(Content::None, Content::Bytes),
                description,
            });
        }
        if pending.is_empty() {
            return Ok(Vec::new());
        }
        let by = ChangeContext::outside();
        let ids = write_operation(&mut tx, at, &by, None, pending.into_iter()).await?;
        tx.commit().await.map_err(db("cannot record outside changes"))?;
        self.revisions_by_id(&ids).await
    }

    /// See [`kb_domain::RevisionLog::heads`].
    pub async fn heads(&self) -> Result<Vec<(EntryPath, ContentHash)>, HistoryError> {
        let rows = sqlx::query("SELECT path, hash FROM heads")
            .fetch_all(&self.pool)
            .await
            .map_err(db("cannot read history's heads"))?;
        Ok(rows
            .iter()
            .filter_map(|row| {
                let path: String = row.try_get(0).ok()?;
                let hash: String = row.try_get(1).ok()?;
                Some((EntryPath::parse(&path).ok()?, ContentHash(hash)))
            })
            .collect())
    }

    /// See [`kb_domain::RevisionLog::history`].
    pub async fn history(
        &self,
        path: &EntryPath,
        entry_id: Option<&str>,
    ) -> Result<Vec<Revision>, HistoryError> {
        let entry_id = match entry_id {
            Some(id) => Some(id.to_string()),
            None => {
                let mut connection = self.pool.acquire().await.map_err(db("cannot read history"))?;
                last_id_at(&mut connection, path).await?
            }
        };
        let Some(entry_id) = entry_id else {
            let mut found = Vec::new();
            self.walk_without_id(path.clone(), i64::MAX, &mut found).await?;
            return Ok(found);
        };
        let rows = sqlx::query(concat!(select_revisions!(), "WHERE r.entry_id = ?1 ORDER BY r.id DESC"))
            .bind(&entry_id)
            .fetch_all(&self.pool)
            .await
            .map_err(db("cannot read history"))?;
        let mut found = rows.iter().map(revision_from_row).collect::<Result<Vec<_>, _>>()?;
        // The file may have lived without an id before (a file kb did not write gets one
        // when kb first moves it): its revisions from then are followed back too.
        if let Some(oldest) = found.last()
            && let Some(from) = oldest.path_before.clone()
        {
            let before = oldest.id;
            self.walk_without_id(from, before, &mut found).await?;
        }
        Ok(found)
    }

    /// Adds to `found`, newest first, the revisions without an entry id of the file at
    /// `path` before revision `before`, following it back across moves to where it came
    /// from; stops at a revision of a file with an id (another entry, or this file's
    /// time with an id, which its id finds).
    async fn walk_without_id(
        &self,
        mut path: EntryPath,
        mut before: i64,
        found: &mut Vec<Revision>,
    ) -> Result<(), HistoryError> {
        loop {
            let rows = sqlx::query(concat!(
                select_revisions!(),
                "WHERE (r.path_after = ?1 OR r.path_before = ?1) AND r.id < ?2 ORDER BY r.id DESC"
            ))
            .bind(path.to_string())
            .bind(before)
            .fetch_all(&self.pool)
            .await
            .map_err(db("cannot read history"))?;
            let mut came_from = None;
            for row in &rows {
                let revision = revision_from_row(row)?;
                if revision.entry_id.is_some() {
                    return Ok(());
                }
                let arrived = revision.path_after.as_ref() == Some(&path);
                let from = revision.path_before.clone().filter(|from| arrived && *from != path);
                let id = revision.id;
                found.push(revision);
                if let Some(from) = from {
                    came_from = Some((from, id));
                    break;
                }
            }
            let Some((from, id)) = came_from else { return Ok(()) };
            (path, before) = (from, id);
        }
    }

    /// See [`kb_domain::RevisionLog::last_path_of`].
    pub async fn last_path_of(&self, entry_id: &str) -> Result<Option<EntryPath>, HistoryError> {
        let path: Option<Option<String>> = sqlx::query_scalar(
            "SELECT path_after FROM revisions WHERE entry_id = ? ORDER BY id DESC LIMIT 1",
        )
        .bind(entry_id)
        .fetch_optional(&self.pool)
        .await
        .map_err(db("cannot read history"))?;
        Ok(path.flatten().and_then(|p| EntryPath::parse(&p).ok()))
    }

    /// See [`kb_domain::RevisionLog::entry_of_revision`]: what [`SqliteHistory::history`]
    /// walks back, walked forward. A revision without an id is in the history of the entry
    /// whose oldest revision is the first with an id at its path after it, when that one
    /// took the file over from there (a move giving it its id).
    pub async fn entry_of_revision(&self, id: i64) -> Result<Option<String>, HistoryError> {
        let Some(revision) = self.revision(id).await? else { return Ok(None) };
        if revision.entry_id.is_some() {
            return Ok(revision.entry_id);
        }
        let Some(path) = revision.last_path() else { return Ok(None) };
        let row = sqlx::query(concat!(
            select_revisions!(),
            "WHERE (r.path_after = ?1 OR r.path_before = ?1) AND r.id > ?2 AND r.entry_id IS NOT NULL \
             ORDER BY r.id LIMIT 1"
        ))
        .bind(path.to_string())
        .bind(id)
        .fetch_optional(&self.pool)
        .await
        .map_err(db("cannot read history"))?;
        let Some(next) = row.as_ref().map(revision_from_row).transpose()? else { return Ok(None) };
        let Some(entry_id) = next.entry_id.filter(|_| next.path_before.as_ref() == Some(path)) else {
            return Ok(None);
        };
        let oldest: Option<i64> = sqlx::query_scalar("SELECT MIN(id) FROM revisions WHERE entry_id = ?")
            .bind(&entry_id)
            .fetch_one(&self.pool)
            .await
            .map_err(db("cannot read history"))?;
        Ok((oldest == Some(next.id)).then_some(entry_id))
    }

    /// See [`kb_domain::RevisionLog::revision`].
    pub async fn revision(&self, id: i64) -> Result<Option<Revision>, HistoryError> {
        Ok(self.revisions_by_id(&[id]).await?.into_iter().next())
    }

    /// See [`kb_domain::RevisionLog::content`].
    pub async fn content(&self, hash: &ContentHash) -> Result<Option<Vec<u8>>, HistoryError> {
        sqlx::query_scalar("SELECT bytes FROM blobs WHERE hash = ?")
            .bind(&hash.0)
            .fetch_optional(&self.pool)
            .await
            .map_err(db("cannot read a stored file"))
    }

    /// See [`kb_domain::RevisionLog::last_undoable`].
    pub async fn last_undoable(&self, scope: &UndoScope) -> Result<Vec<Revision>, HistoryError> {
        let operation: Option<i64> = match scope {
            UndoScope::Anyone => {
                sqlx::query_scalar(concat!(
                    "SELECT o.id FROM operations o WHERE ",
                    undoable!(),
                    " ORDER BY o.id DESC LIMIT 1"
                ))
                .fetch_optional(&self.pool)
                .await
            }
            UndoScope::Conversation(id) => {
                sqlx::query_scalar(concat!(
                    "SELECT o.id FROM operations o WHERE o.conversation_id = ? AND ",
                    undoable!(),
                    " ORDER BY o.id DESC LIMIT 1"
                ))
                .bind(id.as_str())
                .fetch_optional(&self.pool)
                .await
            }
            UndoScope::Session(session) => {
                sqlx::query_scalar(concat!(
                    "SELECT o.id FROM operations o WHERE o.session = ? AND ",
                    undoable!(),
                    " ORDER BY o.id DESC LIMIT 1"
                ))
                .bind(session.as_str())
                .fetch_optional(&self.pool)
                .await
            }
        }
        .map_err(db("cannot read history"))?;
        let Some(operation) = operation else { return Ok(Vec::new()) };
        let rows = sqlx::query(concat!(select_revisions!(), "WHERE r.operation = ? ORDER BY r.id"))
            .bind(operation)
            .fetch_all(&self.pool)
            .await
            .map_err(db("cannot read history"))?;
        rows.iter().map(revision_from_row).collect()
    }

    async fn revisions_by_id(&self, ids: &[i64]) -> Result<Vec<Revision>, HistoryError> {
        let mut found = Vec::with_capacity(ids.len());
        for id in ids {
            let row = sqlx::query(concat!(select_revisions!(), "WHERE r.id = ?"))
                .bind(id)
                .fetch_optional(&self.pool)
                .await
                .map_err(db("cannot read history"))?;
            if let Some(row) = row {
                found.push(revision_from_row(&row)?);
            }
        }
        Ok(found)
    }
}

/// The entry id of the latest revision at `path` (either side), when it has one.
async fn last_id_at(
    connection: &mut sqlx::SqliteConnection,
    path: &EntryPath,
) -> Result<Option<String>, HistoryError> {
    let id: Option<Option<String>> = sqlx::query_scalar(
        "SELECT entry_id FROM revisions WHERE id = (SELECT MAX(id) FROM revisions \
         WHERE path_after = ?1 OR path_before = ?1)",
    )
    .bind(path.to_string())
    .fetch_optional(&mut *connection)
    .await
    .map_err(db("cannot read history"))?;
    Ok(id.flatten())
}

/// The entry id a change to the file at `path` whose bytes hold no `id` is recorded
/// under: the id last recorded at `path` when what history last recorded there is that
/// very file (`before`), so a file that lost its id line (a restore or an undo to a
/// version from before kb gave it one, an edit) stays in its entry's history; else none.
async fn continued_id(
    tx: &mut Transaction<'_, Sqlite>,
    path: &EntryPath,
    before: Option<&ContentHash>,
) -> Result<Option<String>, HistoryError> {
    if before.is_none() || head_of(tx, path).await?.as_ref() != before {
        return Ok(None);
    }
    last_id_at(tx, path).await
}

/// The hash last recorded at `path`.
async fn head_of(
    tx: &mut Transaction<'_, Sqlite>,
    path: &EntryPath,
) -> Result<Option<ContentHash>, HistoryError> {
    let hash: Option<String> = sqlx::query_scalar("SELECT hash FROM heads WHERE path = ?")
        .bind(path.to_string())
        .fetch_optional(&mut **tx)
        .await
        .map_err(db("cannot read history's heads"))?;
    Ok(hash.map(ContentHash))
}

/// Stores `content`'s bytes when new; its hash.
async fn store(
    tx: &mut Transaction<'_, Sqlite>,
    content: Content,
) -> Result<Option<ContentHash>, HistoryError> {
    match content {
        Content::None => Ok(None),
        Content::Stored(hash) => Ok(Some(hash)),
        Content::Bytes(bytes) => {
            let hash = content_hash(&bytes);
            sqlx::query("INSERT OR IGNORE INTO blobs (hash, bytes) VALUES (?, ?)")
                .bind(&hash.0)
                .bind(bytes)
                .execute(&mut **tx)
                .await
                .map_err(db("cannot store a file's content"))?;
            Ok(Some(hash))
        }
    }
}

/// Writes an operation and its revisions, moving the heads; the revisions' ids.
async fn write_operation(
    tx: &mut Transaction<'_, Sqlite>,
    at: DateTime<Utc>,
    by: &ChangeContext,
    reverts: Option<i64>,
    changes: impl Iterator<Item = Pending>,
) -> Result<Vec<i64>, HistoryError> {
    let operation = sqlx::query(
        "INSERT INTO operations (at, source, tool, conversation_id, session, reverts) VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(format_time(at))
    .bind(by.source.as_str())
    .bind(by.tool.as_deref())
    .bind(by.conversation_id.as_ref().map(|id| id.as_str()))
    .bind(by.session.as_deref())
    .bind(reverts)
    .execute(&mut **tx)
    .await
    .map_err(db("cannot record an operation"))?
    .last_insert_rowid();
    let mut ids = Vec::new();
    for change in changes {
        let before = store(tx, change.before).await?;
        let after = store(tx, change.after).await?;
        let entry_id = match (change.entry_id, &change.path_before) {
            (None, Some(path)) => continued_id(tx, path, before.as_ref()).await?,
            (id, _) => id,
        };
        let path_before = change.path_before.as_ref().map(ToString::to_string);
        let path_after = change.path_after.as_ref().map(ToString::to_string);
        let id = sqlx::query(
            "INSERT INTO revisions (operation, description, entry_id, path_before, path_after, before_hash, after_hash) \
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(operation)
        .bind(&change.description)
        .bind(entry_id.as_deref())
        .bind(path_before.as_deref())
        .bind(path_after.as_deref())
        .bind(before.as_ref().map(|h| h.0.as_str()))
        .bind(after.as_ref().map(|h| h.0.as_str()))
        .execute(&mut **tx)
        .await
        .map_err(db("cannot record a revision"))?
        .last_insert_rowid();
        if let Some(old) = path_before.as_deref().filter(|old| Some(*old) != path_after.as_deref()) {
            sqlx::query("DELETE FROM heads WHERE path = ?")
                .bind(old)
                .execute(&mut **tx)
                .await
                .map_err(db("cannot move history's heads"))?;
        }
        if let (Some(path), Some(hash)) = (path_after.as_deref(), after.as_ref()) {
            sqlx::query(
                "INSERT INTO heads (path, hash) VALUES (?1, ?2) ON CONFLICT (path) DO UPDATE SET hash = ?2",
            )
            .bind(path)
            .bind(&hash.0)
            .execute(&mut **tx)
            .await
            .map_err(db("cannot move history's heads"))?;
        }
        ids.push(id);
    }
    Ok(ids)
}

/// A revision from a row of [`REVISION_COLUMNS`].
fn revision_from_row(row: &SqliteRow) -> Result<Revision, HistoryError> {
    let text = |i: usize| -> Result<Option<String>, HistoryError> {
        row.try_get::<Option<String>, _>(i).map_err(db("unreadable revision"))
    };
    let path = |i: usize| -> Result<Option<EntryPath>, HistoryError> {
        text(i)?
            .map(|p| {
                EntryPath::parse(&p).map_err(|e| HistoryError::database(format!("unreadable path {p:?}"), e))
            })
            .transpose()
    };
    let at_text: String = row.try_get(2).map_err(db("unreadable revision"))?;
    let at = DateTime::parse_from_rfc3339(&at_text)
        .map_err(|e| HistoryError::database(format!("unreadable time {at_text:?}"), e))?
        .with_timezone(&Utc);
    let source_text: String = row.try_get(3).map_err(db("unreadable revision"))?;
    let source = ChangeSource::parse(&source_text)
        .ok_or_else(|| HistoryError::database_message(format!("unreadable source {source_text:?}")))?;
    Ok(Revision {
        id: row.try_get(0).map_err(db("unreadable revision"))?,
        operation: row.try_get(1).map_err(db("unreadable revision"))?,
        at,
        source,
        tool: text(4)?,
        conversation_id: text(5)?.map(ConversationId::new),
        description: row.try_get(6).map_err(db("unreadable revision"))?,
        entry_id: text(7)?,
        path_before: path(8)?,
        path_after: path(9)?,
        before: text(10)?.map(ContentHash),
        after: text(11)?.map(ContentHash),
        reverts: row.try_get(12).map_err(db("unreadable revision"))?,
    })
}
