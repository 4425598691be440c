//! Settling a [`VaultWatcher`](super::VaultWatcher) on request: [`WatchSettler::settle`]
//! makes a fence file in a folder the watcher follows and waits for its event, so that
//! every outside edit made before the call has been handled when it returns (a server
//! answers as of now).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kb_domain::sync::lock;
use notify::{RecursiveMode, Watcher};

use super::{Batcher, Watches};

/// How long [`WatchSettler::settle`] waits for its fence's event (a fence the system lost
/// in an overflowing queue ends the wait).
const FENCE_WAIT: Duration = Duration::from_secs(1);

/// Settles a [`VaultWatcher`](super::VaultWatcher): waits until every outside edit made
/// before the call is handled (indexed, and its `OnChange` called).
#[derive(Clone)]
pub struct WatchSettler {
    pub(super) batcher: Arc<Batcher>,
    pub(super) fences: Arc<Fences>,
}

impl std::fmt::Debug for WatchSettler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchSettler").field("fences", &self.fences.dir).finish()
    }
}

impl WatchSettler {
    /// Waits until every event the system queued before this call is handled: makes a
    /// fence file in a watched folder of its own, waits for the fence's event (the
    /// system delivers one watcher's events in order, so every earlier event has been
    /// taken in by then), then has the batch holding those events handled at once rather
    /// than after [`DEBOUNCE`](super::DEBOUNCE), and waits for it. Whether the watcher
    /// settled within `within`; `false` also when the fence cannot be made, its event was
    /// lost, or the watcher stopped. Blocks: call it off an async runtime's threads.
    pub fn settle(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        let number = self.fences.next.fetch_add(1, Ordering::AcqRel) + 1;
        let fence = self.fences.dir.join(fence_name(number));
        if let Err(error) = std::fs::File::create(&fence) {
            tracing::warn!(%error, fence = %fence.display(), "cannot make a fence to settle outside edits");
            return false;
        }
        let settled = self.wait_for_fence(number, deadline.min(Instant::now() + FENCE_WAIT))
            && self.wait_for_batch(deadline);
        if let Err(error) = std::fs::remove_file(&fence) {
            tracing::debug!(%error, "a fence is left behind");
        }
        settled
    }

    /// Waits until the fence numbered `number` was taken in. Only its own counts: fences
    /// of settles running at the same time may be made in another order than numbered.
    fn wait_for_fence(&self, number: u64, deadline: Instant) -> bool {
        let pending = lock(&self.batcher.pending);
        self.batcher.wait_until(pending, deadline, |pending| pending.fences_seen.remove(&number))
    }

    /// Has what is gathered handled now, and waits until it and any batch being handled
    /// are done.
    fn wait_for_batch(&self, deadline: Instant) -> bool {
        let batcher = &self.batcher;
        let mut pending = lock(&batcher.pending);
        let target = if pending.first.is_some() {
            pending.urgent = true;
            batcher.wake.notify_all();
            pending.taken + 1
        } else {
            pending.taken
        };
        batcher.wait_until(pending, deadline, |pending| pending.done >= target)
    }
}

/// The fences of one watcher: files named `{pid}-{number}` in a folder it watches.
pub(super) struct Fences {
    dir: PathBuf,
    /// The last number given out.
    next: AtomicU64,
}

impl Fences {
    /// Makes the fence folder (removing fences that a process which died while settling
    /// left there over a minute ago) and watches it.
    pub(super) fn watched(watches: &mut Watches, dir: PathBuf) -> std::io::Result<Fences> {
        std::fs::create_dir_all(&dir)?;
        for item in std::fs::read_dir(&dir)?.flatten() {
            let age = item.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
            if age.is_some_and(|age| age > Duration::from_secs(60)) {
                let _ = std::fs::remove_file(item.path());
            }
        }
        watches.watcher.watch(&dir, RecursiveMode::NonRecursive).map_err(std::io::Error::other)?;
        watches.folders.insert(dir.clone());
        Ok(Fences { dir, next: AtomicU64::new(0) })
    }
}

/// The name of this process's fence numbered `number`.
fn fence_name(number: u64) -> String {
    format!("{}-{number}", std::process::id())
}

/// The number of this process's fence at `path`, when it is one of `dir`.
pub(super) fn fence_number(dir: &Path, path: &Path) -> Option<u64> {
    if path.parent()? != dir {
        return None;
    }
    let name = path.file_name()?.to_str()?;
    let (pid, number) = name.split_once('-')?;
    (pid == std::process::id().to_string()).then(|| number.parse().ok()).flatten()
}
