//! Merging entries into one, as one change: the target is written anew with the sources'
//! notes and list fields ([`kb_domain::merge::merge_entries`]), the sources are removed,
//! and references to them in other entries point at the target. Every file is checked and
//! read before anything is written: a missing, linked or malformed one refuses the merge
//! and changes nothing. History records the whole merge as one operation, so one undo puts
//! every file back to its very bytes.

use std::fs;
use std::path::PathBuf;

use chrono::NaiveDate;
use kb_domain::merge::{check_merge, merge_entries};
use kb_domain::{ChangeContext, Entry, EntryChange, EntryPath, FileChange, MergeOutcome, RepositoryError};

use super::safe_path::io_error;
use super::{Vault, atomic, journal, scan};

/// A source as read before the merge: where, what, and its file's text.
struct Source {
    path: EntryPath,
    file: PathBuf,
    entry: Entry,
    text: String,
}

impl Vault {
    /// Merges `sources` into `target` (see [`kb_domain::EntryRepository::merge_as`]).
    #[tracing::instrument(skip_all, fields(target = %target, sources = sources.len(), references))]
    pub(crate) fn merge(
        &self,
        target: &EntryPath,
        sources: &[EntryPath],
        on: NaiveDate,
        by: &ChangeContext,
    ) -> Result<MergeOutcome, RepositoryError> {
        check_merge(target, sources)?;
        let mut state = self.lock();
        let _writing = self.writes.hold();
        // Every file is checked and read before anything changes.
        let target_file = self.known_gone(&mut state, target, self.root.checked_writable_file(target))?;
        let mut files = Vec::with_capacity(sources.len());
        for source in sources {
            files.push(self.known_gone(&mut state, source, self.root.checked_writable_file(source))?);
        }
        let (target_entry, target_text) = scan::read_existing_document(&target_file, target)?;
        let mut read = Vec::with_capacity(sources.len());
        for (path, file) in sources.iter().zip(files) {
            let (entry, text) = scan::read_existing_document(&file, path)?;
            read.push(Source { path: path.clone(), file, entry, text });
        }
        let source_entries: Vec<Entry> = read.iter().map(|s| s.entry.clone()).collect();
        let merged = merge_entries(&target_entry, &source_entries, on, self.clock.now())?;

        atomic::write_atomic(&target_file, merged.text.as_bytes()).map_err(|e| io_error(&target_file, e))?;
        for (n, source) in read.iter().enumerate() {
            match fs::remove_file(&source.file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    tracing::warn!(source = %source.path, "a merged entry's file was already gone");
                }
                Err(e) => {
                    self.unmerge(&target_file, &target_text, &read[..n]);
                    return Err(io_error(&source.file, e));
                }
            }
        }
        // The merge has happened: a folder that cannot be synced is reported, not undone.
        let mut folders = vec![self.root.folder(target.category())];
        for source in &read {
            let folder = self.root.folder(source.path.category());
            if !folders.contains(&folder) {
                folders.push(folder);
            }
        }
        for folder in &folders {
            if let Err(e) = atomic::sync_dir(folder) {
                tracing::warn!(error = %e, folder = %folder.display(), "could not sync a folder after a merge");
            }
        }

        let names: Vec<String> = read.iter().map(|s| s.path.to_string()).collect();
        let mut recorded = vec![FileChange {
            entry_id: merged.entry.id().map(str::to_string),
            path_before: Some(target.clone()),
            path_after: Some(target.clone()),
            before: Some(target_text.into_bytes()),
            after: Some(merged.text.into_bytes()),
            description: format!("Merged {} into {target}", names.join(", ")),
        }];
        for source in &read {
            recorded.push(FileChange {
                entry_id: source.entry.id().map(str::to_string),
                path_before: Some(source.path.clone()),
                path_after: None,
                before: Some(source.text.clone().into_bytes()),
                after: None,
                description: format!("Merged {} into {target} (removed)", source.path),
            });
        }
        state.cache.insert(&merged.entry);
        let mut changes = vec![EntryChange::Upserted(merged.entry.clone())];

        // Other entries' references to a source now point at the target.
        let mut referrers: Vec<EntryPath> = Vec::new();
        for source in sources {
            for referrer in state.cache.referrers_of(source) {
                if &referrer != target && !sources.contains(&referrer) && !referrers.contains(&referrer) {
                    referrers.push(referrer);
                }
            }
        }
        referrers.sort();
        for source in sources {
            state.cache.remove(source);
            changes.push(EntryChange::Removed(source.clone()));
        }
        let mut references_updated = Vec::new();
        for referrer in &referrers {
            let before = self.bytes_for_history(referrer);
            let mut after = None;
            for source in sources {
                match journal::retarget_file(&self.root, referrer, source, target) {
                    Ok(Some(text)) => after = Some(text),
                    Ok(None) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, %referrer, %source, "a reference to a merged entry could not be updated");
                    }
                }
            }
            let Some(text) = after else { continue };
            recorded.push(FileChange {
                entry_id: super::revisions::entry_id_of(referrer, text.as_bytes()),
                path_before: Some(referrer.clone()),
                path_after: Some(referrer.clone()),
                before,
                after: Some(text.clone().into_bytes()),
                description: format!("Pointed {referrer}'s references to {} at {target}", names.join(", ")),
            });
            if let Ok(entry) = Entry::from_document(referrer.clone(), &text) {
                state.cache.insert(&entry);
                changes.push(EntryChange::Upserted(entry));
            }
            references_updated.push(referrer.clone());
        }
        tracing::Span::current().record("references", references_updated.len());

        self.record(by, None, recorded);
        self.changed(&mut state, &changes);
        Ok(MergeOutcome { entry: merged.entry, removed: sources.to_vec(), references_updated })
    }

    /// Puts back what a merge that failed part-way changed: the target's old text and the
    /// sources already removed. Best effort: what cannot be put back is logged.
    fn unmerge(&self, target_file: &std::path::Path, target_text: &str, removed: &[Source]) {
        if let Err(e) = atomic::write_atomic(target_file, target_text.as_bytes()) {
            tracing::error!(error = %e, file = %target_file.display(), "a failed merge could not put the target back");
        }
        for source in removed {
            if let Err(e) = atomic::write_atomic(&source.file, source.text.as_bytes()) {
                tracing::error!(error = %e, source = %source.path, "a failed merge could not put a source back");
            }
        }
    }
}
