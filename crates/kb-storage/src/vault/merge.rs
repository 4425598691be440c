//! Merging entries into one, as one change: the target is written anew with the sources'
//! notes and list fields ([`kb_domain::merge::merge_entries`]), the sources are removed,
//! and references to them in other entries point at the target. Every file is checked and
//! read before anything is written: a missing, linked or malformed one refuses the merge
//! and changes nothing. History records the whole merge as one operation before any file
//! changes (a merge that cannot be recorded is not made), so one undo puts every file back
//! to its very bytes.

use std::fs;
use std::path::PathBuf;

use chrono::NaiveDate;
use kb_domain::merge::{check_merge, merge_entries};
use kb_domain::{ChangeContext, Entry, EntryChange, EntryPath, FileChange, MergeOutcome, RepositoryError};

use super::safe_path::io_error;
use super::{Vault, atomic, scan};

/// An entry whose references to a source are pointed at the target: its file's text
/// before and after.
struct Rewrite {
    path: EntryPath,
    file: PathBuf,
    before: String,
    after: String,
}

/// A source as read before the merge: where, what, and its file's text.
struct Source {
    path: EntryPath,
    file: PathBuf,
    entry: Entry,
    text: String,
}

impl Vault {
    /// Merges `sources` into `target` (see [`kb_domain::EntryWriter::merge_as`]).
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
        let target_file =
            self.forget_if_missing(&mut state, target, self.root.checked_writable_file(target))?;
        let mut files = Vec::with_capacity(sources.len());
        for source in sources {
            files.push(self.forget_if_missing(
                &mut state,
                source,
                self.root.checked_writable_file(source),
            )?);
        }
        let (target_entry, target_text) = scan::read_existing_document(&target_file, target)?;
        let mut read = Vec::with_capacity(sources.len());
        for (path, file) in sources.iter().zip(files) {
            let (entry, text) = scan::read_existing_document(&file, path)?;
            read.push(Source { path: path.clone(), file, entry, text });
        }
        let source_entries: Vec<Entry> = read.iter().map(|s| s.entry.clone()).collect();
        let merged = merge_entries(&target_entry, &source_entries, on, self.clock.now())?;

        // Other entries' references to a source will point at the target: their new text
        // is made now, so the whole merge is in history before any file changes.
        let mut referrers: Vec<EntryPath> = Vec::new();
        for source in sources {
            let wikilinked = state.cache.wikilink_sources(source, target);
            for referrer in state.cache.referrers_of(source).into_iter().chain(wikilinked) {
                if &referrer != target && !sources.contains(&referrer) && !referrers.contains(&referrer) {
                    referrers.push(referrer);
                }
            }
        }
        referrers.sort();
        let mut rewrites = Vec::new();
        for referrer in referrers {
            let Some(file) = self.root.checked_writable_file(&referrer).ok() else { continue };
            let Ok(before) = fs::read_to_string(&file) else { continue };
            let mut after = before.clone();
            for source in sources {
                if let Some(changed) = state.cache.retarget_links(&referrer, &after, source, target) {
                    after = changed;
                }
            }
            if after != before {
                rewrites.push(Rewrite { path: referrer, file, before, after });
            }
        }

        let names: Vec<String> = read.iter().map(|s| s.path.to_string()).collect();
        let mut recorded = vec![FileChange {
            entry_id: merged.entry.id().map(str::to_string),
            path_before: Some(target.clone()),
            path_after: Some(target.clone()),
            before: Some(target_text.clone().into_bytes()),
            after: Some(merged.text.clone().into_bytes()),
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
        for rewrite in &rewrites {
            recorded.push(FileChange {
                entry_id: super::revisions::entry_id_of(&rewrite.path, rewrite.after.as_bytes()),
                path_before: Some(rewrite.path.clone()),
                path_after: Some(rewrite.path.clone()),
                before: Some(rewrite.before.clone().into_bytes()),
                after: Some(rewrite.after.clone().into_bytes()),
                description: format!(
                    "Pointed {}'s references to {} at {target}",
                    rewrite.path,
                    names.join(", ")
                ),
            });
        }
        // Every file the merge replaces or removes is in history before it changes.
        let revisions = self.history.record_first(by, None, recorded)?;
        let touched: Vec<EntryPath> = std::iter::once(target.clone())
            .chain(read.iter().map(|s| s.path.clone()))
            .chain(rewrites.iter().map(|r| r.path.clone()))
            .collect();

        if let Err(e) = atomic::write_atomic(&target_file, merged.text.as_bytes()) {
            self.take_back(&revisions, &touched);
            return Err(io_error(&target_file, e));
        }
        for (n, source) in read.iter().enumerate() {
            match fs::remove_file(&source.file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    tracing::warn!(source = %source.path, "a merged entry's file was already gone");
                }
                Err(e) => {
                    // Put back as it was, the merge is taken out of history.
                    self.unmerge(&target_file, &target_text, &read[..n]);
                    self.take_back(&revisions, &touched);
                    return Err(io_error(&source.file, e));
                }
            }
        }
        // The merge has happened: a folder that cannot be synced is reported, not undone.
        let mut folders = vec![self.root.folder_of(target)];
        for source in &read {
            let folder = self.root.folder_of(&source.path);
            if !folders.contains(&folder) {
                folders.push(folder);
            }
        }
        for folder in &folders {
            if let Err(e) = atomic::sync_dir(folder) {
                tracing::warn!(error = %e, folder = %folder.display(), "could not sync a folder after a merge");
            }
        }

        state.cache.insert(&merged.entry);
        let mut changes = vec![EntryChange::Upserted(merged.entry.clone())];
        for source in sources {
            state.cache.remove(source);
            changes.push(EntryChange::Removed(source.clone()));
        }
        let mut references_updated = Vec::new();
        let mut unwritten = Vec::new();
        for rewrite in &rewrites {
            if let Err(e) = atomic::write_atomic(&rewrite.file, rewrite.after.as_bytes()) {
                tracing::warn!(error = %e, referrer = %rewrite.path, "a reference to a merged entry could not be updated");
                unwritten.push(rewrite.path.clone());
                continue;
            }
            if let Ok(entry) = Entry::from_document(rewrite.path.clone(), &rewrite.after) {
                state.cache.insert(&entry);
                changes.push(EntryChange::Upserted(entry));
            }
            references_updated.push(rewrite.path.clone());
        }
        // History recorded those rewrites: they leave it, as they did not happen.
        let revisions = self.take_back_unwritten(revisions, &unwritten);
        tracing::Span::current().record("references", references_updated.len());

        self.history.written(by, &revisions);
        self.made(&mut state, &changes, by.person.as_deref());
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
