//! kb's retry of rate-limited requests: a tower service around async-openai's HTTP
//! transport, replacing the library's own retry (which has no jitter and also retries 5xx).
//!
//! Only `429 Too Many Requests` is retried (with exponential backoff, 3 tries in all); a
//! 5xx or an unreachable server fails at once so the person gets the 503 quickly. Each wait
//! is the exponential delay plus random jitter, and never less than the server's
//! `Retry-After`. When a wait would be longer than [`RetryPolicy::max_delay`] or end past
//! the call's budget, or the tries run out, the call fails with a [`RateLimitExhausted`]
//! carrying the last `Retry-After`. A 429 whose error is `insufficient_quota` is permanent
//! and not retried.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use async_openai::error::{ApiErrorResponse, OpenAIError, WrappedError};
use async_openai::middleware::HttpRequestFactory;
use rand::Rng;
use reqwest::{Response, StatusCode};
use tokio::time::Instant;
use tower::{Service, ServiceExt};

/// The error type of a quota that is used up (billing), which no wait fixes.
const INSUFFICIENT_QUOTA: &str = "insufficient_quota";

/// When and how long to wait before trying a rate-limited request again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Requests sent in all (the first one included).
    pub max_tries: u32,
    /// The wait after the first 429; doubled after each further one.
    pub base_delay: Duration,
    /// The longest wait; a `Retry-After` above it ends the retries at once.
    pub max_delay: Duration,
    /// The time a whole call may take: a wait that would end past it ends the retries
    /// (the caller gets `RateLimited` rather than a timeout).
    pub budget: Duration,
}

impl RetryPolicy {
    /// The wait before try number `retry + 2` (`retry` counts from 0), honouring the
    /// server's `Retry-After`: `max(retry_after, base·2^retry)` plus a random jitter of up to
    /// half the exponential delay. `None` when `Retry-After` asks for more than `max_delay`.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Option<Duration> {
        if retry_after.is_some_and(|wait| wait > self.max_delay) {
            return None;
        }
        let exponential = self.base_delay.saturating_mul(2_u32.saturating_pow(retry)).min(self.max_delay);
        let half_nanos = u64::try_from(exponential.as_nanos() / 2).unwrap_or(u64::MAX);
        let jitter = Duration::from_nanos(rand::rng().random_range(0..=half_nanos));
        Some(exponential.max(retry_after.unwrap_or_default()) + jitter)
    }
}

/// A request that was still rate limited after the allowed tries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rate limited after {tries} tries{}", retry_after_secs.map(|s| format!(", retry after {s}s")).unwrap_or_default())]
pub struct RateLimitExhausted {
    /// Requests sent.
    pub tries: u32,
    /// The last `Retry-After` of the server, in seconds, when it gave one.
    pub retry_after_secs: Option<u64>,
}

/// The tower service that retries 429s around an inner HTTP service (async-openai's
/// `ReqwestService`). Install it with `Client::with_http_service`.
#[derive(Debug, Clone)]
pub struct RateLimitRetry<S> {
    inner: S,
    policy: RetryPolicy,
}

impl<S> RateLimitRetry<S> {
    /// Wraps `inner` with `policy`.
    pub fn new(inner: S, policy: RetryPolicy) -> RateLimitRetry<S> {
        RateLimitRetry { inner, policy }
    }
}

impl<S> Service<HttpRequestFactory> for RateLimitRetry<S>
where
    S: Service<HttpRequestFactory, Response = Response, Error = OpenAIError> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = OpenAIError;
    type Future = Pin<Box<dyn Future<Output = Result<Response, OpenAIError>> + Send + 'static>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Readiness of the inner service is awaited before each try, in `call`.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: HttpRequestFactory) -> Self::Future {
        let inner = self.inner.clone();
        let policy = self.policy;
        let deadline = Instant::now() + policy.budget;
        Box::pin(send_with_retries(inner, policy, deadline, request))
    }
}

async fn send_with_retries<S>(
    mut inner: S,
    policy: RetryPolicy,
    deadline: Instant,
    request: HttpRequestFactory,
) -> Result<Response, OpenAIError>
where
    S: Service<HttpRequestFactory, Response = Response, Error = OpenAIError>,
{
    let mut tries = 0;
    loop {
        tries += 1;
        let response = inner.ready().await?.call(request.clone()).await?;
        if response.status() != StatusCode::TOO_MANY_REQUESTS {
            return Ok(response);
        }
        let retry_after = retry_after(&response);
        let body = response.bytes().await.map_err(OpenAIError::Reqwest)?;
        if let Ok(wrapped) = serde_json::from_slice::<WrappedError>(&body)
            && is_insufficient_quota(&wrapped)
        {
            return Err(OpenAIError::ApiError(ApiErrorResponse {
                status_code: StatusCode::TOO_MANY_REQUESTS,
                api_error: wrapped.error,
            }));
        }
        let exhausted = RateLimitExhausted { tries, retry_after_secs: retry_after.map(|d| d.as_secs()) };
        if tries >= policy.max_tries {
            return Err(OpenAIError::Boxed(Box::new(exhausted)));
        }
        let Some(delay) = policy.delay(tries - 1, retry_after).filter(|d| Instant::now() + *d < deadline)
        else {
            tracing::warn!(tries, retry_after_secs = ?exhausted.retry_after_secs, "rate limited; the wait asked for is longer than kb allows");
            return Err(OpenAIError::Boxed(Box::new(exhausted)));
        };
        tracing::warn!(tries, delay_ms = delay.as_millis() as u64, retry_after_secs = ?exhausted.retry_after_secs, "rate limited; retrying");
        tokio::time::sleep(delay).await;
    }
}

/// The `Retry-After` of a response, when given in seconds (the form OpenAI uses).
fn retry_after(response: &Response) -> Option<Duration> {
    let value = response.headers().get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

fn is_insufficient_quota(wrapped: &WrappedError) -> bool {
    let error = &wrapped.error;
    error.r#type.as_deref() == Some(INSUFFICIENT_QUOTA) || error.code.as_deref() == Some(INSUFFICIENT_QUOTA)
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: RetryPolicy = RetryPolicy {
        max_tries: 3,
        base_delay: Duration::from_millis(100),
        max_delay: Duration::from_secs(2),
        budget: Duration::from_secs(30),
    };

    #[test]
    fn delays_grow_exponentially_with_bounded_jitter() {
        for retry in 0..4 {
            let exponential = (Duration::from_millis(100) * 2_u32.pow(retry)).min(POLICY.max_delay);
            for _ in 0..200 {
                let delay = POLICY.delay(retry, None).unwrap();
                assert!(delay >= exponential && delay <= exponential + exponential / 2, "{retry}: {delay:?}");
            }
        }
    }

    #[test]
    fn jitter_spreads_the_waits() {
        let delays: std::collections::HashSet<_> = (0..50).map(|_| POLICY.delay(0, None).unwrap()).collect();
        assert!(delays.len() > 10, "{delays:?}");
    }

    #[test]
    fn retry_after_is_a_floor_and_too_long_ends_retries() {
        let delay = POLICY.delay(0, Some(Duration::from_secs(1))).unwrap();
        assert!(delay >= Duration::from_secs(1) && delay <= Duration::from_millis(1050), "{delay:?}");
        assert_eq!(POLICY.delay(0, Some(Duration::from_secs(3))), None);
    }

    #[test]
    fn exhausted_says_when_to_come_back() {
        let e = RateLimitExhausted { tries: 3, retry_after_secs: Some(7) };
        assert_eq!(e.to_string(), "rate limited after 3 tries, retry after 7s");
    }
}
