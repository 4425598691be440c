//! What every handler shares.

use std::sync::Arc;

use kb_core::assistant::{Entries, History, Outreach, Tools};
use kb_core::{Assistant, CaptureSource};

/// The state of the HTTP server.
#[derive(Clone)]
pub struct AppState {
    /// kb.
    pub assistant: Arc<Assistant>,
    /// The bearer token `/api` and `/mcp` require, when set.
    pub token: Option<Arc<str>>,
    /// The people whose tokens `/api` and `/mcp` require once kb has accounts, looked for
    /// while there are none (`None` with `token` set, and on the local socket).
    pub accounts: Option<Arc<crate::people::Accounts>>,
    /// Cancelled when the server stops: ends the MCP sessions' open streams, so a graceful
    /// shutdown does not wait for clients that never hang up.
    pub shutdown: tokio_util::sync::CancellationToken,
    /// Where the changes asked through these routes come from: `api`, or `cli` for the
    /// commands `kb serve` answers on its local socket.
    pub source: CaptureSource,
    /// What the person running this server should know, added to `/healthz`'s `notices`
    /// (a token that travels in clear text).
    pub notices: Arc<[String]>,
}

impl AppState {
    /// State over an assistant, with an optional API token.
    pub fn new(assistant: Arc<Assistant>, token: Option<String>) -> AppState {
        AppState {
            assistant,
            token: token.filter(|t| !t.is_empty()).map(Arc::from),
            accounts: None,
            shutdown: tokio_util::sync::CancellationToken::new(),
            source: CaptureSource::Api,
            notices: Vec::new().into(),
        }
    }

    /// This state, telling `notice` in `/healthz` too.
    pub fn with_notice(mut self, notice: String) -> AppState {
        let mut notices = self.notices.to_vec();
        notices.push(notice);
        self.notices = notices.into();
        self
    }

    /// The entries, changed as coming from [`AppState::source`].
    pub fn entries(&self) -> Entries<'_> {
        self.assistant.entries().by(self.source)
    }

    /// The history, changed as coming from [`AppState::source`].
    pub fn history(&self) -> History<'_> {
        self.assistant.history().by(self.source)
    }

    /// Digests and nudges, changed as coming from [`AppState::source`].
    pub fn outreach(&self) -> Outreach<'_> {
        self.assistant.outreach().by(self.source)
    }

    /// The tools, their changes coming from [`AppState::source`].
    pub fn tools(&self) -> Tools<'_> {
        self.assistant.tools().by(self.source)
    }
}
