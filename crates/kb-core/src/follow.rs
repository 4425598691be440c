//! Brings this process's view of the vault in line with files the search index has
//! followed already (outside edits, other kb processes' changes), on a thread of its own:
//! the file watcher goes on to its next batch meanwhile, so a `git pull` of thousands of
//! files is searchable sooner, and the view follows each batch soon after.

use std::collections::HashSet;
use std::sync::mpsc;
use std::sync::{Arc, Weak};

use kb_domain::EntryPath;
use kb_search::OnChange;
use kb_storage::vault::Vault;

use crate::changes::ChangeFeed;

/// What the file watcher calls once per batch: hands the batch's paths to the follower
/// thread, which reads them into the vault's view (batches that queue up meanwhile are
/// followed together, each path once), then publishes them to the change feed. Where no thread can be
/// started, the watcher's own thread does this.
pub(crate) fn follow_in_background(vault: &Arc<Vault>, changes: ChangeFeed) -> OnChange {
    let (sender, batches) = mpsc::channel::<Vec<EntryPath>>();
    let weak = Arc::downgrade(vault);
    let feed = changes.clone();
    let started = std::thread::Builder::new()
        .name("kb-vault-follow".into())
        .spawn(move || follow_batches(&weak, &batches, &feed));
    match started {
        // The thread ends once the watcher (which holds the sender) is dropped.
        Ok(_) => Arc::new(move |paths: &[EntryPath]| {
            let _ = sender.send(paths.to_vec());
        }),
        Err(error) => {
            tracing::warn!(%error, "could not start following outside edits apart; the watcher does it");
            let vault = Arc::clone(vault);
            Arc::new(move |paths: &[EntryPath]| {
                vault.follow_all(paths);
                changes.publish(paths);
            })
        }
    }
}

/// The follower thread: each batch as it comes, with every batch that came meanwhile.
fn follow_batches(vault: &Weak<Vault>, batches: &mpsc::Receiver<Vec<EntryPath>>, changes: &ChangeFeed) {
    while let Ok(first) = batches.recv() {
        let mut seen: HashSet<EntryPath> = first.iter().cloned().collect();
        let mut paths = first;
        while let Ok(more) = batches.try_recv() {
            paths.extend(more.into_iter().filter(|path| seen.insert(path.clone())));
        }
        let Some(vault) = vault.upgrade() else { return };
        vault.follow_all(&paths);
        drop(vault);
        changes.publish(&paths);
    }
}
