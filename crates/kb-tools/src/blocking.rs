//! Running the synchronous ports (vault and index: blocking file I/O) from async tools.
//!
//! Every repository and search call goes through [`run_blocking`] or [`run_change`], off
//! the runtime's worker threads, so a slow disk never stalls the threads that serve other
//! chats. A panic inside the port comes back as an internal [`ToolError`].
//!
//! A change (a capture, an edit, a move) runs on threads of its own at a lower CPU priority
//! than reads. On a busy server a search or a read then waits for the CPU behind other
//! reads only: a change costs several times what a search does (its file synced, its
//! history recorded), and a person waits for a search as they type.

use std::sync::OnceLock;

use crate::result::ToolError;

/// The nice value of the threads changes run on: below requests that read (0), above
/// kb's background upkeep (10), which a person does not wait for.
#[cfg(target_os = "linux")]
const CHANGE_NICE: i32 = 5;

/// Runs `work` on the blocking pool and waits for it.
pub async fn run_blocking<T, F>(work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    joined(tokio::task::spawn_blocking(work).await)
}

/// Runs `work`, a change to the vault, on the change threads (see the module) and waits
/// for it; on the blocking pool where those threads could not be started.
pub async fn run_change<T, F>(work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    match change_threads() {
        Some(threads) => joined(threads.spawn_blocking(work).await),
        None => run_blocking(work).await,
    }
}

/// The runtime whose threads run changes, started at the first change; `None` when it
/// could not start (the reason is logged once).
fn change_threads() -> Option<&'static tokio::runtime::Runtime> {
    static THREADS: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    THREADS
        .get_or_init(|| {
            // One worker, which only drives the blocking threads the changes run on.
            let started = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("kb-change")
                .on_thread_start(yield_to_reads)
                .build();
            started.map_err(|error| tracing::warn!(%error, "could not start the threads changes run on")).ok()
        })
        .as_ref()
}

/// Lowers the calling thread's CPU priority to [`CHANGE_NICE`]. Where this is not
/// possible the thread stays as it was: changes then take their turn beside reads.
fn yield_to_reads() {
    #[cfg(target_os = "linux")]
    {
        let thread = rustix::thread::gettid();
        if let Err(error) = rustix::process::setpriority_process(Some(thread), CHANGE_NICE) {
            tracing::debug!(%error, "could not lower a change thread's priority");
        }
    }
}

/// What a blocking task's join gave, as a tool's error when it panicked or was cancelled.
fn joined<T>(outcome: Result<T, tokio::task::JoinError>) -> Result<T, ToolError> {
    outcome.map_err(|e| {
        if e.is_panic() {
            ToolError::internal("a storage or search call panicked")
        } else {
            ToolError::internal("a storage or search call was cancelled")
        }
    })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The calling thread's nice value.
    fn nice() -> i32 {
        rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap()
    }

    #[tokio::test]
    async fn a_change_runs_below_reads_and_a_read_does_not() {
        let read = run_blocking(nice).await.unwrap();
        let change = run_change(nice).await.unwrap();
        assert!(change > read, "a change ran at nice {change}, a read at {read}");
        // The read threads stay as they were after changes ran.
        assert_eq!(run_blocking(nice).await.unwrap(), read);
    }

    #[tokio::test]
    async fn a_change_that_panics_is_an_internal_error() {
        let error = run_change(|| -> u8 { panic!("a port panicked") }).await.unwrap_err();
        assert_eq!(error.code, crate::ErrorCode::Internal);
        assert_eq!(error.detail.as_deref(), Some("a storage or search call panicked"));
        // The change threads go on after a panic.
        assert_eq!(run_change(|| 7).await.unwrap(), 7);
    }
}
