//! What every handler shares.

use std::sync::Arc;

use kb_core::Assistant;

/// The state of the HTTP server.
#[derive(Clone)]
pub struct AppState {
    /// kb.
    pub assistant: Arc<Assistant>,
    /// The bearer token `/api` and `/mcp` require, when set.
    pub token: Option<Arc<str>>,
    /// Cancelled when the server stops: ends the MCP sessions' open streams, so a graceful
    /// shutdown does not wait for clients that never hang up.
    pub shutdown: tokio_util::sync::CancellationToken,
}

impl AppState {
    /// State over an assistant, with an optional API token.
    pub fn new(assistant: Arc<Assistant>, token: Option<String>) -> AppState {
        AppState {
            assistant,
            token: token.filter(|t| !t.is_empty()).map(Arc::from),
            shutdown: tokio_util::sync::CancellationToken::new(),
        }
    }
}
