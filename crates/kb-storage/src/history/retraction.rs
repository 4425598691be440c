//! Taking back revisions just recorded for changes that then could not be made (the disk
//! refused the write): the revisions go, their operation with them once it has none left,
//! and each path they touched gets back the head its latest remaining revision gives it,
//! so history again says what the files hold and an undo never reaches for a change that
//! did not happen.

use sqlx::{Sqlite, Transaction};

use kb_domain::{HistoryError, Revision};

use super::store::db;

/// Removes `revisions` (and each of their operations left without any) and puts back the
/// heads of the paths they touched. The caller holds the vault's write lock: nothing was
/// recorded after them.
pub(super) async fn retract_revisions(
    tx: &mut Transaction<'_, Sqlite>,
    revisions: &[Revision],
) -> Result<(), HistoryError> {
    for revision in revisions {
        sqlx::query("DELETE FROM revisions WHERE id = ?")
            .bind(revision.id)
            .execute(&mut **tx)
            .await
            .map_err(db("cannot take back a revision"))?;
    }
    let mut operations: Vec<i64> = revisions.iter().map(|r| r.operation).collect();
    operations.sort_unstable();
    operations.dedup();
    for operation in operations {
        sqlx::query(
            "DELETE FROM operations WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM revisions WHERE operation = ?1)",
        )
        .bind(operation)
        .execute(&mut **tx)
        .await
        .map_err(db("cannot take back a change"))?;
    }
    let mut paths: Vec<String> = revisions
        .iter()
        .flat_map(|r| [&r.path_before, &r.path_after])
        .flatten()
        .map(ToString::to_string)
        .collect();
    paths.sort();
    paths.dedup();
    for path in paths {
        put_head_back(tx, &path).await?;
    }
    Ok(())
}

/// Sets the head of `path` from its latest remaining revision: a file is there when that
/// revision left one there.
async fn put_head_back(tx: &mut Transaction<'_, Sqlite>, path: &str) -> Result<(), HistoryError> {
    let latest: Option<(Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT path_after, after_hash FROM revisions WHERE path_after = ?1 OR path_before = ?1 \
         ORDER BY id DESC LIMIT 1",
    )
    .bind(path)
    .fetch_optional(&mut **tx)
    .await
    .map_err(db("cannot read history's heads"))?;
    let query = match latest {
        Some((Some(at), Some(hash))) if at == path => sqlx::query(
            "INSERT INTO heads (path, hash) VALUES (?1, ?2) ON CONFLICT (path) DO UPDATE SET hash = ?2",
        )
        .bind(path.to_string())
        .bind(hash),
        _ => sqlx::query("DELETE FROM heads WHERE path = ?").bind(path.to_string()),
    };
    query.execute(&mut **tx).await.map_err(db("cannot put history's heads back"))?;
    Ok(())
}
