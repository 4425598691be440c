//! [`Indexed`]: what the index holds, by the stamp of the file each entry was read from,
//! kept in memory by the process that owns the index so that an event about a file kb
//! itself just wrote is recognised and skipped; and the entries an earlier owner changed
//! that this process is yet to report.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use kb_domain::sync::lock;
use kb_domain::{EntryPath, Stamp};

use super::Change;

/// What is indexed (see the module documentation).
pub(super) struct Indexed {
    /// The stamp of the file each indexed entry was read from.
    stamps: Mutex<HashMap<EntryPath, Stamp>>,
    /// Entries another owner indexed (or dropped) while this process did not own the
    /// index, found on taking it over: this process's view of the vault may not have seen
    /// them change yet (their file events can come after the takeover, when the index has
    /// them already), so the next sync that looks at one reports it changed, once.
    unreported: Mutex<HashSet<EntryPath>>,
    /// Entries whose files were modified just before the index's last commit, with the
    /// stamps they were indexed with (their stamps in `stamps` are unknown): a file found
    /// with that stamp still may or may not be the version indexed. Taken by the first
    /// comparison with the files on disk, which has them checked against their stored
    /// documents.
    doubted: Mutex<HashMap<EntryPath, Stamp>>,
}

/// How the files on disk differ from what is indexed.
pub(super) struct Differences {
    /// Files whose stamp differs from the indexed one (or that are not indexed).
    pub(super) changed: Vec<EntryPath>,
    /// Indexed entries whose file is gone.
    pub(super) gone: Vec<EntryPath>,
    /// How many of `changed` are not indexed at all.
    pub(super) added: usize,
    /// Files with the stamp a doubted entry was indexed with: their stored documents tell
    /// whether they changed.
    pub(super) doubted: Vec<(EntryPath, Stamp)>,
}

impl Indexed {
    /// What an index opened with these stamps holds, doubting the `doubted` entries.
    pub(super) fn new(stamps: HashMap<EntryPath, Stamp>, doubted: HashMap<EntryPath, Stamp>) -> Indexed {
        Indexed { stamps: Mutex::new(stamps), unreported: Mutex::default(), doubted: Mutex::new(doubted) }
    }

    /// The stamp `path` is indexed with.
    pub(super) fn stamp(&self, path: &EntryPath) -> Option<Stamp> {
        lock(&self.stamps).get(path).copied()
    }

    /// Every indexed path with its stamp, as now.
    pub(super) fn snapshot(&self) -> HashMap<EntryPath, Stamp> {
        lock(&self.stamps).clone()
    }

    /// Records changes as indexed (queued or committed).
    pub(super) fn record(&self, changes: &[Change]) {
        let mut stamps = lock(&self.stamps);
        for change in changes {
            match change {
                Change::Upsert(entry, stamp, _) => stamps.insert(entry.path.clone(), *stamp),
                Change::Remove(path) => stamps.remove(path),
            };
        }
    }

    /// Records the stamp each path is indexed with now (`None`: removed).
    pub(super) fn record_staged(&self, staged: &[(EntryPath, Option<Stamp>)]) {
        let mut stamps = lock(&self.stamps);
        for (path, stamp) in staged {
            match stamp {
                Some(stamp) => stamps.insert(path.clone(), *stamp),
                None => stamps.remove(path),
            };
        }
    }

    /// Forgets what is indexed for `paths`, so that their files are read again.
    pub(super) fn forget(&self, paths: &[EntryPath]) {
        let mut stamps = lock(&self.stamps);
        for path in paths {
            stamps.remove(path);
        }
    }

    /// Whether `path` was among the entries yet to be reported, which it leaves now.
    pub(super) fn take_unreported(&self, path: &EntryPath) -> bool {
        let mut unreported = lock(&self.unreported);
        !unreported.is_empty() && unreported.remove(path)
    }

    /// Replaces what is known with what the index holds on taking it over: the entries
    /// that differ are yet to be reported.
    pub(super) fn take_over(&self, indexed: HashMap<EntryPath, Stamp>) {
        let mut stamps = lock(&self.stamps);
        let changed = indexed.iter().filter(|(path, stamp)| stamps.get(*path) != Some(*stamp));
        let dropped = stamps.keys().filter(|path| !indexed.contains_key(*path));
        let unreported: Vec<EntryPath> = changed.map(|(path, _)| path).chain(dropped).cloned().collect();
        lock(&self.unreported).extend(unreported);
        *stamps = indexed;
    }

    /// How the files `on_disk` (each path once, as a walk of the vault gives them) differ
    /// from what is indexed. Takes the doubted entries.
    pub(super) fn differences(&self, on_disk: &[(EntryPath, Stamp)]) -> Differences {
        let stamps = lock(&self.stamps);
        let mut doubts = std::mem::take(&mut *lock(&self.doubted));
        let (mut changed, mut doubted) = (Vec::new(), Vec::new());
        let (mut indexed_on_disk, mut added) = (0, 0);
        for (path, stamp) in on_disk {
            match stamps.get(path) {
                Some(indexed) => {
                    indexed_on_disk += 1;
                    if indexed == stamp {
                        continue;
                    }
                    match doubts.remove(path) {
                        Some(was) if was == *stamp => doubted.push((path.clone(), *stamp)),
                        _ => changed.push(path.clone()),
                    }
                }
                None => {
                    added += 1;
                    changed.push(path.clone());
                }
            }
        }
        // When every indexed path is on disk nothing is gone, and the indexed paths need not
        // be looked up one by one (the usual start, at 100,000 entries a tenth of a second).
        let gone: Vec<EntryPath> = if indexed_on_disk == stamps.len() {
            Vec::new()
        } else {
            let present: HashSet<&EntryPath> = on_disk.iter().map(|(p, _)| p).collect();
            stamps.keys().filter(|p| !present.contains(p)).cloned().collect()
        };
        Differences { changed, gone, added, doubted }
    }

    /// Records a catch-up: `removed` are dropped, `indexed` are indexed with their stamps.
    /// How many of `removed` were indexed.
    pub(super) fn caught_up<'a>(
        &self,
        removed: impl IntoIterator<Item = &'a EntryPath>,
        indexed: Vec<(EntryPath, Stamp)>,
    ) -> usize {
        let mut stamps = lock(&self.stamps);
        let dropped = removed.into_iter().filter(|path| stamps.remove(*path).is_some()).count();
        stamps.extend(indexed);
        dropped
    }
}
