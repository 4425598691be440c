//! Sweeps: the vault's view brought in line with its folders, from their listings alone —
//! a safety net beside the file watcher for events it never delivered (another kb
//! process's change, an outside edit). [`SweepState`] is what the sweeps keep between
//! them.

use std::collections::HashSet;
use std::fs;
use std::sync::atomic::{AtomicBool, Ordering};

use kb_domain::{Category, EntryChange, EntryPath, RepositoryError};

use super::folder_marks::FolderMarks;
use super::reread::Notify;
use super::{Vault, scan};

/// What the sweeps keep between them.
#[derive(Debug, Default)]
pub(crate) struct SweepState {
    /// Whether the vault's view followed a change made elsewhere since the last sweep (see
    /// [`Vault::sweep_if_due`]); this process's own changes need no sweep.
    touched: AtomicBool,
    /// Which folders a sweep need not list again.
    folder_marks: FolderMarks,
}

impl SweepState {
    /// Notes that the vault's view followed a change this process did not make: the moment
    /// to look for changes whose file events went missing.
    pub(crate) fn touch(&self) {
        self.touched.store(true, Ordering::Relaxed);
    }

    /// Whether the view was touched since this was last asked, and from now on not.
    fn take_touched(&self) -> bool {
        self.touched.swap(false, Ordering::Relaxed)
    }
}

impl Vault {
    /// Brings the cache in line with which entry files exist, from the folder listings
    /// alone: entries whose file is gone are forgotten, files not yet known are read.
    /// A safety net beside the file watcher, for events it never delivered (another kb
    /// process's change, an outside edit); returns how many paths it corrected. A folder
    /// that has not changed since a sweep found it in line is not listed again (see
    /// `folder_marks`).
    pub fn sweep(&self) -> usize {
        let marks = &self.sweeps.folder_marks;
        // The listings alone: which files exist, not what they hold (a folder of tens of
        // thousands is then one read of the folder, not a look at every file).
        let mut on_disk = HashSet::new();
        let mut listed = Vec::new();
        for category in Category::ALL {
            // Taken before the listing: a change made during it moves the time again.
            let mark = FolderMarks::look(&self.root.folder(category));
            if marks.unchanged(category, mark) {
                continue;
            }
            match scan::list_folder_paths(&self.root, category) {
                Ok(paths) => {
                    on_disk.extend(paths);
                    listed.push((category, mark));
                }
                Err(error) => {
                    tracing::warn!(%error, folder = category.as_str(), "category folder cannot be listed; skipped");
                }
            }
        }
        if listed.is_empty() {
            self.check_entry_list_file();
            return 0;
        }
        let folders: Vec<Category> = listed.iter().map(|(category, _)| *category).collect();
        let corrected = self.catch_up(&folders, &on_disk);
        if corrected > 0 {
            tracing::debug!(corrected, "the vault's view caught up with its folders");
        } else {
            for (category, mark) in listed {
                marks.clean(category, mark);
            }
        }
        self.check_entry_list_file();
        corrected
    }

    /// Brings the cache in line with `on_disk`, the files a listing of the category
    /// `folders` found (before this call); how many paths it corrected.
    fn catch_up(&self, folders: &[Category], on_disk: &HashSet<EntryPath>) -> usize {
        // A sweep lists the files directly in the category folders: notes deeper down or
        // elsewhere are the watcher's alone.
        let is_listed =
            |path: &EntryPath| path.is_directly_in_category() && folders.contains(&path.category());
        let known = self.lock().cache.known_paths_where(is_listed);
        let known_set: HashSet<&EntryPath> = known.iter().collect();
        let stale = known.iter().filter(|path| !on_disk.contains(path));
        let unknown = on_disk.iter().filter(|path| !known_set.contains(path));
        let mut corrected = 0;
        // All under one hold of the lock, and the observers notified once: a folder of files
        // pulled in is one search-index commit, not one per file.
        let mut state = self.lock();
        let writing = self.history.is_kept().then(|| self.writes.hold());
        let mut changes = Vec::new();
        let mut observed = Vec::new();
        for path in stale.chain(unknown) {
            // The listing is older than the lock: a file named or removed since then, which
            // the cache follows already (a capture of this process during the listing), is
            // nothing to correct. Read again, it would hold every change to the vault
            // meanwhile.
            let on_disk = fs::symlink_metadata(self.root.file(path)).is_ok();
            if on_disk == state.cache.is_taken(path) {
                continue;
            }
            corrected += 1;
            let change = match self.reread_observed(&mut state, path, Notify::EntryListOnly, &mut observed) {
                Ok(Some(entry)) => EntryChange::Upserted(entry),
                Ok(None) => EntryChange::Removed(path.clone()),
                Err(error) => {
                    tracing::debug!(%error, %path, "sweep could not read an entry");
                    // A file that could not be read this time stays as it was known.
                    let unread = !matches!(error, RepositoryError::Malformed { .. });
                    if unread && state.cache.is_taken(path) {
                        continue;
                    }
                    EntryChange::Removed(path.clone())
                }
            };
            changes.push(change);
        }
        if !changes.is_empty() {
            self.changed(&mut state, &changes);
        }
        self.history.observe(observed);
        // Both locks go together: the write lock held past the vault's own would let
        // another thread's change begin in this process meanwhile, and waiting for the
        // vault's lock below while holding it would keep that change waiting for ever.
        drop(writing);
        drop(state);
        corrected
    }

    /// A sweep when the vault's view followed a change made elsewhere since the last one
    /// (the moments events go missing); otherwise only the entry list file is checked. A
    /// full sweep lists every folder, so a process that is idle does not pay for one each
    /// time.
    pub fn sweep_if_due(&self) -> usize {
        if self.sweeps.take_touched() {
            return self.sweep();
        }
        self.check_entry_list_file();
        0
    }

    /// A sweep now, whether one is due or not (see [`Vault::sweep_if_due`]); the next is
    /// due only once the view follows another change made elsewhere.
    pub fn sweep_now(&self) -> usize {
        self.sweeps.take_touched();
        self.sweep()
    }

    /// Rewrites the entry list file when another kb process wrote it since from an older
    /// view of the vault (see [`super::entry_list_file::EntryListFile::check`]).
    pub(super) fn check_entry_list_file(&self) {
        self.entry_list.check(|| self.lock().cache.entry_list_snapshot());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    use kb_domain::{ChangeContext, ChangeObserver, EntryCatalogue, EntryReader, EntryWriter, ListFilter};

    use super::super::tests::{new_entry, open};
    use super::*;

    /// Counts the changes observers hear of.
    #[derive(Default)]
    struct Heard(AtomicUsize);

    impl ChangeObserver for Heard {
        fn entry_changed(&self, _: &EntryChange) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_capture_made_while_the_folders_were_listed_is_not_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let vault = open(dir.path());
        let by = ChangeContext::from_source(kb_domain::ChangeSource::Api);
        let heard = Arc::new(Heard::default());
        vault.add_observer(heard.clone());
        // The listing found the ideas folder empty; a capture came right after it.
        let listing = HashSet::new();
        let kiln = vault.create_as(new_entry(Category::Ideas, "Kiln"), &by).unwrap();
        let heard_of_capture = heard.0.load(Ordering::Relaxed);
        assert_eq!(vault.catch_up(&[Category::Ideas], &listing), 0);
        assert_eq!(heard.0.load(Ordering::Relaxed), heard_of_capture, "nothing changed since the capture");
        assert_eq!(vault.get(&kiln.path).unwrap().name(), "Kiln");

        // Removed behind the vault's back since, it is caught as before.
        fs::remove_file(dir.path().join(kiln.path.to_string())).unwrap();
        assert_eq!(vault.catch_up(&[Category::Ideas], &listing), 1);
        assert_eq!(vault.list(&ListFilter::default()).unwrap().total, 0);
        assert!(heard.0.load(Ordering::Relaxed) > heard_of_capture);
    }
}
