//! [`HistoryLog`]: the [`RevisionLog`] port over [`SqliteHistory`]. The vault is
//! synchronous and may be called from any thread (a tokio blocking thread, a CLI's main
//! thread, a test), so the database is driven by one thread of its own running a small
//! tokio runtime; each call hands it a job and waits for the answer.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::sync::mpsc::{Sender, channel};

use chrono::{DateTime, Utc};
use kb_domain::{
    ChangeContext, ContentHash, EntryPath, FileChange, HistoryError, ObservedFile, Revision, RevisionLog,
    UndoScope,
};

use super::store::SqliteHistory;

/// A job for the history thread.
type Job = Box<dyn FnOnce(&SqliteHistory) -> Pin<Box<dyn Future<Output = ()> + '_>> + Send>;

/// Revision history, recorded synchronously (see the module doc).
#[derive(Debug)]
pub struct HistoryLog {
    jobs: Mutex<Sender<Job>>,
}

impl HistoryLog {
    /// Opens the history in the database at `url` (`sqlite://…`), on a thread of its own.
    pub fn connect(url: &str) -> Result<HistoryLog, HistoryError> {
        let url = url.to_string();
        HistoryLog::start(move || Box::pin(async move { SqliteHistory::connect(&url).await }))
    }

    /// Opens the history in the default database of a kb folder, `{kb_dir}/.kb/kb.sqlite`.
    pub fn open_in(kb_dir: &std::path::Path) -> Result<HistoryLog, HistoryError> {
        let dir = kb_dir.to_path_buf();
        HistoryLog::start(move || Box::pin(async move { SqliteHistory::open_in(&dir).await }))
    }

    fn start<F>(open: F) -> Result<HistoryLog, HistoryError>
    where
        F: FnOnce() -> Pin<Box<dyn Future<Output = Result<SqliteHistory, HistoryError>>>> + Send + 'static,
    {
        let (jobs, inbox) = channel::<Job>();
        let (opened, opening) = channel::<Result<(), HistoryError>>();
        std::thread::Builder::new()
            .name("kb-history".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = opened.send(Err(HistoryError::database("cannot start", e)));
                        return;
                    }
                };
                let store = match runtime.block_on(open()) {
                    Ok(store) => store,
                    Err(e) => {
                        let _ = opened.send(Err(e));
                        return;
                    }
                };
                let _ = opened.send(Ok(()));
                // Ends when the log is dropped (every sender gone).
                while let Ok(job) = inbox.recv() {
                    runtime.block_on(job(&store));
                }
                runtime.block_on(store.close());
            })
            .map_err(|e| HistoryError::database("cannot start the history thread", e))?;
        opening.recv().map_err(|_| HistoryError::database_message("the history thread stopped"))??;
        Ok(HistoryLog { jobs: Mutex::new(jobs) })
    }

    /// Runs `work` on the history thread and waits for its answer.
    fn call<T, W>(&self, work: W) -> Result<T, HistoryError>
    where
        T: Send + 'static,
        W: for<'a> FnOnce(&'a SqliteHistory) -> Pin<Box<dyn Future<Output = Result<T, HistoryError>> + 'a>>
            + Send
            + 'static,
    {
        let (answer, answered) = channel();
        let job: Job = Box::new(move |store| {
            Box::pin(async move {
                let _ = answer.send(work(store).await);
            })
        });
        kb_domain::sync::lock(&self.jobs)
            .send(job)
            .map_err(|_| HistoryError::database_message("the history thread stopped"))?;
        answered.recv().map_err(|_| HistoryError::database_message("the history thread stopped"))?
    }
}

impl RevisionLog for HistoryLog {
    fn record(
        &self,
        at: DateTime<Utc>,
        by: &ChangeContext,
        reverts: Option<i64>,
        changes: Vec<FileChange>,
    ) -> Result<Vec<Revision>, HistoryError> {
        let by = by.clone();
        self.call(move |store| Box::pin(async move { store.record(at, &by, reverts, changes).await }))
    }

    fn observe(&self, at: DateTime<Utc>, files: Vec<ObservedFile>) -> Result<Vec<Revision>, HistoryError> {
        self.call(move |store| Box::pin(async move { store.observe(at, files).await }))
    }

    fn heads(&self) -> Result<Vec<(EntryPath, ContentHash)>, HistoryError> {
        self.call(|store| Box::pin(async move { store.heads().await }))
    }

    fn history(&self, path: &EntryPath, entry_id: Option<&str>) -> Result<Vec<Revision>, HistoryError> {
        let path = path.clone();
        let entry_id = entry_id.map(str::to_string);
        self.call(move |store| Box::pin(async move { store.history(&path, entry_id.as_deref()).await }))
    }

    fn last_path_of(&self, entry_id: &str) -> Result<Option<EntryPath>, HistoryError> {
        let entry_id = entry_id.to_string();
        self.call(move |store| Box::pin(async move { store.last_path_of(&entry_id).await }))
    }

    fn entry_of_revision(&self, id: i64) -> Result<Option<String>, HistoryError> {
        self.call(move |store| Box::pin(async move { store.entry_of_revision(id).await }))
    }

    fn revision(&self, id: i64) -> Result<Option<Revision>, HistoryError> {
        self.call(move |store| Box::pin(async move { store.revision(id).await }))
    }

    fn content(&self, hash: &ContentHash) -> Result<Option<Vec<u8>>, HistoryError> {
        let hash = hash.clone();
        self.call(move |store| Box::pin(async move { store.content(&hash).await }))
    }

    fn last_undoable(&self, scope: &UndoScope) -> Result<Vec<Revision>, HistoryError> {
        let scope = scope.clone();
        self.call(move |store| Box::pin(async move { store.last_undoable(&scope).await }))
    }
}
