//! kb-tools: the tool registry and kb's twelve tools (classify_and_capture, list_entries,
//! get_entry, generate_digest, update_entry, move_entry, search_entries, delete_entry,
//! undo_last_change, find_duplicates, merge_entries, build_context), registered in
//! [`standard_registry`] in the order the model sees them. Tool arguments that name an
//! entry take a path or a name ([`resolve`]).
//!
//! Design: each tool is a [`Tool`] with a typed argument struct (serde + schemars) that is
//! the single source of its JSON schema and its parser; a blanket impl makes it an
//! object-safe [`ErasedTool`]; the [`ToolRegistry`] validates arguments (listing every
//! problem), runs the tool as its own task (a panic becomes "Internal error"), traces the
//! call and always answers with a [`ToolResult`]. Tools see the conversation through a
//! read-only [`ToolContext`] and the world through [`ToolServices`] (ports as `Arc<dyn …>`);
//! they ask for conversation state changes with [`StateUpdate`]s the orchestrator applies.
//!
//! Tools see storage and search only through kb-domain's ports and the two ports defined
//! here ([`Classifier`], [`DigestWriter`]), which [`LlmClassifier`] and
//! [`LlmDigestWriter`] implement over any [`kb_domain::ChatModel`]; this crate must not
//! depend on kb-storage, kb-search or any adapter (no tantivy, sqlx or HTTP client).

pub mod args;
pub mod blocking;
pub mod classifier;
pub mod context;
pub mod digest;
pub mod hints;
pub mod output;
pub mod ports;
pub mod registry;
pub mod resolve;
pub mod result;
pub mod schema;
#[cfg(any(test, feature = "test-util"))]
pub mod testing;
pub mod tool;
pub mod tools;
pub mod validate;

pub use classifier::LlmClassifier;
pub use context::{CaptureSource, Confirmation, DEFAULT_THRESHOLD, ToolContext, ToolServices};
pub use digest::{DigestFacts, DigestKind, LlmDigestWriter};
pub use ports::{
    Classification, Classifier, ClassifyError, ClassifyRequest, DigestError, DigestWriter, WrittenDigest,
};
pub use registry::{RegistryError, ToolRegistry};
pub use result::{Clarification, ErrorCode, StateUpdate, ToolError, ToolOutput, ToolResult};
pub use tool::{ErasedTool, Tool, ToolCategory, ToolHints};
pub use tools::standard_registry;
