//! [`Scope`]: which files and folders of the vault kb leaves out, beyond the hidden ones
//! (`.kb/`, `.git/`, `.obsidian/`, `.trash/`, any name starting with `.`, which no
//! [`kb_domain::EntryPath`] can name): the paths the vault's `.gitignore` ignores, the
//! patterns of a `.kbignore` file at its root, and the patterns kb is given (`KB_EXCLUDE`).
//! All three are read as `.gitignore` patterns, once, when the vault is opened.

use std::path::Path;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The files at the vault's root whose patterns kb follows, in order (a later pattern, a
/// `!` one included, wins over an earlier one).
const PATTERN_FILES: [&str; 2] = [".gitignore", ".kbignore"];

/// The paths kb leaves out of a vault.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    excluded: Gitignore,
}

impl Scope {
    /// The scope of the vault at `root`: its `.gitignore` and `.kbignore` (when there are
    /// any), then `patterns`. A file or pattern that cannot be read is logged and skipped:
    /// kb then sees more notes, never fewer.
    pub(crate) fn load(root: &Path, patterns: &[String]) -> Scope {
        let mut builder = GitignoreBuilder::new(root);
        for name in PATTERN_FILES {
            let file = root.join(name);
            if file.is_file()
                && let Some(error) = builder.add(&file)
            {
                tracing::warn!(%error, file = %file.display(), "some ignore patterns cannot be read; skipped");
            }
        }
        for pattern in patterns.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
            if let Err(error) = builder.add_line(None, pattern) {
                tracing::warn!(%error, pattern, "exclude pattern cannot be read; skipped");
            }
        }
        let excluded = builder.build().unwrap_or_else(|error| {
            tracing::warn!(%error, "ignore patterns cannot be used; nothing is excluded by pattern");
            Gitignore::empty()
        });
        Scope { excluded }
    }

    /// Whether the vault-relative `path` (a folder when `is_folder`) is left out of the
    /// notes: by the patterns, itself or a folder it is in, or because it is in the folder
    /// of files kb keeps (`attachments/`), which is never read as notes.
    pub(crate) fn excludes(&self, path: &str, is_folder: bool) -> bool {
        let kept = path
            .strip_prefix(kb_domain::ATTACHMENTS_FOLDER)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
        kept || self.leaves_out(path, is_folder)
    }

    /// Whether the patterns leave the vault-relative `path` out, itself or by a folder it is
    /// in: the rule for the vault's other files (images, PDFs, kb's kept files), which links
    /// may lead to.
    pub(crate) fn leaves_out(&self, path: &str, is_folder: bool) -> bool {
        !self.excluded.is_empty() && self.excluded.matched_path_or_any_parents(path, is_folder).is_ignore()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitignore_kbignore_and_given_patterns_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "build/\n*.tmp.md\n").unwrap();
        std::fs::write(dir.path().join(".kbignore"), "Private/\n!Private/shared.md\n").unwrap();
        let scope = Scope::load(dir.path(), &["Templates".into(), " Archive/** ".into(), String::new()]);
        for left_out in
            ["build/x.md", "a/b.tmp.md", "Templates/Daily.md", "Archive/2020/x.md", "Private/x.md"]
        {
            assert!(scope.excludes(left_out, false), "{left_out}");
        }
        assert!(scope.excludes("attachments/0123-note.md", false), "kb's kept files are never notes");
        assert!(scope.excludes("attachments", true));
        assert!(!scope.leaves_out("attachments/0123-note.md", false), "but they are the vault's files");
        assert!(!scope.excludes("attachments-old/x.md", false));
        for kept in [
            "Journal/x.md",
            "buildings.md",
            "projects/x.md",
            "Reading/Templates.txt.md",
            "a/attachments/x.md",
        ] {
            assert!(!scope.excludes(kept, false), "{kept}");
        }
        assert!(scope.excludes("build", true));
        assert!(!scope.excludes("build", false), "a file named like an ignored folder is kept");
        assert!(!Scope::load(&dir.path().join("none"), &[]).excludes("build/x.md", false));
        assert!(Scope::load(&dir.path().join("none"), &[]).excludes("attachments/x.md", false));
    }
}
