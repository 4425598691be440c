//! `EntryPath`: the only way a path from outside (HTTP, tool arguments, CLI, a directory
//! walk) becomes the path of a note in the vault.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::slug::Slug;

/// The vault-relative path of a note, always `/`-separated: `{category}/{file}.md` for an
/// entry of a category folder (`projects/clientco.md`, or in a sub-folder of one,
/// `projects/2025/clientco.md`), any other path for the person's own notes
/// (`Journal/2025/Day one.md`, `Reading.md`: [`Category::Other`]).
///
/// Holding one proves the path names a visible Markdown file inside the vault: relative,
/// no `..`, no hidden file or folder (so never `.kb/`, `.git/` or `.obsidian/`), no NUL or
/// other control character, no backslash.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EntryPath {
    /// The category its first folder names, else [`Category::Other`]. First, so paths sort
    /// by category in folder order.
    category: Category,
    /// The whole path, shared by clones: a vault's view holds each path in several places
    /// (its entries, its list orders, its names), and a clone is then no copy.
    text: Arc<str>,
    /// Where the file name starts in `text` (0 for a note at the vault's root).
    name_at: usize,
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
    /// A folder of the path is hidden (`.kb/`, `.git/`, `.obsidian/`, ...).
    #[error("path {0:?} is inside a hidden folder, which holds no notes")]
    HiddenFolder(String),
    /// The path was to be directly inside a category folder and is not.
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
        // Control characters outside ASCII (U+0080 to U+009F) are looked for only in a path
        // that has any non-ASCII character.
        let control = if text.is_ascii() {
            text.bytes().any(|b| b.is_ascii_control())
        } else {
            text.chars().any(char::is_control)
        };
        if control {
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
        if text.split('/').any(|part| part.is_empty() || part == "." || part == "..") {
            return Err(InvalidPath::NotPlain(owned()));
        }
        let (folders, file_name) = match text.rsplit_once('/') {
            Some((folders, file_name)) => (Some(folders), file_name),
            None => (None, text),
        };
        if folders.is_some_and(|folders| folders.split('/').any(|folder| folder.starts_with('.'))) {
            return Err(InvalidPath::HiddenFolder(owned()));
        }
        if !is_note_file_name(file_name) {
            return Err(InvalidPath::NotMarkdown(owned()));
        }
        let category = match folders.and_then(|folders| folders.split('/').next()) {
            Some(folder) => folder.parse().unwrap_or(Category::Other),
            None => Category::Other,
        };
        Ok(EntryPath { category, text: Arc::from(text), name_at: text.len() - file_name.len() })
    }

    /// The path of a file called `file_name` directly inside `category`'s folder
    /// ([`Category::Other`] has none: refused).
    pub fn in_category(category: Category, file_name: &str) -> Result<EntryPath, InvalidPath> {
        if !category.is_folder() {
            return Err(InvalidPath::WrongFolder(file_name.to_string()));
        }
        let plain = !file_name.contains(['/', '\\', ':']) && !file_name.chars().any(char::is_control);
        if !plain || !is_note_file_name(file_name) {
            return Err(InvalidPath::NotMarkdown(file_name.to_string()));
        }
        let folder = category.as_str();
        Ok(EntryPath {
            category,
            text: Arc::from(format!("{folder}/{file_name}")),
            name_at: folder.len() + 1,
        })
    }

    /// The path kb gives a new entry: `{category}/{slug}.md` (at the vault's root for
    /// [`Category::Other`], which has no folder).
    pub fn for_slug(category: Category, slug: &Slug) -> EntryPath {
        if category.is_folder() {
            let folder = category.as_str();
            EntryPath { category, text: Arc::from(format!("{folder}/{slug}.md")), name_at: folder.len() + 1 }
        } else {
            EntryPath { category, text: Arc::from(format!("{slug}.md")), name_at: 0 }
        }
    }

    /// The category of the note: the category folder it is in (directly or in a sub-folder),
    /// else [`Category::Other`].
    pub fn category(&self) -> Category {
        self.category
    }

    /// Whether this is a note outside the five category folders.
    pub fn is_other(&self) -> bool {
        self.category == Category::Other
    }

    /// The folder the file is in, vault-relative without a trailing `/` (`""` at the root;
    /// `projects` directly in a category folder; `Journal/2025`).
    pub fn folder(&self) -> &str {
        self.text[..self.name_at].trim_end_matches('/')
    }

    /// Whether the file is in `folder` (vault-relative, without a trailing `/`) or a folder
    /// below it; every note is within the root, `""`.
    pub fn is_within(&self, folder: &str) -> bool {
        folder.is_empty()
            || self.folder().strip_prefix(folder).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }

    /// The first folder of the path (`Journal` for `Journal/2025/x.md`; `""` at the root).
    pub fn top_folder(&self) -> &str {
        self.folder().split('/').next().unwrap_or_default()
    }

    /// Whether the file is directly inside its category folder (no sub-folder).
    pub fn is_directly_in_category(&self) -> bool {
        self.category.is_folder() && self.folder() == self.category.as_str()
    }

    /// The file name, with its `.md`.
    pub fn file_name(&self) -> &str {
        &self.text[self.name_at..]
    }

    /// The file name without `.md`.
    pub fn stem(&self) -> &str {
        let name = self.file_name();
        name.strip_suffix(".md").unwrap_or(name)
    }

    /// The path as text: what [`fmt::Display`] writes, without an allocation.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The path as text shared with this path (a count, not a copy): for maps keyed by the
    /// text that hold many paths.
    pub fn shared_text(&self) -> Arc<str> {
        Arc::clone(&self.text)
    }

    /// Where the file is under `vault_root` (a pure join: no file is touched).
    pub fn under(&self, vault_root: &Path) -> PathBuf {
        self.text.split('/').fold(vault_root.to_path_buf(), |path, part| path.join(part))
    }
}

/// Whether `name` is a visible Markdown file name: `.md`, with something before it, not
/// starting with `.`.
fn is_note_file_name(name: &str) -> bool {
    name.strip_suffix(".md").is_some_and(|stem| !stem.is_empty() && !stem.starts_with('.'))
}

impl fmt::Display for EntryPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl From<EntryPath> for String {
    fn from(path: EntryPath) -> String {
        path.text.to_string()
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
        assert!(p.is_directly_in_category());
    }

    #[test]
    fn any_visible_markdown_file_is_a_note() {
        let cases = [
            ("notes/x.md", Category::Other, "notes", "x"),
            ("Journal/2025/Day one.md", Category::Other, "Journal/2025", "Day one"),
            ("index.md", Category::Other, "", "index"),
            ("projects/2025/x.md", Category::Projects, "projects/2025", "x"),
            ("Projects/x.md", Category::Other, "Projects", "x"),
            ("people.md", Category::Other, "", "people"),
        ];
        for (text, category, folder, stem) in cases {
            let path = EntryPath::parse(text).unwrap();
            assert_eq!((path.category(), path.folder(), path.stem()), (category, folder, stem), "{text}");
            assert_eq!(path.as_str(), text);
            assert!(!path.is_directly_in_category(), "{text}");
        }
        assert_eq!(EntryPath::for_slug(Category::Other, &Slug::from_name("a b")).as_str(), "a-b.md");
        let deep = EntryPath::parse("Journal/2025/Day one.md").unwrap();
        assert_eq!(deep.top_folder(), "Journal");
        for (folder, within) in
            [("", true), ("Journal", true), ("Journal/2025", true), ("Jour", false), ("Journal/2", false)]
        {
            assert_eq!(deep.is_within(folder), within, "{folder}");
        }
        assert!(EntryPath::in_category(Category::Other, "x.md").is_err());
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
            "projects/x.md\0",
            "projects",
            "projects/x.md/",
            ".kb/x.md",
            ".obsidian/x.md",
            "notes/.git/x.md",
            ".md",
        ] {
            assert!(EntryPath::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    fn stays_inside(path: &EntryPath) -> bool {
        let joined = path.under(Path::new("/vault"));
        joined.starts_with("/vault")
            && joined.components().count() == 2 + path.as_str().split('/').count()
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
