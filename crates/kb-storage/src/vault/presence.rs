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
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

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
///
/// A change may keep the file's lock after its turn ([`Writing::keep_until_recorded`]):
/// its history is then recorded while the next change of this process takes its turn, and
/// no other process changes an entry, or looks at what changed, before that history is in.
pub(crate) struct WriteLock {
    file: File,
    /// The file's lock belongs to its open file, which every thread of this process shares:
    /// a second thread's `flock` would succeed at once, and the first thread's release
    /// would free the file for another process while the second still changes an entry.
    /// Threads take turns here before they take the file's lock.
    threads: Mutex<()>,
    /// How many holds of this process the file's lock serves (the change taking its turn,
    /// those still being recorded) and since when: it is taken for the first and let go
    /// after the last.
    holds: Mutex<Holds>,
    /// Wakes a change waiting for the file's lock to be let go (see [`LONGEST_SHARED_HOLD`]).
    let_go: Condvar,
}

/// The holds the file's lock serves.
#[derive(Default)]
struct Holds {
    count: usize,
    /// When the file's lock was taken (`None`: it is not held).
    since: Option<Instant>,
}

/// How long the file's lock is passed from one change of this process to the next while
/// the one before is still being recorded. Past it, the next change waits until every
/// hold is let go and takes the lock anew, so another process waiting for it gets its turn
/// on a server that is never idle.
const LONGEST_SHARED_HOLD: Duration = Duration::from_millis(100);

/// A change in progress: the write lock is released when this is dropped.
pub(crate) struct Writing<'a> {
    lock: &'a WriteLock,
    /// Released after the file's hold (fields drop after `drop` runs).
    _thread: MutexGuard<'a, ()>,
}

/// The write lock kept by a change after its turn, until its history is recorded
/// ([`Writing::keep_until_recorded`]): let go when dropped.
pub(crate) struct HeldUntilRecorded<'a> {
    lock: &'a WriteLock,
}

impl WriteLock {
    /// Opens (creating) the write lock of the vault whose state folder is `state_dir`.
    pub(crate) fn open(state_dir: &Path) -> io::Result<WriteLock> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(state_dir.join(WRITE_LOCK_FILE))?;
        Ok(WriteLock { file, threads: Mutex::new(()), holds: Mutex::default(), let_go: Condvar::new() })
    }

    /// Waits until no other process or thread is changing an entry, then holds the lock.
    /// Where the filesystem has no locks, changes go ahead unserialised between processes
    /// (within this one they still take turns).
    pub(crate) fn hold(&self) -> Writing<'_> {
        // A thread that panicked while holding the lock released the file's lock as it
        // unwound: the turn is free again.
        let thread = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        self.take_file();
        Writing { lock: self, _thread: thread }
    }

    /// One more hold on the file's lock, taken when this process holds it not.
    fn take_file(&self) {
        let mut holds = self.holds.lock().unwrap_or_else(PoisonError::into_inner);
        while holds.since.is_some_and(|since| since.elapsed() > LONGEST_SHARED_HOLD) {
            holds = self.let_go.wait(holds).unwrap_or_else(PoisonError::into_inner);
        }
        if holds.count == 0 {
            loop {
                match self.file.lock() {
                    Ok(()) => break,
                    // A wait cut short by a signal is no answer: without this retry, a
                    // change would go ahead beside another process's.
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                    Err(error) => {
                        tracing::debug!(%error, "the vault's write lock is not available here");
                        break;
                    }
                }
            }
            holds.since = Some(Instant::now());
        }
        holds.count += 1;
    }

    /// Lets go of one hold on the file's lock, and of the lock after the last.
    fn let_go_of_file(&self) {
        let mut holds = self.holds.lock().unwrap_or_else(PoisonError::into_inner);
        holds.count = holds.count.saturating_sub(1);
        if holds.count == 0 {
            let _ = self.file.unlock();
            holds.since = None;
            self.let_go.notify_all();
        }
    }
}

impl<'a> Writing<'a> {
    /// Ends this change's turn but keeps the write lock from other processes until the
    /// [`HeldUntilRecorded`] returned is dropped: once its history is recorded. The thread
    /// keeping it must not [`WriteLock::hold`] again before: past [`LONGEST_SHARED_HOLD`] it
    /// would wait for its own hold to be let go.
    pub(crate) fn keep_until_recorded(self) -> HeldUntilRecorded<'a> {
        // The file's lock is held by this change: one more hold, without waiting.
        self.lock.holds.lock().unwrap_or_else(PoisonError::into_inner).count += 1;
        HeldUntilRecorded { lock: self.lock }
    }
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.lock.let_go_of_file();
    }
}

impl Drop for HeldUntilRecorded<'_> {
    fn drop(&mut self) {
        self.lock.let_go_of_file();
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

    #[test]
    fn a_change_kept_until_recorded_lets_the_next_change_in_and_keeps_another_process_out() {
        let dir = tempfile::tempdir().unwrap();
        let ours = WriteLock::open(dir.path()).unwrap();
        let theirs = WriteLock::open(dir.path()).unwrap();
        let kept = ours.hold().keep_until_recorded();
        // The next change of this process takes its turn at once.
        let next = ours.hold();
        drop(next);
        assert!(
            matches!(theirs.file.try_lock(), Err(TryLockError::WouldBlock)),
            "another process could change entries before the first change was recorded"
        );
        drop(kept);
        assert!(theirs.file.try_lock().is_ok(), "the lock was not let go once the change was recorded");
    }

    #[test]
    fn changes_kept_back_to_back_let_another_process_in_after_a_while() {
        let dir = tempfile::tempdir().unwrap();
        let ours = WriteLock::open(dir.path()).unwrap();
        let theirs = WriteLock::open(dir.path()).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let (tx, rx) = mpsc::channel();
        let changes = std::thread::scope(|scope| {
            // A busy server: each change is still being recorded (for 5 ms, on a thread of
            // its own) when the next takes its turn.
            let busy = scope.spawn(|| {
                let mut changes = 0;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let kept = ours.hold().keep_until_recorded();
                    scope.spawn(move || {
                        std::thread::sleep(Duration::from_millis(5));
                        drop(kept);
                    });
                    changes += 1;
                    std::thread::sleep(Duration::from_millis(1));
                }
                changes
            });
            scope.spawn(|| {
                let writing = theirs.hold();
                tx.send(()).unwrap();
                drop(writing);
            });
            let got_in = rx.recv_timeout(Duration::from_secs(10));
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
            let changes = busy.join().unwrap();
            assert!(got_in.is_ok(), "another process waited through {changes} changes of a busy one");
            changes
        });
        assert!(changes > 2, "the busy process made {changes} changes");
    }
}
