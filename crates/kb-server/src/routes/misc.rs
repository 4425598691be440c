//! Capture, search, digest, the index, health and the web page.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse};
use kb_core::{CaptureOptions, CaptureSource};
use serde::Deserialize;
use serde_json::Value;

use crate::error::{ApiError, ApiJson, ApiQuery};
use crate::state::AppState;

/// The web page, served from the binary.
const PAGE: &str = include_str!("../page/index.html");

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
) -> Result<ApiJson<Value>, ApiError> {
    if body.text.len() > kb_core::MAX_MESSAGE_BYTES {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            "text is longer than 32 KiB",
        ));
    }
    let options = CaptureOptions { merge_into: body.merge_into, create_new: body.create_new };
    Ok(ApiJson(
        state.assistant.capture_with(&body.text, body.hints.as_deref(), &options, CaptureSource::Api).await?,
    ))
}

/// `GET /api/search?q&category&limit` → `{entries, total}`.
pub async fn search(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<SearchQuery>,
) -> Result<ApiJson<Value>, ApiError> {
    let q = query.q.unwrap_or_default();
    let prefix = query.prefix.unwrap_or(false);
    Ok(ApiJson(state.assistant.search_with(&q, query.category.as_deref(), query.limit, prefix).await?))
}

/// `POST /api/digest {type}` → `{type, content}`.
pub async fn digest(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<DigestBody>,
) -> Result<ApiJson<Value>, ApiError> {
    Ok(ApiJson(state.assistant.digest(&body.r#type).await?))
}

/// `GET /api/index`: index.md as `text/markdown`.
pub async fn index(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], state.assistant.index_markdown())
}

/// `GET /healthz`.
pub async fn healthz(State(state): State<AppState>) -> ApiJson<Value> {
    let mut health = serde_json::to_value(state.assistant.health()).unwrap_or_default();
    if let Value::Object(fields) = &mut health {
        let outreach = serde_json::to_value(state.assistant.outreach_status().await).unwrap_or_default();
        fields.insert("outreach".into(), outreach);
    }
    ApiJson(health)
}

/// `GET /`: the web page.
pub async fn page() -> Html<&'static str> {
    Html(PAGE)
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
