//! When the entry list file is written: at once after each change (the default, and what a
//! short-lived process wants), or — once a long-running process asks for it — off the
//! request path by one background thread that coalesces bursts of changes into one
//! rewrite, so a change never waits for the whole entry list to be rendered. A burst is
//! whatever comes without a pause of [`GATHER`]: thousands of entries followed one by one
//! after a `git pull` are one rewrite (or one a second while they keep coming), not one
//! each.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use kb_domain::sync::lock;

/// How long a pause in the changes must be before the background writer writes.
pub(crate) const GATHER: Duration = Duration::from_millis(100);
/// The longest the background writer lets changes keep coming before it writes anyway,
/// so the file is never much more than a second behind a vault that never rests...
const MAX_GATHER: Duration = Duration::from_secs(1);
/// ...unless a rewrite takes so long (a vault of a hundred thousand entries) that writing
/// once a second would take a large share of the machine from the changes themselves:
/// while changes keep coming, the writer then waits this many times what its last pass
/// took. A pause in the changes still brings the file up to date at once.
const PASS_SHARE: u32 = 10;
/// How often a waiting background writer checks that its vault is still open.
const CHECK_OPEN: Duration = Duration::from_secs(1);

/// Whether the entry list file is written later, and whether a write is due.
#[derive(Debug, Default)]
pub(crate) struct EntryListSchedule {
    deferred: AtomicBool,
    due: Mutex<bool>,
    wake: Condvar,
    /// Counts the changes said due, so the writer sees whether more came while it waited.
    marks: AtomicU64,
    /// The background writer's passes so far (see [`EntryListSchedule::passes`]).
    passes: AtomicU64,
    /// How long the last pass took, in microseconds.
    last_pass_micros: AtomicU64,
}

impl EntryListSchedule {
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
        self.marks.fetch_add(1, Ordering::AcqRel);
        *lock(&self.due) = true;
        self.wake.notify_one();
    }

    /// How many times the background writer has brought the entry list file up to date: one
    /// per burst of changes, however many entries the burst touched.
    pub(crate) fn passes(&self) -> u64 {
        self.passes.load(Ordering::Acquire)
    }

    /// Says how long the pass just made took (see [`PASS_SHARE`]).
    pub(crate) fn pass_took(&self, took: Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.last_pass_micros.store(micros, Ordering::Release);
    }

    /// The longest a burst of changes may go on before the writer writes anyway.
    fn max_gather(&self) -> Duration {
        let last = Duration::from_micros(self.last_pass_micros.load(Ordering::Acquire));
        MAX_GATHER.max(last.saturating_mul(PASS_SHARE))
    }

    /// Waits until a write is due, then until the burst of changes pauses for [`GATHER`]
    /// (or has gone on for [`MAX_GATHER`], or longer after a slow pass: [`PASS_SHARE`]);
    /// `None` when `vault` is gone first. The write stays due until then, so a vault
    /// closed meanwhile writes it on its way out; every change said due before this
    /// returns is in the pass the caller makes now.
    pub(crate) fn next<T>(&self, vault: &Weak<T>) -> Option<()> {
        {
            let mut due = lock(&self.due);
            while !*due {
                vault.upgrade()?;
                due = self.wake.wait_timeout(due, CHECK_OPEN).map_or_else(|e| e.into_inner().0, |(g, _)| g);
            }
        }
        let started = Instant::now();
        let max_gather = self.max_gather();
        loop {
            let seen = self.marks.load(Ordering::Acquire);
            std::thread::sleep(GATHER);
            if self.marks.load(Ordering::Acquire) == seen || started.elapsed() >= max_gather {
                break;
            }
        }
        *lock(&self.due) = false;
        self.passes.fetch_add(1, Ordering::AcqRel);
        Some(())
    }
}
