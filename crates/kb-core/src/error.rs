//! Errors of the facade: failing to start, and a tool call that did not succeed.

use kb_tools::{ErrorCode, ToolResult};

/// Why kb could not start. Each keeps its cause as its source: show it with
/// [`kb_domain::Chain`] (or anyhow's `{:#}`) to read the whole chain.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// The configuration is wrong.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// The vault could not be opened.
    #[error("cannot open the vault")]
    Vault(#[from] kb_domain::RepositoryError),
    /// The search index could not be opened or built.
    #[error("cannot open the search index")]
    Search(#[from] kb_search::OpenError),
    /// The conversation database could not be opened.
    #[error("cannot open the conversation database")]
    Store(#[from] kb_domain::StoreError),
    /// The revision history could not be opened.
    #[error("cannot open the revision history")]
    History(#[from] kb_domain::HistoryError),
    /// Changes cannot be committed to git as `KB_GIT=commit` asks.
    #[error(transparent)]
    Git(#[from] kb_storage::history::GitError),
    /// The model could not be set up.
    #[error("cannot set up the language model")]
    Model(#[source] kb_llm::openai::OpenAiSetupError),
    /// The embedding model could not be set up.
    #[error("cannot set up the embedding model")]
    EmbeddingSetup(#[source] kb_llm::openai::OpenAiSetupError),
    /// The embedding server failed.
    #[error("cannot embed the entries")]
    Embedding(#[source] kb_domain::EmbeddingError),
    /// Reading or keeping the vectors failed.
    #[error("cannot keep the vectors")]
    Vectors(#[from] kb_domain::SearchError),
    /// The tools could not be registered.
    #[error("cannot register the tools")]
    Tools(#[source] kb_tools::RegistryError),
    /// Sync through git cannot be set up or did not succeed.
    #[error(transparent)]
    Sync(kb_storage::sync::SyncError),
    /// A start-up task failed to run (it panicked or was cancelled).
    #[error("start-up task failed")]
    Task(#[source] tokio::task::JoinError),
}

/// A tool call through the facade that did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolFailure {
    /// What kind of failure (maps to an HTTP status or exit code).
    pub code: ErrorCode,
    /// What went wrong, in words a person can act on.
    pub message: String,
    /// The language model's failure behind it (a capture whose classifier could not be
    /// asked), so it can be answered like the model's own (429, 503, 504).
    pub model_error: Option<kb_domain::LlmError>,
    /// The entries to choose from, when a name meant several (`AMBIGUOUS`) or a capture may
    /// be an entry already there (`POSSIBLE_DUPLICATE`): `[{path, name, category, summary}]`.
    pub candidates: Option<Box<serde_json::Value>>,
}

impl ToolFailure {
    /// The failure of a result that did not succeed.
    pub fn from_result(result: &ToolResult) -> ToolFailure {
        ToolFailure {
            code: result.error_code.unwrap_or(ErrorCode::Internal),
            message: result.error.clone().unwrap_or_else(|| "the tool failed".to_string()),
            model_error: result.model_error.clone(),
            candidates: result.candidates.clone().or_else(|| result.possible_duplicate.clone()).map(Box::new),
        }
    }

    /// A failure of this kind with this message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ToolFailure {
        ToolFailure { code, message: message.into(), model_error: None, candidates: None }
    }
}
