//! What a tool call gives back: the [`ToolResult`] the LLM reads, the error codes that
//! only logs and metrics see, and the state updates the orchestrator may apply.

use kb_domain::{Confidence, EntryPath};
use serde::Serialize;
use serde_json::Value;

/// The answer of one tool call.
///
/// Serialises (for the LLM) as `{success, data?, error?}`; `error_code` and
/// `state_updates` are for the orchestrator, logs and metrics only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolResult {
    /// Whether the tool did what was asked.
    pub success: bool,
    /// The tool's answer (camelCase JSON), on success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// A message the LLM can act on, on failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The entries a reference could mean, when it named several (nothing changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidates: Option<Value>,
    /// The entries a capture may duplicate, when it was not filed for that reason.
    #[serde(rename = "possibleDuplicate", skip_serializing_if = "Option::is_none")]
    pub possible_duplicate: Option<Value>,
    /// Why it failed, for logs and metrics.
    #[serde(skip)]
    pub error_code: Option<ErrorCode>,
    /// Changes to the conversation's state the orchestrator should apply, in order.
    #[serde(skip)]
    pub state_updates: Vec<StateUpdate>,
    /// The entry a successful call was about (see [`ToolOutput::touched`]).
    #[serde(skip)]
    pub touched: Option<EntryPath>,
    /// When the failure came from the language model (a classifier that could not be
    /// asked), how it failed, so a caller can answer as for the model itself (429, 503, 504).
    #[serde(skip)]
    pub model_error: Option<kb_domain::LlmError>,
}

impl ToolResult {
    /// A success carrying `data`.
    pub fn ok(data: Value, state_updates: Vec<StateUpdate>) -> ToolResult {
        ToolResult {
            success: true,
            data: Some(data),
            error: None,
            candidates: None,
            possible_duplicate: None,
            error_code: None,
            state_updates,
            touched: None,
            model_error: None,
        }
    }

    /// A failure with a message for the LLM.
    pub fn failure(code: ErrorCode, message: impl Into<String>) -> ToolResult {
        ToolResult {
            success: false,
            data: None,
            error: Some(message.into()),
            candidates: None,
            possible_duplicate: None,
            error_code: Some(code),
            state_updates: Vec::new(),
            touched: None,
            model_error: None,
        }
    }

    /// The JSON text sent back to the LLM as the `tool` message.
    pub fn to_llm_json(&self) -> String {
        serde_json::to_string(self)
            .unwrap_or_else(|_| r#"{"success":false,"error":"Internal error"}"#.to_string())
    }

    /// The entry this call filed, with the confidence it was filed with, if it filed one.
    pub fn filed(&self) -> Option<(&EntryPath, Confidence)> {
        self.state_updates.iter().find_map(|u| match u {
            StateUpdate::Filed { path, confidence } => Some((path, *confidence)),
            StateUpdate::Moved { .. }
            | StateUpdate::ModelUsage(_)
            | StateUpdate::ConfirmationRequested { .. }
            | StateUpdate::ChoiceRequested(_) => None,
        })
    }
}

/// Why a tool call failed: for logs and metrics, never shown to the LLM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// No tool of that name.
    UnknownTool,
    /// The arguments were not JSON or did not fit the schema.
    InvalidArguments,
    /// A path outside the vault or not naming an entry.
    InvalidPath,
    /// No entry at that path.
    NotFound,
    /// A file that exists but cannot be read.
    MalformedEntry,
    /// An update that cannot be applied.
    InvalidUpdate,
    /// A move that cannot be made.
    InvalidMove,
    /// The classifier gave no usable answer; nothing was filed.
    ClassificationFailed,
    /// The search index is still being built.
    SearchNotReady,
    /// A search by meaning was asked for but no embedding model answers (none is set,
    /// or its server failed).
    SemanticUnavailable,
    /// A file an undo would revert changed since; nothing was changed.
    ChangedSince,
    /// Nothing is left to undo.
    NothingToUndo,
    /// Revision history is not kept for this vault.
    HistoryUnavailable,
    /// A reference by name could mean several entries; nothing was changed.
    Ambiguous,
    /// A capture may be an entry that exists already; nothing was filed.
    PossibleDuplicate,
    /// A capture of a link kb will not fetch (not http/https, or a private address);
    /// nothing was filed.
    LinkRefused,
    /// A capture of a link whose page could not be fetched; nothing was filed.
    PageUnreadable,
    /// A file whose text cannot be read (a broken PDF); nothing was kept.
    UnreadableFile,
    /// The person's role in the vault does not allow the tool (a reader asked for a
    /// change); nothing was changed.
    ForbiddenRole,
    /// The vault's files could not be read or written (a folder kb may not write to, a
    /// read-only or full disk): the message gives the operating system's reason.
    DiskError,
    /// An error or panic inside the tool (details in the log).
    Internal,
}

impl ErrorCode {
    /// The code as logged (`NOT_FOUND`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnknownTool => "UNKNOWN_TOOL",
            ErrorCode::InvalidArguments => "INVALID_ARGUMENTS",
            ErrorCode::InvalidPath => "INVALID_PATH",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::MalformedEntry => "MALFORMED_ENTRY",
            ErrorCode::InvalidUpdate => "INVALID_UPDATE",
            ErrorCode::InvalidMove => "INVALID_MOVE",
            ErrorCode::ClassificationFailed => "CLASSIFICATION_FAILED",
            ErrorCode::SearchNotReady => "SEARCH_NOT_READY",
            ErrorCode::SemanticUnavailable => "SEMANTIC_UNAVAILABLE",
            ErrorCode::ChangedSince => "CHANGED_SINCE",
            ErrorCode::NothingToUndo => "NOTHING_TO_UNDO",
            ErrorCode::HistoryUnavailable => "HISTORY_UNAVAILABLE",
            ErrorCode::Ambiguous => "AMBIGUOUS",
            ErrorCode::PossibleDuplicate => "POSSIBLE_DUPLICATE",
            ErrorCode::LinkRefused => "LINK_REFUSED",
            ErrorCode::PageUnreadable => "PAGE_UNREADABLE",
            ErrorCode::UnreadableFile => "UNREADABLE_FILE",
            ErrorCode::ForbiddenRole => "FORBIDDEN_ROLE",
            ErrorCode::DiskError => "DISK_ERROR",
            ErrorCode::Internal => "INTERNAL",
        }
    }
}

/// A change to the conversation's state that a tool asks for. Tools never mutate shared
/// state: the orchestrator applies these (see [`crate::ToolContext::apply`]).
#[derive(Debug, Clone, PartialEq)]
pub enum StateUpdate {
    /// An entry was filed in this conversation (so "actually that's a project" finds it).
    Filed {
        /// Where it was filed.
        path: EntryPath,
        /// The confidence it was filed with.
        confidence: Confidence,
    },
    /// The tool asked the model (classifier, digest writer): the turn's usage grows by this.
    ModelUsage(kb_domain::Usage),
    /// An entry moved; if it was the last one filed, that now points to its new path.
    Moved {
        /// Where it was.
        old_path: EntryPath,
        /// Where it is now.
        new_path: EntryPath,
    },
    /// A destructive tool did nothing yet and asks the person first: the turn keeps this
    /// call pending, and the person's next message confirms it (it then runs with
    /// [`crate::Confirmation::Given`]) or cancels it.
    ConfirmationRequested {
        /// The tool to run once confirmed.
        tool: String,
        /// Its arguments.
        arguments: serde_json::Value,
        /// The question put to the person ("Delete projects/old-site.md?").
        proposal: String,
    },
    /// A call could not go on without knowing which entry the person means: the turn keeps
    /// it pending with its choices, and the person's next message may pick one.
    ChoiceRequested(kb_domain::PendingCall),
}

/// What a failure that needs the person to pick an entry carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clarification {
    /// `candidates` (a reference named several entries) or `possibleDuplicate` (a capture
    /// may be an existing entry): the key the candidates are given under.
    pub key: &'static str,
    /// The entries to choose from.
    pub candidates: Vec<crate::resolve::Candidate>,
    /// The argument a picked candidate's path fills when the call runs again; `None` when
    /// the call cannot simply run again with it.
    pub argument: Option<&'static str>,
    /// Arguments added instead when the person answers "none of these: a new one".
    pub otherwise: Option<(String, Value)>,
}

/// How a typed tool reports a failure. The registry turns it into a [`ToolResult`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// What the LLM reads.
    pub message: String,
    /// What logs and metrics see.
    pub code: ErrorCode,
    /// Details for the log only (never sent to the LLM).
    pub detail: Option<String>,
    /// The language model's failure behind this one, if any.
    pub model_error: Option<kb_domain::LlmError>,
    /// The entries the person is to choose from, when that is why it failed.
    pub clarification: Option<Box<Clarification>>,
}

impl ToolError {
    /// A failure the LLM can act on.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ToolError {
        ToolError { message: message.into(), code, detail: None, model_error: None, clarification: None }
    }

    /// The same failure, asking the person to choose among entries.
    pub fn with_clarification(mut self, clarification: Clarification) -> ToolError {
        self.clarification = Some(Box::new(clarification));
        self
    }

    /// An internal failure: the LLM reads "Internal error", the log gets `detail`.
    pub fn internal(detail: impl Into<String>) -> ToolError {
        ToolError {
            message: INTERNAL_ERROR.to_string(),
            code: ErrorCode::Internal,
            detail: Some(detail.into()),
            model_error: None,
            clarification: None,
        }
    }
}

/// The message the LLM reads when something failed inside a tool.
pub const INTERNAL_ERROR: &str = "Internal error";

/// The successful output of a typed tool: its data, the state updates it asks for, and
/// the entry it touched.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput<T> {
    /// The data, serialised for the LLM.
    pub data: T,
    /// State updates for the orchestrator.
    pub state_updates: Vec<StateUpdate>,
    /// The entry the call filed, read, changed, moved, merged into or deleted (or proposes
    /// to), when it is about one entry.
    pub touched: Option<EntryPath>,
}

impl<T> ToolOutput<T> {
    /// Output without state updates, touching no one entry.
    pub fn data(data: T) -> ToolOutput<T> {
        ToolOutput { data, state_updates: Vec::new(), touched: None }
    }

    /// Output with state updates, touching no one entry.
    pub fn with_updates(data: T, state_updates: Vec<StateUpdate>) -> ToolOutput<T> {
        ToolOutput { data, state_updates, touched: None }
    }

    /// The same output, about the entry at `path`.
    pub fn touching(mut self, path: EntryPath) -> ToolOutput<T> {
        self.touched = Some(path);
        self
    }
}

impl From<kb_domain::RepositoryError> for ToolError {
    fn from(error: kb_domain::RepositoryError) -> ToolError {
        use kb_domain::RepositoryError as E;
        match &error {
            E::NotFound(_) => ToolError::new(ErrorCode::NotFound, error.to_string()),
            E::InvalidPath(e) => ToolError::new(ErrorCode::InvalidPath, format!("invalid path: {e}")),
            E::OutsideVault(_) | E::Linked(_) => ToolError::new(ErrorCode::InvalidPath, error.to_string()),
            E::Malformed { .. } => ToolError::new(
                ErrorCode::MalformedEntry,
                format!("{error}; the file is left untouched and must be fixed by hand"),
            ),
            E::Field(_) | E::Update(_) => ToolError::new(ErrorCode::InvalidUpdate, error.to_string()),
            E::Move(_) => ToolError::new(ErrorCode::InvalidMove, error.to_string()),
            E::Merge(_) => ToolError::new(ErrorCode::InvalidArguments, error.to_string()),
            E::NameTaken(_) => ToolError::new(ErrorCode::PossibleDuplicate, error.to_string()),
            E::Io { path, source } => ToolError {
                detail: Some(error.to_string()),
                ..ToolError::new(ErrorCode::DiskError, disk_error_message(path, source))
            },
            E::RevisionNotFound(_) => ToolError::new(ErrorCode::NotFound, error.to_string()),
            E::RevisionOfAnother { .. } => ToolError::new(ErrorCode::InvalidArguments, error.to_string()),
            E::NotAConflict { .. } => ToolError::new(ErrorCode::InvalidArguments, error.to_string()),
            E::NoConflictCopy(_) => ToolError::new(ErrorCode::NotFound, error.to_string()),
            E::NothingToUndo(_) => ToolError::new(ErrorCode::NothingToUndo, error.to_string()),
            E::ChangedSince { .. } => ToolError::new(ErrorCode::ChangedSince, error.to_string()),
            E::History(kb_domain::HistoryError::Unavailable) => {
                ToolError::new(ErrorCode::HistoryUnavailable, error.to_string())
            }
            E::History(kb_domain::HistoryError::Database { .. }) => {
                ToolError::internal(kb_domain::Chain(&error).to_string())
            }
        }
    }
}

/// What a person reads when the disk refused kb: the file or folder by the last two parts
/// of its path (`projects/roof.md`, or a folder with the one holding it; the rest, where
/// the vault lies on the machine, goes to the log only) and the operating system's reason.
fn disk_error_message(path: &str, source: &std::io::Error) -> String {
    let mut parts: Vec<String> = std::path::Path::new(path)
        .components()
        .rev()
        .filter_map(|part| match part {
            std::path::Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .take(2)
        .collect();
    parts.reverse();
    let at = if parts.is_empty() { String::new() } else { format!(" at {}", parts.join("/")) };
    format!(
        "kb could not read or write the vault's files{at}: {source}; check that kb may write \
         to the vault's folders and that the disk has room"
    )
}

impl From<kb_domain::SearchError> for ToolError {
    fn from(error: kb_domain::SearchError) -> ToolError {
        match error {
            kb_domain::SearchError::NotReady => ToolError::new(
                ErrorCode::SearchNotReady,
                "the search index is still being built: try again in a moment, or use list_entries",
            ),
            kb_domain::SearchError::Index { .. } => {
                ToolError::internal(format!("search index: {}", kb_domain::Chain(&error)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_llm_sees_success_data_and_error_only() {
        let ok = ToolResult::ok(json!({"x": 1}), vec![]);
        assert_eq!(serde_json::to_value(&ok).unwrap(), json!({"success": true, "data": {"x": 1}}));
        let bad = ToolResult::failure(ErrorCode::NotFound, "Entry not found: ideas/x.md");
        assert_eq!(
            serde_json::to_value(&bad).unwrap(),
            json!({"success": false, "error": "Entry not found: ideas/x.md"})
        );
        assert!(!bad.to_llm_json().contains("NOT_FOUND"));
    }
}
