//! The HTTP routes (`docs/HTTP.md`) and the layers around them (the site rule, auth, body
//! limits, tracing).

mod chat;
mod conversations;
mod entries;
mod files;
mod history;
mod misc;
mod outreach;
mod page;
mod sync;
mod tidy;
pub(crate) mod vaults;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::{get, post};
use tower_http::trace::TraceLayer;

use crate::auth::{guard, guard_health, require_json_post};
use crate::idempotency::idempotent;
use crate::state::AppState;

/// The largest request body accepted.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The whole HTTP application.
pub fn router(state: AppState) -> Router {
    // The POSTs that create or change something answer a repeated `Idempotency-Key` once.
    let once = || middleware::from_fn_with_state(state.clone(), idempotent);
    let api = Router::new()
        .route("/chat", post(chat::chat))
        .route("/conversations", get(conversations::list))
        .route(
            "/conversations/{id}",
            get(conversations::get).patch(conversations::rename).delete(conversations::delete),
        )
        .route("/entries", get(entries::list))
        .route(
            "/entries/{*path}",
            get(history::get)
                .patch(entries::update)
                .post(history::post_action)
                .delete(history::delete)
                // Only the POSTs (move, restore): the layer passes every other method.
                .route_layer(once()),
        )
        .route("/undo", post(history::undo).route_layer(once()))
        .route("/duplicates", get(tidy::duplicates))
        .route("/merge", post(tidy::merge).route_layer(once()))
        .route("/capture", post(misc::capture).route_layer(once()))
        // Raw bytes, streamed; it answers an Idempotency-Key itself, by the file's hash.
        .route("/files", post(files::upload))
        .route("/voice", post(files::voice))
        .route("/search", get(misc::search))
        .route("/digest", post(misc::digest).route_layer(once()))
        .route("/index", get(misc::entry_list))
        .route("/nudges", get(outreach::nudges))
        .route("/nudges/snooze", post(outreach::snooze).route_layer(once()))
        .route("/nudges/done", post(outreach::done).route_layer(once()))
        .route("/digests", get(outreach::digests).post(outreach::send).route_layer(once()))
        .route("/sync", get(sync::status).post(sync::round))
        .route("/sync/resolve", post(sync::resolve).route_layer(once()))
        .route("/vaults", get(vaults::list))
        .fallback(misc::api_not_found)
        // Inside out: a POST must say JSON, after the Origin and token (or Host) checks.
        .route_layer(middleware::from_fn(require_json_post))
        .route_layer(middleware::from_fn_with_state(state.clone(), guard));
    // MCP over streamable HTTP, behind the same Origin, token and loopback rules as `/api`
    // (its transport itself refuses a POST that is not JSON).
    let mcp = Router::new()
        .route_service(
            "/mcp",
            crate::mcp::http_service(
                Arc::clone(&state.assistant),
                state.actor.clone(),
                state.shutdown.clone(),
            ),
        )
        .route_layer(middleware::from_fn_with_state(state.clone(), guard));
    // Health shows the model and counts: loopback hosts only when there is no token.
    let health = get(misc::healthz).route_layer(middleware::from_fn_with_state(state.clone(), guard_health));
    // Sign-in links: asked for and used without a token (see `crate::sign_in`).
    let sign_in = Router::new()
        .route("/api/sign-in", post(crate::sign_in::ask))
        .route("/api/sign-in/redeem", post(crate::sign_in::redeem))
        .route_layer(middleware::from_fn(require_json_post));
    Router::new()
        .merge(sign_in)
        .nest("/api", api)
        .merge(mcp)
        .route("/healthz", health)
        // The web page: `/`, `/share`, `/page.css`, `/page.js`, `/vendor/…`, the manifest,
        // the icons and `/sw.js` (no token: the API asks).
        .merge(page::page_routes())
        .fallback(misc::api_not_found)
        .method_not_allowed_fallback(misc::method_not_allowed)
        // Before anything else, on every route: no change sent by a page of another site or port.
        .layer(middleware::from_fn(crate::site::refuse_other_sites))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// The 64-bit FNV-1a hash of `bytes`: a page file's version tag, a request body's
/// fingerprint.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}
