//! [`ChangeFeed`]: every change to the vault this process sees — its own writes, other kb
//! processes' writes and outside edits — as the paths that changed, for whoever listens
//! (the MCP server's resource subscriptions).

use std::sync::Arc;

use kb_domain::{ChangeObserver, EntryChange, EntryPath};
use tokio::sync::broadcast;

/// How many batches a slow listener may fall behind before it misses some (it receives
/// `Lagged`, and can treat that as "everything may have changed").
const BACKLOG: usize = 256;

/// The paths of one change to the vault (one operation, or one batch of outside edits).
pub type ChangedPaths = Arc<[EntryPath]>;

/// Hands every change to the vault to every current listener.
#[derive(Debug, Clone)]
pub struct ChangeFeed {
    sender: broadcast::Sender<ChangedPaths>,
}

impl Default for ChangeFeed {
    fn default() -> ChangeFeed {
        ChangeFeed { sender: broadcast::channel(BACKLOG).0 }
    }
}

impl ChangeFeed {
    /// A listener that receives every change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<ChangedPaths> {
        self.sender.subscribe()
    }

    /// Sends every listener the `paths` that changed (nothing when there is no listener).
    pub fn publish(&self, paths: &[EntryPath]) {
        if !paths.is_empty() && self.sender.receiver_count() > 0 {
            let _ = self.sender.send(paths.into());
        }
    }
}

/// The vault's own writes reach the feed as an observer of the vault.
impl ChangeObserver for ChangeFeed {
    fn entry_changed(&self, change: &EntryChange) {
        self.entries_changed(std::slice::from_ref(change));
    }

    fn entries_changed(&self, changes: &[EntryChange]) {
        let paths: Vec<EntryPath> = changes.iter().map(|change| change.path().clone()).collect();
        self.publish(&paths);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listener_receives_each_change_and_nothing_is_sent_without_one()
    -> Result<(), Box<dyn std::error::Error>> {
        let feed = ChangeFeed::default();
        feed.publish(&[EntryPath::parse("ideas/before-any-listener.md")?]);
        let mut first = feed.subscribe();
        let mut second = feed.subscribe();
        let path = EntryPath::parse("people/priya.md")?;
        feed.entry_changed(&EntryChange::Removed(path.clone()));
        feed.publish(&[]);
        for listener in [&mut first, &mut second] {
            assert_eq!(&*listener.try_recv()?, std::slice::from_ref(&path));
            assert!(listener.try_recv().is_err(), "an empty change is not sent");
        }
        Ok(())
    }
}
