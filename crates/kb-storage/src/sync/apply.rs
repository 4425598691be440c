//! Writing a merged commit to the vault's files: each file that differs between this
//! device's commit and the merged one is written (atomically) or removed, then the branch
//! moves to the merged commit.
//!
//! A journal (`.kb/sync/applying`, naming both commits) is written first and removed last:
//! a process stopped in between (`kill -9`) leaves it, and the next round writes the rest
//! before anything else. A file someone changed since this device's commit is never
//! overwritten: the apply stops before writing anything, and the next round commits the
//! change and merges again.

use std::path::{Path, PathBuf};

use super::SyncError;
use super::git::Git;
use super::tree::LINK;
use crate::vault::atomic::write_atomic;

/// The journal's file name in `.kb/sync/`.
const JOURNAL: &str = "applying";

/// One file's change between two commits.
#[derive(Debug)]
struct FileChange {
    path: String,
    /// Its blob in this device's commit (`None`: not there).
    before: Option<String>,
    /// Its blob and mode in the merged commit (`None`: removed).
    after: Option<(String, String)>,
}

/// Writes `target` over the work tree at `root`, which holds `local` (see the module doc);
/// the paths written or removed.
pub(super) fn apply(git: &Git, root: &Path, state_dir: &Path, local: &str, target: &str) -> Result<Vec<String>, SyncError> {
    std::fs::create_dir_all(state_dir).map_err(|e| SyncError::io(state_dir, e))?;
    let journal = state_dir.join(JOURNAL);
    write_atomic(&journal, format!("{local} {target}\n").as_bytes()).map_err(|e| SyncError::io(&journal, e))?;
    let written = write_files(git, root, local, target)?;
    git.run(&["reset", "--quiet", "--mixed", target])?;
    std::fs::remove_file(&journal).map_err(|e| SyncError::io(&journal, e))?;
    Ok(written)
}

/// Finishes an apply a stopped process left (see the module doc); the paths it wrote.
pub(super) fn finish(git: &Git, root: &Path, state_dir: &Path) -> Result<Vec<String>, SyncError> {
    let journal = state_dir.join(JOURNAL);
    let Ok(text) = std::fs::read_to_string(&journal) else { return Ok(Vec::new()) };
    let mut ids = text.split_whitespace();
    let (Some(local), Some(target)) = (ids.next(), ids.next()) else {
        let _ = std::fs::remove_file(&journal);
        return Ok(Vec::new());
    };
    tracing::info!(local, target, "finishing the sync a stopped process began");
    let head = git.commit_of("HEAD")?;
    let written = if head.as_deref() == Some(target) { Vec::new() } else { write_files(git, root, local, target)? };
    if head.as_deref() != Some(target) {
        git.run(&["reset", "--quiet", "--mixed", target])?;
    }
    std::fs::remove_file(&journal).map_err(|e| SyncError::io(&journal, e))?;
    Ok(written)
}

/// Writes the files that differ from `local` to `target`; a file already as `target` has
/// it (written before a stop) is left, one as neither has it stops the apply.
fn write_files(git: &Git, root: &Path, local: &str, target: &str) -> Result<Vec<String>, SyncError> {
    let changes = changes(git, local, target)?;
    let on_disk = disk_blobs(git, root, &changes)?;
    for (change, disk) in changes.iter().zip(&on_disk) {
        let as_target = change.after.as_ref().map(|(oid, _)| oid);
        if disk.as_ref() != change.before.as_ref() && disk.as_ref() != as_target {
            return Err(SyncError::Refused(format!(
                "{} changed while syncing; the next round takes it in",
                change.path
            )));
        }
    }
    let mut written = Vec::new();
    let half = changes.len() / 2;
    for (n, (change, disk)) in changes.iter().zip(on_disk).enumerate() {
        if n == half {
            super::pause_for_tests("apply");
        }
        let file = root.join(&change.path);
        match &change.after {
            Some((oid, _)) if disk.as_ref() == Some(oid) => continue,
            Some((oid, mode)) => {
                let bytes = git.blob(oid)?;
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| SyncError::io(parent, e))?;
                }
                if mode == LINK {
                    write_link(&file, &bytes)?;
                } else {
                    write_atomic(&file, &bytes).map_err(|e| SyncError::io(&file, e))?;
                }
            }
            None if disk.is_none() => continue,
            None => {
                match std::fs::remove_file(&file) {
                    Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                        return Err(SyncError::io(&file, error));
                    }
                    _ => {}
                }
                remove_empty_folders(root, &file);
            }
        }
        written.push(change.path.clone());
    }
    Ok(written)
}

/// The files that differ between two commits, with their blobs.
fn changes(git: &Git, from: &str, to: &str) -> Result<Vec<FileChange>, SyncError> {
    let out = git.output(&["diff-tree", "-r", "-z", "--no-commit-id", "--no-renames", "--raw", from, to])?.stdout;
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut changes = Vec::new();
    let zero = |oid: &str| oid.bytes().all(|b| b == b'0');
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        let meta = String::from_utf8_lossy(meta);
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [_, new_mode, old_oid, new_oid, ..] = parts[..] else { continue };
        changes.push(FileChange {
            path: String::from_utf8_lossy(path).into_owned(),
            before: (!zero(old_oid)).then(|| old_oid.to_string()),
            after: (!zero(new_oid)).then(|| (new_oid.to_string(), new_mode.to_string())),
        });
    }
    Ok(changes)
}

/// The blob each changed path has on disk now (`None`: no file).
fn disk_blobs(git: &Git, root: &Path, changes: &[FileChange]) -> Result<Vec<Option<String>>, SyncError> {
    let present: Vec<(usize, PathBuf)> = changes
        .iter()
        .enumerate()
        .map(|(i, c)| (i, root.join(&c.path)))
        .filter(|(_, p)| p.symlink_metadata().is_ok_and(|m| m.is_file()))
        .collect();
    let mut blobs = vec![None; changes.len()];
    if present.is_empty() {
        return Ok(blobs);
    }
    let input: String = present.iter().map(|(_, p)| format!("{}\n", p.display())).collect();
    let out = git.run_with_input(&["hash-object", "--no-filters", "--stdin-paths"], input.as_bytes())?;
    for ((i, _), oid) in present.iter().zip(String::from_utf8_lossy(&out).lines()) {
        blobs[*i] = Some(oid.trim().to_string());
    }
    // Links are compared by their target, as git stores them.
    for (i, change) in changes.iter().enumerate() {
        let path = root.join(&change.path);
        if path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink())
            && let Ok(target) = std::fs::read_link(&path)
        {
            let out = git.run_with_input(&["hash-object", "--stdin"], target.to_string_lossy().as_bytes())?;
            blobs[i] = Some(String::from_utf8_lossy(&out).trim().to_string());
        }
    }
    Ok(blobs)
}

/// Makes `file` a symbolic link to the path `target` holds.
fn write_link(file: &Path, target: &[u8]) -> Result<(), SyncError> {
    let target = String::from_utf8_lossy(target).into_owned();
    let _ = std::fs::remove_file(file);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&target, file).map_err(|e| SyncError::io(file, e))
    }
    #[cfg(not(unix))]
    {
        std::fs::write(file, target).map_err(|e| SyncError::io(file, e))
    }
}

/// Removes the folders above `file` left empty, up to (not including) `root`.
fn remove_empty_folders(root: &Path, file: &Path) {
    let mut folder = file.parent();
    while let Some(dir) = folder {
        if dir == root || !dir.starts_with(root) || std::fs::remove_dir(dir).is_err() {
            break;
        }
        folder = dir.parent();
    }
}
