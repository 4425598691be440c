//! Revision history over HTTP: an entry's history and one revision with its texts, restore,
//! undo and delete (docs/HISTORY.md).
//!
//! `/api/entries/{*path}` is one catch-all route, so the history actions are told apart
//! here by the path's tail (`…/history`, `…/history/{id}`, `…/restore`), and so are an
//! entry's links (`…/links`) and related entries (`…/related`); every other request goes
//! on to the entries handlers unchanged.

use axum::body::Body;
use axum::extract::{FromRequest, Path, Request, State};
use axum::handler::Handler;
use axum::response::{IntoResponse, Response};
use kb_core::tools::context::BuildContext;
use kb_core::{ConversationId, LaterChanges, UndoOf};
use serde::{Deserialize, Serialize};

use super::{MAX_BODY_BYTES, entries};
use crate::dto::{RestoreAnswer, RevisionAnswer, RevisionsAnswer};
use crate::error::{ApiError, ApiJson};
use crate::state::AppState;

/// Body of `POST /api/entries/{path}/restore`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestoreBody {
    revision: i64,
}

/// Body of `POST /api/undo` (it may also be empty).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UndoBody {
    conversation_id: Option<String>,
    #[serde(default)]
    force: bool,
}

/// The query of `GET /api/entries/{path}/context`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContextQuery {
    depth: Option<String>,
    limit: Option<String>,
}

/// build_context's arguments from the path and query (`?depth=1..3&limit=`): numbers as
/// numbers, anything else as written, for the tool's own check to name.
fn context_args(entry: &str, uri: &axum::http::Uri) -> Result<serde_json::Value, ApiError> {
    let query = axum::extract::Query::<ContextQuery>::try_from_uri(uri)
        .map_err(|rejection| ApiError::bad_request(rejection.body_text()))?;
    let mut args = serde_json::Map::from_iter([("path".to_string(), serde_json::Value::from(entry))]);
    for (key, value) in [("depth", &query.depth), ("limit", &query.limit)] {
        if let Some(value) = value {
            let value = value
                .parse::<u64>()
                .map_or_else(|_| serde_json::Value::from(value.as_str()), serde_json::Value::from);
            args.insert(key.to_string(), value);
        }
    }
    Ok(serde_json::Value::Object(args))
}

/// `{links, backlinks}`: what an entry links to and what links to it.
#[derive(Debug, Serialize)]
pub struct LinksAnswer {
    links: Vec<kb_core::tools::get::LinkView>,
    backlinks: Vec<kb_core::tools::get::LinkView>,
}

/// `{related}`: the entries nearest one in meaning.
#[derive(Debug, Serialize)]
pub struct RelatedAnswer {
    related: Vec<kb_core::tools::get::RelatedView>,
}

/// What a GET under `/api/entries/` asks for.
#[derive(Debug, PartialEq, Eq)]
enum Wanted<'a> {
    /// `{path}/history`.
    History(&'a str),
    /// `{path}/history/{id}`.
    Revision(&'a str, i64),
    /// `{path}/links`.
    Links(&'a str),
    /// `{path}/related`.
    Related(&'a str),
    /// `{path}/context`.
    Context(&'a str),
    /// Anything else: the entry itself.
    Entry,
}

fn wanted(path: &str) -> Wanted<'_> {
    if let Some(entry) = path.strip_suffix("/history") {
        return Wanted::History(entry);
    }
    if let Some(entry) = path.strip_suffix("/links") {
        return Wanted::Links(entry);
    }
    if let Some(entry) = path.strip_suffix("/related") {
        return Wanted::Related(entry);
    }
    if let Some(entry) = path.strip_suffix("/context") {
        return Wanted::Context(entry);
    }
    if let Some((rest, id)) = path.rsplit_once('/')
        && let Some(entry) = rest.strip_suffix("/history")
        && let Ok(id) = id.parse::<i64>()
    {
        return Wanted::Revision(entry, id);
    }
    Wanted::Entry
}

/// `GET /api/entries/{path}/history` → `{revisions}` newest first;
/// `GET /api/entries/{path}/history/{id}` → the revision with `before` and `after`;
/// `GET /api/entries/{path}/links` → `{links, backlinks}` (as get_entry answers them);
/// `GET /api/entries/{path}/related` → `{related}` (as get_entry answers them);
/// `GET /api/entries/{path}/context?depth=1..3&limit=` → what build_context answers;
/// any other GET is the entry (`{entry}`).
pub async fn get(State(state): State<AppState>, Path(path): Path<String>, request: Request) -> Response {
    let history = state.history();
    match wanted(&path) {
        Wanted::History(entry) => match history.revisions(entry).await {
            Ok(revisions) => ApiJson(RevisionsAnswer { revisions: &revisions }).into_response(),
            Err(failure) => ApiError::from(failure).into_response(),
        },
        Wanted::Revision(entry, id) => match history.revision(entry, id).await {
            Ok(text) => ApiJson(RevisionAnswer::from(&text)).into_response(),
            Err(failure) => ApiError::from(failure).into_response(),
        },
        Wanted::Links(entry) => match state.entries().get(entry).await {
            Ok(found) => {
                let (links, backlinks) =
                    (found.links.unwrap_or_default(), found.backlinks.unwrap_or_default());
                ApiJson(LinksAnswer { links, backlinks }).into_response()
            }
            Err(failure) => ApiError::from(failure).into_response(),
        },
        Wanted::Related(entry) => match state.entries().get(entry).await {
            Ok(found) => {
                ApiJson(RelatedAnswer { related: found.related.unwrap_or_default() }).into_response()
            }
            Err(failure) => ApiError::from(failure).into_response(),
        },
        Wanted::Context(entry) => match context_args(entry, request.uri()) {
            Ok(args) => match state.assistant.tools().decode::<BuildContext>(args) {
                Ok(args) => {
                    match state.assistant.run_as::<BuildContext>(args, state.source, &state.actor).await {
                        Ok(context) => ApiJson(context).into_response(),
                        Err(failure) => ApiError::from(failure).into_response(),
                    }
                }
                Err(failure) => ApiError::from(failure).into_response(),
            },
            Err(error) => error.into_response(),
        },
        Wanted::Entry => entries::get.call(request, state).await,
    }
}

/// `POST /api/entries/{path}/restore {revision}` → `{path, revision?}`; any other POST goes
/// on to the entry actions (move).
pub async fn post_action(
    State(state): State<AppState>,
    Path(path): Path<String>,
    request: Request,
) -> Response {
    let Some(entry) = path.strip_suffix("/restore") else {
        return entries::post_action.call(request, state).await;
    };
    let answer = async {
        let ApiJson(body) = ApiJson::<RestoreBody>::from_request(request, &state).await?;
        Ok::<_, ApiError>(state.history().restore(entry, body.revision).await?)
    };
    match answer.await {
        Ok(restored) => ApiJson(RestoreAnswer::from(&restored)).into_response(),
        Err(error) => error.into_response(),
    }
}

/// `DELETE /api/entries/{path}` → `{path, deleted: true, revision}`.
pub async fn delete(
    State(state): State<AppState>,
    Path(path): Path<String>,
) -> Result<ApiJson<impl Serialize>, ApiError> {
    Ok(ApiJson(state.entries().delete(&path).await?))
}

/// `POST /api/undo {conversationId?, force?}` (or no body) → `{undone, files}`: undoes the
/// most recent change kb made in that conversation, or without one anywhere.
pub async fn undo(
    State(state): State<AppState>,
    request: Request,
) -> Result<ApiJson<impl Serialize>, ApiError> {
    let body = optional_json::<UndoBody>(request, &state).await?.unwrap_or_default();
    let of = match body.conversation_id.filter(|id| !id.trim().is_empty()) {
        Some(id) => UndoOf::Conversation(ConversationId::new(id)),
        None => UndoOf::Anyone,
    };
    let later = if body.force { LaterChanges::Replace } else { LaterChanges::Refuse };
    Ok(ApiJson(state.history().undo(of, later).await?))
}

/// A JSON body, or `None` when the body is empty.
async fn optional_json<T: serde::de::DeserializeOwned>(
    request: Request,
    state: &AppState,
) -> Result<Option<T>, ApiError> {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES).await.map_err(|_| {
        ApiError::new(axum::http::StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "the body is too large")
    })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let request = Request::from_parts(parts, Body::from(bytes));
    let ApiJson(value) = ApiJson::<T>::from_request(request, state).await?;
    Ok(Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_paths_are_told_from_entries() {
        assert_eq!(wanted("projects/a.md/history"), Wanted::History("projects/a.md"));
        assert_eq!(wanted("projects/a.md/history/42"), Wanted::Revision("projects/a.md", 42));
        assert_eq!(wanted("projects/a.md"), Wanted::Entry);
        assert_eq!(wanted("projects/a.md/links"), Wanted::Links("projects/a.md"));
        assert_eq!(wanted("projects/a.md/related"), Wanted::Related("projects/a.md"));
        assert_eq!(wanted("projects/a.md/context"), Wanted::Context("projects/a.md"));
        assert_eq!(wanted("projects/a.md/history/x"), Wanted::Entry);
    }
}
