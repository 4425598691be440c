//! Owning the index, and reaching its owner from the other processes: [`OwnerLink`] holds
//! the sockets and the owner's listener; the methods here share this process's writer,
//! forward another process's requests to the owner, and take the index over when the
//! owner is gone (see [`crate::owner`]).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use kb_domain::sync::lock;
use kb_domain::{EntryPath, SearchError};

use super::TantivyIndex;
use super::handles::Taking;
use crate::open::load_stamps;
use crate::owner::{self, Answer, OnForwarded, OwnerServer, Request, SendError, SocketPlace};

/// How long a process waits for an owner to appear (one that is taking over) before its
/// write fails.
const OWNER_WAIT: Duration = Duration::from_secs(10);

/// How the owner answers the other processes, and how they reach it.
pub(super) struct OwnerLink {
    /// Where the owner answers the other processes.
    sockets: Vec<SocketPlace>,
    /// Whether a search here waited in vain for a process that holds the writer but does
    /// not answer (see [`TantivyIndex::read_every_earlier_change`]).
    silent: AtomicBool,
    /// Set by [`TantivyIndex::share_writes`]: how to answer other processes once owner.
    sharing: OnceLock<Sharing>,
    /// The listener, while this process owns the index and shares it.
    server: Mutex<Option<OwnerServer>>,
}

/// How an owning process answers the others.
struct Sharing {
    /// The index to answer for.
    this: Weak<TantivyIndex>,
    /// Called with the entries the others changed.
    on_forwarded: Option<OnForwarded>,
}

impl OwnerLink {
    /// The link of the index in `index_dir`, not yet answering.
    pub(super) fn new(index_dir: &Path) -> OwnerLink {
        OwnerLink {
            sockets: owner::socket_paths(index_dir),
            silent: AtomicBool::new(false),
            sharing: OnceLock::new(),
            server: Mutex::new(None),
        }
    }

    /// Stops answering the other processes.
    pub(super) fn stop_server(&self) {
        drop(lock(&self.server).take());
    }

    /// What is called with the entries the others changed, once sharing.
    fn on_forwarded(&self) -> Option<OnForwarded> {
        self.sharing.get().and_then(|s| s.on_forwarded.clone())
    }

    /// Starts answering the other processes, once sharing, unless it does already.
    fn start_server(&self, index_dir: &Path) {
        let Some(sharing) = self.sharing.get() else { return };
        let mut server = lock(&self.server);
        if server.is_some() {
            return;
        }
        match OwnerServer::start(sharing.this.clone(), &self.sockets, sharing.on_forwarded.clone()) {
            Ok(started) => *server = Some(started),
            Err(error) => tracing::warn!(
                %error,
                index = %index_dir.display(),
                "other kb processes cannot send changes to this one; they wait for it to exit"
            ),
        }
    }
}

impl TantivyIndex {
    /// Lets the other kb processes on this vault send their changes here while this process
    /// owns the index (now, or after taking it over later); `on_forwarded` is called with
    /// the entries they changed once they are indexed. Call once, after wrapping the index
    /// in an [`Arc`].
    pub fn share_writes(self: &Arc<Self>, on_forwarded: Option<OnForwarded>) {
        let sharing = Sharing { this: Arc::downgrade(self), on_forwarded };
        if self.link.sharing.set(sharing).is_ok() && self.is_owner() {
            self.link.start_server(&self.index_dir);
        }
    }

    /// Takes the writer over when no process holds it: `Ok(false)` when another does.
    /// The new owner catches up with the vault (the old one may have died mid-change)
    /// and starts answering the others.
    fn take_over(&self) -> Result<bool, SearchError> {
        match self.handles.take_writer()? {
            Taking::HeldHere => return Ok(true),
            Taking::HeldElsewhere => return Ok(false),
            Taking::Taken => {}
        }
        tracing::info!("taking over the search index from a kb process that is gone");
        self.handles.reload()?;
        let indexed = load_stamps(&self.handles.searcher()).map_err(crate::error::index_error)?;
        self.indexed.take_over(indexed);
        let (_, caught_up) = self.reconcile_local(None)?;
        // What the old owner left unindexed is a change to this process's view of the vault
        // too. Reported from another thread: the caller may be inside a change of that view.
        if let Some(on_forwarded) = self.link.on_forwarded()
            && !caught_up.is_empty()
        {
            report_caught_up(on_forwarded, caught_up);
        }
        self.link.start_server(&self.index_dir);
        Ok(true)
    }

    /// Asks the owner to do `request`; `Ok(None)` when this process became the owner
    /// instead (then it does the work itself).
    pub(super) fn forward(&self, request: &Request) -> Result<Option<Answer>, SearchError> {
        self.forward_within(request, OWNER_WAIT)
    }

    /// [`TantivyIndex::forward`], waiting at most `wait` for a process that holds the
    /// writer without answering yet (one taking the index over, or opening it).
    fn forward_within(&self, request: &Request, wait: Duration) -> Result<Option<Answer>, SearchError> {
        let deadline = Instant::now() + wait;
        loop {
            match owner::send(&self.link.sockets, request) {
                Ok(answer) => {
                    self.handles.reload()?;
                    return Ok(Some(answer));
                }
                Err(SendError::Failed(error)) => return Err(error),
                Err(SendError::NoOwner) => {
                    if self.take_over()? {
                        return Ok(None);
                    }
                    if Instant::now() > deadline {
                        return Err(SearchError::index_message(
                            "another kb process holds the search index but does not answer",
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }

    /// Waits until the index holds every change made before this call, in any process:
    /// the owner's queued changes are committed (see [`crate::commits`]), and a process
    /// that does not own the index asks the owner for that, then reloads its reader. When
    /// no owner answers (it exited or was killed, perhaps before committing what it had
    /// queued), this process takes the index over and catches up with the vault's files
    /// first, as a write would; while another process does that, it waits for it to answer
    /// (at most [`OWNER_WAIT`]).
    /// `reader`, when one of the people kb serves searches, waits in the owner only for
    /// the changes they must see (see [`crate::commits`]).
    pub(super) fn read_every_earlier_change(&self, reader: Option<&str>) {
        if self.is_owner() {
            self.queue.wait_for(reader);
            return;
        }
        // After one wait in vain (a writer that never answers), searches no longer wait
        // for it, until an owner answers again.
        let silent = &self.link.silent;
        let wait = if silent.load(Ordering::Acquire) { Duration::ZERO } else { OWNER_WAIT };
        match self.forward_within(&Request::Flush, wait) {
            Ok(Some(_)) => silent.store(false, Ordering::Release),
            // This process took the index over and caught up.
            Ok(None) => self.queue.wait_for_queued(),
            Err(error) => {
                if wait > Duration::ZERO {
                    tracing::warn!(%error, "a search could not make sure it reads every earlier change");
                    silent.store(true, Ordering::Release);
                }
                // The reader then follows the owner's commits by itself, within a second.
                if let Err(error) = self.handles.reload() {
                    tracing::debug!(%error, "could not reload the index reader");
                }
            }
        }
    }
}

/// Calls `on_forwarded` with the entries a takeover caught up with, on a thread of its own.
fn report_caught_up(on_forwarded: OnForwarded, caught_up: Vec<EntryPath>) {
    let reported =
        std::thread::Builder::new().name("kb-index-caught-up".into()).spawn(move || on_forwarded(&caught_up));
    if let Err(error) = reported {
        tracing::warn!(%error, "could not report the entries caught up with");
    }
}
