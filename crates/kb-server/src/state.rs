//! What every handler shares.

use std::sync::Arc;

use kb_core::assistant::{Chat, Entries, History, Intake, Outreach, Tools};
use kb_core::domain::Actor;
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
    /// Who these routes answer: the local owner, or (once kb has accounts) the person a
    /// request's token names, with their role in [`AppState::vault`].
    pub actor: Actor,
    /// The vault these routes answer for, by name, once kb has accounts.
    pub vault: Option<Arc<str>>,
    /// Every vault kb serves once it has accounts, and the routes of each person in each
    /// (`None` inside those routes, and on the local socket).
    pub vaults: Option<Arc<crate::vaults::Served>>,
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
            actor: Actor::local(),
            vault: None,
            vaults: None,
        }
    }

    /// This state, telling `notice` in `/healthz` too.
    pub fn with_notice(mut self, notice: String) -> AppState {
        let mut notices = self.notices.to_vec();
        notices.push(notice);
        self.notices = notices.into();
        self
    }

    /// The accounts, when this server has any now (see [`crate::people::Accounts::current`]).
    pub async fn accounts_now(&self) -> Option<&kb_storage::accounts::SqliteAccounts> {
        match &self.accounts {
            Some(watch) => watch.current().await,
            None => None,
        }
    }

    /// The entries, changed as coming from [`AppState::source`].
    pub fn entries(&self) -> Entries<'_> {
        self.assistant.entries().by(self.source).as_actor(&self.actor)
    }

    /// The history, changed as coming from [`AppState::source`].
    pub fn history(&self) -> History<'_> {
        self.assistant.history().by(self.source).as_actor(&self.actor)
    }

    /// Digests and nudges, changed as coming from [`AppState::source`].
    pub fn outreach(&self) -> Outreach<'_> {
        self.assistant.outreach().by(self.source).as_actor(&self.actor)
    }

    /// The conversations of [`AppState::actor`].
    pub fn chat(&self) -> Chat<'_> {
        self.assistant.chat().as_actor(&self.actor)
    }

    /// Files handed to kb, captured as asked by [`AppState::actor`].
    pub fn intake(&self) -> Intake<'_> {
        self.assistant.intake().as_actor(&self.actor)
    }

    /// The tools, their changes coming from [`AppState::source`].
    pub fn tools(&self) -> Tools<'_> {
        self.assistant.tools().by(self.source).as_actor(&self.actor)
    }
}
