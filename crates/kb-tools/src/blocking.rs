//! Running the synchronous ports (vault and index: blocking file I/O) from async tools.
//!
//! Every repository and search call goes through [`run_blocking`], on tokio's blocking
//! pool, so a slow disk never stalls the runtime's worker threads that serve other chats.
//! A panic inside the port comes back as an internal [`ToolError`].

use crate::result::ToolError;

/// Runs `work` on the blocking pool and waits for it.
pub async fn run_blocking<T, F>(work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        if e.is_panic() {
            ToolError::internal("a storage or search call panicked")
        } else {
            ToolError::internal("a storage or search call was cancelled")
        }
    })
}
