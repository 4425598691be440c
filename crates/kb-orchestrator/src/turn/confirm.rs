//! Confirmation in a chat (seed 003): a destructive tool (delete_entry) called in a chat
//! turn only proposes; the turn keeps the call pending in the conversation, and the
//! person's next message decides. A confirmation ([`is_confirmation`]: a short, exact
//! list, no guessing) runs the call with [`kb_tools::Confirmation::Given`]; anything else
//! cancels it and is answered as a new message, with a note telling the model so
//! ([`cancelled_note`]). Either way the pending call is gone.

use kb_domain::{ConversationId, PendingCall, ToolCall};

/// What the person may answer to confirm, once lowercased and stripped of punctuation.
/// Kept small and exact: anything else cancels.
pub const CONFIRMATIONS: &[&str] =
    &["yes", "y", "yes please", "ok", "okay", "sure", "confirm", "do it", "go ahead", "yes do it"];

/// How the note telling the model of a cancelled proposal starts (the offline model
/// recognises it).
pub const CANCELLED_PREFIX: &str = "Cancelled:";

/// Whether `message` confirms a pending call: one of [`CONFIRMATIONS`], whatever the case,
/// punctuation and spacing ("Yes!", "  do it. ", "OK").
pub fn is_confirmation(message: &str) -> bool {
    let words: String = message
        .chars()
        .map(|c| if c.is_alphanumeric() || c.is_whitespace() { c } else { ' ' })
        .collect::<String>()
        .to_lowercase();
    let normal = words.split_whitespace().collect::<Vec<_>>().join(" ");
    CONFIRMATIONS.contains(&normal.as_str())
}

/// The note put before the person's message when it did not confirm `pending`: the model
/// must not act on the proposal, and answers the message as a new one.
pub fn cancelled_note(pending: &PendingCall) -> String {
    format!(
        "{CANCELLED_PREFIX} the person did not confirm \"{}\", so that was not done and is no longer \
         pending. Answer their message below as a new request; say briefly that nothing was done only \
         if their message is about it.",
        pending.proposal
    )
}

/// The tool call that runs `pending` once confirmed (stored like any other call), with an
/// id of its own.
pub fn confirmed_call(pending: &PendingCall) -> ToolCall {
    ToolCall {
        id: format!("confirmed-{}", ConversationId::generate()),
        name: pending.tool.clone(),
        arguments: pending.arguments.to_string(),
    }
}

/// The pending call a tool's state update asks for, if it is one.
pub fn requested(update: &kb_tools::StateUpdate) -> Option<PendingCall> {
    match update {
        kb_tools::StateUpdate::ConfirmationRequested { tool, arguments, proposal } => {
            Some(PendingCall { tool: tool.clone(), arguments: arguments.clone(), proposal: proposal.clone() })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pending() -> PendingCall {
        PendingCall {
            tool: "delete_entry".into(),
            arguments: json!({"path": "projects/old-site.md"}),
            proposal: "Delete projects/old-site.md?".into(),
        }
    }

    #[test]
    fn confirmations_are_a_short_exact_list_whatever_the_case_and_punctuation() {
        for yes in [
            "yes",
            "Yes!",
            " YES. ",
            "y",
            "Y",
            "do it",
            "Do it!!",
            "confirm",
            "Go ahead.",
            "ok",
            "OK",
            "Okay",
            "sure",
            "Sure!",
            "yes, please",
            "yes   do it",
        ] {
            assert!(is_confirmation(yes), "{yes:?} should confirm");
        }
        for other in [
            "no",
            "nope",
            "cancel",
            "yes but not that one",
            "yesterday",
            "sure thing, delete the other",
            "list my projects",
            "don't",
            "",
            "   ",
            "?",
            "okay so what's in my inbox",
            "yess",
            "do it later",
        ] {
            assert!(!is_confirmation(other), "{other:?} should not confirm");
        }
    }

    #[test]
    fn the_confirmed_call_carries_the_pending_tool_and_arguments_with_a_fresh_id() {
        let first = confirmed_call(&pending());
        let second = confirmed_call(&pending());
        assert_eq!(first.name, "delete_entry");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&first.arguments).ok(),
            Some(pending().arguments)
        );
        assert!(first.id.starts_with("confirmed-"));
        assert_ne!(first.id, second.id);
    }

    #[test]
    fn the_cancel_note_names_the_proposal() {
        let note = cancelled_note(&pending());
        assert!(note.starts_with(CANCELLED_PREFIX));
        assert!(note.contains("Delete projects/old-site.md?"));
    }

    #[test]
    fn only_confirmation_requests_become_pending_calls() {
        let update = kb_tools::StateUpdate::ConfirmationRequested {
            tool: "delete_entry".into(),
            arguments: json!({"path": "projects/old-site.md"}),
            proposal: "Delete projects/old-site.md?".into(),
        };
        assert_eq!(requested(&update), Some(pending()));
        assert_eq!(requested(&kb_tools::StateUpdate::ModelUsage(kb_domain::Usage::default())), None);
    }
}
