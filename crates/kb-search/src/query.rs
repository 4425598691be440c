//! Turning a person's words into a tantivy query without any query syntax: each analysed
//! term must match (in any searchable field), scored by BM25 with per-field boosts, and an
//! optional category filter that does not change the scores.

use kb_domain::Category;
use tantivy::Term;
use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, FuzzyTermQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;

use crate::analysis::fuzzy_distance;
use crate::schema::IndexFields;

/// How a term is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Matching {
    /// The exact (analysed) term.
    Exact,
    /// Within [`fuzzy_distance`] edits of the term.
    Fuzzy,
}

/// The query for `terms` (already analysed, non-empty) in `category` (if any).
pub(crate) fn build(
    fields: &IndexFields,
    terms: &[String],
    category: Option<Category>,
    matching: Matching,
) -> BooleanQuery {
    let mut must: Vec<(Occur, Box<dyn Query>)> =
        terms.iter().map(|term| (Occur::Must, term_in_any_field(fields, term, matching))).collect();
    if let Some(category) = category {
        let filter = TermQuery::new(
            Term::from_field_text(fields.category, category.as_str()),
            IndexRecordOption::Basic,
        );
        must.push((Occur::Must, Box::new(ConstScoreQuery::new(Box::new(filter), 0.0))));
    }
    BooleanQuery::new(must)
}

/// One term in any searchable field, each field weighted by its boost.
fn term_in_any_field(fields: &IndexFields, term: &str, matching: Matching) -> Box<dyn Query> {
    let should = fields
        .texts()
        .map(|(kind, field)| {
            let t = Term::from_field_text(field, term);
            let one: Box<dyn Query> = match matching {
                Matching::Fuzzy if fuzzy_distance(term) > 0 => {
                    Box::new(FuzzyTermQuery::new(t, fuzzy_distance(term), true))
                }
                _ => Box::new(TermQuery::new(t, IndexRecordOption::WithFreqs)),
            };
            (Occur::Should, Box::new(BoostQuery::new(one, kind.boost())) as Box<dyn Query>)
        })
        .collect();
    Box::new(BooleanQuery::new(should))
}
