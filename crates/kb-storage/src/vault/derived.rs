//! The parts of the vault's in-memory view worked out from its entries: the list orders,
//! who refers to whom, the digest's orders, the names and the other notes' folders.
//!
//! Each part is built the first time something asks for it, from the entries as they are
//! then, and from that moment kept up to date by every change. A one-shot command pays
//! only for what it asks: `kb list` sorts the entries of one order, `kb show` folds the
//! names, `kb digest` builds the digest's orders, and none of them builds the others.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use kb_domain::names::fold_name;
use kb_domain::{CatalogueEntry, Category, DigestOrders, EntryPath};

use super::cache::OrderKey;

/// The entries a list can ask for: all, one category, one status, or both.
pub(crate) type ViewKey = (Option<Category>, Option<String>);

/// The entries of one [`ViewKey`], newest first.
pub(crate) type View = BTreeMap<OrderKey, Arc<CatalogueEntry>>;

/// An entry as the parts are worked out from: its record and the entries it refers to.
pub(crate) struct Source<'a> {
    pub(crate) path: &'a EntryPath,
    pub(crate) record: &'a Arc<CatalogueEntry>,
    pub(crate) refers_to: &'a BTreeSet<EntryPath>,
}

/// The derived parts; `None` (or a view key not in `views`) is a part not built yet.
#[derive(Debug, Default)]
pub(crate) struct Derived {
    /// The list orders asked for so far, each kept sorted as entries change.
    views: HashMap<ViewKey, View>,
    /// For each referred-to path, the entries that refer to it.
    referrers: Option<HashMap<EntryPath, BTreeSet<EntryPath>>>,
    /// The records in the orders a digest reads.
    digest: Option<DigestOrders>,
    /// For each folded name and alias, the entries that have it.
    by_name: Option<BTreeMap<String, BTreeSet<EntryPath>>>,
    /// How many of the person's own notes each top folder holds (`""`: the root).
    other_folders: Option<BTreeMap<String, usize>>,
}

/// Whether `record` belongs to the view `key`.
fn in_view(record: &CatalogueEntry, key: &ViewKey) -> bool {
    key.0.is_none_or(|category| record.category() == category)
        && key.1.as_deref().is_none_or(|status| record.status() == Some(status))
}

/// A record's folded name and aliases.
pub(crate) fn folded_names(record: &CatalogueEntry) -> BTreeSet<String> {
    std::iter::once(record.name())
        .chain(record.aliases.iter().map(String::as_str))
        .map(fold_name)
        .filter(|name| !name.is_empty())
        .collect()
}

impl Derived {
    /// Takes a new entry into every part built so far.
    pub(crate) fn add(&mut self, entry: &Source<'_>) {
        let Source { path, record, refers_to } = *entry;
        if let Some(referrers) = &mut self.referrers {
            for target in refers_to {
                referrers.entry(target.clone()).or_default().insert(path.clone());
            }
        }
        if !self.views.is_empty() {
            let key = OrderKey::of(record);
            for (_, view) in self.views.iter_mut().filter(|(view, _)| in_view(record, view)) {
                view.insert(key.clone(), Arc::clone(record));
            }
        }
        // Digests and nudges are about the entries of the category folders: the person's
        // other notes have no status, due date or follow-up of kb's.
        if record.category().is_folder() {
            if let Some(digest) = &mut self.digest {
                digest.insert(record);
            }
        } else if let Some(folders) = &mut self.other_folders {
            *folders.entry(path.top_folder().to_string()).or_default() += 1;
        }
        if let Some(by_name) = &mut self.by_name {
            for name in folded_names(record) {
                by_name.entry(name).or_default().insert(path.clone());
            }
        }
    }

    /// Takes an entry out of every part built so far.
    pub(crate) fn remove(&mut self, entry: &Source<'_>) {
        let Source { path, record, refers_to } = *entry;
        if let Some(referrers) = &mut self.referrers {
            for target in refers_to {
                if let Some(set) = referrers.get_mut(target) {
                    set.remove(path);
                    if set.is_empty() {
                        referrers.remove(target);
                    }
                }
            }
        }
        if let Some(digest) = &mut self.digest {
            digest.remove(record);
        }
        if let (true, Some(folders)) = (path.is_other(), &mut self.other_folders) {
            let top = path.top_folder();
            if let Some(count) = folders.get_mut(top) {
                *count -= 1;
                if *count == 0 {
                    folders.remove(top);
                }
            }
        }
        if let Some(by_name) = &mut self.by_name {
            for name in folded_names(record) {
                if let Some(set) = by_name.get_mut(&name) {
                    set.remove(path);
                    if set.is_empty() {
                        by_name.remove(&name);
                    }
                }
            }
        }
        if !self.views.is_empty() {
            // An emptied view stays: it is built, with nothing in it.
            let key = OrderKey::of(record);
            for (_, view) in self.views.iter_mut().filter(|(view, _)| in_view(record, view)) {
                view.remove(&key);
            }
        }
    }

    /// The view `key`, built now from `entries` if it is asked for the first time.
    pub(crate) fn view<'e>(&mut self, key: &ViewKey, entries: impl Iterator<Item = Source<'e>>) -> &View {
        self.views.entry(key.clone()).or_insert_with(|| {
            // Collected into a list and sorted once, rather than inserted one by one.
            entries
                .filter(|entry| in_view(entry.record, key))
                .map(|entry| (OrderKey::of(entry.record), Arc::clone(entry.record)))
                .collect()
        })
    }

    /// Who refers to whom, built now from `entries` if it is asked for the first time.
    pub(crate) fn referrers<'e>(
        &mut self,
        entries: impl Iterator<Item = Source<'e>>,
    ) -> &HashMap<EntryPath, BTreeSet<EntryPath>> {
        self.referrers.get_or_insert_with(|| {
            let mut referrers: HashMap<EntryPath, BTreeSet<EntryPath>> = HashMap::new();
            for entry in entries {
                for target in entry.refers_to {
                    referrers.entry(target.clone()).or_default().insert(entry.path.clone());
                }
            }
            referrers
        })
    }

    /// The digest's orders, built now from `entries` if they are asked for the first time.
    pub(crate) fn digest<'e>(&mut self, entries: impl Iterator<Item = Source<'e>>) -> &DigestOrders {
        self.digest.get_or_insert_with(|| {
            let clock = std::time::Instant::now();
            let orders = DigestOrders::of(
                entries.filter(|entry| entry.record.category().is_folder()).map(|entry| entry.record),
            );
            tracing::debug!(build_ms = clock.elapsed().as_millis(), "the digest's orders are built");
            orders
        })
    }

    /// The entries by folded name and alias, if they are built.
    pub(crate) fn names(&self) -> Option<&BTreeMap<String, BTreeSet<EntryPath>>> {
        self.by_name.as_ref()
    }

    /// The entries by folded name and alias, built now from `entries` if they are asked
    /// for the first time.
    pub(crate) fn by_name<'e>(
        &mut self,
        entries: impl Iterator<Item = Source<'e>>,
    ) -> &BTreeMap<String, BTreeSet<EntryPath>> {
        self.by_name.get_or_insert_with(|| {
            let mut named: Vec<(String, &EntryPath)> = Vec::new();
            for entry in entries {
                named.extend(folded_names(entry.record).into_iter().map(|name| (name, entry.path)));
            }
            // Sorted once, then each name's paths gathered in order.
            named.sort_unstable();
            let mut by_name: BTreeMap<String, BTreeSet<EntryPath>> = BTreeMap::new();
            for (name, path) in named {
                by_name.entry(name).or_default().insert(path.clone());
            }
            by_name
        })
    }

    /// The top folders of the person's own notes with how many each holds, counted now
    /// from `entries` if they are asked for the first time.
    pub(crate) fn other_folders<'e>(
        &mut self,
        entries: impl Iterator<Item = Source<'e>>,
    ) -> &BTreeMap<String, usize> {
        self.other_folders.get_or_insert_with(|| {
            let mut folders = BTreeMap::new();
            for entry in entries.filter(|entry| !entry.record.category().is_folder()) {
                *folders.entry(entry.path.top_folder().to_string()).or_default() += 1;
            }
            folders
        })
    }

    /// Whether no entry refers to another, as far as the built parts know (for tests).
    #[cfg(test)]
    pub(crate) fn no_referrers(&self) -> bool {
        self.referrers.as_ref().is_none_or(HashMap::is_empty)
    }
}
