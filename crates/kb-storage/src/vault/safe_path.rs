//! Where entries are on disk, and the check that a path stays inside the vault: every file
//! and folder kb reads or writes is resolved (symlinks followed) and must lie under the
//! vault's canonical root.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kb_domain::{Category, EntryPath, RepositoryError};

use super::scope::Scope;

/// The vault's root folder, as given and as resolved, with the paths kb leaves out of it.
#[derive(Debug, Clone)]
pub(crate) struct Root {
    dir: PathBuf,
    canonical: PathBuf,
    scope: Arc<Scope>,
}

/// Folder of kb's own state inside the vault.
pub(crate) const STATE_DIR: &str = ".kb";

impl Root {
    /// Resolves an existing root folder, leaving out what its `.gitignore` and `.kbignore`
    /// ignore.
    pub(crate) fn new(dir: PathBuf) -> Result<Root, RepositoryError> {
        Root::excluding(dir, &[])
    }

    /// Resolves an existing root folder, leaving out what its `.gitignore` and `.kbignore`
    /// ignore and what `patterns` (`.gitignore` patterns) name.
    ///
    /// A relative folder (the default `kb`) is made absolute here, once, against the
    /// working folder: every path derived from the root (the search index, the watcher's
    /// folders and fences) is then absolute, as the paths the system reports are.
    pub(crate) fn excluding(dir: PathBuf, patterns: &[String]) -> Result<Root, RepositoryError> {
        let dir = std::path::absolute(&dir).map_err(|e| io_error(&dir, e))?;
        let canonical = fs::canonicalize(&dir).map_err(|e| io_error(&dir, e))?;
        let scope = Arc::new(Scope::load(&canonical, patterns));
        Ok(Root { dir, canonical, scope })
    }

    /// The paths kb leaves out of the vault.
    pub(crate) fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The root as given, made absolute (symlinks kept).
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The root resolved (symlinks followed).
    pub(crate) fn canonical(&self) -> &Path {
        &self.canonical
    }

    /// The folder of a category (a pure join).
    pub(crate) fn folder(&self, category: Category) -> PathBuf {
        self.dir.join(category.as_str())
    }

    /// The file of an entry (a pure join).
    pub(crate) fn file(&self, path: &EntryPath) -> PathBuf {
        path.under(&self.dir)
    }

    /// The folder an entry's file is in (a pure join).
    pub(crate) fn folder_of(&self, path: &EntryPath) -> PathBuf {
        match path.folder() {
            "" => self.dir.clone(),
            folder => folder.split('/').fold(self.dir.clone(), |dir, part| dir.join(part)),
        }
    }

    /// kb's state folder, `.kb/`.
    pub(crate) fn state_dir(&self) -> PathBuf {
        self.dir.join(STATE_DIR)
    }

    /// The folder of a category, refused when it (a symlink) leads outside the vault.
    pub(crate) fn checked_folder(&self, category: Category) -> Result<PathBuf, RepositoryError> {
        let folder = self.folder(category);
        let resolved = fs::canonicalize(&folder).map_err(|e| io_error(&folder, e))?;
        if resolved.starts_with(&self.canonical) {
            Ok(folder)
        } else {
            Err(RepositoryError::OutsideVault(category.as_str().to_string()))
        }
    }

    /// The file of an existing entry, refused when it or a folder it is in leads outside
    /// the vault, or when the vault's scope leaves it out; `NotFound` when there is no such
    /// file.
    pub(crate) fn checked_file(&self, path: &EntryPath) -> Result<PathBuf, RepositoryError> {
        if self.scope.excludes(path.as_str(), false) {
            return Err(RepositoryError::NotFound(path.clone()));
        }
        let folder = self.folder_of(path);
        match fs::canonicalize(&folder) {
            Ok(resolved) if resolved.starts_with(&self.canonical) => {}
            Ok(_) => return Err(RepositoryError::OutsideVault(path.folder().to_string())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(RepositoryError::NotFound(path.clone()));
            }
            Err(e) => return Err(io_error(&folder, e)),
        }
        let file = self.file(path);
        match fs::symlink_metadata(&file) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(RepositoryError::NotFound(path.clone()));
            }
            Err(e) => return Err(io_error(&file, e)),
        }
        match fs::canonicalize(&file) {
            // A symlink to a file the scope leaves out is left out with it.
            Ok(resolved) if self.leaves_out(&resolved) == Some(true) => {
                Err(RepositoryError::NotFound(path.clone()))
            }
            Ok(resolved) if resolved.starts_with(&self.canonical) => Ok(file),
            Ok(_) => Err(RepositoryError::OutsideVault(path.to_string())),
            // A symlink to nothing: there is no entry there.
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(RepositoryError::NotFound(path.clone())),
            Err(e) => Err(io_error(&file, e)),
        }
    }

    /// Whether the vault leaves out the file or folder at `resolved` (a path under the
    /// canonical root, symlinks resolved): hidden, or left out by the scope; `None` when it
    /// is not under the root.
    pub(crate) fn leaves_out(&self, resolved: &Path) -> Option<bool> {
        let rel = resolved.strip_prefix(&self.canonical).ok()?.to_str()?.replace('\\', "/");
        let hidden = rel.split('/').any(|part| part.starts_with('.'));
        Some(hidden || self.scope.excludes(&rel, resolved.is_dir()))
    }

    /// The file of an existing entry that kb may change: as [`Self::checked_file`], and not a
    /// symlink (replacing a link would cut it from its target; moving it would leave the
    /// target behind as a second copy).
    pub(crate) fn checked_writable_file(&self, path: &EntryPath) -> Result<PathBuf, RepositoryError> {
        let file = self.checked_file(path)?;
        match fs::symlink_metadata(&file) {
            Ok(meta) if meta.file_type().is_symlink() => Err(RepositoryError::Linked(path.clone())),
            Ok(_) => Ok(file),
            Err(e) => Err(io_error(&file, e)),
        }
    }

    /// Whether a category's folder is a symlink.
    pub(crate) fn folder_is_symlink(&self, category: Category) -> bool {
        fs::symlink_metadata(self.folder(category)).is_ok_and(|m| m.file_type().is_symlink())
    }

    /// Whether a folder `path` is in may be a symlink: its category folder is one, or it is
    /// deeper than a category folder's own files (its folders are then resolved to check).
    pub(crate) fn folder_may_be_linked(&self, path: &EntryPath) -> bool {
        if path.is_directly_in_category() {
            self.folder_is_symlink(path.category())
        } else {
            !path.folder().is_empty()
        }
    }

    /// Whether an existing file (perhaps a symlink) resolves inside the vault.
    pub(crate) fn is_inside(&self, file: &Path) -> bool {
        fs::canonicalize(file).is_ok_and(|resolved| resolved.starts_with(&self.canonical))
    }
}

/// The repository error for a failed disk operation on `path`.
pub(crate) fn io_error(path: &Path, source: io::Error) -> RepositoryError {
    RepositoryError::Io { path: path.display().to_string(), source }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn symlinks_out_of_the_vault_are_refused() {
        let vault = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.md"), "secret").unwrap();
        fs::create_dir(vault.path().join("projects")).unwrap();
        std::os::unix::fs::symlink(outside.path(), vault.path().join("ideas")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), vault.path().join("projects/s.md"))
            .unwrap();
        let root = Root::new(vault.path().to_path_buf()).unwrap();
        let s = EntryPath::parse("projects/s.md").unwrap();
        assert!(matches!(root.checked_file(&s), Err(RepositoryError::OutsideVault(_))));
        let i = EntryPath::parse("ideas/secret.md").unwrap();
        assert!(matches!(root.checked_file(&i), Err(RepositoryError::OutsideVault(_))));
        let missing = EntryPath::parse("projects/none.md").unwrap();
        assert!(matches!(root.checked_file(&missing), Err(RepositoryError::NotFound(_))));
    }
}
