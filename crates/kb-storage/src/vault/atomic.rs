//! Crash-safe file writes: a temporary file in the same folder, written and fsynced, then
//! renamed over the target (replace) or hard-linked to it (create, never clobbering), and
//! the folder fsynced. A crash leaves the old file or the new one, never half of one.
//!
//! Where the filesystem has no hard links (exFAT, many SMB shares and FUSE mounts), a
//! create claims the name with an exclusive create of an empty file and then renames the
//! written temporary file over that claim: still never clobbering, and the name never
//! shows half of the text (for an instant, and after a crash at that instant, it is empty).
//!
//! Temporary files are hidden (`.{name}.tmp-…`), so a leftover one is never taken for an
//! entry; the first kb process to open a vault removes those left in its category folders.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use kb_domain::Category;

use super::safe_path::Root;

/// Replaces `target` with `bytes` atomically (creating it when absent). The permissions of
/// an existing target are kept.
pub(crate) fn write_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    replace(target, bytes).map(drop)
}

/// [`write_atomic`], answering the metadata the written file has: taken before the rename,
/// so it is this write's even when another process replaces the file right after.
pub(crate) fn replace(target: &Path, bytes: &[u8]) -> io::Result<fs::Metadata> {
    let dir = parent_of(target)?;
    let temp = write_temp(target, bytes)?;
    if let Ok(meta) = fs::metadata(target) {
        // Best effort: a file the person made read-only for others stays so.
        let _ = fs::set_permissions(&temp, meta.permissions());
    }
    let written = match fs::metadata(&temp) {
        Ok(meta) => meta,
        Err(e) => {
            let _ = fs::remove_file(&temp);
            return Err(e);
        }
    };
    let renamed = fs::rename(&temp, target);
    if renamed.is_err() {
        let _ = fs::remove_file(&temp);
    }
    renamed?;
    sync_dir(dir)?;
    Ok(written)
}

/// [`write_atomic`] without flushing the folder's entry: for many files written in one
/// folder, whose caller syncs each folder once after ([`sync_dir`]). The bytes are on disk
/// before the name appears.
pub(crate) fn write_atomic_in_batch(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let temp = write_temp(target, bytes)?;
    if let Ok(meta) = fs::metadata(target) {
        let _ = fs::set_permissions(&temp, meta.permissions());
    }
    let renamed = fs::rename(&temp, target);
    if renamed.is_err() {
        let _ = fs::remove_file(&temp);
    }
    renamed
}

/// Creates `target` with `bytes` unless it already exists: `Ok(false)` when it does (then
/// nothing was changed). Safe between processes: the final name appears atomically and
/// complete, and two writers never both win the same name.
pub(crate) fn create_new(target: &Path, bytes: &[u8]) -> io::Result<bool> {
    create_new_with(target, bytes, |from, to| fs::hard_link(from, to))
}

/// [`create_new`] with the hard-link step given (tests make it fail as exFAT does).
fn create_new_with(
    target: &Path,
    bytes: &[u8],
    link: impl Fn(&Path, &Path) -> io::Result<()>,
) -> io::Result<bool> {
    let dir = parent_of(target)?;
    if fs::symlink_metadata(target).is_ok() {
        return Ok(false);
    }
    let temp = write_temp(target, bytes)?;
    match link(&temp, target) {
        Ok(()) => {
            fs::remove_file(&temp)?;
            sync_dir(dir)?;
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let _ = fs::remove_file(&temp);
            Ok(false)
        }
        Err(e) => {
            tracing::debug!(error = %e, "no hard link here; claiming the name by exclusive create");
            let claimed = claim_then_rename(&temp, target);
            if !matches!(claimed, Ok(true)) {
                let _ = fs::remove_file(&temp);
            }
            claimed
        }
    }
}

/// A new file's bytes written and synced under a hidden temporary name in the folder they
/// are for, before the name they take is known: the slow part of a create, done before the
/// caller takes its locks ([`Prepared::create_new`] then only links it, and the folder is
/// synced once the caller has let them go: [`Prepared::sync_folder`]). The temporary file
/// is removed when this is dropped, unless it became the file; a folder not synced yet is
/// synced then.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The temporary file, until it takes its name.
    temp: Option<PathBuf>,
    /// The folder the file took its name in, until it is synced.
    unsynced: Option<PathBuf>,
}

impl Prepared {
    /// Writes and syncs `bytes` in the folder `dir`.
    pub(crate) fn write(dir: &Path, bytes: &[u8]) -> io::Result<Prepared> {
        Ok(Prepared { temp: Some(write_temp(&dir.join("new"), bytes)?), unsynced: None })
    }

    /// Syncs the folder the file took its name in (by a hard link, which
    /// [`Prepared::create_new`] leaves to sync), so the name outlives a power cut.
    pub(crate) fn sync_folder(&mut self) -> io::Result<()> {
        match self.unsynced.take() {
            Some(folder) => sync_dir(&folder),
            None => Ok(()),
        }
    }

    /// [`create_new`] with the bytes prepared, for a `target` in their folder: `Ok(false)`
    /// when `target` exists (the bytes stay prepared for another name).
    pub(crate) fn create_new(&mut self, target: &Path) -> io::Result<bool> {
        let Some(temp) = self.temp.as_deref() else {
            return Err(io::Error::other("the prepared file took its name already"));
        };
        let dir = parent_of(target)?;
        if fs::symlink_metadata(target).is_ok() {
            return Ok(false);
        }
        let created = match fs::hard_link(temp, target) {
            Ok(()) => {
                // The name is the file's now, whatever happens to the temporary one. The
                // folder is synced after the caller's locks (see `sync_folder`).
                let _ = fs::remove_file(temp);
                self.temp = None;
                self.unsynced = Some(dir.to_path_buf());
                return Ok(true);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
            Err(e) => {
                tracing::debug!(error = %e, "no hard link here; claiming the name by exclusive create");
                claim_then_rename(temp, target)
            }
        };
        if matches!(created, Ok(true)) {
            self.temp = None;
        }
        created
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            let _ = fs::remove_file(temp);
        }
        if let Err(error) = self.sync_folder() {
            tracing::warn!(%error, "a new file's folder could not be synced");
        }
    }
}

/// Claims `target` with an exclusive create, then renames `temp` over the claim.
fn claim_then_rename(temp: &Path, target: &Path) -> io::Result<bool> {
    match OpenOptions::new().write(true).create_new(true).open(target) {
        Ok(claim) => drop(claim),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(e),
    }
    if let Err(e) = fs::rename(temp, target) {
        // The claim is ours and empty: give the name back.
        let _ = fs::remove_file(target);
        return Err(e);
    }
    sync_dir(parent_of(target)?)?;
    Ok(true)
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

/// Removes the temporary files a kb process stopped in the middle of a write left in the
/// category folders of the vault at `root` (a capture writes its file there first): for a
/// process alone on the vault. A folder that leads outside the vault is not looked in.
pub(crate) fn remove_leftover_temps_of(root: &Root) {
    for category in Category::ALL.into_iter().filter(|c| c.is_folder()) {
        let Ok(folder) = root.checked_folder(category) else { continue };
        let removed = remove_leftover_temps(&folder);
        if removed > 0 {
            tracing::info!(removed, folder = %folder.display(), "removed temporary files left by a stopped write");
        }
    }
}

/// Removes from `dir` the temporary files a kb process left there when it stopped in the
/// middle of a write (`kill -9`, a power cut): hidden regular files named as
/// [`write_temp`] names them, and nothing else. Only for a process alone on the vault, so
/// that no other is writing one now. How many were removed.
pub(crate) fn remove_leftover_temps(dir: &Path) -> usize {
    let Ok(listing) = fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for item in listing.flatten() {
        let name = item.file_name();
        let is_file = item.file_type().is_ok_and(|kind| kind.is_file());
        if is_file && name.to_str().is_some_and(is_temp_name) && fs::remove_file(item.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Whether `name` is one [`write_temp`] gives: `.{name}.tmp-{process}-{count}-{nanos}`.
fn is_temp_name(name: &str) -> bool {
    let Some((_, suffix)) = name.strip_prefix('.').and_then(|rest| rest.rsplit_once(".tmp-")) else {
        return false;
    };
    let parts: Vec<&str> = suffix.split('-').collect();
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    matches!(parts.as_slice(), [process, count, nanos]
        if digits(process) && digits(count) && nanos.len() == 8 && nanos.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A suffix no other writer (thread or process) is using at the same moment.
pub(crate) fn unique_suffix() -> String {
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
    fn a_prepared_file_takes_a_free_name_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.md"), "theirs").unwrap();
        let mut prepared = Prepared::write(dir.path(), b"ours").unwrap();
        assert!(!prepared.create_new(&dir.path().join("a.md")).unwrap());
        assert!(prepared.create_new(&dir.path().join("a-2.md")).unwrap());
        assert!(prepared.create_new(&dir.path().join("a-3.md")).is_err(), "used once");
        drop(prepared);
        assert_eq!(fs::read(dir.path().join("a.md")).unwrap(), b"theirs");
        assert_eq!(fs::read(dir.path().join("a-2.md")).unwrap(), b"ours");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
        // Never used, it leaves nothing behind.
        drop(Prepared::write(dir.path(), b"unused").unwrap());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn only_temporary_files_are_taken_for_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let temp = write_temp(&dir.path().join("new"), b"half").unwrap();
        let kept = [
            ".new.tmp-notes",
            ".plan.md.tmp-1-2-zzzzzzzz",
            "a.tmp-1-2-0badc0de",
            ".tmp-1-2-0badc0de",
            "b.md",
        ];
        for name in kept {
            fs::write(dir.path().join(name), "theirs").unwrap();
        }
        fs::create_dir(dir.path().join(".x.tmp-1-2-0badc0de")).unwrap();
        assert_eq!(remove_leftover_temps(dir.path()), 1);
        assert!(!temp.exists());
        for name in kept {
            assert_eq!(fs::read_to_string(dir.path().join(name)).unwrap(), "theirs", "{name}");
        }
        assert!(dir.path().join(".x.tmp-1-2-0badc0de").is_dir());
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

    /// What `link` fails with on exFAT (EPERM), on SMB or FUSE (EOPNOTSUPP, ENOSYS).
    fn no_links(_: &Path, _: &Path) -> io::Result<()> {
        Err(io::Error::from(io::ErrorKind::PermissionDenied))
    }

    #[test]
    fn without_hard_links_a_create_still_never_clobbers() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.md");
        assert!(create_new_with(&target, b"first", no_links).unwrap());
        assert_eq!(fs::read(&target).unwrap(), b"first");
        assert!(!create_new_with(&target, b"second", no_links).unwrap());
        assert_eq!(fs::read(&target).unwrap(), b"first");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file is left");
    }

    #[test]
    fn without_hard_links_racing_creates_have_one_winner_whole() {
        for round in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let target = dir.path().join("race.md");
            let texts: Vec<Vec<u8>> = (0..8).map(|i| vec![b'a' + i; 64 * 1024]).collect();
            let wins: Vec<bool> = std::thread::scope(|scope| {
                let handles: Vec<_> = texts
                    .iter()
                    .map(|text| scope.spawn(|| create_new_with(&target, text, no_links).unwrap()))
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert_eq!(wins.iter().filter(|w| **w).count(), 1, "round {round}: {wins:?}");
            let winner = wins.iter().position(|w| *w).unwrap();
            assert_eq!(
                fs::read(&target).unwrap(),
                texts[winner],
                "round {round}: the file is the winner's, whole"
            );
            assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "round {round}: temporary files left");
        }
    }
}
