//! `kb serve`: the HTTP API and web page of kb-server, until SIGINT or SIGTERM.

use std::net::SocketAddr;

use kb_core::Config;

use crate::failure::CliError;

/// Serves kb on `addr`. kb-server reads `KB_API_TOKEN`, refuses a non-loopback address
/// without it (a usage error here), follows outside edits and shuts down gracefully.
pub async fn run(config: Config, addr: SocketAddr) -> Result<(), CliError> {
    kb_server::serve(config, addr).await.map_err(|error| {
        if error.downcast_ref::<kb_server::ServeError>().is_some() {
            CliError::usage(format!("{error:#}"))
        } else {
            CliError::from(error)
        }
    })
}
