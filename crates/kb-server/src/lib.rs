//! kb-server: the axum HTTP backend ([`routes`], described in `docs/HTTP.md`) and the web
//! page, over kb-core's [`kb_core::Assistant`]; [`mod@serve`] starts and stops it, over
//! plain HTTP or HTTPS ([`tls`]), each connection served (and closed at a stop) by
//! [`connections`].
//!
//! Every `/api` answer but `GET /api/index` (Markdown) is JSON in camelCase, in the shape
//! of the matching tool's `data` where a tool answers it; errors are `{"error": {"code", "message"}}` with
//! a fitting status, mapped in one place ([`error`]). With `KB_API_TOKEN` set every `/api`
//! call needs `Authorization: Bearer TOKEN`, and kb refuses to listen beyond loopback
//! without one; once kb has accounts ([`people`]) every call needs a person's own token
//! instead. Token or not, requests a page of another site makes a browser send are
//! refused ([`auth`]), and so is any change a browser says another site or port sent
//! ([`site`]). [`mcp`] is kb as an MCP server: over stdio for `kb mcp`, and over
//! streamable HTTP at `/mcp` under the same rule. A `POST` that creates or changes
//! something and carries an `Idempotency-Key` is answered once ([`idempotency`]). `kb serve`
//! also answers this user's kb commands and `kb mcp` on the same vault on a local socket
//! ([`local`]).

pub mod auth;
pub mod connections;
pub mod dto;
pub mod error;
pub mod idempotency;
pub mod local;
pub mod mcp;
pub mod people;
pub mod rate;
pub mod roles;
pub mod routes;
pub mod serve;
pub mod sign_in;
pub mod site;
pub mod state;
pub mod tls;
pub mod vaults;

pub use routes::router;
pub use serve::{ServeError, Server, check_listen_address, serve};
pub use state::AppState;
pub use tls::TlsFiles;
