//! Commits off the request path, for a process that lives long and owns the index.
//!
//! A tantivy commit costs about ten milliseconds however small the change: each one
//! writes a new segment and starts a new indexing thread. Once asked to
//! ([`crate::TantivyIndex::commit_in_background`]), the owner queues the changes kb
//! makes and one background thread commits them, everything queued so far in one commit.
//! A change thus waits for its files, not for the index, and changes that come together
//! share a commit: the committer lingers [`LINGER`] after the first queued change for
//! others to join it, unless someone is already waiting to read.
//!
//! No read goes around the queue: every search (and every count) in the owning process
//! first waits until what was queued before it is committed (a keyword search, only what
//! may change its answer: see the last paragraph), so a process still reads its own writes
//! at once. Another process that sent its change to the owner gets its answer
//! once that change is committed, as before, and asks the owner for the same wait before
//! each of its searches.
//!
//! With several people on one kb, a change one of them asked for is queued under their
//! name. Their own searches wait for it as above; another person's search waits only for
//! what they or no one in particular changed, and sees the first person's change once it is
//! committed: at most [`PEOPLE_LINGER`] later. So one person's burst of captures is not a
//! commit per search of everyone else, which on a busy server is most of its work.
//!
//! A keyword search goes further: of the changes it would wait for, it waits only for
//! those that may change its answer (see `index::unseen`), so a capture is not a commit
//! per search of its own author either, unless that search may find it.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use kb_domain::EntryPath;
use kb_domain::sync::lock;

use crate::index::{Change, Unseen};

/// How often the waiting committer checks that its index is still open.
const CHECK_OPEN: Duration = Duration::from_secs(1);
/// How long the committer waits after a change is queued for more to commit with it
/// (when no reader waits): a burst of changes is then a few commits, not one each.
pub(crate) const LINGER: Duration = Duration::from_millis(25);
/// How long the committer waits when everything queued was asked for by people and none of
/// them waits to read it: how late one person's change may show in another's search.
pub(crate) const PEOPLE_LINGER: Duration = Duration::from_millis(250);

/// The changes waiting for the background commit, and who waits for them.
#[derive(Debug, Default)]
pub(crate) struct CommitQueue {
    /// Whether changes go to the queue (set once the committer runs).
    background: AtomicBool,
    state: Mutex<QueueState>,
    /// Wakes the committer: changes were queued.
    queued: Condvar,
    /// Wakes those waiting for a commit.
    done: Condvar,
}

#[derive(Debug, Default)]
struct QueueState {
    changes: Vec<Change>,
    /// How many batches were queued so far.
    queued: u64,
    /// How many of them are done with (committed, or their commit failed).
    done: u64,
    /// When the oldest change still queued was queued.
    since: Option<Instant>,
    /// Whether a change still queued was asked for by no one in particular (then the
    /// committer lingers [`LINGER`], not [`PEOPLE_LINGER`]).
    anyones_queued: bool,
    /// The last batch queued by no one in particular: everyone's searches wait for it.
    last_anyones: u64,
    /// The last batch each person queued, while it is not done with: only their own
    /// searches wait for it.
    last_by: HashMap<String, u64>,
    /// How many callers wait to read what is queued.
    readers: usize,
    /// Each change queued and not yet done with, as a search sees it: its batch and who
    /// asked for it.
    unseen: Vec<(u64, Option<String>, Unseen)>,
}

/// Changes taken from the queue to be committed together.
pub(crate) struct Batch {
    /// The changes, in the order they were queued.
    pub(crate) changes: Vec<Change>,
    /// Report this to [`CommitQueue::finished`] once they are committed (or failed).
    pub(crate) upto: u64,
}

impl CommitQueue {
    /// Whether changes are queued for the background committer.
    pub(crate) fn is_background(&self) -> bool {
        self.background.load(Ordering::Acquire)
    }

    /// Sends changes to the queue from now on; `false` when that was so already.
    pub(crate) fn start(&self) -> bool {
        !self.background.swap(true, Ordering::AcqRel)
    }

    /// Goes back to committing on the caller's thread (the committer could not start).
    pub(crate) fn stop(&self) {
        self.background.store(false, Ordering::Release);
    }

    /// Queues one operation's changes (committed together), seen by searches meanwhile as
    /// `unseen` says, asked for by `person` (`None`: no one in particular), running `also`
    /// while the queue is held, so that what it records follows the order of the queue.
    pub(crate) fn push(
        &self,
        changes: Vec<Change>,
        unseen: Vec<Unseen>,
        person: Option<&str>,
        also: impl FnOnce(&[Change]),
    ) {
        let mut state = lock(&self.state);
        also(&changes);
        state.changes.extend(changes);
        state.queued += 1;
        let batch = state.queued;
        let by = person.map(str::to_string);
        state.unseen.extend(unseen.into_iter().map(|change| (batch, by.clone(), change)));
        match person {
            Some(person) => {
                state.last_by.insert(person.to_string(), batch);
            }
            None => {
                state.last_anyones = batch;
                state.anyones_queued = true;
            }
        }
        state.since.get_or_insert_with(Instant::now);
        self.queued.notify_one();
    }

    /// Waits for queued changes and takes them all; `None` once `owner` is gone.
    pub(crate) fn next_batch<T>(&self, owner: &Weak<T>) -> Option<Batch> {
        let mut state = lock(&self.state);
        while state.changes.is_empty() {
            // Not upgraded: the last handle dropped here would close the index while the
            // queue is held.
            if owner.strong_count() == 0 {
                return None;
            }
            state = self.queued.wait_timeout(state, CHECK_OPEN).map_or_else(|e| e.into_inner().0, |(s, _)| s);
        }
        let linger = if state.anyones_queued { LINGER } else { PEOPLE_LINGER };
        let until = state.since.unwrap_or_else(Instant::now) + linger;
        while state.readers == 0 {
            let Some(left) = until.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) else {
                break;
            };
            state = self.queued.wait_timeout(state, left).map_or_else(|e| e.into_inner().0, |(s, _)| s);
        }
        state.since = None;
        state.anyones_queued = false;
        Some(Batch { changes: std::mem::take(&mut state.changes), upto: state.queued })
    }

    /// Takes whatever is queued without waiting (for a closing index).
    pub(crate) fn take_all(&self) -> Batch {
        let mut state = lock(&self.state);
        state.since = None;
        state.anyones_queued = false;
        Batch { changes: std::mem::take(&mut state.changes), upto: state.queued }
    }

    /// Says the batches up to `upto` are done with, waking those waiting for them.
    pub(crate) fn finished(&self, upto: u64) {
        let mut state = lock(&self.state);
        state.done = state.done.max(upto);
        let done = state.done;
        state.last_by.retain(|_, batch| *batch > done);
        state.unseen.retain(|(batch, ..)| *batch > done);
        self.done.notify_all();
    }

    /// Waits until every change queued before this call is done with: the caller then
    /// reads what was written before it.
    pub(crate) fn wait_for_queued(&self) {
        self.wait_for(None);
    }

    /// Waits until the changes queued before this call that `reader` must see are done
    /// with: all of them for no one in particular (`None`), else the reader's own and
    /// those no one in particular asked for (see the module's documentation).
    pub(crate) fn wait_for(&self, reader: Option<&str>) {
        self.wait_until(|state| match reader {
            None => state.queued,
            Some(reader) => state.last_anyones.max(state.last_by.get(reader).copied().unwrap_or(0)),
        });
    }

    /// [`CommitQueue::wait_for`] for one search: waits only for the changes `may_change`
    /// says may change its answer. Whether it waited: what the index shows is then newer
    /// than the caller last read.
    pub(crate) fn wait_for_those(&self, reader: Option<&str>, may_change: impl Fn(&Unseen) -> bool) -> bool {
        if !self.is_background() {
            return false;
        }
        let those: Vec<(u64, Unseen)> = {
            let state = lock(&self.state);
            let done = state.done;
            state
                .unseen
                .iter()
                .filter(|(batch, by, _)| {
                    *batch > done && (by.is_none() || reader.is_none() || by.as_deref() == reader)
                })
                .map(|(batch, _, change)| (*batch, change.clone()))
                .collect()
        };
        // Worked out without holding the queue, which changes keep coming to. Once one change
        // to an entry matters, so do the others queued for it (a delete after a capture).
        let mattering: HashSet<&EntryPath> =
            those.iter().filter(|(_, change)| may_change(change)).map(|(_, change)| change.path()).collect();
        let Some(target) = those
            .iter()
            .filter(|(_, change)| mattering.contains(change.path()))
            .map(|(batch, _)| *batch)
            .max()
        else {
            return false;
        };
        self.wait_until(|_| target);
        true
    }

    /// Waits until what no one in particular queued before this call is done with (what
    /// the caller itself just queued for a followed edit, say), not people's changes.
    pub(crate) fn wait_for_anyones(&self) {
        self.wait_until(|state| state.last_anyones);
    }

    /// Waits until the batches up to the one `target` names are done with.
    fn wait_until(&self, target: impl FnOnce(&QueueState) -> u64) {
        if !self.is_background() {
            return;
        }
        let mut state = lock(&self.state);
        let target = target(&state);
        if state.done >= target {
            return;
        }
        // The committer stops lingering for a waiting reader.
        state.readers += 1;
        self.queued.notify_one();
        while state.done < target {
            state = self.done.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        state.readers -= 1;
    }
}
