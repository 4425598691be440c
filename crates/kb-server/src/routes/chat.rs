//! `POST /api/chat`: one chat turn, answered as JSON, or — with `Accept:
//! text/event-stream` — as Server-Sent Events while it runs: `turn.started`,
//! `tool.started`, `tool.finished`, `message.delta`, then `message.completed` (the body the
//! JSON answer would have) or `error` (`{code, message}`, the JSON API's codes).
//!
//! Either way the turn runs as a task of its own: a client that hangs up mid-turn does not
//! cut it short, so what it filed and the conversation are stored whole.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use kb_core::{Assistant, ChatResponse, ConversationId, TurnError};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;

use crate::dto::ChatAnswer;
use crate::error::{ApiError, ApiJson};
use crate::state::AppState;

/// The body of a chat request.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChatBody {
    conversation_id: Option<String>,
    message: String,
}

/// One chat turn, as JSON or as events (see the module).
pub async fn chat(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ChatBody>,
) -> Response {
    let id = body.conversation_id.filter(|id| !id.trim().is_empty()).map(ConversationId::new);
    let assistant = Arc::clone(&state.assistant);
    let actor = state.actor.clone();
    if wants_events(&headers) {
        return events(assistant, actor, id, body.message).into_response();
    }
    let turn =
        tokio::spawn(async move { assistant.chat().as_actor(&actor).send(id.as_ref(), &body.message).await });
    match joined(turn.await) {
        Ok(response) => ApiJson(ChatAnswer::from(&response)).into_response(),
        Err(error) => error.into_response(),
    }
}

/// Whether the client asked for Server-Sent Events.
fn wants_events(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|accept| accept.split(',').any(|kind| kind.trim().starts_with("text/event-stream")))
}

fn joined(
    result: Result<Result<ChatResponse, TurnError>, tokio::task::JoinError>,
) -> Result<ChatResponse, ApiError> {
    match result {
        Ok(answer) => answer.map_err(ApiError::from),
        Err(error) => {
            tracing::error!(%error, "a chat turn's task failed");
            Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "the chat turn failed"))
        }
    }
}

/// The turn's events as they happen, then its end. The turn and the forwarding run as
/// tasks: the stream closing early (the client gone) stops nothing but the sending.
fn events(
    assistant: Arc<Assistant>,
    actor: kb_core::domain::Actor,
    id: Option<ConversationId>,
    message: String,
) -> impl IntoResponse {
    let (sender, receiver) = mpsc::unbounded_channel::<Result<Event, Infallible>>();
    tokio::spawn(async move {
        let (turn_sender, mut turn_events) = mpsc::unbounded_channel();
        let turn = tokio::spawn(async move {
            assistant.chat().as_actor(&actor).send_with_events(id.as_ref(), &message, turn_sender).await
        });
        while let Some(event) = turn_events.recv().await {
            let data = crate::dto::turn_event_json(&event);
            let _ = sender.send(Ok(Event::default().event(crate::dto::turn_event_name(&event)).data(data)));
        }
        let end = match joined(turn.await) {
            Ok(response) => Event::default().event("message.completed").data(
                serde_json::to_string(&ChatAnswer::from(&response)).unwrap_or_else(|_| "{}".to_string()),
            ),
            Err(error) => Event::default()
                .event("error")
                .data(json!({ "code": error.code, "message": error.message }).to_string()),
        };
        let _ = sender.send(Ok(end));
    });
    Sse::new(UnboundedReceiverStream::new(receiver)).keep_alive(KeepAlive::default())
}
