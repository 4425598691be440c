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
use std::sync::{Mutex, MutexGuard, PoisonError};

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

/// The lock every change to an entry holds, across kb processes and across the threads of
/// this one.
pub(crate) struct WriteLock {
    file: File,
    /// The file's lock belongs to its open file, which every thread of this process shares:
    /// a second thread's `flock` would succeed at once, and the first thread's release
    /// would free the file for another process while the second still changes an entry.
    /// Threads take turns here before they take the file's lock.
    threads: Mutex<()>,
}

/// A change in progress: the write lock is released when this is dropped.
pub(crate) struct Writing<'a> {
    file: &'a File,
    /// Released after the file's lock (fields drop after `drop` runs).
    _thread: MutexGuard<'a, ()>,
}

impl WriteLock {
    /// Opens (creating) the write lock of the vault whose state folder is `state_dir`.
    pub(crate) fn open(state_dir: &Path) -> io::Result<WriteLock> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(state_dir.join(WRITE_LOCK_FILE))?;
        Ok(WriteLock { file, threads: Mutex::new(()) })
    }

    /// Waits until no other process or thread is changing an entry, then holds the lock.
    /// Where the filesystem has no locks, changes go ahead unserialised between processes
    /// (within this one they still take turns).
    pub(crate) fn hold(&self) -> Writing<'_> {
        // A thread that panicked while holding the lock released the file's lock as it
        // unwound: the turn is free again.
        let thread = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
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
        Writing { file: &self.file, _thread: thread }
    }
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// How long a hold that should wait is given to (wrongly) get through.
    const GRACE: Duration = Duration::from_millis(300);

    #[test]
    fn a_hold_keeps_out_the_other_threads_of_its_process_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let lock = std::sync::Arc::new(WriteLock::open(dir.path()).unwrap());
        let held = lock.hold();
        let (tx, rx) = mpsc::channel();
        let other = {
            let lock = std::sync::Arc::clone(&lock);
            std::thread::spawn(move || {
                let writing = lock.hold();
                tx.send(()).unwrap();
                drop(writing);
            })
        };
        assert!(rx.recv_timeout(GRACE).is_err(), "a second thread held the write lock beside the first");
        drop(held);
        rx.recv_timeout(Duration::from_secs(10)).expect("the second thread never got the lock");
        other.join().unwrap();
    }

    #[test]
    fn another_process_stays_out_while_a_second_thread_holds_after_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let ours = std::sync::Arc::new(WriteLock::open(dir.path()).unwrap());
        // Another process: its own open file, so its own lock.
        let theirs = WriteLock::open(dir.path()).unwrap();
        let first = ours.hold();
        let (tx, rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let second = {
            let ours = std::sync::Arc::clone(&ours);
            std::thread::spawn(move || {
                let writing = ours.hold();
                tx.send(()).unwrap();
                release_rx.recv().unwrap();
                drop(writing);
            })
        };
        // The second thread waits (or, were threads not kept apart, holds beside the first).
        std::thread::sleep(GRACE);
        drop(first);
        rx.recv_timeout(Duration::from_secs(10)).expect("the second thread never got the lock");
        // The first thread's release must not have freed the lock the second now holds.
        assert!(
            matches!(theirs.file.try_lock(), Err(TryLockError::WouldBlock)),
            "another process could change entries while this one's second thread held the lock"
        );
        release_tx.send(()).unwrap();
        second.join().unwrap();
        assert!(theirs.file.try_lock().is_ok(), "the lock was not released");
    }
}
