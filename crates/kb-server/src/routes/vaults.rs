//! `GET /api/vaults`: the vaults the person may use, with their role in each.

use axum::extract::State;
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::error::ApiJson;
use crate::state::AppState;

/// `GET /api/vaults` → `{person, vaults: [{name, role, own, current}]}`: the person's vaults, their
/// own first (the one a request without `Kb-Vault` reaches). Without accounts the list is
/// empty: there is one vault, and no one to name.
pub async fn list(State(state): State<AppState>) -> Result<ApiJson<Value>, ApiError> {
    let (Some(person), Some(current)) = (state.actor.name(), state.vault.as_deref()) else {
        return Ok(ApiJson(json!({ "vaults": [] })));
    };
    let accounts = match &state.accounts {
        Some(watch) => watch.current().await,
        None => None,
    };
    let Some(accounts) = accounts else { return Ok(ApiJson(json!({ "vaults": [] }))) };
    let vaults = accounts.vaults_of(person).await.map_err(|error| {
        tracing::error!(%error, "the vaults could not be listed");
        ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the vaults could not be listed",
        )
    })?;
    // A read-only token reads in every vault: its role here is below the person's.
    let read_only = vaults.iter().any(|a| a.vault.name == current && a.role > state.actor.role());
    let listed: Vec<Value> = vaults
        .iter()
        .map(|access| {
            let role =
                if read_only { access.role.min(kb_core::domain::VaultRole::Reader) } else { access.role };
            json!({
                "name": access.vault.name,
                "role": role.as_str(),
                "own": access.vault.owner.as_deref() == Some(person),
                "current": access.vault.name == current,
            })
        })
        .collect();
    Ok(ApiJson(json!({ "person": person, "vaults": listed })))
}
