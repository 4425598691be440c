//! Taking back an operation just recorded for a change that then could not be made (the
//! disk refused its first write): its revisions and the operation go, and each path it
//! touched gets back the head its latest remaining revision gives it, so history again
//! says what the files hold and an undo never reaches for a change that did not happen.

use sqlx::{Sqlite, Transaction};

use kb_domain::HistoryError;

use super::store::db;

/// Removes operation `operation` with its revisions and puts back the heads of the paths
/// they touched. The caller holds the vault's write lock: nothing was recorded after it.
pub(super) async fn retract_operation(
    tx: &mut Transaction<'_, Sqlite>,
    operation: i64,
) -> Result<(), HistoryError> {
    let touched: Vec<(Option<String>, Option<String>)> =
        sqlx::query_as("SELECT path_before, path_after FROM revisions WHERE operation = ?")
            .bind(operation)
            .fetch_all(&mut **tx)
            .await
            .map_err(db("cannot read the change to take back"))?;
    sqlx::query("DELETE FROM revisions WHERE operation = ?")
        .bind(operation)
        .execute(&mut **tx)
        .await
        .map_err(db("cannot take back a change's revisions"))?;
    sqlx::query("DELETE FROM operations WHERE id = ?")
        .bind(operation)
        .execute(&mut **tx)
        .await
        .map_err(db("cannot take back a change"))?;
    let mut paths: Vec<String> =
        touched.into_iter().flat_map(|(before, after)| [before, after]).flatten().collect();
    paths.sort();
    paths.dedup();
    for path in paths {
        // The path's latest remaining revision: a file is there when it left one there.
        let latest: Option<(Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT path_after, after_hash FROM revisions WHERE path_after = ?1 OR path_before = ?1 \
             ORDER BY id DESC LIMIT 1",
        )
        .bind(&path)
        .fetch_optional(&mut **tx)
        .await
        .map_err(db("cannot read history's heads"))?;
        match latest {
            Some((Some(at), Some(hash))) if at == path => {
                sqlx::query(
                    "INSERT INTO heads (path, hash) VALUES (?1, ?2) ON CONFLICT (path) DO UPDATE SET hash = ?2",
                )
                .bind(&path)
                .bind(&hash)
                .execute(&mut **tx)
                .await
                .map_err(db("cannot put history's heads back"))?;
            }
            _ => {
                sqlx::query("DELETE FROM heads WHERE path = ?")
                    .bind(&path)
                    .execute(&mut **tx)
                    .await
                    .map_err(db("cannot put history's heads back"))?;
            }
        }
    }
    Ok(())
}
