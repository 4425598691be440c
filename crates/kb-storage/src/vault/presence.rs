//! Which kb processes have the vault open: each holds a shared lock on `.kb/lock` while it
//! does. Finishing an interrupted move touches files another process may be moving right
//! now, so it runs only in a process that got the lock exclusively (no other kb process
//! has the vault open); that process then shares the lock like every other.
//!
//! Changes to entries are serialised between processes by [`WriteLock`] (`.kb/write.lock`,
//! held exclusively for the length of one change), so that two processes changing the same
//! entry never lose either change.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::Path;

/// The lock file's name inside `.kb/`.
const LOCK_FILE: &str = "lock";
/// The write lock's file name inside `.kb/`.
const WRITE_LOCK_FILE: &str = "write.lock";

/// This process's hold on the vault.
#[derive(Debug)]
pub(crate) struct Presence {
    file: File,
}

/// What joining found.
pub(crate) enum Joined {
    /// No other kb process has the vault open: recovery may run, then [`Presence::share`].
    Alone(Presence),
    /// Other kb processes have it open (or the filesystem cannot tell): no recovery.
    Shared(Presence),
}

impl Presence {
    /// Joins the kb processes of the vault whose state folder is `state_dir`.
    pub(crate) fn join(state_dir: &Path) -> io::Result<Joined> {
        let file =
            OpenOptions::new().create(true).truncate(false).write(true).open(state_dir.join(LOCK_FILE))?;
        match file.try_lock() {
            Ok(()) => Ok(Joined::Alone(Presence { file })),
            Err(TryLockError::WouldBlock) => {
                // Waits while a process that is alone finishes its recovery.
                file.lock_shared()?;
                Ok(Joined::Shared(Presence { file }))
            }
            Err(TryLockError::Error(e)) => {
                // Without locks no process can know it is alone: recovery never runs
                // rather than risk a live move.
                tracing::warn!(error = %e, "the vault cannot be locked; interrupted moves are not finished");
                Ok(Joined::Shared(Presence { file }))
            }
        }
    }

    /// Lets other processes join (the exclusive hold becomes a shared one).
    pub(crate) fn share(&self) -> io::Result<()> {
        self.file.lock_shared()
    }
}

/// The lock every change to an entry holds, across kb processes.
#[derive(Debug)]
pub(crate) struct WriteLock {
    file: File,
}

/// A change in progress: the write lock is released when this is dropped.
pub(crate) struct Writing<'a> {
    file: &'a File,
}

impl WriteLock {
    /// Opens (creating) the write lock of the vault whose state folder is `state_dir`.
    pub(crate) fn open(state_dir: &Path) -> io::Result<WriteLock> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(state_dir.join(WRITE_LOCK_FILE))?;
        Ok(WriteLock { file })
    }

    /// Waits until no other process is changing an entry, then holds the lock. Where the
    /// filesystem has no locks, changes go ahead unserialised (as within one process they
    /// still are, by the vault's own lock).
    pub(crate) fn hold(&self) -> Writing<'_> {
        loop {
            match self.file.lock() {
                Ok(()) => break,
                // A wait cut short by a signal is no answer: without this retry, a change
                // would go ahead beside another process's.
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    tracing::debug!(%error, "the vault's write lock is not available here");
                    break;
                }
            }
        }
        Writing { file: &self.file }
    }
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}
