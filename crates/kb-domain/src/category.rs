//! The five category folders of the vault and the schema of each, and the category of the
//! person's own notes outside them ([`Category::Other`]).

use std::fmt;
use std::str::FromStr;

use crate::fields::{keys, statuses};

/// What kind of note an entry is: one of the five category folders it lives in, or
/// [`Category::Other`] for a note anywhere else in the vault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// People you know: `people/`.
    People,
    /// Things with a next action: `projects/`.
    Projects,
    /// Thoughts worth keeping: `ideas/`.
    Ideas,
    /// Errands and paperwork: `admin/`.
    Admin,
    /// Captures kb was unsure of, waiting for the person: `inbox/`.
    Inbox,
    /// A note the person keeps outside the five folders (`Journal/2025/x.md`, `Reading.md`):
    /// kb reads, finds, links and edits it as it is, with no schema and no field of kb's.
    /// Not a folder: nothing is captured or moved "into" it.
    Other,
}

/// The kind of value a known frontmatter field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Free text.
    Text,
    /// A list of strings.
    TextList,
    /// A list of vault paths (`category/slug.md`).
    PathList,
    /// A calendar date, `YYYY-MM-DD`.
    Date,
    /// An RFC 3339 timestamp.
    Timestamp,
    /// A number in `0..=1`.
    Confidence,
    /// One of a fixed set of words.
    OneOf(&'static [&'static str]),
}

/// A field of a category's schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSpec {
    /// The frontmatter key.
    pub name: &'static str,
    /// What the value must look like.
    pub kind: FieldKind,
}

const fn field(name: &'static str, kind: FieldKind) -> FieldSpec {
    FieldSpec { name, kind }
}

/// Status values of a project.
pub const PROJECT_STATUSES: &[&str] =
    &[statuses::ACTIVE, statuses::WAITING, statuses::BLOCKED, statuses::SOMEDAY, statuses::DONE];
/// Status values of an admin item.
pub const ADMIN_STATUSES: &[&str] = &[statuses::PENDING, statuses::DONE];
/// Values of `source`.
pub const SOURCES: &[&str] = &["chat", "api", "cli", "mcp", "email", "web", "voice", "file"];
/// Values of an inbox entry's `suggested_category`.
pub const SUGGESTABLE: &[&str] = &["people", "projects", "ideas", "admin"];

/// Fields every category shares, in the order kb writes them.
pub const COMMON_FIELDS: &[FieldSpec] = &[
    field(keys::ID, FieldKind::Text),
    field(keys::NAME, FieldKind::Text),
    field(keys::TAGS, FieldKind::TextList),
    field(keys::CREATED_AT, FieldKind::Timestamp),
    field(keys::UPDATED_AT, FieldKind::Timestamp),
    field(keys::CONFIDENCE, FieldKind::Confidence),
    field(keys::SOURCE, FieldKind::OneOf(SOURCES)),
];

const PEOPLE_FIELDS: &[FieldSpec] = &[
    field(keys::CONTEXT, FieldKind::Text),
    field(keys::FOLLOW_UPS, FieldKind::TextList),
    field(keys::LAST_TOUCHED, FieldKind::Date),
    field(keys::RELATED_PROJECTS, FieldKind::PathList),
];
const PROJECT_FIELDS: &[FieldSpec] = &[
    field(keys::STATUS, FieldKind::OneOf(PROJECT_STATUSES)),
    field(keys::NEXT_ACTION, FieldKind::Text),
    field(keys::DUE_DATE, FieldKind::Date),
    field(keys::RELATED_PEOPLE, FieldKind::PathList),
];
const IDEA_FIELDS: &[FieldSpec] =
    &[field(keys::ONE_LINER, FieldKind::Text), field(keys::RELATED_PROJECTS, FieldKind::PathList)];
const ADMIN_FIELDS: &[FieldSpec] =
    &[field(keys::STATUS, FieldKind::OneOf(ADMIN_STATUSES)), field(keys::DUE_DATE, FieldKind::Date)];
const INBOX_FIELDS: &[FieldSpec] = &[
    field(keys::ORIGINAL_TEXT, FieldKind::Text),
    field(keys::SUGGESTED_CATEGORY, FieldKind::OneOf(SUGGESTABLE)),
];

impl Category {
    /// Every category folder, in folder order ([`Category::Other`] is no folder).
    pub const ALL: [Category; 5] =
        [Category::People, Category::Projects, Category::Ideas, Category::Admin, Category::Inbox];

    /// The categories an entry can be filed or moved into (all but the inbox).
    pub const FILING: [Category; 4] =
        [Category::People, Category::Projects, Category::Ideas, Category::Admin];

    /// The folder name, which is also the name used in tool arguments.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::People => "people",
            Category::Projects => "projects",
            Category::Ideas => "ideas",
            Category::Admin => "admin",
            Category::Inbox => "inbox",
            Category::Other => "other",
        }
    }

    /// Whether this is one of the five category folders (not [`Category::Other`]).
    pub fn is_folder(self) -> bool {
        self != Category::Other
    }

    /// Parses a category from its folder name or its singular form
    /// ("person", "project", "idea"), ignoring case and surrounding space.
    pub fn parse_loose(text: &str) -> Option<Category> {
        match text.trim().to_ascii_lowercase().as_str() {
            "people" | "person" => Some(Category::People),
            "projects" | "project" => Some(Category::Projects),
            "ideas" | "idea" => Some(Category::Ideas),
            "admin" => Some(Category::Admin),
            "inbox" => Some(Category::Inbox),
            _ => None,
        }
    }

    /// The fields this category has beyond the common ones.
    pub fn own_fields(self) -> &'static [FieldSpec] {
        match self {
            Category::People => PEOPLE_FIELDS,
            Category::Projects => PROJECT_FIELDS,
            Category::Ideas => IDEA_FIELDS,
            Category::Admin => ADMIN_FIELDS,
            Category::Inbox => INBOX_FIELDS,
            Category::Other => &[],
        }
    }

    /// The spec of a known field of this category (common or own), if `key` is one. A
    /// note outside the category folders has no schema: it knows no field.
    pub fn field(self, key: &str) -> Option<FieldSpec> {
        if self == Category::Other {
            return None;
        }
        COMMON_FIELDS.iter().chain(self.own_fields()).find(|spec| spec.name == key).copied()
    }

    /// Whether any category knows `key` as one of its own fields.
    pub fn is_known_anywhere(key: &str) -> bool {
        Category::ALL.iter().any(|c| c.field(key).is_some())
    }

    /// The `status` a new or moved entry of this category starts with, if it has one.
    pub fn default_status(self) -> Option<&'static str> {
        match self {
            Category::Projects => Some(statuses::ACTIVE),
            Category::Admin => Some(statuses::PENDING),
            _ => None,
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that names no category.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown category {0:?}: expected one of people, projects, ideas, admin, inbox, other")]
pub struct UnknownCategory(pub String);

impl FromStr for Category {
    type Err = UnknownCategory;

    /// Parses the exact name (`people`, `projects`, `ideas`, `admin`, `inbox`, `other`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Category::ALL
            .into_iter()
            .chain([Category::Other])
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCategory(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_round_trip() {
        for c in Category::ALL {
            assert_eq!(c.as_str().parse::<Category>(), Ok(c));
        }
        assert!("Projects".parse::<Category>().is_err());
        assert_eq!(Category::parse_loose(" Project "), Some(Category::Projects));
        assert_eq!(Category::parse_loose("person"), Some(Category::People));
    }

    #[test]
    fn schemas_match_the_spec_table() {
        assert!(Category::Projects.field("next_action").is_some());
        assert!(Category::Ideas.field("next_action").is_none());
        assert!(Category::Inbox.field("original_text").is_some());
        assert!(Category::People.field("name").is_some());
        assert!(Category::is_known_anywhere("follow_ups"));
        assert!(!Category::is_known_anywhere("mood"));
        assert_eq!(Category::Projects.default_status(), Some("active"));
    }
}
