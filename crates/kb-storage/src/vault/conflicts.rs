//! Resolving a sync conflict ([`kb_domain::conflicts`]) as one change: the files it
//! touches (the copy, and the note when the copy's version wins) are recorded in history
//! together before any is written, so one undo puts both back.

use std::fs;

use kb_domain::conflicts::{CONFLICT_OF, ConflictKeep, Resolved, copy_as_note, copy_kept, is_conflict_copy};
use kb_domain::{ChangeContext, Entry, EntryChange, EntryPath, FileChange, RepositoryError};

use super::safe_path::io_error;
use super::{Vault, atomic, scan};

impl Vault {
    /// The conflict copy `path` names: itself when it is one, else the one copy beside the
    /// note at `path` (refused when there is none or more than one).
    pub fn conflict_copy_of(&self, path: &EntryPath) -> Result<EntryPath, RepositoryError> {
        if is_conflict_copy(path.as_str()) {
            return Ok(path.clone());
        }
        let stem = path.as_str().strip_suffix(".md").unwrap_or(path.as_str());
        let copies: Vec<String> = crate::sync::conflict_copies(self.root.dir())
            .into_iter()
            .filter(|copy| copy.strip_prefix(stem).is_some_and(|rest| rest.starts_with(".conflict-")))
            .collect();
        let refused = |reason: String| RepositoryError::NotAConflict { path: path.to_string(), reason };
        match copies.as_slice() {
            [one] => {
                EntryPath::parse(one).map_err(|_| refused(format!("its copy {one} is not a vault path")))
            }
            [] => Err(RepositoryError::NoConflictCopy(path.clone())),
            many => Err(refused(format!(
                "it has {} conflict copies: name the one to resolve ({})",
                many.len(),
                many.join(", ")
            ))),
        }
    }

    /// Resolves the conflict whose copy is at `copy` by keeping `keep` (see
    /// [`kb_domain::conflicts`]).
    #[tracing::instrument(skip_all, fields(copy = %copy, keep = keep.as_str()))]
    pub fn resolve_conflict(
        &self,
        copy: &EntryPath,
        keep: ConflictKeep,
        by: &ChangeContext,
    ) -> Result<Resolved, RepositoryError> {
        let mut state = self.lock();
        let _writing = self.writes.hold();
        let copy_file = self.forget_if_missing(&mut state, copy, self.root.checked_writable_file(copy))?;
        let (copy_entry, copy_text) = scan::read_existing_document(&copy_file, copy)?;
        let refused =
            |reason: &str| RepositoryError::NotAConflict { path: copy.to_string(), reason: reason.into() };
        let note = copy_entry
            .frontmatter
            .get_str(CONFLICT_OF)
            .ok_or_else(|| refused("it has no conflict_of field naming its note"))?;
        let note =
            EntryPath::parse(note).map_err(|_| refused("its conflict_of field is not a vault path"))?;
        if &note == copy {
            return Err(refused("its conflict_of field names itself"));
        }
        let malformed = |path: &EntryPath, e: kb_domain::FrontmatterError| RepositoryError::Malformed {
            path: path.clone(),
            reason: e.to_string(),
        };
        let mut changes = Vec::new();
        let mut written: Vec<(std::path::PathBuf, EntryPath, String)> = Vec::new();
        let mut kept_as = None;
        match keep {
            ConflictKeep::Theirs | ConflictKeep::Mine => {
                if keep == ConflictKeep::Mine {
                    let note_file = self.root.checked_writable_file(&note)?;
                    let (note_entry, note_text) = scan::read_existing_document(&note_file, &note)?;
                    let after = copy_as_note(&copy_text, note_entry.id()).map_err(|e| malformed(copy, e))?;
                    changes.push(FileChange {
                        entry_id: note_entry.id().map(str::to_string),
                        path_before: Some(note.clone()),
                        path_after: Some(note.clone()),
                        before: Some(note_text.into_bytes()),
                        after: Some(after.clone().into_bytes()),
                        description: format!("Kept the version in {copy} as {note}"),
                    });
                    written.push((note_file, note.clone(), after));
                }
                changes.push(FileChange {
                    entry_id: copy_entry.id().map(str::to_string),
                    path_before: Some(copy.clone()),
                    path_after: None,
                    before: Some(copy_text.clone().into_bytes()),
                    after: None,
                    description: format!("Resolved the conflict of {note}: removed {copy}"),
                });
            }
            ConflictKeep::Both => {
                // A note of its own, under the note's name with the next free number.
                let note_has_id = self
                    .root
                    .checked_file(&note)
                    .ok()
                    .and_then(|file| scan::read_existing_document(&file, &note).ok())
                    .is_some_and(|(entry, _)| entry.id().is_some());
                let after = copy_kept(&copy_text, note_has_id).map_err(|e| malformed(copy, e))?;
                let stem = note.as_str().strip_suffix(".md").unwrap_or(note.as_str()).to_string();
                let kept = (2..1_000)
                    .filter_map(|n| EntryPath::parse(&format!("{stem}-{n}.md")).ok())
                    .find(|path| self.root.file(path).symlink_metadata().is_err())
                    .ok_or_else(|| refused("no free name is left beside the note"))?;
                // Beside the note, whose folder was checked with the copy's.
                let kept_file = self.root.file(&kept);
                changes.push(FileChange {
                    entry_id: copy_entry.id().map(str::to_string),
                    path_before: Some(copy.clone()),
                    path_after: Some(kept.clone()),
                    before: Some(copy_text.clone().into_bytes()),
                    after: Some(after.clone().into_bytes()),
                    description: format!("Kept both versions of {note}: {copy} is now {kept}"),
                });
                written.push((kept_file, kept.clone(), after));
                kept_as = Some(kept);
            }
        }
        // Everything is in history before any file changes.
        let recorded = self.history.record_first(by, None, changes)?;
        let touched: Vec<EntryPath> =
            [note.clone(), copy.clone()].into_iter().chain(kept_as.clone()).collect();
        let mut made = Vec::new();
        for (n, (file, path, text)) in written.iter().enumerate() {
            if let Err(e) = atomic::write_atomic(file, text.as_bytes()) {
                // Refused at its first write, nothing changed: the change leaves history.
                if n == 0 {
                    self.take_back(&recorded, &touched);
                } else {
                    self.observe_after_failure(&touched);
                }
                return Err(io_error(file, e));
            }
            if let Ok(entry) = Entry::from_document(path.clone(), text) {
                state.cache.insert(&entry);
                made.push(EntryChange::Upserted(entry));
            }
        }
        // Whichever is kept, the copy's file goes.
        if let Err(e) = fs::remove_file(&copy_file) {
            self.observe_after_failure(&touched);
            return Err(io_error(&copy_file, e));
        }
        state.cache.remove(copy);
        made.push(EntryChange::Removed(copy.clone()));
        self.history.written(by, &recorded);
        self.made(&mut state, &made, by.person.as_deref());
        Ok(Resolved { note, copy: copy.clone(), keep, kept_as })
    }
}
