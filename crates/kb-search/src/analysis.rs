//! Text analysis: how entry text and query text become terms. The same analyzers run at
//! index time and at query time, so a person's words are matched exactly as the index saw
//! the entries: split into words (runs of letters and digits, with their accents: see
//! `words`), lowercased, accents folded to ASCII ("Café" and "cafe" are the same term,
//! however the "é" was typed). A second analyzer also reduces
//! each word to its stem in the vault's [`SearchLanguage`] ("meeting" → "meet"), for the
//! field that lets "meet" find "meeting".

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use tantivy::Index;
use tantivy::tokenizer::{AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, Stemmer, TextAnalyzer};

use crate::stopwords::is_stop_word;
use crate::words::{WordTokenizer, continues_word};

/// The name the exact (folded) analyzer is registered under in the index.
pub(crate) const ANALYZER_NAME: &str = "kb_folded";
/// The name the stemming analyzer is registered under in the index.
pub(crate) const STEMMED_ANALYZER_NAME: &str = "kb_stemmed";

/// The language whose stemmer the index uses (`KB_LANGUAGE`; English by default). Every
/// language tantivy's stemmers know, by its English name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchLanguage(Language);

/// The languages by name, as `KB_LANGUAGE` spells them.
const LANGUAGES: &[(&str, Language)] = &[
    ("arabic", Language::Arabic),
    ("danish", Language::Danish),
    ("dutch", Language::Dutch),
    ("english", Language::English),
    ("finnish", Language::Finnish),
    ("french", Language::French),
    ("german", Language::German),
    ("greek", Language::Greek),
    ("hungarian", Language::Hungarian),
    ("italian", Language::Italian),
    ("norwegian", Language::Norwegian),
    ("portuguese", Language::Portuguese),
    ("romanian", Language::Romanian),
    ("russian", Language::Russian),
    ("spanish", Language::Spanish),
    ("swedish", Language::Swedish),
    ("tamil", Language::Tamil),
    ("turkish", Language::Turkish),
];

impl Default for SearchLanguage {
    fn default() -> SearchLanguage {
        SearchLanguage(Language::English)
    }
}

impl SearchLanguage {
    /// The language's name, as `KB_LANGUAGE` spells it.
    pub fn name(self) -> &'static str {
        LANGUAGES.iter().find(|(_, l)| *l == self.0).map_or("english", |(n, _)| n)
    }

    /// The language as tantivy names it.
    pub(crate) fn tantivy(self) -> Language {
        self.0
    }

    /// Every name `KB_LANGUAGE` accepts.
    pub fn names() -> impl Iterator<Item = &'static str> {
        LANGUAGES.iter().map(|(n, _)| *n)
    }
}

impl fmt::Display for SearchLanguage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A language name tantivy has no stemmer for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown search language {0:?}: use one of {names}", names = SearchLanguage::names().collect::<Vec<_>>().join(", "))]
pub struct UnknownLanguage(pub String);

impl FromStr for SearchLanguage {
    type Err = UnknownLanguage;

    /// A language by its English name, any case ("French", "english").
    fn from_str(text: &str) -> Result<SearchLanguage, UnknownLanguage> {
        let wanted = text.trim().to_ascii_lowercase();
        LANGUAGES
            .iter()
            .find(|(name, _)| *name == wanted)
            .map(|(_, language)| SearchLanguage(*language))
            .ok_or_else(|| UnknownLanguage(text.to_string()))
    }
}

/// A fresh instance of kb's stemming analyzer for `language`: the exact analyzer's terms,
/// each reduced to its stem.
pub(crate) fn stemming_analyzer(language: SearchLanguage) -> TextAnalyzer {
    TextAnalyzer::builder(WordTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(Stemmer::new(language.0))
        .build()
}

/// The stem of each of `terms` (already analysed), in `language`.
pub fn stems(terms: &[String], language: SearchLanguage) -> Vec<String> {
    let mut analyzer = stemming_analyzer(language);
    terms
        .iter()
        .map(|term| {
            let mut stream = analyzer.token_stream(term);
            let mut stem = None;
            while let Some(token) = stream.next() {
                stem.get_or_insert_with(|| token.text.clone());
            }
            stem.unwrap_or_else(|| term.clone())
        })
        .collect()
}

/// Tokens longer than this many bytes are dropped (base64 blobs, long URLs), at index and
/// query time alike.
const MAX_TOKEN_BYTES: usize = 80;

/// A fresh instance of kb's analyzer.
pub(crate) fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(WordTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

/// Registers the analyzers with an index (needed after every open: tantivy does not
/// persist custom analyzers).
pub(crate) fn register(index: &Index, language: SearchLanguage) {
    index.tokenizers().register(ANALYZER_NAME, analyzer());
    index.tokenizers().register(STEMMED_ANALYZER_NAME, stemming_analyzer(language));
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

/// A query read into its parts: the loose words (matched exactly or by their stem), words
/// quoted alone (exactly only) and quoted phrases (the words in that order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryParts {
    /// The analysed loose words, each once, in the order typed.
    pub words: Vec<String>,
    /// Words quoted alone (`"meeting"`): the exact term only, no stem.
    pub exact: Vec<String>,
    /// Quoted phrases of two or more terms, each in order.
    pub phrases: Vec<Vec<String>>,
    /// Whether the query ends with a loose word still being typed (no space or quote after
    /// it), the one a search-as-you-type may complete.
    pub ends_in_word: bool,
    /// That last word, when it is long enough to complete (two characters or more: one
    /// letter would match most of the vault).
    pub typing: Option<String>,
}

impl QueryParts {
    /// Whether nothing searchable is left.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.exact.is_empty() && self.phrases.is_empty()
    }

    /// The parts without the loose words that carry no meaning of their own in `language`
    /// ([`is_stop_word`]), unless nothing else would be left to search for ("the who" is
    /// searched as typed). The word a search as you type (`prefix`) is completing stays
    /// ("th" may be becoming "theory").
    pub fn meaningful(mut self, language: SearchLanguage, prefix: bool) -> QueryParts {
        let typing = self.typing.clone().filter(|_| prefix && self.ends_in_word);
        let kept: Vec<String> = self
            .words
            .iter()
            .filter(|word| typing.as_ref() == Some(*word) || !is_stop_word(word, language))
            .cloned()
            .collect();
        if !kept.is_empty() || !self.exact.is_empty() || !self.phrases.is_empty() {
            self.words = kept;
        }
        self
    }

    /// Every term the query names, each once (loose, quoted and phrase words).
    pub fn all_terms(&self) -> Vec<String> {
        let mut all: Vec<String> = Vec::new();
        for term in self.words.iter().chain(&self.exact).chain(self.phrases.iter().flatten()) {
            if !all.contains(term) {
                all.push(term.clone());
            }
        }
        all
    }
}

/// The shortest word a search as you type completes.
pub const MIN_TYPED_CHARS: usize = 2;

/// Reads a query: text between double quotes (`"` or `“ ”`; an unclosed quote runs to the
/// end) is a phrase, the rest loose words. Nothing else is syntax.
pub fn query_parts(text: &str) -> QueryParts {
    let mut parts = QueryParts::default();
    let mut quoted = false;
    let mut segment = String::new();
    let flush = |segment: &mut String, quoted: bool, parts: &mut QueryParts| {
        let terms = analyze(segment);
        if quoted {
            match terms.len() {
                0 => {}
                1 => {
                    for term in terms {
                        if !parts.exact.contains(&term) {
                            parts.exact.push(term);
                        }
                    }
                }
                _ => parts.phrases.push(terms),
            }
        } else {
            for term in terms {
                if !parts.words.contains(&term) {
                    parts.words.push(term);
                }
            }
        }
        segment.clear();
    };
    for c in text.chars() {
        if matches!(c, '"' | '“' | '”') {
            flush(&mut segment, quoted, &mut parts);
            quoted = !quoted;
        } else {
            segment.push(c);
        }
    }
    let trailing_word = !quoted && segment.chars().last().is_some_and(continues_word);
    let last = if trailing_word { analyze(&segment).pop() } else { None };
    flush(&mut segment, quoted, &mut parts);
    parts.ends_in_word = trailing_word && !parts.words.is_empty();
    parts.typing = last.filter(|word| word.chars().count() >= MIN_TYPED_CHARS);
    parts
}

/// The terms of `text` with the byte range each came from.
pub(crate) fn tokens(text: &str) -> Vec<(String, Range<usize>)> {
    let mut out = Vec::new();
    each_token(text, |term, range| out.push((term.to_string(), range)));
    out
}

/// Calls `visit` with each term of `text` and the byte range it came from, in order: what
/// [`tokens`] gives, without keeping a copy of each term (a search's snippets look through
/// the whole text of every hit for the few terms asked).
pub(crate) fn each_token(text: &str, mut visit: impl FnMut(&str, Range<usize>)) {
    let mut analyzer = analyzer();
    let mut stream = analyzer.token_stream(text);
    while let Some(token) = stream.next() {
        visit(&token.text, token.offset_from..token.offset_to);
    }
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
    fn stems_follow_the_language() {
        let english = SearchLanguage::default();
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            stems(&words(&["meeting", "landlords", "running", "meet"]), english),
            ["meet", "landlord", "run", "meet"]
        );
        let french: SearchLanguage = "French".parse().unwrap();
        assert_eq!(stems(&words(&["maisons"]), french), stems(&words(&["maison"]), french));
        assert_eq!(french.to_string(), "french");
        assert!("klingon".parse::<SearchLanguage>().unwrap_err().to_string().contains("english"));
    }

    #[test]
    fn quotes_make_phrases_and_exact_words() {
        let parts = query_parts("landlord \"front matter\" \"meeting\" lease");
        assert_eq!(parts.words, ["landlord", "lease"]);
        assert_eq!(parts.phrases, [vec!["front".to_string(), "matter".to_string()]]);
        assert_eq!(parts.exact, ["meeting"]);
        assert!(parts.ends_in_word);
        assert!(!query_parts("land ").ends_in_word);
        assert_eq!(query_parts("land x land").typing.as_deref(), Some("land"));
        assert_eq!(query_parts("garden l").typing, None);
        assert!(!query_parts("\"land lord\"").ends_in_word);
        let open = query_parts("a “b c");
        assert_eq!(open.phrases, [vec!["b".to_string(), "c".to_string()]]);
        assert!(query_parts("\"\" \" \"").is_empty());
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
