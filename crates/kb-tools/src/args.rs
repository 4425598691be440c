//! Argument types shared by several tools: the category enums the LLM may name, the
//! page size `limit` (at least 1, default 10, capped at 100), and counts (at least 1).

use std::borrow::Cow;
use std::str::FromStr;

use kb_domain::{Category, EntryPath};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use crate::result::{ErrorCode, ToolError};

/// Any category (filters): a category folder, or `other` for the person's own notes
/// anywhere else in the vault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CategoryArg {
    /// people/
    People,
    /// projects/
    Projects,
    /// ideas/
    Ideas,
    /// admin/
    Admin,
    /// inbox/
    Inbox,
    /// notes outside the five category folders
    Other,
}

impl From<CategoryArg> for Category {
    fn from(arg: CategoryArg) -> Category {
        match arg {
            CategoryArg::People => Category::People,
            CategoryArg::Projects => Category::Projects,
            CategoryArg::Ideas => Category::Ideas,
            CategoryArg::Admin => Category::Admin,
            CategoryArg::Inbox => Category::Inbox,
            CategoryArg::Other => Category::Other,
        }
    }
}

impl FromStr for CategoryArg {
    type Err = String;

    /// The category named `text` as the tool's argument names it (`people`, …, `other`).
    fn from_str(text: &str) -> Result<CategoryArg, String> {
        let all = [
            ("people", CategoryArg::People),
            ("projects", CategoryArg::Projects),
            ("ideas", CategoryArg::Ideas),
            ("admin", CategoryArg::Admin),
            ("inbox", CategoryArg::Inbox),
            ("other", CategoryArg::Other),
        ];
        one_of(&all, text)
    }
}

/// A category an entry can be moved into (not the inbox).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FilingCategoryArg {
    /// people/
    People,
    /// projects/
    Projects,
    /// ideas/
    Ideas,
    /// admin/
    Admin,
}

impl From<FilingCategoryArg> for Category {
    fn from(arg: FilingCategoryArg) -> Category {
        match arg {
            FilingCategoryArg::People => Category::People,
            FilingCategoryArg::Projects => Category::Projects,
            FilingCategoryArg::Ideas => Category::Ideas,
            FilingCategoryArg::Admin => Category::Admin,
        }
    }
}

impl FromStr for FilingCategoryArg {
    type Err = String;

    /// The category named `text` as move_entry's `targetCategory` names it.
    fn from_str(text: &str) -> Result<FilingCategoryArg, String> {
        let all = [
            ("people", FilingCategoryArg::People),
            ("projects", FilingCategoryArg::Projects),
            ("ideas", FilingCategoryArg::Ideas),
            ("admin", FilingCategoryArg::Admin),
        ];
        one_of(&all, text)
    }
}

/// The value `text` names among `all` (each with its word), or the words it may be, as the
/// argument check says them.
pub fn one_of<T: Copy>(all: &[(&str, T)], text: &str) -> Result<T, String> {
    match all.iter().find(|(word, _)| *word == text) {
        Some((_, value)) => Ok(*value),
        None => {
            let words: Vec<&str> = all.iter().map(|(word, _)| *word).collect();
            Err(format!("expected one of {}, got {text:?}", words.join(", ")))
        }
    }
}

/// A page size: a whole number of at least 1. Larger than
/// [`kb_domain::paging::MAX_PAGE_SIZE`] is capped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit(u64);

impl Limit {
    /// The effective page size of an optional limit (see [`kb_domain::paging`]).
    pub fn effective(limit: Option<Limit>) -> usize {
        kb_domain::paging::page_size(limit.map(|l| l.0))
    }
}

impl TryFrom<u64> for Limit {
    type Error = String;

    fn try_from(limit: u64) -> Result<Limit, String> {
        if limit >= 1 { Ok(Limit(limit)) } else { Err("limit must be at least 1, got 0".to_string()) }
    }
}

impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Limit, D::Error> {
        deserializer.deserialize_u64(AtLeastOne("limit")).map(Limit)
    }
}

/// A count: a whole number of at least 1 (`expectedReplacements` of a body edit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count(u64);

impl Count {
    /// The number.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Count, D::Error> {
        deserializer.deserialize_u64(AtLeastOne("the count")).map(Count)
    }
}

impl JsonSchema for Count {
    fn schema_name() -> Cow<'static, str> {
        "Count".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": 1})
    }
}

/// Reads a whole number of at least 1; the name says what it is in errors.
struct AtLeastOne(&'static str);

impl Visitor<'_> for AtLeastOne {
    type Value = u64;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a whole number of at least 1")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        if v >= 1 { Ok(v) } else { Err(E::custom(format!("{} must be at least 1, got 0", self.0))) }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        match u64::try_from(v) {
            Ok(u) => self.visit_u64(u),
            Err(_) => Err(E::custom(format!("{} must be at least 1, got {v}", self.0))),
        }
    }
}

impl JsonSchema for Limit {
    fn schema_name() -> Cow<'static, str> {
        "Limit".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": 1})
    }
}

/// How many links away build_context looks: 1, 2 or 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Depth(u8);

impl Depth {
    /// The deepest build_context looks.
    pub const MAX: u8 = 3;

    /// The depth (1 when none was given).
    pub fn effective(depth: Option<Depth>) -> u8 {
        depth.map_or(1, |d| d.0)
    }
}

impl TryFrom<u64> for Depth {
    type Error = String;

    fn try_from(depth: u64) -> Result<Depth, String> {
        match u8::try_from(depth) {
            Ok(d @ 1..=Depth::MAX) => Ok(Depth(d)),
            _ => Err(format!("depth must be 1, 2 or 3, got {depth}")),
        }
    }
}

impl<'de> Deserialize<'de> for Depth {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Depth, D::Error> {
        let depth = u64::deserialize(deserializer)?;
        Depth::try_from(depth).map_err(de::Error::custom)
    }
}

impl JsonSchema for Depth {
    fn schema_name() -> Cow<'static, str> {
        "Depth".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": 1, "maximum": Depth::MAX})
    }
}

/// Validates a path given by the LLM, saying why it is refused.
pub fn entry_path(text: &str) -> Result<EntryPath, ToolError> {
    EntryPath::parse(text).map_err(|e| ToolError::new(ErrorCode::InvalidPath, format!("invalid path: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn limits() {
        let parse = |v| serde_json::from_value::<Limit>(v);
        assert_eq!(Limit::effective(Some(parse(json!(5)).unwrap())), 5);
        assert_eq!(Limit::effective(Some(parse(json!(5000)).unwrap())), kb_domain::paging::MAX_PAGE_SIZE);
        assert_eq!(Limit::effective(None), kb_domain::paging::DEFAULT_PAGE_SIZE);
        assert!(parse(json!(0)).unwrap_err().to_string().contains("at least 1"));
        assert!(parse(json!(-3)).is_err());
        assert!(parse(json!(2.5)).is_err());
        assert!(parse(json!("5")).is_err());
        let count = |v| serde_json::from_value::<Count>(v);
        assert_eq!(count(json!(3)).unwrap().get(), 3);
        assert!(count(json!(0)).unwrap_err().to_string().contains("at least 1, got 0"));
        assert!(count(json!(-1)).is_err() && count(json!(1.5)).is_err());
    }

    #[test]
    fn paths_outside_the_vault_are_refused_with_the_reason() {
        let err = entry_path("../secrets.md").unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidPath);
        assert!(err.message.contains("'..'"), "{}", err.message);
        assert!(entry_path("projects/x.md").is_ok());
    }
}
