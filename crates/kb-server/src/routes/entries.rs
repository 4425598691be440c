//! `/api/entries`: list, get, update and move.

use axum::extract::{Path, State};
use serde::Deserialize;
use serde_json::Value;

use crate::error::{ApiError, ApiJson, ApiQuery};
use crate::state::AppState;

/// Query of `GET /api/entries`.
#[derive(Debug, Deserialize)]
pub struct ListQuery {
    category: Option<String>,
    status: Option<String>,
    limit: Option<u64>,
    offset: Option<u64>,
}

/// Body of `POST /api/entries/{path}/move`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MoveBody {
    target_category: String,
}

/// `GET /api/entries?category&status&limit&offset` → `{entries, total}`.
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<ApiJson<Value>, ApiError> {
    let page = state
        .assistant
        .list(query.category.as_deref(), query.status.as_deref(), query.limit, query.offset)
        .await?;
    Ok(ApiJson(page))
}

/// `GET /api/entries/{path}` → `{entry}`.
pub async fn get(
    State(state): State<AppState>,
    Path(path): Path<String>,
) -> Result<ApiJson<Value>, ApiError> {
    Ok(ApiJson(state.assistant.get(&path).await?))
}

/// `PATCH /api/entries/{path}` with the fields to change (or `{updates: {...}}`) →
/// `{path, updatedFields}`.
pub async fn update(
    State(state): State<AppState>,
    Path(path): Path<String>,
    ApiJson(body): ApiJson<Value>,
) -> Result<ApiJson<Value>, ApiError> {
    let updates = match body {
        Value::Object(mut fields)
            if fields.len() == 1 && fields.get("updates").is_some_and(Value::is_object) =>
        {
            fields.remove("updates").unwrap_or_default()
        }
        Value::Object(fields) => Value::Object(fields),
        _ => return Err(ApiError::bad_request("the body must be a JSON object of the fields to change")),
    };
    Ok(ApiJson(state.assistant.update(&path, updates).await?))
}

/// `POST /api/entries/{path}/move {targetCategory}` → `{oldPath, newPath, category}`.
pub async fn post_action(
    State(state): State<AppState>,
    Path(path): Path<String>,
    ApiJson(body): ApiJson<MoveBody>,
) -> Result<ApiJson<Value>, ApiError> {
    let Some(entry_path) = path.strip_suffix("/move") else {
        return Err(ApiError::not_found(format!("no such action: POST /api/entries/{path}")));
    };
    Ok(ApiJson(state.assistant.move_entry(entry_path, &body.target_category).await?))
}
