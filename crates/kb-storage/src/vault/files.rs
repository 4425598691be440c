//! [`EntryFiles`]: the vault's entry files for readers outside the vault (the search
//! index), as the [`VaultFiles`] port. It applies the vault's own rule of which files are
//! entries ([`super::scan`]) and its check that symlinks stay inside ([`super::safe_path`]),
//! so the rule is written once. Reading never writes.

use std::path::{Path, PathBuf};

use kb_domain::{Category, EntryPath, FileRead, RepositoryError, Stamp, VaultFiles};

use super::safe_path::Root;
use super::scan;

/// The entry files of a vault folder, read-only. Cheap to clone; needs no open
/// [`super::Vault`] (so the index can be rebuilt without one), or comes from
/// [`super::Vault::files`].
#[derive(Debug, Clone)]
pub struct EntryFiles {
    root: Root,
}

impl EntryFiles {
    /// The entry files of the existing vault folder `root` (nothing is created).
    pub fn new(root: impl Into<PathBuf>) -> Result<EntryFiles, RepositoryError> {
        Ok(EntryFiles { root: Root::new(root.into())? })
    }

    /// The entry files of a vault whose root is already resolved.
    pub(crate) fn of_root(root: Root) -> EntryFiles {
        EntryFiles { root }
    }
}

impl VaultFiles for EntryFiles {
    fn root(&self) -> &Path {
        self.root.canonical()
    }

    fn entry_files(&self) -> Vec<(EntryPath, Stamp)> {
        let mut found = Vec::new();
        for category in Category::ALL {
            match scan::list_folder(&self.root, category) {
                Ok(files) => found.extend(files),
                Err(error) => {
                    tracing::warn!(%error, folder = category.as_str(), "category folder cannot be listed; skipped");
                }
            }
        }
        found
    }

    fn stamp(&self, path: &EntryPath) -> Option<Stamp> {
        scan::stamp_of_path(&self.root, path)
    }

    fn read(&self, path: &EntryPath) -> FileRead {
        scan::read_stamped(&self.root, path)
    }

    fn entry_path_of(&self, file: &Path) -> Option<EntryPath> {
        scan::entry_path_of(&self.root, file)
    }
}
