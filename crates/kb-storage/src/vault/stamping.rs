//! Stamping the files a walk of the vault lists, on every core: the walk hands out batches
//! of listed files while it goes on listing, helper threads started with the walk take
//! them, and the walk itself takes some whenever too many wait, then what is left.
//!
//! Helpers start at the walk's beginning and stay until it ends: on a virtual machine a
//! thread woken for a short batch often starts after the batch is done. A file's listing
//! (its folder's open handle) lives until the file is stamped (`statx` on its name in that
//! folder), so the batches waiting are bounded, and with them the folders held open.

use std::collections::VecDeque;
use std::fs::{self, Metadata};
use std::sync::{Condvar, Mutex};

use kb_domain::{EntryPath, Stamp};

/// Files in one batch, at most.
const BATCH_FILES: usize = 256;

/// Folders one batch's files may come from, at most (each held open until stamped).
const BATCH_FOLDERS: usize = 16;

/// Batches waiting, at most: beyond, the walk stamps one itself before listing on.
const WAITING_BATCHES: usize = 8;

/// Helper threads, at most, beside the walk's own.
const MOST_HELPERS: usize = 3;

/// A listed file to stamp: its folder listing's item and its vault path.
pub(super) type Listed = (fs::DirEntry, EntryPath);

/// The batches waiting, and whether the walk has listed everything.
#[derive(Default)]
struct Waiting {
    batches: VecDeque<Vec<Listed>>,
    listed_all: bool,
}

/// Files listed by a walk, stamped by it and its helpers.
pub(super) struct Stamping {
    waiting: Mutex<Waiting>,
    /// Signalled when a batch is added or the walk has listed everything.
    changed: Condvar,
}

/// The batch the walk is filling, with the folders its files come from.
#[derive(Default)]
pub(super) struct Batch {
    files: Vec<Listed>,
    folders: usize,
}

impl Batch {
    /// Starts taking the files of another folder.
    pub(super) fn next_folder(&mut self) {
        self.folders += 1;
    }

    /// Adds a listed file.
    pub(super) fn push(&mut self, file: Listed) {
        self.files.push(file);
    }

    fn is_full(&self) -> bool {
        self.files.len() >= BATCH_FILES || self.folders >= BATCH_FOLDERS
    }
}

impl Stamping {
    /// Runs `walk` (which lists the vault into the [`Batch`] it is given, calling
    /// [`Stamping::hand_out`] after each file it adds) with helpers on the other cores, and
    /// returns the stamps of every file it listed that is still a regular file.
    pub(super) fn run(
        walk: impl FnOnce(&Stamping, &mut Batch, &mut Vec<(EntryPath, Stamp)>),
    ) -> Vec<(EntryPath, Stamp)> {
        let stamping = Stamping { waiting: Mutex::new(Waiting::default()), changed: Condvar::new() };
        let helpers =
            std::thread::available_parallelism().map_or(1, |n| n.get()).saturating_sub(1).min(MOST_HELPERS);
        let mut found = Vec::new();
        std::thread::scope(|scope| {
            let stamping = &stamping;
            let started = (0..helpers).filter_map(|_| {
                let builder = std::thread::Builder::new().name("kb-vault-walk".into());
                // A helper that cannot start leaves its share to the walk.
                builder.spawn_scoped(scope, move || stamping.take_until_listed()).ok()
            });
            let running: Vec<_> = started.collect();
            let mut batch = Batch::default();
            {
                // Set however the walk ends (a panic too), so no helper waits for ever.
                let _listed = ListedAll(stamping);
                walk(stamping, &mut batch, &mut found);
                stamping.add(std::mem::take(&mut batch.files));
            }
            found.extend(stamping.take_until_listed());
            for helper in running {
                match helper.join() {
                    Ok(stamped) => found.extend(stamped),
                    // As if the walk had stamped them: a file left out would seem deleted.
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        });
        found
    }

    /// Hands `batch` out when it is full; then, while too many batches wait, stamps one of
    /// them into `found` (on one core, the walk stamps everything so).
    pub(super) fn hand_out(&self, batch: &mut Batch, found: &mut Vec<(EntryPath, Stamp)>) {
        if !batch.is_full() {
            return;
        }
        self.add(std::mem::take(&mut batch.files));
        batch.folders = 0;
        let waiting = {
            let mut waiting = kb_domain::sync::lock(&self.waiting);
            if waiting.batches.len() > WAITING_BATCHES { waiting.batches.pop_front() } else { None }
        };
        if let Some(files) = waiting {
            found.extend(stamp(files));
        }
    }

    fn add(&self, files: Vec<Listed>) {
        if files.is_empty() {
            return;
        }
        kb_domain::sync::lock(&self.waiting).batches.push_back(files);
        self.changed.notify_one();
    }

    /// Stamps batches as they come until the walk has listed everything and none is left.
    fn take_until_listed(&self) -> Vec<(EntryPath, Stamp)> {
        let mut stamped = Vec::new();
        loop {
            let next = {
                let mut waiting = kb_domain::sync::lock(&self.waiting);
                loop {
                    if let Some(files) = waiting.batches.pop_front() {
                        break Some(files);
                    }
                    if waiting.listed_all {
                        break None;
                    }
                    waiting = self.changed.wait(waiting).unwrap_or_else(std::sync::PoisonError::into_inner);
                }
            };
            match next {
                Some(files) => stamped.extend(stamp(files)),
                None => return stamped,
            }
        }
    }
}

/// Tells the helpers, when dropped, that the walk has listed everything.
struct ListedAll<'a>(&'a Stamping);

impl Drop for ListedAll<'_> {
    fn drop(&mut self) {
        kb_domain::sync::lock(&self.0.waiting).listed_all = true;
        self.0.changed.notify_all();
    }
}

/// The stamps of the listed `files` that are still regular files.
fn stamp(files: Vec<Listed>) -> Vec<(EntryPath, Stamp)> {
    files
        .into_iter()
        .filter_map(|(item, path)| {
            let meta = item.metadata().ok().filter(Metadata::is_file)?;
            Some((path, super::scan::stamp_of(&meta)))
        })
        .collect()
}
