//! The merge of a remote's commit into this device's: kb's rules, built as a git tree apart
//! from the work tree (the vault's files change only when the tree is applied).
//!
//! The local tree is the start; each change the remote made since the two last agreed is
//! then taken in:
//! - a file only the remote changed takes the remote's version (or goes, or moves);
//! - a note both changed merges ([`merge_note`]); when it cannot, the note keeps the
//!   remote's version and the local one is written beside it as a conflict copy;
//! - an edit against a delete keeps the edited file, and a move against an edit ends as
//!   the moved file with the edit;
//! - two different files made at one path both stay: the local one takes the next free
//!   name, as a capture would.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use kb_domain::Frontmatter;
use kb_domain::edit::edit_document;
use kb_domain::three_way::{NoteMerge, merge_note};
use serde_json::Value;

use super::SyncError;
use super::git::Git;
use super::round::Conflict;
use super::tree::{self, Change, File, Files};

/// What a merge made: the tree, and the conflict copies in it.
#[derive(Debug)]
pub(super) struct Merged {
    /// The merged tree's id.
    pub(super) tree: String,
    /// The conflicts met, each with its copy.
    pub(super) conflicts: Vec<Conflict>,
}

/// The three trees of a merge and what it needs to name copies.
pub(super) struct Merge<'a> {
    /// git in the vault.
    pub(super) git: &'a Git,
    /// The tree both sides started from (the empty tree for two histories never joined).
    pub(super) base: String,
    /// This device's commit.
    pub(super) local: String,
    /// The remote's commit.
    pub(super) remote: String,
    /// This device's name, for conflict copies.
    pub(super) device: &'a str,
    /// When, for conflict copies.
    pub(super) now: DateTime<Utc>,
}

/// The state of the merge being built.
struct Building<'a> {
    merge: &'a Merge<'a>,
    base: Files,
    local: Files,
    remote: Files,
    /// The merged tree, from the local one.
    result: Files,
    conflicts: Vec<Conflict>,
}

impl Merge<'_> {
    /// Builds the merged tree (see the module doc).
    pub(super) fn build(&self) -> Result<Merged, SyncError> {
        let git = self.git;
        let local_files = tree::files(git, &self.local)?;
        let mut building = Building {
            merge: self,
            base: tree::files(git, &self.base)?,
            remote: tree::files(git, &self.remote)?,
            result: local_files.clone(),
            local: local_files,
            conflicts: Vec::new(),
        };
        let local_changes =
            true_moves(git, tree::changes(git, &self.base, &self.local)?, &building.base, &building.local)?;
        let mut local_written = BTreeSet::new();
        let mut local_moved = BTreeMap::new();
        for change in local_changes {
            match change {
                Change::Written(path) => {
                    local_written.insert(path);
                }
                // A delete here loses to a change there, which is taken as any other.
                Change::Removed(_) => {}
                Change::Moved { from, to } => {
                    local_moved.insert(from, to);
                }
            }
        }
        let local = LocalChanges { written: local_written, moved: local_moved };
        let remote_changes =
            true_moves(git, tree::changes(git, &self.base, &self.remote)?, &building.base, &building.remote)?;
        for change in remote_changes {
            match change {
                Change::Written(path) => building.remote_wrote(&local, &path)?,
                Change::Removed(path) => building.remote_removed(&local, &path),
                Change::Moved { from, to } => building.remote_moved(&local, &from, &to)?,
            }
        }
        let tree = write_tree(git, &building.result)?;
        Ok(Merged { tree, conflicts: building.conflicts })
    }
}

/// What this device changed since the two sides last agreed.
struct LocalChanges {
    /// Paths added or changed.
    written: BTreeSet<String>,
    /// Where each moved path went.
    moved: BTreeMap<String, String>,
}

impl Building<'_> {
    /// The remote added or changed `path`.
    fn remote_wrote(&mut self, local: &LocalChanges, path: &str) -> Result<(), SyncError> {
        let Some(theirs) = self.remote.get(path).cloned() else { return Ok(()) };
        if self.local.get(path) == Some(&theirs) {
            return Ok(());
        }
        if let Some(moved_to) = local.moved.get(path) {
            // Moved here, changed there: the moved file with both changes.
            let moved_to = moved_to.clone();
            return self.merge_into(path, &moved_to, &theirs, &moved_to);
        }
        if let Some(from) =
            local.moved.iter().find(|(_, to)| to.as_str() == path).map(|(from, _)| from.clone())
        {
            // Moved here to the path the remote wrote (git saw the remote's side of the same
            // move as a delete and a write): the moved file with both sides' changes.
            return self.merge_into(&from, path, &theirs, path);
        }
        if local.written.contains(path) {
            let Some(ours) = self.local.get(path).cloned() else { return Ok(()) };
            if self.base.contains_key(path) {
                return self.merge_into(path, path, &theirs, path);
            }
            // Made at one path on both devices: one note (the same id) made twice differs
            // with nothing to merge from, a conflict; two notes both stay.
            if self.same_note(&ours, &theirs)? {
                self.conflict(path, &theirs, &ours)?;
                return Ok(());
            }
            let free = self.free_name(path);
            self.result.insert(free, ours);
        }
        // Changed there and untouched, deleted or new here: the remote's version.
        self.result.insert(path.to_string(), theirs);
        Ok(())
    }

    /// The remote removed `path`.
    fn remote_removed(&mut self, local: &LocalChanges, path: &str) {
        // An edit (or a move) here wins over the delete there.
        if local.written.contains(path) || local.moved.contains_key(path) {
            return;
        }
        self.result.remove(path);
    }

    /// The remote moved `from` to `to` (perhaps changing it too).
    fn remote_moved(&mut self, local: &LocalChanges, from: &str, to: &str) -> Result<(), SyncError> {
        let Some(theirs) = self.remote.get(to).cloned() else { return Ok(()) };
        if local.written.contains(to)
            && !self.base.contains_key(to)
            && let Some(ours) = self.local.get(to).cloned()
            && ours != theirs
        {
            // A file of this device's own at the path the remote moved a note to.
            let free = self.free_name(to);
            self.result.insert(free, ours);
        }
        if let Some(local_to) = local.moved.get(from).cloned() {
            // Moved on both: the remote's place, with both sides' changes.
            self.result.remove(&local_to);
            return self.merge_into(from, to, &theirs, &local_to);
        }
        if local.written.contains(from) {
            self.result.remove(from);
            return self.merge_into(from, to, &theirs, from);
        }
        // Untouched (or deleted) here: the remote's move.
        self.result.remove(from);
        self.result.insert(to.to_string(), theirs);
        Ok(())
    }

    /// Puts at `target` the merge of the base's `base_path`, the remote's `theirs` and
    /// this device's file at `ours_path`; on a conflict, `theirs` with this device's
    /// version beside it as a copy.
    fn merge_into(
        &mut self,
        base_path: &str,
        target: &str,
        theirs: &File,
        ours_path: &str,
    ) -> Result<(), SyncError> {
        let git = self.merge.git;
        let Some(ours) = self.local.get(ours_path).cloned() else {
            self.result.insert(target.to_string(), theirs.clone());
            return Ok(());
        };
        let base_bytes = match self.base.get(base_path) {
            Some(file) => git.blob(&file.oid)?,
            None => Vec::new(),
        };
        let (ours_bytes, theirs_bytes) = (git.blob(&ours.oid)?, git.blob(&theirs.oid)?);
        let texts =
            (String::from_utf8(base_bytes), String::from_utf8(ours_bytes), String::from_utf8(theirs_bytes));
        let merged = match (&texts, ours.mode == theirs.mode) {
            ((Ok(base), Ok(ours_text), Ok(theirs_text)), true) if ours.mode != tree::LINK => {
                merge_note(base, theirs_text, ours_text)
            }
            _ => NoteMerge::Conflict,
        };
        match merged {
            NoteMerge::Clean(text) => {
                let oid = git.store_blob(text.as_bytes())?;
                self.result.insert(target.to_string(), File { mode: theirs.mode.clone(), oid });
            }
            NoteMerge::Conflict => self.conflict(target, theirs, &ours)?,
        }
        Ok(())
    }

    /// Keeps `theirs` at `target` and writes `ours` beside it as a conflict copy.
    fn conflict(&mut self, target: &str, theirs: &File, ours: &File) -> Result<(), SyncError> {
        let git = self.merge.git;
        self.result.insert(target.to_string(), theirs.clone());
        let copy = self.copy_name(target);
        let bytes = conflict_copy(&git.blob(&ours.oid)?, target);
        let oid = git.store_blob(&bytes)?;
        self.result.insert(copy.clone(), File { mode: ours.mode.clone(), oid });
        self.conflicts.push(Conflict { path: target.to_string(), copy, copy_holds_what_came: false });
        Ok(())
    }

    /// Whether two files made at one path are one note (the same `id`) rather than two.
    fn same_note(&self, ours: &File, theirs: &File) -> Result<bool, SyncError> {
        let id = |file: &File| -> Result<Option<String>, SyncError> {
            Ok(note_id(&self.merge.git.blob(&file.oid)?))
        };
        Ok(matches!((id(ours)?, id(theirs)?), (Some(a), Some(b)) if a == b))
    }

    /// The first of `stem-2.ext`, `stem-3.ext`, … free in the merged tree.
    fn free_name(&self, path: &str) -> String {
        let (stem, ext) = split_extension(path);
        (2..)
            .map(|n| format!("{stem}-{n}{ext}"))
            .find(|p| !self.result.contains_key(p) && !self.remote.contains_key(p))
            .unwrap_or_default()
    }

    /// `NAME.conflict-DEVICE-YYYYMMDD-HHMMSS.ext` beside `path`, free in the merged tree.
    fn copy_name(&self, path: &str) -> String {
        copy_name(path, self.merge.device, self.merge.now, |p| self.result.contains_key(p))
    }
}

/// `NAME.conflict-DEVICE-YYYYMMDD-HHMMSS.ext` beside `path` (`-2`, `-3`… after it while
/// `taken`), made by `device` at `now`.
pub(super) fn copy_name(
    path: &str,
    device: &str,
    now: DateTime<Utc>,
    taken: impl Fn(&str) -> bool,
) -> String {
    let (stem, ext) = split_extension(path);
    let device = in_copy_name(device);
    let stamp = now.format("%Y%m%d-%H%M%S");
    let first = format!("{stem}.conflict-{device}-{stamp}{ext}");
    if !taken(&first) {
        return first;
    }
    (2..).map(|n| format!("{stem}.conflict-{device}-{stamp}-{n}{ext}")).find(|p| !taken(p)).unwrap_or(first)
}

/// `device` as a conflict copy's name holds it: letters, digits, `-` and `_` kept, any
/// other character a `-`.
pub(super) fn in_copy_name(device: &str) -> String {
    device.chars().map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect()
}

/// The device named in kb's conflict copy at `path` (as [`in_copy_name`] wrote it), when
/// it is one: `DEVICE` of `NAME.conflict-DEVICE-YYYYMMDD-HHMMSS[-N].ext`.
pub(super) fn copy_device(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let rest = &name[name.find(".conflict-")? + ".conflict-".len()..];
    // The stamp is the last `-` + 8 digits + `-` + 6 digits.
    let bytes = rest.as_bytes();
    let stamp_at = (0..bytes.len()).rev().find(|&at| {
        let digits = |from: usize, count: usize| {
            bytes.get(from..from + count).is_some_and(|d| d.iter().all(u8::is_ascii_digit))
        };
        bytes[at] == b'-' && digits(at + 1, 8) && bytes.get(at + 9) == Some(&b'-') && digits(at + 10, 6)
    })?;
    Some(&rest[..stamp_at]).filter(|device| !device.is_empty())
}

/// `changes` with moves told by the notes' `id`s rather than by git's likeness of content
/// alone:
/// - a move git found between two notes of different `id`s is what it is: one note removed
///   and another written (a note deleted and a like one made from the same template is no
///   move, and an edit of the first must not land in the second);
/// - a note removed at one path and new at another with the same `id` moved, however much
///   it changed on the way (git finds no rename past half the content, and the other side's
///   edits must follow the note rather than stay behind as a second copy).
fn true_moves(git: &Git, changes: Vec<Change>, base: &Files, side: &Files) -> Result<Vec<Change>, SyncError> {
    // Every note whose id is needed: moves' both ends, removed notes, new notes.
    // New notes are read only when a note went (a pull of new notes alone reads nothing).
    let (mut before, mut after, mut new) = (Vec::new(), Vec::new(), Vec::new());
    for change in &changes {
        match change {
            Change::Moved { from, to } => {
                before.push(from.as_str());
                after.push(to.as_str());
            }
            Change::Removed(path) if path.ends_with(".md") => before.push(path),
            Change::Written(path) if path.ends_with(".md") && !base.contains_key(path) => {
                new.push(path.as_str())
            }
            _ => {}
        }
    }
    if before.len() > after.len() {
        after.extend(new);
    }
    let (base_ids, side_ids) = (note_ids(git, base, &before)?, note_ids(git, side, &after)?);
    let id = |ids: &BTreeMap<String, String>, path: &str| ids.get(path).cloned();

    let mut out = Vec::with_capacity(changes.len());
    for change in changes {
        match change {
            Change::Moved { from, to } => match (id(&base_ids, &from), id(&side_ids, &to)) {
                (Some(before), Some(after)) if before != after => {
                    out.push(Change::Removed(from));
                    out.push(Change::Written(to));
                }
                _ => out.push(Change::Moved { from, to }),
            },
            other => out.push(other),
        }
    }
    // An id removed at exactly one path and new at exactly one other is one note moved.
    let mut removed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut added: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for change in &out {
        match change {
            Change::Removed(path) => {
                if let Some(id) = id(&base_ids, path) {
                    removed.entry(id).or_default().push(path.clone());
                }
            }
            Change::Written(path) if !base.contains_key(path) => {
                if let Some(id) = id(&side_ids, path) {
                    added.entry(id).or_default().push(path.clone());
                }
            }
            _ => {}
        }
    }
    let mut moved_to: BTreeMap<String, String> = BTreeMap::new();
    for (id, froms) in &removed {
        if let ([from], Some([to])) = (froms.as_slice(), added.get(id).map(Vec::as_slice)) {
            moved_to.insert(from.clone(), to.clone());
        }
    }
    if moved_to.is_empty() {
        return Ok(out);
    }
    let arrived: BTreeSet<String> = moved_to.values().cloned().collect();
    Ok(out
        .into_iter()
        .filter_map(|change| match change {
            Change::Removed(from) => Some(match moved_to.remove(&from) {
                Some(to) => Change::Moved { from, to },
                None => Change::Removed(from),
            }),
            Change::Written(path) if arrived.contains(&path) && !base.contains_key(&path) => None,
            other => Some(other),
        })
        .collect())
}

/// The `id` of each note of `paths` in `files` that has one, read by one
/// `git cat-file --batch`.
fn note_ids(git: &Git, files: &Files, paths: &[&str]) -> Result<BTreeMap<String, String>, SyncError> {
    let found: Vec<(&str, &str)> =
        paths.iter().filter_map(|path| files.get(*path).map(|file| (*path, file.oid.as_str()))).collect();
    let blobs = git.blobs(&found.iter().map(|(_, oid)| *oid).collect::<Vec<_>>())?;
    let mut ids = BTreeMap::new();
    for ((path, _), bytes) in found.into_iter().zip(blobs) {
        if let Some(id) = note_id(&bytes) {
            ids.insert(path.to_string(), id);
        }
    }
    Ok(ids)
}

/// The `id` in a note's frontmatter, when it has one.
fn note_id(bytes: &[u8]) -> Option<String> {
    let document = kb_domain::frontmatter::parse_document_bytes(bytes).ok()?;
    document.frontmatter?.get_str(kb_domain::fields::keys::ID).map(str::to_string)
}

/// The bytes of a conflict copy of a note at `path`: its own new `id` and `conflict_of`
/// naming the note; other files as they were.
pub(super) fn conflict_copy(bytes: &[u8], path: &str) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(bytes) else { return bytes.to_vec() };
    if !path.ends_with(".md") {
        return bytes.to_vec();
    }
    let mut changes = Frontmatter::new();
    changes.set("id", Value::String(ulid::Ulid::new().to_string()));
    changes.set("conflict_of", Value::String(path.to_string()));
    edit_document(text, &changes, None).map_or_else(|_| bytes.to_vec(), |edited| edited.text.into_bytes())
}

/// `path` as its stem (folder included) and its extension with the dot (`""` without).
fn split_extension(path: &str) -> (&str, &str) {
    let name_start = path.rfind('/').map_or(0, |i| i + 1);
    match path[name_start..].rfind('.') {
        Some(dot) if dot > 0 => path.split_at(name_start + dot),
        _ => (path, ""),
    }
}

/// Writes `files` as a tree (through an index file of its own); its id.
fn write_tree(git: &Git, files: &Files) -> Result<String, SyncError> {
    let index = tempfile_path(git)?;
    let with_index = git.with_index(&index);
    let mut info = Vec::new();
    for (path, file) in files {
        info.extend_from_slice(format!("{} {}\t{path}", file.mode, file.oid).as_bytes());
        info.push(0);
    }
    let written = with_index
        .run_with_input(&["update-index", "--add", "-z", "--index-info"], &info)
        .and_then(|_| with_index.run(&["write-tree"]));
    let _ = std::fs::remove_file(&index);
    Ok(written?.trim().to_string())
}

/// A path for a merge's own index file, in `.kb/sync/`.
fn tempfile_path(git: &Git) -> Result<std::path::PathBuf, SyncError> {
    let git_dir = git.run(&["rev-parse", "--absolute-git-dir"])?;
    Ok(std::path::Path::new(git_dir.trim()).join(format!("kb-merge-index-{}", ulid::Ulid::new())))
}

#[cfg(test)]
mod tests {
    use super::{copy_device, copy_name, in_copy_name};

    #[test]
    fn a_copy_names_its_device_and_the_name_gives_it_back() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-29T12:52:27Z").unwrap().to_utc();
        let copy = copy_name("people/priya-raman.md", "Žofie's iPhone", now, |_| false);
        assert_eq!(copy, "people/priya-raman.conflict-Žofie-s-iPhone-20261129-125227.md");
        assert_eq!(copy_device(&copy), Some(in_copy_name("Žofie's iPhone").as_str()));
        let taken =
            copy_name("att/pic.png", "desk-2", now, |p| p == "att/pic.conflict-desk-2-20261129-125227.png");
        assert_eq!(taken, "att/pic.conflict-desk-2-20261129-125227-2.png");
        assert_eq!(copy_device(&taken), Some("desk-2"));
        assert_eq!(copy_device("notes/a.sync-conflict-20261129-125227-ABC.md"), None);
        assert_eq!(copy_device("notes/a.conflict-20261129-125227.md"), None);
    }
}
