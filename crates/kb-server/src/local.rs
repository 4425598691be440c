//! `kb serve`'s local socket: the HTTP API (`/api`) on a Unix socket in the vault's `.kb/`
//! (or this user's private folder, see [`kb_search::sockets`]), so this user's kb
//! commands and `kb mcp` on the same vault are answered by the running server at once
//! instead of opening the vault themselves.
//!
//! An answer on the socket is what the command would have answered alone:
//! - before each request the server settles ([`kb_core::Assistant::settle`]): every edit
//!   made before it (an editor's save, another kb process's change) is followed first;
//!   when it cannot settle it answers 503 `not_settled` and the command opens the vault;
//! - a command names its database ([`DATABASE_HEADER`]); another database than the
//!   server's is refused with 409 `other_database`, and the command opens the vault;
//! - changes are recorded as the command line's (`cli`), and `kb mcp`'s tool calls
//!   (`POST /mcp-tool/{name}`) as MCP's, in the client's MCP session.
//!
//! The socket file is this user's alone (mode 0600, or in a 0700 folder): no token is
//! asked. One `kb serve` per vault answers there: the one holding `.kb/kb-serve.lock`.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{HeaderValue, header};
/// The HTTP method and status a [`LocalClient`] sends and reads.
pub use axum::http::{Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::TokioIo;
use kb_core::CaptureSource;
use kb_search::sockets::{SocketPlace, socket_places};
use serde::Deserialize;
use serde_json::Value;
use tokio::net::UnixStream;

use crate::error::{ApiError, ApiJson};
use crate::state::AppState;

/// The socket's name in `.kb/`.
const SOCKET_FILE: &str = "kb-serve.sock";
/// The start of its name in a private folder (`kb-serve-{hash}.sock`).
const SOCKET_PREFIX: &str = "kb-serve";
/// The lock the answering `kb serve` holds, in `.kb/`.
const LOCK_FILE: &str = "kb-serve.lock";
/// The header naming the client's database ([`kb_core::Config::database_identity`]).
pub const DATABASE_HEADER: &str = "x-kb-database";
/// How long a request waits for the server to follow the edits made before it.
const SETTLE_WITHIN: Duration = Duration::from_secs(10);

/// Where the local socket of the vault at `kb_dir` may be, in the order they are tried.
pub fn places(kb_dir: &Path) -> Vec<SocketPlace> {
    socket_places(&kb_dir.join(".kb"), SOCKET_FILE, SOCKET_PREFIX)
}

/// The local socket while `kb serve` answers on it; dropping it gives the name back.
pub struct LocalSocket {
    path: PathBuf,
    /// Held while this server answers on the socket.
    _lock: File,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for LocalSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalSocket").field("path", &self.path).finish()
    }
}

impl LocalSocket {
    /// Answers `state`'s API on the local socket of the vault at `kb_dir`, for clients
    /// whose database is `database`. `None` (with the reason logged) when another `kb
    /// serve` answers there already or no place can be bound: commands then open the
    /// vault themselves, as they would with no server.
    pub fn start(state: &AppState, kb_dir: &Path, database: String) -> Option<LocalSocket> {
        match Self::try_start(state, kb_dir, database) {
            Ok(socket) => socket,
            Err(error) => {
                tracing::warn!(%error, "kb commands will open the vault themselves: no local socket");
                None
            }
        }
    }

    fn try_start(state: &AppState, kb_dir: &Path, database: String) -> std::io::Result<Option<LocalSocket>> {
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(kb_dir.join(".kb").join(LOCK_FILE))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                tracing::info!("another kb serve answers kb commands on this vault");
                return Ok(None);
            }
            Err(TryLockError::Error(error)) => return Err(error),
        }
        let mut failure = std::io::Error::new(std::io::ErrorKind::NotFound, "no place for the socket");
        for place in places(kb_dir) {
            let bound = place.bind_owner_only().and_then(|listener| {
                listener.set_nonblocking(true)?;
                tokio::net::UnixListener::from_std(listener)
            });
            match bound {
                Ok(listener) => {
                    let app = app(state, database);
                    let shutdown = state.shutdown.clone();
                    let task = tokio::spawn(async move {
                        let stopping = async move { shutdown.cancelled().await };
                        crate::connections::serve(listener, app, stopping, crate::connections::ready).await;
                    });
                    tracing::info!(socket = %place.path.display(), "kb commands on this vault are answered here");
                    return Ok(Some(LocalSocket { path: place.path, _lock: lock, task }));
                }
                Err(error) => failure = error,
            }
        }
        Err(failure)
    }
}

impl Drop for LocalSocket {
    fn drop(&mut self) {
        self.task.abort();
        // The lock is still held: no other server has bound this name since.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The socket's application: the API as the command line's, and `kb mcp`'s tool calls,
/// each request settled first and checked to be for this server's database.
fn app(state: &AppState, database: String) -> Router {
    // Whoever can reach this socket can read the vault's files: they act as its local owner,
    // with no token, accounts or not.
    let cli = AppState { token: None, accounts: None, source: CaptureSource::Cli, ..state.clone() };
    let mcp = AppState { token: None, accounts: None, source: CaptureSource::Mcp, ..state.clone() };
    let tools = Router::new().route("/mcp-tool/{name}", post(mcp_tool)).with_state(mcp);
    let checks = LocalChecks { state: state.clone(), database: database.into() };
    crate::routes::router(cli).merge(tools).layer(middleware::from_fn_with_state(checks, settled))
}

/// What every request on the socket is checked against.
#[derive(Clone)]
struct LocalChecks {
    state: AppState,
    database: std::sync::Arc<str>,
}

/// Refuses a request for another database, then settles before answering.
async fn settled(State(checks): State<LocalChecks>, request: Request, next: Next) -> Response {
    let theirs = request.headers().get(DATABASE_HEADER).and_then(|v| v.to_str().ok());
    if theirs != Some(&*checks.database) {
        return ApiError::new(StatusCode::CONFLICT, "other_database", "this kb serve uses another database")
            .into_response();
    }
    if !checks.state.assistant.settle(SETTLE_WITHIN).await {
        return ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "not_settled",
            "kb serve could not follow the latest edits in time",
        )
        .into_response();
    }
    next.run(request).await
}

/// Body of `POST /mcp-tool/{name}` on the socket.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct McpToolCall {
    #[serde(default)]
    arguments: serde_json::Map<String, Value>,
    /// The client's MCP session: its undo reaches the changes made in it.
    session: String,
}

/// `POST /mcp-tool/{name} {arguments, session}` → the MCP `CallToolResult`.
async fn mcp_tool(
    State(state): State<AppState>,
    UrlPath(name): UrlPath<String>,
    ApiJson(call): ApiJson<McpToolCall>,
) -> Result<Response, ApiError> {
    let tools = state.tools().in_session(&call.session);
    if !tools.has(&name) {
        return Err(ApiError::not_found(format!("Unknown tool: {name}")));
    }
    let result = crate::mcp::tools::call_in(tools, &name, call.arguments).await;
    Ok(ApiJson(result).into_response())
}

/// Why a request could not be asked of a local server.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// No server answers on the socket (none runs, or it stopped before the request).
    #[error("no kb serve answers on this vault's local socket")]
    NoServer,
    /// The request was sent but the exchange broke off: whether it was done is unknown.
    #[error("kb serve stopped answering mid-request")]
    Broken(#[source] hyper::Error),
    /// The request could not be made (a path or header that is not valid HTTP).
    #[error("the request to kb serve cannot be made")]
    Request(#[source] axum::http::Error),
}

/// What the server answered.
#[derive(Debug)]
pub struct Answer {
    /// The status.
    pub status: StatusCode,
    /// The JSON body (`null` when it is not JSON).
    pub body: Value,
}

impl Answer {
    /// Whether the server declined to answer for this client (another database, or not
    /// settled in time): the client does the work itself instead.
    pub fn declined(&self) -> bool {
        let code = self.body.pointer("/error/code").and_then(Value::as_str);
        matches!(code, Some("other_database" | "not_settled"))
    }
}

/// A client of the local socket of one vault, for one database.
#[derive(Debug, Clone)]
pub struct LocalClient {
    places: Vec<SocketPlace>,
    database: HeaderValue,
}

impl LocalClient {
    /// A client for the vault at `kb_dir` using `database`
    /// ([`kb_core::Config::database_identity`]); `None` when that name cannot be sent.
    pub fn new(kb_dir: &Path, database: &str) -> Option<LocalClient> {
        let database = HeaderValue::from_str(database).ok()?;
        Some(LocalClient { places: places(kb_dir), database })
    }

    /// Sends one request (`path` with its query, a JSON body for a POST or PATCH) and
    /// reads the answer.
    pub async fn send(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Answer, LocalError> {
        let stream = self.connect().await.ok_or(LocalError::NoServer)?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|_| LocalError::NoServer)?;
        tokio::spawn(connection);
        let bytes = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
        let mut request = axum::http::Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "localhost")
            .header(DATABASE_HEADER, self.database.clone());
        if body.is_some() {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        let request = request.body(Full::new(bytes)).map_err(LocalError::Request)?;
        let response = sender.send_request(request).await.map_err(LocalError::Broken)?;
        let status = response.status();
        let bytes = response.into_body().collect().await.map_err(LocalError::Broken)?.to_bytes();
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Ok(Answer { status, body })
    }

    /// A connection to the first place a server answers at.
    async fn connect(&self) -> Option<UnixStream> {
        for place in &self.places {
            if !place.usable() {
                continue;
            }
            if let Ok(stream) = UnixStream::connect(&place.path).await {
                return Some(stream);
            }
        }
        None
    }
}
