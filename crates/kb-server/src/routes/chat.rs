//! `POST /api/chat`.

use axum::extract::State;
use kb_core::{ChatResponse, ConversationId};
use serde::Deserialize;

use crate::error::{ApiError, ApiJson};
use crate::state::AppState;

/// The body of a chat request.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChatBody {
    conversation_id: Option<String>,
    message: String,
}

/// One chat turn. The turn runs as a task of its own: a client that hangs up mid-turn
/// does not cut it short, so what it filed and the conversation are stored whole.
pub async fn chat(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ChatBody>,
) -> Result<ApiJson<ChatResponse>, ApiError> {
    let id = body.conversation_id.filter(|id| !id.trim().is_empty()).map(ConversationId::new);
    let assistant = std::sync::Arc::clone(&state.assistant);
    let turn = tokio::spawn(async move { assistant.chat(id.as_ref(), &body.message).await });
    let response = turn.await.map_err(|error| {
        tracing::error!(%error, "a chat turn's task failed");
        ApiError::new(axum::http::StatusCode::INTERNAL_SERVER_ERROR, "internal", "the chat turn failed")
    })??;
    Ok(ApiJson(response))
}
