//! Notifying MCP clients that the vault changed. Every change this process sees (its own
//! writes, other kb processes', outside edits: [`kb_core::ChangeFeed`]) is gathered for a
//! moment ([`GATHER`]) and sent as one `notifications/resources/list_changed` (names and
//! lines of entries are part of the list, so any change may change it) plus one
//! `notifications/resources/updated` per subscribed resource it touched (`kb://index`:
//! any change).
//!
//! Clients of the 2025 protocol subscribe with `resources/subscribe` and are notified
//! on the connection ([`follow_for`]); clients of the 2026 protocol open a
//! `subscriptions/listen` stream ([`listen`]).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kb_core::{Assistant, ChangedPaths, EntryPath};
use rmcp::RoleServer;
use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{Peer, SubscriptionContext};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use super::resources::{KbUri, parse_uri};

/// How long changes are gathered into one notification after the first.
pub const GATHER: Duration = Duration::from_millis(100);

/// The resources one connection subscribed to, and whether changes are forwarded to it.
#[derive(Debug, Default)]
pub struct Subscriptions {
    uris: std::sync::Mutex<BTreeSet<String>>,
    following: AtomicBool,
}

impl Subscriptions {
    /// Subscribes to `uri`.
    pub fn add(&self, uri: String) {
        kb_core::domain::sync::lock(&self.uris).insert(uri);
    }

    /// Unsubscribes from `uri` (nothing when it was not subscribed).
    pub fn remove(&self, uri: &str) {
        kb_core::domain::sync::lock(&self.uris).remove(uri);
    }

    fn touched(&self, batch: &Batch) -> Vec<String> {
        let uris = kb_core::domain::sync::lock(&self.uris).clone();
        batch.touched(uris)
    }
}

/// Changes gathered into one notification.
#[derive(Debug, Default)]
struct Batch {
    paths: BTreeSet<EntryPath>,
    /// Some changes were missed (the listener fell behind): anything may have changed.
    anything: bool,
}

impl Batch {
    fn add(&mut self, paths: &ChangedPaths) {
        self.paths.extend(paths.iter().cloned());
    }

    /// Which of `subscribed` this batch touched.
    fn touched(&self, subscribed: impl IntoIterator<Item = String>) -> Vec<String> {
        subscribed
            .into_iter()
            .filter(|uri| match parse_uri(uri) {
                // A change of the vault may be one sync made, or one it will send.
                Ok(KbUri::EntryList | KbUri::Sync) => true,
                Ok(KbUri::Entry(path)) => self.anything || self.paths.contains(&path),
                Err(_) => false,
            })
            .collect()
    }
}

/// Waits for the next change and gathers those that follow within [`GATHER`]; `None` when
/// kb is closing.
async fn next_batch(changes: &mut broadcast::Receiver<ChangedPaths>) -> Option<Batch> {
    let mut batch = Batch::default();
    match changes.recv().await {
        Ok(paths) => batch.add(&paths),
        Err(RecvError::Lagged(_)) => batch.anything = true,
        Err(RecvError::Closed) => return None,
    }
    let deadline = tokio::time::Instant::now() + GATHER;
    loop {
        match tokio::time::timeout_at(deadline, changes.recv()).await {
            Ok(Ok(paths)) => batch.add(&paths),
            Ok(Err(RecvError::Lagged(_))) => batch.anything = true,
            Ok(Err(RecvError::Closed)) | Err(_) => return Some(batch),
        }
    }
}

/// Forwards the vault's changes to a 2025-protocol client on its connection, from now
/// until it disconnects (started once per connection).
pub fn follow_for(assistant: &Assistant, subscriptions: &Arc<Subscriptions>, peer: Peer<RoleServer>) {
    if subscriptions.following.swap(true, Ordering::SeqCst) {
        return;
    }
    let mut changes = assistant.changes();
    let subscriptions = Arc::clone(subscriptions);
    tokio::spawn(async move {
        while let Some(batch) = next_batch(&mut changes).await {
            if peer.is_transport_closed() || peer.notify_resource_list_changed().await.is_err() {
                break;
            }
            for uri in subscriptions.touched(&batch) {
                let updated = ResourceUpdatedNotificationParam::new(uri);
                if peer.notify_resource_updated(updated).await.is_err() {
                    break;
                }
            }
        }
        tracing::debug!("an MCP client stopped following the vault");
    });
}

/// What kb accepts of a `subscriptions/listen` filter: the resource list and any kb
/// resources (other URIs are left out).
pub fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::builder();
    if requested.resources_list_changed == Some(true) {
        accepted = accepted.resources_list_changed();
    }
    for uri in requested.resource_subscriptions.iter().flatten() {
        if parse_uri(uri).is_ok() {
            accepted = accepted.resource_subscription(uri.clone());
        }
    }
    accepted.build()
}

/// Serves one `subscriptions/listen` stream (2026 protocol) until the client cancels it or
/// kb closes.
pub async fn listen(assistant: &Assistant, context: SubscriptionContext) {
    let mut changes = assistant.changes();
    let filter = context.accepted().clone();
    let wants_list = filter.resources_list_changed == Some(true);
    let subscribed = filter.resource_subscriptions.clone().unwrap_or_default();
    loop {
        let batch = tokio::select! {
            () = context.cancelled() => return,
            batch = next_batch(&mut changes) => match batch {
                Some(batch) => batch,
                None => return,
            },
        };
        if wants_list && context.sink().notify_resource_list_changed().await.is_err() {
            return;
        }
        for uri in batch.touched(subscribed.iter().cloned()) {
            if context.sink().notify_resource_updated(uri).await.is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(text: &str) -> EntryPath {
        EntryPath::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[tokio::test]
    async fn changes_close_together_are_one_batch_touching_what_they_changed() {
        let (sender, mut receiver) = broadcast::channel::<ChangedPaths>(8);
        let _ = sender.send(vec![path("people/priya.md")].into());
        let _ = sender.send(vec![path("ideas/shed.md")].into());
        let batch = next_batch(&mut receiver).await.unwrap_or_default();
        let subscribed =
            ["kb://entries/people/priya", "kb://entries/people/sam", "kb://index"].map(String::from);
        assert_eq!(batch.touched(subscribed.clone()), ["kb://entries/people/priya", "kb://index"]);

        let lagged = Batch { anything: true, ..Batch::default() };
        assert_eq!(lagged.touched(subscribed).len(), 3, "a listener that fell behind gets everything");
        drop(sender);
        assert!(next_batch(&mut receiver).await.is_none(), "kb closing ends the stream");
    }

    #[test]
    fn a_listen_filter_keeps_only_kb_resources() {
        let requested = SubscriptionFilter::builder()
            .resources_list_changed()
            .tools_list_changed()
            .resource_subscription("kb://index")
            .resource_subscription("file:///etc/passwd")
            .build();
        let accepted = accepted(&requested);
        assert_eq!(accepted.resources_list_changed, Some(true));
        assert_eq!(accepted.tools_list_changed, None);
        assert_eq!(accepted.resource_subscriptions, Some(vec!["kb://index".to_string()]));
    }
}
