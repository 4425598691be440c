//! [`SqliteHistory`]: revision history in kb's SQLite database (`migrations/0003`), async
//! on sqlx. Each blob is stored once under its SHA-256; an operation and its revisions are
//! written in one transaction, which also moves the `heads` (what was last recorded at
//! each path). Every query is by index, so recording costs the same in any vault.

use chrono::{DateTime, Utc};
use kb_domain::{
    ChangeContext, ChangeSource, ContentHash, ConversationId, EntryPath, FileChange, HistoryError,
    ObservedFile, Revision, StoreError, UndoScope,
};
use sqlx::Row;
use sqlx::sqlite::{SqlitePool, SqliteRow};

use super::recording::{Content, Pending, content_hash, head_of, last_id_at, write_operation};

/// How a transaction that reads then writes begins: holding the write lock from the start.
const WRITE_TRANSACTION: &str = "BEGIN IMMEDIATE";

/// Selects revisions joined with their operation, with the columns in the order
/// `revision_from_row` reads them (a macro so queries stay `&'static str` through
/// `concat!`).
macro_rules! select_revisions {
    () => {
        "SELECT r.id, r.operation, o.at, o.source, o.tool, o.conversation_id, r.description, \
         r.entry_id, r.path_before, r.path_after, r.before_hash, r.after_hash, o.reverts, o.device, o.person \
         FROM revisions r JOIN operations o ON o.id = r.operation "
    };
}

/// Operations kb made that may still be undone.
macro_rules! undoable {
    () => {
        "o.source NOT IN ('outside', 'sync') AND o.reverts IS NULL \
         AND NOT EXISTS (SELECT 1 FROM operations u WHERE u.reverts = o.id)"
    };
}

/// Maps a database error to history's, saying what was being done.
pub(super) fn db(doing: &'static str) -> impl Fn(sqlx::Error) -> HistoryError {
    move |err| HistoryError::database(doing, err)
}

/// Maps the database's opening error to history's.
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
        let revisions =
            write_operation(&mut tx, at, by, reverts, changes.into_iter().map(Pending::from)).await?;
        tx.commit().await.map_err(db("cannot record the change"))?;
        Ok(revisions)
    }

    /// See [`kb_domain::RevisionLog::retract`].
    pub async fn retract(&self, revisions: &[Revision]) -> Result<(), HistoryError> {
        if revisions.is_empty() {
            return Ok(());
        }
        let mut tx =
            self.pool.begin_with(WRITE_TRANSACTION).await.map_err(db("cannot begin taking a change back"))?;
        super::retraction::retract_revisions(&mut tx, revisions).await?;
        tx.commit().await.map_err(db("cannot take a change back"))?;
        Ok(())
    }

    /// See [`kb_domain::RevisionLog::observe`].
    pub async fn observe(
        &self,
        at: DateTime<Utc>,
        files: Vec<ObservedFile>,
    ) -> Result<Vec<Revision>, HistoryError> {
        self.observe_on(at, files, None).await
    }

    /// [`SqliteHistory::observe`] on device `here` (a synced vault's): the outside edits it
    /// records name it.
    pub async fn observe_on(
        &self,
        at: DateTime<Utc>,
        files: Vec<ObservedFile>,
        here: Option<String>,
    ) -> Result<Vec<Revision>, HistoryError> {
        if files.is_empty() {
            return Ok(Vec::new());
        }
        // IMMEDIATE: the write lock is taken at the start (waiting up to the busy timeout), so
        // a read-then-write never fails with SQLITE_BUSY_SNAPSHOT when another process wrote
        // in between.
        let mut tx = self.pool.begin_with(WRITE_TRANSACTION).await.map_err(db("cannot begin recording"))?;
        // One operation for the changes from outside kb, and one for each device a sync
        // brought changes from.
        let mut pending: Vec<(Option<String>, Vec<Pending>)> = Vec::new();
        for file in files {
            let head = head_of(&mut tx, &file.path).await?;
            let now = file.bytes.as_deref().map(content_hash);
            if head == now {
                continue;
            }
            let origin = match &file.pulled_from {
                Some(device) => format!("by sync from {device}"),
                None => "outside kb".to_string(),
            };
            let description = match (&head, &now) {
                (None, _) => format!("{} appeared {origin}", file.path),
                (Some(_), None) => format!("{} was removed {origin}", file.path),
                (Some(_), Some(_)) => format!("{} was edited {origin}", file.path),
            };
            // A file removed outside kb is the removal of the entry history last saw there.
            let entry_id = match (file.entry_id, &file.bytes) {
                (None, None) => last_id_at(&mut tx, &file.path).await?,
                (id, _) => id,
            };
            let change = Pending {
                entry_id,
                path_before: head.is_some().then(|| file.path.clone()),
                path_after: file.bytes.is_some().then(|| file.path.clone()),
                before: head.map_or(Content::None, Content::Stored),
                after: file.bytes.map_or(Content::None, Content::Bytes),
                description,
            };
            match pending.iter_mut().find(|(device, _)| *device == file.pulled_from) {
                Some((_, changes)) => changes.push(change),
                None => pending.push((file.pulled_from, vec![change])),
            }
        }
        if pending.is_empty() {
            return Ok(Vec::new());
        }
        let mut revisions = Vec::new();
        for (device, changes) in pending {
            let by = device.map_or_else(
                || ChangeContext { device: here.clone(), ..ChangeContext::outside() },
                ChangeContext::synced_from,
            );
            revisions.extend(write_operation(&mut tx, at, &by, None, changes.into_iter()).await?);
        }
        tx.commit().await.map_err(db("cannot record outside changes"))?;
        Ok(revisions)
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
            UndoScope::Person(person) => {
                sqlx::query_scalar(concat!(
                    "SELECT o.id FROM operations o WHERE o.person = ? AND ",
                    undoable!(),
                    " ORDER BY o.id DESC LIMIT 1"
                ))
                .bind(person.as_str())
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

/// A revision from a row selected by `select_revisions!`.
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
        device: text(13)?,
        person: text(14)?,
    })
}
