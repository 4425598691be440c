//! Entries: a path, an ordered frontmatter and a body; how new entries are laid out, how
//! updates apply, and the one-line summary used by lists and `index.md`.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::category::{COMMON_FIELDS, Category};
use crate::edit::{BodyEdit, BodyEditError, Written, edit_document, with_changes};
use crate::fields::{
    Confidence, FieldProblem, check_field, format_timestamp, keys, parse_date, parse_timestamp,
};
use crate::frontmatter::{Frontmatter, FrontmatterError, parse_document, render_document};
use crate::path::EntryPath;

/// A stable entry identifier (a ULID), kept through moves and renames.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EntryId(String);

impl EntryId {
    /// A new, unique, time-ordered id.
    pub fn generate() -> EntryId {
        EntryId(ulid::Ulid::new().to_string())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// One entry of the vault.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Where it is: `{category}/{file}.md`.
    pub path: EntryPath,
    /// Its frontmatter, in file order, unknown keys included.
    pub frontmatter: Frontmatter,
    /// The free markdown after the frontmatter, byte for byte.
    pub body: String,
}

impl Entry {
    /// Reads an entry from the text of its file. A file without frontmatter is an entry
    /// whose body is the whole file.
    pub fn from_document(path: EntryPath, text: &str) -> Result<Entry, FrontmatterError> {
        let doc = parse_document(text)?;
        Ok(Entry { path, frontmatter: doc.frontmatter.unwrap_or_default(), body: doc.body })
    }

    /// The text of its file.
    pub fn to_document(&self) -> String {
        render_document(&self.frontmatter, &self.body)
    }

    /// The category folder it is in.
    pub fn category(&self) -> Category {
        self.path.category()
    }

    /// Its stable id, when it has one (hand-written files may not).
    pub fn id(&self) -> Option<&str> {
        self.frontmatter.get_str(keys::ID).filter(|s| !s.is_empty())
    }

    /// Its name: the `name` field, or the file name as Obsidian titles a note.
    pub fn name(&self) -> String {
        match self.frontmatter.get(keys::NAME) {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => self.path.stem().to_string(),
        }
    }

    /// Its `status`, when it is text.
    pub fn status(&self) -> Option<&str> {
        self.frontmatter.get_str(keys::STATUS)
    }

    /// Its `updated_at`, when it is a valid timestamp.
    pub fn updated_at(&self) -> Option<DateTime<Utc>> {
        self.frontmatter.get_str(keys::UPDATED_AT).and_then(parse_timestamp)
    }

    /// Its `confidence`, when it is a valid one.
    pub fn confidence(&self) -> Option<Confidence> {
        self.frontmatter.get(keys::CONFIDENCE).and_then(Value::as_f64).and_then(|f| Confidence::new(f).ok())
    }

    /// Its tags.
    pub fn tags(&self) -> Vec<String> {
        self.frontmatter.get_str_list(keys::TAGS)
    }

    /// Known fields whose values are not what the schema expects (kept as written).
    pub fn problems(&self) -> Vec<FieldProblem> {
        self.frontmatter.iter().filter_map(|(k, v)| check_field(self.category(), k, v).err()).collect()
    }

    /// The one-line summary shown in lists and `index.md`.
    pub fn summary_line(&self) -> String {
        let fm = &self.frontmatter;
        let primary = match self.category() {
            Category::Projects => fm.get_str(keys::NEXT_ACTION).map(|a| format!("Next: {a}")),
            Category::Ideas => fm.get_str(keys::ONE_LINER).map(str::to_string),
            Category::People => fm.get_str(keys::CONTEXT).map(str::to_string),
            Category::Admin => fm.get_str(keys::DUE_DATE).map(|d| format!("Due {d}")),
            Category::Inbox => fm.get_str(keys::ORIGINAL_TEXT).map(str::to_string),
            Category::Other => None,
        };
        let text = primary
            .filter(|s| !s.trim().is_empty())
            .or_else(|| first_words(&self.body).map(str::to_string))
            .unwrap_or_default();
        one_line(&text, SUMMARY_CHARS)
    }

    /// The summary of this entry as lists show it.
    pub fn summary(&self) -> EntrySummary {
        EntrySummary {
            path: self.path.clone(),
            category: self.category(),
            name: self.name(),
            status: self.status().map(str::to_string),
            updated_at: self.updated_at(),
            summary: self.summary_line(),
        }
    }
}

const SUMMARY_CHARS: usize = 120;

/// The first words of notes, as a summary: the first line that is not blank or a heading,
/// a dated `Log` line without its `- YYYY-MM-DD: ` lead.
fn first_words(body: &str) -> Option<&str> {
    let line = body.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'))?;
    let undated = line
        .strip_prefix("- ")
        .and_then(|rest| rest.split_once(": "))
        .filter(|(date, _)| parse_date(date).is_some())
        .map(|(_, words)| words.trim());
    Some(undated.filter(|w| !w.is_empty()).unwrap_or(line))
}

/// Collapses whitespace to single spaces and cuts to `max` characters with an ellipsis.
pub fn one_line(text: &str, max: usize) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= max {
        collapsed
    } else {
        let cut: String = collapsed.chars().take(max.saturating_sub(1)).collect();
        format!("{}…", cut.trim_end())
    }
}

/// What list results and `index.md` show of an entry.
#[derive(Debug, Clone, PartialEq)]
pub struct EntrySummary {
    /// Its path.
    pub path: EntryPath,
    /// Its category.
    pub category: Category,
    /// Its name.
    pub name: String,
    /// Its status, when it has one.
    pub status: Option<String>,
    /// When it last changed, when known.
    pub updated_at: Option<DateTime<Utc>>,
    /// One line about it.
    pub summary: String,
}

/// What kb needs to create an entry; the repository adds the id, slug and timestamps.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEntry {
    /// The folder it goes into.
    pub category: Category,
    /// Its name (the slug is made from it).
    pub name: String,
    /// Its other fields (category fields, tags, confidence, source, anything else).
    pub fields: Frontmatter,
    /// Its body.
    pub body: String,
}

impl NewEntry {
    /// The frontmatter of the new entry in kb's order: id, name, the category's fields,
    /// the common fields, then anything else. Known fields are checked first.
    pub fn frontmatter(&self, id: &EntryId, now: DateTime<Utc>) -> Result<Frontmatter, FieldProblem> {
        if self.name.trim().is_empty() {
            return Err(FieldProblem { field: keys::NAME.into(), problem: "a name is required".into() });
        }
        for (key, value) in self.fields.iter() {
            check_field(self.category, key, value)?;
        }
        let mut fm = Frontmatter::new();
        fm.set(keys::ID, Value::String(id.as_str().to_string()));
        fm.set(keys::NAME, Value::String(self.name.trim().to_string()));
        if let Some(status) = self.category.default_status() {
            fm.set(keys::STATUS, Value::String(status.to_string()));
        }
        let own = self.category.own_fields().iter().map(|f| f.name);
        let common = COMMON_FIELDS.iter().map(|f| f.name).filter(|k| !matches!(*k, keys::ID | keys::NAME));
        let stamp = Value::String(format_timestamp(now));
        for key in own.chain(common) {
            match key {
                keys::CREATED_AT | keys::UPDATED_AT => fm.set(key, stamp.clone()),
                _ => {
                    if let Some(value) = self.fields.get(key) {
                        fm.set(key, value.clone());
                    }
                }
            }
        }
        for (key, value) in self.fields.iter() {
            if !fm.contains(key) && !matches!(key.as_str(), keys::ID | keys::NAME) {
                fm.set(key.clone(), value.clone());
            }
        }
        Ok(fm)
    }
}

/// A change to an entry: fields to set (null removes an optional field) and, optionally,
/// an edit of its body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EntryUpdate {
    /// Fields to set, in the order given.
    pub fields: Frontmatter,
    /// The change to the body, when it changes.
    pub body: Option<BodyEdit>,
}

/// Why an update was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpdateError {
    /// Nothing to change.
    #[error("no fields to update and no body edit: give fields to set, a body edit, or both")]
    Empty,
    /// A field kb manages itself.
    #[error("field {0:?} is managed by kb and cannot be updated")]
    Managed(String),
    /// The category is changed by moving the entry.
    #[error("the category cannot be updated: use move_entry to move the entry")]
    Category,
    /// A known field with a wrong value.
    #[error(transparent)]
    Field(#[from] FieldProblem),
    /// A body edit that cannot be made.
    #[error(transparent)]
    Body(#[from] BodyEditError),
}

/// An entry's new text after an update ([`EntryUpdate::apply_to_document`]).
#[derive(Debug, Clone, PartialEq)]
pub struct UpdatedDocument {
    /// The entry as the new text reads.
    pub entry: Entry,
    /// The new text of its file.
    pub text: String,
    /// How the text was written: in place, or with its frontmatter block written anew.
    pub written: Written,
    /// The fields changed (`content` for the body).
    pub updated_fields: Vec<String>,
}

impl EntryUpdate {
    /// Builds an update from a JSON object of fields, where `content` (or `body`) is text
    /// that replaces the body.
    pub fn from_json_object(object: serde_json::Map<String, Value>) -> Result<EntryUpdate, FieldProblem> {
        let mut update = EntryUpdate::default();
        for (key, value) in object {
            if key == "content" || key == "body" {
                match value {
                    Value::String(s) => update.body = Some(BodyEdit::Replace(s)),
                    other => {
                        return Err(FieldProblem {
                            field: key,
                            problem: format!("expected text, got {other}"),
                        });
                    }
                }
            } else {
                update.fields.set(key, value);
            }
        }
        Ok(update)
    }

    /// Applies the update to `entry` as of `now`; returns the names of the fields changed
    /// (`content` for the body). Untouched fields keep their values and positions. On an
    /// error `entry` is unchanged. This changes the parsed entry only; files are edited
    /// with [`EntryUpdate::apply_to_document`].
    pub fn apply(&self, entry: &mut Entry, now: DateTime<Utc>) -> Result<Vec<String>, UpdateError> {
        self.check(entry.category())?;
        let body = self.body.as_ref().map(|edit| edit.apply(&entry.body)).transpose()?;
        let mut changed: Vec<String> = self.fields.keys().cloned().collect();
        let changes = self.changes(entry.category(), now);
        entry.frontmatter = with_changes(std::mem::take(&mut entry.frontmatter), &changes);
        if let Some(body) = body {
            entry.body = body;
            changed.push("content".to_string());
        }
        Ok(changed)
    }

    /// Applies the update to the file text `text` that `entry` was read from, as of `now`.
    /// Only the frontmatter lines of the fields set (and `updated_at`) change, and the
    /// body only when the update edits it; every other byte is kept (see
    /// [`edit_document`], which says when the frontmatter block must be written anew).
    pub fn apply_to_document(
        &self,
        entry: &Entry,
        text: &str,
        now: DateTime<Utc>,
    ) -> Result<UpdatedDocument, UpdateError> {
        let mut updated = entry.clone();
        let updated_fields = self.apply(&mut updated, now)?;
        let new_body = self.body.is_some().then_some(updated.body.as_str());
        let (text, written) = match edit_document(text, &self.changes(entry.category(), now), new_body) {
            Ok(edited) => (edited.text, edited.written),
            // Not the text of a readable entry (so not the one `entry` came from): the
            // entry is written as kb renders it.
            Err(_) => (updated.to_document(), Written::Rendered),
        };
        Ok(UpdatedDocument { entry: updated, text, written, updated_fields })
    }

    /// The frontmatter changes the update makes to an entry of `category` as of `now`: its
    /// fields, then `updated_at` — except on a person's own note outside the category
    /// folders, which gets no field it was not asked for.
    fn changes(&self, category: Category, now: DateTime<Utc>) -> Frontmatter {
        let mut changes = self.fields.clone();
        if category.is_folder() {
            changes.set(keys::UPDATED_AT, Value::String(format_timestamp(now)));
        }
        changes
    }

    /// Refuses an empty update, fields kb manages (on entries of the category folders:
    /// a person's own note has none), and known fields with wrong values.
    fn check(&self, category: Category) -> Result<(), UpdateError> {
        if self.fields.is_empty() && self.body.is_none() {
            return Err(UpdateError::Empty);
        }
        for (key, value) in self.fields.iter() {
            match key.as_str() {
                keys::ID | keys::CREATED_AT | keys::UPDATED_AT if category.is_folder() => {
                    return Err(UpdateError::Managed(key.clone()));
                }
                "category" => return Err(UpdateError::Category),
                keys::NAME if value.as_str().is_none_or(|s| s.trim().is_empty()) => {
                    return Err(FieldProblem {
                        field: keys::NAME.into(),
                        problem: "a name must be non-empty text".into(),
                    }
                    .into());
                }
                _ if value.is_null() => {}
                _ => check_field(category, key, value)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        parse_timestamp("2026-11-21T09:14:03Z").unwrap()
    }

    #[test]
    fn new_entries_are_laid_out_in_order() {
        let mut fields = Frontmatter::new();
        fields.set("mood", json!("good"));
        fields.set("tags", json!(["a"]));
        fields.set("next_action", json!("Email Sarah"));
        let new =
            NewEntry { category: Category::Projects, name: " ClientCo ".into(), fields, body: "b".into() };
        let fm = new.frontmatter(&EntryId("X".into()), now()).unwrap();
        let keys: Vec<_> = fm.keys().cloned().collect();
        assert_eq!(keys, ["id", "name", "status", "next_action", "tags", "created_at", "updated_at", "mood"]);
        assert_eq!(fm.get_str("name"), Some("ClientCo"));
        assert_eq!(fm.get_str("status"), Some("active"));
    }

    #[test]
    fn a_summary_from_notes_skips_headings_and_the_date_of_a_log_line() {
        let summary = |body: &str| {
            let doc = format!("---\nname: Priya\n---\n{body}");
            Entry::from_document(EntryPath::parse("people/priya.md").unwrap(), &doc).unwrap().summary_line()
        };
        assert_eq!(summary("## Log\n\n- 2026-11-25: Met Priya at the meetup\n"), "Met Priya at the meetup");
        assert_eq!(summary("\n# Title\nFirst words here.\n"), "First words here.");
        assert_eq!(summary("- not a date: kept whole\n"), "- not a date: kept whole");
        assert_eq!(summary("- 2026-11-25: \n"), "- 2026-11-25:");
        assert_eq!(summary("## Only a heading\n"), "");
    }

    #[test]
    fn new_entry_with_bad_status_is_refused() {
        let mut fields = Frontmatter::new();
        fields.set("status", json!("pending"));
        let new = NewEntry { category: Category::Projects, name: "x".into(), fields, body: String::new() };
        assert!(new.frontmatter(&EntryId::generate(), now()).is_err());
    }

    #[test]
    fn update_keeps_order_and_refuses_bad_values() {
        let path = EntryPath::parse("projects/x.md").unwrap();
        let mut entry =
            Entry::from_document(path, "---\nname: X\nmood: calm\nstatus: active\n---\nbody").unwrap();
        let update = EntryUpdate::from_json_object(
            json!({"status": "done", "content": "new body", "extra": 1}).as_object().unwrap().clone(),
        )
        .unwrap();
        let changed = update.apply(&mut entry, now()).unwrap();
        assert_eq!(changed, ["status", "extra", "content"]);
        let keys: Vec<_> = entry.frontmatter.keys().cloned().collect();
        assert_eq!(keys, ["name", "mood", "status", "extra", "updated_at"]);
        assert_eq!(entry.body, "new body");

        let bad =
            EntryUpdate::from_json_object(json!({"status": "pending"}).as_object().unwrap().clone()).unwrap();
        let before = entry.clone();
        assert!(bad.apply(&mut entry, now()).is_err());
        assert_eq!(entry, before);
        let id = EntryUpdate::from_json_object(json!({"id": "y"}).as_object().unwrap().clone()).unwrap();
        assert_eq!(id.apply(&mut entry, now()), Err(UpdateError::Managed("id".into())));
    }

    #[test]
    fn a_document_update_rewrites_only_what_it_sets() {
        let path = EntryPath::parse("projects/x.md").unwrap();
        let text =
            "---\nname: X # mine\nversion: 1.10\n\nstatus: active\nupdated_at: '2026-01-01'\n---\nNotes.\n";
        let entry = Entry::from_document(path.clone(), text).unwrap();
        let update =
            EntryUpdate::from_json_object(json!({"status": "done"}).as_object().unwrap().clone()).unwrap();
        let done = update.apply_to_document(&entry, text, now()).unwrap();
        assert_eq!(done.written, Written::InPlace);
        assert_eq!(
            done.text,
            "---\nname: X # mine\nversion: 1.10\n\nstatus: done\nupdated_at: 2026-11-21T09:14:03Z\n---\nNotes.\n"
        );
        assert_eq!(done.updated_fields, ["status"]);
        assert_eq!(Entry::from_document(path.clone(), &done.text).unwrap(), done.entry);

        let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 23).unwrap();
        let log = BodyEdit::Section { heading: "Log".into(), content: "Called".into(), today };
        let logged = EntryUpdate { fields: Frontmatter::new(), body: Some(log) };
        let done = logged.apply_to_document(&entry, text, now()).unwrap();
        assert!(done.text.ends_with("---\nNotes.\n\n## Log\n\n- 2026-11-23: Called\n"), "{}", done.text);
        assert!(done.text.starts_with("---\nname: X # mine\nversion: 1.10\n"), "{}", done.text);
        assert_eq!(done.updated_fields, ["content"]);

        let find = BodyEdit::FindReplace { find: "Nope".into(), replace: "x".into(), expected: 1 };
        let mut failing = EntryUpdate { fields: Frontmatter::new(), body: Some(find) };
        failing.fields.set("status", json!("done"));
        let err = failing.apply_to_document(&entry, text, now()).unwrap_err();
        assert!(matches!(err, UpdateError::Body(BodyEditError::CountMismatch { found: 0, .. })), "{err}");
        assert_eq!(EntryUpdate::default().apply_to_document(&entry, text, now()), Err(UpdateError::Empty));
    }

    #[test]
    fn an_update_of_a_persons_own_note_changes_only_what_was_asked() {
        let path = EntryPath::parse("Journal/2025/Day one.md").unwrap();
        let text = "Walked to the lake.\r\n";
        let entry = Entry::from_document(path.clone(), text).unwrap();
        let append = BodyEdit::Append("Saw herons.".into());
        let update = EntryUpdate { fields: Frontmatter::new(), body: Some(append) };
        let done = update.apply_to_document(&entry, text, now()).unwrap();
        assert!(done.text.starts_with("Walked to the lake.\r\n"), "{:?}", done.text);
        assert!(done.text.contains("Saw herons."), "{:?}", done.text);
        assert!(!done.text.contains("updated_at") && !done.text.contains("---"), "{:?}", done.text);

        let text = "---\nmood: calm\nupdated_at: last week\n---\nBody\n";
        let entry = Entry::from_document(path, text).unwrap();
        let mut fields = Frontmatter::new();
        fields.set("updated_at", json!("today"));
        let done = EntryUpdate { fields, body: None }.apply_to_document(&entry, text, now()).unwrap();
        assert_eq!(done.text, "---\nmood: calm\nupdated_at: today\n---\nBody\n");
    }

    #[test]
    fn names_and_summaries() {
        let path = EntryPath::parse("ideas/My Note.md").unwrap();
        let entry = Entry::from_document(path, "\n\n  First   line\nsecond").unwrap();
        assert_eq!(entry.name(), "My Note");
        assert_eq!(entry.summary_line(), "First line");
        assert_eq!(one_line(&"a".repeat(200), 10).chars().count(), 10);
    }
}
