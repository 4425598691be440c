//! [`Recorder`]: where the vault records its changes — the revision log, when history is
//! kept, with the clock that dates each record. Without history every record is a no-op.

use std::path::PathBuf;
use std::sync::Arc;

use kb_domain::{
    ChangeContext, Clock, FileChange, HistoryError, ObservedFile, Recording, RepositoryError, Revision,
    RevisionLog,
};

use crate::history::content_hash;

/// The vault's revision log, when history is kept.
pub(crate) struct Recorder {
    /// The log (`None`: no history is kept).
    log: Option<Arc<dyn RevisionLog>>,
    /// Dates each record.
    clock: Arc<dyn Clock>,
    /// The vault's state folder (`.kb`), where sync says what it wrote.
    state_dir: PathBuf,
}

impl Recorder {
    /// Records in `log` (when there is one), dating records by `clock`, for the vault
    /// whose state folder is `state_dir`.
    pub(crate) fn new(
        log: Option<Arc<dyn RevisionLog>>,
        clock: Arc<dyn Clock>,
        state_dir: PathBuf,
    ) -> Recorder {
        Recorder { log, clock, state_dir }
    }

    /// Marks each of `files` that a sync wrote as it is now (same bytes, or still removed)
    /// with the device whose change it was.
    pub(crate) fn mark_pulled(&self, files: &mut [ObservedFile]) {
        let pulled = crate::sync::pulled::read(&self.state_dir);
        if pulled.is_empty() {
            return;
        }
        for file in files {
            if let Some(from) = pulled.get(&file.path.to_string())
                && from.hash == file.bytes.as_deref().map(content_hash)
            {
                file.pulled_from = Some(from.device.clone());
            }
        }
    }

    /// Whether history is kept.
    pub(crate) fn is_kept(&self) -> bool {
        self.log.is_some()
    }

    /// The history log, or the error saying there is none.
    pub(crate) fn log(&self) -> Result<&dyn RevisionLog, RepositoryError> {
        self.log.as_deref().ok_or(RepositoryError::History(HistoryError::Unavailable))
    }

    /// Records the changes of one operation made already, one that replaced or removed
    /// nothing (a capture, a restore that brought a file back beside another). A change
    /// that is made but cannot be recorded is logged, not undone: kb records it as an
    /// outside change when it next looks.
    pub(crate) fn record(
        &self,
        by: &ChangeContext,
        reverts: Option<i64>,
        changes: Vec<FileChange>,
    ) -> Vec<Revision> {
        let Some(log) = &self.log else { return Vec::new() };
        recorded(log.as_ref(), by, log.record(self.clock.now(), by, reverts, changes))
    }

    /// [`Recorder::record`] in turn: hands the changes to the log, to be recorded after
    /// whatever was handed over before, and returns at once (see
    /// [`RevisionLog::record_in_turn`]). The caller, holding the vault's write lock, lets the
    /// next change start, then waits with [`InTurn::wait`].
    pub(crate) fn record_in_turn(&self, by: &ChangeContext, changes: Vec<FileChange>) -> InTurn {
        let Some(log) = &self.log else { return InTurn { waiting: None } };
        let recording = log.record_in_turn(self.clock.now(), by, None, changes);
        if recording.is_done() {
            // A log that records at once may need its `written` before the next change.
            recorded(log.as_ref(), by, recording.wait());
            return InTurn { waiting: None };
        }
        InTurn { waiting: Some((recording, Arc::clone(log), by.clone())) }
    }

    /// Records the changes of one operation before any of its files is touched, for a
    /// change that removes or replaces a file: what it throws away is in history first,
    /// and a change that cannot be recorded is not made (the error says why). The caller
    /// calls [`Recorder::written`] once the files are on disk.
    pub(crate) fn record_first(
        &self,
        by: &ChangeContext,
        reverts: Option<i64>,
        changes: Vec<FileChange>,
    ) -> Result<Vec<Revision>, RepositoryError> {
        let Some(log) = &self.log else { return Ok(Vec::new()) };
        Ok(log.record(self.clock.now(), by, reverts, changes)?)
    }

    /// Takes back `revisions`, recorded by [`Recorder::record_first`] for a change none of
    /// whose files could then be written (see [`RevisionLog::retract`]). One that cannot
    /// be taken back is logged: the caller's look at the files then records what they hold.
    pub(crate) fn retract(&self, revisions: &[Revision]) {
        if let Some(log) = &self.log
            && !revisions.is_empty()
            && let Err(error) = log.retract(revisions)
        {
            tracing::error!(%error, "a change that was not made could not be taken out of history");
        }
    }

    /// Lets history know that the files of `revisions`, recorded by
    /// [`Recorder::record_first`], are on disk (a git commit is made now).
    pub(crate) fn written(&self, by: &ChangeContext, revisions: &[Revision]) {
        if let Some(log) = &self.log {
            log.written(by, revisions);
        }
    }

    /// Records, as changes from outside kb, the files among `files` that differ from what
    /// history last recorded. The caller holds the vault's write lock, so no change kb is
    /// making (in any process) is half-recorded meanwhile.
    pub(crate) fn observe(&self, mut files: Vec<ObservedFile>) {
        let Some(log) = &self.log else { return };
        if files.is_empty() {
            return;
        }
        self.mark_pulled(&mut files);
        match log.observe(self.clock.now(), files) {
            Ok(revisions) if !revisions.is_empty() => {
                tracing::info!(changes = revisions.len(), "recorded changes made outside kb");
            }
            Ok(_) => {}
            Err(error) => tracing::error!(%error, "could not record changes made outside kb"),
        }
    }
}

/// A change handed to history in turn ([`Recorder::record_in_turn`]), still to wait for.
#[must_use = "a change recorded in turn is in history only once waited for"]
pub(crate) struct InTurn {
    /// What is still to be waited for (`None`: recorded already, or no history is kept).
    waiting: Option<(Recording, Arc<dyn RevisionLog>, ChangeContext)>,
}

impl InTurn {
    /// Waits until the change is recorded; a change that could not be recorded is logged
    /// (see [`Recorder::record`]).
    pub(crate) fn wait(self) {
        if let Some((recording, log, by)) = self.waiting {
            recorded(log.as_ref(), &by, recording.wait());
        }
    }
}

/// The revisions `answer` recorded, told to `log` as written; none when it failed, which
/// is logged.
fn recorded(
    log: &dyn RevisionLog,
    by: &ChangeContext,
    answer: Result<Vec<Revision>, HistoryError>,
) -> Vec<Revision> {
    match answer {
        Ok(revisions) => {
            log.written(by, &revisions);
            revisions
        }
        Err(error) => {
            tracing::error!(%error, "a change was made but could not be recorded in history");
            Vec::new()
        }
    }
}
