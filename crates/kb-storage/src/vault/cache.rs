//! The in-memory view of the vault: a summary per entry path, which entries refer to
//! which, and the list of malformed files, kept up to date by every change so that
//! `list`, `index.md` and a move's reference updates never read every file again.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use kb_domain::references::referenced_paths;
use kb_domain::{Category, Entry, EntryPath, EntrySummary, ListFilter, ListPage, MalformedFile};

/// What is remembered of one entry.
#[derive(Debug, Clone)]
struct Cached {
    summary: EntrySummary,
    /// The entries it refers to.
    refers_to: BTreeSet<EntryPath>,
}

/// Summaries of every readable entry, who refers to whom, and the malformed files.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    entries: BTreeMap<EntryPath, Cached>,
    /// For each referred-to path, the entries that refer to it.
    referrers: HashMap<EntryPath, BTreeSet<EntryPath>>,
    malformed: BTreeMap<EntryPath, String>,
}

impl Cache {
    /// Records an entry as it is on disk now.
    pub(crate) fn insert(&mut self, entry: &Entry) {
        self.malformed.remove(&entry.path);
        self.forget_references(&entry.path);
        let refers_to = referenced_paths(entry);
        for target in &refers_to {
            self.referrers.entry(target.clone()).or_default().insert(entry.path.clone());
        }
        self.entries.insert(entry.path.clone(), Cached { summary: entry.summary(), refers_to });
    }

    /// The entries that refer to `path`, by path.
    pub(crate) fn referrers_of(&self, path: &EntryPath) -> Vec<EntryPath> {
        self.referrers.get(path).map(|set| set.iter().cloned().collect()).unwrap_or_default()
    }

    fn forget_references(&mut self, path: &EntryPath) {
        let Some(old) = self.entries.get(path) else { return };
        for target in &old.refers_to {
            if let Some(set) = self.referrers.get_mut(target) {
                set.remove(path);
                if set.is_empty() {
                    self.referrers.remove(target);
                }
            }
        }
    }

    /// Records that a file cannot be read as an entry.
    pub(crate) fn mark_malformed(&mut self, file: &MalformedFile) {
        self.forget_references(&file.path);
        self.entries.remove(&file.path);
        self.malformed.insert(file.path.clone(), file.reason.clone());
    }

    /// Forgets a path (the file is gone). Returns whether it was a known entry.
    pub(crate) fn remove(&mut self, path: &EntryPath) -> bool {
        self.malformed.remove(path);
        self.forget_references(path);
        self.entries.remove(path).is_some()
    }

    /// Every path known, readable or malformed.
    pub(crate) fn known_paths(&self) -> Vec<EntryPath> {
        self.entries.keys().chain(self.malformed.keys()).cloned().collect()
    }

    /// Whether a readable or malformed file is known at `path`.
    pub(crate) fn is_taken(&self, path: &EntryPath) -> bool {
        self.entries.contains_key(path) || self.malformed.contains_key(path)
    }

    /// The malformed files, by path.
    pub(crate) fn malformed(&self) -> Vec<MalformedFile> {
        self.malformed
            .iter()
            .map(|(path, reason)| MalformedFile { path: path.clone(), reason: reason.clone() })
            .collect()
    }

    /// How many readable entries there are.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The summaries of one category, newest first.
    pub(crate) fn newest_first(&self, category: Category) -> Vec<&EntrySummary> {
        let mut items: Vec<&EntrySummary> =
            self.entries.values().map(|c| &c.summary).filter(|s| s.category == category).collect();
        items.sort_by(|a, b| newest_first(a, b));
        items
    }

    /// A page of entries matching `filter`, newest `updated_at` first (undated last, then
    /// by path). A `limit` of 0 means no limit.
    pub(crate) fn list(&self, filter: &ListFilter) -> ListPage {
        let mut matching: Vec<&EntrySummary> = self
            .entries
            .values()
            .map(|c| &c.summary)
            .filter(|s| filter.category.is_none_or(|c| s.category == c))
            .filter(|s| filter.status.as_deref().is_none_or(|want| s.status.as_deref() == Some(want)))
            .collect();
        let total = matching.len();
        matching.sort_by(|a, b| newest_first(a, b));
        let limit = if filter.limit == 0 { usize::MAX } else { filter.limit };
        let entries = matching.into_iter().skip(filter.offset).take(limit).cloned().collect();
        ListPage { entries, total }
    }
}

/// Newest `updated_at` first, undated last, ties by path.
fn newest_first(a: &EntrySummary, b: &EntrySummary) -> Ordering {
    match (a.updated_at, b.updated_at) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
    .then_with(|| a.path.cmp(&b.path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, text: &str) -> Entry {
        Entry::from_document(EntryPath::parse(path).unwrap(), text).unwrap()
    }

    #[test]
    fn list_sorts_filters_and_pages() {
        let mut cache = Cache::default();
        cache.insert(&entry(
            "projects/old.md",
            "---\nstatus: active\nupdated_at: 2026-01-01T00:00:00Z\n---\n",
        ));
        cache.insert(&entry("projects/new.md", "---\nstatus: done\nupdated_at: 2026-02-01T00:00:00Z\n---\n"));
        cache.insert(&entry("projects/undated.md", "---\nstatus: active\n---\n"));
        cache.insert(&entry("ideas/i.md", "---\nupdated_at: 2027-01-01T00:00:00Z\n---\n"));
        let all = cache.list(&ListFilter::default());
        let order: Vec<String> = all.entries.iter().map(|s| s.path.to_string()).collect();
        assert_eq!(order, ["ideas/i.md", "projects/new.md", "projects/old.md", "projects/undated.md"]);
        let page = cache.list(&ListFilter {
            category: Some(Category::Projects),
            status: Some("active".into()),
            limit: 1,
            offset: 1,
        });
        assert_eq!(page.total, 2);
        assert_eq!(page.entries.len(), 1);
        assert_eq!(page.entries[0].path.to_string(), "projects/undated.md");
    }

    #[test]
    fn malformed_and_removed_paths() {
        let mut cache = Cache::default();
        let path = EntryPath::parse("ideas/x.md").unwrap();
        cache.insert(&entry("ideas/x.md", "x"));
        cache.mark_malformed(&MalformedFile { path: path.clone(), reason: "bad".into() });
        assert_eq!(cache.len(), 0);
        assert!(cache.is_taken(&path));
        assert_eq!(cache.malformed().len(), 1);
        assert!(!cache.remove(&path));
        assert!(!cache.is_taken(&path));
    }

    #[test]
    fn referrers_follow_inserts_and_removals() {
        let mut cache = Cache::default();
        let target = EntryPath::parse("projects/p.md").unwrap();
        cache.insert(&entry("people/a.md", "---\nrelated_projects: [projects/p.md]\n---\n"));
        cache.insert(&entry("ideas/b.md", "See [p](../projects/p.md)."));
        let names = |c: &Cache| c.referrers_of(&target).iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(names(&cache), ["people/a.md", "ideas/b.md"]);
        cache.insert(&entry("people/a.md", "---\nrelated_projects: []\n---\n"));
        assert_eq!(names(&cache), ["ideas/b.md"]);
        cache.remove(&EntryPath::parse("ideas/b.md").unwrap());
        assert!(names(&cache).is_empty());
        assert!(cache.referrers.is_empty());
    }
}
