//! What a tool sees: the read-only [`ToolContext`] of the conversation and the
//! [`ToolServices`] (ports) it works through.

use std::sync::Arc;

use chrono::NaiveDate;
use kb_domain::{
    ChangeContext, Clock, Confidence, ConversationId, Embedder, EntryPath, EntryRepository, PageReader,
    SearchIndex, UndoScope, VaultRole,
};

use crate::ports::{Classifier, DigestWriter};
use crate::result::StateUpdate;

/// The confidence threshold used when none is configured.
pub const DEFAULT_THRESHOLD: f64 = 0.6;

/// Where a capture (or any change) came from; a capture writes it as the entry's
/// `source`. kb-domain's [`kb_domain::ChangeSource`] under the name the tools use.
pub use kb_domain::ChangeSource as CaptureSource;

/// The read-only view of the conversation a tool runs in. The orchestrator builds a fresh
/// one for each call and applies the tool's [`StateUpdate`]s afterwards.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolContext {
    /// The conversation, when there is one.
    pub conversation_id: Option<ConversationId>,
    /// The entry filed most recently in this conversation.
    pub last_filed: Option<EntryPath>,
    /// Today's date (for digests and due dates).
    pub today: NaiveDate,
    /// Captures at or above this confidence are filed in their category; below, the inbox.
    pub threshold: Confidence,
    /// Where captures come from.
    pub source: CaptureSource,
    /// Whether destructive tools must ask the person first.
    pub confirmation: Confirmation,
    /// The MCP session the call comes from, when an MCP client makes it (see
    /// [`ChangeContext::session`]).
    pub session: Option<String>,
    /// The mail the call files, when it files one (see [`ChangeContext::claim`]).
    pub claim: Option<String>,
    /// The person the call is made for, when kb serves several people (see
    /// [`ChangeContext::person`]); `None` for the local owner.
    pub person: Option<String>,
    /// What that person may do in the vault: a tool that changes something is refused
    /// below [`VaultRole::Editor`], whoever asked (the model, MCP, HTTP).
    pub role: VaultRole,
}

/// Whether a destructive tool (delete_entry) runs at once or asks first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Confirmation {
    /// The call is an explicit request (REST, CLI, MCP): it runs at once.
    #[default]
    NotNeeded,
    /// A chat turn: the tool proposes and waits for the person's yes.
    Ask,
    /// The person said yes to this very call.
    Given,
}

impl ToolContext {
    /// A context for `today` with the default threshold, no conversation and chat as source.
    pub fn new(today: NaiveDate) -> ToolContext {
        ToolContext {
            conversation_id: None,
            last_filed: None,
            today,
            threshold: Confidence::new(DEFAULT_THRESHOLD).unwrap_or(Confidence::CERTAIN),
            source: CaptureSource::Chat,
            confirmation: Confirmation::NotNeeded,
            session: None,
            claim: None,
            person: None,
            role: VaultRole::Admin,
        }
    }

    /// The same context with another threshold.
    pub fn with_threshold(mut self, threshold: Confidence) -> ToolContext {
        self.threshold = threshold;
        self
    }

    /// The same context with another source.
    pub fn with_source(mut self, source: CaptureSource) -> ToolContext {
        self.source = source;
        self
    }

    /// The same context, for a call from MCP session `session`.
    pub fn with_session(mut self, session: impl Into<String>) -> ToolContext {
        self.session = Some(session.into());
        self
    }

    /// The context of a change `tool` makes in this conversation (for its revision).
    pub fn change(&self, tool: &str) -> ChangeContext {
        ChangeContext {
            source: self.source,
            tool: Some(tool.to_string()),
            conversation_id: self.conversation_id.clone(),
            session: self.session.clone(),
            device: None,
            claim: self.claim.clone(),
            person: self.person.clone(),
        }
    }

    /// Whose changes an undo from here reaches: a conversation's own; an MCP client's own
    /// session's (none at all when it has no session); anyone's otherwise (the CLI, the
    /// REST API without a conversation).
    pub fn undo_scope(&self) -> Option<UndoScope> {
        match (&self.conversation_id, &self.session, self.source) {
            (Some(conversation), _, _) => Some(UndoScope::Conversation(conversation.clone())),
            (None, Some(session), _) => Some(UndoScope::Session(session.clone())),
            // A person of a kb serving several undoes only their own changes.
            (None, None, _) if self.person.is_some() => self.person.clone().map(UndoScope::Person),
            (None, None, CaptureSource::Mcp) => None,
            (None, None, _) => Some(UndoScope::Anyone),
        }
    }

    /// Applies a tool's state update (the orchestrator's job, in the order given).
    pub fn apply(&mut self, update: &StateUpdate) {
        match update {
            StateUpdate::Filed { path, .. } => self.last_filed = Some(path.clone()),
            StateUpdate::ModelUsage(_)
            | StateUpdate::ConfirmationRequested { .. }
            | StateUpdate::ChoiceRequested(_) => {}
            StateUpdate::Moved { old_path, new_path } => {
                if self.last_filed.as_ref() == Some(old_path) {
                    self.last_filed = Some(new_path.clone());
                }
            }
        }
    }
}

/// The ports a tool works through, shared by every call.
#[derive(Clone)]
pub struct ToolServices {
    /// The vault.
    pub repository: Arc<dyn EntryRepository>,
    /// The full-text index.
    pub search: Arc<dyn SearchIndex>,
    /// The embedding model that turns a search into a vector, when one is set
    /// (`KB_EMBEDDINGS_MODEL`): search then defaults to hybrid.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Who decides where a capture belongs.
    pub classifier: Arc<dyn Classifier>,
    /// Who writes digests up; without one, digests are rendered from the facts alone.
    pub digest_writer: Option<Arc<dyn DigestWriter>>,
    /// The time.
    pub clock: Arc<dyn Clock>,
    /// Who reads the page a captured link leads to; without one, a link is filed as text.
    pub pages: Option<Arc<dyn PageReader>>,
}

impl std::fmt::Debug for ToolServices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolServices")
            .field("digest_writer", &self.digest_writer.is_some())
            .field("embedder", &self.embedder.as_ref().map(|e| e.model().to_string()))
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_of_the_last_filed_entry_follows_it() {
        let mut ctx = ToolContext::new(NaiveDate::from_ymd_opt(2026, 11, 21).unwrap());
        let inbox = EntryPath::parse("inbox/shed.md").unwrap();
        let project = EntryPath::parse("projects/shed.md").unwrap();
        ctx.apply(&StateUpdate::Filed { path: inbox.clone(), confidence: Confidence::new(0.4).unwrap() });
        ctx.apply(&StateUpdate::Moved {
            old_path: EntryPath::parse("ideas/other.md").unwrap(),
            new_path: EntryPath::parse("admin/other.md").unwrap(),
        });
        assert_eq!(ctx.last_filed.as_ref(), Some(&inbox));
        ctx.apply(&StateUpdate::Moved { old_path: inbox, new_path: project.clone() });
        assert_eq!(ctx.last_filed, Some(project));
    }
}
