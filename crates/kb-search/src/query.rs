//! Turning a person's words into a tantivy query without any query syntax: each analysed
//! term must be in `all` (every searchable text, names and tags weighted), scored by BM25
//! there, and an optional category filter that does not change the scores.

use kb_domain::Category;
use tantivy::Term;
use tantivy::query::{BooleanQuery, ConstScoreQuery, FuzzyTermQuery, Occur, Query, TermQuery};
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
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for term in terms {
        let in_all = Term::from_field_text(fields.all, term);
        let must: Box<dyn Query> = match matching {
            Matching::Fuzzy if fuzzy_distance(term) > 0 => {
                Box::new(FuzzyTermQuery::new(in_all, fuzzy_distance(term), true))
            }
            _ => Box::new(TermQuery::new(in_all, IndexRecordOption::WithFreqs)),
        };
        clauses.push((Occur::Must, must));
    }
    if let Some(category) = category {
        let filter = TermQuery::new(
            Term::from_field_text(fields.category, category.as_str()),
            IndexRecordOption::Basic,
        );
        clauses.push((Occur::Must, Box::new(ConstScoreQuery::new(Box::new(filter), 0.0))));
    }
    BooleanQuery::new(clauses)
}
