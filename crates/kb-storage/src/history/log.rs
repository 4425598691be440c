//! [`HistoryLog`]: the [`RevisionLog`] port over [`SqliteHistory`]. The vault is
//! synchronous and may be called from any thread (a tokio blocking thread, a CLI's main
//! thread, a test), so the database is driven by one thread of its own running a small
//! tokio runtime; each call hands it a job and waits for the answer. Jobs run in the order
//! they are handed over, so a change handed over to be recorded in turn
//! ([`RevisionLog::record_in_turn`]) is in history before any later call reads it.

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};

use chrono::{DateTime, Utc};
use kb_domain::{
    ChangeContext, ContentHash, EntryPath, FileChange, HistoryError, ObservedFile, Recording, Revision,
    RevisionLog, UndoScope,
};

use super::store::SqliteHistory;

/// A job for the history thread.
type Job = Box<dyn FnOnce(&SqliteHistory) -> Pin<Box<dyn Future<Output = ()> + '_>> + Send>;

/// Revision history, recorded synchronously (see the module doc).
#[derive(Debug)]
pub struct HistoryLog {
    jobs: Mutex<Sender<Job>>,
    /// Why the store could not be opened, once the history thread knows.
    failure: Arc<OnceLock<Arc<HistoryError>>>,
    /// The device changes recorded here are made on, when the vault is synced.
    device: Option<String>,
}

impl HistoryLog {
    /// Opens the history in the database at `url` (`sqlite://…`), on a thread of its own:
    /// returns at once, while the database opens beside the caller's other work, and the
    /// first call waits for it. When it cannot be opened, every call fails with the reason.
    pub fn connect(url: &str) -> Result<HistoryLog, HistoryError> {
        let url = url.to_string();
        HistoryLog::start(move || Box::pin(async move { SqliteHistory::connect(&url).await }))
    }

    /// The same log, naming `device` in every change made here that names none (a synced
    /// vault's revisions say on which device each was made).
    pub fn on_device(self, device: impl Into<String>) -> HistoryLog {
        HistoryLog { device: Some(device.into()), ..self }
    }

    /// Opens the history in the default database of a kb folder, `{kb_dir}/.kb/kb.sqlite`,
    /// as [`HistoryLog::connect`] does.
    pub fn open_in(kb_dir: &std::path::Path) -> Result<HistoryLog, HistoryError> {
        let dir = kb_dir.to_path_buf();
        HistoryLog::start(move || Box::pin(async move { SqliteHistory::open_in(&dir).await }))
    }

    /// Starts the history thread, which opens the store with `open` and then runs the jobs
    /// it is handed, in order. Jobs handed over meanwhile wait for the store; when it
    /// cannot be opened, every call fails with the reason. Fails only when the thread
    /// cannot start.
    fn start<F>(open: F) -> Result<HistoryLog, HistoryError>
    where
        F: FnOnce() -> Pin<Box<dyn Future<Output = Result<SqliteHistory, HistoryError>>>> + Send + 'static,
    {
        let (jobs, inbox) = channel::<Job>();
        let failure: Arc<OnceLock<Arc<HistoryError>>> = Arc::default();
        let failed = Arc::clone(&failure);
        std::thread::Builder::new()
            .name("kb-history".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = failed.set(Arc::new(HistoryError::database("cannot start", e)));
                        return;
                    }
                };
                let store = match runtime.block_on(open()) {
                    Ok(store) => store,
                    Err(e) => {
                        // Set before the jobs waiting are dropped with the inbox.
                        let _ = failed.set(Arc::new(e));
                        return;
                    }
                };
                // Ends when the log is dropped (every sender gone).
                while let Ok(job) = inbox.recv() {
                    runtime.block_on(job(&store));
                }
                runtime.block_on(store.close());
            })
            .map_err(|e| HistoryError::database("cannot start the history thread", e))?;
        Ok(HistoryLog { jobs: Mutex::new(jobs), failure, device: None })
    }

    /// Why a call could not be answered: the store could not be opened, or its thread
    /// stopped.
    fn stopped(&self) -> HistoryError {
        stopped_because(&self.failure)
    }

    /// `by`, naming this log's device when it names none.
    fn on_this_device(&self, by: &ChangeContext) -> ChangeContext {
        let mut by = by.clone();
        if by.device.is_none() {
            by.device.clone_from(&self.device);
        }
        by
    }

    /// Runs `work` on the history thread and waits for its answer.
    fn call<T, W>(&self, work: W) -> Result<T, HistoryError>
    where
        T: Send + 'static,
        W: for<'a> FnOnce(&'a SqliteHistory) -> Pin<Box<dyn Future<Output = Result<T, HistoryError>> + 'a>>
            + Send
            + 'static,
    {
        let answered = self.hand_over(work)?;
        answered.recv().map_err(|_| self.stopped())?
    }

    /// Hands `work` to the history thread, to run after every job handed over before it;
    /// its answer comes on the channel returned.
    fn hand_over<T, W>(&self, work: W) -> Result<Receiver<Result<T, HistoryError>>, HistoryError>
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
        kb_domain::sync::lock(&self.jobs).send(job).map_err(|_| self.stopped())?;
        Ok(answered)
    }
}

/// Why a call could not be answered, as [`HistoryLog::stopped`] says, from the failure the
/// history thread set.
fn stopped_because(failure: &OnceLock<Arc<HistoryError>>) -> HistoryError {
    match failure.get() {
        Some(cause) => HistoryError::database("the history database could not be opened", Arc::clone(cause)),
        None => HistoryError::database_message("the history thread stopped"),
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
        let by = self.on_this_device(by);
        self.call(move |store| Box::pin(async move { store.record(at, &by, reverts, changes).await }))
    }

    fn record_in_turn(
        &self,
        at: DateTime<Utc>,
        by: &ChangeContext,
        reverts: Option<i64>,
        changes: Vec<FileChange>,
    ) -> Recording {
        let by = self.on_this_device(by);
        let handed = self
            .hand_over(move |store| Box::pin(async move { store.record(at, &by, reverts, changes).await }));
        match handed {
            Ok(answered) => {
                let failure = Arc::clone(&self.failure);
                Recording::waiting(move || answered.recv().map_err(|_| stopped_because(&failure))?)
            }
            Err(error) => Recording::done(Err(error)),
        }
    }

    fn retract(&self, revisions: &[Revision]) -> Result<(), HistoryError> {
        let revisions = revisions.to_vec();
        self.call(move |store| Box::pin(async move { store.retract(&revisions).await }))
    }

    fn observe(&self, at: DateTime<Utc>, files: Vec<ObservedFile>) -> Result<Vec<Revision>, HistoryError> {
        let here = self.device.clone();
        self.call(move |store| Box::pin(async move { store.observe_on(at, files, here).await }))
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_database_that_cannot_be_opened_fails_every_call_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        // The database's folder would be under a file.
        let file = dir.path().join("not-a-folder");
        std::fs::write(&file, "x").unwrap();
        let log = HistoryLog::connect(&format!("sqlite://{}/kb.sqlite", file.display())).unwrap();
        for _ in 0..2 {
            let error = log.heads().unwrap_err();
            let chain = kb_domain::Chain(&error).to_string();
            assert!(chain.contains("could not be opened"), "{chain}");
            assert!(chain.contains("cannot create folder"), "{chain}");
        }
    }
}
