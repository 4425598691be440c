//! Which kb processes have the index open: each holds a shared lock on `kb-open.lock` in
//! the index folder for as long as it has the index open. Only a process that gets the
//! lock exclusively (no other process has the index open) may clear the folder and
//! rebuild; it then keeps the lock shared like everyone else.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::Path;

/// The lock file's name inside the index folder (never removed by a rebuild).
pub(crate) const PRESENCE_FILE: &str = "kb-open.lock";

/// This process's hold on the index folder.
#[derive(Debug)]
pub(crate) struct Presence {
    file: File,
    /// Whether no other process had the index open when this one joined.
    pub(crate) alone: bool,
}

impl Presence {
    /// Joins the processes using the index in `dir`: exclusively when none is there,
    /// otherwise shared (waiting while another process rebuilds). Where the filesystem
    /// has no locks, the process counts as alone, as before locks existed.
    pub(crate) fn join(dir: &Path) -> io::Result<Presence> {
        let file =
            OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(PRESENCE_FILE))?;
        let alone = match file.try_lock() {
            Ok(()) => true,
            Err(TryLockError::WouldBlock) => {
                file.lock_shared()?;
                false
            }
            Err(TryLockError::Error(e)) => {
                tracing::warn!(error = %e, "the index folder cannot be locked; other kb processes are not seen");
                true
            }
        };
        Ok(Presence { file, alone })
    }

    /// Lets other processes join once the index is ready (the exclusive hold becomes a
    /// shared one).
    pub(crate) fn share(&self) -> io::Result<()> {
        if self.alone { self.file.lock_shared() } else { Ok(()) }
    }
}
