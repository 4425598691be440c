//! [`Observers`]: who is notified of the vault's changes (the search index, the change
//! feed), in the order they were added.

use std::sync::{Arc, PoisonError, RwLock};

use kb_domain::{ChangeObserver, EntryChange};

/// The observers of a vault.
#[derive(Default)]
pub(crate) struct Observers {
    list: RwLock<Vec<Arc<dyn ChangeObserver>>>,
}

impl Observers {
    /// Adds an observer, notified after those added before it. A panic in another thread
    /// while the list was being changed leaves it whole, so poisoning is ignored.
    pub(crate) fn add(&self, observer: Arc<dyn ChangeObserver>) {
        self.list.write().unwrap_or_else(PoisonError::into_inner).push(observer);
    }

    /// Notifies every observer of the changes of one operation, together, made as `person`
    /// asked (`None`: no one in particular).
    pub(crate) fn notify(&self, changes: &[EntryChange], person: Option<&str>) {
        let observers = self.list.read().unwrap_or_else(PoisonError::into_inner);
        for observer in observers.iter() {
            match person {
                Some(person) => observer.entries_changed_by(changes, person),
                None => observer.entries_changed(changes),
            }
        }
    }
}
