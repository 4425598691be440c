//! `kb mcp`: kb as an MCP server on stdin and stdout, for a client that starts it (Claude
//! Desktop, VS Code, Cursor). It runs beside `kb serve` and other kb processes on the
//! same vault, follows their changes and outside edits, and logs to stderr only.
//!
//! The client's `initialize` is answered at once; kb opens meanwhile, and the first request
//! that needs it waits for it. When kb cannot be opened (the vault is a file, a folder kb
//! may not write), every request from then on, `initialize` included, is answered with the
//! reason, and the command ends with that error once the client disconnects.
//! Beside a running `kb serve` on the vault, tool calls are asked of it first
//! ([`kb_server::local`]), so they do not wait for kb to open here.

use std::sync::Arc;

use kb_core::{Assistant, CaptureSource, Config};

use crate::failure::CliError;

/// Opens kb (following outside edits) while serving one MCP client, until it disconnects.
pub async fn run(mut config: Config, no_server: bool) -> Result<(), CliError> {
    config.watch = true;
    // Beside a running `kb serve`, tool calls are asked of it: answered at once.
    let local = if no_server {
        None
    } else {
        kb_server::local::LocalClient::new(&config.kb_dir, &config.database_identity())
    };
    let (opened, opening) = tokio::sync::watch::channel(None);
    let open = async move {
        let assistant = Assistant::open(config).await.map(|a| Arc::new(a.with_source(CaptureSource::Mcp)));
        // The whole chain of causes: the client is told what the command line would print.
        let shared =
            assistant.as_ref().map(Arc::clone).map_err(|e| Arc::<str>::from(kb_domain::Chain(e).to_string()));
        let _ = opened.send(Some(shared));
        assistant
    };
    let serve = kb_server::mcp::serve_stdio(opening, local);
    tokio::pin!(serve);
    let opened = tokio::select! {
        opened = open => opened,
        // The client left before kb was open: nothing was asked of it.
        served = &mut serve => {
            served?;
            return Ok(());
        }
    };
    let assistant = match opened {
        Ok(assistant) => assistant,
        Err(error) => {
            // The client hears why at its next request, whatever it is (see
            // `kb_server::mcp::stdio`); the command ends once it has gone.
            tracing::error!(%error, "kb cannot be opened: each MCP request is answered with why");
            let _ = serve.await;
            return Err(error.into());
        }
    };
    tracing::info!(vault = %assistant.vault_root().display(), "kb mcp: serving an MCP client on stdio");
    let served = serve.await;
    assistant.close().await;
    served?;
    Ok(())
}
