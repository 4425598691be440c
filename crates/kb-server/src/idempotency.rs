//! `Idempotency-Key` on the `POST`s that create or change something (`/api/capture` and
//! the others `routes` names): a request sent again with the key of one already answered
//! gets that first answer (same status, same body, and `Idempotent-Replayed: true`) and
//! changes nothing, in this process or any other kb process on the vault.
//!
//! The key is claimed in kb's database before the request runs. A repeat that arrives
//! while the first is still running is answered 409 `idempotency_in_progress` (try again
//! shortly); the same key with another method, path or body, 422 `idempotency_key_reused`.
//! Answers are kept when they are final (2xx and 4xx but 408 and 429); after a 5xx,
//! 408 or 429 the key is let go so a retry runs again. Keys are kept a day.

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use kb_core::idempotency::{Claim, KeptAnswer, valid_key};

use crate::error::ApiError;
use crate::routes::MAX_BODY_BYTES;
use crate::state::AppState;

/// The request header that names a request, made up by the client.
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// The answer header that says an answer is the one kept for the key.
pub const REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// The largest answer kept for a key (answers of the routes this guards are far smaller).
const MAX_KEPT_BYTES: usize = 4 * 1024 * 1024;

/// Answers a `POST` carrying `Idempotency-Key` once; passes every other request.
pub async fn idempotent(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let key = match key_of(request.headers()) {
        Ok(Some(key)) => key,
        Ok(None) => return next.run(request).await,
        Err(refused) => return refused.into_response(),
    };
    let (parts, body) = request.into_parts();
    let Ok(body) = to_bytes(body, MAX_BODY_BYTES).await else {
        return ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "the body is too large")
            .into_response();
    };
    let fingerprint = format!("{} {} {:016x}", parts.method, parts.uri.path(), crate::routes::fnv1a(&body));
    answer_once(&state, &key, &fingerprint, next.run(Request::from_parts(parts, Body::from(body)))).await
}

/// The key given with a request, when it has one: `Err` with the answer to send when it is
/// not a valid key.
pub fn key_of(headers: &axum::http::HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get(&IDEMPOTENCY_KEY) else { return Ok(None) };
    match value.to_str().ok().map(str::trim).filter(|key| valid_key(key)) {
        Some(key) => Ok(Some(key.to_owned())),
        None => Err(ApiError::bad_request("Idempotency-Key must be 1 to 255 visible ASCII characters")),
    }
}

/// Runs `run` once for `key` sent with a request of `fingerprint` (its method, path and a
/// hash of its body): claims the key first, answers the kept answer of a key already
/// answered, and keeps `run`'s answer when it is final.
pub async fn answer_once(
    state: &AppState,
    key: &str,
    fingerprint: &str,
    run: impl std::future::Future<Output = Response>,
) -> Response {
    let keys = state.assistant.idempotency_keys();
    // Each person's keys are their own: another's same key neither replays nor blocks.
    let scoped;
    let key = match state.actor.name() {
        Some(person) => {
            scoped = format!("{person} {key}");
            scoped.as_str()
        }
        None => key,
    };
    match keys.claim(key, fingerprint).await {
        Err(error) => ApiError::from(error).into_response(),
        Ok(Claim::Answered(answer)) => replay(answer),
        Ok(Claim::InProgress) => ApiError::new(
            StatusCode::CONFLICT,
            "idempotency_in_progress",
            "a request with this Idempotency-Key is still being answered: try again shortly",
        )
        .into_response(),
        Ok(Claim::Mismatch) => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "idempotency_key_reused",
            "this Idempotency-Key was sent with another request: use a new key for a new request",
        )
        .into_response(),
        Ok(Claim::Claimed) => {
            let response = run.await;
            let (parts, body) = response.into_parts();
            let Ok(bytes) = to_bytes(body, MAX_KEPT_BYTES).await else {
                let _ = keys.release(key).await;
                return ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "the answer could not be read",
                )
                .into_response();
            };
            let status = parts.status;
            let kept = if is_final(status) {
                let content_type = parts
                    .headers
                    .get(header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                let answer = KeptAnswer { status: status.as_u16(), content_type, body: bytes.to_vec() };
                keys.finish(key, &answer).await
            } else {
                keys.release(key).await
            };
            if let Err(error) = kept {
                tracing::warn!(%error, "could not keep the answer to an Idempotency-Key");
            }
            Response::from_parts(parts, Body::from(bytes))
        }
    }
}

/// Whether an answer with `status` is the request's final one: a retry would get the same.
fn is_final(status: StatusCode) -> bool {
    status.is_success()
        || (status.is_client_error()
            && status != StatusCode::REQUEST_TIMEOUT
            && status != StatusCode::TOO_MANY_REQUESTS)
}

/// The kept answer, sent again.
fn replay(answer: KeptAnswer) -> Response {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::OK);
    let mut response = (status, answer.body).into_response();
    let headers = response.headers_mut();
    if let Ok(content_type) = HeaderValue::from_str(&answer.content_type) {
        headers.insert(header::CONTENT_TYPE, content_type);
    }
    headers.insert(REPLAYED, HeaderValue::from_static("true"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_answers_are_kept_and_retryable_ones_are_not() {
        for status in [200, 201, 204, 400, 404, 409, 413, 422] {
            assert!(is_final(StatusCode::from_u16(status).unwrap_or_default()), "{status}");
        }
        for status in [408, 429, 500, 502, 503, 504] {
            assert!(!is_final(StatusCode::from_u16(status).unwrap_or_default()), "{status}");
        }
    }
}
