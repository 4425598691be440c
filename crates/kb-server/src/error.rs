//! The one place where failures become HTTP statuses and `{"error": {"code", "message"}}`.

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kb_core::domain::{Chain, LlmError, StoreError};
use kb_core::{ErrorCode, ToolFailure, TurnError};
use serde_json::json;

/// An error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The status.
    pub status: StatusCode,
    /// A stable machine-readable code (`not_found`, `bad_request`, …).
    pub code: &'static str,
    /// What went wrong, for a person.
    pub message: String,
    /// Seconds to wait before retrying, for 429 and 503.
    pub retry_after: Option<u64>,
    /// The entries to choose from (409 `ambiguous`, `possible_duplicate`).
    pub candidates: Option<Box<serde_json::Value>>,
}

impl ApiError {
    /// An error with a status, code and message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, code, message: message.into(), retry_after: None, candidates: None }
    }

    /// 400 with `code`.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 404.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(candidates) = self.candidates {
            error["candidates"] = *candidates;
        }
        let body = Json(json!({ "error": error }));
        let mut response = (self.status, body).into_response();
        if let Some(secs) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

impl From<ToolFailure> for ApiError {
    /// A failure caused by the language model being rate limited, down or slow is answered
    /// as the model's own (429, 503, 504 with `Retry-After`), whatever tool met it.
    fn from(failure: ToolFailure) -> ApiError {
        if let Some(cause) = failure.model_error.clone()
            && matches!(
                cause,
                LlmError::RateLimited { .. } | LlmError::Unavailable { .. } | LlmError::Timeout(_)
            )
        {
            let base = ApiError::from(cause);
            return ApiError { message: format!("{}: {}", failure.message, base.message), ..base };
        }
        let (status, code) = match failure.code {
            ErrorCode::InvalidArguments => (StatusCode::BAD_REQUEST, "invalid_arguments"),
            ErrorCode::InvalidPath => (StatusCode::BAD_REQUEST, "invalid_path"),
            ErrorCode::InvalidUpdate => (StatusCode::BAD_REQUEST, "invalid_update"),
            ErrorCode::InvalidMove => (StatusCode::BAD_REQUEST, "invalid_move"),
            ErrorCode::NotFound | ErrorCode::UnknownTool => (StatusCode::NOT_FOUND, "not_found"),
            ErrorCode::MalformedEntry => (StatusCode::CONFLICT, "malformed_entry"),
            ErrorCode::ClassificationFailed => (StatusCode::BAD_GATEWAY, "classification_failed"),
            ErrorCode::SearchNotReady => (StatusCode::SERVICE_UNAVAILABLE, "search_not_ready"),
            ErrorCode::SemanticUnavailable => (StatusCode::SERVICE_UNAVAILABLE, "semantic_unavailable"),
            ErrorCode::ChangedSince => (StatusCode::CONFLICT, "changed_since"),
            ErrorCode::NothingToUndo => (StatusCode::CONFLICT, "nothing_to_undo"),
            ErrorCode::HistoryUnavailable => (StatusCode::SERVICE_UNAVAILABLE, "history_unavailable"),
            ErrorCode::Ambiguous => (StatusCode::CONFLICT, "ambiguous"),
            ErrorCode::PossibleDuplicate => (StatusCode::CONFLICT, "possible_duplicate"),
            ErrorCode::LinkRefused => (StatusCode::UNPROCESSABLE_ENTITY, "link_refused"),
            ErrorCode::PageUnreadable => (StatusCode::BAD_GATEWAY, "page_unreadable"),
            ErrorCode::UnreadableFile => (StatusCode::UNPROCESSABLE_ENTITY, "unreadable_file"),
            ErrorCode::ForbiddenRole => (StatusCode::FORBIDDEN, "forbidden_role"),
            ErrorCode::DiskError => (StatusCode::INTERNAL_SERVER_ERROR, "disk_error"),
            ErrorCode::Internal => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        ApiError { candidates: failure.candidates, ..ApiError::new(status, code, failure.message) }
    }
}

impl From<LlmError> for ApiError {
    fn from(error: LlmError) -> ApiError {
        let message = Chain(&error).to_string();
        match error {
            LlmError::RateLimited { retry_after_secs } => ApiError {
                retry_after: Some(retry_after_secs.unwrap_or(5)),
                ..ApiError::new(StatusCode::TOO_MANY_REQUESTS, "llm_rate_limited", message)
            },
            LlmError::Unavailable { .. } => ApiError {
                retry_after: Some(5),
                ..ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "llm_unavailable",
                    format!("{message}; try again shortly"),
                )
            },
            LlmError::Timeout(_) => ApiError::new(StatusCode::GATEWAY_TIMEOUT, "llm_timeout", message),
            LlmError::Malformed { .. } => ApiError::new(StatusCode::BAD_GATEWAY, "llm_malformed", message),
            LlmError::Refused { .. } => ApiError::new(StatusCode::BAD_GATEWAY, "llm_refused", message),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> ApiError {
        match error {
            StoreError::NotFound(_) => ApiError::not_found(error.to_string()),
            StoreError::Database { .. } => {
                tracing::error!(error = %kb_core::domain::Chain(&error), "conversation store failed");
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "the conversation store failed")
            }
        }
    }
}

impl From<TurnError> for ApiError {
    fn from(error: TurnError) -> ApiError {
        match error {
            TurnError::EmptyMessage => ApiError::bad_request(error.to_string()),
            TurnError::MessageTooLong(_) => {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", error.to_string())
            }
            TurnError::Llm(llm) => llm.into(),
            TurnError::Store(store) => store.into(),
            TurnError::ConversationNotFound(_) => ApiError::not_found(error.to_string()),
        }
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> ApiError {
        let status = rejection.status();
        let code = match status {
            StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
            _ => "bad_request",
        };
        let status =
            if status == StatusCode::UNPROCESSABLE_ENTITY { StatusCode::BAD_REQUEST } else { status };
        ApiError::new(status, code, rejection.body_text())
    }
}

/// A JSON body whose rejections answer in kb's error shape.
#[derive(Debug, Clone, Copy, Default, FromRequest)]
#[from_request(via(axum::Json), rejection(ApiError))]
pub struct ApiJson<T>(pub T);

impl<T: serde::Serialize> IntoResponse for ApiJson<T> {
    fn into_response(self) -> Response {
        Json(self.0).into_response()
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> ApiError {
        ApiError::bad_request(rejection.body_text())
    }
}

/// A query string whose rejections answer in kb's error shape.
#[derive(Debug, Clone, Copy, Default, FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct ApiQuery<T>(pub T);
