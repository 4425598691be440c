//! Starting and stopping the server: the loopback rule, binding, plain HTTP or HTTPS
//! ([`crate::tls`]), graceful shutdown on SIGINT/SIGTERM (in-flight turns finish; the
//! database is closed cleanly).

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
    /// `KB_API_TOKEN` is read here.
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
        let token = std::env::var("KB_API_TOKEN").ok().filter(|t| !t.trim().is_empty());
        check_listen_address(addr, token.is_some())?;
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
        Ok(Server { listener, state: AppState::new(assistant, token), tls, kb_dir, database })
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
        // `kb serve` is the process that sends the scheduled digests (one process wins
        // each run, however many run).
        let schedules = assistant.start_schedules();
        // This user's kb commands and `kb mcp` on the vault are answered here too.
        let local = crate::local::LocalSocket::start(&self.state, &self.kb_dir, self.database.clone());
        let stopping = async move {
            shutdown_signal().await;
            mcp_sessions.cancel();
        };
        match self.tls {
            Some(acceptor) => crate::tls::serve(self.listener, acceptor, router(self.state), stopping).await,
            None => axum::serve(self.listener, router(self.state)).with_graceful_shutdown(stopping).await?,
        }
        schedules.abort();
        drop(local);
        tracing::info!("kb stopped: in-flight requests finished");
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
}
