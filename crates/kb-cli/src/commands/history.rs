//! The commands of revision history (docs/HISTORY.md): `kb history PATH`, `kb restore PATH
//! REV`, `kb undo [--force]` and `kb delete PATH`. Their changes are recorded with source
//! `cli`.

use kb_core::{Assistant, ConversationId, LaterChanges, UndoOf};
use kb_server::dto::{RestoreAnswer, RevisionsAnswer};
use serde_json::Value;

use crate::failure::CliError;
use crate::output::{Format, show, text};

/// `kb history PATH`: the revisions, newest first, as `ID  TIME  SOURCE  DESCRIPTION`.
pub async fn history(kb: &Assistant, path: &str, format: Format) -> Result<(), CliError> {
    let revisions_of = kb.history().revisions(path).await?;
    show(format, &RevisionsAnswer { revisions: &revisions_of }, |data| revisions(path, data))
}

/// `kb restore PATH REV`: the entry back to that revision's bytes.
pub async fn restore(kb: &Assistant, path: &str, revision: i64, format: Format) -> Result<(), CliError> {
    let data = kb.history().restore(path, revision).await?;
    show(format, &RestoreAnswer::from(&data), |data| restored(revision, data))
}

/// `kb undo [--force] [--conversation ID]`: the most recent change kb made, undone.
pub async fn undo(
    kb: &Assistant,
    later: LaterChanges,
    conversation: Option<String>,
    format: Format,
) -> Result<(), CliError> {
    let of = match conversation.filter(|id| !id.trim().is_empty()) {
        Some(id) => UndoOf::Conversation(ConversationId::new(id)),
        None => UndoOf::Anyone,
    };
    let data = kb.history().undo(of, later).await?;
    show(format, &data, undone)
}

/// `kb delete PATH`: removes the entry's file (history keeps it).
pub async fn delete(kb: &Assistant, path: &str, format: Format) -> Result<(), CliError> {
    let data = kb.entries().delete(path).await?;
    show(format, &data, deleted)
}

/// The table of `kb history`: one line per revision, `ID  YYYY-MM-DD HH:MM:SS  SOURCE
/// DESCRIPTION` (UTC), newest first.
fn revisions(path: &str, data: &Value) -> String {
    let revisions = data.get("revisions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    if revisions.is_empty() {
        return format!("no history for {path}\n");
    }
    let id = |r: &Value| r.get("id").map(Value::to_string).unwrap_or_default();
    let width = revisions.iter().map(|r| id(r).len()).max().unwrap_or(0).max(2);
    let mut out = format!("{:>width$}  {:<19}  {:<7}  DESCRIPTION\n", "ID", "TIME (UTC)", "SOURCE");
    for revision in revisions {
        let at = text(revision, "at").replacen('T', " ", 1);
        let at = at.get(..19).unwrap_or(&at);
        out.push_str(&format!(
            "{:>width$}  {at:<19}  {:<7}  {}\n",
            id(revision),
            text(revision, "source"),
            text(revision, "description"),
        ));
    }
    out
}

fn restored(revision: i64, data: &Value) -> String {
    let path = text(data, "path");
    let mut out = match data.get("revision").and_then(Value::as_i64) {
        Some(recorded) => format!("restored {path} to revision {revision} (recorded as revision {recorded})"),
        None => format!("{path} already has the bytes of revision {revision}: nothing changed"),
    };
    if let Some(note) = data.get("note").and_then(Value::as_str) {
        out.push_str(&format!("\n{note}"));
    }
    out
}

/// What `kb undo` undid, where that change came from, and each file it put back.
pub(crate) fn undone(data: &Value) -> String {
    let mut out = format!("undone: {}\n", text(data, "undone"));
    if let Some(by) = data.get("by").and_then(Value::as_str) {
        out.push_str(&format!("  a change made by {by}\n"));
    }
    for file in data.get("files").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]) {
        let revision = file.get("revision").map(Value::to_string).unwrap_or_default();
        match (file.get("pathAfter").and_then(Value::as_str), file.get("pathBefore").and_then(Value::as_str))
        {
            (Some(now), _) => out.push_str(&format!("  put back {now} (revision {revision})\n")),
            (None, Some(was)) => out.push_str(&format!("  removed {was} (revision {revision})\n")),
            (None, None) => {}
        }
    }
    out
}

fn deleted(data: &Value) -> String {
    let path = text(data, "path");
    match data.get("revision").and_then(Value::as_i64) {
        Some(revision) => {
            format!("deleted {path} (revision {revision}; `kb restore {path} {revision}` brings it back)")
        }
        None => format!("deleted {path}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn history_prints_a_table_newest_first() {
        let data = json!({"revisions": [
            {"id": 12, "at": "2026-11-21T09:20:41.007781Z", "source": "cli", "description": "updated status"},
            {"id": 3, "at": "2026-11-21T09:14:03.512345Z", "source": "api", "description": "captured"},
        ]});
        let table = revisions("projects/a.md", &data);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert!(lines[1].starts_with("12  2026-11-21 09:20:41  cli "), "{table}");
        assert!(lines[2].starts_with(" 3  2026-11-21 09:14:03  api "), "{table}");
        assert!(lines[2].ends_with("captured"), "{table}");
        assert_eq!(revisions("projects/a.md", &json!({"revisions": []})), "no history for projects/a.md\n");
    }

    #[test]
    fn undo_names_each_file() {
        let data = json!({"undone": "the update of a", "by": "mcp", "files": [
            {"pathBefore": "projects/a.md", "pathAfter": "projects/a.md", "revision": 7},
            {"pathBefore": "ideas/b.md", "pathAfter": null, "revision": 8},
        ]});
        assert_eq!(
            undone(&data),
            "undone: the update of a\n  a change made by mcp\n  put back projects/a.md (revision 7)\n  removed ideas/b.md (revision 8)\n"
        );
    }
}
