//! Confirmation in a chat (seed 003): a destructive tool (delete_entry) called in a chat
//! turn only proposes; the turn keeps the call pending in the conversation, and the
//! person's next message decides. A confirmation ([`is_confirmation`]: a short, exact
//! list, no guessing) runs the call with [`kb_tools::Confirmation::Given`]; anything else
//! cancels it and is answered as a new message, with a note telling the model so
//! ([`cancelled_note`]). Either way the pending call is gone.
//!
//! A call that named several entries (or a capture that may be an entry already there)
//! waits instead for the person to pick one ([`pick`]): a message naming exactly one
//! choice — by its name, a word of it no other choice has, its path, or its place ("the
//! second") — runs the call with that choice's arguments; a question or a "not" picks
//! nothing ("no, not Sam Lee"); anything else cancels it.

use kb_domain::names::fold_name;
use kb_domain::{ConversationId, PendingCall, PendingChoice, ToolCall};

/// What the person may answer to confirm, once lowercased and stripped of punctuation.
/// Kept small and exact: anything else cancels.
pub const CONFIRMATIONS: &[&str] =
    &["yes", "y", "yes please", "ok", "okay", "sure", "confirm", "do it", "go ahead", "yes do it"];

/// How the note telling the model of a cancelled proposal starts (the offline model
/// recognises it).
pub use kb_domain::llm::CANCELLED_PREFIX;

/// What the person's message does to a pending call.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Nothing was pending.
    Nothing,
    /// Run the call now: confirmed (`confirmed: true`, a destructive tool then acts) or
    /// with the choice picked (`confirmed: false`, so a destructive tool still asks).
    Run {
        /// The call, with the arguments it runs with.
        call: PendingCall,
        /// Whether the person confirmed it (rather than picked an entry for it).
        confirmed: bool,
    },
    /// The message neither confirmed nor picked: the call is dropped.
    Cancel(PendingCall),
}

/// What `message` does to `pending`.
pub fn decide(pending: Option<PendingCall>, message: &str) -> Decision {
    let Some(call) = pending else { return Decision::Nothing };
    if call.choices.is_empty() {
        return if is_confirmation(message) {
            Decision::Run { call, confirmed: true }
        } else {
            Decision::Cancel(call)
        };
    }
    match pick(&call.choices, message) {
        Some(choice) => {
            let arguments = choice.arguments.clone();
            Decision::Run { call: PendingCall { arguments, choices: Vec::new(), ..call }, confirmed: false }
        }
        None => Decision::Cancel(call),
    }
}

/// Words that may come around a pick without naming anything ("I mean the second one").
const PICK_FILLER: &[&str] = &[
    "i", "mean", "meant", "its", "it", "is", "s", "that", "thats", "the", "one", "yes", "yeah", "yep",
    "please", "him", "her", "them", "pick", "choose", "use", "person", "entry", "oh", "sorry", "mr", "ms",
    "mrs", "dr", "thanks", "ok", "okay", "sure", "go", "with", "this", "a", "an", "am", "talking", "about",
];

/// Ordinals a pick may use, by the place they name (0-based); "last" is handled apart.
const ORDINALS: &[(&str, usize)] = &[
    ("1", 0),
    ("first", 0),
    ("1st", 0),
    ("2", 1),
    ("second", 1),
    ("2nd", 1),
    ("3", 2),
    ("third", 2),
    ("3rd", 2),
    ("4", 3),
    ("fourth", 3),
    ("4th", 3),
    ("5", 4),
    ("fifth", 4),
    ("5th", 4),
];

/// Words that turn a message naming an entry into one that does not pick it.
const NEGATIONS: &[&str] = &["not", "no", "nope", "dont", "isnt", "wasnt", "never"];

/// Words that answer "none of these: a new one".
const NEW_WORDS: &[&str] = &["new", "neither", "none", "different", "another", "else", "separate"];

/// The choice `message` picks, if it names exactly one (see the module doc).
pub fn pick<'a>(choices: &'a [PendingChoice], message: &str) -> Option<&'a PendingChoice> {
    let entries: Vec<&PendingChoice> = choices.iter().filter(|c| c.path.is_some()).collect();
    let lowered = message.to_lowercase();
    let by_path: Vec<&PendingChoice> = entries
        .iter()
        .copied()
        .filter(|c| c.path.as_deref().is_some_and(|p| lowered.contains(&p.to_lowercase())))
        .collect();
    if let [one] = by_path.as_slice() {
        return Some(one);
    }
    let folded = fold_name(message);
    let words: Vec<&str> = folded.split(' ').filter(|w| !w.is_empty() && !PICK_FILLER.contains(w)).collect();
    // A question, or a "not" ("no, not Sam Lee"), names an entry without picking it.
    if words.is_empty() || message.trim_end().ends_with('?') {
        return None;
    }
    if folded.split(' ').any(|w| NEGATIONS.contains(&w)) {
        let new = words.iter().any(|w| NEW_WORDS.contains(w) && *w != "neither" && *w != "none");
        return new.then(|| choices.iter().find(|c| c.path.is_none())).flatten();
    }
    if let [word] = words.as_slice() {
        let place = match *word {
            "last" => entries.len().checked_sub(1),
            other => ORDINALS.iter().find(|(w, _)| *w == other).map(|(_, i)| *i),
        };
        if let Some(choice) = place.and_then(|i| entries.get(i)) {
            return Some(choice);
        }
    }
    let label_words =
        |c: &PendingChoice| -> Vec<String> { fold_name(&c.label).split(' ').map(str::to_string).collect() };
    let named: Vec<&PendingChoice> = entries
        .iter()
        .copied()
        .filter(|c| {
            let label = label_words(c);
            words.iter().all(|w| label.iter().any(|l| l == w))
        })
        .collect();
    if let [one] = named.as_slice() {
        return Some(one);
    }
    let mentioned: Vec<&PendingChoice> = entries
        .iter()
        .copied()
        .filter(|c| {
            let label = fold_name(&c.label);
            !label.is_empty() && format!(" {folded} ").contains(&format!(" {label} "))
        })
        .collect();
    if let [one] = mentioned.as_slice() {
        return Some(one);
    }
    if named.is_empty() && words.iter().any(|w| NEW_WORDS.contains(w)) {
        return choices.iter().find(|c| c.path.is_none());
    }
    None
}

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
    if !pending.choices.is_empty() {
        return format!(
            "{CANCELLED_PREFIX} the person was asked which entry they meant (\"{}\") and did not name one of \
             the choices, so nothing was done and nothing is pending. Answer their message below; if it still \
             points at one of those entries, call the tool again with that entry's path.",
            pending.proposal
        );
    }
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
        kb_tools::StateUpdate::ConfirmationRequested { tool, arguments, proposal } => Some(PendingCall {
            tool: tool.clone(),
            arguments: arguments.clone(),
            proposal: proposal.clone(),
            choices: Vec::new(),
        }),
        kb_tools::StateUpdate::ChoiceRequested(pending) => Some(pending.clone()),
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
            choices: Vec::new(),
        }
    }

    fn sams() -> Vec<PendingChoice> {
        let choice = |label: &str, path: Option<&str>| PendingChoice {
            label: label.into(),
            path: path.map(str::to_string),
            arguments: json!({"text": "lunch with Sam", "mergeInto": path}),
        };
        vec![
            choice("Sam Lee", Some("people/sam-lee.md")),
            choice("Sam Ortiz", Some("people/sam-ortiz.md")),
            choice("new", None),
        ]
    }

    #[test]
    fn a_pick_names_exactly_one_choice() {
        let choices = sams();
        let picked = |m: &str| pick(&choices, m).map(|c| c.label.as_str());
        for (message, expected) in [
            ("Sam Lee", Some("Sam Lee")),
            ("sam lee!", Some("Sam Lee")),
            ("Ortiz", Some("Sam Ortiz")),
            ("I mean Sam Ortiz", Some("Sam Ortiz")),
            ("the second one", Some("Sam Ortiz")),
            ("1", Some("Sam Lee")),
            ("the last one", Some("Sam Ortiz")),
            ("people/sam-lee.md", Some("Sam Lee")),
            ("it's Sam Lee from work", Some("Sam Lee")),
            ("someone new", Some("new")),
            ("neither", Some("new")),
            ("no, someone new", Some("new")),
            ("no, not Sam Lee", None),
            ("Sam Lee?", None),
            ("what does Sam Lee do?", None),
            ("Sam", None),
            ("the one from work", None),
            ("yes", None),
            ("list my projects", None),
            ("", None),
        ] {
            assert_eq!(picked(message), expected, "{message:?}");
        }
    }

    #[test]
    fn choices_run_unconfirmed_and_anything_else_cancels() {
        let pending = PendingCall { choices: sams(), ..pending() };
        match decide(Some(pending.clone()), "Sam Lee") {
            Decision::Run { call, confirmed } => {
                assert!(!confirmed && call.choices.is_empty());
                assert_eq!(call.arguments["mergeInto"], "people/sam-lee.md");
            }
            other => panic!("expected a run, got {other:?}"),
        }
        assert!(matches!(decide(Some(pending), "yes"), Decision::Cancel(_)));
        assert!(matches!(
            decide(Some(super::tests::pending()), "yes"),
            Decision::Run { confirmed: true, .. }
        ));
        assert_eq!(decide(None, "yes"), Decision::Nothing);
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
