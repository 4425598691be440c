//! Text analysis: how entry text and query text become terms. The same analyzer runs at
//! index time and at query time, so a person's words are matched exactly as the index saw
//! the entries: split on anything that is not a letter or digit, lowercased, accents
//! folded to ASCII ("Café" and "cafe" are the same term).

use std::ops::Range;

use tantivy::Index;
use tantivy::tokenizer::{AsciiFoldingFilter, LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer};

/// The name the analyzer is registered under in the index.
pub(crate) const ANALYZER_NAME: &str = "kb_folded";

/// Tokens longer than this many bytes are dropped (base64 blobs, long URLs), at index and
/// query time alike.
const MAX_TOKEN_BYTES: usize = 80;

/// A fresh instance of kb's analyzer.
pub(crate) fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

/// Registers the analyzer with an index (needed after every open: tantivy does not persist
/// custom analyzers).
pub(crate) fn register(index: &Index) {
    index.tokenizers().register(ANALYZER_NAME, analyzer());
}

/// The terms of `text`, in order, repeats kept: what the index makes of it.
pub fn analyze(text: &str) -> Vec<String> {
    tokens(text).into_iter().map(|(term, _)| term).collect()
}

/// The terms of a query: the analysed words, each once, in the order typed.
pub fn query_terms(text: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for term in analyze(text) {
        if !terms.contains(&term) {
            terms.push(term);
        }
    }
    terms
}

/// The terms of `text` with the byte range each came from.
pub(crate) fn tokens(text: &str) -> Vec<(String, Range<usize>)> {
    let mut analyzer = analyzer();
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while let Some(token) = stream.next() {
        out.push((token.text.clone(), token.offset_from..token.offset_to));
    }
    out
}

/// The edit distance a typo-tolerant retry allows for a term: none for terms shorter than
/// three characters (one edit would match almost anything), one otherwise.
pub fn fuzzy_distance(term: &str) -> u8 {
    if term.chars().count() < 3 { 0 } else { 1 }
}

/// Whether `a` and `b` are at most one edit apart (an insertion, a deletion, a substitution
/// or a swap of two neighbouring characters), as the typo-tolerant retry counts.
pub fn within_one_edit(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (ra, rb) = (&a[prefix..], &b[prefix..]);
    match (ra.len(), rb.len()) {
        (0, 0) => true,
        (x, y) if x == y => {
            ra[1..] == rb[1..] || (x >= 2 && ra[0] == rb[1] && ra[1] == rb[0] && ra[2..] == rb[2..])
        }
        (x, y) if x == y + 1 => ra[1..] == *rb,
        (x, y) if x + 1 == y => *ra == rb[1..],
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_case_and_accents() {
        assert_eq!(analyze("Café CRÈME brûlée"), ["cafe", "creme", "brulee"]);
        assert_eq!(analyze("Straße"), ["strasse"]);
    }

    #[test]
    fn query_syntax_is_just_text() {
        assert_eq!(
            query_terms("c++ who's a:b \"x (y AND -z *"),
            ["c", "who", "s", "a", "b", "x", "y", "and", "z"]
        );
        assert!(query_terms("  +-*:()\"  ").is_empty());
        assert_eq!(query_terms("Rust rust RUST"), ["rust"]);
    }

    #[test]
    fn offsets_point_at_the_original_text() {
        let text = "Über café";
        let toks = tokens(text);
        assert_eq!(&text[toks[0].1.clone()], "Über");
        assert_eq!(&text[toks[1].1.clone()], "café");
    }

    #[test]
    fn one_edit() {
        for (a, b) in
            [("rust", "rust"), ("rust", "rusty"), ("rust", "rst"), ("rust", "rist"), ("rust", "rsut")]
        {
            assert!(within_one_edit(a, b), "{a} {b}");
            assert!(within_one_edit(b, a), "{b} {a}");
        }
        for (a, b) in [("rust", "rsuty"), ("rust", "ru"), ("rust", "trus"), ("abc", "cba")] {
            assert!(!within_one_edit(a, b), "{a} {b}");
        }
    }
}
