//! Turning a person's words into a tantivy query without any query syntax but quotes.
//!
//! Every loose word must match, in one of three ways: the exact (folded) term in `all`,
//! scored higher; its stem in `stemmed`, so "meet" finds "meeting"; and, for the last word
//! of a search-as-you-type query, any term it begins ("land" → "landlord"). A word quoted
//! alone must match exactly; a quoted phrase must match as that phrase. A word found in a
//! name or tags adds a fixed bonus (more as written or completed, less by its stem), so
//! such a match outranks one deep in the body. The
//! optional category filter does not change the scores. The typo-tolerant retry matches
//! every term within one edit in `all`.

use kb_domain::Category;
use tantivy::Term;
use tantivy::query::{
    BooleanQuery, BoostQuery, ConstScoreQuery, FuzzyTermQuery, Occur, PhraseQuery, Query, TermQuery,
};
use tantivy::schema::{Field, IndexRecordOption};

use crate::analysis::{QueryParts, fuzzy_distance};
use crate::schema::IndexFields;

/// How a term is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Matching {
    /// Exactly, by stem, or (the last word, when asked) by prefix.
    Exact,
    /// Within [`fuzzy_distance`] edits of the term.
    Fuzzy,
}

/// How much more an exact term scores than its stem: "meeting" finds both "meeting" and
/// "meet", the entry saying "meeting" first.
const EXACT_BOOST: f32 = 1.5;
/// What a word completed by prefix scores (no term statistics: any completion counts alike).
const PREFIX_SCORE: f32 = 0.5;
/// What each query word found as written (or completed) in a name or the tags adds.
const NAME_BONUS: f32 = 10.0;
/// What each query word found by its stem in a name or the tags adds (on top of
/// [`NAME_BONUS`] when it is there as written too).
const STEM_NAME_BONUS: f32 = 6.0;

/// What to search for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request<'a> {
    /// The query's parts (non-empty).
    pub parts: &'a QueryParts,
    /// The stem of each of `parts.words`, in the same order.
    pub stems: &'a [String],
    /// Whether the last loose word may be unfinished.
    pub prefix: bool,
    /// Only this category.
    pub category: Option<Category>,
}

/// The query for `request`.
pub(crate) fn build(fields: &IndexFields, request: Request<'_>, matching: Matching) -> BooleanQuery {
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = match matching {
        Matching::Exact => exact_clauses(fields, request),
        Matching::Fuzzy => {
            request.parts.all_terms().iter().map(|t| (Occur::Must, fuzzy(fields.all, t))).collect()
        }
    };
    if let Some(category) = request.category {
        let filter = TermQuery::new(
            Term::from_field_text(fields.category, category.as_str()),
            IndexRecordOption::Basic,
        );
        clauses.push((Occur::Must, Box::new(ConstScoreQuery::new(Box::new(filter), 0.0))));
    }
    BooleanQuery::new(clauses)
}

/// The clauses of an exact search: one required alternative per word, the quoted words and
/// phrases, and the name bonus.
fn exact_clauses(fields: &IndexFields, request: Request<'_>) -> Vec<(Occur, Box<dyn Query>)> {
    let parts = request.parts;
    let completing = (request.prefix && parts.ends_in_word).then(|| parts.words.len().saturating_sub(1));
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for (i, word) in parts.words.iter().enumerate() {
        let mut ways: Vec<(Occur, Box<dyn Query>)> = vec![
            (Occur::Should, Box::new(BoostQuery::new(term(fields.all, word), EXACT_BOOST))),
            (Occur::Should, term(fields.stemmed, request.stems.get(i).unwrap_or(word))),
        ];
        let mut bonus: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Should, term(fields.names, word))];
        if completing == Some(i) {
            ways.push((
                Occur::Should,
                Box::new(ConstScoreQuery::new(prefix(fields.all, word), PREFIX_SCORE)),
            ));
            bonus.push((Occur::Should, prefix(fields.names, word)));
        }
        let stem = request.stems.get(i).unwrap_or(word);
        clauses.push((Occur::Must, Box::new(BooleanQuery::new(ways))));
        clauses.push((
            Occur::Should,
            Box::new(ConstScoreQuery::new(Box::new(BooleanQuery::new(bonus)), NAME_BONUS)),
        ));
        clauses.push((
            Occur::Should,
            Box::new(ConstScoreQuery::new(term(fields.names_stemmed, stem), STEM_NAME_BONUS)),
        ));
    }
    for word in &parts.exact {
        clauses.push((Occur::Must, Box::new(BoostQuery::new(term(fields.all, word), EXACT_BOOST))));
        clauses.push((Occur::Should, Box::new(ConstScoreQuery::new(term(fields.names, word), NAME_BONUS))));
    }
    for phrase in &parts.phrases {
        let terms = phrase.iter().map(|t| Term::from_field_text(fields.all, t)).collect();
        clauses.push((Occur::Must, Box::new(PhraseQuery::new(terms))));
    }
    clauses
}

/// The exact term `text` in `field`, scored by BM25.
fn term(field: Field, text: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(Term::from_field_text(field, text), IndexRecordOption::WithFreqs))
}

/// Every term of `field` that `text` begins.
fn prefix(field: Field, text: &str) -> Box<dyn Query> {
    Box::new(FuzzyTermQuery::new_prefix(Term::from_field_text(field, text), 0, true))
}

/// `text` within [`fuzzy_distance`] edits in `field` (exactly, for short terms).
fn fuzzy(field: Field, text: &str) -> Box<dyn Query> {
    let at = Term::from_field_text(field, text);
    match fuzzy_distance(text) {
        0 => Box::new(TermQuery::new(at, IndexRecordOption::WithFreqs)),
        distance => Box::new(FuzzyTermQuery::new(at, distance, true)),
    }
}
