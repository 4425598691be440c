//! Locking shared state that stays usable after a panic: every holder of kb's locks keeps
//! the guarded data consistent step by step (the disk first, the memory after), so a
//! poisoned lock is taken as it is.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, ignoring poisoning.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
