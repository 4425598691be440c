//! [`EntryFiles`]: the vault's entry files for readers outside the vault (the search
//! index), as the [`VaultFiles`] port. It applies the vault's own rule of which files are
//! entries ([`super::scan`]) and its check that symlinks stay inside ([`super::safe_path`]),
//! so the rule is written once. Reading never writes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use kb_domain::{EntryPath, FileRead, RepositoryError, Stamp, VaultFiles};

use super::safe_path::Root;
use super::scan;

/// The entry files of a vault folder, read-only. Cheap to clone; needs no open
/// [`super::Vault`] (so the index can be rebuilt without one), or comes from
/// [`super::Vault::files`].
#[derive(Debug, Clone)]
pub struct EntryFiles {
    root: Root,
    /// Where a walk is kept for the vault's cache, while that is wanted.
    recent: RecentWalk,
}

/// The note files of a vault with their stamps, and when they were listed.
#[derive(Debug)]
pub(crate) struct Walk {
    pub(crate) files: Vec<(EntryPath, Stamp)>,
    /// When the listing began (before any stamp was taken).
    pub(crate) began: SystemTime,
    taken: Instant,
}

/// A walk is used by another only this soon after it was made: the files may change after.
const FRESH_FOR: Duration = Duration::from_secs(2);

/// The last walk of the vault's folders the index's opening made, shared by the vault and
/// its [`EntryFiles`], kept until the vault's cache takes it or the opening ends.
#[derive(Debug, Clone, Default)]
pub(crate) struct RecentWalk {
    inner: Arc<Mutex<RecentState>>,
}

#[derive(Debug, Default)]
struct RecentState {
    walk: Option<Walk>,
    /// No walk is kept any more.
    ended: bool,
}

impl RecentWalk {
    /// Keeps a copy of `files`, listed just now from `began` on, unless keeping has ended.
    fn keep(&self, files: &[(EntryPath, Stamp)], began: SystemTime) {
        let mut state = kb_domain::sync::lock(&self.inner);
        if !state.ended {
            state.walk = Some(Walk { files: files.to_vec(), began, taken: Instant::now() });
        }
    }

    /// The walk kept, when it is recent enough to stand for the vault now.
    pub(crate) fn take(&self) -> Option<Walk> {
        let walk = kb_domain::sync::lock(&self.inner).walk.take()?;
        (walk.taken.elapsed() < FRESH_FOR).then_some(walk)
    }

    /// Keeps no walk from now on.
    fn end(&self) {
        let mut state = kb_domain::sync::lock(&self.inner);
        state.ended = true;
    }
}

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
        EntryFiles {
            root,
            recent: RecentWalk { inner: Arc::new(Mutex::new(RecentState { walk: None, ended: true })) },
        }
    }

    /// Ends the keeping of walks for the vault's cache (see [`super::Vault::files`]): the
    /// index is open, and a later walk (a process taking the index over from another) is
    /// its own. A walk kept already stays for the cache's first build, while recent.
    pub fn end_keeping_walks(&self) {
        self.recent.end();
    }

    /// [`EntryFiles::of_root`], keeping its walks for the vault's cache.
    pub(crate) fn keeping_walks(root: Root, recent: RecentWalk) -> EntryFiles {
        EntryFiles { root, recent }
    }
}

impl VaultFiles for EntryFiles {
    fn root(&self) -> &Path {
        self.root.canonical()
    }

    fn entry_files(&self) -> Vec<(EntryPath, Stamp)> {
        let began = SystemTime::now();
        let files = scan::note_files(&self.root);
        self.recent.keep(&files, began);
        files
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
