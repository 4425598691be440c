//! kb-server: the axum HTTP backend and the web page (SPEC §4), over kb-core's
//! [`kb_core::Assistant`].
//!
//! Every `/api` answer is JSON in camelCase with the shapes of the matching tool's `data`;
//! errors are `{"error": {"code", "message"}}` with a fitting status, mapped in one place
//! ([`error`]). With `KB_API_TOKEN` set every `/api` call needs `Authorization: Bearer
//! TOKEN`, and kb refuses to listen beyond loopback without one; token or not, requests a
//! page of another site makes a browser send are refused ([`auth`]). [`mcp`] is kb as an MCP
//! server: over stdio for `kb mcp`, and over streamable HTTP at `/mcp` under the same rule.

pub mod auth;
pub mod error;
pub mod mcp;
pub mod routes;
pub mod serve;
pub mod state;

pub use routes::router;
pub use serve::{ServeError, Server, check_listen_address, serve};
pub use state::AppState;
