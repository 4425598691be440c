//! `POST /api/files?name=NAME[&hints=H]`: a file's raw bytes, sent with its own content
//! type, kept in the vault's `attachments/` and filed as a note of its own
//! ([`kb_core::Intake`]); `POST /api/voice?name=NAME`: a voice note, kept the same way and
//! filed as its transcript. The size is checked against `KB_UPLOAD_MAX_BYTES` before a byte
//! is read (by `Content-Length`) and while reading; the body streams to disk, never whole
//! in memory, and an `Idempotency-Key` is fingerprinted by the file's SHA-256 as it goes.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use tokio_stream::StreamExt;

use crate::error::{ApiError, ApiJson, ApiQuery};
use crate::idempotency::{answer_once, key_of};
use crate::state::AppState;

/// The query of `POST /api/files`.
#[derive(Debug, Deserialize)]
pub struct FileQuery {
    /// The file's name (only a slug of it is kept, in kb's own name for the file).
    name: Option<String>,
    /// Words that steer the filing, as for a capture.
    hints: Option<String>,
}

/// Content types a page of any site may send without asking first: a file is never sent
/// as one of them, so that the cross-site rules hold.
const FORM_TYPES: [&str; 3] = ["application/x-www-form-urlencoded", "multipart/form-data", "text/plain"];

/// What is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    /// A file: its text filed.
    File,
    /// A voice note: its transcript filed.
    Voice,
}

/// `POST /api/files?name=NAME` → the capture's data, with `attachment`.
pub async fn upload(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<FileQuery>,
    request: Request,
) -> Response {
    match receive(&state, query, request, Sent::File).await {
        Ok(response) => response,
        Err(refused) => refused.into_response(),
    }
}

/// `POST /api/voice?name=NAME` → the capture's data, with `attachment`, `transcribed` and,
/// when it was not, the `problem`.
pub async fn voice(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<FileQuery>,
    request: Request,
) -> Response {
    match receive(&state, query, request, Sent::Voice).await {
        Ok(response) => response,
        Err(refused) => refused.into_response(),
    }
}

async fn receive(
    state: &AppState,
    query: FileQuery,
    request: Request,
    sent: Sent,
) -> Result<Response, ApiError> {
    let name = query.name.filter(|name| !name.trim().is_empty()).ok_or_else(|| {
        let example = if sent == Sent::Voice { "memo.webm" } else { "report.pdf" };
        ApiError::bad_request(format!("name is required: the file's name, as ?name={example}"))
    })?;
    let headers = request.headers().clone();
    let content_type = content_type(&headers)?;
    let intake = state.intake();
    let limit = intake.clone().upload_limit();
    if declared_length(&headers).is_some_and(|length| length > limit) {
        return Err(too_large(limit));
    }
    let key = key_of(&headers)?;
    let mut upload = intake.clone().start_upload()?;
    let mut body = request.into_body().into_data_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|_| ApiError::bad_request("the upload broke off before its end"))?;
        upload.write(&chunk).map_err(|_| too_large(limit))?;
    }
    let route = if sent == Sent::Voice { "voice" } else { "files" };
    let fingerprint = format!("POST /api/{route} {name} {}", upload.sha256());
    let hints = query.hints;
    let file = async move {
        let answer = match sent {
            Sent::File => intake
                .file(upload, &name, Some(&content_type), hints)
                .await
                .map(|d| ApiJson(d).into_response()),
            Sent::Voice => intake.voice(upload, &name, hints).await.map(|d| ApiJson(d).into_response()),
        };
        answer.unwrap_or_else(|failure| ApiError::from(failure).into_response())
    };
    Ok(match key {
        Some(key) => answer_once(state, &key, &fingerprint, file).await,
        None => file.await,
    })
}

/// The file's own content type: required, and never a form type.
fn content_type(headers: &HeaderMap) -> Result<String, ApiError> {
    let value =
        headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::trim).unwrap_or_default();
    let essence = value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    if essence.is_empty() || FORM_TYPES.contains(&essence.as_str()) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "send the file's bytes as the body with its own Content-Type (application/pdf, image/png, \
             application/octet-stream for text); form types are refused",
        ));
    }
    Ok(value.to_string())
}

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH)?.to_str().ok()?.trim().parse().ok()
}

fn too_large(limit: u64) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        format!("the file is larger than {limit} bytes (KB_UPLOAD_MAX_BYTES); nothing was kept"),
    )
}
