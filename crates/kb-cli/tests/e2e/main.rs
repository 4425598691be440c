//! kb-cli's integration tests: the real `kb` binary (`kb serve`, `kb mcp`, the commands)
//! driven as a person or a client would, one binary with one module per concern.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod beside_serve;
mod body_links;
mod chat_history;
mod chat_stream;
mod citations;
mod cli;
mod common;
mod concurrency;
mod fetch_site;
mod files;
mod history_cli;
mod history_http;
mod http;
mod idempotency;
mod kill_mid_change;
mod links;
mod links_bytes;
mod mcp_bad_input;
mod mcp_python;
mod mcp_rmcp;
mod meaning_cut;
mod outreach;
mod own_notes;
mod passages;
mod processes;
mod questions;
mod references;
mod semantic;
mod semantic_faults;
mod serving;
mod startup;
mod sync;
mod terminal;
mod tls;
