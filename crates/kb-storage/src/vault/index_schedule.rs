//! When kb's index file is written: at once after each change (the default, and what a
//! short-lived process wants), or — once a long-running process asks for it — off the
//! request path by one background thread that coalesces bursts of changes into one
//! rewrite, so a change never waits for the whole index to be rendered.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, Weak};
use std::time::Duration;

use kb_domain::sync::lock;

/// How long the background writer lets a burst of changes gather before it writes.
pub(crate) const GATHER: Duration = Duration::from_millis(100);
/// How often a waiting background writer checks that its vault is still open.
const CHECK_OPEN: Duration = Duration::from_secs(1);

/// Whether the index file is written later, and whether a write is due.
#[derive(Debug, Default)]
pub(crate) struct IndexSchedule {
    deferred: AtomicBool,
    due: Mutex<bool>,
    wake: Condvar,
}

impl IndexSchedule {
    /// Whether writes go to the background writer.
    pub(crate) fn is_deferred(&self) -> bool {
        self.deferred.load(Ordering::Acquire)
    }

    /// Hands writes to the background writer from now on; `false` when already so.
    pub(crate) fn defer(&self) -> bool {
        !self.deferred.swap(true, Ordering::AcqRel)
    }

    /// Goes back to writing after each change (the background writer could not start).
    pub(crate) fn undefer(&self) {
        self.deferred.store(false, Ordering::Release);
    }

    /// Whether a write is due and not yet done.
    pub(crate) fn is_due(&self) -> bool {
        *lock(&self.due)
    }

    /// Says a write is due.
    pub(crate) fn mark_due(&self) {
        *lock(&self.due) = true;
        self.wake.notify_one();
    }

    /// Waits until a write is due (then lets a burst gather), or until `vault` is gone:
    /// `None` then.
    pub(crate) fn next<T>(&self, vault: &Weak<T>) -> Option<()> {
        let mut due = lock(&self.due);
        while !*due {
            vault.upgrade()?;
            due = self.wake.wait_timeout(due, CHECK_OPEN).map_or_else(|e| e.into_inner().0, |(g, _)| g);
        }
        *due = false;
        drop(due);
        std::thread::sleep(GATHER);
        Some(())
    }
}
