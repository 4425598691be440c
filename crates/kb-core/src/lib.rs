//! kb-core: the facade a Rust program links. [`Assistant::open`] wires the default
//! adapters — the markdown vault with its revision history, the tantivy search index (and,
//! with [`Config::watch`], its file watcher), the SQLite conversation and outreach stores,
//! the delivery channels and a model (OpenAI-compatible, or the offline one) — into one
//! object with methods for chat, capture, the entry operations (list, get, update, move,
//! delete, merge, search, duplicates), revision history (undo, restore), digests, nudges
//! and schedules, and conversations. [`Config`] reads the settings from the environment;
//! [`ChangeFeed`] sends listeners every change to the vault this process sees.
//!
//! kb-core, kb-server and kb-cli are the only crates that know every piece. The REST-style
//! methods run the same tools the model calls, so their answers have the tools' shapes.
//!
//! ```
//! use kb_core::{Assistant, CaptureSource, Config};
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A vault in a new folder, with the offline model (no network, no key).
//! let folder = tempfile::tempdir()?;
//! let kb = Assistant::open(Config::offline(folder.path())).await?;
//!
//! // Capture: the hint files it as an idea; the answer is the tool's data.
//! let filed = kb.capture("A garden on a zeppelin", Some("[idea]"), CaptureSource::Api).await?;
//! let path = filed["path"].as_str().unwrap_or_default();
//! assert!(path.starts_with("ideas/"));
//!
//! // The entry is on disk, listed and found as soon as the call returns.
//! assert!(folder.path().join(path).is_file());
//! let ideas = kb.list(Some("ideas"), None, None, None).await?;
//! assert_eq!(ideas["total"], 1);
//! let hits = kb.search("zeppelin", None, None).await?;
//! assert_eq!(hits["entries"][0]["path"], path);
//!
//! kb.close().await;
//! # Ok(())
//! # }
//! ```

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
