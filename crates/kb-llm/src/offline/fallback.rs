//! The second step of a turn whose first call named an entry the vault does not have. The
//! offline model cannot read the vault's names itself, so it asks the tool by name and
//! reads the answer: a question about a name no entry has ("what do I know about
//! climbing?") becomes a search for it; a statement about one ("Dana's birthday is May 5",
//! "the garden shed project is blocked") is filed as said. A command ("mark the shed done")
//! or a request to show one entry ("open the zeppelin") is not guessed at: the tool's "not
//! found" is the answer.

use chrono::NaiveDate;
use kb_domain::{ChatCompletion, ToolDefinition};
use serde_json::Value;

use super::intent::{self, Intent, Subject};
use super::plan::{self, Known};
use super::queries::{self, search_words};
use super::transcript::{Outcome, Transcript};
use super::utterance::Utterance;

/// Verbs that open a command to change an entry; a miss on one is reported, not filed.
const COMMANDS: &[&str] = &[
    "mark",
    "flag",
    "set",
    "change",
    "update",
    "rename",
    "tag",
    "push",
    "postpone",
    "reschedule",
    "delay",
    "move",
    "put",
    "switch",
    "make",
    "call",
];

/// The next call after a get or an update that found no entry of the name given, if the
/// message was a question (a search) or a statement (a capture); `None` otherwise.
pub fn after_a_miss(
    transcript: &Transcript,
    today: NaiveDate,
    tools: &[ToolDefinition],
) -> Option<ChatCompletion> {
    let [outcome] = transcript.outcomes.as_slice() else { return None };
    if !missed(&outcome.content) {
        return None;
    }
    let message = transcript.last_user.as_deref()?;
    let next = match (outcome.tool.as_deref(), intent::understand(message, today)) {
        // Only a question ("what do I know about …"); "open the zeppelin" is answered as is.
        (Some("get_entry"), Intent::Get(Subject::Named(name)))
            if queries::about(&Utterance::new(message)).is_some() =>
        {
            Intent::Search { query: search_words(&name), category: None }
        }
        (Some("update_entry"), Intent::Update { subject: Subject::Named(_), .. }) => {
            let u = Utterance::new(message);
            if u.core().first().is_some_and(|w| COMMANDS.contains(&w.as_str())) {
                return None;
            }
            Intent::Capture { text: u.original.clone(), hints: None }
        }
        _ => return None,
    };
    Some(plan::plan(next, Known::default(), tools, transcript.calls_so_far))
}

/// The results to describe: after a miss that a second call followed, only what that call
/// found (the search, the capture), not the "not found" that led to it.
pub fn worth_telling(outcomes: &[Outcome]) -> &[Outcome] {
    match outcomes {
        [first, rest @ ..] if !rest.is_empty() && missed(&first.content) => rest,
        all => all,
    }
}

/// Whether a tool result says no entry has the name or path given.
fn missed(content: &str) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(content) else { return false };
    value.get("success").and_then(Value::as_bool) == Some(false)
        && value.get("error").and_then(Value::as_str).is_some_and(|e| e.starts_with("Entry not found"))
}
