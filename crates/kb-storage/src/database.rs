//! Opening kb's SQLite database: one file (`DATABASE_URL`, by default `.kb/kb.sqlite`)
//! holding conversations, revision history and outreach, in WAL mode (synchronous NORMAL)
//! with a busy timeout so several kb processes share it, its schema (`migrations/`)
//! embedded and applied at connection.
//!
//! The write-ahead log is copied into the database file (checkpointed) by a thread of its
//! own ([`Checkpoints`]), never by the write that happens to fill it: a checkpoint writes
//! and syncs megabytes, and the capture that met one waited for that. Once checkpointed,
//! the log file is cut back to [`WAL_SIZE_LIMIT`]: a process opening the database after one
//! that exited without closing it (a command does, to exit at once) reads the whole log to
//! recover it, and a log left at the 1.8 GB a first start of 100,000 entries wrote cost
//! every later command about 0.9 s. A command ends before that thread's first round: the
//! conversation store empties a grown log as it closes ([`empty_the_log`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Mutex, Weak, mpsc};
use std::time::Duration;

use kb_domain::StoreError;
use kb_domain::sync::lock;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection};

/// The schema, embedded at build time.
static MIGRATOR: Migrator = sqlx::migrate!("./migrations");

/// The schema of a kb server's own database (`server.sqlite`: people, tokens, vaults and
/// grants), embedded at build time.
static SERVER_MIGRATOR: Migrator = sqlx::migrate!("./migrations_server");

/// Held while a store of this process opens the database and applies the migrations (the
/// history, the conversations and outreach connect at the same time).
static CONNECTING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// How long a connection waits for another writer before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The most the write-ahead log file keeps once checkpointed (SQLite's
/// `journal_size_limit`), in bytes.
const WAL_SIZE_LIMIT: u64 = 32 * 1024 * 1024;

/// Connections of a file database (SQLite has one writer anyway).
const MAX_CONNECTIONS: u32 = 4;

/// The most of the write-ahead log a closing store leaves for the next process to read (see
/// [`empty_the_log`]), in bytes: a few dozen captures.
const LOG_KEPT_AT_CLOSE: u64 = 1024 * 1024;

/// How often the write-ahead log is checkpointed while the database is open.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(500);

/// An open database: its pool, and the thread checkpointing its log while it is open.
pub(crate) struct Database {
    pub(crate) pool: SqlitePool,
    pub(crate) checkpoints: Option<Checkpoints>,
    /// The database's file (`None` in memory): what sits beside it is shared by every
    /// process that opens it.
    pub(crate) file: Option<PathBuf>,
}

/// The thread that checkpoints a database's write-ahead log every [`CHECKPOINT_EVERY`]
/// (a passive checkpoint: it never waits for, nor holds up, a reader or a writer). It
/// stops when the last clone of this is dropped; the last connection to close
/// checkpoints what is left.
#[derive(Debug, Clone)]
pub(crate) struct Checkpoints {
    /// Hung up when the last clone is dropped.
    _running: Arc<mpsc::Sender<()>>,
}

impl Checkpoints {
    /// The checkpoints of the database `options` open: the thread already running for
    /// that file in this process, or a new one on a connection of its own. `None` when no
    /// thread can be started (the connections then checkpoint as SQLite does by default).
    fn start(options: &SqliteConnectOptions) -> Option<Checkpoints> {
        static RUNNING: Mutex<BTreeMap<PathBuf, Weak<mpsc::Sender<()>>>> = Mutex::new(BTreeMap::new());
        let file = options.get_filename().to_path_buf();
        let mut running = lock(&RUNNING);
        running.retain(|_, thread| thread.strong_count() > 0);
        if let Some(thread) = running.get(&file).and_then(Weak::upgrade) {
            return Some(Checkpoints { _running: thread });
        }
        let (thread, stopped) = mpsc::channel::<()>();
        let options = options.clone();
        let started = std::thread::Builder::new()
            .name("kb-db-checkpoint".into())
            .spawn(move || checkpoint_until_stopped(options, &stopped));
        match started {
            Ok(_) => {
                let thread = Arc::new(thread);
                running.insert(file, Arc::downgrade(&thread));
                Some(Checkpoints { _running: thread })
            }
            Err(error) => {
                tracing::warn!(%error, "could not start checkpointing the database apart");
                None
            }
        }
    }
}

/// The checkpoint thread: a passive checkpoint every [`CHECKPOINT_EVERY`] until `stopped`
/// hangs up. When a passive checkpoint has copied the whole log and the log file is larger
/// than [`WAL_SIZE_LIMIT`], the log is emptied (a `TRUNCATE` checkpoint that does not wait:
/// with anyone reading or writing it gives up, and is tried again at the next round).
/// SQLite cuts the log back only when a write starts it over: a process that wrote a burst
/// and then only read (a server after its first start, idle) left it whole for every later
/// command to read.
fn checkpoint_until_stopped(options: SqliteConnectOptions, stopped: &mpsc::Receiver<()>) {
    let wal = {
        let mut name = options.get_filename().as_os_str().to_owned();
        name.push("-wal");
        PathBuf::from(name)
    };
    // This connection never waits for another: a checkpoint that would is tried later.
    let options = options.busy_timeout(Duration::ZERO);
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return tracing::warn!(%error, "could not start checkpointing the database"),
    };
    runtime.block_on(async {
        // Opened at the first checkpoint, once the pool has made the database (and again
        // after a failure): opening it alongside the pool could find it locked.
        let mut connection: Option<SqliteConnection> = None;
        while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(CHECKPOINT_EVERY) {
            if connection.is_none() {
                connection = options
                    .connect()
                    .await
                    .inspect_err(
                        |error| tracing::debug!(%error, "could not open the database to checkpoint it"),
                    )
                    .ok();
            }
            let Some(open) = connection.as_mut() else { continue };
            // (whether it was blocked, frames in the log, frames copied)
            let passive = sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(PASSIVE)")
                .fetch_one(&mut *open)
                .await;
            match passive {
                Ok((_, frames, copied)) if frames > 0 && copied == frames => {
                    let large = std::fs::metadata(&wal).is_ok_and(|meta| meta.len() > WAL_SIZE_LIMIT);
                    if large
                        && let Err(error) = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(open).await
                    {
                        tracing::debug!(%error, "the log could not be emptied; tried again shortly");
                    }
                }
                Ok(_) => {}
                Err(error) => {
                    tracing::debug!(%error, "database checkpoint failed; tried again shortly");
                    connection = None;
                }
            }
        }
        if let Some(connection) = connection {
            let _ = connection.close().await;
        }
    });
}

/// Copies the write-ahead log into the database file and empties it once it holds more
/// than [`LOG_KEPT_AT_CLOSE`], unless another connection (another kb process) is using it;
/// never waits for one. SQLite leaves this to the last connection to close, but a command
/// exits without closing the history's: with no checkpoint ever run (see the module doc),
/// the log grew by every change of every command, and each process opening the database
/// read all of it to recover it.
pub(crate) async fn empty_the_log(pool: &SqlitePool) {
    let mut wal = pool.connect_options().get_filename().as_os_str().to_owned();
    wal.push("-wal");
    // A small log costs the next process little to read; copying it costs two disk syncs.
    if std::fs::metadata(&wal).map_or(true, |meta| meta.len() <= LOG_KEPT_AT_CLOSE) {
        return;
    }
    let Ok(mut connection) = pool.acquire().await else { return };
    // Its waiting is changed below: it does not go back to the pool.
    connection.close_on_drop();
    if sqlx::query("PRAGMA busy_timeout = 0").execute(&mut *connection).await.is_err() {
        return;
    }
    // (whether it was blocked, frames in the log, frames copied); in memory, no log.
    let passive = sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(PASSIVE)")
        .fetch_one(&mut *connection)
        .await;
    if let Ok((_, frames, copied)) = passive
        && frames > 0
        && copied == frames
        && let Err(error) = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut *connection).await
    {
        tracing::debug!(%error, "the log is in use; the next checkpoint empties it");
    }
}

/// Opens the database at `url` (`sqlite://path/kb.sqlite` or `sqlite::memory:`), creating
/// the file and its folder when missing, and applies the migrations.
pub(crate) async fn connect(url: &str) -> Result<Database, StoreError> {
    // sqlx would take anything else (`postgres://…`) for a file name.
    if !url.starts_with("sqlite:") {
        return Err(StoreError::database_message(format!(
            "unsupported database url {url:?}: only sqlite:// urls are supported"
        )));
    }
    let options = SqliteConnectOptions::from_str(url)
        .map_err(|err| StoreError::database(format!("invalid database url {url:?}"), err))?;
    let storage =
        if url.contains(":memory:") || url.contains("mode=memory") { Storage::Memory } else { Storage::File };
    connect_with(options, storage, &MIGRATOR).await
}

/// Opens (or creates) the default database of a kb folder, `{kb_dir}/.kb/kb.sqlite`.
pub(crate) async fn open_in(kb_dir: &Path) -> Result<Database, StoreError> {
    let options = SqliteConnectOptions::new().filename(kb_dir.join(".kb").join("kb.sqlite"));
    connect_with(options, Storage::File, &MIGRATOR).await
}

/// Opens (or creates) a kb server's own database, `{data_dir}/server.sqlite`.
pub(crate) async fn open_server(data_dir: &Path) -> Result<Database, StoreError> {
    std::fs::create_dir_all(data_dir)
        .map_err(|err| StoreError::database(format!("cannot make {}", data_dir.display()), err))?;
    let options = SqliteConnectOptions::new().filename(data_dir.join("server.sqlite"));
    connect_with(options, Storage::File, &SERVER_MIGRATOR).await
}

/// Where a database keeps its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Storage {
    /// In memory, for as long as the process runs (`sqlite::memory:`).
    Memory,
    /// In its file.
    File,
}

/// Opens the database of `options`, kept as `storage` says, and applies the migrations.
#[tracing::instrument(skip(options))]
async fn connect_with(
    options: SqliteConnectOptions,
    storage: Storage,
    migrator: &Migrator,
) -> Result<Database, StoreError> {
    let mut options = options.create_if_missing(true).foreign_keys(true).busy_timeout(BUSY_TIMEOUT);
    let mut pool = SqlitePoolOptions::new();
    let mut checkpoints = None;
    let file = (storage == Storage::File).then(|| options.get_filename().to_path_buf());
    if storage == Storage::Memory {
        // Each connection to `:memory:` would see its own database: keep exactly one, forever.
        pool = pool.max_connections(1).min_connections(1).idle_timeout(None).max_lifetime(None);
    } else {
        // In WAL mode NORMAL syncs at checkpoints, not at every commit: a power cut may
        // lose the last commits but never corrupts the database.
        options = options
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .pragma("journal_size_limit", WAL_SIZE_LIMIT.to_string());
        checkpoints = Checkpoints::start(&options);
        if checkpoints.is_some() {
            // The checkpoint thread does it (see the module doc).
            options = options.pragma("wal_autocheckpoint", "0");
        }
        if let Some(folder) = options.get_filename().parent()
            && !folder.as_os_str().is_empty()
        {
            tokio::fs::create_dir_all(folder).await.map_err(|err| {
                StoreError::database(format!("cannot create folder {}", folder.display()), err)
            })?;
        }
        pool = pool.max_connections(MAX_CONNECTIONS);
    }
    // Two stores connecting at once to a new database would both turn on its write-ahead
    // log (one finds it locked) and both apply the first migration (sqlx takes no lock for
    // SQLite's), and one would fail: in this process and in any other kb process on the
    // vault (`kb serve` and a `kb capture` started together on a new vault).
    let _one_at_a_time = CONNECTING.lock().await;
    let _one_process_at_a_time = match &file {
        Some(file) => Some(lock_opening(file).await?),
        None => None,
    };
    let pool = pool
        .connect_with(options)
        .await
        .map_err(|err| StoreError::database("cannot open the database", err))?;
    migrator.run(&pool).await.map_err(|err| StoreError::database("cannot apply migrations", err))?;
    Ok(Database { pool, checkpoints, file })
}

/// Waits for and takes the lock beside the database `file` (`NAME.open-lock`) that one
/// process holds while it opens and migrates the database; released when dropped.
async fn lock_opening(file: &Path) -> Result<std::fs::File, StoreError> {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".open-lock");
    let path = file.with_file_name(name);
    tokio::task::spawn_blocking(move || {
        let lock = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path)?;
        lock.lock()?;
        Ok::<_, std::io::Error>(lock)
    })
    .await
    .map_err(|err| StoreError::database_message(format!("cannot wait for the database: {err}")))?
    .map_err(|err| StoreError::database("cannot lock the database while it is opened", err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stores_connecting_at_once_to_a_new_database_all_open_it() {
        for round in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let url = format!("sqlite://{}", dir.path().join("kb.sqlite").display());
            let opened = connect_three_at_once(&url).await;
            for (store, result) in opened.iter().enumerate() {
                assert!(result.is_ok(), "round {round}, store {store}: {:?}", result.as_ref().err());
            }
        }
    }

    /// Three connections to `url` made at once, as a kb process makes its stores'.
    async fn connect_three_at_once(url: &str) -> Vec<Result<Database, StoreError>> {
        let (a, b, c) = tokio::join!(
            tokio::spawn(connect_owned(url.to_string())),
            tokio::spawn(connect_owned(url.to_string())),
            tokio::spawn(connect_owned(url.to_string()))
        );
        [a, b, c].into_iter().map(Result::unwrap).collect()
    }

    async fn connect_owned(url: String) -> Result<Database, StoreError> {
        connect(&url).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_log_is_cut_back_once_checkpointed_after_a_burst_of_writes() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("kb.sqlite");
        let database = connect(&format!("sqlite://{}", file.display())).await.unwrap();
        let pool = &database.pool;
        sqlx::query("CREATE TABLE burst (body BLOB)").execute(pool).await.unwrap();
        // A burst larger than the limit, as a first start recording every file writes.
        let chunk = vec![7u8; 1024 * 1024];
        let mut transaction = pool.begin().await.unwrap();
        for _ in 0..48 {
            sqlx::query("INSERT INTO burst (body) VALUES (?)")
                .bind(&chunk)
                .execute(&mut *transaction)
                .await
                .unwrap();
        }
        transaction.commit().await.unwrap();
        let wal = dir.path().join("kb.sqlite-wal");
        let size = || std::fs::metadata(&wal).map_or(0, |m| m.len());
        assert!(size() > WAL_SIZE_LIMIT, "the burst is in the log: {}", size());
        // Checkpointed and cut back in the background, with no write after the burst (a
        // server idle after its first start): SQLite alone would keep the log whole until
        // the next write.
        let began = std::time::Instant::now();
        while size() > WAL_SIZE_LIMIT && began.elapsed() < Duration::from_secs(20) {
            tokio::time::sleep(CHECKPOINT_EVERY).await;
        }
        assert!(size() <= WAL_SIZE_LIMIT, "the log stays at {} bytes", size());
        // The database holds the burst, and takes writes after.
        let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM burst").fetch_one(pool).await.unwrap();
        assert_eq!(rows, 48);
        sqlx::query("INSERT INTO burst (body) VALUES (x'00')").execute(pool).await.unwrap();
    }
}
