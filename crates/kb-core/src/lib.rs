//! kb-core: the facade a Rust program links. [`Assistant::open`] wires the default
//! adapters — the markdown vault, the tantivy index (with its file watcher), the SQLite
//! conversation store and a model (OpenAI-compatible, or the offline one) — into one
//! object with methods for chat, capture, list, get, update, move, search, digest and
//! conversations.
//!
//! kb-core, kb-server and kb-cli are the only crates that know every piece. The REST-style
//! methods run the same tools the model calls, so their answers have the tools' shapes.

pub mod assistant;
pub mod changes;
pub mod clock;
pub mod config;
pub mod error;
mod follow;
pub mod index;
pub mod outreach;

pub use assistant::{Assistant, CaptureOptions, Health, ToolSpec};
pub use changes::{ChangeFeed, ChangedPaths};
pub use config::{Config, ConfigError, GitMode, ModelChoice};
pub use error::{CoreError, ToolFailure};
pub use index::open_index;
/// The domain types, for programs that need more than the re-exports below.
pub use kb_domain as domain;
pub use kb_domain::{Category, Conversation, ConversationId, EntryPath, Message};
/// OpenAI-compatible model settings (for [`ModelChoice::OpenAi`]).
pub use kb_llm::openai::OpenAiSettings;
pub use kb_orchestrator::turn::{ChatResponse, MAX_MESSAGE_BYTES, TurnError};
/// Options and progress reports of opening the search index.
pub use kb_search::{IndexProgress, OpenOptions as IndexOpenOptions, ProgressFn, SearchLanguage};
pub use kb_tools::{CaptureSource, ErrorCode, ToolHints, ToolResult};
