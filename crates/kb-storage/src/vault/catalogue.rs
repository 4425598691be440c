//! Building the cache when the vault opens, from the saved catalogue and the files whose
//! stamps differ from it (see [`super::saved_catalogue`]), and saving the catalogue again:
//! at open when much had to be read, and from a long-lived process now and then.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Instant, SystemTime};

use kb_domain::{CatalogueEntry, EntryPath, FileRead, MalformedFile, Stamp};

use super::cache::{Cache, KnownEntry};
use super::files::Walk;
use super::safe_path::Root;
use super::saved_catalogue::{self, SavedCatalogue, Taken};
use super::{Vault, scan};

/// At open, the catalogue is saved again when at least this many files had to be read or
/// were gone: fewer cost the next start less than writing the whole catalogue would.
const SAVE_AFTER_READS: usize = 64;

/// Files read at open by one thread; more are read by several.
const READS_PER_THREAD: usize = 256;

/// What opening found.
pub(crate) struct Opened {
    /// The entries of the vault as it is on disk, for its cache.
    pub(crate) entries: Unbuilt,
    /// Entries taken from the saved catalogue.
    pub(crate) from_saved: usize,
    /// Files read.
    pub(crate) read: usize,
    /// Whether the catalogue should be saved again once the cache is built: it was missing,
    /// or many files had to be read, or some only because they were that recent.
    pub(crate) save: bool,
    /// When the walk that took the stamps began: every stamp is newer (see
    /// [`saved_catalogue::save`]).
    pub(crate) began: SystemTime,
    /// How the vault differs from the saved catalogue, when it does: the entry list file
    /// may then be out of date (see [`Changed`]).
    pub(crate) changed: Option<Changed>,
}

/// The cache of the vault at `root`, whose folders `walk` listed: each file's saved entry
/// when its stamp says it is current, the file read otherwise; the catalogue saved again
/// when much was read, or when files were read only because they were modified close to
/// the last save. `loaded` is the saved catalogue when it was loaded ahead (it is
/// validated all the same).
pub(crate) fn open(root: &Root, walk: Walk, loaded: Option<SavedCatalogue>) -> Opened {
    let state_dir = root.state_dir();
    // Taken before any stamp is, so every stamp saved is older than it (the racy check).
    let began = SystemTime::now();
    let clock = Instant::now();
    let mut saved = loaded.unwrap_or_else(|| SavedCatalogue::load(&state_dir));
    let loaded = clock.elapsed();
    // A catalogue with no entry is one all the same (an empty vault's): not saved again.
    let had_saved = saved.was_found();
    let mut known = Vec::new();
    let mut to_read = Vec::new();
    let mut racy = 0;
    // The saved records of the entries read only because their stamps were racy.
    let mut racy_saved: HashMap<EntryPath, Arc<CatalogueEntry>> = HashMap::new();
    let mut kept_malformed = Vec::new();
    // The walk (made a moment ago, perhaps by the index's opening) stands for the vault
    // now; the save's time is then when that walk began, before its stamps.
    let (walked, began) = (walk.files, walk.began.min(began));
    for (path, stamp) in &walked {
        match saved.take(path, *stamp) {
            Taken::Current(entry) => known.push((path.clone(), entry)),
            Taken::Changed => to_read.push(path.clone()),
            Taken::Malformed(reason) => kept_malformed.push(MalformedFile { path: path.clone(), reason }),
            Taken::Racy(saved) => {
                // Saving again settles it only once it is older than the racy window.
                if stamp.settled_at(saved_catalogue::nanos(began)) {
                    racy += 1;
                }
                racy_saved.extend(saved.map(|record| (path.clone(), record)));
                to_read.push(path.clone());
            }
        }
    }
    // What is left of the saved catalogue is gone from the vault.
    let gone = saved.untaken_paths();
    let gone_count = gone.len();
    let from_saved = known.len();
    let (read, read_malformed) = read_all(root, &to_read);
    // Malformed files are kept with the stamps the walk gave them (taken before any read).
    let stamps: HashMap<&EntryPath, Stamp> = if read_malformed.is_empty() && kept_malformed.is_empty() {
        HashMap::new()
    } else {
        walked.iter().map(|(path, stamp)| (path, *stamp)).collect()
    };
    let malformed: Vec<(MalformedFile, Option<Stamp>)> = read_malformed
        .into_iter()
        .chain(kept_malformed)
        .map(|file| {
            let stamp = stamps.get(&file.path).copied();
            (file, stamp)
        })
        .collect();
    // A racy file read as it was saved (most often the last one kb wrote) changes no line
    // of the entry list.
    let unchanged: HashSet<&EntryPath> = read
        .iter()
        .filter(|(path, entry)| {
            racy_saved.get(path).is_some_and(|saved| saved.summary == entry.record.summary)
        })
        .map(|(path, _)| path)
        .collect();
    let mut changed_paths: Vec<EntryPath> =
        to_read.iter().filter(|path| !unchanged.contains(path)).cloned().collect();
    changed_paths.extend(gone);
    known.extend(read);
    let read_at = clock.elapsed();
    let save = !had_saved || racy > 0 || to_read.len() + gone_count >= SAVE_AFTER_READS;
    tracing::debug!(
        load_ms = loaded.as_millis(),
        read_ms = (read_at - loaded).as_millis(),
        "where the vault's opening went"
    );
    let read = to_read.len();
    let changed = match (had_saved, changed_paths.is_empty()) {
        (false, _) => Some(Changed::Everything),
        (true, true) => None,
        (true, false) => Some(Changed::Files(changed_paths)),
    };
    Opened { entries: Unbuilt { known, malformed }, from_saved, read, save, changed, began }
}

/// How the vault differs from its saved catalogue.
pub(crate) enum Changed {
    /// There was no catalogue (or it could not be used): every file is new.
    Everything,
    /// The files read (new or changed since, but not those read only for a racy stamp
    /// that hold what was saved) and those gone.
    Files(Vec<EntryPath>),
}

/// The vault's entries as opening found them, before the cache is built from them: the
/// cache is built when first needed, so a command that needs only the search index (a
/// search) does not pay for it.
pub(crate) struct Unbuilt {
    known: Vec<(EntryPath, KnownEntry)>,
    /// The files that are not readable entries, with their stamps when the walk gave one.
    malformed: Vec<(MalformedFile, Option<Stamp>)>,
}

impl Unbuilt {
    /// How many readable entries and malformed files there are.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.known.len(), self.malformed.len())
    }

    /// The cache of these entries, and the malformed files with their stamps (for the
    /// catalogue).
    pub(crate) fn build(self) -> (Cache, Vec<(EntryPath, Stamp, String)>) {
        let clock = Instant::now();
        let mut cache = Cache::of_known(self.known);
        let mut stamped = Vec::new();
        for (file, stamp) in self.malformed {
            tracing::warn!(path = %file.path, reason = %file.reason, "skipping malformed entry file");
            cache.mark_malformed(&file);
            stamped.extend(stamp.map(|stamp| (file.path, stamp, file.reason)));
        }
        tracing::debug!(build_ms = clock.elapsed().as_millis(), "the vault's view is built");
        (cache, stamped)
    }
}

/// Reads the files at `paths`: the entries with their stamps, and the malformed files.
/// Many files are read by several threads.
fn read_all(root: &Root, paths: &[EntryPath]) -> (Vec<(EntryPath, KnownEntry)>, Vec<MalformedFile>) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
    let per_thread = paths.len().div_ceil(threads).max(READS_PER_THREAD);
    let mut read = Vec::with_capacity(paths.len());
    let mut malformed = Vec::new();
    std::thread::scope(|scope| {
        let parts: Vec<_> =
            paths.chunks(per_thread).map(|part| scope.spawn(move || read_part(root, part))).collect();
        for part in parts {
            // A thread that panicked read nothing of use: its files are read here instead.
            let (entries, bad) = part.join().unwrap_or_else(|_| (Vec::new(), Vec::new()));
            read.extend(entries);
            malformed.extend(bad);
        }
    });
    (read, malformed)
}

fn read_part(root: &Root, paths: &[EntryPath]) -> (Vec<(EntryPath, KnownEntry)>, Vec<MalformedFile>) {
    let mut read = Vec::with_capacity(paths.len());
    let mut malformed = Vec::new();
    for path in paths {
        match scan::read_stamped(root, path) {
            FileRead::Entry(entry, stamp, _) => read.push((path.clone(), KnownEntry::read(&entry, stamp))),
            FileRead::Malformed(reason) => malformed.push(MalformedFile { path: path.clone(), reason }),
            FileRead::Missing => {}
        }
    }
    (read, malformed)
}

impl Vault {
    /// Saves the catalogue when the cache changed since it was last saved by this process:
    /// what a long-lived process does now and then and when it closes, so that the next
    /// start reads only what changed after. The entries kb wrote itself are checked against
    /// their files first (read again), so only what a file holds is saved with its stamp.
    /// The time saved is when the vault's opening walk began, before every stamp in the
    /// cache was taken, so an entry read at open from a file modified just before is
    /// still read again by the next start (the racy check).
    pub fn save_catalogue(&self) {
        let (version, (mut known, unstamped), began) = {
            let state = self.lock();
            (state.cache.version(), state.cache.known_entries(), state.stamps_since)
        };
        if self.catalogue_saved.load(Ordering::Acquire) == version {
            return;
        }
        let (checked, _) = read_all(&self.root, &unstamped);
        {
            let mut state = self.lock();
            for (path, entry) in &checked {
                state.cache.confirm_stamp(path, entry);
            }
        }
        known.extend(checked);
        // The malformed files are left out (the cache has no stamps for them): the next
        // start reads them again, and saves them.
        match saved_catalogue::save(&self.root.state_dir(), &known, &[], began) {
            Ok(()) => self.catalogue_saved.store(version, Ordering::Release),
            Err(error) => tracing::warn!(%error, "the catalogue cannot be saved"),
        }
    }

    /// Saves the catalogue of `cache`, just built from the opening's walk begun at
    /// `began` (every entry in it has its stamp), with the `malformed` files.
    pub(super) fn save_opened(
        &self,
        cache: &Cache,
        malformed: &[(EntryPath, Stamp, String)],
        began: SystemTime,
    ) {
        let (known, _) = cache.known_entries();
        match saved_catalogue::save(&self.root.state_dir(), &known, malformed, began) {
            Ok(()) => self.catalogue_saved.store(cache.version(), Ordering::Release),
            Err(error) => {
                tracing::warn!(%error, "the catalogue cannot be saved; the next start reads the vault again");
            }
        }
    }

    /// Saves the catalogue every `every` in a background thread (see
    /// [`Vault::save_catalogue`]) while the vault is open.
    pub fn save_catalogue_in_background(self: &std::sync::Arc<Self>, every: std::time::Duration) {
        let vault = std::sync::Arc::downgrade(self);
        let started = std::thread::Builder::new().name("kb-catalogue-save".into()).spawn(move || {
            crate::background::yield_to_requests();
            loop {
                std::thread::sleep(every);
                let Some(vault) = vault.upgrade() else { return };
                vault.save_catalogue();
            }
        });
        if let Err(error) = started {
            tracing::warn!(%error, "could not start saving the catalogue in the background");
        }
    }
}
