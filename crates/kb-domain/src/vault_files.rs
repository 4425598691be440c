//! The vault's files as a port ([`VaultFiles`]): which files are entries, their content
//! stamps, and reading one entry. The storage adapter implements it (the one place the
//! rule is written); the search index uses it to follow the vault without knowing how the
//! vault lies on disk.
//!
//! The rule: every visible `.md` file of the vault is a note, in any folder (an entry of a
//! category inside a category folder, one of the person's other notes anywhere else), but
//! for hidden files and folders (`.kb/`, `.git/`, `.obsidian/`), what the vault's ignore
//! patterns leave out, and kb's own entry list file. A symlinked file or category folder
//! counts only when it resolves inside the vault.

use std::path::Path;

use crate::entry::Entry;
use crate::lines::EntryLines;
use crate::path::EntryPath;

/// What is remembered of an entry file to tell whether it changed: its modification time
/// and size, taken from metadata only (the file is not opened).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stamp {
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// Size in bytes.
    pub size: u64,
}

impl Stamp {
    /// The stamp of an entry known without a file behind it: matches no real file.
    pub const NONE: Stamp = Stamp { mtime_ns: i64::MIN, size: u64::MAX };

    /// The stamp of a file modified at `mtime_ns` (nanoseconds since the Unix epoch) and
    /// `size` bytes long.
    pub const fn new(mtime_ns: i64, size: u64) -> Stamp {
        Stamp { mtime_ns, size }
    }

    /// How close to the moment a stamp was taken a file's modification may be and the stamp
    /// still not tell it from a later version: a file system's clock ticks coarser than
    /// nanoseconds (up to two seconds, on FAT), so a file written again within the same
    /// tick, with the same size, keeps its stamp. Git calls such a file "racily clean".
    pub const RACY_WINDOW_NS: i64 = 2_000_000_000;

    /// Whether this stamp, taken at or after `taken_at_ns` (nanoseconds since the Unix
    /// epoch), tells the file's version: the file was modified well before (see
    /// [`Stamp::RACY_WINDOW_NS`]). A stamp that does not must be read again.
    pub const fn settled_at(self, taken_at_ns: i64) -> bool {
        self.mtime_ns < taken_at_ns.saturating_sub(Stamp::RACY_WINDOW_NS)
    }
}

/// What reading one entry file gave.
#[derive(Debug, Clone, PartialEq)]
pub enum FileRead {
    /// The entry, the stamp of the file it was read from, and where its texts lie among
    /// the file's lines. The stamp is taken before the read, so it can only be older than
    /// what was read, never newer: a file changed during the read is seen as changed again
    /// the next time it is looked at.
    Entry(Entry, Stamp, EntryLines),
    /// No entry there: the file is gone, is not a regular file, or leads out of the vault.
    Missing,
    /// The file is there but is not a readable entry (frontmatter does not parse, not
    /// UTF-8, cannot be read), with the reason. It is reported, never rewritten.
    Malformed(String),
}

/// The entry files of one vault, read-only (see the module documentation for which files
/// are entries). Implementations never write.
pub trait VaultFiles: Send + Sync {
    /// The vault's root folder, canonical (symlinks resolved).
    fn root(&self) -> &Path;

    /// Every entry file of the vault with its stamp, from folder listings and metadata
    /// only: no file is opened. A folder that cannot be listed is skipped (with a
    /// warning).
    fn entry_files(&self) -> Vec<(EntryPath, Stamp)>;

    /// Every folder of the vault notes may be in, the root first, as absolute paths under
    /// [`VaultFiles::root`]: what a file watcher watches. From folder listings only.
    fn note_folders(&self) -> Vec<std::path::PathBuf>;

    /// The vault-relative path (`Journal/2025`) of an absolute folder path under
    /// [`VaultFiles::root`] when notes may be in it (visible, not left out by the vault's
    /// patterns); `None` for the root and any other path. Only the path is looked at.
    fn note_folder_of(&self, folder: &Path) -> Option<String>;

    /// The stamp of the entry file at `path`, or `None` when there is no entry file there
    /// (missing, not a regular file, leading out of the vault).
    fn stamp(&self, path: &EntryPath) -> Option<Stamp>;

    /// Reads the entry at `path`.
    fn read(&self, path: &EntryPath) -> FileRead;

    /// The entry path of an absolute file path under [`VaultFiles::root`] (as a file
    /// watcher reports it) when it names a possible entry file; `None` for any other path.
    /// Only the path is looked at, not the file.
    fn entry_path_of(&self, file: &Path) -> Option<EntryPath>;
}
