//! `kb mcp`: kb as an MCP server on stdin and stdout, for a client that starts it (Claude
//! Desktop, VS Code, Cursor). It runs beside `kb serve` and other kb processes on the
//! same vault, follows their changes and outside edits, and logs to stderr only.

use std::sync::Arc;

use kb_core::{Assistant, CaptureSource, Config};

use crate::failure::CliError;

/// Opens kb (following outside edits) and serves one MCP client until it disconnects.
pub async fn run(mut config: Config) -> Result<(), CliError> {
    config.watch = true;
    let assistant = Arc::new(Assistant::open(config).await?.with_source(CaptureSource::Mcp));
    tracing::info!(vault = %assistant.vault_root().display(), "kb mcp: serving an MCP client on stdio");
    let served = kb_server::mcp::serve_stdio(Arc::clone(&assistant)).await;
    assistant.close().await;
    served?;
    Ok(())
}
