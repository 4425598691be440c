//! [`EntryFiles`]: the vault's entry files for readers outside the vault (the search
//! index), as the [`VaultFiles`] port. It applies the vault's own rule of which files are
//! entries ([`super::scan`]) and its check that symlinks stay inside ([`super::safe_path`]),
//! so the rule is written once. Reading never writes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kb_domain::{EntryPath, FileRead, RepositoryError, Stamp, VaultFiles};

use super::safe_path::Root;
use super::scan;

/// The entry files of a vault folder, read-only. Cheap to clone; needs no open
/// [`super::Vault`] (so the index can be rebuilt without one), or comes from
/// [`super::Vault::files`].
#[derive(Debug, Clone)]
pub struct EntryFiles {
    root: Root,
    /// The walk of the vault its opening made, lent once to the first reader that lists
    /// the files soon after (the index opening right after the vault), so a start walks
    /// the vault's folders once.
    lent_walk: Arc<Mutex<Option<Walk>>>,
}

/// The note files of a vault with their stamps, and when they were listed.
#[derive(Debug)]
pub(crate) struct Walk {
    pub(crate) files: Vec<(EntryPath, Stamp)>,
    pub(crate) taken: Instant,
}

/// A walk lent is used only this soon after it was made: the files may change after.
const LENT_WALK_FOR: Duration = Duration::from_secs(2);

impl EntryFiles {
    /// The entry files of the existing vault folder `root` (nothing is created), leaving
    /// out what its `.gitignore` and `.kbignore` ignore.
    pub fn new(root: impl Into<PathBuf>) -> Result<EntryFiles, RepositoryError> {
        Ok(EntryFiles::of_root(Root::new(root.into())?))
    }

    /// As [`EntryFiles::new`], also leaving out what `patterns` (`.gitignore` patterns, as
    /// `KB_EXCLUDE` gives them) name.
    pub fn excluding(root: impl Into<PathBuf>, patterns: &[String]) -> Result<EntryFiles, RepositoryError> {
        Ok(EntryFiles::of_root(Root::excluding(root.into(), patterns)?))
    }

    /// The entry files of a vault whose root is already resolved.
    pub(crate) fn of_root(root: Root) -> EntryFiles {
        EntryFiles { root, lent_walk: Arc::default() }
    }

    /// Ends the lending of the walk made at open (see [`super::Vault::files`]): the index
    /// is open, and a later listing (a process taking the index over from another) must
    /// see the files as they are then.
    pub fn end_lending(&self) {
        kb_domain::sync::lock(&self.lent_walk).take();
    }

    /// [`EntryFiles::of_root`], lending `walk` (see the field's doc).
    pub(crate) fn lending(root: Root, walk: Option<Walk>) -> EntryFiles {
        EntryFiles { root, lent_walk: Arc::new(Mutex::new(walk)) }
    }
}

impl VaultFiles for EntryFiles {
    fn root(&self) -> &Path {
        self.root.canonical()
    }

    fn entry_files(&self) -> Vec<(EntryPath, Stamp)> {
        let lent = kb_domain::sync::lock(&self.lent_walk).take();
        match lent {
            Some(walk) if walk.taken.elapsed() < LENT_WALK_FOR => walk.files,
            _ => scan::note_files(&self.root),
        }
    }

    fn note_folders(&self) -> Vec<PathBuf> {
        scan::note_folders(&self.root)
    }

    fn note_folder_of(&self, folder: &Path) -> Option<String> {
        scan::note_folder_of(&self.root, folder)
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
