//! The per-token rate limit of a kb with accounts (`KB_RATE_LIMIT`, requests per second):
//! each token has a bucket of that many requests, filled again at that rate, so a burst of
//! one second's worth passes and a steady flood beyond it is answered 429.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

/// Why `KB_RATE_LIMIT` cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("KB_RATE_LIMIT takes a number of requests per second from 0.01 (like 20 or 0.5), not {0:?}")]
pub struct BadRateLimit(pub String);

/// A limit of requests per second for each token.
#[derive(Debug)]
pub struct RateLimit {
    per_second: f64,
    /// Each token's bucket, by the token's id: the requests it may still make, and when
    /// that was counted.
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl RateLimit {
    /// The limit `KB_RATE_LIMIT` (`value`) sets: `None` when unset or blank.
    pub fn from_setting(value: Option<&str>) -> Result<Option<RateLimit>, BadRateLimit> {
        let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else { return Ok(None) };
        match value.parse::<f64>() {
            // Below one request in 100 seconds is a mistake (and a Retry-After of days).
            Ok(per_second) if per_second.is_finite() && per_second >= 0.01 => {
                Ok(Some(RateLimit { per_second, buckets: Mutex::new(HashMap::new()) }))
            }
            _ => Err(BadRateLimit(value.to_string())),
        }
    }

    /// The limit of the sign-in routes, for everyone together: two a second.
    pub fn sign_in() -> RateLimit {
        RateLimit { per_second: 2.0, buckets: Mutex::new(HashMap::new()) }
    }

    /// Takes one request from `token`'s bucket at `now`: `None` when it may go on, else the
    /// whole seconds to wait before the next one would.
    pub fn take(&self, token: &str, now: Instant) -> Option<u64> {
        let mut buckets = self.buckets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // A second's worth, at least one request.
        let capacity = self.per_second.max(1.0);
        let (left, counted) = buckets.entry(token.to_string()).or_insert((capacity, now));
        let refilled =
            (*left + now.saturating_duration_since(*counted).as_secs_f64() * self.per_second).min(capacity);
        *counted = now;
        if refilled >= 1.0 {
            *left = refilled - 1.0;
            return None;
        }
        *left = refilled;
        let wait = (1.0 - refilled) / self.per_second;
        // Whole seconds for Retry-After, never 0.
        Some(wait.ceil().max(1.0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_burst_of_a_seconds_worth_passes_then_the_rate_holds_for_each_token() {
        let limit = RateLimit::from_setting(Some("5")).unwrap().unwrap();
        let start = Instant::now();
        for n in 0..5 {
            assert_eq!(limit.take("a", start), None, "request {n} of the burst");
        }
        assert_eq!(limit.take("a", start), Some(1), "the sixth within the second waits");
        assert_eq!(limit.take("b", start), None, "another token has its own bucket");
        assert_eq!(
            limit.take("a", start + Duration::from_millis(200)),
            None,
            "one more after a fifth of a second"
        );
        assert!(limit.take("a", start + Duration::from_millis(210)).is_some());
        assert_eq!(limit.take("a", start + Duration::from_secs(10)), None);
    }

    #[test]
    fn a_slow_limit_waits_whole_seconds_and_bad_settings_are_refused() {
        let limit = RateLimit::from_setting(Some("0.25")).unwrap().unwrap();
        let start = Instant::now();
        assert_eq!(limit.take("a", start), None);
        assert_eq!(limit.take("a", start), Some(4));
        assert!(RateLimit::from_setting(None).unwrap().is_none());
        assert!(RateLimit::from_setting(Some("  ")).unwrap().is_none());
        for bad in ["0", "-1", "fast", "NaN", "inf", "0.0000001", "1e400"] {
            assert!(RateLimit::from_setting(Some(bad)).is_err(), "{bad}");
        }
    }
}
