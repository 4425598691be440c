//! Background threads that yield to requests: the work kb does behind a request (rewriting
//! `index.md`, sweeping the folders, comparing the vault with its history) runs at a low
//! CPU priority, so on a busy machine a person's request is served first and the background
//! work, which has time, waits its turn.

/// Lowers the calling thread's CPU priority to nice 10: about a tenth of a normal thread's
/// share while both want the CPU. Not the lowest, so a background thread holding a lock
/// that a request needs is never starved for long. Where this is not possible the thread
/// stays as it was: the work is the same, only its turn changes.
pub fn yield_to_requests() {
    #[cfg(target_os = "linux")]
    {
        let thread = rustix::thread::gettid();
        if let Err(error) = rustix::process::setpriority_process(Some(thread), BACKGROUND_NICE) {
            tracing::debug!(%error, "could not lower a background thread's priority");
        }
    }
}

/// The nice value of background threads.
#[cfg(target_os = "linux")]
const BACKGROUND_NICE: i32 = 10;
