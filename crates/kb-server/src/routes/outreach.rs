//! kb reaching out, over HTTP: the nudges (snooze, done), the digests kept, and sending a
//! digest now.

use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiJson, ApiQuery};
use crate::state::AppState;

/// A snooze lasts this many days unless the request says otherwise.
const SNOOZE_DAYS: u32 = 7;
/// Digests listed unless the request asks for another number.
const DIGESTS_LISTED: usize = 20;

/// Body of `POST /api/nudges/snooze`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnoozeBody {
    key: String,
    days: Option<u32>,
}

/// Body of `POST /api/nudges/done`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoneBody {
    key: String,
}

/// Query of `GET /api/digests`.
#[derive(Debug, Deserialize)]
pub struct DigestsQuery {
    limit: Option<usize>,
}

/// Body of `POST /api/digests`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendBody {
    r#type: String,
}

/// `GET /api/nudges` → `{nudges}`.
pub async fn nudges(State(state): State<AppState>) -> Result<ApiJson<Value>, ApiError> {
    let nudges = state.outreach().nudges().await?;
    Ok(ApiJson(serde_json::to_value(crate::dto::NudgesJson::from(nudges.as_slice())).unwrap_or_default()))
}

/// `POST /api/nudges/snooze {key, days?}` → `{key, until}` (a week unless `days` says).
pub async fn snooze(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<SnoozeBody>,
) -> Result<ApiJson<Value>, ApiError> {
    let snoozed = state.outreach().snooze(&body.key, body.days.unwrap_or(SNOOZE_DAYS)).await?;
    Ok(ApiJson(json!({ "key": snoozed.key, "until": snoozed.until })))
}

/// `POST /api/nudges/done {key}` → the update made (`{path, updatedFields}`).
pub async fn done(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<DoneBody>,
) -> Result<ApiJson<impl serde::Serialize>, ApiError> {
    Ok(ApiJson(state.outreach().done(&body.key).await?))
}

/// `GET /api/digests?limit` → `{digests}`, newest first, each with its deliveries.
pub async fn digests(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<DigestsQuery>,
) -> Result<ApiJson<Value>, ApiError> {
    let limit = query.limit.unwrap_or(DIGESTS_LISTED).clamp(1, 100);
    let digests = state.outreach().digests(limit).await?;
    Ok(ApiJson(serde_json::to_value(crate::dto::DigestsJson::from(digests.as_slice())).unwrap_or_default()))
}

/// `POST /api/digests {type}`: writes the digest now, keeps it and sends it to every
/// channel in the background → `{id, type, title, markdown, nudges, channels}`.
pub async fn send(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<SendBody>,
) -> Result<ApiJson<Value>, ApiError> {
    let kind = body.r#type.trim();
    if kind != "daily" && kind != "weekly" {
        return Err(ApiError::bad_request(format!("type must be daily or weekly, got {kind:?}")));
    }
    let outreach = state.outreach();
    let digest =
        outreach.clone().write_digest(kind, kb_core::domain::outreach::DigestTrigger::Manual).await?;
    let answer = json!({
        "id": digest.id,
        "type": digest.message.kind,
        "title": digest.message.title,
        "markdown": digest.message.markdown,
        "nudges": crate::dto::NudgesJson::from(digest.message.nudges.as_slice()).nudges,
        "channels": outreach.delivery_channels(),
    });
    let kb = std::sync::Arc::clone(&state.assistant);
    tokio::spawn(async move { kb.outreach().deliver(&digest).await });
    Ok(ApiJson(answer))
}
