//! The summary of turns older than the context window, kept in batches.
//!
//! The stored summary records how many of the oldest messages it covers (and the entry
//! filed last in them), so a turn reads only the conversation row and the messages after
//! the summary: the window plus fewer than [`BATCH`] messages that already left it. Those
//! stay in the prompt, so nothing is lost, until there are [`BATCH`] of them; then one
//! model call folds them into the summary. A failed fold leaves the stored summary as it
//! was: the prompt gets a plain note, a warning is logged, and the next turn tries again
//! with everything not yet summarised.

use kb_domain::conversation::SummaryCoverage;
use kb_domain::{
    ChatMessage, ChatModel, ChatRequest, Conversation, ConversationId, ConversationStore, EntryPath, Message,
    Role, StoreError, Usage,
};

use crate::transcript;

/// What the conversation section says when older turns exist but could not be summarised.
pub const SUMMARY_UNAVAILABLE: &str =
    "(Earlier turns exist but could not be summarised; ask the person if something is unclear.)";

/// How many messages must have left the window before they are summarised (one model call).
pub const BATCH: usize = 10;

const INSTRUCTIONS: &str = "You summarise a conversation between a person and kb, their knowledge-base \
assistant. Write at most 120 words of plain text: what the person asked for, what was filed, changed or \
found (keep names and entry paths), and anything still open. Start from the earlier summary if there is one.";

/// What a turn reads of its conversation's past.
#[derive(Debug, Clone, PartialEq)]
pub struct Past {
    /// The conversation.
    pub conversation: ConversationId,
    /// The stored summary (never empty).
    pub summary: Option<String>,
    /// How many of the oldest messages it covers.
    pub covers: u64,
    /// The entry filed last in those messages.
    pub last_filed: Option<EntryPath>,
    /// Every message after them, oldest first.
    pub unsummarised: Vec<Message>,
}

/// What a turn sends of its conversation's past.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    /// The conversation section's summary, if any.
    pub summary: Option<String>,
    /// The messages sent back, oldest first.
    pub recent: Vec<Message>,
    /// The entry filed last in the whole conversation.
    pub last_filed: Option<EntryPath>,
}

/// Reads the summary and the messages after it.
pub async fn load(
    store: &dyn ConversationStore,
    conversation: &Conversation,
    window: usize,
) -> Result<Past, StoreError> {
    let id = &conversation.id;
    // An empty stored summary is one an older kb gave up on: everything is unsummarised.
    let Some(summary) = conversation.summary.clone().filter(|s| !s.trim().is_empty()) else {
        return Ok(Past {
            conversation: id.clone(),
            summary: None,
            covers: 0,
            last_filed: None,
            unsummarised: store.messages(id).await?,
        });
    };
    if let Some(covers) = &conversation.summary_covers {
        return Ok(Past {
            conversation: id.clone(),
            summary: Some(summary),
            covers: covers.messages,
            last_filed: covers.last_filed.as_deref().and_then(|p| EntryPath::parse(p).ok()),
            unsummarised: store.messages_after(id, covers.messages).await?,
        });
    }
    // A summary stored before its coverage was recorded: work it out once, and record it.
    let mut unsummarised = store.messages(id).await?;
    let covered = legacy_coverage(&unsummarised, window);
    let last_filed = transcript::last_filed(None, &unsummarised[..covered]);
    let covers = coverage(count(covered), last_filed.as_ref());
    if let Err(error) = store.set_summary(id, &summary, &covers).await {
        tracing::warn!(%error, "the coverage of the conversation summary could not be stored");
    }
    let unsummarised = unsummarised.split_off(covered);
    Ok(Past {
        conversation: id.clone(),
        summary: Some(summary),
        covers: covers.messages,
        last_filed,
        unsummarised,
    })
}

/// The context of this turn: when [`BATCH`] or more unsummarised messages have left the
/// window, they are folded into the summary first (and the new summary stored).
pub async fn catch_up(
    model: &dyn ChatModel,
    store: &dyn ConversationStore,
    past: Past,
    window: usize,
    usage: &mut Usage,
) -> Context {
    let last_filed = transcript::last_filed(past.last_filed.clone(), &past.unsummarised);
    let mut recent = past.unsummarised;
    let left = left_window(&recent, window);
    if left < BATCH {
        return Context { summary: past.summary, recent, last_filed };
    }
    let folded: Vec<Message> = recent.drain(..left).collect();
    let summary = match summarise(model, past.summary.as_deref(), &folded, usage).await {
        Ok(text) => {
            let filed = transcript::last_filed(past.last_filed, &folded);
            let covers = coverage(past.covers.saturating_add(count(left)), filed.as_ref());
            if let Err(error) = store.set_summary(&past.conversation, &text, &covers).await {
                tracing::warn!(%error, "the conversation summary could not be stored");
            }
            text
        }
        Err(error) => {
            // The stored summary still covers what it did: the next turn folds everything
            // after it, these messages included.
            tracing::warn!(%error, "older turns could not be summarised; using a placeholder");
            match past.summary {
                Some(previous) => format!("{previous}\n\n{SUMMARY_UNAVAILABLE}"),
                None => SUMMARY_UNAVAILABLE.to_string(),
            }
        }
    };
    Context { summary: Some(summary), recent, last_filed }
}

/// How many of the oldest `unsummarised` messages are out of the window.
pub fn left_window(unsummarised: &[Message], window: usize) -> usize {
    unsummarised.len() - transcript::window(unsummarised, window).len()
}

/// What a summary stored by an older kb covered: it was made at the start of the last turn
/// and covered every message before that turn's window.
pub fn legacy_coverage(stored: &[Message], window: usize) -> usize {
    let last_turn = stored.iter().rposition(|m| m.role == Role::User).unwrap_or(0);
    left_window(&stored[..last_turn], window)
}

fn coverage(messages: u64, last_filed: Option<&EntryPath>) -> SummaryCoverage {
    SummaryCoverage { messages, last_filed: last_filed.map(ToString::to_string) }
}

fn count(messages: usize) -> u64 {
    u64::try_from(messages).unwrap_or(u64::MAX)
}

/// Asks the model for a new summary folding `left` into `previous`.
pub async fn summarise(
    model: &dyn ChatModel,
    previous: Option<&str>,
    left: &[Message],
    usage: &mut Usage,
) -> Result<String, kb_domain::LlmError> {
    let mut transcript = String::new();
    if let Some(previous) = previous {
        transcript.push_str(&format!("Earlier summary:\n{previous}\n\nThen:\n"));
    }
    for message in left {
        let text = match message.role {
            Role::Tool => format!("tool result: {}", shorten(&message.content, 400)),
            Role::Assistant if !message.tool_calls.is_empty() => {
                let names: Vec<_> = message.tool_calls.iter().map(|c| c.name.as_str()).collect();
                format!("kb called {}", names.join(", "))
            }
            role => format!("{}: {}", role.as_str(), shorten(&message.content, 800)),
        };
        transcript.push_str(&text);
        transcript.push('\n');
    }
    let request = ChatRequest {
        messages: vec![
            ChatMessage::System { content: INSTRUCTIONS.to_string() },
            ChatMessage::User { content: transcript },
        ],
        tools: Vec::new(),
        today: None,
    };
    let completion = model.complete(&request).await?;
    usage.add(completion.usage);
    completion
        .content
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| kb_domain::LlmError::malformed("empty summary"))
}

fn shorten(text: &str, max: usize) -> String {
    kb_domain::entry::one_line(text, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn msgs(roles: &[Role]) -> Vec<Message> {
        roles
            .iter()
            .enumerate()
            .map(|(i, role)| Message {
                id: i.to_string(),
                conversation_id: ConversationId::new("c"),
                role: *role,
                content: format!("m{i}"),
                tool_calls: Vec::new(),
                tool_call_id: None,
                filed_entry_path: None,
                filed_confidence: None,
                created_at: Utc::now(),
            })
            .collect()
    }

    #[test]
    fn what_left_the_window_ends_at_a_turn() {
        use Role::{Assistant as A, Tool as T, User as U};
        let stored = msgs(&[U, A, U, A, U, A]);
        assert_eq!(left_window(&stored, 10), 0);
        assert_eq!(left_window(&stored, 4), 2);
        // A window cutting into a turn keeps the whole of it out.
        let stored = msgs(&[U, A, T, A, U, A]);
        assert_eq!(left_window(&stored, 3), 4);
        assert_eq!(left_window(&[], 3), 0);
    }

    #[test]
    fn an_older_summary_covered_what_was_before_the_last_turns_window() {
        use Role::{Assistant as A, User as U};
        // Made at the start of the turn m6–m7: the window of 4 then held m2–m5.
        let stored = msgs(&[U, A, U, A, U, A, U, A]);
        assert_eq!(legacy_coverage(&stored, 4), 2);
        assert_eq!(legacy_coverage(&stored, 10), 0);
        assert_eq!(legacy_coverage(&stored[..2], 4), 0);
        assert_eq!(legacy_coverage(&[], 4), 0);
    }
}
