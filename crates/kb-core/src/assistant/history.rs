//! [`History`]: an [`Assistant`]'s revision history — the revisions of an entry, one
//! revision's text, restoring one, and undoing the last change.

use std::sync::Arc;

use kb_domain::EntryWriter;
use kb_domain::conflicts::ConflictKeep;
use kb_domain::conflicts::Resolved;
use kb_domain::{ConversationId, EntryPath, LaterChanges, Revision, RevisionHistory, RevisionText};
use kb_tools::tools::undo::{UndoData, UndoLastChange, UndoLastChangeArgs};
use kb_tools::{CaptureSource, ToolContext};

use super::{Assistant, in_vault, parse_path};
use crate::error::ToolFailure;

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// Where the entry is now.
    pub path: EntryPath,
    /// The revision the restore recorded (`None` when the file already had those bytes).
    pub revision: Option<i64>,
    /// Set when the entry had moved since from the path asked for, and was restored where
    /// it is now: says so in a sentence.
    pub note: Option<String>,
}

/// Whose last change an undo goes back on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UndoOf {
    /// The newest change of anyone (`kb undo`, `POST /api/undo` without a conversation).
    Anyone,
    /// The newest change made in this conversation.
    Conversation(ConversationId),
}

/// The revision history of the vault, with changes recorded as coming from one source
/// (see [`Assistant::history`] and [`History::by`]).
#[derive(Debug, Clone)]
pub struct History<'a> {
    kb: &'a Assistant,
    source: CaptureSource,
    /// Who asks: their changes name them, and their role bounds what the tools may do.
    actor: kb_domain::Actor,
}

impl<'a> History<'a> {
    pub(super) fn new(kb: &'a Assistant, source: CaptureSource) -> History<'a> {
        History { kb, source, actor: kb_domain::Actor::local() }
    }

    /// The same history, with the changes it makes recorded as asked from `source`.
    pub fn by(self, source: CaptureSource) -> History<'a> {
        History { source, ..self }
    }

    /// The same, asked by `actor`: the changes made name them, and a reader's changes are
    /// refused.
    pub fn as_actor(self, actor: &kb_domain::Actor) -> History<'a> {
        History { actor: actor.clone(), ..self }
    }

    /// The revisions of the entry at (or last at) `reference` (a path, or the name of an
    /// entry that still exists), newest first (`GET /api/entries/{path}/history`,
    /// `kb history`).
    pub async fn revisions(self, reference: &str) -> Result<Vec<Revision>, ToolFailure> {
        let path = self.kb.entry_path(reference).await?;
        let vault = Arc::clone(&self.kb.vault);
        in_vault(move || vault.history(&path)).await
    }

    /// One revision of the entry at (or last at) `path`, with the file's text before and
    /// after it, for showing its diff.
    pub async fn revision(self, path: &str, revision: i64) -> Result<RevisionText, ToolFailure> {
        let path = parse_path(path)?;
        let vault = Arc::clone(&self.kb.vault);
        in_vault(move || vault.revision(&path, revision)).await
    }

    /// Brings the entry at (or last at) `reference` back to `revision`'s bytes.
    pub async fn restore(self, reference: &str, revision: i64) -> Result<Restored, ToolFailure> {
        let path = self.kb.entry_path(reference).await?;
        let vault = Arc::clone(&self.kb.vault);
        let by = kb_domain::ChangeContext::from_source(self.source)
            .by_person(self.actor.name().map(str::to_string));
        let asked = path.clone();
        let outcome = in_vault(move || vault.restore_as(&path, revision, &by)).await?;
        let note = outcome.moved_since.then(|| {
            format!(
                "the entry has moved from {asked} to {} since; it was restored where it is now",
                outcome.path
            )
        });
        Ok(Restored { path: outcome.path, revision: outcome.revision.map(|r| r.id), note })
    }

    /// Resolves the sync conflict of `path` — the conflict copy, or the note when it has
    /// one copy — keeping `keep` ([`kb_domain::conflicts`]), as one change undo reverts.
    pub async fn resolve_conflict(self, path: &str, keep: ConflictKeep) -> Result<Resolved, ToolFailure> {
        let named = parse_path(path)?;
        let vault = Arc::clone(&self.kb.vault);
        let by = kb_domain::ChangeContext::from_source(self.source)
            .by_person(self.actor.name().map(str::to_string));
        let resolved = in_vault(move || vault.resolve_conflict_as(&named, keep, &by)).await;
        if let Some(sync) = &self.kb.sync {
            sync.recount().await;
        }
        resolved
    }

    /// Undoes the most recent change of `of` (undo_last_change): what was undone, and
    /// where the undone change came from.
    pub async fn undo(self, of: UndoOf, later: LaterChanges) -> Result<UndoData, ToolFailure> {
        let conversation_id = match of {
            UndoOf::Anyone => None,
            UndoOf::Conversation(id) => {
                // A person undoes in their own conversations only: another's is not there.
                if self.actor.name().is_some() {
                    let owner = kb_domain::ConversationStore::get(self.kb.store.as_ref(), &id)
                        .await
                        .ok()
                        .flatten()
                        .map(|c| c.person);
                    if !owner.is_some_and(|owner| self.actor.sees(owner.as_deref())) {
                        return Err(ToolFailure::new(
                            kb_tools::ErrorCode::NotFound,
                            format!("there is no conversation {id}"),
                        ));
                    }
                }
                Some(id)
            }
        };
        let ctx = ToolContext { conversation_id, ..self.kb.direct_context(self.source, &self.actor) };
        let args = UndoLastChangeArgs { force: later == LaterChanges::Replace };
        self.kb.run_in::<UndoLastChange>(args, &ctx).await
    }
}
