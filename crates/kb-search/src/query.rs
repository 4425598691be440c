//! Turning a person's words into a tantivy query without any query syntax but quotes.
//!
//! Every loose word must match by its stem in `stemmed` (which holds every form of it, so
//! "meet" finds "meeting" and "meeting" finds "meet") or, for the last word of a
//! search-as-you-type query, as the beginning of any term ("land" → "landlord"). The form
//! as written earns its bonus when the best hits are ranked ([`crate::rank`]). A word quoted
//! alone must match exactly; a quoted phrase must match as that phrase. [`in_names`] finds
//! the matches holding a word in their name or tags, whose bonus [`crate::rank`] adds. The
//! optional category filter does not change the scores. The typo-tolerant retry matches
//! each term no entry holds within one edit in `all`, the others as written.

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

/// How much more a word quoted alone scores (it must be there as written).
const EXACT_BOOST: f32 = 1.5;
/// What a word completed by prefix scores (no term statistics: any completion counts alike).
const PREFIX_SCORE: f32 = 0.5;

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
    /// The terms no entry holds as written: the only ones the typo-tolerant retry matches
    /// within an edit (the others it matches as written).
    pub unknown: &'a [String],
}

impl Request<'_> {
    /// The word being typed that a search as you type completes, with its place among the
    /// loose words, if there is one.
    pub(crate) fn typing(&self) -> Option<(usize, &str)> {
        if !self.prefix {
            return None;
        }
        let word = self.parts.typing.as_deref()?;
        self.parts.words.iter().position(|w| w == word).map(|i| (i, word))
    }
}

/// The query for `request`.
pub(crate) fn build(fields: &IndexFields, request: Request<'_>, matching: Matching) -> BooleanQuery {
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = match matching {
        Matching::Exact => exact_clauses(fields, request),
        Matching::Fuzzy => request
            .parts
            .all_terms()
            .iter()
            .map(|t| -> (Occur, Box<dyn Query>) {
                if request.unknown.contains(t) {
                    (Occur::Must, fuzzy(fields.all, t))
                } else {
                    (
                        Occur::Must,
                        Box::new(TermQuery::new(
                            Term::from_field_text(fields.all, t),
                            IndexRecordOption::WithFreqs,
                        )),
                    )
                }
            })
            .collect(),
    };
    if let Some(category) = request.category {
        clauses.push((Occur::Must, in_category(fields, category)));
    }
    BooleanQuery::new(clauses)
}

/// The clauses of an exact search: one required alternative per word, the quoted words and
/// the phrases.
fn exact_clauses(fields: &IndexFields, request: Request<'_>) -> Vec<(Occur, Box<dyn Query>)> {
    let parts = request.parts;
    let completing = request.typing().map(|(i, _)| i);
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for (i, word) in parts.words.iter().enumerate() {
        let stem = request.stems.get(i).unwrap_or(word);
        if completing == Some(i) {
            let required = BooleanQuery::new(vec![
                (Occur::Should, term(fields.stemmed, stem)),
                (Occur::Should, Box::new(ConstScoreQuery::new(prefix(fields.all, word), PREFIX_SCORE))),
            ]);
            clauses.push((Occur::Must, Box::new(required)));
        } else {
            clauses.push((Occur::Must, term(fields.stemmed, stem)));
        }
    }
    clauses.extend(quoted(fields, parts));
    clauses
}

/// The required clauses of the words quoted alone (as written) and the quoted phrases.
fn quoted(fields: &IndexFields, parts: &QueryParts) -> Vec<(Occur, Box<dyn Query>)> {
    let words = parts.exact.iter().map(|word| -> (Occur, Box<dyn Query>) {
        (Occur::Must, Box::new(BoostQuery::new(term(fields.all, word), EXACT_BOOST)))
    });
    let phrases = parts.phrases.iter().map(|phrase| -> (Occur, Box<dyn Query>) {
        let terms = phrase.iter().map(|t| Term::from_field_text(fields.all, t)).collect();
        (Occur::Must, Box::new(PhraseQuery::new(terms)))
    });
    words.chain(phrases).collect()
}

/// The entries of `category`, adding nothing to the score.
fn in_category(fields: &IndexFields, category: Category) -> Box<dyn Query> {
    let filter =
        TermQuery::new(Term::from_field_text(fields.category, category.as_str()), IndexRecordOption::Basic);
    Box::new(ConstScoreQuery::new(Box::new(filter), 0.0))
}

/// The entries holding at least one of `request`'s loose words (by stem, scored by BM25
/// over those they hold) and its quoted words and phrases, but not matched by `answered`
/// (the query of the pass that answered): the partial hits that follow its hits.
pub(crate) fn partial(fields: &IndexFields, request: Request<'_>, answered: BooleanQuery) -> BooleanQuery {
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, Box::new(any_word(fields, request)))];
    clauses.extend(quoted(fields, request.parts));
    if let Some(category) = request.category {
        clauses.push((Occur::Must, in_category(fields, category)));
    }
    clauses.push((Occur::MustNot, Box::new(answered)));
    BooleanQuery::new(clauses)
}

/// The entries holding at least one of `request`'s loose words by its stem, scored by BM25
/// over those they hold: a union of terms alone, which tantivy ranks skipping the blocks
/// that cannot reach the best (block-max WAND).
pub(crate) fn any_word(fields: &IndexFields, request: Request<'_>) -> BooleanQuery {
    BooleanQuery::new(request.stems.iter().map(|stem| (Occur::Should, term(fields.stemmed, stem))).collect())
}

/// The entries of `main` (the query of `request`) that hold at least one of its words in
/// their name or tags, in any form or (the word being typed) completed; scored by how well
/// their names match (shorter names first), not by `main`, so that this costs the name
/// lists, not the text's. `None` without loose words. Searched beside `main` so that a name
/// match scoring low on its text is still ranked ([`crate::rank`]).
pub(crate) fn in_names(
    fields: &IndexFields,
    request: Request<'_>,
    main: &BooleanQuery,
) -> Option<BooleanQuery> {
    let parts = request.parts;
    if parts.words.is_empty() {
        return None;
    }
    let mut any: Vec<(Occur, Box<dyn Query>)> =
        request.stems.iter().map(|stem| (Occur::Should, term(fields.names_stemmed, stem))).collect();
    if let Some((_, word)) = request.typing() {
        any.push((Occur::Should, prefix(fields.names, word)));
    }
    Some(BooleanQuery::new(vec![
        (Occur::Must, Box::new(ConstScoreQuery::new(Box::new(main.clone()), 0.0))),
        (Occur::Must, Box::new(BooleanQuery::new(any))),
    ]))
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
