//! The final answer after tool calls: each tool result (`{success, data?, error?}`, data
//! shaped as the tool's output schema says) described in plain sentences.

use kb_domain::fields::keys;
use serde_json::Value;

use super::transcript::Outcome;

/// The answer for the tool results of a turn, one paragraph per result.
pub fn render(outcomes: &[Outcome]) -> String {
    render_for(outcomes, false)
}

/// As [`render`], for a turn that asked a question (`question`): search hits answer it with
/// their passages and citations ([`super::answers`]) rather than as a list.
pub fn render_for(outcomes: &[Outcome], question: bool) -> String {
    outcomes.iter().map(|outcome| render_one(outcome, question)).collect::<Vec<_>>().join("\n\n")
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

fn render_one(outcome: &Outcome, question: bool) -> String {
    let Ok(result) = serde_json::from_str::<Value>(&outcome.content) else {
        return "That didn't work: the tool answered with something I could not read.".to_string();
    };
    if result.get("success").and_then(Value::as_bool) != Some(true) {
        if let Some(question) = which_one(&result) {
            return question;
        }
        return match result.get("error").and_then(Value::as_str) {
            Some(error) if !error.is_empty() => format!("That didn't work: {error}"),
            _ => "That didn't work.".to_string(),
        };
    }
    let data = result.get("data").cloned().unwrap_or(Value::Null);
    let tool = outcome.tool.as_deref().unwrap_or_else(|| guess_tool(&data));
    match tool {
        "classify_and_capture" => capture(&data),
        "list_entries" => list(&data),
        "get_entry" => match super::answers::entry_with_lines(&data) {
            // A question about one entry: the entry, and where it says so.
            Some((read, cite)) if question => format!("{}\n\nFrom {cite}", entry(&read)),
            _ => entry(data.get("entry").unwrap_or(&Value::Null)),
        },
        "search_entries" if question => super::answers::answer(&data),
        "search_entries" => search(&data),
        "generate_digest" => {
            let content = text(&data, "content").trim();
            if content.is_empty() { "The digest is empty.".to_string() } else { content.to_string() }
        }
        "update_entry" => {
            let fields: Vec<&str> = data
                .get("updatedFields")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if fields.is_empty() {
                format!("Nothing changed in {}.", text(&data, "path"))
            } else {
                format!("Updated {}: {}.", text(&data, "path"), fields.join(", "))
            }
        }
        "move_entry" => format!("Moved {} → {}.", text(&data, "oldPath"), text(&data, "newPath")),
        "delete_entry" => deleted(&data),
        "undo_last_change" => undone(&data),
        "find_duplicates" => duplicates(&data),
        "merge_entries" => merged(&data),
        "build_context" => context(&data),
        _ => "Done.".to_string(),
    }
}

/// The tool a result came from, judged by its shape (when the call is not in the messages).
fn guess_tool(data: &Value) -> &'static str {
    let has = |key: &str| data.get(key).is_some();
    if has("groups") {
        "find_duplicates"
    } else if has("related") {
        "build_context"
    } else if has("merged") && has("referencesUpdated") {
        "merge_entries"
    } else if has("deleted") {
        "delete_entry"
    } else if has("undone") {
        "undo_last_change"
    } else if has("clarificationNeeded") {
        "classify_and_capture"
    } else if has("newPath") {
        "move_entry"
    } else if has("updatedFields") {
        "update_entry"
    } else if has("entry") {
        "get_entry"
    } else if has("content") && has("type") {
        "generate_digest"
    } else if data
        .get("entries")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
        .is_some_and(|e| e.get("score").is_some())
    {
        "search_entries"
    } else {
        "list_entries"
    }
}

/// A delete: the question to put when it only proposed, else what was done.
fn deleted(data: &Value) -> String {
    let path = text(data, "path");
    if data.get("confirmationRequired").and_then(Value::as_bool) == Some(true) {
        let proposal = text(data, "proposal");
        let question = if proposal.is_empty() { format!("Delete {path}?") } else { proposal.to_string() };
        return format!("{question} Say “yes” to delete it; anything else keeps it.");
    }
    if data.get("deleted").and_then(Value::as_bool) == Some(true) {
        format!("Deleted {path}. Say “undo” to bring it back.")
    } else {
        format!("{path} was not deleted.")
    }
}

/// An undo: what it undid and where each file is now.
fn undone(data: &Value) -> String {
    let mut lines = vec![format!("Undone: {}.", text(data, "undone").trim_end_matches('.'))];
    for file in data.get("files").and_then(Value::as_array).into_iter().flatten() {
        let before = file.get("pathBefore").and_then(Value::as_str);
        let after = file.get("pathAfter").and_then(Value::as_str);
        lines.push(match (before, after) {
            (None, Some(after)) => format!("- {after} is back"),
            (Some(before), None) => format!("- {before} is removed"),
            (Some(before), Some(after)) if before != after => format!("- {after} is back (from {before})"),
            (_, Some(after)) => format!("- {after} is as it was"),
            (None, None) => continue,
        });
    }
    lines.join("\n")
}

/// The question for a failure that lists entries to choose from: a reference that named
/// several, or a capture that may be one of them.
fn which_one(result: &Value) -> Option<String> {
    let (list, duplicate) = match (result.get("candidates"), result.get("possibleDuplicate")) {
        (Some(list), _) => (list, false),
        (None, Some(list)) => (list, true),
        (None, None) => return None,
    };
    let named: Vec<String> =
        list.as_array()?.iter().map(|c| format!("{} ({})", text(c, "name"), text(c, "path"))).collect();
    let choices = match named.as_slice() {
        [] => return None,
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    };
    Some(if duplicate {
        format!(
            "Is this about {choices}? Say which, or “new” if it is someone or something new. Nothing is filed yet."
        )
    } else {
        format!("Which one do you mean: {choices}? Say its name. Nothing was changed.")
    })
}

/// Duplicate groups, each with its reason.
/// An entry and the notes around it, one line each.
fn context(data: &Value) -> String {
    let entry = data.get("entry").cloned().unwrap_or_default();
    let mut lines = vec![format!("{}: {}", text(&entry, "name"), text(&entry, "summary"))];
    let related: Vec<&Value> = data.get("related").and_then(Value::as_array).into_iter().flatten().collect();
    if related.is_empty() {
        lines.push("Nothing links to it, and it links to nothing.".to_string());
    }
    for note in related {
        let how = if text(note, "relation") == "links_here" { "links here" } else { "linked" };
        lines.push(format!("- {} ({how}): {}", text(note, "name"), text(note, "summary")));
    }
    lines.join("\n")
}

fn duplicates(data: &Value) -> String {
    let groups: Vec<&Value> = data.get("groups").and_then(Value::as_array).into_iter().flatten().collect();
    if groups.is_empty() {
        return "I found no duplicates.".to_string();
    }
    let mut lines = vec![format!(
        "These look like duplicates ({} group{}):",
        groups.len(),
        if groups.len() == 1 { "" } else { "s" }
    )];
    for group in groups {
        let members: Vec<String> = group
            .get("entries")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|e| format!("{} ({})", text(e, "name"), text(e, "path")))
            .collect();
        lines.push(format!("- {} — {}", members.join(", "), text(group, "reason")));
    }
    lines.push("Say “merge … into …” to combine them.".to_string());
    lines.join("\n")
}

/// A merge: the question to put when it only proposed, else what was done.
fn merged(data: &Value) -> String {
    if data.get("confirmationRequired").and_then(Value::as_bool) == Some(true) {
        return format!(
            "{} Say “yes” to merge; anything else leaves them as they are.",
            text(data, "proposal")
        );
    }
    let sources: Vec<&str> = data
        .get("merged")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    format!("Merged {} into {}. Say “undo” to take it back.", sources.join(", "), text(data, "path"))
}

fn capture(data: &Value) -> String {
    let name = text(data, "name");
    if data.get("merged").and_then(Value::as_bool) == Some(true) {
        return format!("Added that to “{name}” ({}).", text(data, "path"));
    }
    if data.get("clarificationNeeded").and_then(Value::as_bool) == Some(true) {
        return format!("I put “{name}” in the inbox — is it a person, project, idea or admin task?");
    }
    let confidence = data.get("confidence").and_then(Value::as_f64).unwrap_or(0.0);
    format!("Filed “{name}” under {} (confidence {confidence:.2}).", text(data, "category"))
}

fn entries(data: &Value) -> (Vec<&Value>, u64) {
    let entries: Vec<&Value> = data.get("entries").and_then(Value::as_array).into_iter().flatten().collect();
    let total = data.get("total").and_then(Value::as_u64).unwrap_or(entries.len() as u64);
    (entries, total)
}

fn list(data: &Value) -> String {
    let (entries, total) = entries(data);
    if entries.is_empty() {
        return "No entries match.".to_string();
    }
    let mut lines = vec![if total as usize > entries.len() {
        format!("Here are {} of {total} entries:", entries.len())
    } else if total == 1 {
        "Here is the one entry:".to_string()
    } else {
        format!("Here are the {total} entries:")
    }];
    for e in entries {
        let status = text(e, "status");
        let status = if status.is_empty() { String::new() } else { format!(" [{status}]") };
        let summary = text(e, "summary");
        let summary = if summary.is_empty() { String::new() } else { format!(" — {summary}") };
        lines.push(format!("- {}{status}{summary} ({})", text(e, "name"), text(e, "path")));
    }
    lines.join("\n")
}

fn search(data: &Value) -> String {
    let (entries, total) = entries(data);
    if entries.is_empty() {
        return "I found nothing matching that.".to_string();
    }
    let fuzzy = ["fuzzy", "approximate", "typoTolerant"]
        .iter()
        .any(|k| data.get(*k).and_then(Value::as_bool) == Some(true));
    let partial = data.get("partialTotal").and_then(Value::as_u64).unwrap_or(0);
    let head = match (fuzzy, total) {
        (true, _) => "Nothing matched exactly; these come close:".to_string(),
        // The hits holding only some of the words are listed after the others.
        (false, 0) if partial > 0 => "Nothing holds all of those words; these hold some:".to_string(),
        (false, n) if partial > 0 => format!(
            "I found {n} {} with all of those words, and {partial} with some; the best {}:",
            if n == 1 { "entry" } else { "entries" },
            entries.len()
        ),
        (false, 1) => "I found one entry:".to_string(),
        (false, n) if n as usize > entries.len() => {
            format!("I found {n} entries; the best {}:", entries.len())
        }
        (false, n) => format!("I found {n} entries:"),
    };
    let mut lines = vec![head];
    for e in entries {
        let snippet = text(e, "snippet");
        let snippet = if snippet.is_empty() { String::new() } else { format!(" — {snippet}") };
        lines.push(format!("- {} ({}){snippet}", text(e, "name"), text(e, "path")));
    }
    lines.join("\n")
}

fn entry(entry: &Value) -> String {
    let mut lines = vec![format!("{} ({})", text(entry, "name"), text(entry, "path"))];
    if let Some(fields) = entry.get("frontmatter").and_then(Value::as_object) {
        for (key, value) in fields {
            if matches!(key.as_str(), keys::ID | keys::NAME) || value.is_null() {
                continue;
            }
            let shown = match value {
                Value::String(s) => s.clone(),
                Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                    .collect::<Vec<_>>()
                    .join(", "),
                other => other.to_string(),
            };
            lines.push(format!("{key}: {shown}"));
        }
    }
    let content = text(entry, "content").trim();
    if !content.is_empty() {
        lines.push(String::new());
        lines.push(content.to_string());
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(tool: &str, content: &str) -> String {
        render(&[Outcome { tool: Some(tool.into()), content: content.into() }])
    }

    #[test]
    fn describes_each_result_in_plain_sentences() {
        let got = r#"{"success":true,"data":{"entry":{"path":"projects/x.md","category":"projects","name":"X",
            "frontmatter":{"id":"01","name":"X","status":"active","tags":["a","b"]},"content":"Notes."}}}"#;
        assert_eq!(one("get_entry", got), "X (projects/x.md)\nstatus: active\ntags: a, b\n\nNotes.");
        let digest = r###"{"success":true,"data":{"type":"daily","content":"## Top 3 actions\n- a"}}"###;
        assert_eq!(one("generate_digest", digest), "## Top 3 actions\n- a");
        let updated =
            r#"{"success":true,"data":{"path":"projects/x.md","updatedFields":["status","due_date"]}}"#;
        assert_eq!(one("update_entry", updated), "Updated projects/x.md: status, due_date.");
        let moved =
            r#"{"success":true,"data":{"oldPath":"inbox/x.md","newPath":"ideas/x.md","category":"ideas"}}"#;
        assert_eq!(one("move_entry", moved), "Moved inbox/x.md → ideas/x.md.");
        let hits = r#"{"success":true,"data":{"entries":[{"path":"people/priya.md","name":"Priya",
            "category":"people","matchedField":"name","snippet":"met at the meetup","score":2.5}],"total":1}}"#;
        assert_eq!(
            one("search_entries", hits),
            "I found one entry:\n- Priya (people/priya.md) — met at the meetup"
        );
        assert_eq!(
            one("search_entries", r#"{"success":true,"data":{"entries":[],"total":0}}"#),
            "I found nothing matching that."
        );
    }

    #[test]
    fn deletes_ask_first_and_undo_says_what_came_back() {
        let asked = r#"{"success":true,"data":{"path":"projects/old-site.md","deleted":false,
            "confirmationRequired":true,"proposal":"Delete projects/old-site.md?"}}"#;
        assert_eq!(
            one("delete_entry", asked),
            "Delete projects/old-site.md? Say “yes” to delete it; anything else keeps it."
        );
        let done = r#"{"success":true,"data":{"path":"projects/old-site.md","deleted":true,"revision":7}}"#;
        assert_eq!(one("delete_entry", done), "Deleted projects/old-site.md. Say “undo” to bring it back.");
        let undo = r#"{"success":true,"data":{"undone":"Deleted projects/old-site.md",
            "files":[{"pathBefore":null,"pathAfter":"projects/old-site.md","revision":8}]}}"#;
        assert_eq!(
            one("undo_last_change", undo),
            "Undone: Deleted projects/old-site.md.\n- projects/old-site.md is back"
        );
        let moved = r#"{"success":true,"data":{"undone":"Moved inbox/x.md to ideas",
            "files":[{"pathBefore":"ideas/x.md","pathAfter":"inbox/x.md","revision":9}]}}"#;
        assert_eq!(
            render(&[Outcome { tool: None, content: moved.into() }]),
            "Undone: Moved inbox/x.md to ideas.\n- inbox/x.md is back (from ideas/x.md)"
        );
    }

    #[test]
    fn shapes_are_recognised_without_the_call() {
        let moved =
            r#"{"success":true,"data":{"oldPath":"a/x.md","newPath":"ideas/x.md","category":"ideas"}}"#;
        assert_eq!(render(&[Outcome { tool: None, content: moved.into() }]), "Moved a/x.md → ideas/x.md.");
        assert!(render(&[Outcome { tool: None, content: "{oops".into() }]).starts_with("That didn't work"));
    }
}
