//! Starting and stopping the server: the token and loopback rules, binding, plain HTTP or
//! HTTPS ([`crate::tls`]), graceful shutdown on SIGINT/SIGTERM (in-flight turns finish;
//! idle connections and half-sent requests are closed, see [`crate::connections`]; the
//! database is closed cleanly).
//!
//! Beyond loopback a token is required, and over plain HTTP it would travel in clear text:
//! kb then refuses to start unless `KB_ALLOW_PLAIN_HTTP` says so, and warns at start and
//! in `/healthz` when it does.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use kb_core::{Assistant, Config};
use tokio::net::TcpListener;

use crate::routes::router;
use crate::state::AppState;
use crate::tls::TlsFiles;

/// Why the server refuses to start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServeError {
    /// A non-loopback address without `KB_API_TOKEN`.
    #[error(
        "refusing to listen on {0} without KB_API_TOKEN: set a token or use a loopback address like 127.0.0.1"
    )]
    OpenWithoutToken(SocketAddr),
    /// `KB_API_TOKEN` with white space around it: no client sends those, so none would
    /// ever be let in.
    #[error(
        "KB_API_TOKEN begins or ends with white space, so no request could carry it: set it without the surrounding spaces"
    )]
    TokenSpaces,
    /// A token beyond loopback over plain HTTP, without `KB_ALLOW_PLAIN_HTTP`.
    #[error(
        "refusing to send tokens in clear text on {0}: serve HTTPS with --tls-cert and --tls-key, \
         or set KB_ALLOW_PLAIN_HTTP=1 to accept plain HTTP on a network you trust"
    )]
    TokenInClear(SocketAddr),
    /// `KB_API_TOKEN` on a kb that has accounts: every person has their own token instead.
    #[error(
        "KB_API_TOKEN cannot be used once kb has accounts (KB_DATA_DIR/server.sqlite): unset it, and give each \
         person a token of their own with `kb tokens issue NAME`"
    )]
    TokenWithAccounts,
    /// A yes-or-no setting with another value.
    #[error("{0} takes 1/0, true/false, yes/no or on/off, not {1:?}")]
    NotYesOrNo(&'static str, String),
    /// `--tls-cert` without `--tls-key`, or the other way round.
    #[error("{0}: give both --tls-cert and --tls-key, or neither")]
    TlsFlags(&'static str),
    /// A TLS file that cannot be read.
    #[error("cannot read the TLS file {path}: {1}", path = .0.display())]
    TlsUnreadable(PathBuf, String),
    /// A TLS file that is not a PEM certificate chain or private key kb can use.
    #[error("the TLS file {path} cannot be used: {1}", path = .0.display())]
    TlsInvalid(PathBuf, String),
}

/// Refuses a non-loopback address unless a token protects the API.
pub fn check_listen_address(addr: SocketAddr, has_token: bool) -> Result<(), ServeError> {
    if addr.ip().is_loopback() || has_token { Ok(()) } else { Err(ServeError::OpenWithoutToken(addr)) }
}

/// `KB_API_TOKEN` as given (`value`): `None` when unset or blank; refused with white space
/// around it.
pub fn api_token(value: Option<String>) -> Result<Option<String>, ServeError> {
    match value {
        Some(token) if token.trim().is_empty() => Ok(None),
        Some(token) if token.trim() != token => Err(ServeError::TokenSpaces),
        token => Ok(token),
    }
}

/// Checks that the token of a server on `addr` (over TLS or not) does not travel in clear
/// text beyond loopback, unless `allow_plain_http`; then answers the warning to give.
pub fn check_plain_http(
    addr: SocketAddr,
    has_token: bool,
    tls: bool,
    allow_plain_http: bool,
) -> Result<Option<String>, ServeError> {
    if !has_token || tls || addr.ip().is_loopback() {
        return Ok(None);
    }
    if !allow_plain_http {
        return Err(ServeError::TokenInClear(addr));
    }
    Ok(Some(format!(
        "tokens travel in clear text: kb serves plain HTTP on {addr} (KB_ALLOW_PLAIN_HTTP), so \
         anyone on the network can read them; serve HTTPS with --tls-cert and --tls-key"
    )))
}

/// A yes-or-no environment variable: unset or blank is no.
fn yes_or_no(name: &'static str, value: Option<String>) -> Result<bool, ServeError> {
    let Some(value) = value else { return Ok(false) };
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "0" | "false" | "no" | "off" => Ok(false),
        "1" | "true" | "yes" | "on" => Ok(true),
        _ => Err(ServeError::NotYesOrNo(name, value)),
    }
}

/// A bound server, ready to run.
pub struct Server {
    listener: TcpListener,
    state: AppState,
    /// Serves HTTPS with this, when set.
    tls: Option<tokio_rustls::TlsAcceptor>,
    /// The vault's folder and the database's identity, for the local socket.
    kb_dir: PathBuf,
    database: String,
}

impl Server {
    /// Opens kb (following outside edits) and binds `addr`, for plain HTTP.
    /// `KB_API_TOKEN` and `KB_ALLOW_PLAIN_HTTP` are read here.
    pub async fn bind(config: Config, addr: SocketAddr) -> anyhow::Result<Server> {
        Server::bind_with_tls(config, addr, None).await
    }

    /// [`Server::bind`], serving HTTPS with the certificate and key of `tls` when given
    /// (both files are read first: a bad one stops kb before the vault is opened).
    pub async fn bind_with_tls(
        mut config: Config,
        addr: SocketAddr,
        tls: Option<&TlsFiles>,
    ) -> anyhow::Result<Server> {
        let token = api_token(std::env::var("KB_API_TOKEN").ok())?;
        let accounts = crate::people::accounts_in_use().await?;
        if accounts.is_some() && token.is_some() {
            return Err(ServeError::TokenWithAccounts.into());
        }
        // A person's token protects the API as KB_API_TOKEN does, and travels the same way.
        let protected = token.is_some() || accounts.is_some();
        let token_free = token.is_none();
        check_listen_address(addr, protected)?;
        let rate = crate::rate::RateLimit::from_setting(std::env::var("KB_RATE_LIMIT").ok().as_deref())?;
        let sign_in = crate::sign_in::SignInLinks::from_settings(
            std::env::var("KB_PUBLIC_URL").ok().as_deref(),
            config.outreach.email.as_ref(),
        )?;
        let allow_plain_http = yes_or_no("KB_ALLOW_PLAIN_HTTP", std::env::var("KB_ALLOW_PLAIN_HTTP").ok())?;
        let in_clear = check_plain_http(addr, protected, tls.is_some(), allow_plain_http)?;
        let tls = tls.map(TlsFiles::acceptor).transpose()?;
        // The address first: a second `kb serve` on it stops before touching the vault.
        let listener = TcpListener::bind(addr).await.map_err(|error| match error.kind() {
            std::io::ErrorKind::AddrInUse => anyhow::anyhow!(
                "cannot listen on {addr}: the address is in use (is another kb serve running there?); \
                 choose another with --addr or KB_ADDR"
            ),
            _ => anyhow::anyhow!("cannot listen on {addr}: {error}"),
        })?;
        config.watch = true;
        let kb_dir = config.kb_dir.clone();
        let assistant = Arc::new(Assistant::open_with_progress(config.clone(), logged_progress()).await?);
        if assistant.model_name() == "offline" {
            tracing::info!("no OPENAI_API_KEY: kb runs its built-in offline model");
        }
        // Taken once the database exists: its file's canonical path.
        let database = config.database_identity();
        let mut state = AppState::new(assistant, token);
        if let Some(warning) = in_clear {
            tracing::warn!("{warning}");
            state = state.with_notice(warning);
        }
        // With KB_API_TOKEN no accounts are looked for later: a restart would refuse them.
        if token_free {
            let data_dir = crate::people::data_dir()?;
            state.accounts = Some(Arc::new(crate::people::Accounts::new(data_dir.clone(), accounts.clone())));
            // Each person's routes start from this state, in the vault their request names.
            let served = Arc::new(
                crate::vaults::Served::new(data_dir, config.clone(), state.clone(), rate)
                    .with_sign_in(sign_in),
            );
            if let Some(accounts) = accounts {
                served.open_all(accounts);
            }
            state.vaults = Some(served);
        }
        Ok(Server { listener, state, tls, kb_dir, database })
    }

    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> anyhow::Result<SocketAddr> {
        Ok(self.listener.local_addr()?)
    }

    /// The page's address: `https://…/` when serving HTTPS, `http://…/` otherwise.
    pub fn url(&self) -> anyhow::Result<String> {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        Ok(format!("{scheme}://{}/", self.local_addr()?))
    }

    /// The model kb answers with.
    pub fn model_name(&self) -> String {
        self.state.assistant.model_name()
    }

    /// Serves until SIGINT or SIGTERM, then lets in-flight requests finish and closes.
    pub async fn run(self) -> anyhow::Result<()> {
        let assistant = Arc::clone(&self.state.assistant);
        let mcp_sessions = self.state.shutdown.clone();
        let vaults = self.state.vaults.clone();
        // `kb serve` is the process that sends the scheduled digests (one process wins
        // each run, however many run).
        let schedules = assistant.start_schedules();
        // And the one that files mail from the mailbox, when one is set (every kb serve on
        // the vault may watch it: each message is claimed once).
        let mail = assistant.start_mail_watch();
        // This user's kb commands and `kb mcp` on the vault are answered here too.
        let local = crate::local::LocalSocket::start(&self.state, &self.kb_dir, self.database.clone());
        let stopping = async move {
            shutdown_signal().await;
            mcp_sessions.cancel();
        };
        match self.tls {
            Some(acceptor) => crate::tls::serve(self.listener, acceptor, router(self.state), stopping).await,
            None => {
                crate::connections::serve(
                    self.listener,
                    router(self.state),
                    stopping,
                    crate::connections::ready,
                )
                .await;
            }
        }
        schedules.abort();
        if let Some(mail) = mail {
            mail.abort();
        }
        drop(local);
        tracing::info!("kb stopped: in-flight requests finished");
        if let Some(vaults) = &vaults {
            vaults.close().await;
        }
        assistant.close().await;
        Ok(())
    }
}

/// Index build progress for large vaults, as log lines (every 1,000 files read).
fn logged_progress() -> kb_core::IndexOpenOptions {
    let progress: kb_core::ProgressFn = Arc::new(|p: kb_core::IndexProgress| {
        let what = if p.rebuilding { "building the search index" } else { "updating the search index" };
        tracing::info!(done = p.done, total = p.total, "{what}");
    });
    kb_core::IndexOpenOptions { progress: Some(progress), ..Default::default() }
}

/// Binds and serves in one call (HTTPS with `tls`).
pub async fn serve(config: Config, addr: SocketAddr, tls: Option<&TlsFiles>) -> anyhow::Result<()> {
    let server = Server::bind_with_tls(config, addr, tls).await?;
    tracing::info!(url = %server.url()?, "kb is listening");
    server.run().await
}

async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::warn!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_addresses_need_a_token() {
        let loopback: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let v6: SocketAddr = "[::1]:8080".parse().unwrap();
        let open: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert!(check_listen_address(loopback, false).is_ok());
        assert!(check_listen_address(v6, false).is_ok());
        assert_eq!(check_listen_address(open, false), Err(ServeError::OpenWithoutToken(open)));
        assert!(check_listen_address(open, true).is_ok());
    }

    #[test]
    fn a_token_with_spaces_around_it_is_refused() {
        assert_eq!(api_token(None), Ok(None));
        assert_eq!(api_token(Some("  ".into())), Ok(None));
        assert_eq!(api_token(Some("abc".into())), Ok(Some("abc".into())));
        assert_eq!(api_token(Some("a b".into())), Ok(Some("a b".into())));
        for spaced in [" abc ", "abc ", "\tabc", "abc\n"] {
            assert_eq!(api_token(Some(spaced.into())), Err(ServeError::TokenSpaces), "{spaced:?}");
        }
    }

    #[test]
    fn a_token_beyond_loopback_needs_tls_or_consent_to_plain_http() {
        let loopback: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let open: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert_eq!(check_plain_http(loopback, true, false, false), Ok(None));
        assert_eq!(check_plain_http(open, true, true, false), Ok(None));
        assert_eq!(check_plain_http(open, false, false, false), Ok(None));
        assert_eq!(check_plain_http(open, true, false, false), Err(ServeError::TokenInClear(open)));
        let warning = check_plain_http(open, true, false, true).unwrap().unwrap();
        assert!(warning.contains("clear text") && warning.contains("--tls-cert"), "{warning}");
        assert_eq!(yes_or_no("X", None), Ok(false));
        assert_eq!(yes_or_no("X", Some(" Yes ".into())), Ok(true));
        assert_eq!(yes_or_no("X", Some("0".into())), Ok(false));
        assert!(yes_or_no("X", Some("maybe".into())).is_err());
    }
}
