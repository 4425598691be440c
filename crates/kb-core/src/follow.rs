//! Brings this process's view of the vault in line with files the search index has
//! followed already (outside edits, other kb processes' changes), on a thread of its own:
//! the file watcher goes on to its next batch meanwhile, so a `git pull` of thousands of
//! files is searchable sooner, and the view follows each batch soon after.

use std::collections::HashSet;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use kb_domain::EntryPath;
use kb_domain::sync::lock;
use kb_search::OnChange;
use kb_storage::vault::Vault;

use crate::changes::ChangeFeed;

/// What the file watcher calls once per batch: hands the batch's paths to the follower
/// thread, which reads them into the vault's view (batches that queue up meanwhile are
/// followed together, each path once), then publishes them to the change feed. Where no thread can be
/// started, the watcher's own thread does this. The [`Following`] says when the thread has
/// caught up.
pub(crate) fn follow_in_background(vault: &Arc<Vault>, changes: ChangeFeed) -> (OnChange, Following) {
    let (sender, batches) = mpsc::channel::<Vec<EntryPath>>();
    let weak = Arc::downgrade(vault);
    let feed = changes.clone();
    let following = Following::default();
    let progress = following.clone();
    let started = std::thread::Builder::new()
        .name("kb-vault-follow".into())
        .spawn(move || follow_batches(&weak, &batches, &feed, &progress));
    match started {
        // The thread ends once the watcher (which holds the sender) is dropped.
        Ok(_) => {
            let progress = following.clone();
            let on_change: OnChange = Arc::new(move |paths: &[EntryPath]| {
                lock(&progress.counts.0).sent += 1;
                if sender.send(paths.to_vec()).is_err() {
                    // No thread to follow it: nothing is waited for.
                    progress.finished(1);
                }
            });
            (on_change, following)
        }
        Err(error) => {
            tracing::warn!(%error, "could not start following outside edits apart; the watcher does it");
            let vault = Arc::clone(vault);
            let on_change: OnChange = Arc::new(move |paths: &[EntryPath]| {
                vault.follow_all(paths);
                changes.publish(paths);
            });
            (on_change, following)
        }
    }
}

/// How far the follower thread is: batches handed to it, and batches it has followed.
#[derive(Clone, Default)]
pub(crate) struct Following {
    counts: Arc<(Mutex<Counts>, Condvar)>,
}

#[derive(Default)]
struct Counts {
    sent: u64,
    followed: u64,
}

impl Following {
    /// Waits until every batch handed over before the call is followed (the vault's view
    /// and the change feed have it); whether that happened within `within`. Blocks.
    pub(crate) fn caught_up(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        let (counts, changed) = &*self.counts;
        let mut counts = lock(counts);
        let target = counts.sent;
        while counts.followed < target {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            counts =
                changed.wait_timeout(counts, deadline - now).map_or_else(|e| e.into_inner().0, |(g, _)| g);
        }
        true
    }

    /// Counts `batches` more as followed.
    fn finished(&self, batches: u64) {
        let (counts, changed) = &*self.counts;
        lock(counts).followed += batches;
        changed.notify_all();
    }
}

/// The follower thread: each batch as it comes, with every batch that came meanwhile.
fn follow_batches(
    vault: &Weak<Vault>,
    batches: &mpsc::Receiver<Vec<EntryPath>>,
    changes: &ChangeFeed,
    following: &Following,
) {
    while let Ok(first) = batches.recv() {
        let mut seen: HashSet<EntryPath> = first.iter().cloned().collect();
        let mut paths = first;
        let mut count = 1;
        while let Ok(more) = batches.try_recv() {
            count += 1;
            paths.extend(more.into_iter().filter(|path| seen.insert(path.clone())));
        }
        let Some(vault) = vault.upgrade() else { return };
        vault.follow_all(&paths);
        drop(vault);
        changes.publish(&paths);
        following.finished(count);
    }
}
