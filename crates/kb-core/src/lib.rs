//! kb-core: the facade a Rust program links. [`Assistant::open`] wires the default
//! adapters — the markdown vault, the tantivy index (with its file watcher), the SQLite
//! conversation store and a model (OpenAI-compatible, or the offline one) — into one
//! object with methods for chat, capture, list, get, update, move, search, digest and
//! conversations.
//!
//! kb-core, kb-server and kb-cli are the only crates that know every piece. The REST-style
//! methods run the same tools the model calls, so their answers have the tools' shapes.

pub mod assistant;
pub mod config;
pub mod error;

pub use assistant::{Assistant, Health};
pub use config::{Config, ConfigError, ModelChoice};
pub use error::{CoreError, ToolFailure};
pub use kb_domain::{Category, Conversation, ConversationId, EntryPath, Message};
pub use kb_orchestrator::turn::{ChatResponse, TurnError};
pub use kb_tools::{CaptureSource, ErrorCode};
