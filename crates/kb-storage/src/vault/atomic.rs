//! Crash-safe file writes: a temporary file in the same folder, written and fsynced, then
//! renamed over the target (replace) or hard-linked to it (create, never clobbering), and
//! the folder fsynced. A crash leaves the old file or the new one, never half of one.
//!
//! Temporary files are hidden (`.{name}.tmp-…`), so a leftover one is never taken for an
//! entry.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Replaces `target` with `bytes` atomically (creating it when absent). The permissions of
/// an existing target are kept.
pub(crate) fn write_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = parent_of(target)?;
    let temp = write_temp(target, bytes)?;
    if let Ok(meta) = fs::metadata(target) {
        // Best effort: a file the person made read-only for others stays so.
        let _ = fs::set_permissions(&temp, meta.permissions());
    }
    let renamed = fs::rename(&temp, target);
    if renamed.is_err() {
        let _ = fs::remove_file(&temp);
    }
    renamed?;
    sync_dir(dir)
}

/// Creates `target` with `bytes` unless it already exists: `Ok(false)` when it does (then
/// nothing was changed). Safe between processes: the final name appears atomically and
/// complete, and two writers never both win the same name.
pub(crate) fn create_new(target: &Path, bytes: &[u8]) -> io::Result<bool> {
    let dir = parent_of(target)?;
    if fs::symlink_metadata(target).is_ok() {
        return Ok(false);
    }
    let temp = write_temp(target, bytes)?;
    let linked = fs::hard_link(&temp, target);
    let removed = fs::remove_file(&temp);
    match linked {
        Ok(()) => {
            removed?;
            sync_dir(dir)?;
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// Flushes a folder's entries (new names, renames, removals) to disk.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        // Folders cannot be opened for syncing on this platform; the rename is durable
        // enough once the file itself is synced.
        let _ = dir;
        Ok(())
    }
}

fn parent_of(target: &Path) -> io::Result<&Path> {
    target.parent().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("{} has no parent folder", target.display()))
    })
}

/// Writes `bytes` to a fresh hidden temporary file next to `target` and fsyncs it.
fn write_temp(target: &Path, bytes: &[u8]) -> io::Result<PathBuf> {
    let dir = parent_of(target)?;
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    loop {
        let temp = dir.join(format!(".{name}.tmp-{}", unique_suffix()));
        let mut file = match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        };
        let written = file.write_all(bytes).and_then(|()| file.sync_all());
        if let Err(e) = written {
            drop(file);
            let _ = fs::remove_file(&temp);
            return Err(e);
        }
        return Ok(temp);
    }
}

/// A suffix no other writer (thread or process) is using at the same moment.
fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    format!("{}-{count}-{nanos:08x}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visible_files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replace_writes_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.md");
        write_atomic(&target, b"one").unwrap();
        write_atomic(&target, b"two").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn create_never_clobbers() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.md");
        assert!(create_new(&target, b"first").unwrap());
        assert!(!create_new(&target, b"second").unwrap());
        assert_eq!(fs::read(&target).unwrap(), b"first");
        assert_eq!(visible_files(dir.path()), ["a.md"]);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
