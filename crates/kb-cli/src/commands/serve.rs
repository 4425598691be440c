//! `kb serve`: the HTTP API and web page of kb-server (over HTTPS with `--tls-cert` and
//! `--tls-key`), until SIGINT or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;

use kb_core::Config;
use kb_server::{ServeError, Server, TlsFiles};

use crate::failure::CliError;

/// Serves kb on `addr` (HTTPS with the PEM files `tls_cert` and `tls_key`: both or
/// neither) and prints its URL. kb-server reads `KB_API_TOKEN`, refuses a non-loopback
/// address without it or a TLS file it cannot use (usage errors here), follows outside
/// edits and shuts down gracefully.
pub async fn run(
    config: Config,
    addr: SocketAddr,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
) -> Result<(), CliError> {
    let tls_cert = tls_cert.or_else(|| path_from_env("KB_TLS_CERT"));
    let tls_key = tls_key.or_else(|| path_from_env("KB_TLS_KEY"));
    let tls = TlsFiles::from_flags(tls_cert, tls_key).map_err(|error| CliError::usage(error.to_string()))?;
    let server = Server::bind_with_tls(config, addr, tls.as_ref()).await.map_err(|error| {
        let setting = error.downcast_ref::<ServeError>().is_some()
            || error.downcast_ref::<kb_server::rate::BadRateLimit>().is_some()
            || error.downcast_ref::<kb_server::sign_in::BadPublicUrl>().is_some();
        if setting { CliError::usage(format!("{error:#}")) } else { CliError::from(error) }
    })?;
    let url = server.url()?;
    let model = server.model_name();
    let note = if model == "offline" { " (no OPENAI_API_KEY set: built-in offline model)" } else { "" };
    println!("kb is listening on {url} — model: {model}{note}. Ctrl-C stops it.");
    server.run().await?;
    Ok(())
}

/// The path the environment variable `name` holds (a blank value counts as unset).
fn path_from_env(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|value| !value.to_string_lossy().trim().is_empty()).map(PathBuf::from)
}
