//! What every handler shares.

use std::sync::Arc;

use kb_core::Assistant;

/// The state of the HTTP server.
#[derive(Clone)]
pub struct AppState {
    /// kb.
    pub assistant: Arc<Assistant>,
    /// The bearer token `/api` requires, when set.
    pub token: Option<Arc<str>>,
}

impl AppState {
    /// State over an assistant, with an optional API token.
    pub fn new(assistant: Arc<Assistant>, token: Option<String>) -> AppState {
        AppState { assistant, token: token.filter(|t| !t.is_empty()).map(Arc::from) }
    }
}
