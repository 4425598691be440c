//! The second step of a turn whose first call looked an entry up by name. The offline model
//! cannot read the vault's names itself, so it asks the tool by name and reads the answer:
//! a statement about an entry ("the cello project is blocked", "Priya's birthday is March
//! 3") updates the entry the look-up found, and is filed as said when none has it or the
//! one found does not fit (a status or due date belongs to a project or an admin task; other
//! facts need the entry found by its name, not by a search of its words: "the robotics
//! meetup is done" does not mark Priya, whose notes mention the meetup, done); a question about a name no entry has
//! ("what do I know about quantum physics?") becomes a search for it. A command ("mark the shed done")
//! or a request to show one entry ("open the zeppelin") is not guessed at: the tool's "not
//! found" is the answer.

use chrono::NaiveDate;
use kb_domain::fields::keys;
use kb_domain::{ChatCompletion, ToolDefinition};
use serde_json::{Map, Value};

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
    let message = transcript.last_user.as_deref()?;
    let next = match (outcome.tool.as_deref(), intent::understand(message, today)) {
        // A statement: the entry the look-up found by its name is updated; one found only by
        // a search of its words, or none, means the statement is new: it is filed.
        (Some("get_entry"), Intent::Tell { updates, .. }) => match found(&outcome.content) {
            Some((path, by_search)) if fits(&path, &updates, by_search) => {
                Intent::Update { subject: Subject::Path(path), updates }
            }
            Some(_) => Intent::Capture { text: message.trim().to_string(), hints: None },
            None if missed(&outcome.content) => {
                Intent::Capture { text: message.trim().to_string(), hints: None }
            }
            None => return None,
        },
        // Only a question ("what do I know about …"); "open the zeppelin" is answered as is.
        (Some("get_entry"), Intent::Get(Subject::Named(name)))
            if missed(&outcome.content) && queries::about(&Utterance::new(message)).is_some() =>
        {
            Intent::Search { query: search_words(&name), category: None }
        }
        (Some("update_entry"), Intent::Update { subject: Subject::Named(_), .. })
            if missed(&outcome.content) =>
        {
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

/// The results to describe: after a second call (a search after a miss, an update or a
/// capture after a look-up), only what that call did, not the step that led to it.
pub fn worth_telling(outcomes: &[Outcome]) -> &[Outcome] {
    match outcomes {
        [.., last] if outcomes.len() > 1 => std::slice::from_ref(last),
        all => all,
    }
}

/// The path of the entry a successful get_entry result shows, and whether only a search of
/// the name's words found it.
fn found(content: &str) -> Option<(String, bool)> {
    let value: Value = serde_json::from_str(content).ok()?;
    if value.get("success").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let path = value.pointer("/data/entry/path")?.as_str()?.to_string();
    let by_search = value.pointer("/data/resolved/by").and_then(Value::as_str) == Some("search");
    Some((path, by_search))
}

/// Whether a statement's updates fit the entry found: a status or a due date belongs to a
/// project or an admin task (found by name or by its words: "the passport renewal" is "Renew
/// passport"); any other fact to an entry found by its name.
fn fits(path: &str, updates: &Map<String, Value>, by_search: bool) -> bool {
    let dated = updates.keys().all(|k| k == keys::STATUS || k == keys::DUE_DATE);
    if dated { path.starts_with("projects/") || path.starts_with("admin/") } else { !by_search }
}

/// Whether a tool result says no entry has the name or path given.
fn missed(content: &str) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(content) else { return false };
    value.get("success").and_then(Value::as_bool) == Some(false)
        && value.get("error").and_then(Value::as_str).is_some_and(|e| e.starts_with("Entry not found"))
}
