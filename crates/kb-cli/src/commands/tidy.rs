//! `kb duplicates [NAME]` and `kb merge TARGET SOURCE…`: finding entries that are one and
//! the same, and making them one. A merge from the CLI is the person's explicit request, so
//! it happens at once, recorded as `cli` (`kb undo` takes it back).

use kb_core::Assistant;
use serde_json::Value;

use crate::failure::CliError;
use crate::output::{Format, show, text};

/// `kb duplicates [NAME]`: the groups of likely duplicates, one block each.
pub async fn duplicates(kb: &Assistant, name: Option<&str>, format: Format) -> Result<(), CliError> {
    let data = kb.entries().duplicates(name).await?;
    show(format, &data, groups)
}

/// `kb merge TARGET SOURCE…`.
pub async fn merge(kb: &Assistant, target: &str, sources: &[String], format: Format) -> Result<(), CliError> {
    let data = kb.entries().merge(target, sources).await?;
    show(format, &data, merged)
}

/// Each group: its reason, then its entries as `  path  name`.
fn groups(data: &Value) -> String {
    let groups = data.get("groups").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    if groups.is_empty() {
        return "no duplicates found\n".to_string();
    }
    let mut out = String::new();
    for group in groups {
        out.push_str(&format!("{}:\n", text(group, "reason")));
        for entry in group.get("entries").and_then(Value::as_array).into_iter().flatten() {
            out.push_str(&format!("  {}  {}\n", text(entry, "path"), text(entry, "name")));
        }
    }
    let total = data.get("total").and_then(Value::as_u64).unwrap_or(groups.len() as u64);
    if total > groups.len() as u64 {
        out.push_str(&format!("({} of {total} groups shown)\n", groups.len()));
    }
    out
}

/// What a merge did, and how to take it back.
fn merged(data: &Value) -> String {
    let sources: Vec<&str> = data
        .get("merged")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    format!("merged {} into {} (`kb undo` takes it back)", sources.join(", "), text(data, "path"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn groups_print_their_reason_and_entries() {
        let data = json!({"groups": [{"reason": "the same name", "entries": [
            {"path": "inbox/zoe.md", "name": "Zoë Kim"}, {"path": "people/zoe-kim.md", "name": "Zoe Kim"}
        ]}], "total": 1});
        assert_eq!(groups(&data), "the same name:\n  inbox/zoe.md  Zoë Kim\n  people/zoe-kim.md  Zoe Kim\n");
        assert_eq!(groups(&json!({"groups": [], "total": 0})), "no duplicates found\n");
        let done = json!({"path": "people/priya-raman.md", "merged": ["people/priya.md"]});
        assert_eq!(
            merged(&done),
            "merged people/priya.md into people/priya-raman.md (`kb undo` takes it back)"
        );
    }
}
