//! Typed views of the known frontmatter fields and their validation: status values,
//! dates, timestamps and confidence in `0..=1`.
//!
//! A wrong value in a file a person wrote is kept as written and reported as a
//! [`FieldProblem`]; a wrong value in an update kb is asked to make is refused.

use chrono::{DateTime, NaiveDate, Utc};
use serde_json::Value;

use crate::category::{Category, FieldKind, FieldSpec};
use crate::path::EntryPath;

/// The frontmatter keys of the vault format, written once. Every entry file on disk uses
/// these names; code reads and writes them through these constants.
pub mod keys {
    /// The entry's stable identifier (a ULID), kept across moves and renames.
    pub const ID: &str = "id";
    /// The entry's name, as shown and as people say it.
    pub const NAME: &str = "name";
    /// Other names the entry answers to.
    pub const ALIASES: &str = "aliases";
    /// Free tags.
    pub const TAGS: &str = "tags";
    /// When kb created the entry (RFC 3339).
    pub const CREATED_AT: &str = "created_at";
    /// When kb last changed the entry (RFC 3339).
    pub const UPDATED_AT: &str = "updated_at";
    /// How sure the classification was, `0..=1`.
    pub const CONFIDENCE: &str = "confidence";
    /// Where the capture came from (`chat`, `api`, `cli`, `mcp`, `email`, `web`, `voice`,
    /// `file`).
    pub const SOURCE: &str = "source";
    /// A person's context: how you know them.
    pub const CONTEXT: &str = "context";
    /// Things to follow up with a person.
    pub const FOLLOW_UPS: &str = "follow_ups";
    /// The day a person was last in touch.
    pub const LAST_TOUCHED: &str = "last_touched";
    /// Projects an entry relates to (vault paths).
    pub const RELATED_PROJECTS: &str = "related_projects";
    /// People a project relates to (vault paths).
    pub const RELATED_PEOPLE: &str = "related_people";
    /// The status of a project or admin item.
    pub const STATUS: &str = "status";
    /// A project's next action.
    pub const NEXT_ACTION: &str = "next_action";
    /// The day a project or admin item is due (`YYYY-MM-DD`).
    pub const DUE_DATE: &str = "due_date";
    /// An idea in one line.
    pub const ONE_LINER: &str = "one_liner";
    /// An inbox entry's words as captured.
    pub const ORIGINAL_TEXT: &str = "original_text";
    /// The category kb would file an inbox entry under.
    pub const SUGGESTED_CATEGORY: &str = "suggested_category";
    /// A note kb made from a web page: the page's address (after redirects).
    pub const URL: &str = "url";
    /// A note kb made from a web page: when kb read it (RFC 3339).
    pub const FETCHED_AT: &str = "fetched_at";
    /// A note kb made from a mail: its sender's address.
    pub const FROM: &str = "from";
    /// A note kb made from a mail: its `Message-ID`.
    pub const MESSAGE_ID: &str = "message_id";
    /// A note kb made from a mail: when it was sent, as its `Date:` says (RFC 3339).
    pub const SENT_AT: &str = "sent_at";
    /// A note kb made from a file, a voice note or a mail: the file kept in `attachments/`
    /// (a mail with several: a list of them).
    pub const ATTACHMENT: &str = "attachment";
    /// The identifier an entry had before a merge or repair gave it another.
    pub const PREVIOUS_ID: &str = "previous_id";
}

/// The values of the `status` field that kb writes or acts on.
pub mod statuses {
    /// A project being worked on (a new project's status).
    pub const ACTIVE: &str = "active";
    /// A project waiting on someone else.
    pub const WAITING: &str = "waiting";
    /// A project that cannot move.
    pub const BLOCKED: &str = "blocked";
    /// A project for later.
    pub const SOMEDAY: &str = "someday";
    /// An admin item still to do (a new admin item's status).
    pub const PENDING: &str = "pending";
    /// A finished project or admin item.
    pub const DONE: &str = "done";
}

/// A classification confidence in `0..=1`.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Confidence(f64);

/// A number that is not a confidence.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("confidence must be a number from 0 to 1, got {0}")]
pub struct InvalidConfidence(pub String);

impl Confidence {
    /// Full certainty, as given to a capture whose category a hint fixed.
    pub const CERTAIN: Confidence = Confidence(1.0);

    /// Accepts a finite number in `0..=1`.
    pub fn new(value: f64) -> Result<Confidence, InvalidConfidence> {
        if value.is_finite() && (0.0..=1.0).contains(&value) {
            Ok(Confidence(value))
        } else {
            Err(InvalidConfidence(value.to_string()))
        }
    }

    /// The number.
    pub fn value(self) -> f64 {
        self.0
    }
}

/// Why a known field's value is not acceptable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field {field:?}: {problem}")]
pub struct FieldProblem {
    /// The frontmatter key.
    pub field: String,
    /// What is wrong, saying what was expected and what was found.
    pub problem: String,
}

/// Parses a `YYYY-MM-DD` date.
pub fn parse_date(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").ok()
}

/// Parses an RFC 3339 timestamp into UTC.
pub fn parse_timestamp(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text.trim()).ok().map(|t| t.with_timezone(&Utc))
}

/// Formats a timestamp the way kb writes them: RFC 3339 UTC with seconds, `Z`.
pub fn format_timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Checks `value` against the field `key` of `category`. Keys the category does not know
/// are always acceptable (they are the person's own).
pub fn check_field(category: Category, key: &str, value: &Value) -> Result<(), FieldProblem> {
    match category.field(key) {
        Some(spec) => check_value(spec, value),
        None => Ok(()),
    }
}

/// Checks a value against a field spec.
pub fn check_value(spec: FieldSpec, value: &Value) -> Result<(), FieldProblem> {
    let problem = |what: String| FieldProblem { field: spec.name.to_string(), problem: what };
    match (spec.kind, value) {
        (FieldKind::Text, Value::String(_)) => Ok(()),
        (FieldKind::Text, other) => Err(problem(format!("expected text, got {}", describe(other)))),
        (FieldKind::TextList, Value::Array(items)) if items.iter().all(Value::is_string) => Ok(()),
        (FieldKind::TextList, other) => {
            Err(problem(format!("expected a list of text, got {}", describe(other))))
        }
        (FieldKind::PathList, Value::Array(items)) => {
            for item in items {
                let text = item.as_str().unwrap_or_default();
                EntryPath::parse(text)
                    .map_err(|e| problem(format!("expected a list of entry paths: {e}")))?;
            }
            Ok(())
        }
        (FieldKind::PathList, other) => {
            Err(problem(format!("expected a list of entry paths, got {}", describe(other))))
        }
        (FieldKind::Date, Value::String(s)) if parse_date(s).is_some() => Ok(()),
        (FieldKind::Date, other) => {
            Err(problem(format!("expected a date like 2026-12-15, got {}", describe(other))))
        }
        (FieldKind::Timestamp, Value::String(s)) if parse_timestamp(s).is_some() => Ok(()),
        (FieldKind::Timestamp, other) => Err(problem(format!(
            "expected an RFC 3339 time like 2026-11-21T09:14:03Z, got {}",
            describe(other)
        ))),
        (FieldKind::Confidence, Value::Number(n))
            if n.as_f64().is_some_and(|f| Confidence::new(f).is_ok()) =>
        {
            Ok(())
        }
        (FieldKind::Confidence, other) => {
            Err(problem(format!("expected a number from 0 to 1, got {}", describe(other))))
        }
        (FieldKind::OneOf(allowed), Value::String(s)) if allowed.contains(&s.as_str()) => Ok(()),
        (FieldKind::OneOf(allowed), other) => {
            Err(problem(format!("expected one of {}, got {}", allowed.join(", "), describe(other))))
        }
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "nothing".to_string(),
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn confidence_range() {
        assert!(Confidence::new(0.0).is_ok());
        assert!(Confidence::new(1.0).is_ok());
        assert!(Confidence::new(1.01).is_err());
        assert!(Confidence::new(-0.1).is_err());
        assert!(Confidence::new(f64::NAN).is_err());
    }

    #[test]
    fn known_fields_are_checked() {
        assert!(check_field(Category::Projects, "status", &json!("active")).is_ok());
        let err = check_field(Category::Projects, "status", &json!("pending")).unwrap_err();
        assert!(err.to_string().contains("active, waiting, blocked, someday, done"), "{err}");
        assert!(check_field(Category::Admin, "status", &json!("pending")).is_ok());
        assert!(check_field(Category::Admin, "due_date", &json!("2026-12-15")).is_ok());
        assert!(check_field(Category::Admin, "due_date", &json!("Dec 15")).is_err());
        assert!(check_field(Category::People, "follow_ups", &json!(["call"])).is_ok());
        assert!(check_field(Category::People, "follow_ups", &json!("call")).is_err());
        assert!(check_field(Category::Ideas, "related_projects", &json!(["projects/a.md"])).is_ok());
        assert!(check_field(Category::Ideas, "related_projects", &json!(["../a.md"])).is_err());
        assert!(check_field(Category::Ideas, "confidence", &json!(0.5)).is_ok());
        assert!(check_field(Category::Ideas, "confidence", &json!(2)).is_err());
        assert!(check_field(Category::Ideas, "created_at", &json!("2026-11-21T09:14:03Z")).is_ok());
        assert!(check_field(Category::Ideas, "mood", &json!({"any": "thing"})).is_ok());
    }

    #[test]
    fn timestamps_format_as_utc_seconds() {
        let t = parse_timestamp("2026-11-21T10:14:03+01:00").unwrap();
        assert_eq!(format_timestamp(t), "2026-11-21T09:14:03Z");
    }
}
