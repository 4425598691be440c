//! [`Pause`]: whether a search may ask the embedding server for its query's vector now.
//!
//! A search waits for its query's vector before it answers, so a server that hangs or is
//! gone would make every search wait its deadline. After the server failed (no answer in
//! time, unreachable, 5xx, rate limited), searches do without it for the pause
//! (`KB_EMBEDDINGS_COOLDOWN_SECS`) and answer by words; then the first search asks again
//! (the others still do without it meanwhile), and an answer, to a search or to the
//! embedding of entries, ends the pause.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kb_domain::sync::lock;

/// The pause after a failure, shared by every search of one embedder.
#[derive(Debug)]
pub(crate) struct Pause {
    /// How long searches do without the server after it failed (zero: never).
    length: Duration,
    /// When it last failed, and whether a search is asking it again now.
    state: Arc<Mutex<State>>,
}

/// See [`Pause::state`].
#[derive(Debug, Default)]
struct State {
    /// When the server last failed (none: it answers).
    failed_at: Option<Instant>,
    /// Whether a search is asking it again after the pause.
    trying: bool,
}

/// A search allowed to ask the server: tell [`Pause`] how it went with
/// [`Trial::answered`] or [`Trial::failed`]. Dropped without either (the search was
/// cancelled), the next search asks again.
#[derive(Debug)]
pub(crate) struct Trial {
    state: Arc<Mutex<State>>,
    /// Whether this trial is the one asking after a pause.
    after_pause: bool,
}

impl Pause {
    /// A pause of `length` after each failure.
    pub(crate) fn new(length: Duration) -> Pause {
        Pause { length, state: Arc::default() }
    }

    /// Whether a search may ask the server at `now`: a [`Trial`], or how long it still
    /// does without it.
    pub(crate) fn admit(&self, now: Instant) -> Result<Trial, Duration> {
        let mut state = lock(&self.state);
        let Some(failed_at) = state.failed_at else {
            return Ok(Trial { state: Arc::clone(&self.state), after_pause: false });
        };
        let over = failed_at + self.length;
        if now < over {
            return Err(over - now);
        }
        if state.trying {
            // Another search is asking: this one does without, for as long as a pause.
            return Err(self.length);
        }
        state.trying = true;
        Ok(Trial { state: Arc::clone(&self.state), after_pause: true })
    }

    /// The server answered (a search or the embedding of entries): no pause.
    pub(crate) fn answered(&self) {
        lock(&self.state).failed_at = None;
    }

    /// The server failed at `now` (the embedding of entries): searches pause.
    pub(crate) fn failed(&self, now: Instant) {
        if !self.length.is_zero() {
            lock(&self.state).failed_at = Some(now);
        }
    }

    /// Whether the length is zero (no pause at all).
    fn is_off(&self) -> bool {
        self.length.is_zero()
    }
}

impl Trial {
    /// The server answered the search.
    pub(crate) fn answered(self) {
        let mut state = lock(&self.state);
        state.failed_at = None;
        state.trying = false;
    }

    /// The server failed the search at `now`: searches pause (unless `pause` is off).
    pub(crate) fn failed(self, pause: &Pause, now: Instant) {
        let mut state = lock(&self.state);
        state.trying = false;
        if !pause.is_off() {
            state.failed_at = Some(now);
        }
    }
}

impl Drop for Trial {
    fn drop(&mut self) {
        if self.after_pause {
            lock(&self.state).trying = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LENGTH: Duration = Duration::from_secs(30);

    #[test]
    fn searches_ask_until_a_failure_then_do_without_for_the_pause() {
        let pause = Pause::new(LENGTH);
        let start = Instant::now();
        pause.admit(start).unwrap().answered();
        pause.admit(start).unwrap().failed(&pause, start);
        let left = pause.admit(start + Duration::from_secs(10)).unwrap_err();
        assert_eq!(left, Duration::from_secs(20));
        // After the pause one search asks; the others do without until it is answered.
        let later = start + LENGTH;
        let trial = pause.admit(later).unwrap();
        assert!(pause.admit(later).is_err());
        trial.answered();
        assert!(pause.admit(later).is_ok());
    }

    #[test]
    fn a_failed_retry_pauses_again_and_a_cancelled_one_lets_the_next_ask() {
        let pause = Pause::new(LENGTH);
        let start = Instant::now();
        pause.admit(start).unwrap().failed(&pause, start);
        let later = start + LENGTH;
        pause.admit(later).unwrap().failed(&pause, later);
        assert!(pause.admit(later + Duration::from_secs(29)).is_err());
        let again = later + LENGTH;
        drop(pause.admit(again).unwrap());
        assert!(pause.admit(again).is_ok(), "a cancelled search leaves the next one to ask");
    }

    #[test]
    fn an_answer_to_the_entries_ends_the_pause_and_zero_means_no_pause() {
        let pause = Pause::new(LENGTH);
        let start = Instant::now();
        pause.failed(start);
        assert!(pause.admit(start).is_err());
        pause.answered();
        assert!(pause.admit(start).is_ok());
        let none = Pause::new(Duration::ZERO);
        none.admit(start).unwrap().failed(&none, start);
        none.failed(start);
        assert!(none.admit(start).is_ok());
    }
}
