//! Moving an entry between categories: the transform of its frontmatter from one schema
//! to another (for move_entry).
//!
//! Common fields and the person's own keys are kept in place; fields the target also has
//! are kept when their values fit it; fields only the old category has stay under their
//! names (nothing the person wrote is dropped); the target's defaults are filled in. From
//! the inbox, `original_text` becomes the body.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::category::Category;
use crate::entry::Entry;
use crate::fields::{check_field, format_timestamp, keys};
use crate::frontmatter::Frontmatter;
use crate::path::EntryPath;

/// Why a move was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// The inbox only receives captures; entries move out of it.
    #[error("entries cannot be moved into the inbox: choose people, projects, ideas or admin")]
    IntoInbox,
    /// The entry is already there.
    #[error("entry is already in {0}")]
    SameCategory(Category),
    /// The note is already at that path.
    #[error("the note is already at {0}")]
    SamePath(EntryPath),
    /// Another file is at the path a note was to move to.
    #[error("{0} is taken by another file: choose another path")]
    PathTaken(EntryPath),
    /// The path a note was to move to is one kb leaves out (`.gitignore`, `.kbignore`,
    /// `KB_EXCLUDE`).
    #[error("{0} is left out of kb by the vault's ignore patterns: choose another path")]
    LeftOut(EntryPath),
}

/// The frontmatter and body an entry has after moving to `target` at `now`.
pub fn transform_for_move(
    entry: &Entry,
    target: Category,
    now: DateTime<Utc>,
) -> Result<(Frontmatter, String), MoveError> {
    let from = entry.category();
    if target == Category::Inbox {
        return Err(MoveError::IntoInbox);
    }
    if target == from {
        return Err(MoveError::SameCategory(target));
    }
    let mut fm = Frontmatter::new();
    let mut body = entry.body.clone();
    // A status kept aside when the entry last left `target` comes back as its status (and
    // the status it has now is kept aside in turn), so an entry never carries its own
    // category's set-aside status, and a later move out never writes over one.
    let set_aside = set_aside_status_key(target);
    let restored = entry
        .frontmatter
        .get(&set_aside)
        .filter(|v| target.field(keys::STATUS).is_none() || check_field(target, keys::STATUS, v).is_ok())
        .cloned();
    for (key, value) in entry.frontmatter.iter() {
        match key.as_str() {
            keys::SUGGESTED_CATEGORY if from == Category::Inbox => {}
            keys::ORIGINAL_TEXT if from == Category::Inbox => {
                body = body_with_original(value, &body);
            }
            k if k == set_aside && restored.is_some() => {}
            keys::STATUS if restored.as_ref().is_some_and(|r| r != value) => {
                fm.set(set_aside_status_key(from), value.clone());
            }
            keys::STATUS if restored.is_some() => {}
            keys::STATUS
                if target.field(keys::STATUS).is_some() && check_field(target, key, value).is_err() =>
            {
                // A status the target does not allow (a blocked project becoming an admin
                // item) is kept under its category's name (`projects_status`) rather than
                // lost, and comes back if the entry returns.
                fm.set(set_aside_status_key(from), value.clone());
            }
            _ => fm.set(key.clone(), value.clone()),
        }
    }
    if fm.get_str(keys::NAME).is_none_or(|s| s.trim().is_empty()) {
        fm.set(keys::NAME, Value::String(entry.name()));
    }
    if let Some(status) = restored {
        fm.set(keys::STATUS, status);
    } else if target.field(keys::STATUS).is_some()
        && fm.get(keys::STATUS).is_none_or(|v| check_field(target, keys::STATUS, v).is_err())
        && let Some(status) = target.default_status()
    {
        fm.set(keys::STATUS, Value::String(status.to_string()));
    }
    fm.set(keys::UPDATED_AT, Value::String(format_timestamp(now)));
    Ok((fm, body))
}

/// The key under which a status that `category` allows but the target does not is kept.
pub fn set_aside_status_key(category: Category) -> String {
    format!("{category}_status")
}

/// The body of an entry leaving the inbox: its original words first, then any notes.
fn body_with_original(original: &Value, body: &str) -> String {
    let text = match original {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    if text.trim().is_empty() || body.contains(text.trim()) {
        body.to_string()
    } else if body.trim().is_empty() {
        // Whatever whitespace the body had stays after the words.
        format!("{text}\n{body}")
    } else {
        format!("{text}\n\n{body}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::parse_timestamp;
    use crate::path::EntryPath;

    fn entry(path: &str, text: &str) -> Entry {
        Entry::from_document(EntryPath::parse(path).unwrap(), text).unwrap()
    }

    fn now() -> DateTime<Utc> {
        parse_timestamp("2026-11-22T00:00:00Z").unwrap()
    }

    #[test]
    fn inbox_to_project_keeps_the_words() {
        let e = entry(
            "inbox/x.md",
            "---\nid: A\nname: Garden shed\noriginal_text: build a shed this spring\nsuggested_category: projects\nconfidence: 0.4\nmood: hopeful\n---\n",
        );
        let (fm, body) = transform_for_move(&e, Category::Projects, now()).unwrap();
        assert_eq!(body, "build a shed this spring\n");
        assert_eq!(fm.get_str("status"), Some("active"));
        assert_eq!(fm.get_str("name"), Some("Garden shed"));
        assert_eq!(fm.get_str("id"), Some("A"));
        assert_eq!(fm.get_str("mood"), Some("hopeful"));
        assert!(!fm.contains("original_text"));
        assert!(!fm.contains("suggested_category"));
    }

    #[test]
    fn lossy_status_is_kept_aside() {
        let e = entry("projects/x.md", "---\nname: X\nstatus: blocked\nnext_action: call\n---\nnotes");
        let (fm, body) = transform_for_move(&e, Category::Admin, now()).unwrap();
        assert_eq!(fm.get_str("status"), Some("pending"));
        assert_eq!(fm.get_str("projects_status"), Some("blocked"));
        assert_eq!(fm.get_str("next_action"), Some("call"));
        assert_eq!(body, "notes");
        let admin = Entry { path: EntryPath::parse("admin/x.md").unwrap(), frontmatter: fm, body };
        let (back, _) = transform_for_move(&admin, Category::Projects, now()).unwrap();
        assert_eq!(back.get_str("status"), Some("blocked"), "the project's status comes back");
        assert!(!back.contains("projects_status"));
        assert_eq!(back.get_str("admin_status"), Some("pending"));
    }

    #[test]
    fn a_status_kept_aside_comes_back_even_when_the_current_one_would_fit() {
        // A project kept aside as an admin item that was done there, back as a project.
        let e = entry("admin/x.md", "---\nname: X\nstatus: done\nprojects_status: blocked\n---\n");
        let (fm, body) = transform_for_move(&e, Category::Projects, now()).unwrap();
        assert_eq!(fm.get_str("status"), Some("blocked"));
        assert!(!fm.contains("projects_status"), "{fm:?}");
        assert_eq!(fm.get_str("admin_status"), Some("done"));
        // A person (no status of its own) carrying a status from elsewhere, back as a
        // person: what it carried when it left comes back, and a later move out never
        // writes over a status kept aside before.
        let project = Entry { path: EntryPath::parse("projects/x.md").unwrap(), frontmatter: fm, body };
        let (person, body) = transform_for_move(&project, Category::People, now()).unwrap();
        assert_eq!(person.get_str("status"), Some("blocked"));
        let person = Entry { path: EntryPath::parse("people/x.md").unwrap(), frontmatter: person, body };
        let (admin, body) = transform_for_move(&person, Category::Admin, now()).unwrap();
        assert_eq!(
            (admin.get_str("status"), admin.get_str("people_status")),
            (Some("done"), Some("blocked"))
        );
        let admin = Entry { path: EntryPath::parse("admin/x.md").unwrap(), frontmatter: admin, body };
        let (back, _) = transform_for_move(&admin, Category::People, now()).unwrap();
        assert_eq!(back.get_str("status"), Some("blocked"), "{back:?}");
        assert!(!back.contains("people_status"));
        assert_eq!(back.get_str("admin_status"), Some("done"));
    }

    #[test]
    fn refuses_inbox_and_same_category() {
        let e = entry("ideas/x.md", "x");
        assert_eq!(transform_for_move(&e, Category::Inbox, now()), Err(MoveError::IntoInbox));
        assert_eq!(
            transform_for_move(&e, Category::Ideas, now()),
            Err(MoveError::SameCategory(Category::Ideas))
        );
        let (fm, _) = transform_for_move(&e, Category::People, now()).unwrap();
        assert_eq!(fm.get_str("name"), Some("x"));
    }
}
