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

/// One chat turn.
pub async fn chat(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<ChatBody>,
) -> Result<ApiJson<ChatResponse>, ApiError> {
    let id = body.conversation_id.filter(|id| !id.trim().is_empty()).map(ConversationId::new);
    let response = state.assistant.chat(id.as_ref(), &body.message).await?;
    Ok(ApiJson(response))
}
