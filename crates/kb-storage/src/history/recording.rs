//! Recording in history: an operation and its revisions written in one transaction, each
//! file's bytes stored once under their SHA-256, and the `heads` (what was last recorded
//! at each path) moved with them; the mail a change files marked filed with them.

use chrono::{DateTime, SubsecRound, Utc};
use kb_domain::{ChangeContext, ContentHash, EntryPath, FileChange, HistoryError, Revision};
use sha2::{Digest, Sha256};
use sqlx::{Sqlite, Transaction};

use super::store::db;
use crate::conversations::rows::format_time;

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
pub(super) enum Content {
    /// No file.
    None,
    /// Bytes, stored when new.
    Bytes(Vec<u8>),
    /// Bytes already stored.
    Stored(ContentHash),
}

/// One revision being written.
pub(super) struct Pending {
    /// The entry it is of, when known.
    pub(super) entry_id: Option<String>,
    /// Where the file was (`None`: it is new).
    pub(super) path_before: Option<EntryPath>,
    /// Where the file is (`None`: it is gone).
    pub(super) path_after: Option<EntryPath>,
    /// The file before.
    pub(super) before: Content,
    /// The file after.
    pub(super) after: Content,
    /// One line saying what changed.
    pub(super) description: String,
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

/// The entry id of the latest revision at `path` (either side), when it has one.
pub(super) async fn last_id_at(
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
pub(super) async fn head_of(
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

/// The person an operation names: who asked, the local owner when no one is named, and
/// no one for a change kb noticed or a sync brought.
fn person_of(by: &ChangeContext) -> Option<&str> {
    match by.source {
        kb_domain::ChangeSource::Outside | kb_domain::ChangeSource::Sync => None,
        _ => Some(by.person.as_deref().unwrap_or(kb_domain::people::LOCAL_PERSON)),
    }
}

/// Writes an operation and its revisions, moving the heads; the revisions as they now
/// read from the database (made here: reading them back was a query per revision).
pub(super) async fn write_operation(
    tx: &mut Transaction<'_, Sqlite>,
    at: DateTime<Utc>,
    by: &ChangeContext,
    reverts: Option<i64>,
    changes: impl Iterator<Item = Pending>,
) -> Result<Vec<Revision>, HistoryError> {
    // Stored to the microsecond.
    let at = at.trunc_subsecs(6);
    let operation = sqlx::query(
        "INSERT INTO operations (at, source, tool, conversation_id, session, reverts, device, person) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(format_time(at))
    .bind(by.source.as_str())
    .bind(by.tool.as_deref())
    .bind(by.conversation_id.as_ref().map(|id| id.as_str()))
    .bind(by.session.as_deref())
    .bind(reverts)
    .bind(by.device.as_deref())
    .bind(person_of(by))
    .execute(&mut **tx)
    .await
    .map_err(db("cannot record an operation"))?
    .last_insert_rowid();
    if let Some(claim) = &by.claim {
        sqlx::query("UPDATE mail_claims SET operation = ? WHERE message = ?")
            .bind(operation)
            .bind(claim)
            .execute(&mut **tx)
            .await
            .map_err(db("cannot mark a mail filed"))?;
    }
    let mut revisions = Vec::new();
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
        revisions.push(Revision {
            id,
            operation,
            at,
            source: by.source,
            tool: by.tool.clone(),
            conversation_id: by.conversation_id.clone(),
            device: by.device.clone(),
            person: person_of(by).map(str::to_string),
            description: change.description,
            entry_id,
            path_before: change.path_before,
            path_after: change.path_after,
            before,
            after,
            reverts,
        });
    }
    Ok(revisions)
}
