//! Answering a search: the exact pass, then (when nothing matches) the typo-tolerant retry,
//! then (when asked, and these fill less than the page) the entries holding only some of
//! the words; each ranked (see [`crate::rank`]), then its hits given their snippets (see
//! [`crate::snippet`]) and passages (see [`crate::passage`]) — all of them, or only those
//! hybrid search puts on its page. Words that carry no meaning of their own
//! ([`crate::stopwords`]) are not searched for.

use kb_domain::{EntryPath, MatchedBy, SearchError, SearchHit, SearchQuery, SearchResults};
use tantivy::collector::{DocSetCollector, TopDocs};
use tantivy::query::Query as _;
use tantivy::{Searcher, TantivyDocument, Term};

use super::TantivyIndex;
use super::unseen::Sought;
use crate::analysis::{QueryParts, fuzzy_distance, query_parts, stems};
use crate::document::StoredHit;
use crate::error::index_error;
use crate::passage;
use crate::query::{self, Matching};
use crate::rank::{self, Ranking};
use crate::snippet::{Hits, TermMatcher, best_snippet};
use crate::stopwords::is_stop_word;

/// The name matches of a search are looked for apart (so that one scoring low on its text
/// is still ranked) only when the words are in at most this many names and tags: a word in
/// more names than that distinguishes none, and its weight in the text score ranks them.
const NAME_PASS_LIMIT: u64 = 1_000;

/// How many times a search looks at the changes still queued before it waits for all of
/// those it must see (see [`TantivyIndex::searcher_for`]).
const LOOKS: usize = 4;

/// One hit of a keyword search before its snippet is cut.
struct WordHit {
    /// Its score.
    score: f32,
    /// The entry.
    path: EntryPath,
    /// Its stored texts.
    stored: StoredHit,
    /// Whether it holds all the words ([`MatchedBy::Keyword`]) or some ([`MatchedBy::Partial`]).
    matched_by: MatchedBy,
}

/// The page of a keyword search before its snippets are cut: what hybrid search fuses.
pub(super) struct Ranked {
    /// The hits, best first: those holding all the words, then those holding some.
    hits: Vec<WordHit>,
    /// How many entries match in all.
    pub total: usize,
    /// How many entries hold some of the words but not all (counted only when searched).
    pub partial_total: usize,
    /// Whether these are the typo-tolerant retry's.
    pub fuzzy: bool,
    /// Finds the query's words in a text (none when nothing was asked).
    matcher: Option<TermMatcher>,
}

impl Ranked {
    /// Nothing found.
    fn none() -> Ranked {
        Ranked { hits: Vec::new(), total: 0, partial_total: 0, fuzzy: false, matcher: None }
    }

    /// The hits' paths, best first.
    pub fn paths(&self) -> impl Iterator<Item = &EntryPath> {
        self.hits.iter().map(|hit| &hit.path)
    }

    /// The hit at `index` (from 0) with its snippet and its passage.
    pub fn hit(&self, index: usize) -> Option<SearchHit> {
        let hit = self.hits.get(index)?;
        let matcher = self.matcher.as_ref()?;
        let found: Vec<Hits> = hit.stored.texts.iter().map(|(_, text)| matcher.hits(text)).collect();
        let (field, snippet) = best_snippet(&hit.stored.texts, &found);
        Some(SearchHit {
            passage: passage::by_words(&hit.stored, &found),
            name: hit.stored.name().to_string(),
            category: hit.path.category(),
            path: hit.path.clone(),
            matched_field: field.label().to_string(),
            snippet,
            score: hit.score,
            matched_by: hit.matched_by,
        })
    }

    /// Every hit with its snippet.
    pub fn into_results(self) -> SearchResults {
        let entries = (0..self.hits.len()).filter_map(|index| self.hit(index)).collect();
        SearchResults {
            entries,
            total: self.total,
            partial_total: self.partial_total,
            fuzzy: self.fuzzy,
            ..SearchResults::none()
        }
    }
}

impl TantivyIndex {
    /// The hits of `query` (see [`kb_domain::SearchIndex::search`]).
    pub(super) fn search_now(&self, query: &SearchQuery) -> Result<SearchResults, SearchError> {
        Ok(self.rank_by_words(query)?.into_results())
    }

    /// The page of `query`'s keyword search, its snippets not cut yet.
    pub(super) fn rank_by_words(&self, query: &SearchQuery) -> Result<Ranked, SearchError> {
        let parts = query_parts(&query.text).meaningful(self.language, query.prefix);
        if parts.is_empty() {
            return Ok(Ranked::none());
        }
        let word_stems = stems(&parts.words, self.language);
        let (searcher, unknown) = self.searcher_for(query, &parts, &word_stems);
        let request = query::Request {
            parts: &parts,
            stems: &word_stems,
            prefix: query.prefix,
            category: query.category,
            unknown: &unknown,
        };
        let exact = self.run(&searcher, request, query, Matching::Exact)?;
        let misspelt = !unknown.is_empty();
        let mut found = if exact.total > 0 || !misspelt {
            exact
        } else {
            // A retry that finds nothing leaves the answer the exact pass's (not `fuzzy`).
            Some(self.run(&searcher, request, query, Matching::Fuzzy)?)
                .filter(|f| f.total > 0)
                .unwrap_or(exact)
        };
        if query.partial && !query.prefix {
            self.add_partial(&searcher, request, query, &mut found)?;
        }
        Ok(found)
    }

    /// Adds to `found` (the hits of the pass that answered, exact or typo-tolerant) the
    /// entries holding some of the loose words but not all of them, when `found` holds
    /// fewer than the page asks for: after every hit of `found`, ranked by BM25 over the
    /// words they hold (no bonuses), quoted words and phrases still required.
    fn add_partial(
        &self,
        searcher: &Searcher,
        request: query::Request<'_>,
        page: &SearchQuery,
        found: &mut Ranked,
    ) -> Result<(), SearchError> {
        let limit = kb_domain::paging::page_size((page.limit > 0).then_some(page.limit as u64));
        let room = limit.saturating_sub(found.hits.len());
        if request.parts.words.len() < 2 || found.total >= page.offset.saturating_add(limit) {
            return Ok(());
        }
        // A query of function words only ("to be or not to be") is searched as typed, all
        // of them: an entry holding one of them ("the") is no match.
        if request.parts.words.iter().all(|word| is_stop_word(word, self.language)) {
            return Ok(());
        }
        let matching = if found.fuzzy { Matching::Fuzzy } else { Matching::Exact };
        let answered = query::build(&self.fields, request, matching);
        // By BM25 alone: a bonus for each word in a name would put the entries named
        // after a question's ordinary words ("post", "last", "menu") first (on the bench's
        // questions, recall@5 0.45 with it, 0.54 without).
        // Ranked and counted apart: the best hits alone let tantivy skip the blocks that
        // cannot reach them, and counting needs no scores (a twelve-word question holding
        // common words matches most of the vault).
        let offset = page.offset.saturating_sub(found.total);
        let wanted = offset.saturating_add(room).max(1);
        let simple = matching == Matching::Exact
            && request.category.is_none()
            && request.parts.exact.is_empty()
            && request.parts.phrases.is_empty();
        let top = if simple {
            // The union of the words alone ranks fastest; the entries holding all of them
            // (fewer than a page reaches) are in it, and are taken out after.
            let any = query::any_word(&self.fields, request);
            let all_words = searcher.search(&answered, &DocSetCollector).map_err(index_error)?;
            let ranked = searcher
                .search(&any, &TopDocs::with_limit(wanted.saturating_add(all_words.len())).order_by_score())
                .map_err(index_error)?;
            let union = any.count(searcher).map_err(index_error)?;
            found.partial_total = union.saturating_sub(all_words.len());
            ranked.into_iter().filter(|(_, address)| !all_words.contains(address)).collect()
        } else {
            let partial = query::partial(&self.fields, request, answered);
            found.partial_total = partial.count(searcher).map_err(index_error)?;
            searcher.search(&partial, &TopDocs::with_limit(wanted).order_by_score()).map_err(index_error)?
        };
        let top = top.into_iter().skip(offset);
        // Scores never rise down a page: a partial hit scoring more than an all-words hit
        // before it (it holds fewer words, but rarer ones) shows that hit's score.
        let mut ceiling = found.hits.last().map(|hit| hit.score);
        for (score, address) in top.into_iter().take(room) {
            let doc: TantivyDocument = searcher.doc(address).map_err(index_error)?;
            let stored = StoredHit::from_document(&self.fields, &doc);
            let Ok(path) = EntryPath::parse(&stored.path) else { continue };
            let score = ceiling.map_or(score, |c| score.min(c));
            ceiling = Some(score);
            found.hits.push(WordHit { score, path, stored, matched_by: MatchedBy::Partial });
        }
        Ok(())
    }

    /// One pass of a search: the page `page` asks for, matched as `matching` says.
    fn run(
        &self,
        searcher: &Searcher,
        request: query::Request<'_>,
        page: &SearchQuery,
        matching: Matching,
    ) -> Result<Ranked, SearchError> {
        let requested = (page.limit > 0).then_some(page.limit as u64);
        let limit = kb_domain::paging::page_size(requested);
        // No page can start past the last document; this also bounds the collector's buffer.
        let offset = page.offset.min(usize::try_from(searcher.num_docs()).unwrap_or(usize::MAX));
        let query = query::build(&self.fields, request, matching);
        let (in_names, words) = match matching {
            Matching::Exact => {
                let completing = request.typing().map(|(_, word)| word);
                let words = rank::Words { words: &request.parts.words, stems: request.stems, completing };
                let named =
                    completing.is_some() || self.names_holding(searcher, request.stems) <= NAME_PASS_LIMIT;
                (named.then(|| query::in_names(&self.fields, request, &query)).flatten(), Some(words))
            }
            // The typo-tolerant retry's words are not the entry's: no bonuses for them.
            Matching::Fuzzy => (None, None),
        };
        let in_names = in_names.as_ref().map(|q| q as &dyn tantivy::query::Query);
        let ranking = Ranking { main: &query, in_names, words };
        let (top, total) =
            rank::top_page(searcher, &self.fields, ranking, offset, limit).map_err(index_error)?;
        let matcher = TermMatcher::for_query(request, self.language, matching);
        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            let doc: TantivyDocument = searcher.doc(address).map_err(index_error)?;
            let stored = StoredHit::from_document(&self.fields, &doc);
            let Ok(path) = EntryPath::parse(&stored.path) else { continue };
            hits.push(WordHit { score, path, stored, matched_by: MatchedBy::Keyword });
        }
        Ok(Ranked {
            hits,
            total,
            partial_total: 0,
            fuzzy: matching == Matching::Fuzzy,
            matcher: Some(matcher),
        })
    }

    /// A searcher that reads every change made before this search that may change its
    /// answer (see [`super::unseen`]), with the query's words no entry there holds as
    /// typed: the typo-tolerant retry is for them (a word some entry holds is not a
    /// misspelling), and only they are matched within an edit (a long question's other
    /// words would each cost a fuzzy walk of the vocabulary).
    fn searcher_for(
        &self,
        query: &SearchQuery,
        parts: &QueryParts,
        stems: &[String],
    ) -> (Searcher, Vec<String>) {
        let reader = query.reader.as_deref();
        let terms = parts.all_terms();
        let unknown_in = |searcher: &Searcher| -> Vec<String> {
            terms.iter().filter(|t| fuzzy_distance(t) > 0 && !self.holds_term(searcher, t)).cloned().collect()
        };
        if !self.is_owner() {
            self.read_every_earlier_change(reader);
            let searcher = self.handles.searcher();
            let unknown = unknown_in(&searcher);
            return (searcher, unknown);
        }
        let typing = parts.typing.as_deref().filter(|_| query.prefix && parts.ends_in_word);
        // A wait makes the index newer, and a change still queued may matter to it where it
        // did not before (the entry a capture made, which a delete queued after it takes
        // away): looked at again until none does. Changes that keep coming are waited for
        // in full after a few rounds.
        for _ in 0..LOOKS {
            let searcher = self.handles.searcher();
            let unknown = unknown_in(&searcher);
            let sought = Sought { terms: &terms, stems, typing, unknown: &unknown };
            if !self.queue.wait_for_those(reader, |change| self.may_change(&searcher, &sought, change)) {
                return (searcher, unknown);
            }
        }
        self.read_every_earlier_change(reader);
        let searcher = self.handles.searcher();
        let unknown = unknown_in(&searcher);
        (searcher, unknown)
    }

    /// Whether some entry holds `term` as written (from the term dictionary).
    fn holds_term(&self, searcher: &Searcher, term: &str) -> bool {
        searcher.doc_freq(&Term::from_field_text(self.fields.all, term)).is_ok_and(|n| n > 0)
    }

    /// How many names or tags hold the most common of `stems` (from the term dictionary).
    fn names_holding(&self, searcher: &Searcher, stems: &[String]) -> u64 {
        stems
            .iter()
            .map(|stem| {
                searcher.doc_freq(&Term::from_field_text(self.fields.names_stemmed, stem)).unwrap_or(u64::MAX)
            })
            .max()
            .unwrap_or(0)
    }
}
