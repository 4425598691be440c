//! The commands that change an entry: `kb update` (update_entry) and `kb move`
//! (move_entry). Paths are checked by the tools, as for `kb show`, so a refused path
//! changes nothing and exits 2.

use kb_core::Assistant;
use serde_json::{Map, Value};

use crate::cli::{Setting, UpdateArgs};
use crate::failure::CliError;
use crate::output;

/// The keys update_entry reads as the notes rather than as a field.
const BODY_KEYS: [&str; 2] = ["content", "body"];

/// `kb update PATH [--set KEY=VALUE]... [--body TEXT | --append TEXT]`.
///
/// `--append` reads the notes and writes them back longer: an edit another process makes
/// to the notes between the two is overwritten.
pub async fn update(kb: &Assistant, args: &UpdateArgs, json: bool) -> Result<(), CliError> {
    let mut updates = fields(&args.set, args.body.is_some() || args.append.is_some())?;
    if let Some(body) = &args.body {
        updates.insert("content".to_string(), Value::String(body.clone()));
    }
    if let Some(text) = &args.append {
        if text.trim().is_empty() {
            return Err(CliError::usage("nothing to append: TEXT is empty"));
        }
        let current = kb.get(&args.path).await?;
        let notes = current.pointer("/entry/content").and_then(Value::as_str).unwrap_or("");
        updates.insert("content".to_string(), Value::String(appended(notes, text)));
    }
    let data = kb.update(&args.path, Value::Object(updates)).await?;
    show(json, &data, output::updated)
}

/// `kb move PATH CATEGORY`: the category is checked by move_entry (never the inbox).
pub async fn move_entry(kb: &Assistant, path: &str, category: &str, json: bool) -> Result<(), CliError> {
    let data = kb.move_entry(path, category).await?;
    show(json, &data, output::moved)
}

/// The `--set` fields as update_entry's `updates`; `notes_given` tells whether `--body` or
/// `--append` gives the notes too. Refuses nothing to change and a field given twice.
fn fields(settings: &[Setting], notes_given: bool) -> Result<Map<String, Value>, CliError> {
    if settings.is_empty() && !notes_given {
        return Err(CliError::usage("nothing to update: give --set KEY=VALUE, --body TEXT or --append TEXT"));
    }
    let mut updates = Map::new();
    let mut notes_set = notes_given;
    for setting in settings {
        if BODY_KEYS.contains(&setting.key.as_str()) {
            if notes_set {
                return Err(CliError::usage(format!(
                    "the notes are given twice (--set {}, --body or --append): give them once",
                    setting.key
                )));
            }
            notes_set = true;
            // The notes are text, whatever they look like.
            updates.insert("content".to_string(), Value::String(setting.text.clone()));
        } else if updates.insert(setting.key.clone(), setting.value.clone()).is_some() {
            return Err(CliError::usage(format!("field {:?} is set twice: set it once", setting.key)));
        }
    }
    Ok(updates)
}

/// `notes` with `text` added as a paragraph of its own at the end.
fn appended(notes: &str, text: &str) -> String {
    let notes = notes.trim_end();
    let text = text.trim_end();
    if notes.is_empty() { format!("{text}\n") } else { format!("{notes}\n\n{text}\n") }
}

/// Prints `data` as JSON, or as `human` renders it.
fn show(json: bool, data: &Value, human: impl Fn(&Value) -> String) -> Result<(), CliError> {
    if json { output::print_json(data) } else { output::print_text(&human(data)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(args: &[&str]) -> Vec<Setting> {
        args.iter().map(|a| Setting::parse(a).unwrap_or_else(|e| panic!("{e}"))).collect()
    }

    #[test]
    fn settings_become_updates_with_the_notes_as_text() {
        let updates = fields(&set(&["status=done", "tags=[\"a\"]", "body=42"]), false)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(Value::Object(updates), json!({"status": "done", "tags": ["a"], "content": "42"}));
    }

    #[test]
    fn nothing_to_change_and_twice_given_fields_are_usage_errors() {
        let usage = |settings: &[&str], notes: bool| fields(&set(settings), notes).map_err(|e| e.kind);
        assert_eq!(usage(&[], false), Err(crate::failure::FailureKind::Usage));
        assert!(usage(&[], true).is_ok());
        assert!(usage(&["status=done", "status=active"], false).is_err());
        assert!(usage(&["content=x"], true).is_err());
        assert!(usage(&["content=x", "body=y"], false).is_err());
    }

    #[test]
    fn appending_adds_a_paragraph() {
        assert_eq!(appended("", "first"), "first\n");
        assert_eq!(
            appended("Met at the meetup.\n\n", "Called her.\n"),
            "Met at the meetup.\n\nCalled her.\n"
        );
    }
}
