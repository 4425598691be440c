//! `GET /api/vaults`: the vaults the person may use, with their role in each.

use axum::extract::State;
use kb_core::domain::VaultRole;
use kb_storage::accounts::SqliteAccounts;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiJson};
use crate::state::AppState;

/// `GET /api/vaults` without accounts: `{vaults: []}` (there is one vault, and no one to
/// name). With accounts the request is answered before it reaches a vault, by [`listing`].
pub async fn list(State(state): State<AppState>) -> Result<ApiJson<Value>, ApiError> {
    let (Some(person), Some(accounts)) = (state.actor.name(), state.accounts_now().await) else {
        return Ok(ApiJson(json!({ "vaults": [] })));
    };
    let read_only = state.actor.role() < VaultRole::Editor;
    Ok(ApiJson(listing(accounts, person, state.vault.as_deref(), read_only).await?))
}

/// `{person, vaults: [{name, role, own, current}]}`: the vaults `person` may use, their own
/// first; `current` marks the one asked for (`asked`, else their own). With a read-only
/// token every role reads `reader`.
pub async fn listing(
    accounts: &SqliteAccounts,
    person: &str,
    asked: Option<&str>,
    read_only: bool,
) -> Result<Value, ApiError> {
    let vaults = accounts.vaults_of(person).await.map_err(|error| {
        tracing::error!(%error, "the vaults could not be listed");
        ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the vaults could not be listed",
        )
    })?;
    let own = vaults.iter().find(|a| a.vault.owner.as_deref() == Some(person)).map(|a| a.vault.name.clone());
    let current = asked.map(str::to_string).or(own);
    let listed: Vec<Value> = vaults
        .iter()
        .map(|access| {
            let role = if read_only { access.role.min(VaultRole::Reader) } else { access.role };
            json!({
                "name": access.vault.name,
                "role": role.as_str(),
                "own": access.vault.owner.as_deref() == Some(person),
                "current": current.as_deref() == Some(access.vault.name.as_str()),
            })
        })
        .collect();
    Ok(json!({ "person": person, "vaults": listed }))
}
