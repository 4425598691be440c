//! Capture, search, digest, the entry list and health.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use kb_core::CaptureOptions;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ApiError, ApiJson, ApiQuery};
use crate::state::AppState;

/// Body of `POST /api/capture`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct CaptureBody {
    text: String,
    hints: Option<String>,
    /// Add the capture to this entry (path or name) instead of filing a new one.
    merge_into: Option<String>,
    /// File a new entry even when a person or project of a like name exists.
    #[serde(default)]
    create_new: bool,
}

/// Query of `GET /api/search`.
#[derive(Debug, Deserialize)]
pub struct SearchQuery {
    q: Option<String>,
    category: Option<String>,
    limit: Option<u64>,
    /// Search as you type: the last word may be unfinished.
    prefix: Option<bool>,
    /// `keyword`, `hybrid` or `semantic` (the default: hybrid with an embedding model).
    mode: Option<String>,
}

/// Body of `POST /api/digest`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DigestBody {
    r#type: String,
}

/// `POST /api/capture {text, hints?, mergeInto?, createNew?}` → `{path, category, name,
/// confidence, clarificationNeeded, merged?}`.
pub async fn capture(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<CaptureBody>,
) -> Result<ApiJson<impl Serialize>, ApiError> {
    if body.text.len() > kb_core::MAX_MESSAGE_BYTES {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            "text is longer than 32 KiB",
        ));
    }
    let options =
        CaptureOptions { hints: body.hints, merge_into: body.merge_into, create_new: body.create_new };
    Ok(ApiJson(state.entries().capture(&body.text, &options).await?))
}

/// `GET /api/search?q&category&limit&prefix&mode` → `{entries, total, mode,
/// semanticHits?}`.
pub async fn search(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<SearchQuery>,
) -> Result<ApiJson<impl Serialize>, ApiError> {
    let search = kb_core::SearchRequest {
        text: query.q.unwrap_or_default(),
        category: query.category,
        limit: query.limit,
        as_typed: query.prefix.unwrap_or(false),
        mode: query.mode,
    };
    Ok(ApiJson(state.entries().search(&search).await?))
}

/// `POST /api/digest {type}` → `{type, content}`.
pub async fn digest(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<DigestBody>,
) -> Result<ApiJson<impl Serialize>, ApiError> {
    Ok(ApiJson(state.entries().digest(&body.r#type).await?))
}

/// `GET /api/index`: the entry list (`index.md`) as `text/markdown`.
pub async fn entry_list(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], state.entries().entry_list_markdown())
}

/// `GET /healthz`.
pub async fn healthz(State(state): State<AppState>) -> ApiJson<Value> {
    let health = state.assistant.health();
    let mut health = serde_json::to_value(crate::dto::HealthJson::from(&health)).unwrap_or_default();
    if let Value::Object(fields) = &mut health {
        let status = state.outreach().status().await;
        let outreach =
            serde_json::to_value(crate::dto::OutreachStatusJson::from(&status)).unwrap_or_default();
        fields.insert("outreach".into(), outreach);
        if let Some(Value::Array(notices)) = fields.get_mut("notices") {
            notices.extend(state.notices.iter().cloned().map(Value::String));
        }
    }
    ApiJson(health)
}

/// Any path kb does not serve.
pub async fn api_not_found() -> ApiError {
    ApiError::not_found("no such endpoint")
}

/// A known path asked with a method it does not answer.
pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not answer that method",
    )
}
