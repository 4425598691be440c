//! `GET /api/sync` (where sync stands), `POST /api/sync` (a round now) and
//! `POST /api/sync/resolve` (a conflict resolved).

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiJson};
use crate::state::AppState;

/// `GET /api/sync`: `{enabled: false}` without sync; else `{enabled, remote, device, ahead,
/// behind, lastSync, lastError, conflicts}` (the remote without credentials).
pub async fn status(State(state): State<AppState>) -> Result<ApiJson<Value>, ApiError> {
    let Some(sync) = state.assistant.sync() else { return Ok(ApiJson(json!({"enabled": false}))) };
    let status = sync.status().await.map_err(failed)?;
    let mut body = json!(status);
    if let Value::Object(fields) = &mut body {
        fields.insert("enabled".into(), Value::Bool(true));
    }
    Ok(ApiJson(body))
}

/// `POST /api/sync`: a round now; `{came, went, conflicts, outsideEdits}`.
pub async fn round(State(state): State<AppState>) -> Result<ApiJson<Value>, ApiError> {
    let Some(sync) = state.assistant.sync() else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "sync_off",
            "sync is off: set KB_SYNC_REMOTE to a git remote",
        ));
    };
    let report = sync.round_now().await.map_err(failed)?;
    Ok(ApiJson(json!(report)))
}

/// A round or status that failed: 502 when the remote is at fault, else 500.
fn failed(error: kb_core::CoreError) -> ApiError {
    let message = kb_core::domain::Chain(&error).to_string();
    match &error {
        kb_core::CoreError::Sync(
            kb_core::SyncError::Unreachable(_) | kb_core::SyncError::RewrittenRemote { .. },
        ) => ApiError::new(StatusCode::BAD_GATEWAY, "sync_failed", message),
        kb_core::CoreError::Sync(kb_core::SyncError::Refused(_)) => {
            ApiError::new(StatusCode::BAD_GATEWAY, "sync_refused", message)
        }
        _ => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "sync_failed", message),
    }
}

/// The body of `POST /api/sync/resolve`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolveBody {
    /// The conflict copy, or the note when it has one copy.
    path: String,
    /// `mine`, `theirs` or `both`.
    keep: String,
}

/// `POST /api/sync/resolve {path, keep}`: `{note, copy, keep}`; undo takes it back.
pub async fn resolve(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ResolveBody>,
) -> Result<ApiJson<Value>, ApiError> {
    let keep = kb_core::domain::conflicts::ConflictKeep::parse(&body.keep)
        .ok_or_else(|| ApiError::bad_request("keep is mine, theirs or both"))?;
    let resolved = state.history().resolve_conflict(&body.path, keep).await?;
    Ok(ApiJson(json!({
        "note": resolved.note.as_str(),
        "copy": resolved.copy.as_str(),
        "keep": resolved.keep.as_str(),
        "keptAs": resolved.kept_as.as_ref().map(|p| p.as_str()),
    })))
}
