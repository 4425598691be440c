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
use std::time::SystemTime;

use super::SyncError;
use super::git::Git;
use super::pulled::{self, Pulled};
use super::tree::LINK;
use crate::history::content_hash;
use crate::vault::atomic::{sync_dir, write_atomic, write_atomic_in_batch};

/// The journal's file name in `.kb/sync/`.
const JOURNAL: &str = "applying";

/// An apply under way: where, since when (a file changed on disk after that was edited by
/// someone while the apply ran), and which device each pulled path comes from.
struct Applying<'a> {
    git: &'a Git,
    root: &'a Path,
    state_dir: &'a Path,
    started: SystemTime,
    devices: pulled::Devices,
}

/// One file's change between two commits.
#[derive(Debug)]
struct FileChange {
    path: String,
    /// Its blob in this device's commit (`None`: not there).
    before: Option<String>,
    /// Its blob and mode in the merged commit (`None`: removed).
    after: Option<(String, String)>,
}

/// What an apply wrote.
#[derive(Debug, Default)]
pub(super) struct Applied {
    /// The paths written or removed.
    pub written: Vec<String>,
    /// Each note saved here while the apply wrote it that did not merge with what came
    /// (it stays as saved), with the conflict copy holding what came.
    pub kept_beside: Vec<(String, String)>,
}

/// How a note saved while it was being synced was taken in ([`merge_edit`]).
enum Edited {
    /// Merged with what came, and written.
    Merged,
    /// Kept as saved; what came is in the copy at this path.
    Beside(String),
    /// Kept as saved: not text.
    Kept,
}

impl Applied {
    /// Takes in how `path`, saved while it was being synced, was taken in.
    fn edited(&mut self, path: &str, edited: Edited) {
        match edited {
            Edited::Merged => self.written.push(path.to_string()),
            Edited::Beside(copy) => self.kept_beside.push((path.to_string(), copy)),
            Edited::Kept => {}
        }
    }
}

/// Writes `target` over the work tree at `root`, which holds `local` (see the module doc);
/// what it wrote.
pub(super) fn apply(
    git: &Git,
    root: &Path,
    state_dir: &Path,
    local: &str,
    target: &str,
) -> Result<Applied, SyncError> {
    std::fs::create_dir_all(state_dir).map_err(|e| SyncError::io(state_dir, e))?;
    let started = SystemTime::now();
    let changes = changes(git, local, target)?;
    let on_disk = disk_blobs(git, root, &changes)?;
    // Checked before the journal is written: a refused apply leaves nothing to finish.
    for (change, disk) in changes.iter().zip(&on_disk) {
        // A path through a link on this disk is not written: nothing there to refuse for.
        if edited_since(change, disk.as_ref()) && stays_in_vault(root, &change.path) {
            return Err(SyncError::EditedMeanwhile(change.path.clone()));
        }
    }
    let journal = state_dir.join(JOURNAL);
    write_atomic(&journal, format!("{local} {target}\n").as_bytes())
        .map_err(|e| SyncError::io(&journal, e))?;
    let work: Vec<(FileChange, Option<String>)> = changes.into_iter().zip(on_disk).collect();
    let applying = Applying { git, root, state_dir, started, devices: pulled::devices(git, local, target)? };
    let mut applied = Applied::default();
    write_files(&applying, &work, &mut applied)?;
    git.run(&["reset", "--quiet", "--mixed", target])?;
    std::fs::remove_file(&journal).map_err(|e| SyncError::io(&journal, e))?;
    Ok(applied)
}

/// Finishes an apply a stopped process left (see the module doc); what it wrote.
pub(super) fn finish(git: &Git, root: &Path, state_dir: &Path) -> Result<Applied, SyncError> {
    let journal = state_dir.join(JOURNAL);
    let mut applied = Applied::default();
    let Ok(text) = std::fs::read_to_string(&journal) else { return Ok(applied) };
    let mut ids = text.split_whitespace();
    let (Some(local), Some(target)) = (ids.next(), ids.next()) else {
        let _ = std::fs::remove_file(&journal);
        return Ok(applied);
    };
    let head = git.commit_of("HEAD")?;
    if head.as_deref() != Some(target) {
        tracing::info!(local, target, "finishing the sync a stopped process began");
        let started = SystemTime::now();
        let changes = changes(git, local, target)?;
        let applying =
            Applying { git, root, state_dir, started, devices: pulled::devices(git, local, target)? };
        let mut on_disk = disk_blobs(git, root, &changes)?;
        // A file edited since the stop is the person's newer word, made on this device's
        // version: it is merged with what came (see [`merge_edit`]).
        let mut rest = Vec::new();
        for (change, disk) in changes.into_iter().zip(on_disk.drain(..)) {
            if edited_since(&change, disk.as_ref()) && stays_in_vault(root, &change.path) {
                let edited = merge_edit(&applying, &change)?;
                applied.edited(&change.path, edited);
            } else {
                rest.push((change, disk));
            }
        }
        write_files(&applying, &rest, &mut applied)?;
        git.run(&["reset", "--quiet", "--mixed", target])?;
    }
    std::fs::remove_file(&journal).map_err(|e| SyncError::io(&journal, e))?;
    Ok(applied)
}

/// Whether the file at `file` was modified after `started` (a link or no file: no).
fn changed_after(file: &Path, started: SystemTime) -> bool {
    file.symlink_metadata()
        .ok()
        .filter(|m| m.is_file())
        .and_then(|m| m.modified().ok())
        .is_some_and(|at| at > started)
}

/// Merges a note someone edited on disk while it was being synced — their edit made on
/// this device's version (`change.before`), the merged version (`change.after`) — and
/// writes the result over their file. When it does not merge (the edit and what came
/// changed one thing two ways), their file stays as they saved it and what came is
/// written beside it as a conflict copy named after the device it came from (of
/// `devices`), and recorded as that device's, so the next round sends both; a file that
/// is not text stays as it is (the merged version stays in the repository's history).
fn merge_edit(applying: &Applying<'_>, change: &FileChange) -> Result<Edited, SyncError> {
    let Applying { git, root, state_dir, devices, .. } = applying;
    let file = root.join(&change.path);
    let (Some(before), Some((after, _))) = (&change.before, &change.after) else { return Ok(Edited::Kept) };
    let Ok(disk) = std::fs::read(&file) else { return Ok(Edited::Kept) };
    let texts =
        (String::from_utf8(git.blob(before)?), String::from_utf8(git.blob(after)?), String::from_utf8(disk));
    let (Ok(before), Ok(after), Ok(disk)) = texts else { return Ok(Edited::Kept) };
    match kb_domain::three_way::merge_note(&before, &after, &disk) {
        kb_domain::three_way::NoteMerge::Clean(merged) => {
            if merged != disk {
                write_atomic(&file, merged.as_bytes()).map_err(|e| SyncError::io(&file, e))?;
            }
            tracing::info!(path = %change.path, "edited while syncing; merged with what came");
            Ok(Edited::Merged)
        }
        kb_domain::three_way::NoteMerge::Conflict => {
            let from = devices.of(&change.path).cloned().unwrap_or_else(|| git.device().to_string());
            let taken = |path: &str| root.join(path).symlink_metadata().is_ok();
            let copy = super::merge::copy_name(&change.path, &from, chrono::Utc::now(), taken);
            let bytes = super::merge::conflict_copy(after.as_bytes(), &change.path);
            let copy_file = root.join(&copy);
            write_atomic(&copy_file, &bytes).map_err(|e| SyncError::io(&copy_file, e))?;
            pulled::add(state_dir, &copy, &Pulled { hash: Some(content_hash(&bytes)), device: from })?;
            tracing::warn!(path = %change.path, %copy, "edited while syncing in a way that does not merge with what came; kept as edited, what came is in the copy");
            Ok(Edited::Beside(copy))
        }
    }
}

/// Whether the file of `change` on disk (its blob `disk`) is neither this device's commit's
/// nor the merged one's: someone edited it meanwhile.
fn edited_since(change: &FileChange, disk: Option<&String>) -> bool {
    disk != change.before.as_ref() && disk != change.after.as_ref().map(|(oid, _)| oid)
}

/// Writes the changes of `work` from this device's commit to the merged one (each with
/// its file's blob on disk) into `applied`, first keeping what comes from which device
/// (of `devices`) for history; a file already as the merge has it (written before a stop)
/// is left, and one saved since the apply began (`started`) is merged with what came
/// ([`merge_edit`]).
fn write_files(
    applying: &Applying<'_>,
    work: &[(FileChange, Option<String>)],
    applied: &mut Applied,
) -> Result<(), SyncError> {
    let Applying { git, root, state_dir, started, devices } = applying;
    // Every blob to write, read at once (a process per blob costs more than the writes).
    let wanted: Vec<&str> = work
        .iter()
        .filter_map(|(change, disk)| change.after.as_ref().filter(|(oid, _)| disk.as_ref() != Some(oid)))
        .map(|(oid, _)| oid.as_str())
        .collect();
    let mut blobs =
        wanted.iter().copied().zip(git.blobs(&wanted)?).collect::<std::collections::HashMap<_, _>>();
    keep_pulled(git, state_dir, devices, work.iter().map(|(change, _)| change), &blobs)?;
    let mut folders = std::collections::BTreeSet::new();
    let half = work.len() / 2;
    // Removals first: a link the tree replaces with a folder of the same name goes before
    // anything is written into that folder.
    let (removals, writes): (Vec<_>, Vec<_>) = work.iter().partition(|(change, _)| change.after.is_none());
    for (n, (change, disk)) in removals.into_iter().chain(writes).enumerate() {
        if n == half {
            super::pause_for_tests("apply");
        }
        // kb's own state and git's are never written or removed by a merge, whatever a
        // commit holds.
        let lower = change.path.to_lowercase();
        if lower.starts_with(".kb/") || lower.split('/').any(|part| part == ".git") {
            continue;
        }
        let file = root.join(&change.path);
        if !stays_in_vault(root, &change.path) {
            tracing::warn!(path = %change.path, "not written: its path goes through a link on this disk");
            continue;
        }
        if disk.is_some() && changed_after(&file, *started) {
            // Saved while this apply ran: never written over. A removal loses to the edit.
            if change.after.is_some() {
                let edited = merge_edit(applying, change)?;
                applied.edited(&change.path, edited);
            }
            continue;
        }
        match &change.after {
            Some((oid, _)) if disk.as_ref() == Some(oid) => continue,
            Some((oid, mode)) => {
                let bytes = blobs.remove(oid.as_str()).map_or_else(|| git.blob(oid), Ok)?;
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| SyncError::io(parent, e))?;
                }
                if mode == LINK {
                    write_link(&file, &bytes)?;
                } else {
                    write_atomic_in_batch(&file, &bytes).map_err(|e| SyncError::io(&file, e))?;
                }
                folders.extend(file.parent().map(Path::to_path_buf));
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
                folders.extend(file.parent().filter(|f| f.exists()).map(Path::to_path_buf));
            }
        }
        applied.written.push(change.path.clone());
    }
    // Each folder's new names on disk once, before the branch moves and the journal goes. A
    // folder a later removal left empty is gone: the folder above it holds that news.
    let standing: std::collections::BTreeSet<&Path> = folders
        .iter()
        .filter_map(|folder| folder.ancestors().find(|dir| dir.is_dir() || *dir == *root))
        .collect();
    for folder in standing {
        sync_dir(folder).map_err(|e| SyncError::io(folder, e))?;
    }
    Ok(())
}

/// Whether the file at vault-relative `path` would be written where its path says: no
/// folder on its way is a link on this disk (a tree may replace a link it sent before with
/// a folder of the same name, and a write would go through the link on disk, even into
/// `.kb/` or `.git/`).
pub(super) fn stays_in_vault(root: &Path, path: &str) -> bool {
    let mut folder = root.to_path_buf();
    let parts: Vec<&str> = path.split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        folder.push(part);
        match folder.symlink_metadata() {
            Ok(meta) if meta.file_type().is_symlink() => return false,
            Ok(_) => {}
            // Not there yet: made as a real folder when written.
            Err(_) => return true,
        }
    }
    true
}

/// Keeps, for history, each file of `changes` that another device's commit brought, with
/// its hash and that device (see [`pulled`]).
fn keep_pulled<'a>(
    git: &Git,
    state_dir: &Path,
    devices: &pulled::Devices,
    changes: impl Iterator<Item = &'a FileChange>,
    blobs: &std::collections::HashMap<&str, Vec<u8>>,
) -> Result<(), SyncError> {
    let files: Vec<(String, Pulled)> = changes
        .filter_map(|change| {
            let device = if super::is_conflict_copy(&change.path) && change.after.is_some() {
                // kb's copy holds the version of the device named in it (this one's, on
                // the device that merged); another tool's is nobody's sync. Its removal
                // is the device's that resolved it.
                copy_device(git, devices, &change.path)?
            } else {
                devices.of(&change.path)?.clone()
            };
            let hash = match &change.after {
                Some((oid, _)) => Some(content_hash(blobs.get(oid.as_str())?)),
                None => None,
            };
            Some((change.path.clone(), Pulled { hash, device }))
        })
        .collect();
    pulled::keep(state_dir, &files)
}

/// The device whose version kb's conflict copy at `path` holds: the one its name names,
/// as that device calls itself when it is this one or one the pulled commits name.
fn copy_device(git: &Git, devices: &pulled::Devices, path: &str) -> Option<String> {
    let named = super::merge::copy_device(path)?;
    let mut known = std::iter::once(git.device().to_string()).chain(devices.names().cloned());
    Some(
        known.find(|device| super::merge::in_copy_name(device) == named).unwrap_or_else(|| named.to_string()),
    )
}

/// The files that differ between two commits, with their blobs.
fn changes(git: &Git, from: &str, to: &str) -> Result<Vec<FileChange>, SyncError> {
    let out =
        git.output(&["diff-tree", "-r", "-z", "--no-commit-id", "--no-renames", "--raw", from, to])?.stdout;
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
        // A path through a link on this disk is never read (nor written) by sync.
        .filter(|(_, c)| stays_in_vault(root, &c.path))
        .map(|(i, c)| (i, root.join(&c.path)))
        .filter(|(_, p)| p.symlink_metadata().is_ok_and(|m| m.is_file()))
        .collect();
    let mut blobs = vec![None; changes.len()];
    // A name with a line end in it cannot go in the list: hashed on its own.
    type Files = Vec<(usize, PathBuf)>;
    let (present, odd): (Files, Files) =
        present.into_iter().partition(|(_, p)| !p.to_string_lossy().contains('\n'));
    // git runs in the vault: it is given vault-relative paths (`root` may be relative too).
    for (i, _) in odd {
        let out = git.output(&["hash-object", "--no-filters", "--", &changes[i].path])?.stdout;
        blobs[i] = Some(String::from_utf8_lossy(&out).trim().to_string());
    }
    if !present.is_empty() {
        let input: String = present.iter().map(|(i, _)| format!("{}\n", changes[*i].path)).collect();
        let out = git.run_with_input(&["hash-object", "--no-filters", "--stdin-paths"], input.as_bytes())?;
        for ((i, _), oid) in present.iter().zip(String::from_utf8_lossy(&out).lines()) {
            blobs[*i] = Some(oid.trim().to_string());
        }
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
