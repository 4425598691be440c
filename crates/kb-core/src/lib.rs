//! kb-core: the facade a Rust program links. [`Assistant::open`] wires the default
//! adapters — the markdown vault with its revision history, the tantivy search index (and,
//! with [`Config::watch`], its file watcher), the SQLite conversation and outreach stores,
//! the delivery channels and a model (OpenAI-compatible, or the offline one) — into one
//! object. Its operations are reached through typed handles, one per concern:
//! [`Assistant::entries`] (capture, list, get, update, move, delete, search, duplicates,
//! merge, digests), [`Assistant::chat`] (turns and conversations),
//! [`Assistant::history`] (revisions, restore, undo), [`Assistant::outreach`] (nudges,
//! digests sent, schedules) and [`Assistant::tools`] (the tools by name, for MCP).
//! [`Assistant::run`] runs any tool with its typed arguments. [`Config`] reads the
//! settings from the environment; [`ChangeFeed`] sends listeners every change to the vault
//! this process sees.
//!
//! kb-core, kb-server and kb-cli are the only crates that know every piece. The entry
//! operations run the same tools the model calls and answer their typed data
//! ([`tools`]); JSON is made only at the edges (HTTP, MCP, the CLI's `--json`).
//!
//! ```
//! use kb_core::{Assistant, CaptureOptions, Category, Config, ListQuery, SearchRequest};
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A vault in a new folder, with the offline model (no network, no key).
//! let folder = tempfile::tempdir()?;
//! let kb = Assistant::open(Config::offline(folder.path())).await?;
//!
//! // Capture: the hint files it as an idea; the answer is the tool's typed data.
//! let hints = CaptureOptions { hints: Some("[idea]".into()), ..CaptureOptions::default() };
//! let filed = kb.entries().capture("A garden on a zeppelin", &hints).await?;
//! assert_eq!(filed.category, Category::Ideas);
//!
//! // The entry is on disk, listed and found as soon as the call returns.
//! assert!(folder.path().join(&filed.path).is_file());
//! let ideas = kb.entries().list(&ListQuery { category: Some("ideas".into()), ..ListQuery::default() }).await?;
//! assert_eq!(ideas.total, 1);
//! let hits = kb.entries().search(&SearchRequest::new("zeppelin")).await?;
//! assert_eq!(hits.entries[0].path.to_string(), filed.path);
//!
//! kb.close().await;
//! # Ok(())
//! # }
//! ```

pub mod assistant;
pub mod changes;
pub mod clock;
pub mod config;
pub mod embedding;
pub mod error;
mod follow;
pub mod idempotency;
pub mod index;
pub mod outreach;
pub mod sync;

pub use assistant::{
    Assistant, CaptureOptions, Chat, Entries, EntryEdit, Health, History, ListQuery, Outreach,
    OutreachStatus, Restored, SearchRequest, Snoozed, ToolSpec, Tools, UndoOf,
};
pub use changes::{ChangeFeed, ChangedPaths};
pub use config::{Config, ConfigError, GitMode, ModelChoice, SyncConfig};
pub use error::{CoreError, ToolFailure};
pub use index::open_index;
/// The domain types, for programs that need more than the re-exports below.
pub use kb_domain as domain;
pub use kb_domain::{Category, Conversation, ConversationId, EntryPath, LaterChanges, Message};
/// OpenAI-compatible model settings (for [`ModelChoice::OpenAi`]).
pub use kb_llm::openai::OpenAiSettings;
pub use kb_orchestrator::turn::{AnswerMessage, ChatResponse, FiledEntry, MAX_MESSAGE_BYTES, TurnError};
/// Options and progress reports of opening the search index.
pub use kb_search::{IndexProgress, OpenOptions as IndexOpenOptions, ProgressFn, SearchLanguage};
pub use kb_storage::sync::{Conflict, RoundReport, SyncError, SyncStatus};
/// The wire shapes of the tools' data, and of what the edges answer alike.
pub use kb_tools::output;
/// The tools, with their typed arguments and the data each answers (what the handles'
/// calls return, and what [`Assistant::run`] runs).
pub use kb_tools::tools;
pub use kb_tools::{CaptureSource, ErrorCode, ToolHints, ToolResult};
