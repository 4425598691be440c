//! Which category folders may have gained, lost or renamed a file since the vault's view
//! was last found in line with them. Adding, removing or renaming a file in a folder
//! changes the folder's modification time, so a folder whose time is what it was at the
//! last clean sweep need not be listed again: a quiet vault of a hundred thousand entries
//! is then checked with five `stat` calls, not five listings.
//!
//! A time is remembered only once it is [`SETTLED`]: file systems stamp times at a coarse
//! grain (the kernel's tick; two seconds on FAT), so a change made in the same grain as
//! the last look could leave the time as it was. A change after a time has settled always
//! moves it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use kb_domain::Category;
use kb_domain::sync::lock;

/// How old a folder's modification time must be before it is trusted to move with the
/// next change (the coarsest grain of the file systems kb may run on).
pub(crate) const SETTLED: Duration = Duration::from_secs(2);

/// The modification time of each category folder at the last sweep that found it in line
/// with the vault's view.
#[derive(Debug, Default)]
pub(crate) struct FolderMarks {
    clean: Mutex<HashMap<Category, SystemTime>>,
}

/// A folder's modification time, taken before it is listed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark(Option<SystemTime>);

impl FolderMarks {
    /// The mark of `folder` now (none when it cannot be read: it is then always listed).
    pub(crate) fn look(folder: &Path) -> Mark {
        Mark(std::fs::metadata(folder).and_then(|m| m.modified()).ok())
    }

    /// Whether `category`'s folder, now at `mark`, is as it was at its last clean sweep.
    pub(crate) fn unchanged(&self, category: Category, mark: Mark) -> bool {
        mark.0.is_some() && lock(&self.clean).get(&category).copied() == mark.0
    }

    /// Remembers `mark`, taken before a listing that matched the view, when it has
    /// settled; otherwise the folder is listed again next time.
    pub(crate) fn clean(&self, category: Category, mark: Mark) {
        let settled =
            mark.0.filter(|time| SystemTime::now().duration_since(*time).is_ok_and(|age| age >= SETTLED));
        let mut clean = lock(&self.clean);
        match settled {
            Some(time) => clean.insert(category, time),
            None => clean.remove(&category),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_trusted_only_once_its_time_has_settled_and_until_it_moves() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path();
        let marks = FolderMarks::default();
        let fresh = FolderMarks::look(folder);
        marks.clean(Category::Ideas, fresh);
        assert!(!marks.unchanged(Category::Ideas, FolderMarks::look(folder)), "a fresh time was trusted");

        let old = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::open(folder).unwrap().set_modified(old).unwrap();
        let settled = FolderMarks::look(folder);
        marks.clean(Category::Ideas, settled);
        assert!(marks.unchanged(Category::Ideas, FolderMarks::look(folder)));
        assert!(!marks.unchanged(Category::People, FolderMarks::look(folder)), "another folder is not clean");

        std::fs::write(folder.join("new.md"), "x").unwrap();
        assert!(!marks.unchanged(Category::Ideas, FolderMarks::look(folder)), "a new file went unseen");
        assert!(!marks.unchanged(Category::Ideas, FolderMarks::look(&folder.join("gone"))));
    }
}
