//! [`MemoryRepository`] and [`MemorySearch`]: the vault and index ports kept in memory.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use kb_domain::{
    Category, ChangeContext, Clock, Entry, EntryCatalogue, EntryId, EntryPath, EntryReader, EntryUpdate,
    EntryWriter, ListFilter, ListPage, MalformedFile, MoveOutcome, NewEntry, RepositoryError,
    RevisionHistory, SearchError, SearchHit, SearchIndex, SearchQuery, SearchResults, Slug, UpdateOutcome,
    transform_for_move,
};

/// The vault in memory: same contract as the markdown vault, no files.
pub struct MemoryRepository {
    entries: Mutex<BTreeMap<EntryPath, Entry>>,
    clock: Arc<dyn Clock>,
}

impl MemoryRepository {
    /// An empty vault whose timestamps come from `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> MemoryRepository {
        MemoryRepository { entries: Mutex::new(BTreeMap::new()), clock }
    }

    /// Puts an entry in as it is (like a file a person wrote), replacing any at its path.
    pub fn insert(&self, entry: Entry) {
        self.lock().insert(entry.path.clone(), entry);
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the vault is empty.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<EntryPath, Entry>> {
        kb_domain::sync::lock(&self.entries)
    }

    fn free_path(entries: &BTreeMap<EntryPath, Entry>, category: Category, slug: &Slug) -> EntryPath {
        let mut path = EntryPath::for_slug(category, slug);
        let mut n = 2;
        while entries.contains_key(&path) {
            path = EntryPath::for_slug(category, &slug.with_suffix(n));
            n += 1;
        }
        path
    }
}

impl EntryWriter for MemoryRepository {
    fn create_as(&self, new: NewEntry, _by: &ChangeContext) -> Result<Entry, RepositoryError> {
        let frontmatter = new.frontmatter(&EntryId::generate(), self.clock.now())?;
        let mut entries = self.lock();
        let path = Self::free_path(&entries, new.category, &Slug::from_name(&new.name));
        let entry = Entry { path: path.clone(), frontmatter, body: new.body };
        entries.insert(path, entry.clone());
        Ok(entry)
    }

    fn update_as(
        &self,
        path: &EntryPath,
        update: &EntryUpdate,
        _by: &ChangeContext,
    ) -> Result<UpdateOutcome, RepositoryError> {
        let mut entries = self.lock();
        let mut entry = entries.get(path).cloned().ok_or_else(|| RepositoryError::NotFound(path.clone()))?;
        let updated_fields = update.apply(&mut entry, self.clock.now())?;
        entries.insert(path.clone(), entry.clone());
        Ok(UpdateOutcome { entry, updated_fields })
    }

    fn move_entry_as(
        &self,
        path: &EntryPath,
        target: Category,
        _by: &ChangeContext,
    ) -> Result<MoveOutcome, RepositoryError> {
        let mut entries = self.lock();
        let entry = entries.get(path).cloned().ok_or_else(|| RepositoryError::NotFound(path.clone()))?;
        let (frontmatter, body) = transform_for_move(&entry, target, self.clock.now())?;
        let slug = Slug::parse(path.stem()).unwrap_or_else(|_| Slug::from_name(&entry.name()));
        entries.remove(path);
        let new_path = Self::free_path(&entries, target, &slug);
        let moved = Entry { path: new_path.clone(), frontmatter, body };
        entries.insert(new_path, moved.clone());
        Ok(MoveOutcome { old_path: path.clone(), entry: moved })
    }

    fn move_to_path_as(
        &self,
        path: &EntryPath,
        target: &EntryPath,
        _by: &ChangeContext,
    ) -> Result<MoveOutcome, RepositoryError> {
        let mut entries = self.lock();
        let entry = entries.get(path).cloned().ok_or_else(|| RepositoryError::NotFound(path.clone()))?;
        if target == path {
            return Err(kb_domain::transform::MoveError::SamePath(target.clone()).into());
        }
        if entries.contains_key(target) {
            return Err(kb_domain::transform::MoveError::PathTaken(target.clone()).into());
        }
        let adopted = target.category() != path.category() && target.category().is_folder();
        let (frontmatter, body) = if adopted {
            transform_for_move(&entry, target.category(), self.clock.now())?
        } else {
            (entry.frontmatter, entry.body)
        };
        entries.remove(path);
        let moved = Entry { path: target.clone(), frontmatter, body };
        entries.insert(target.clone(), moved.clone());
        Ok(MoveOutcome { old_path: path.clone(), entry: moved })
    }

    fn delete_as(
        &self,
        path: &EntryPath,
        _by: &ChangeContext,
    ) -> Result<Option<kb_domain::Revision>, RepositoryError> {
        self.lock().remove(path).map(|_| None).ok_or_else(|| RepositoryError::NotFound(path.clone()))
    }

    fn merge_as(
        &self,
        target: &EntryPath,
        sources: &[EntryPath],
        on: chrono::NaiveDate,
        _by: &ChangeContext,
    ) -> Result<kb_domain::MergeOutcome, RepositoryError> {
        kb_domain::merge::check_merge(target, sources)?;
        let mut entries = self.lock();
        let read = |path: &EntryPath| {
            entries.get(path).cloned().ok_or_else(|| RepositoryError::NotFound(path.clone()))
        };
        let target_entry = read(target)?;
        let source_entries = sources.iter().map(read).collect::<Result<Vec<_>, _>>()?;
        let merged = kb_domain::merge::merge_entries(&target_entry, &source_entries, on, self.clock.now())?;
        for source in sources {
            entries.remove(source);
        }
        entries.insert(target.clone(), merged.entry.clone());
        // Other entries' references to a source now point at the target.
        let mut references_updated = Vec::new();
        let others: Vec<EntryPath> = entries.keys().filter(|p| *p != target).cloned().collect();
        for path in others {
            let Some(entry) = entries.get(&path) else { continue };
            let mut text = entry.to_document();
            let mut changed = false;
            for source in sources {
                if let Some(retargeted) =
                    kb_domain::references::retarget_references(&path, &text, source, target)
                {
                    text = retargeted;
                    changed = true;
                }
            }
            if changed && let Ok(entry) = Entry::from_document(path.clone(), &text) {
                entries.insert(path.clone(), entry);
                references_updated.push(path);
            }
        }
        Ok(kb_domain::MergeOutcome { entry: merged.entry, removed: sources.to_vec(), references_updated })
    }
}

/// The links between `entries`, built at each call: the memory repository holds few.
fn link_graph(entries: &BTreeMap<EntryPath, Entry>) -> kb_domain::links::LinkGraph {
    let mut graph = kb_domain::links::LinkGraph::default();
    for entry in entries.values() {
        let links = kb_domain::links::note_links(&entry.frontmatter, &entry.body);
        graph.upsert_parsed(&entry.path.to_string(), links, &kb_domain::CatalogueEntry::of(entry).aliases);
    }
    graph
}

impl EntryCatalogue for MemoryRepository {
    fn other_note_folders(&self) -> Result<Vec<kb_domain::FolderCount>, RepositoryError> {
        let mut counts: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
        for path in self.lock().keys().filter(|p| p.is_other()) {
            *counts.entry(path.top_folder().to_string()).or_default() += 1;
        }
        Ok(counts.into_iter().map(|(folder, notes)| kb_domain::FolderCount { folder, notes }).collect())
    }

    fn links(&self, path: &EntryPath) -> Result<kb_domain::EntryLinks, RepositoryError> {
        let entries = self.lock();
        if !entries.contains_key(path) {
            return Ok(kb_domain::EntryLinks::default());
        }
        Ok(kb_domain::EntryLinks::of(&link_graph(&entries), path, |p| entries.get(p).map(Entry::name)))
    }

    fn context(&self, path: &EntryPath, depth: u8) -> Result<kb_domain::EntryContext, RepositoryError> {
        let entries = self.lock();
        kb_domain::EntryContext::of(&link_graph(&entries), path, depth, |p| {
            entries.get(p).map(Entry::summary)
        })
        .ok_or_else(|| RepositoryError::NotFound(path.clone()))
    }

    fn list(&self, filter: &ListFilter) -> Result<ListPage, RepositoryError> {
        let entries = self.lock();
        let mut matching: Vec<&Entry> = entries
            .values()
            .filter(|e| filter.category.is_none_or(|c| e.category() == c))
            .filter(|e| filter.status.as_deref().is_none_or(|s| e.status() == Some(s)))
            .filter(|e| filter.folder.as_deref().is_none_or(|f| e.path.is_within(f)))
            .collect();
        matching.sort_by(|a, b| b.updated_at().cmp(&a.updated_at()).then_with(|| a.path.cmp(&b.path)));
        let total = matching.len();
        let entries =
            matching.into_iter().skip(filter.offset).take(filter.limit).map(Entry::summary).collect();
        Ok(ListPage { entries, total })
    }

    fn find_by_name(&self, name: &str) -> Result<Vec<kb_domain::NameMatch>, RepositoryError> {
        let wanted = kb_domain::names::fold_name(name);
        let mut found: Vec<kb_domain::NameMatch> = self
            .lock()
            .values()
            .filter_map(|e| {
                let record = kb_domain::CatalogueEntry::of(e);
                let names = std::iter::once(record.name().to_string()).chain(record.aliases.iter().cloned());
                let best = names
                    .filter_map(|n| {
                        kb_domain::names::relate(&kb_domain::names::fold_name(&n), &wanted).map(|r| (r, n))
                    })
                    .min_by_key(|(r, _)| *r)?;
                let alias = (best.1 != record.name()).then_some(best.1);
                Some(kb_domain::NameMatch { entry: record.summary.clone(), relation: best.0, alias })
            })
            .filter(|m| !kb_domain::conflicts::is_conflict_copy(m.entry.path.file_name()))
            .collect();
        found.sort_by(|a, b| a.relation.cmp(&b.relation).then_with(|| a.entry.path.cmp(&b.entry.path)));
        Ok(found)
    }

    fn named_entries(&self) -> Result<Vec<(kb_domain::EntrySummary, Vec<String>)>, RepositoryError> {
        Ok(self
            .lock()
            .values()
            .map(|e| {
                let record = kb_domain::CatalogueEntry::of(e);
                (record.summary.clone(), record.aliases.clone())
            })
            .collect())
    }

    fn digest_candidates(
        &self,
        today: chrono::NaiveDate,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<kb_domain::DigestCandidates, RepositoryError> {
        let records: Vec<_> =
            self.lock().values().map(|e| std::sync::Arc::new(kb_domain::CatalogueEntry::of(e))).collect();
        Ok(kb_domain::DigestOrders::of(&records).candidates(today, now))
    }

    fn nudge_candidates(
        &self,
        today: chrono::NaiveDate,
        now: chrono::DateTime<chrono::Utc>,
        settings: kb_domain::nudges::NudgeSettings,
    ) -> Result<kb_domain::nudges::NudgeCandidates, RepositoryError> {
        let records: Vec<_> =
            self.lock().values().map(|e| std::sync::Arc::new(kb_domain::CatalogueEntry::of(e))).collect();
        Ok(kb_domain::DigestOrders::of(&records).nudge_candidates(today, now, settings))
    }

    fn malformed(&self) -> Vec<MalformedFile> {
        Vec::new()
    }

    fn entry_list_markdown(&self) -> String {
        let entries = self.lock();
        let mut out = String::from("# Index\n");
        for e in entries.values() {
            out.push_str(&format!("- [{}]({}) — {}\n", e.name(), e.path, e.summary_line()));
        }
        out
    }

    fn refresh(&self, path: &EntryPath) -> Result<Option<Entry>, RepositoryError> {
        Ok(self.lock().get(path).cloned())
    }
}

impl EntryReader for MemoryRepository {
    fn get(&self, path: &EntryPath) -> Result<Entry, RepositoryError> {
        self.lock().get(path).cloned().ok_or_else(|| RepositoryError::NotFound(path.clone()))
    }

    /// The entry with the text kb would write for it.
    fn get_with_text(&self, path: &EntryPath) -> Result<(Entry, String), RepositoryError> {
        let entry = self.get(path)?;
        let text = entry.to_document();
        Ok((entry, text))
    }

    fn all_entries(&self) -> Result<Vec<Entry>, RepositoryError> {
        Ok(self.lock().values().cloned().collect())
    }
}

/// No revision history: every call says there is none.
impl RevisionHistory for MemoryRepository {}

/// A naive index that reads the in-memory vault at each search: every term must occur
/// (case-insensitive substring) in a searched field; the score counts occurrences.
pub struct MemorySearch {
    repository: Arc<MemoryRepository>,
}

impl MemorySearch {
    /// An index over `repository`.
    pub fn over(repository: Arc<MemoryRepository>) -> MemorySearch {
        MemorySearch { repository }
    }
}

/// The fields search looks in, by name.
fn searched_fields(entry: &Entry) -> Vec<(&'static str, String)> {
    let fm = &entry.frontmatter;
    let mut fields = vec![("name", entry.name())];
    for key in ["one_liner", "context", "next_action", "original_text"] {
        if let Some(text) = fm.get_str(key) {
            fields.push((key, text.to_string()));
        }
    }
    fields.push(("tags", entry.tags().join(" ")));
    fields.push(("body", entry.body.clone()));
    fields
}

/// The first line of `document` holding `term` (lowercase), as a passage.
fn first_line_with(document: &str, term: &str) -> Option<kb_domain::Passage> {
    let (index, line) = kb_domain::lines::file_lines(document)
        .enumerate()
        .find(|(_, line)| line.to_lowercase().contains(term))?;
    let number = u32::try_from(index + 1).ok()?;
    Some(kb_domain::Passage { text: line.to_string(), lines: kb_domain::LineRange::line(number)? })
}

impl SearchIndex for MemorySearch {
    fn search(&self, query: &SearchQuery) -> Result<SearchResults, SearchError> {
        let terms: Vec<String> = query.text.split_whitespace().map(str::to_lowercase).collect();
        if terms.is_empty() {
            return Ok(SearchResults::none());
        }
        let entries =
            self.repository.all_entries().map_err(|e| SearchError::index("cannot read the entries", e))?;
        let mut hits: Vec<SearchHit> = entries
            .iter()
            .filter(|e| query.category.is_none_or(|c| e.category() == c))
            .filter_map(|e| {
                let fields: Vec<(&str, String)> =
                    searched_fields(e).into_iter().map(|(k, v)| (k, v.to_lowercase())).collect();
                let all = terms.iter().all(|t| fields.iter().any(|(_, v)| v.contains(t.as_str())));
                if !all {
                    return None;
                }
                let score: usize = terms
                    .iter()
                    .map(|t| fields.iter().map(|(_, v)| v.matches(t.as_str()).count()).sum::<usize>())
                    .sum();
                let (field, text) = fields.iter().find(|(_, v)| v.contains(terms[0].as_str()))?;
                Some(SearchHit {
                    path: e.path.clone(),
                    name: e.name(),
                    category: e.category(),
                    matched_field: (*field).to_string(),
                    snippet: text.chars().take(80).collect(),
                    score: score as f32,
                    matched_by: kb_domain::MatchedBy::Keyword,
                    passage: first_line_with(&e.to_document(), &terms[0]),
                })
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.path.cmp(&b.path)));
        let total = hits.len();
        let entries = hits.into_iter().skip(query.offset).take(query.limit).collect();
        Ok(SearchResults { entries, total, ..SearchResults::none() })
    }

    fn upsert(&self, _entry: &Entry) -> Result<(), SearchError> {
        Ok(())
    }

    fn remove(&self, _path: &EntryPath) -> Result<(), SearchError> {
        Ok(())
    }
}
