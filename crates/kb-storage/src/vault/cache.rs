//! The in-memory view of the vault: a catalogue record per entry path, kept in every
//! order a list asks for, which entries refer to which, and the list of malformed files,
//! all kept up to date by every change so that `list`, digests, `index.md` and a move's
//! reference updates never read every file again, and a list page costs its own size.
//! The orders, references and names are built when first asked for (see
//! [`super::derived`]).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use kb_domain::nudges::{NudgeCandidates, NudgeSettings};
use kb_domain::references::referenced_paths;
use kb_domain::{
    CatalogueEntry, Category, DigestCandidates, Entry, EntryContext, EntryLinks, EntryPath, FolderCount,
    ListFilter, ListPage, MalformedFile, Stamp,
};

use super::derived::{Derived, Source, View, ViewKey};
use super::lazy_links::{LazyLinks, NoteLinks};

mod names;

/// What is remembered of one entry.
#[derive(Debug, Clone)]
struct Cached {
    record: Arc<CatalogueEntry>,
    /// The entries it refers to.
    refers_to: BTreeSet<EntryPath>,
    /// The stamp of the file the record was read from, when known (a record kb made from
    /// its own write has none until it is checked against its file).
    stamp: Option<Stamp>,
}

impl KnownEntry {
    /// What the cache keeps of `entry`, read from a file whose stamp was `stamp`.
    pub(crate) fn read(entry: &Entry, stamp: Stamp) -> KnownEntry {
        KnownEntry {
            record: Arc::new(CatalogueEntry::of(entry)),
            refers_to: referenced_paths(entry),
            links: NoteLinks::Parsed(kb_domain::links::note_links(&entry.frontmatter, &entry.body)),
            stamp,
        }
    }
}

/// One entry as the saved catalogue keeps it (see [`super::saved_catalogue`]): all the
/// cache knows of it, without its file.
#[derive(Debug, Clone)]
pub(crate) struct KnownEntry {
    /// Its catalogue record.
    pub(crate) record: Arc<CatalogueEntry>,
    /// The entries it refers to.
    pub(crate) refers_to: BTreeSet<EntryPath>,
    /// Its links with the text of their lines (see [`kb_domain::links::links_in`]).
    pub(crate) links: NoteLinks,
    /// The stamp of the file it was read from.
    pub(crate) stamp: Stamp,
}

/// An entry's place in the newest-first order: newest `updated_at` first, undated last,
/// ties by path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct OrderKey {
    undated: bool,
    newest: Reverse<DateTime<Utc>>,
    path: EntryPath,
}

impl OrderKey {
    /// The place of `record`.
    pub(crate) fn of(record: &CatalogueEntry) -> OrderKey {
        let updated = record.updated_at();
        OrderKey {
            undated: updated.is_none(),
            newest: Reverse(updated.unwrap_or(DateTime::<Utc>::MIN_UTC)),
            path: record.summary.path.clone(),
        }
    }
}

/// The entries of each category, newest first, at one moment of the cache: what the
/// entry list file is rendered from, outside the vault's lock.
#[derive(Debug, Clone, Default)]
pub(crate) struct EntryListSnapshot {
    /// The cache's [`Cache::version`] when it was taken.
    pub(crate) version: u64,
    /// Each category (in [`Category::ALL`] order) with its entries.
    pub(crate) categories: Vec<(Category, Vec<Arc<CatalogueEntry>>)>,
}

/// How some entries' changes alter the entry list, line by line (see
/// [`super::entry_list::patch`]): what a one-shot command writes instead of the whole list.
#[derive(Debug, Clone, Default)]
pub(crate) struct EntryListPatch {
    /// The cache's [`Cache::version`] when it was made.
    pub(crate) version: u64,
    /// The changed paths: their lines go (those still entries come back in `lines`).
    pub(crate) changed: Vec<EntryPath>,
    /// The changed entries' lines, in list order: each with its category and the entry
    /// whose line it follows (`None`: it comes first).
    pub(crate) lines: Vec<(Category, String, Option<EntryPath>)>,
    /// How many entries each category the changes touch holds now.
    pub(crate) counts: Vec<(Category, usize)>,
}

/// Catalogue records of every readable entry, who refers to whom, and the malformed files.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    entries: BTreeMap<EntryPath, Cached>,
    malformed: BTreeMap<EntryPath, String>,
    /// The list orders, references, digest orders and names (each built when first asked
    /// for).
    derived: Derived,
    /// Every entry's `[[wikilinks]]` and Markdown links, and its backlinks (resolved when
    /// first asked for).
    links: LazyLinks,
    /// Counts the changes, so a snapshot knows whether it is older than another.
    version: u64,
    /// Whether one entry's links are answered from the whole graph (resolved at the first
    /// ask) rather than from the notes around it (see [`Cache::build_parts`]).
    links_whole: bool,
}

impl Cache {
    /// Records an entry as kb has just written it (the stamp of its file is not known
    /// until a save checks it, see [`Cache::confirm_stamp`]).
    pub(crate) fn insert(&mut self, entry: &Entry) {
        self.version += 1;
        self.malformed.remove(&entry.path);
        self.forget(&entry.path);
        let KnownEntry { record, refers_to, links, .. } = KnownEntry::read(entry, Stamp::NONE);
        self.links.upsert(entry.path.as_str(), links, &record.aliases);
        self.add(entry.path.clone(), record, refers_to, None);
    }

    /// The cache of the entries `known` (as the saved catalogue keeps them). Their links
    /// are resolved, and the orders and names built, when first asked for.
    pub(crate) fn of_known(known: Vec<(EntryPath, KnownEntry)>) -> Cache {
        let mut notes = Vec::with_capacity(known.len());
        let mut entries = Vec::with_capacity(known.len());
        for (path, entry) in known {
            let record = entry.record;
            notes.push((path.shared_text(), entry.links, record.aliases.clone()));
            entries.push((path, Cached { record, refers_to: entry.refers_to, stamp: Some(entry.stamp) }));
        }
        Cache {
            // Sorted once and built in one pass (the walk's order is the paths' already).
            entries: entries.into_iter().collect(),
            links: LazyLinks::of_notes(notes),
            version: 1,
            ..Cache::default()
        }
    }

    /// The entries as the derived parts are worked out from.
    fn sources(entries: &BTreeMap<EntryPath, Cached>) -> impl Iterator<Item = Source<'_>> {
        entries.iter().map(|(path, cached)| Source {
            path,
            record: &cached.record,
            refers_to: &cached.refers_to,
        })
    }

    /// Adds an entry's record to the entries and the derived parts built so far (not to
    /// the links).
    fn add(
        &mut self,
        path: EntryPath,
        record: Arc<CatalogueEntry>,
        refers_to: BTreeSet<EntryPath>,
        stamp: Option<Stamp>,
    ) {
        self.derived.add(&Source { path: &path, record: &record, refers_to: &refers_to });
        self.entries.insert(path, Cached { record, refers_to, stamp });
    }

    /// Every entry whose file's stamp is known, as the saved catalogue keeps it, and the
    /// paths of those whose stamp is not (kb wrote them since they were read).
    pub(crate) fn known_entries(&self) -> (Vec<(EntryPath, KnownEntry)>, Vec<EntryPath>) {
        let mut known = Vec::with_capacity(self.entries.len());
        let mut unstamped = Vec::new();
        for (path, cached) in &self.entries {
            let Some(stamp) = cached.stamp else {
                unstamped.push(path.clone());
                continue;
            };
            let entry = KnownEntry {
                record: Arc::clone(&cached.record),
                refers_to: cached.refers_to.clone(),
                links: self.links.note_links(path.as_str()),
                stamp,
            };
            known.push((path.clone(), entry));
        }
        (known, unstamped)
    }

    /// Gives the entry at `path` the stamp of its file, read just now as `read`, when the
    /// cache's record, references and links are what that file gives.
    pub(crate) fn confirm_stamp(&mut self, path: &EntryPath, read: &KnownEntry) {
        let same_links = self.links.note_links(path.as_str()).parsed() == read.links.parsed();
        if let Some(cached) = self.entries.get_mut(path)
            && cached.stamp.is_none()
            && *cached.record == *read.record
            && cached.refers_to == read.refers_to
            && same_links
        {
            cached.stamp = Some(read.stamp);
        }
    }

    /// Counts the changes made to the cache: equal versions, equal caches.
    pub(crate) fn version(&self) -> u64 {
        self.version
    }

    /// The entry at `path` with the notes within `depth` links of it; `None` when it is not
    /// known.
    pub(crate) fn context(&mut self, path: &EntryPath, depth: u8) -> Option<EntryContext> {
        let entries = &self.entries;
        EntryContext::of(self.links.graph(), path, depth, |p| {
            entries.get(p).map(|c| c.record.summary.clone())
        })
    }

    /// The links of the entry at `path` and the links to it; `None` when it is not known.
    pub(crate) fn links(&mut self, path: &EntryPath) -> Option<EntryLinks> {
        let entries = &self.entries;
        let name_of = |p: &EntryPath| entries.get(p).map(|c| c.record.name().to_string());
        if !entries.contains_key(path) {
            return None;
        }
        if self.links_whole {
            return Some(EntryLinks::of(self.links.graph(), path, name_of));
        }
        Some(EntryLinks::of(&self.links.around(path.as_str()), path, name_of))
    }

    /// The file names (lowercased) the note at `path` links to, as written in its links.
    pub(crate) fn linked_file_names(&mut self, path: &EntryPath) -> Vec<String> {
        self.links
            .graph()
            .links_of(path.as_str())
            .iter()
            .map(|l| kb_domain::links::target_stem(&l.link.target).to_lowercase())
            .collect()
    }

    /// Whether a note other than `except` links to a file named `name` (lowercased).
    pub(crate) fn links_file_named(&mut self, name: &str, except: &EntryPath) -> bool {
        self.links.graph().notes_with_link_key(name).any(|note| note != except.as_str())
    }

    /// The notes whose `[[wikilinks]]` moving (or merging) the note at `from` to `to` may
    /// change (see [`LinkGraph::notes_touched_by_move`]), `from` itself left out.
    pub(crate) fn wikilink_sources(&mut self, from: &EntryPath, to: &EntryPath) -> Vec<EntryPath> {
        self.links
            .graph()
            .notes_touched_by_move(from.as_str(), to.as_str())
            .into_iter()
            .filter(|source| *source != from.as_str())
            .filter_map(|source| EntryPath::parse(source).ok())
            .collect()
    }

    /// The text of the note at `source` with its references to `from` (frontmatter paths,
    /// Markdown links, `[[wikilinks]]`) leading to `to`, and its other links still leading
    /// where they led (see [`kb_domain::references::retarget_references_in`] and
    /// [`kb_domain::links::retarget_wikilinks`]), as the vault is before the move; `None`
    /// when none changes. When `source` is `from`, its links are read from `to`.
    pub(crate) fn retarget_links(
        &mut self,
        source: &EntryPath,
        text: &str,
        from: &EntryPath,
        to: &EntryPath,
    ) -> Option<String> {
        let resolver = self.links.graph().resolver();
        let references = kb_domain::references::retarget_references_in(source, text, from, to, resolver);
        let text = references.as_deref().unwrap_or(text);
        kb_domain::links::retarget_wikilinks(source.as_str(), text, from.as_str(), to.as_str(), resolver)
            .or(references)
    }

    /// The top folders of the person's own notes with how many each holds.
    pub(crate) fn other_note_folders(&mut self) -> Vec<FolderCount> {
        self.derived
            .other_folders(Cache::sources(&self.entries))
            .iter()
            .map(|(folder, notes)| FolderCount { folder: folder.clone(), notes: *notes })
            .collect()
    }

    /// The entries that refer to `path`, by path.
    pub(crate) fn referrers_of(&mut self, path: &EntryPath) -> Vec<EntryPath> {
        let referrers = self.derived.referrers(Cache::sources(&self.entries));
        referrers.get(path).map(|set| set.iter().cloned().collect()).unwrap_or_default()
    }

    /// Takes the entry at `path` out of the derived parts (not out of `entries`); returns
    /// whether there was one.
    fn forget(&mut self, path: &EntryPath) -> bool {
        let Some(old) = self.entries.get(path) else { return false };
        self.derived.remove(&Source { path, record: &old.record, refers_to: &old.refers_to });
        true
    }

    /// Records that a file cannot be read as an entry.
    pub(crate) fn mark_malformed(&mut self, file: &MalformedFile) {
        self.version += 1;
        self.forget(&file.path);
        self.links.remove(&file.path.to_string());
        self.entries.remove(&file.path);
        self.malformed.insert(file.path.clone(), file.reason.clone());
    }

    /// Forgets a path (the file is gone). Returns whether it was a known entry.
    pub(crate) fn remove(&mut self, path: &EntryPath) -> bool {
        self.version += 1;
        self.malformed.remove(path);
        self.forget(path);
        self.links.remove(&path.to_string());
        self.entries.remove(path).is_some()
    }

    /// Every path known, readable or malformed.
    pub(crate) fn known_paths(&self) -> Vec<EntryPath> {
        self.known_paths_where(|_| true)
    }

    /// [`Cache::known_paths`] for which `wanted` holds.
    pub(crate) fn known_paths_where(&self, wanted: impl Fn(&EntryPath) -> bool) -> Vec<EntryPath> {
        self.entries.keys().chain(self.malformed.keys()).filter(|path| wanted(path)).cloned().collect()
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
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// What a digest on `today` at `now` reads (see [`DigestOrders::candidates`]).
    pub(crate) fn digest_candidates(&mut self, today: NaiveDate, now: DateTime<Utc>) -> DigestCandidates {
        self.derived.digest(Cache::sources(&self.entries)).candidates(today, now)
    }

    /// What the nudges on `today` at `now` read (see [`DigestOrders::nudge_candidates`]).
    pub(crate) fn nudge_candidates(
        &mut self,
        today: NaiveDate,
        now: DateTime<Utc>,
        settings: NudgeSettings,
    ) -> NudgeCandidates {
        self.derived.digest(Cache::sources(&self.entries)).nudge_candidates(today, now, settings)
    }

    /// The entries of each category, newest first, for the entry list file.
    pub(crate) fn entry_list_snapshot(&mut self) -> EntryListSnapshot {
        let categories = Category::ALL
            .iter()
            .map(|&category| {
                let view = self.view(&(Some(category), None));
                (category, view.values().cloned().collect())
            })
            .collect();
        EntryListSnapshot { version: self.version, categories }
    }

    /// How the entry list changes with the entries at `changed` (as they are now: an entry
    /// gone or malformed has no line).
    pub(crate) fn entry_list_patch(&mut self, changed: &[EntryPath]) -> EntryListPatch {
        let mut categories: Vec<Category> =
            changed.iter().map(EntryPath::category).filter(|c| c.is_folder()).collect();
        categories.sort_by_key(|c| Category::ALL.iter().position(|all| all == c));
        categories.dedup();
        let mut patch =
            EntryListPatch { version: self.version, changed: changed.to_vec(), ..EntryListPatch::default() };
        for category in categories {
            let mut here: Vec<(OrderKey, Arc<CatalogueEntry>)> = changed
                .iter()
                .filter(|path| path.category() == category)
                .filter_map(|path| self.entries.get(path))
                .map(|cached| (OrderKey::of(&cached.record), Arc::clone(&cached.record)))
                .collect();
            here.sort_by(|(a, _), (b, _)| a.cmp(b));
            here.dedup_by(|(a, _), (b, _)| a == b);
            let view = self.view(&(Some(category), None));
            for (key, record) in here {
                let after = view.range(..key).next_back().map(|(_, before)| before.summary.path.clone());
                patch.lines.push((category, super::entry_list::item_line(&record.summary), after));
            }
            patch.counts.push((category, view.len()));
        }
        patch
    }

    /// Builds every derived part now (each list order of a category, the names, the
    /// digest's orders, the references, the other notes' folders), rather than at the
    /// first request that asks for it; from now on the links are resolved whole when one
    /// entry's are first asked for (a long-running process answers many).
    pub(crate) fn build_parts(&mut self) {
        for category in std::iter::once(None).chain(Category::ALL.map(Some)) {
            self.view(&(category, None));
        }
        self.derived.by_name(Cache::sources(&self.entries));
        self.derived.digest(Cache::sources(&self.entries));
        self.derived.referrers(Cache::sources(&self.entries));
        self.derived.other_folders(Cache::sources(&self.entries));
        self.links_whole = true;
    }

    /// The entries of the view `key`, newest first.
    fn view(&mut self, key: &ViewKey) -> &View {
        self.derived.view(key, Cache::sources(&self.entries))
    }

    /// A page of entries matching `filter`, newest `updated_at` first (undated last, then
    /// by path). A `limit` of 0 means no limit. Costs the page, not the vault.
    pub(crate) fn list(&mut self, filter: &ListFilter) -> ListPage {
        let view = self.view(&(filter.category, filter.status.clone()));
        let limit = if filter.limit == 0 { usize::MAX } else { filter.limit };
        let Some(folder) = filter.folder.as_deref().map(|f| f.trim_matches('/')).filter(|f| !f.is_empty())
        else {
            let entries =
                view.values().skip(filter.offset).take(limit).map(|record| record.summary.clone()).collect();
            return ListPage { entries, total: view.len() };
        };
        // A folder has no order of its own: its notes are picked out of the view (the cost of
        // the view, not of the vault).
        let mut total = 0;
        let mut entries = Vec::new();
        for record in view.values().filter(|record| record.summary.path.is_within(folder)) {
            if total >= filter.offset && entries.len() < limit {
                entries.push(record.summary.clone());
            }
            total += 1;
        }
        ListPage { entries, total }
    }
}

#[cfg(test)]
mod tests;
