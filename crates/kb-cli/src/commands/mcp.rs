//! `kb mcp`: kb as an MCP server on stdin and stdout, for a client that starts it (Claude
//! Desktop, VS Code, Cursor). It runs beside `kb serve` and other kb processes on the
//! same vault, follows their changes and outside edits, and logs to stderr only.
//!
//! The client's `initialize` is answered at once; kb opens meanwhile, and the first request
//! that needs it waits for it. When kb cannot be opened, the command ends with that error.

use std::sync::Arc;

use kb_core::{Assistant, CaptureSource, Config};

use crate::failure::CliError;

/// Opens kb (following outside edits) while serving one MCP client, until it disconnects.
pub async fn run(mut config: Config) -> Result<(), CliError> {
    config.watch = true;
    let (opened, opening) = tokio::sync::watch::channel(None);
    let open = async move {
        let assistant = Assistant::open(config).await.map(|a| Arc::new(a.with_source(CaptureSource::Mcp)));
        let shared = assistant.as_ref().map(Arc::clone).map_err(|e| Arc::<str>::from(e.to_string()));
        let _ = opened.send(Some(shared));
        assistant
    };
    let serve = kb_server::mcp::serve_stdio(opening);
    tokio::pin!(serve);
    let assistant = tokio::select! {
        assistant = open => assistant?,
        // The client left before kb was open: nothing was asked of it.
        served = &mut serve => {
            served?;
            return Ok(());
        }
    };
    tracing::info!(vault = %assistant.vault_root().display(), "kb mcp: serving an MCP client on stdio");
    let served = serve.await;
    assistant.close().await;
    served?;
    Ok(())
}
