//! Search by meaning: the vectors an index keeps beside it ([`crate::vectors`]), the work
//! its owner hands the embedder, and the searches that use them — semantic, hybrid (the
//! keyword ranking and the nearest parts fused by reciprocal rank), and related entries.
//!
//! Which entries need vectors is found by comparing what is indexed (each path's stamp)
//! with the entries the vector file records: an entry whose stamp differs is read back
//! from the index (every indexed text is stored), cut into parts, and only the parts whose
//! text has no vector yet are embedded. Removed entries are recorded as gone.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;

use kb_domain::sync::lock;
use kb_domain::{
    EmbeddingCoverage, EntryPath, MatchedBy, QueryVector, RelatedEntry, SearchError, SearchHit, SearchMode,
    SearchQuery, SearchResults, Stamp,
};
use sha2::{Digest, Sha256};
use tantivy::collector::DocSetCollector;
use tantivy::query::TermQuery;
use tantivy::schema::IndexRecordOption;
use tantivy::{Searcher, TantivyDocument, Term};

use super::TantivyIndex;
use super::fusion::fuse;
use crate::document::StoredHit;
use crate::open::load_stamps;
use crate::passage;
use crate::snippet::opening;
use crate::vectors::chunk::{Chunk, chunks};
use crate::vectors::store::{Chance, EntryRecord, Key, Near, ProbeCheck, Store};

/// How deep each ranking is read for hybrid fusion, at least.
const FUSION_DEPTH: usize = 50;
/// In hybrid search, entries whose nearest part is further than this below the best
/// entry's similarity are not matches by meaning: every entry has some similarity to any
/// query, and without a floor the fusion would fill each page with unrelated entries.
/// Relative to the best, as models spread their similarities differently.
const HYBRID_MARGIN: f32 = 0.06;
/// A match by meaning may have to score only this many times as far above the typical
/// score as the vault's best part does for queries on nothing it holds (see
/// [`meaning_floor`] and `vectors::store::calibration`).
const UNRELATED_MARGIN: f32 = 1.2;
/// In a vault measured by score, a match by meaning scores above the best of the
/// unrelated queries by this share of the room above that score (0.01 for e5, whose
/// unrelated text scores about 0.82 there).
const BEYOND_CHANCE: f32 = 0.06;
/// In a vault measured by score, a match must also stand this share of the default (see
/// [`meaning_floor`]) above the query's median, at most: a query of emoji, punctuation or
/// function words scores high against every note, but no higher against one than another.
const SHARE_WITH_SCORE: f32 = 0.75;
/// The vault's own measure lowers the default cut at most to this share of it: a measure
/// near nothing (a vault whose notes are all alike) would let every query match.
const LEAST_OF_DEFAULT: f32 = 0.5;
/// The spread of a model's scores of unrelated text, as a share of the room above their
/// typical score (see [`meaning_floor`]).
const UNRELATED_SPREAD: f32 = 0.07;
/// The fewest parts the cut counts with: in a vault of a handful of entries the median
/// says little, and e5 scores the best of five unrelated notes as high as a loose
/// paraphrase of one (0.14 of the room above the median for both).
const MIN_PARTS: usize = 16;
/// The most entries one round of embedding work looks at.
const ENTRIES_PER_ROUND: usize = 2_000;

/// The embedding model whose vectors an index keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorModel {
    /// The model's name (a query vector of another model is not searched with).
    pub model: String,
    /// What sets its vectors apart (the model and its document prefix): the vector file
    /// is chosen by it, so another identity starts again.
    pub identity: String,
}

/// The vectors of an index: the model and its store, opened at first need.
#[derive(Debug)]
pub(crate) struct Vectors {
    /// The model.
    model: VectorModel,
    /// The file.
    file: PathBuf,
    /// The store, once opened.
    store: Mutex<Option<Store>>,
}

/// What the owner's embedder is to do in one round: texts to embed, and the entries to
/// record once they are (some need no new vector: their parts are known).
#[derive(Debug, Default)]
pub struct EmbeddingWork {
    /// The texts to embed, in order.
    texts: Vec<String>,
    /// Their keys.
    keys: Vec<Key>,
    /// The entries to record after.
    entries: Vec<EntryRecord>,
}

impl EmbeddingWork {
    /// The texts to embed (as documents), in order.
    pub fn texts(&self) -> &[String] {
        &self.texts
    }

    /// How many entries this round records.
    pub fn entries(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty() && self.entries.is_empty()
    }
}

impl TantivyIndex {
    /// Keeps vectors of `model` beside the index, in `.kb/vectors/` (beside the index
    /// folder).
    pub(crate) fn keep_vectors(&mut self, model: VectorModel) {
        let folder =
            self.index_dir.parent().map_or_else(|| self.index_dir.join("vectors"), |kb| kb.join("vectors"));
        let file = folder.join(file_name(&model.identity));
        self.vectors = Some(Vectors { model, file, store: Mutex::new(None) });
    }

    /// The embedding model whose vectors the index keeps.
    pub fn vector_model(&self) -> Option<&VectorModel> {
        self.vectors.as_ref().map(|v| &v.model)
    }

    /// Runs `f` on the vector store read up to now; `None` without a model.
    fn with_store<R>(&self, f: impl FnOnce(&mut Store) -> R) -> Result<Option<R>, SearchError> {
        let Some(vectors) = &self.vectors else { return Ok(None) };
        let mut store = lock(&vectors.store);
        match store.as_mut() {
            Some(store) => store.refresh(),
            None => Store::open(&vectors.file).map(|opened| {
                *store = Some(opened);
            }),
        }
        .map_err(|error| SearchError::index("cannot read the vectors", error))?;
        Ok(store.as_mut().map(f))
    }

    /// The next round of embedding work: in the index's owner only (`None` elsewhere, or
    /// without a model). At most about `max_texts` texts to embed (an entry with more
    /// parts is taken whole).
    pub fn embedding_work(&self, max_texts: usize) -> Result<Option<EmbeddingWork>, SearchError> {
        if !self.is_owner() {
            return Ok(None);
        }
        let Some(identity) = self.vectors.as_ref().map(|v| v.model.identity.clone()) else { return Ok(None) };
        let indexed = self.indexed.snapshot();
        let searcher = self.handles.searcher();
        self.with_store(|store| {
            if let Err(error) = store.compact_if_worth_it() {
                tracing::warn!(%error, "the vector file could not be rewritten");
            }
            let mut stale: Vec<(&EntryPath, Stamp)> = indexed
                .iter()
                .filter(|(path, stamp)| store.entry(path).is_none_or(|kept| kept.stamp != **stamp))
                .map(|(path, stamp)| (path, *stamp))
                .collect();
            stale.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let mut work = EmbeddingWork::default();
            // Entries no longer indexed are recorded as gone.
            for (path, _) in
                store.entries().filter(|(path, _)| !indexed.contains_key(*path)).take(ENTRIES_PER_ROUND)
            {
                work.entries.push(EntryRecord { path: path.clone(), stamp: Stamp::NONE, parts: Vec::new() });
            }
            let mut planned: HashSet<Key> = HashSet::new();
            for (looked, (path, stamp)) in stale.iter().enumerate() {
                if looked >= ENTRIES_PER_ROUND || (!work.texts.is_empty() && work.texts.len() >= max_texts) {
                    break;
                }
                let Some(stored) = stored_hit(self, &searcher, path) else { continue };
                let parts = chunks(&stored.texts);
                let keys: Vec<Key> = parts.iter().map(|part| text_key(&identity, &part.text)).collect();
                for (part, key) in parts.into_iter().zip(&keys) {
                    if !store.has(key) && planned.insert(*key) {
                        work.texts.push(part.text);
                        work.keys.push(*key);
                    }
                }
                work.entries.push(EntryRecord { path: (*path).clone(), stamp: *stamp, parts: keys });
            }
            work
        })
    }

    /// Keeps the vectors of a round of work (`vectors` in the order of its texts) and
    /// records its entries.
    pub fn save_embeddings(&self, work: EmbeddingWork, vectors: Vec<Vec<f32>>) -> Result<(), SearchError> {
        if vectors.len() != work.keys.len() {
            return Err(SearchError::index_message(format!(
                "{} vectors for {} texts",
                vectors.len(),
                work.keys.len()
            )));
        }
        let keyed: Vec<(Key, Vec<f32>)> = work.keys.into_iter().zip(vectors).collect();
        self.with_store(|store| store.append(&keyed, &work.entries))?
            .transpose()
            .map_err(|error| SearchError::index("cannot keep the vectors", error))?;
        Ok(())
    }

    /// The queries whose vectors (embedded as queries) calibrate the cut of matches by
    /// meaning, when the index's owner is to embed them and hand them to
    /// [`TantivyIndex::keep_unrelated`]: `None` once they are kept, in other processes, or
    /// without a model.
    pub fn unrelated_queries_needed(&self) -> Result<Option<&'static [&'static str]>, SearchError> {
        if !self.is_owner() {
            return Ok(None);
        }
        Ok(self
            .with_store(|store| store.has_unrelated())?
            .and_then(|kept| (!kept).then_some(&crate::vectors::UNRELATED_QUERIES[..])))
    }

    /// Keeps the vectors of [`TantivyIndex::unrelated_queries_needed`]'s queries, in order.
    pub fn keep_unrelated(&self, vectors: Vec<Vec<f32>>) -> Result<(), SearchError> {
        if vectors.len() != crate::vectors::UNRELATED_QUERIES.len() {
            return Err(SearchError::index_message(format!(
                "{} vectors for {} queries",
                vectors.len(),
                crate::vectors::UNRELATED_QUERIES.len()
            )));
        }
        self.with_store(|store| store.keep_unrelated(&vectors))?
            .transpose()
            .map_err(|error| SearchError::index("cannot keep the vectors", error))?;
        Ok(())
    }

    /// Checks `probe`, the vector the embedder now gives the probe text, against the one the
    /// vectors were made with, starting them again when another model answers. In the
    /// index's owner only (`None` elsewhere, or without a model).
    pub fn check_vector_probe(&self, probe: &[f32]) -> Result<Option<ProbeCheck>, SearchError> {
        if !self.is_owner() {
            return Ok(None);
        }
        self.with_store(|store| store.check_probe(probe))?
            .transpose()
            .map_err(|error| SearchError::index("cannot keep the vectors", error))
    }

    /// How far embedding got; `None` without a model: the indexed entries whose vectors
    /// were made for the version indexed (the same stamp), of all indexed. Every process
    /// counts alike: the owner from the stamps it keeps, another from those its reader
    /// sees once the owner committed what was queued (an entry whose vectors are of an
    /// earlier version is not embedded, whoever asks).
    pub fn coverage(&self) -> Result<Option<EmbeddingCoverage>, SearchError> {
        let Some(model) = self.vector_model().map(|m| m.model.clone()) else { return Ok(None) };
        let indexed = if self.is_owner() {
            self.indexed.snapshot()
        } else {
            self.read_every_earlier_change(None);
            load_stamps(&self.handles.searcher())
                .map_err(|error| SearchError::index("cannot read what is indexed", error))?
        };
        let (embedded, calibrated) = self
            .with_store(|store| {
                let embedded = indexed
                    .iter()
                    .filter(|(path, stamp)| store.entry(path).is_some_and(|kept| kept.stamp == **stamp))
                    .count();
                (embedded, store.chance().is_some())
            })?
            .unwrap_or((0, false));
        let total = indexed.len();
        Ok(Some(EmbeddingCoverage { model, embedded, total, queued: total - embedded, calibrated }))
    }

    /// The bytes the vectors take in memory (0 before they are read).
    pub fn vector_memory(&self) -> usize {
        self.vectors.as_ref().and_then(|v| lock(&v.store).as_ref().map(Store::memory_bytes)).unwrap_or(0)
    }

    /// The vector of `query` when it asks for meaning and the index keeps vectors of its
    /// model.
    fn usable_vector<'q>(&self, query: &'q SearchQuery) -> Option<&'q QueryVector> {
        let model = self.vector_model()?;
        let vector = query.vector.as_ref().filter(|_| query.mode != SearchMode::Keyword && !query.prefix)?;
        (vector.model() == model.model).then_some(vector)
    }

    /// Answers `query` in its mode: keyword search, or (with a usable vector) semantic or
    /// hybrid.
    pub(super) fn search_in_mode(&self, query: &SearchQuery) -> Result<SearchResults, SearchError> {
        let Some(vector) = self.usable_vector(query) else { return self.search_now(query) };
        let kept = self.with_store(|store| store.dimension())?.unwrap_or(0);
        if kept != 0 && kept != vector.values().len() {
            let problem = format!(
                "the query's vector has {} numbers but the vectors kept for {} have {kept}",
                vector.values().len(),
                vector.model()
            );
            // Answered by words: the mode of the answer tells the caller.
            tracing::warn!(%problem, "searching by words only");
            return self.search_now(query);
        }
        match query.mode {
            SearchMode::Semantic => self.search_semantic(query, vector),
            _ => self.search_hybrid(query, vector),
        }
    }

    /// The entries nearest `vector` among those `query` filters in, as many as `depth`,
    /// that match by meaning: those scoring at least [`meaning_floor`].
    fn nearest(
        &self,
        query: &SearchQuery,
        vector: &QueryVector,
        depth: usize,
    ) -> Result<Vec<Near>, SearchError> {
        let category = query.category;
        Ok(self
            .with_store(|store| {
                let Some(typical) = store.typical_score(vector.values()) else { return Vec::new() };
                let floor = meaning_floor(typical, store.live_parts(), store.chance());
                let mut near = store
                    .nearest(vector.values(), depth, |path| category.is_none_or(|c| path.category() == c));
                near.retain(|near| near.score >= floor);
                near
            })?
            .unwrap_or_default())
    }

    /// Semantic mode: the nearest entries, each with its nearest part as the snippet.
    fn search_semantic(
        &self,
        query: &SearchQuery,
        vector: &QueryVector,
    ) -> Result<SearchResults, SearchError> {
        self.read_every_earlier_change(query.reader.as_deref());
        let limit = kb_domain::paging::page_size((query.limit > 0).then_some(query.limit as u64));
        let near = self.nearest(query, vector, query.offset + limit)?;
        let searcher = self.handles.searcher();
        let entries: Vec<SearchHit> = near
            .into_iter()
            .skip(query.offset)
            .filter_map(|near| semantic_hit(self, &searcher, &near, near.score))
            .collect();
        let count = entries.len();
        Ok(SearchResults {
            total: count,
            partial_total: 0,
            entries,
            fuzzy: false,
            mode: SearchMode::Semantic,
            semantic_hits: count,
        })
    }

    /// Hybrid mode: the keyword ranking and the nearest entries fused ([`fuse`]).
    /// `total` stays the keyword count.
    fn search_hybrid(&self, query: &SearchQuery, vector: &QueryVector) -> Result<SearchResults, SearchError> {
        let limit = kb_domain::paging::page_size((query.limit > 0).then_some(query.limit as u64));
        let depth = (query.offset + limit).max(FUSION_DEPTH);
        let keyword =
            self.rank_by_words(&SearchQuery { offset: 0, limit: depth, vector: None, ..query.clone() })?;
        let mut near = self.nearest(query, vector, depth)?;
        if let Some(best) = near.first().map(|n| n.score) {
            near.retain(|n| n.score >= best - HYBRID_MARGIN);
        }
        let words: Vec<&EntryPath> = keyword.paths().collect();
        let meaning: Vec<&EntryPath> = near.iter().map(|near| &near.path).collect();
        let order = fuse(&words, &meaning);
        let searcher = self.handles.searcher();
        let mut entries = Vec::with_capacity(limit);
        for (path, fused) in order.into_iter().skip(query.offset) {
            if entries.len() >= limit {
                break;
            }
            let hit = match (fused.by_words, fused.by_meaning) {
                (Some(rank), meaning) => keyword.hit(rank).map(|mut hit| {
                    if meaning.is_some() {
                        hit.matched_by = MatchedBy::Both;
                    }
                    hit.score = fused.score;
                    hit
                }),
                (None, Some(rank)) => semantic_hit(self, &searcher, &near[rank], fused.score),
                (None, None) => None,
            };
            entries.extend(hit.filter(|hit| &hit.path == path));
        }
        let semantic_hits = entries.iter().filter(|hit| hit.matched_by == MatchedBy::Semantic).count();
        Ok(SearchResults {
            entries,
            total: keyword.total,
            partial_total: keyword.partial_total,
            fuzzy: keyword.fuzzy,
            mode: SearchMode::Hybrid,
            semantic_hits,
        })
    }

    /// Up to `limit` other entries nearest `path` in meaning.
    pub(super) fn related_to(
        &self,
        path: &EntryPath,
        limit: usize,
    ) -> Result<Vec<RelatedEntry>, SearchError> {
        let Some(Some(vector)) = self.with_store(|store| store.entry_vector(path))? else {
            return Ok(Vec::new());
        };
        let near = self
            .with_store(|store| store.nearest(&vector, limit + 1, |other| other != path))?
            .unwrap_or_default();
        let searcher = self.handles.searcher();
        Ok(near
            .into_iter()
            .filter_map(|near| {
                let stored = stored_hit(self, &searcher, &near.path)?;
                Some(RelatedEntry {
                    name: stored.name().to_string(),
                    category: near.path.category(),
                    path: near.path,
                    score: near.score,
                })
            })
            .take(limit)
            .collect())
    }
}

/// The least score of a match by meaning for a query whose typical score is `typical`,
/// among `parts` parts, in a vault whose best part scores `chance` for queries on nothing
/// it holds (when measured).
///
/// Every part has some similarity to any query, and models place it differently: e5's
/// scores of unrelated text sit near 0.75-0.8, other models' near 0.1, the fake server's
/// word vectors' near 0. A match must stand out further than the best unrelated part does
/// by chance. The cut follows the query's own scores over the vault: their median (most
/// parts have nothing particular to do with a query) is where unrelated text scores.
/// - By default, the spread of the scores is taken as [`UNRELATED_SPREAD`] of the room
///   above the median (e5's is about 0.015 over 0.22 on hand-written notes), and the best
///   of `parts` unrelated parts lands about `sqrt(2 ln parts)` spreads above the median
///   (the largest of that many draws of a normal distribution), counted as at least
///   [`MIN_PARTS`] parts.
/// - Where the vault's own measured share is lower ([`UNRELATED_MARGIN`] times it), it
///   wins: in a large vault of alike notes the scores spread less than the default says,
///   and the default would cut the paraphrases too (see BENCHMARKS.md for e5's figures);
///   never below [`LEAST_OF_DEFAULT`] of the default.
/// - In a vault measured by score (a small one), a match must also score [`BEYOND_CHANCE`]
///   of the room above the best unrelated score, and the share it must reach is at most
///   [`SHARE_WITH_SCORE`] of the default: the score keeps out queries on subjects near the
///   notes', the share queries that score high against everything.
fn meaning_floor(typical: f32, parts: usize, chance: Option<Chance>) -> f32 {
    let default = UNRELATED_SPREAD * (2.0 * (parts.max(MIN_PARTS) as f32).ln()).sqrt();
    let chance = chance.unwrap_or_default();
    let share = chance
        .share
        .map_or(default, |measured| default.min(UNRELATED_MARGIN * measured).max(LEAST_OF_DEFAULT * default));
    match chance.score {
        Some(best) => {
            let share = share.min(SHARE_WITH_SCORE * default);
            (best + BEYOND_CHANCE * (1.0 - best)).max(typical + share * (1.0 - typical))
        }
        None => typical + share * (1.0 - typical),
    }
}

/// A hit found by meaning only: its nearest part is its snippet and its passage. `None`
/// when the entry is no longer indexed.
fn semantic_hit(index: &TantivyIndex, searcher: &Searcher, near: &Near, score: f32) -> Option<SearchHit> {
    let stored = stored_hit(index, searcher, &near.path)?;
    let parts = chunks(&stored.texts);
    let part: Option<&Chunk> = parts.get(near.part).or_else(|| parts.first());
    let (field, snippet) =
        part.map_or(("content", String::new()), |p| (p.field.label(), opening(&p.passage)));
    Some(SearchHit {
        passage: part.and_then(|part| passage::of_part(&stored, part)),
        name: stored.name().to_string(),
        category: near.path.category(),
        path: near.path.clone(),
        matched_field: field.to_string(),
        snippet,
        score,
        matched_by: MatchedBy::Semantic,
    })
}

/// The stored texts of the entry indexed at `path`.
fn stored_hit(index: &TantivyIndex, searcher: &Searcher, path: &EntryPath) -> Option<StoredHit> {
    let term = Term::from_field_text(index.fields.path, path.as_str());
    let found = searcher.search(&TermQuery::new(term, IndexRecordOption::Basic), &DocSetCollector).ok()?;
    let address = found.into_iter().next()?;
    let doc: TantivyDocument = searcher.doc(address).ok()?;
    Some(StoredHit::from_document(&index.fields, &doc))
}

/// The key of a part's `text` embedded under `identity`.
fn text_key(identity: &str, text: &str) -> Key {
    let mut hasher = Sha256::new();
    hasher.update(identity.as_bytes());
    hasher.update([0]);
    hasher.update(text.as_bytes());
    first_16(&hasher.finalize())
}

/// The first 16 bytes of a digest.
fn first_16(digest: &[u8]) -> Key {
    let mut key = [0; 16];
    key.copy_from_slice(&digest[..16]);
    key
}

/// The vector file of a model identity: its name made safe, and a hash telling apart
/// identities that read alike.
fn file_name(identity: &str) -> String {
    let safe: String = identity
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' })
        .take(60)
        .collect();
    let hash = Sha256::digest(identity.as_bytes());
    format!("{safe}-{:02x}{:02x}{:02x}{:02x}.vec", hash[0], hash[1], hash[2], hash[3])
}
