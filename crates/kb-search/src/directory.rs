//! The index folder as tantivy sees it: tantivy's `MmapDirectory`, except that a commit
//! does not wait for each file to reach the disk (`fsync`). A commit writes a dozen files;
//! syncing each one made every capture wait for a dozen disk flushes, for data kb can
//! always rebuild from the vault. The files still go to the operating system at once, so
//! a kb process that dies loses nothing; only a machine that stops (power cut, kernel
//! crash) can lose unsynced index files. That case is detected, not risked: while unsynced
//! writes may exist, the folder holds [`UNSYNCED_MARKER`] naming the boot they were made
//! in, and an index found with a marker from an earlier boot is rebuilt from the vault. A
//! clean close syncs everything and removes the marker.
//!
//! Where the boot is unknown (no `/proc/sys/kernel/random/boot_id`), every write is
//! synced as tantivy does by default.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tantivy::Directory;
use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    AntiCallToken, DirectoryLock, FileHandle, Lock, MmapDirectory, TerminatingWrite, WatchCallback,
    WatchHandle, WritePtr,
};

/// The file in the index folder saying unsynced writes may exist, and since which boot.
pub const UNSYNCED_MARKER: &str = "kb-unsynced";

/// Where Linux names the current boot.
const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";

/// The current boot's id, when the system gives it.
fn boot_id() -> Option<String> {
    fs::read_to_string(BOOT_ID).ok().map(|id| id.trim().to_string()).filter(|id| !id.is_empty())
}

/// Why the index at `dir` cannot be trusted, when writes to it were not synced before the
/// machine last stopped.
pub(crate) fn lost_writes(dir: &Path) -> Option<String> {
    let marker = fs::read_to_string(dir.join(UNSYNCED_MARKER)).ok()?;
    let now = boot_id();
    (now.as_deref() != Some(marker.trim()))
        .then(|| "the machine restarted while the index had writes not yet on disk".to_string())
}

/// Puts the index folder whole on disk, then removes the marker: for a clean close of the
/// process that owns the index. Syncs the files `unsynced` names (those this process
/// wrote), or every file of the folder when the marker was there before this process
/// wrote (an owner before it stopped without closing, and its files are not known), then
/// the folder itself.
pub(crate) fn sync_all(dir: &Path, unsynced: &Unsynced) -> io::Result<()> {
    let mut state = kb_domain::sync::lock(&unsynced.0);
    if !dir.join(UNSYNCED_MARKER).exists() {
        return Ok(());
    }
    let names: Vec<std::ffi::OsString> = if state.marked && !state.inherited {
        state.files.iter().map(|name| name.clone().into_os_string()).collect()
    } else {
        let mut names = Vec::new();
        for item in fs::read_dir(dir)? {
            let item = item?;
            if item.file_type()?.is_file() && item.file_name() != UNSYNCED_MARKER {
                names.push(item.file_name());
            }
        }
        names
    };
    for name in names {
        // A file tantivy deleted meanwhile needs no syncing.
        if let Ok(file) = File::open(dir.join(name)) {
            file.sync_data()?;
        }
    }
    File::open(dir)?.sync_all()?;
    fs::remove_file(dir.join(UNSYNCED_MARKER))?;
    *state = UnsyncedState::default();
    File::open(dir)?.sync_all()
}

/// What this process wrote to the index folder without syncing it, shared by the clones of
/// its [`IndexDirectory`], for [`sync_all`] at a clean close: a folder of many small
/// segments costs a sync of each file otherwise, at every command's exit.
#[derive(Debug, Default)]
pub(crate) struct Unsynced(std::sync::Mutex<UnsyncedState>);

/// See [`Unsynced`].
#[derive(Debug, Default)]
struct UnsyncedState {
    /// Whether this process made sure the marker is there (before its first write).
    marked: bool,
    /// Whether the marker was there already then: files another process wrote may be
    /// unsynced too.
    inherited: bool,
    /// The files written, by name in the folder.
    files: std::collections::BTreeSet<PathBuf>,
}

/// tantivy's directory over the index folder, with writes left to the operating system
/// (see the module doc).
#[derive(Debug, Clone)]
pub(crate) struct IndexDirectory {
    inner: MmapDirectory,
    root: PathBuf,
    /// The boot the writes are made in; `None`: sync every write.
    boot: Option<Arc<str>>,
    /// What this process wrote unsynced.
    unsynced: Arc<Unsynced>,
}

impl IndexDirectory {
    /// The index folder `root` (which must exist).
    pub(crate) fn open(root: &Path) -> tantivy::Result<IndexDirectory> {
        let inner = MmapDirectory::open(root)?;
        Ok(IndexDirectory {
            inner,
            root: root.to_path_buf(),
            boot: boot_id().map(Arc::from),
            unsynced: Arc::default(),
        })
    }

    /// What this directory (and its clones) wrote unsynced, for [`sync_all`].
    pub(crate) fn unsynced(&self) -> Arc<Unsynced> {
        Arc::clone(&self.unsynced)
    }

    /// Before an unsynced write of the file `name`: the marker, itself synced, once; and the
    /// file noted for [`sync_all`].
    fn mark_unsynced(&self, boot: &str, name: &Path) -> io::Result<()> {
        let mut state = kb_domain::sync::lock(&self.unsynced.0);
        if !state.marked {
            let marker = self.root.join(UNSYNCED_MARKER);
            if fs::read_to_string(&marker).is_ok_and(|id| id.trim() == boot) {
                state.inherited = true;
            } else {
                let mut file = File::create(&marker)?;
                file.write_all(boot.as_bytes())?;
                file.sync_all()?;
                File::open(&self.root)?.sync_all()?;
            }
            state.marked = true;
        }
        state.files.insert(name.to_path_buf());
        Ok(())
    }
}

/// A file written for tantivy, flushed to the operating system when done, synced only
/// when `sync`.
struct IndexFile {
    file: File,
    sync: bool,
}

impl Write for IndexFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl TerminatingWrite for IndexFile {
    fn terminate_ref(&mut self, _: AntiCallToken) -> io::Result<()> {
        self.file.flush()?;
        if self.sync {
            self.file.sync_data()?;
        }
        Ok(())
    }
}

impl Directory for IndexDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.inner.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        // A file gone needs no syncing (and a long-running owner's list stays short).
        kb_domain::sync::lock(&self.unsynced.0).files.remove(path);
        self.inner.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.inner.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        if let Some(boot) = &self.boot {
            self.mark_unsynced(boot, path)
                .map_err(|e| OpenWriteError::wrap_io_error(e, path.to_path_buf()))?;
        }
        let file =
            OpenOptions::new().write(true).create_new(true).open(self.root.join(path)).map_err(|e| {
                if e.kind() == io::ErrorKind::AlreadyExists {
                    OpenWriteError::FileAlreadyExists(path.to_path_buf())
                } else {
                    OpenWriteError::wrap_io_error(e, path.to_path_buf())
                }
            })?;
        Ok(BufWriter::new(Box::new(IndexFile { file, sync: self.boot.is_none() })))
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.inner.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        let Some(boot) = &self.boot else { return self.inner.atomic_write(path, data) };
        self.mark_unsynced(boot, path)?;
        let target = self.root.join(path);
        let mut name = target.file_name().map(|n| n.to_os_string()).unwrap_or_default();
        name.push(".kb-tmp");
        let temp = target.with_file_name(name);
        fs::write(&temp, data)?;
        fs::rename(&temp, &target)
    }

    fn sync_directory(&self) -> io::Result<()> {
        match self.boot {
            Some(_) => Ok(()),
            None => self.inner.sync_directory(),
        }
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        self.inner.acquire_lock(lock)
    }

    fn watch(&self, watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.inner.watch(watch_callback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_from_another_boot_means_lost_writes_and_a_clean_close_clears_it() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(lost_writes(dir.path()), None, "no marker: nothing unsynced");
        let directory = IndexDirectory::open(dir.path()).unwrap();
        let mut writer = directory.open_write(Path::new("a.bin")).unwrap();
        writer.write_all(b"segment").unwrap();
        writer.into_inner().map_err(|e| e.into_error()).unwrap().terminate().unwrap();
        directory.atomic_write(Path::new("meta.json"), b"{}").unwrap();
        assert_eq!(fs::read(dir.path().join("a.bin")).unwrap(), b"segment");
        assert_eq!(fs::read(dir.path().join("meta.json")).unwrap(), b"{}");
        if boot_id().is_some() {
            assert!(dir.path().join(UNSYNCED_MARKER).exists());
            assert_eq!(lost_writes(dir.path()), None, "same boot: the writes are with the system");
            fs::write(dir.path().join(UNSYNCED_MARKER), "an-earlier-boot").unwrap();
            assert!(lost_writes(dir.path()).is_some());
        }
        sync_all(dir.path(), &directory.unsynced()).unwrap();
        assert!(!dir.path().join(UNSYNCED_MARKER).exists());
        assert_eq!(lost_writes(dir.path()), None);
    }
}
