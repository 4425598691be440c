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
use kb_domain::names::{fold_name, may_fold_to_start_with, relate};
use kb_domain::nudges::{NudgeCandidates, NudgeSettings};
use kb_domain::references::referenced_paths;
use kb_domain::{
    CatalogueEntry, Category, DigestCandidates, Entry, EntryContext, EntryLinks, EntryPath, EntrySummary,
    FolderCount, ListFilter, ListPage, MalformedFile, NameMatch, Stamp,
};

use super::derived::{Derived, Source, View, ViewKey};
use super::lazy_links::{LazyLinks, NoteLinks};

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

/// The folded names that may relate to the folded `wanted` (see [`relate`]): itself and
/// each of its leading runs of words, looked up one by one, then every name that begins
/// with its words, as one range of the sorted names.
fn related_names<'a, T>(
    by_name: &'a BTreeMap<String, T>,
    wanted: &str,
) -> impl Iterator<Item = &'a T> + use<'a, T> {
    let word_ends = wanted.match_indices(' ').map(|(at, _)| at).chain([wanted.len()]);
    let shorter_or_same: Vec<&T> = word_ends.filter_map(|end| by_name.get(&wanted[..end])).collect();
    // Folded names hold only lowercase letters, digits and single spaces: after "w " come
    // exactly the names "w …", and "w!" (the character after the space) bounds them.
    let longer = (!wanted.is_empty())
        .then(|| by_name.range(format!("{wanted} ")..format!("{wanted}!")).map(|(_, paths)| paths))
        .into_iter()
        .flatten();
    shorter_or_same.into_iter().chain(longer)
}

/// How a record's name, else its closest alias, relates to the folded name `wanted`.
pub(crate) fn name_match(record: &CatalogueEntry, wanted: &str) -> Option<NameMatch> {
    let by_name = relate(&fold_name(record.name()), wanted).map(|relation| (relation, None));
    let by_alias = record
        .aliases
        .iter()
        .filter_map(|alias| relate(&fold_name(alias), wanted).map(|relation| (relation, Some(alias.clone()))))
        .min_by_key(|(relation, _)| *relation);
    let (relation, alias) = match (by_name, by_alias) {
        (Some(name), Some(alias)) if alias.0 < name.0 => alias,
        (Some(name), _) => name,
        (None, alias) => alias?,
    };
    Some(NameMatch { entry: record.summary.clone(), relation, alias })
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

    /// The text of the note at `source` with its `[[wikilinks]]` that led to `from` leading
    /// to `to` (see [`kb_domain::links::retarget_wikilinks`]), as the vault is before the
    /// move; `None` when none changes.
    pub(crate) fn retarget_wikilinks(
        &mut self,
        source: &EntryPath,
        text: &str,
        from: &EntryPath,
        to: &EntryPath,
    ) -> Option<String> {
        let resolver = self.links.graph().resolver();
        kb_domain::links::retarget_wikilinks(source.as_str(), text, from.as_str(), to.as_str(), resolver)
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

    /// The entries whose folded name or an alias relates to `name` (see
    /// [`EntryCatalogue::find_by_name`](kb_domain::EntryCatalogue::find_by_name)): the
    /// same names first, then by path. Once the names are built ([`Cache::build_parts`], as
    /// a long-running process does) this costs the names it relates to; before, it looks
    /// at every entry's names without building them: a one-shot command asks once or
    /// twice, and building the names would cost it several looks.
    pub(crate) fn find_by_name(&self, name: &str) -> Vec<NameMatch> {
        let wanted = fold_name(name);
        let mut found: Vec<NameMatch> = match self.derived.names() {
            Some(by_name) => {
                // An entry may be reached through its name and an alias both: each once.
                let paths: BTreeSet<&EntryPath> = related_names(by_name, &wanted).flatten().collect();
                paths
                    .into_iter()
                    .filter_map(|path| self.entries.get(path))
                    .filter_map(|cached| name_match(&cached.record, &wanted))
                    .collect()
            }
            None => {
                // Only names that may fold to the wanted one's first letter are folded.
                let first = wanted.as_bytes().first().copied();
                let may_match = |cached: &&Cached| {
                    first.is_some_and(|first| {
                        std::iter::once(cached.record.name())
                            .chain(cached.record.aliases.iter().map(String::as_str))
                            .any(|name| may_fold_to_start_with(name, first))
                    })
                };
                let candidates = self.entries.values().filter(may_match);
                candidates.filter_map(|cached| name_match(&cached.record, &wanted)).collect()
            }
        };
        found.sort_by(|a, b| a.relation.cmp(&b.relation).then_with(|| a.entry.path.cmp(&b.entry.path)));
        found
    }

    /// Every readable entry's summary with its aliases, by path.
    pub(crate) fn named_entries(&self) -> Vec<(EntrySummary, Vec<String>)> {
        self.entries.values().map(|c| (c.record.summary.clone(), c.record.aliases.clone())).collect()
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
mod tests {
    use kb_domain::DigestOrders;
    use proptest::prelude::*;

    use super::*;

    /// A name of one to three words from a small pool (so names often relate), written
    /// with the case, accents and punctuation people use.
    fn a_name() -> impl Strategy<Value = String> {
        let word =
            prop::sample::select(vec!["Priya", "raman", "ZOË", "o'brien", "Ada", "ada", "Kiln", "9", "a-b"]);
        prop::collection::vec(word, 1..=3).prop_map(|words| words.join(" "))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// The lookup by folded name finds exactly what comparing the name with every entry's name
        /// and aliases finds, with the same relation and alias, however entries change.
        #[test]
        fn names_are_found_as_a_look_at_every_entry_would_find_them(
            entries in prop::collection::vec((0..12u8, a_name(), prop::collection::vec(a_name(), 0..3)), 1..30),
            removed in prop::collection::vec(0..12u8, 0..4),
            wanted in prop::collection::vec(a_name(), 1..6),
            looked_after in 0..30usize,
        ) {
            let mut cache = Cache::default();
            for (inserted, (n, name, aliases)) in entries.iter().enumerate() {
                // The names are built part way (or never: each entry is then looked at),
                // then kept as entries change.
                if inserted == looked_after {
                    cache.build_parts();
                }
                let aliases = serde_json::to_string(aliases).unwrap();
                let text = format!("---\nname: {name:?}\naliases: {aliases}\n---\n");
                cache.insert(&entry(&format!("people/p{n}.md"), &text));
            }
            for n in removed {
                cache.remove(&EntryPath::parse(&format!("people/p{n}.md")).unwrap());
            }
            for name in wanted {
                let folded = fold_name(&name);
                let mut expected: Vec<NameMatch> =
                    cache.entries.values().filter_map(|c| name_match(&c.record, &folded)).collect();
                expected.sort_by(|a, b| a.relation.cmp(&b.relation).then_with(|| a.entry.path.cmp(&b.entry.path)));
                let key = |m: &NameMatch| (m.entry.path.clone(), m.relation, m.alias.clone());
                let found: Vec<_> = cache.find_by_name(&name).iter().map(key).collect();
                prop_assert_eq!(found, expected.iter().map(key).collect::<Vec<_>>(), "{}", name);
            }
        }
    }

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
            ..ListFilter::default()
        });
        assert_eq!(page.total, 2);
        assert_eq!(page.entries.len(), 1);
        assert_eq!(page.entries[0].path.to_string(), "projects/undated.md");
    }

    #[test]
    fn other_notes_list_by_folder_and_below() {
        let mut cache = Cache::default();
        for path in ["Journal/2025/a.md", "Journal/b.md", "Journal 2/c.md", "Work/d.md", "e.md", "ideas/f.md"]
        {
            cache.insert(&entry(path, "text"));
        }
        let mut list = |category: Option<Category>, folder: &str, offset: usize| {
            let filter = ListFilter {
                category,
                folder: Some(folder.into()),
                limit: 1,
                offset,
                ..ListFilter::default()
            };
            let page = cache.list(&filter);
            (page.total, page.entries.iter().map(|s| s.path.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(list(Some(Category::Other), "Journal", 0), (2, vec!["Journal/2025/a.md".to_string()]));
        assert_eq!(list(Some(Category::Other), "Journal/", 1), (2, vec!["Journal/b.md".to_string()]));
        assert_eq!(list(None, "Journal/2025", 0).0, 1);
        assert_eq!(list(Some(Category::Other), "", 0).0, 5, "no folder: every other note");
        assert_eq!(list(None, "ideas", 0), (1, vec!["ideas/f.md".to_string()]));
        assert_eq!(
            cache.list(&ListFilter { category: Some(Category::Other), ..ListFilter::default() }).total,
            5
        );
        let folders = |cache: &mut Cache| -> Vec<(String, usize)> {
            cache.other_note_folders().into_iter().map(|f| (f.folder, f.notes)).collect()
        };
        let expected =
            [("", 1), ("Journal", 2), ("Journal 2", 1), ("Work", 1)].map(|(f, n)| (f.to_string(), n));
        assert_eq!(folders(&mut cache), expected);
        cache.remove(&EntryPath::parse("Journal/2025/a.md").unwrap());
        cache.remove(&EntryPath::parse("Work/d.md").unwrap());
        cache.insert(&entry("Journal/b.md", "changed"));
        let expected = [("", 1), ("Journal", 1), ("Journal 2", 1)].map(|(f, n)| (f.to_string(), n));
        assert_eq!(folders(&mut cache), expected);
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
        let names =
            |c: &mut Cache| c.referrers_of(&target).iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(names(&mut cache), ["people/a.md", "ideas/b.md"]);
        cache.insert(&entry("people/a.md", "---\nrelated_projects: []\n---\n"));
        assert_eq!(names(&mut cache), ["ideas/b.md"]);
        cache.remove(&EntryPath::parse("ideas/b.md").unwrap());
        assert!(names(&mut cache).is_empty());
        assert!(cache.derived.no_referrers());
    }

    /// One step of a random history of the cache.
    #[derive(Debug, Clone)]
    enum Step {
        Insert {
            slot: usize,
            category: usize,
            status: Option<usize>,
            day: Option<u32>,
        },
        Remove {
            slot: usize,
            category: usize,
        },
        Malformed {
            slot: usize,
            category: usize,
        },
        /// Asks for every derived part, so that it is built here and kept up to date by
        /// the steps after (without one, each is built at the end from the entries).
        Look,
    }

    const STATUSES: [&str; 3] = ["active", "done", "waiting"];

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            6 => (0..12usize, 0..5usize, proptest::option::of(0..3usize), proptest::option::of(1..4u32))
                .prop_map(|(slot, category, status, day)| Step::Insert { slot, category, status, day }),
            2 => (0..12usize, 0..5usize).prop_map(|(slot, category)| Step::Remove { slot, category }),
            1 => (0..12usize, 0..5usize).prop_map(|(slot, category)| Step::Malformed { slot, category }),
            1 => Just(Step::Look),
        ]
    }

    /// Builds every derived part of `cache` a list, a digest, a name or a move asks for.
    fn look_at_everything(cache: &mut Cache) {
        let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 3).unwrap();
        let now = today.and_hms_opt(12, 0, 0).unwrap().and_utc();
        for category in std::iter::once(None).chain(Category::ALL.map(Some)) {
            for status in std::iter::once(None).chain(STATUSES.map(|s| Some(s.to_string()))) {
                cache.list(&ListFilter { category, status, ..ListFilter::default() });
            }
        }
        cache.digest_candidates(today, now);
        cache.derived.by_name(Cache::sources(&cache.entries));
        cache.referrers_of(&slot_path(0, 0));
        cache.other_note_folders();
    }

    fn slot_path(slot: usize, category: usize) -> EntryPath {
        EntryPath::parse(&format!("{}/e{slot}.md", Category::ALL[category].as_str())).unwrap()
    }

    /// What a list must answer, worked out from every entry by sorting.
    fn brute_force(all: &BTreeMap<EntryPath, kb_domain::EntrySummary>, filter: &ListFilter) -> ListPage {
        let mut matching: Vec<&kb_domain::EntrySummary> = all
            .values()
            .filter(|s| filter.category.is_none_or(|c| s.category == c))
            .filter(|s| filter.status.as_deref().is_none_or(|want| s.status.as_deref() == Some(want)))
            .collect();
        matching.sort_by(|a, b| match (a.updated_at, b.updated_at) {
            (Some(x), Some(y)) => y.cmp(&x).then_with(|| a.path.cmp(&b.path)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => a.path.cmp(&b.path),
        });
        let total = matching.len();
        let limit = if filter.limit == 0 { usize::MAX } else { filter.limit };
        ListPage { entries: matching.into_iter().skip(filter.offset).take(limit).cloned().collect(), total }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

        /// Whatever happens to the entries, every list the kept orders answer is the one
        /// sorting every entry would give, the digest's and the nudges' orders are those of
        /// the entries now, and the entry list holds every entry.
        #[test]
        fn kept_orders_answer_like_a_full_sort(
            steps in proptest::collection::vec(step(), 1..60),
            category in proptest::option::of(0..5usize),
            status in proptest::option::of(0..4usize),
            limit in 0..6usize,
            offset in 0..6usize,
        ) {
            let mut cache = Cache::default();
            let mut truth: BTreeMap<EntryPath, kb_domain::EntrySummary> = BTreeMap::new();
            let mut records: BTreeMap<EntryPath, Arc<CatalogueEntry>> = BTreeMap::new();
            for step in steps {
                match step {
                    Step::Insert { slot, category, status, day } => {
                        let path = slot_path(slot, category);
                        let mut text = String::from("---\n");
                        if let Some(s) = status {
                            text.push_str(&format!("status: {}\n", STATUSES[s]));
                        }
                        if let Some(d) = day {
                            text.push_str(&format!("updated_at: 2026-11-0{d}T10:00:00Z\n"));
                            text.push_str(&format!("due_date: 2026-11-0{}\n", 5 - d));
                            text.push_str("follow_ups: [call]\n");
                            if d != 2 {
                                text.push_str(&format!("created_at: 2026-11-0{}T10:00:00Z\n", 4 - d));
                            }
                        }
                        text.push_str("---\nbody\n");
                        let e = Entry::from_document(path.clone(), &text).unwrap();
                        cache.insert(&e);
                        truth.insert(path.clone(), e.summary());
                        records.insert(path, Arc::new(CatalogueEntry::of(&e)));
                    }
                    Step::Remove { slot, category } => {
                        let path = slot_path(slot, category);
                        proptest::prop_assert_eq!(cache.remove(&path), truth.remove(&path).is_some());
                        records.remove(&path);
                    }
                    Step::Malformed { slot, category } => {
                        let path = slot_path(slot, category);
                        cache.mark_malformed(&MalformedFile { path: path.clone(), reason: "bad".into() });
                        truth.remove(&path);
                        records.remove(&path);
                    }
                    Step::Look => look_at_everything(&mut cache),
                }
            }
            // Status 3 is one no entry has.
            let filter = ListFilter {
                category: category.map(|c| Category::ALL[c]),
                status: status.map(|s| STATUSES.get(s).copied().unwrap_or("blocked").to_string()),
                limit,
                offset,
                ..ListFilter::default()
            };
            proptest::prop_assert_eq!(cache.list(&filter), brute_force(&truth, &filter));
            proptest::prop_assert_eq!(cache.len(), truth.len());
            let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 3).unwrap();
            let now = today.and_hms_opt(12, 0, 0).unwrap().and_utc() + chrono::Duration::days(2);
            let paths = |c: kb_domain::DigestCandidates| {
                [c.open_actions, c.follow_ups, c.overdue, c.inbox_waiting, c.inbox_oldest, c.recent, c.open_loops]
                    .map(|list| list.iter().map(|r| r.summary.path.clone()).collect::<Vec<_>>())
            };
            proptest::prop_assert_eq!(
                paths(cache.digest_candidates(today, now)),
                paths(DigestOrders::of(records.values()).candidates(today, now))
            );
            // Lines that fall between the generated days, so each rule picks some and not others.
            let settings = kb_domain::nudges::NudgeSettings {
                stale_days: 3,
                due_within_days: 0,
                follow_up_days: 1,
                inbox_days: 3,
                quiet_days: 3,
            };
            let nudge_paths = |c: kb_domain::nudges::NudgeCandidates| {
                c.records.iter().map(|r| r.summary.path.clone()).collect::<Vec<_>>()
            };
            proptest::prop_assert_eq!(
                nudge_paths(cache.nudge_candidates(today, now, settings)),
                nudge_paths(DigestOrders::of(records.values()).nudge_candidates(today, now, settings))
            );
            let listed: Vec<kb_domain::EntrySummary> = cache
                .entry_list_snapshot()
                .categories
                .into_iter()
                .flat_map(|(_, items)| items.into_iter().map(|r| r.summary.clone()))
                .collect();
            proptest::prop_assert_eq!(listed.len(), truth.len());
        }
    }
}
