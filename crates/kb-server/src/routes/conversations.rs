//! `/api/conversations`: list, get with messages, rename, delete.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use kb_core::ConversationId;
use serde::Deserialize;
use serde_json::Value;

use crate::dto::{ConversationJson, ConversationWithMessages, ConversationsJson};
use crate::error::{ApiError, ApiJson};
use crate::state::AppState;

/// The body of a rename.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenameBody {
    title: String,
}

/// `GET /api/conversations`: `{conversations: [...]}`, most recent first.
pub async fn list(State(state): State<AppState>) -> Result<ApiJson<Value>, ApiError> {
    let conversations = state.chat().conversations().await?;
    Ok(ApiJson(serde_json::to_value(ConversationsJson::from(conversations.as_slice())).unwrap_or_default()))
}

/// `GET /api/conversations/{id}`: the conversation and its messages.
pub async fn get(State(state): State<AppState>, Path(id): Path<String>) -> Result<ApiJson<Value>, ApiError> {
    let (conversation, messages) = state.chat().conversation(&ConversationId::new(id)).await?;
    Ok(ApiJson(
        serde_json::to_value(ConversationWithMessages::new(&conversation, &messages)).unwrap_or_default(),
    ))
}

/// `PATCH /api/conversations/{id}` `{title}`: renames; answers the conversation.
pub async fn rename(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<RenameBody>,
) -> Result<ApiJson<Value>, ApiError> {
    let title = body.title.trim();
    if title.is_empty() {
        return Err(ApiError::bad_request("title must not be empty"));
    }
    if title.chars().count() > 200 {
        return Err(ApiError::bad_request("title must be at most 200 characters"));
    }
    let id = ConversationId::new(id);
    state.chat().rename(&id, title).await?;
    let (conversation, _) = state.chat().conversation(&id).await?;
    Ok(ApiJson(serde_json::to_value(ConversationJson::from(&conversation)).unwrap_or_default()))
}

/// `DELETE /api/conversations/{id}`: removes it and its messages.
pub async fn delete(State(state): State<AppState>, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    state.chat().delete(&ConversationId::new(id)).await?;
    Ok(StatusCode::NO_CONTENT)
}
