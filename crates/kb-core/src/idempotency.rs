//! [`IdempotencyKeys`]: the answers to requests sent with an `Idempotency-Key`, kept a day
//! in kb's database so a repeat (a queued capture sent again, from any kb process on the
//! vault) gets the first answer and changes nothing.

use std::sync::Arc;

use kb_domain::StoreError;
pub use kb_domain::ports::{Claim, KeptAnswer};
use kb_domain::ports::{IdempotencyStore, KeyClaim};

/// How long a key and its answer are kept.
pub const KEEP_KEYS_FOR: chrono::Duration = chrono::Duration::hours(24);

/// How long a claim may stay unanswered before it is taken as abandoned (its process
/// died mid-request) and the key may be claimed again. Longer than any request runs.
pub const ABANDONED_AFTER: chrono::Duration = chrono::Duration::minutes(10);

/// The longest key accepted.
pub const MAX_KEY_LEN: usize = 255;

/// Claims keys, keeps answers, lets keys go.
#[derive(Clone)]
pub struct IdempotencyKeys {
    store: Arc<dyn IdempotencyStore>,
}

impl std::fmt::Debug for IdempotencyKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdempotencyKeys").finish_non_exhaustive()
    }
}

impl IdempotencyKeys {
    /// Keys kept in `store`.
    pub fn new(store: Arc<dyn IdempotencyStore>) -> IdempotencyKeys {
        IdempotencyKeys { store }
    }

    /// Claims `key` for the request `fingerprint` names (see [`Claim`]).
    pub async fn claim(&self, key: &str, fingerprint: &str) -> Result<Claim, StoreError> {
        let claim = KeyClaim { key, fingerprint, at: chrono::Utc::now() };
        self.store.claim(claim, KEEP_KEYS_FOR, ABANDONED_AFTER).await
    }

    /// Keeps `answer` for a claimed key.
    pub async fn finish(&self, key: &str, answer: &KeptAnswer) -> Result<(), StoreError> {
        self.store.finish(key, answer).await
    }

    /// Lets go of a claimed key without an answer: a retry runs again.
    pub async fn release(&self, key: &str) -> Result<(), StoreError> {
        self.store.release(key).await
    }
}

/// Whether `key` is an acceptable `Idempotency-Key`: 1 to [`MAX_KEY_LEN`] visible ASCII
/// characters.
pub fn valid_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_KEY_LEN && key.bytes().all(|b| b.is_ascii_graphic())
}
