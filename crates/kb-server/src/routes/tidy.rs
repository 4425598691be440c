//! Finding duplicates and merging entries: `GET /api/duplicates?name=` and
//! `POST /api/merge {targetPath, sourcePaths}` (at once: an API call is the person's
//! explicit request; `POST /api/undo` takes it back).

use axum::extract::State;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ApiJson, ApiQuery};
use crate::state::AppState;

/// Query of `GET /api/duplicates`.
#[derive(Debug, Default, Deserialize)]
pub struct DuplicatesQuery {
    /// Only entries named like this.
    pub name: Option<String>,
}

/// Body of `POST /api/merge`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MergeBody {
    /// The entry kept: a path or a name.
    pub target_path: String,
    /// The entries merged into it and removed: paths or names.
    pub source_paths: Vec<String>,
}

/// `GET /api/duplicates?name=` → `{groups: [{reason, entries}], total}`.
pub async fn duplicates(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<DuplicatesQuery>,
) -> Result<ApiJson<impl Serialize>, ApiError> {
    Ok(ApiJson(state.entries().duplicates(query.name.as_deref()).await?))
}

/// `POST /api/merge {targetPath, sourcePaths}` → `{path, merged, referencesUpdated}`.
pub async fn merge(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<MergeBody>,
) -> Result<ApiJson<impl Serialize>, ApiError> {
    Ok(ApiJson(state.entries().merge(&body.target_path, &body.source_paths).await?))
}
