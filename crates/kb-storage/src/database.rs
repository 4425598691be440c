//! Opening kb's SQLite database: one file (`DATABASE_URL`, by default `.kb/kb.sqlite`)
//! holding conversations and revision history, in WAL mode (synchronous NORMAL) with a
//! busy timeout so several kb processes share it, its schema (`migrations/`) embedded and applied at connection.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use kb_domain::StoreError;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

/// The schema, embedded at build time.
static MIGRATOR: Migrator = sqlx::migrate!("./migrations");

/// How long a connection waits for another writer before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Connections of a file database (SQLite has one writer anyway).
const MAX_CONNECTIONS: u32 = 4;

/// Opens the database at `url` (`sqlite://path/kb.sqlite` or `sqlite::memory:`), creating
/// the file and its folder when missing, and applies the migrations.
pub(crate) async fn connect(url: &str) -> Result<SqlitePool, StoreError> {
    // sqlx would take anything else (`postgres://…`) for a file name.
    if !url.starts_with("sqlite:") {
        return Err(StoreError::Database(format!(
            "unsupported database url {url:?}: only sqlite:// urls are supported"
        )));
    }
    let options = SqliteConnectOptions::from_str(url)
        .map_err(|err| StoreError::Database(format!("invalid database url {url:?}: {err}")))?;
    let in_memory = url.contains(":memory:") || url.contains("mode=memory");
    connect_with(options, in_memory).await
}

/// Opens (or creates) the default database of a kb folder, `{kb_dir}/.kb/kb.sqlite`.
pub(crate) async fn open_in(kb_dir: &Path) -> Result<SqlitePool, StoreError> {
    let options = SqliteConnectOptions::new().filename(kb_dir.join(".kb").join("kb.sqlite"));
    connect_with(options, false).await
}

#[tracing::instrument(skip(options))]
async fn connect_with(options: SqliteConnectOptions, in_memory: bool) -> Result<SqlitePool, StoreError> {
    let mut options = options.create_if_missing(true).foreign_keys(true).busy_timeout(BUSY_TIMEOUT);
    let mut pool = SqlitePoolOptions::new();
    if in_memory {
        // Each connection to `:memory:` would see its own database: keep exactly one, forever.
        pool = pool.max_connections(1).min_connections(1).idle_timeout(None).max_lifetime(None);
    } else {
        // In WAL mode NORMAL syncs at checkpoints, not at every commit: a power cut may
        // lose the last commits but never corrupts the database.
        options = options.journal_mode(SqliteJournalMode::Wal).synchronous(SqliteSynchronous::Normal);
        if let Some(folder) = options.get_filename().parent()
            && !folder.as_os_str().is_empty()
        {
            tokio::fs::create_dir_all(folder).await.map_err(|err| {
                StoreError::Database(format!("cannot create folder {}: {err}", folder.display()))
            })?;
        }
        pool = pool.max_connections(MAX_CONNECTIONS);
    }
    let pool = pool
        .connect_with(options)
        .await
        .map_err(|err| StoreError::Database(format!("cannot open the database: {err}")))?;
    MIGRATOR
        .run(&pool)
        .await
        .map_err(|err| StoreError::Database(format!("cannot apply migrations: {err}")))?;
    Ok(pool)
}
