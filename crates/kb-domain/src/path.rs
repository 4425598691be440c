//! `EntryPath`: the only way a path from outside (HTTP, tool arguments, CLI, a directory
//! walk) becomes the path of an entry in the vault.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::slug::Slug;

/// The vault-relative path of an entry: `{category}/{file}.md`, always `/`-separated.
///
/// Holding one proves the path names a Markdown file directly inside a category folder:
/// relative, no `..`, no hidden file, no NUL, no backslash.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EntryPath {
    category: Category,
    file_name: String,
}

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidPath {
    /// Nothing was given.
    #[error("path is empty")]
    Empty,
    /// The path holds a NUL byte or another control character.
    #[error("path {0:?} contains a control character")]
    ControlCharacter(String),
    /// The path is absolute.
    #[error("path {0:?} is absolute: give a path relative to the vault, like projects/x.md")]
    Absolute(String),
    /// The path uses `..`, `.`, a backslash or an empty segment.
    #[error("path {0:?} is not a plain relative path (no '..', '.', '\\\\' or '//')")]
    NotPlain(String),
    /// The path is not `category/file.md`.
    #[error("path {0:?} must be category/name.md with category one of people, projects, ideas, admin, inbox")]
    WrongFolder(String),
    /// The file is not a visible Markdown file.
    #[error("path {0:?} must name a .md file whose name does not start with '.'")]
    NotMarkdown(String),
}

impl EntryPath {
    /// Validates a vault-relative path given as text.
    pub fn parse(text: &str) -> Result<EntryPath, InvalidPath> {
        let owned = || text.to_string();
        if text.is_empty() {
            return Err(InvalidPath::Empty);
        }
        if text.chars().any(char::is_control) {
            return Err(InvalidPath::ControlCharacter(owned()));
        }
        let bytes = text.as_bytes();
        let windows_drive = bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic();
        if text.starts_with('/') || text.starts_with('\\') || windows_drive {
            return Err(InvalidPath::Absolute(owned()));
        }
        if text.contains('\\') {
            return Err(InvalidPath::NotPlain(owned()));
        }
        let parts: Vec<&str> = text.split('/').collect();
        if parts.iter().any(|p| p.is_empty() || *p == "." || *p == "..") {
            return Err(InvalidPath::NotPlain(owned()));
        }
        let [folder, file_name] = parts.as_slice() else {
            return Err(InvalidPath::WrongFolder(owned()));
        };
        let category: Category = folder.parse().map_err(|_| InvalidPath::WrongFolder(owned()))?;
        EntryPath::in_category(category, file_name).map_err(|_| InvalidPath::NotMarkdown(owned()))
    }

    /// The path of a file called `file_name` inside `category`'s folder.
    pub fn in_category(category: Category, file_name: &str) -> Result<EntryPath, InvalidPath> {
        let stem = file_name.strip_suffix(".md").unwrap_or_default();
        let plain = !file_name.contains(['/', '\\', ':']) && !file_name.chars().any(char::is_control);
        if stem.is_empty() || stem.starts_with('.') || !plain || file_name == ".." {
            return Err(InvalidPath::NotMarkdown(file_name.to_string()));
        }
        Ok(EntryPath { category, file_name: file_name.to_string() })
    }

    /// The path kb gives a new entry: `{category}/{slug}.md`.
    pub fn for_slug(category: Category, slug: &Slug) -> EntryPath {
        EntryPath { category, file_name: format!("{slug}.md") }
    }

    /// The category folder the entry is in.
    pub fn category(&self) -> Category {
        self.category
    }

    /// The file name, with its `.md`.
    pub fn file_name(&self) -> &str {
        &self.file_name
    }

    /// The file name without `.md`.
    pub fn stem(&self) -> &str {
        self.file_name.strip_suffix(".md").unwrap_or(&self.file_name)
    }

    /// Where the file is under `vault_root` (a pure join: no file is touched).
    pub fn under(&self, vault_root: &Path) -> PathBuf {
        vault_root.join(self.category.as_str()).join(&self.file_name)
    }
}

impl fmt::Display for EntryPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.category, self.file_name)
    }
}

impl From<EntryPath> for String {
    fn from(path: EntryPath) -> String {
        path.to_string()
    }
}

impl TryFrom<String> for EntryPath {
    type Error = InvalidPath;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        EntryPath::parse(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::path::Component;

    #[test]
    fn accepts_entry_paths() {
        let p = EntryPath::parse("projects/clientco.md").unwrap();
        assert_eq!(p.category(), Category::Projects);
        assert_eq!(p.stem(), "clientco");
        assert_eq!(p.to_string(), "projects/clientco.md");
        assert!(EntryPath::parse("ideas/Café au lait.md").is_ok());
    }

    #[test]
    fn refuses_everything_else() {
        for bad in [
            "",
            "/etc/passwd",
            "../x.md",
            "projects/../../x.md",
            "projects/./x.md",
            "projects//x.md",
            "projects\\x.md",
            "C:/x.md",
            "c:\\x.md",
            "projects/x.txt",
            "projects/.md",
            "projects/.x.md",
            "notes/x.md",
            "projects/sub/x.md",
            "index.md",
            "projects/x.md\0",
            "projects",
            "Projects/x.md",
            "projects/x.md/",
            ".kb/x.md",
        ] {
            assert!(EntryPath::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    fn stays_inside(path: &EntryPath) -> bool {
        let joined = path.under(Path::new("/vault"));
        joined.starts_with("/vault")
            && joined.components().count() == 4
            && joined.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]
        #[test]
        fn no_string_escapes_the_vault(text in "(\\.\\.|\\.|/|\\\\|people|inbox|x|\\.md|:|\0| |é){0,12}") {
            if let Ok(path) = EntryPath::parse(&text) {
                prop_assert!(stays_inside(&path), "{:?}", text);
                prop_assert_eq!(EntryPath::parse(&path.to_string()), Ok(path));
            }
        }

        #[test]
        fn no_arbitrary_string_escapes_the_vault(text in any::<String>()) {
            if let Ok(path) = EntryPath::parse(&text) {
                prop_assert!(stays_inside(&path), "{:?}", text);
            }
        }
    }
}
