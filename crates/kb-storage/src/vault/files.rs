//! [`EntryFiles`]: the vault's entry files for readers outside the vault (the search
//! index), as the [`VaultFiles`] port. It applies the vault's own rule of which files are
//! entries ([`super::scan`]) and its check that symlinks stay inside ([`super::safe_path`]),
//! so the rule is written once. Reading never writes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
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

impl Walk {
    /// The folders of the vault at `root` walked now.
    pub(crate) fn now(root: &Root) -> Walk {
        let began = SystemTime::now();
        Walk { files: scan::note_files(root), began, taken: Instant::now() }
    }
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
    /// A walk begun ahead of its first use (see [`EntryFiles::walk_ahead`]), for whichever
    /// asks first: the index's opening, or else the vault's cache.
    ahead: Option<WalkAhead>,
    /// No walk is kept any more.
    ended: bool,
}

/// A walk running on its own thread.
type WalkAhead = JoinHandle<Walk>;

impl RecentWalk {
    /// Keeps a copy of `files`, listed just now from `began` on, unless keeping has ended.
    fn keep(&self, files: &[(EntryPath, Stamp)], began: SystemTime) {
        let mut state = kb_domain::sync::lock(&self.inner);
        if !state.ended {
            state.walk = Some(Walk { files: files.to_vec(), began, taken: Instant::now() });
        }
    }

    /// The walk kept, when it is recent enough to stand for the vault now, else the walk
    /// begun ahead that no one took, once it is done.
    pub(crate) fn take(&self) -> Option<Walk> {
        let (kept, ahead) = {
            let mut state = kb_domain::sync::lock(&self.inner);
            (state.walk.take(), state.ahead.take())
        };
        if let Some(walk) = kept.filter(|walk| walk.taken.elapsed() < FRESH_FOR) {
            return Some(walk);
        }
        ahead?.join().ok()
    }

    /// The walk begun ahead, taken out, once it is done (`None` when there is none, or it
    /// failed).
    fn take_ahead(&self) -> Option<Walk> {
        let ahead = kb_domain::sync::lock(&self.inner).ahead.take()?;
        ahead.join().ok()
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
            recent: RecentWalk {
                inner: Arc::new(Mutex::new(RecentState { walk: None, ahead: None, ended: true })),
            },
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

    /// Begins the next walk of the folders now, on its own thread, so that it runs while
    /// the caller opens other things (the search index). The next
    /// [`VaultFiles::entry_files`] waits for it rather than walking; when the index's
    /// opening makes none (another process owns the index), the vault's cache takes it. It
    /// is as current as a walk made at this call: a file changed after its stamp was taken
    /// is found as one changed just after the call would be (the watcher, the next walk).
    pub fn walk_ahead(&self) {
        let root = self.root.clone();
        let started = std::thread::Builder::new().name("kb-walk".into()).spawn(move || Walk::now(&root));
        match started {
            Ok(walking) => kb_domain::sync::lock(&self.recent.inner).ahead = Some(walking),
            Err(error) => tracing::debug!(%error, "the folders are walked when first needed"),
        }
    }
}

impl VaultFiles for EntryFiles {
    fn root(&self) -> &Path {
        self.root.canonical()
    }

    fn entry_files(&self) -> Vec<(EntryPath, Stamp)> {
        let walk = self.recent.take_ahead().unwrap_or_else(|| Walk::now(&self.root));
        self.recent.keep(&walk.files, walk.began);
        walk.files
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

#[cfg(test)]
mod tests {
    use super::*;

    fn vault_with(notes: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for note in notes {
            let file = dir.path().join(note);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, "---\nname: x\n---\n").unwrap();
        }
        dir
    }

    fn paths(files: &[(EntryPath, Stamp)]) -> Vec<String> {
        let mut paths: Vec<String> = files.iter().map(|(path, _)| path.to_string()).collect();
        paths.sort();
        paths
    }

    /// A walk begun ahead answers the index's opening, and is kept for the cache after.
    #[test]
    fn a_walk_begun_ahead_answers_the_first_ask() {
        let dir = vault_with(&["people/ada.md", "ideas/kiln.md", "Journal/day.md"]);
        let recent = RecentWalk::default();
        let files = EntryFiles::keeping_walks(Root::new(dir.path().to_path_buf()).unwrap(), recent.clone());
        files.walk_ahead();
        let walked = files.entry_files();
        assert_eq!(paths(&walked), ["Journal/day.md", "ideas/kiln.md", "people/ada.md"]);
        let kept = recent.take().expect("the walk was not kept for the cache");
        assert_eq!(paths(&kept.files), paths(&walked));
        // Taken once: the next ask walks again, and sees a file added since.
        std::fs::write(dir.path().join("people/bo.md"), "---\nname: Bo\n---\n").unwrap();
        assert_eq!(files.entry_files().len(), 4);
    }

    /// When the index's opening takes no walk (another process owns the index), the cache
    /// takes the walk begun ahead, once.
    #[test]
    fn a_walk_no_index_took_goes_to_the_cache() {
        let dir = vault_with(&["people/ada.md", "admin/tax.md"]);
        let recent = RecentWalk::default();
        let files = EntryFiles::keeping_walks(Root::new(dir.path().to_path_buf()).unwrap(), recent.clone());
        files.walk_ahead();
        files.end_keeping_walks();
        let walk = recent.take().expect("the walk begun ahead was lost");
        assert_eq!(paths(&walk.files), ["admin/tax.md", "people/ada.md"]);
        assert!(recent.take().is_none(), "the same walk was handed out twice");
    }
}
