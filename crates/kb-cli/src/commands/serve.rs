//! `kb serve`: the HTTP API and web page of kb-server, until SIGINT or SIGTERM.

use std::net::SocketAddr;

use kb_core::Config;
use kb_server::{ServeError, Server};

use crate::failure::CliError;

/// Serves kb on `addr` and prints its URL. kb-server reads `KB_API_TOKEN`, refuses a
/// non-loopback address without it (a usage error here), follows outside edits and shuts
/// down gracefully.
pub async fn run(config: Config, addr: SocketAddr) -> Result<(), CliError> {
    let server = Server::bind(config, addr).await.map_err(|error| {
        if error.downcast_ref::<ServeError>().is_some() {
            CliError::usage(format!("{error:#}"))
        } else {
            CliError::from(error)
        }
    })?;
    let url = format!("http://{}/", server.local_addr()?);
    let model = server.model_name();
    let note = if model == "offline" { " (no OPENAI_API_KEY set: built-in offline model)" } else { "" };
    println!("kb is listening on {url} — model: {model}{note}. Ctrl-C stops it.");
    server.run().await?;
    Ok(())
}
