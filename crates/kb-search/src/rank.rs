//! The final order of a page of hits. The best candidates by text score (every word matched
//! by its stem), and the best of those holding a word in their name or tags, are re-ranked
//! with what is cheap to learn for a handful of documents and costly for every match:
//! - a bonus for each word in the name or tags (in any form, or completed as it is typed),
//!   so such an entry comes before one holding the word only in its notes;
//! - a small bonus for each word held as written, so "meeting" puts the note saying
//!   "meeting" before the one saying "meet";
//! - among equal scores, the more recently updated entry first.

use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tantivy::collector::{Count, TopDocs};
use tantivy::columnar::Column;
use tantivy::query::Query;
use tantivy::schema::IndexRecordOption;
use tantivy::{DateTime, DocAddress, DocId, DocSet, InvertedIndexReader, Searcher, TantivyDocument, Term};

use crate::analysis::tokens;
use crate::document::StoredHit;
use crate::schema::{IndexFields, TextField, UPDATED_AT_FIELD};

/// Candidates looked at beyond the pages asked for, in each of the two candidate lists.
const EXTRA_CANDIDATES: usize = 10;
/// Pages are ranked within windows of this many hits (the candidates of every page of one
/// window are the same), so paging through one never repeats or skips a hit.
const WINDOW: usize = 50;
/// What each query word found in the name or the tags adds.
const NAME_BONUS: f32 = 10.0;
/// What each query word held as written (not only by its stem) adds.
const EXACT_BONUS: f32 = 1.0;
/// Scores are compared in steps of 1/1000: hits closer than that count as equal, and the
/// more recently updated comes first.
const SCORE_STEPS: f32 = 1000.0;

/// A ranked hit: its final score and where it is.
pub(crate) type Ranked = (f32, DocAddress);

/// The words the bonuses are for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Words<'a> {
    /// The loose words as typed (analysed).
    pub words: &'a [String],
    /// Their stems, in the same order.
    pub stems: &'a [String],
    /// The last word, when it is being typed (completed in names too).
    pub completing: Option<&'a str>,
}

/// What a page of hits is ranked from.
#[derive(Clone, Copy)]
pub(crate) struct Ranking<'a> {
    /// The query whose hits are ranked.
    pub main: &'a dyn Query,
    /// The hits of `main` with a word in their name or tags, best names first: they add
    /// candidates.
    pub in_names: Option<&'a dyn Query>,
    /// What the bonuses are for (none for the typo-tolerant retry).
    pub words: Option<Words<'a>>,
}

/// The page `offset..offset + limit` of the hits of `ranking.main`, ranked, and how many
/// match in all.
pub(crate) fn top_page(
    searcher: &Searcher,
    fields: &IndexFields,
    ranking: Ranking<'_>,
    offset: usize,
    limit: usize,
) -> tantivy::Result<(Vec<Ranked>, usize)> {
    let Ranking { main, in_names, words } = ranking;
    let window = offset.saturating_add(limit).div_ceil(WINDOW).saturating_mul(WINDOW);
    let pool = window.saturating_add(EXTRA_CANDIDATES);
    let (mut candidates, total) =
        searcher.search(main, &(TopDocs::with_limit(pool).order_by_score(), Count))?;
    if let Some(in_names) = in_names {
        // A name match outside the best by text scores at most the last of them: it gets that,
        // less a little per place, so name matches keep the order of how well their names match.
        let floor = candidates.last().map_or(0.0, |(score, _)| *score);
        let named = searcher.search(in_names, &TopDocs::with_limit(pool).order_by_score())?;
        let mut known: HashSet<DocAddress> = candidates.iter().map(|(_, address)| *address).collect();
        for (place, (_, address)) in named.into_iter().enumerate() {
            if known.insert(address) {
                candidates.push((floor - (place + 1) as f32 / SCORE_STEPS, address));
            }
        }
    }
    let mut segments = Segments::default();
    let bonuses = match words {
        Some(words) => bonuses(searcher, fields, &mut segments, &candidates, words)?,
        None => HashMap::new(),
    };
    let mut ranked = Vec::with_capacity(candidates.len());
    for (score, address) in candidates {
        let segment = segments.of(searcher, fields, address.segment_ord)?;
        let bonus = bonuses.get(&address).copied().unwrap_or(0.0);
        let steps = ((score + bonus) * SCORE_STEPS).round() as i64;
        ranked.push((steps, segment.updated_at(address.doc_id), address));
    }
    ranked.sort_by_key(|(steps, updated, address)| (Reverse(*steps), Reverse(*updated), *address));
    // The score shown is the one compared, so hits read best first.
    let page = ranked
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(steps, _, address)| (steps as f32 / SCORE_STEPS, address))
        .collect();
    Ok((page, total))
}

/// The bonuses of each candidate: [`NAME_BONUS`] per word in its name or tags, and
/// [`EXACT_BONUS`] per word held as written. Each word's postings are read once per
/// segment and walked through the segment's candidates in document order.
fn bonuses(
    searcher: &Searcher,
    fields: &IndexFields,
    segments: &mut Segments,
    candidates: &[Ranked],
    words: Words<'_>,
) -> tantivy::Result<HashMap<DocAddress, f32>> {
    let mut by_segment: HashMap<u32, Vec<DocId>> = HashMap::new();
    for (_, address) in candidates {
        by_segment.entry(address.segment_ord).or_default().push(address.doc_id);
    }
    let mut bonuses = HashMap::with_capacity(candidates.len());
    for (ord, mut docs) in by_segment {
        docs.sort_unstable();
        docs.dedup();
        let segment = segments.of(searcher, fields, ord)?;
        let mut as_written = vec![0_usize; docs.len()];
        for word in words.words {
            for (count, held) in as_written.iter_mut().zip(holding(&segment.all, fields.all, word, &docs)) {
                *count += usize::from(held);
            }
        }
        let mut in_name = vec![0_usize; docs.len()];
        for (word, stem) in words.words.iter().zip(words.stems) {
            let held = holding(&segment.names_stemmed, fields.names_stemmed, stem, &docs);
            for ((count, held), doc) in in_name.iter_mut().zip(held).zip(&docs) {
                let completed = || -> tantivy::Result<bool> {
                    Ok(words.completing == Some(word.as_str())
                        && name_begins_with(searcher, fields, DocAddress::new(ord, *doc), word)?)
                };
                *count += usize::from(held || completed()?);
            }
        }
        for ((doc, in_name), as_written) in docs.iter().zip(in_name).zip(as_written) {
            let bonus = NAME_BONUS * in_name as f32 + EXACT_BONUS * as_written as f32;
            bonuses.insert(DocAddress::new(ord, *doc), bonus);
        }
    }
    Ok(bonuses)
}

/// Whether the document's name or tags hold a word that `start` begins (read from the
/// stored texts: only for the few candidates of a search as you type).
fn name_begins_with(
    searcher: &Searcher,
    fields: &IndexFields,
    address: DocAddress,
    start: &str,
) -> tantivy::Result<bool> {
    let doc: TantivyDocument = searcher.doc(address)?;
    let stored = StoredHit::from_document(fields, &doc);
    Ok(stored
        .texts
        .iter()
        .filter(|(field, _)| matches!(field, TextField::Name | TextField::Tags))
        .any(|(_, text)| tokens(text).iter().any(|(token, _)| token.starts_with(start))))
}

/// For each of `docs` (in ascending order, each once), whether it holds the term `text`
/// in the field `field` of `index`.
fn holding(
    index: &InvertedIndexReader,
    field: tantivy::schema::Field,
    text: &str,
    docs: &[DocId],
) -> Vec<bool> {
    let term = Term::from_field_text(field, text);
    let Ok(Some(mut postings)) = index.read_postings(&term, IndexRecordOption::Basic) else {
        return vec![false; docs.len()];
    };
    docs.iter()
        .map(|&doc| {
            // A posting list stands on a document at or before `doc`; seek only moves
            // forward, and past the last document it stands on `TERMINATED`.
            let at = if postings.doc() < doc { postings.seek(doc) } else { postings.doc() };
            at == doc
        })
        .collect()
}

/// What ranking reads of one segment, opened once per search.
struct SegmentView {
    all: Arc<InvertedIndexReader>,
    names_stemmed: Arc<InvertedIndexReader>,
    updated_at: Option<Column<DateTime>>,
}

impl SegmentView {
    /// The document's `updated_at` in seconds, `i64::MIN` when it has none.
    fn updated_at(&self, doc: DocId) -> i64 {
        self.updated_at.as_ref().and_then(|c| c.first(doc)).map_or(i64::MIN, |d| d.into_timestamp_secs())
    }
}

/// The segments a search's candidates are in, each opened once.
#[derive(Default)]
struct Segments(HashMap<u32, SegmentView>);

impl Segments {
    /// The view of segment `ord`, opened on first use.
    fn of(&mut self, searcher: &Searcher, fields: &IndexFields, ord: u32) -> tantivy::Result<&SegmentView> {
        Ok(match self.0.entry(ord) {
            Entry::Occupied(view) => view.into_mut(),
            Entry::Vacant(slot) => {
                let segment = searcher.segment_reader(ord);
                slot.insert(SegmentView {
                    all: segment.inverted_index(fields.all)?,
                    names_stemmed: segment.inverted_index(fields.names_stemmed)?,
                    updated_at: segment.fast_fields().date(UPDATED_AT_FIELD).ok(),
                })
            }
        })
    }
}
