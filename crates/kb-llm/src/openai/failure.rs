//! How the failures of async-openai and reqwest become kb's typed [`LlmError`]s:
//! unreachable or 5xx → `Unavailable`, 429 after retries → `RateLimited`, no answer in
//! time → `Timeout`, an answer that does not parse → `Malformed`, any other 4xx → `Refused`.

use async_openai::error::{ApiErrorResponse, OpenAIError};
use kb_domain::{LlmError, SharedCause};

use crate::openai::retry::RateLimitExhausted;

/// The longest piece of a server's error text kept in a message.
const MAX_DETAIL_CHARS: usize = 300;

/// Maps a failed call; `timeout_secs` is reported when the HTTP client timed out. The
/// error underneath is kept as the failure's source.
pub fn llm_error(error: OpenAIError, timeout_secs: u64) -> LlmError {
    match error {
        OpenAIError::ApiError(response) => api_error(&response),
        OpenAIError::Reqwest(error) => transport_error(error, timeout_secs),
        OpenAIError::JSONDeserialize(error, _body) => {
            LlmError::malformed("the answer does not parse as a chat completion")
                .caused_by(SharedCause::new(error))
        }
        OpenAIError::Boxed(boxed) => match boxed.downcast::<RateLimitExhausted>() {
            Ok(exhausted) => LlmError::RateLimited { retry_after_secs: exhausted.retry_after_secs },
            Err(other) => match other.downcast::<reqwest::Error>() {
                Ok(error) => transport_error(*error, timeout_secs),
                Err(other) => {
                    LlmError::unavailable("the request failed").caused_by(SharedCause::from_boxed(other))
                }
            },
        },
        OpenAIError::StreamError(error) => LlmError::malformed(shorten(&error.to_string())),
        OpenAIError::InvalidArgument(reason) => {
            LlmError::refused(format!("invalid request: {}", shorten(&reason)))
        }
        other => LlmError::unavailable("the request failed").caused_by(SharedCause::new(other)),
    }
}

fn api_error(response: &ApiErrorResponse) -> LlmError {
    let status = response.status_code;
    let detail = shorten(&response.api_error.message);
    if status.is_server_error() {
        LlmError::unavailable(format!("the server answered {status}: {detail}"))
    } else {
        // 400, 401, 403, 404, 422… and a permanent 429 (the quota is used up): rate limits
        // never get here, they are retried and end as `RateLimitExhausted`.
        LlmError::refused(format!("{status}: {detail}"))
    }
}

fn transport_error(error: reqwest::Error, timeout_secs: u64) -> LlmError {
    if error.is_timeout() {
        LlmError::Timeout(timeout_secs)
    } else if error.is_decode() {
        LlmError::malformed("the answer could not be read").caused_by(SharedCause::new(error))
    } else {
        // Connection refused, DNS, TLS, a reset connection: the server cannot be reached.
        // The detail names the innermost cause, which is what a person can act on
        // ("Connection refused"); the whole chain stays in the source for the log.
        let mut innermost: &dyn std::error::Error = &error;
        while let Some(cause) = innermost.source() {
            innermost = cause;
        }
        let detail = format!("cannot reach the server: {}", shorten(&innermost.to_string()));
        LlmError::unavailable(detail).caused_by(SharedCause::new(error))
    }
}

fn shorten(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= MAX_DETAIL_CHARS {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX_DETAIL_CHARS).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_openai::error::ApiError;
    use reqwest::StatusCode;

    fn api(status: u16, message: &str) -> OpenAIError {
        OpenAIError::ApiError(ApiErrorResponse {
            status_code: StatusCode::from_u16(status).unwrap(),
            api_error: ApiError { message: message.into(), ..ApiError::default() },
        })
    }

    #[test]
    fn statuses_map_to_the_spec_faults() {
        assert!(
            matches!(llm_error(api(503, "overloaded"), 30), LlmError::Unavailable { detail, .. } if detail.contains("overloaded"))
        );
        assert!(matches!(llm_error(api(500, ""), 30), LlmError::Unavailable { .. }));
        for status in [400, 401, 403, 404] {
            assert!(matches!(llm_error(api(status, "no"), 30), LlmError::Refused { .. }), "{status}");
        }
        let exhausted =
            OpenAIError::Boxed(Box::new(RateLimitExhausted { tries: 3, retry_after_secs: Some(4) }));
        assert_eq!(llm_error(exhausted, 30), LlmError::RateLimited { retry_after_secs: Some(4) });
    }

    #[test]
    fn long_server_messages_are_cut() {
        let LlmError::Refused { detail: text, .. } = llm_error(api(400, &"x".repeat(5000)), 30) else {
            panic!()
        };
        assert!(text.chars().count() < 400);
    }
}
