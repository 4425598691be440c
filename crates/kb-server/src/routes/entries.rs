//! `/api/entries`: list, get, update (fields and body edits) and move.

use axum::extract::{Path, State};
use kb_core::EntryEdit;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ApiError, ApiJson, ApiQuery};
use crate::state::AppState;

/// Query of `GET /api/entries`.
#[derive(Debug, Deserialize)]
pub struct ListParams {
    category: Option<String>,
    status: Option<String>,
    folder: Option<String>,
    limit: Option<u64>,
    offset: Option<u64>,
}

/// Body of `POST /api/entries/{path}/move`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MoveBody {
    target_category: Option<String>,
    target_path: Option<String>,
}

/// `GET /api/entries?category&status&folder&limit&offset` → `{entries, total}`.
pub async fn list(
    State(state): State<AppState>,
    ApiQuery(params): ApiQuery<ListParams>,
) -> Result<ApiJson<impl Serialize>, ApiError> {
    let query = kb_core::ListQuery {
        category: params.category,
        status: params.status,
        folder: params.folder,
        limit: params.limit,
        offset: params.offset,
    };
    let page = state.entries().list(&query).await?;
    Ok(ApiJson(kb_core::output::EntryList::from(page)))
}

/// Query of `GET /api/entries/{path}`.
#[derive(Debug, Deserialize)]
pub struct EntryParams {
    /// Only these lines of the file: `START-END` or `N`.
    lines: Option<String>,
}

/// `GET /api/entries/{path}` → `{entry, links, backlinks, related}`;
/// `GET /api/entries/{path}?lines=START-END` (or `=N`) → `{entry, lines: {start, end,
/// total, text}}`, the entry without its notes.
pub async fn get(
    State(state): State<AppState>,
    Path(path): Path<String>,
    ApiQuery(params): ApiQuery<EntryParams>,
) -> Result<ApiJson<impl Serialize>, ApiError> {
    let entries = state.entries();
    let found = match params.lines {
        Some(lines) => entries.get_lines(&path, &lines).await?,
        None => entries.get(&path).await?,
    };
    Ok(ApiJson(found))
}

/// `PATCH /api/entries/{path}` with `{updates?, body?}` (fields to set, an edit of the
/// notes) or, as before, the fields to change themselves → `{path, updatedFields}`.
pub async fn update(
    State(state): State<AppState>,
    Path(path): Path<String>,
    ApiJson(body): ApiJson<Value>,
) -> Result<ApiJson<impl Serialize>, ApiError> {
    let (updates, body) = patch_parts(body)?;
    Ok(ApiJson(state.entries().update(&path, &EntryEdit { updates, body }).await?))
}

/// The fields and the body edit a PATCH body asks for. It is `{updates?, body?}` when
/// `updates` or `body` holds an object (then no other key may be there); otherwise the
/// whole object is the fields (where `content` or `body` as text replaces the notes).
fn patch_parts(body: Value) -> Result<(Option<Value>, Option<Value>), ApiError> {
    let Value::Object(mut object) = body else {
        return Err(ApiError::bad_request(
            "the body must be a JSON object: {\"updates\": {fields}, \"body\": {mode, content, …}} or the fields to change",
        ));
    };
    let wrapped = ["updates", "body"].iter().any(|key| object.get(*key).is_some_and(Value::is_object));
    if !wrapped {
        return Ok((Some(Value::Object(object)), None));
    }
    if let Some(other) = object.keys().find(|k| !matches!(k.as_str(), "updates" | "body")) {
        return Err(ApiError::bad_request(format!(
            "unexpected key {other:?} beside updates and body: put fields inside updates"
        )));
    }
    let part = |value: Option<Value>, what: &str| match value {
        None | Some(Value::Null) => Ok(None),
        Some(value @ Value::Object(_)) => Ok(Some(value)),
        Some(_) => Err(ApiError::bad_request(format!("{what} must be a JSON object"))),
    };
    let updates = part(object.remove("updates"), "updates")?;
    let edit = part(object.remove("body"), "body")?;
    Ok((updates, edit))
}

/// `POST /api/entries/{path}/move {targetCategory}` or `{targetPath}` → `{oldPath, newPath,
/// category}`.
pub async fn post_action(
    State(state): State<AppState>,
    Path(path): Path<String>,
    ApiJson(body): ApiJson<MoveBody>,
) -> Result<ApiJson<impl Serialize>, ApiError> {
    let Some(entry_path) = path.strip_suffix("/move") else {
        return Err(ApiError::not_found(format!("no such action: POST /api/entries/{path}")));
    };
    let entries = state.entries();
    let moved = match (body.target_category, body.target_path) {
        (Some(category), None) => entries.move_to(entry_path, &category).await?,
        (None, Some(target)) => entries.move_to_path(entry_path, &target).await?,
        _ => return Err(ApiError::bad_request("give targetCategory or targetPath (one of them)")),
    };
    Ok(ApiJson(moved))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn patch_bodies_old_and_new() {
        let parts = |body: Value| patch_parts(body).map_err(|_| ());
        assert_eq!(parts(json!({"status": "done"})), Ok((Some(json!({"status": "done"})), None)));
        assert_eq!(
            parts(json!({"updates": {"status": "done"}})),
            Ok((Some(json!({"status": "done"})), None))
        );
        assert_eq!(parts(json!({"body": "new notes"})), Ok((Some(json!({"body": "new notes"})), None)));
        let edit = json!({"mode": "append", "content": "x"});
        assert_eq!(parts(json!({"body": edit})), Ok((None, Some(edit.clone()))));
        assert_eq!(
            parts(json!({"updates": {"a": 1}, "body": edit})),
            Ok((Some(json!({"a": 1})), Some(edit.clone())))
        );
        assert_eq!(parts(json!({"updates": null, "body": edit})), Ok((None, Some(edit.clone()))));
        assert!(parts(json!({"body": edit, "status": "done"})).is_err());
        assert!(parts(json!({"body": edit, "updates": "x"})).is_err());
        assert!(parts(json!([1])).is_err());
    }
}
