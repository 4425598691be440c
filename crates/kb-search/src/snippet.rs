//! The field a hit matched best and the passage shown for it.
//!
//! Matched terms are marked in Markdown bold: `**term**` (the words as written in the entry,
//! accents and case kept), whether they matched exactly, by their stem ("**meetings**" for
//! "meet") or as the completion of a word being typed. The passage is at most about
//! [`SNIPPET_CHARS`] characters of one field, whitespace collapsed, with `…` where it was
//! cut.

use std::cell::RefCell;
use std::ops::Range;

use tantivy::tokenizer::TextAnalyzer;

use crate::analysis::{SearchLanguage, each_token, fuzzy_distance, stemming_analyzer, within_one_edit};
use crate::query::{Matching, Request};
use crate::schema::TextField;

/// The longest passage shown, in characters (before marking).
pub const SNIPPET_CHARS: usize = 160;

/// Characters of context kept before the first marked term when the passage is cut.
const LEAD_CHARS: usize = 30;

/// Where in a text the query terms were found: (query term index, byte range).
pub(crate) type Hits = Vec<(usize, Range<usize>)>;

/// The stem of each loose word with the index of its term, and an analyzer making stems in
/// the vault's language.
type Stems = (Vec<(String, usize)>, RefCell<TextAnalyzer>);

/// Which query terms a token of the entry matches.
pub(crate) struct TermMatcher {
    terms: Vec<String>,
    /// How a token matches a loose word by its stem.
    stems: Option<Stems>,
    /// A word being typed, with the index of its term: any token it begins matches.
    prefix: Option<(String, usize)>,
    /// Whether a term also matches tokens within one edit of it.
    matching: Matching,
}

impl TermMatcher {
    /// Matches tokens equal to one of `terms`, or (when [`Matching::Fuzzy`]) within one
    /// edit of one.
    #[cfg(test)]
    pub fn new(terms: &[String], matching: Matching) -> TermMatcher {
        TermMatcher { terms: terms.to_vec(), stems: None, prefix: None, matching }
    }

    /// Matches what `request` matches: its terms, the stems of its words in `language`, and
    /// the beginning of a word being typed; or, when [`Matching::Fuzzy`], terms within one
    /// edit.
    pub fn for_query(request: Request<'_>, language: SearchLanguage, matching: Matching) -> TermMatcher {
        let terms = request.parts.all_terms();
        let index_of = |word: &String| terms.iter().position(|t| t == word).unwrap_or(0);
        let stems: Vec<(String, usize)> =
            request.parts.words.iter().zip(request.stems).map(|(w, s)| (s.clone(), index_of(w))).collect();
        let prefix = request.typing().map(|(_, word)| (word.to_string(), index_of(&word.to_string())));
        let stemming = RefCell::new(stemming_analyzer(language));
        TermMatcher { stems: Some((stems, stemming)), prefix, matching, terms }
    }

    /// Where in `text` the query's terms are: (query term index, byte range).
    pub(crate) fn hits(&self, text: &str) -> Hits {
        let mut hits = Hits::new();
        each_token(text, |token, range| {
            if let Some(i) = self.matches(token) {
                hits.push((i, range));
            }
        });
        hits
    }

    /// The index of the query term `token` matches, if any.
    fn matches(&self, token: &str) -> Option<usize> {
        if let Some(i) = self.terms.iter().position(|t| t == token) {
            return Some(i);
        }
        if let Some((start, i)) = &self.prefix
            && token.starts_with(start.as_str())
        {
            return Some(*i);
        }
        if let Some(i) = self.stem_match(token) {
            return Some(i);
        }
        if self.matching == Matching::Exact {
            return None;
        }
        self.terms.iter().position(|t| fuzzy_distance(t) > 0 && within_one_edit(t, token))
    }

    /// The index of the word whose stem `token` shares. Only a token beginning as a stem
    /// does is stemmed (stemmers change the ends of words), so a long text costs little.
    fn stem_match(&self, token: &str) -> Option<usize> {
        let (stems, analyzer) = self.stems.as_ref()?;
        let head = |s: &str| s.char_indices().nth(STEM_HEAD_CHARS).map_or(s.len(), |(i, _)| i);
        if !stems.iter().any(|(stem, _)| token.starts_with(&stem[..head(stem)])) {
            return None;
        }
        let mut analyzer = analyzer.try_borrow_mut().ok()?;
        let mut stream = analyzer.token_stream(token);
        let stem = stream.next().map(|t| t.text.clone())?;
        stems.iter().find(|(s, _)| *s == stem).map(|(_, i)| *i)
    }
}

/// How many first characters a word and its stem always share (all of a shorter stem).
const STEM_HEAD_CHARS: usize = 3;

/// [`best_snippet`] of `texts`, the query's terms found by `matcher`.
#[cfg(test)]
pub(crate) fn best_passage(texts: &[(TextField, String)], matcher: &TermMatcher) -> (TextField, String) {
    let hits: Vec<Hits> = texts.iter().map(|(_, text)| matcher.hits(text)).collect();
    best_snippet(texts, &hits)
}

/// The field that matched best (most distinct query terms; ties go to the earlier field of
/// [`TextField::ALL`]) and its marked snippet. `texts` are the entry's searchable texts and
/// `hits[i]` the query's terms found in `texts[i]`.
pub(crate) fn best_snippet(texts: &[(TextField, String)], hits: &[Hits]) -> (TextField, String) {
    let mut best: Option<(usize, TextField, &str, &Hits)> = None;
    for ((field, text), hits) in texts.iter().zip(hits) {
        let distinct = count_distinct(hits);
        if distinct > 0 && best.as_ref().is_none_or(|(d, ..)| distinct > *d) {
            best = Some((distinct, *field, text.as_str(), hits));
        }
    }
    match best {
        Some((_, field, text, hits)) => (field, render(text, hits)),
        None => {
            // Nothing recognisable (a fuzzy hit on a field variant): show the start of the body.
            let body = texts.iter().find(|(f, t)| *f == TextField::Body && !t.is_empty());
            let (field, text) =
                body.or(texts.first()).map_or((TextField::Name, ""), |(f, t)| (*f, t.as_str()));
            (field, render(text, &[]))
        }
    }
}

/// The start of `text` as a snippet shows it, nothing marked: on one line, cut at a word
/// to about [`SNIPPET_CHARS`] (a part found by meaning).
pub(crate) fn opening(text: &str) -> String {
    render(text, &[])
}

/// How many distinct query terms `hits` holds.
pub(crate) fn count_distinct(hits: &[(usize, Range<usize>)]) -> usize {
    let mut seen: Vec<usize> = hits.iter().map(|(i, _)| *i).collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

/// Cuts the window of `text` with the most distinct terms and marks the hits in it.
fn render(text: &str, hits: &[(usize, Range<usize>)]) -> String {
    let window = best_window(text, hits);
    let mut out = String::new();
    if window.start > 0 {
        out.push('…');
    }
    let mut cursor = window.start;
    for (_, range) in hits.iter().filter(|(_, r)| r.start >= window.start && r.end <= window.end) {
        push_collapsed(&mut out, &text[cursor..range.start]);
        out.push_str("**");
        out.push_str(&text[range.clone()]);
        out.push_str("**");
        cursor = range.end;
    }
    push_collapsed(&mut out, &text[cursor..window.end]);
    let mut out = out.trim().to_string();
    if window.end < text.len() {
        out.push('…');
    }
    out
}

/// The byte range shown: starting a little before the hit that begins the richest window.
fn best_window(text: &str, hits: &[(usize, Range<usize>)]) -> Range<usize> {
    if advance_chars(text, 0, SNIPPET_CHARS) == text.len() {
        return 0..text.len();
    }
    let mut anchor = 0;
    let mut best = 0;
    for (i, (_, first)) in hits.iter().enumerate() {
        let end = advance_chars(text, first.start, SNIPPET_CHARS - LEAD_CHARS);
        let inside: Vec<(usize, Range<usize>)> =
            hits[i..].iter().take_while(|(_, r)| r.end <= end).cloned().collect();
        let distinct = count_distinct(&inside);
        if distinct > best {
            best = distinct;
            anchor = first.start;
        }
    }
    let mut start = back_chars(text, anchor, LEAD_CHARS);
    if start > 0 {
        // Start at a word boundary.
        start = text[start..anchor].find(char::is_whitespace).map_or(anchor, |i| start + i);
    }
    let mut end = advance_chars(text, start, SNIPPET_CHARS);
    if end < text.len() {
        end = text[start..end]
            .rfind(char::is_whitespace)
            .map_or(end, |i| start + i)
            .max(anchor_end(hits, anchor));
    }
    start..end
}

/// The end of the hit starting at `anchor` (so a cut never splits the anchor term).
fn anchor_end(hits: &[(usize, Range<usize>)], anchor: usize) -> usize {
    hits.iter().find(|(_, r)| r.start == anchor).map_or(anchor, |(_, r)| r.end)
}

fn advance_chars(text: &str, from: usize, chars: usize) -> usize {
    text[from..].char_indices().nth(chars).map_or(text.len(), |(i, _)| from + i)
}

fn back_chars(text: &str, from: usize, chars: usize) -> usize {
    text[..from].char_indices().rev().nth(chars.saturating_sub(1)).map_or(0, |(i, _)| i)
}

fn push_collapsed(out: &mut String, piece: &str) {
    let mut last_space = out.ends_with(' ');
    for c in piece.chars() {
        if c.is_whitespace() {
            if !last_space {
                out.push(' ');
            }
            last_space = true;
        } else {
            out.push(c);
            last_space = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(pairs: &[(TextField, &str)]) -> Vec<(TextField, String)> {
        pairs.iter().map(|(f, t)| (*f, t.to_string())).collect()
    }

    #[test]
    fn marks_terms_in_the_best_field() {
        let t = texts(&[
            (TextField::Name, "Coffee plan"),
            (TextField::Body, "Buy a new café grinder\nand beans"),
        ]);
        let (field, snippet) =
            best_passage(&t, &TermMatcher::new(&["cafe".into(), "grinder".into()], Matching::Exact));
        assert_eq!(field, TextField::Body);
        assert_eq!(snippet, "Buy a new **café** **grinder** and beans");
        let (field, snippet) = best_passage(&t, &TermMatcher::new(&["plan".into()], Matching::Exact));
        assert_eq!((field, snippet.as_str()), (TextField::Name, "Coffee **plan**"));
    }

    #[test]
    fn long_text_is_cut_around_the_match() {
        let body = format!("{} needle here {}", "lorem ipsum ".repeat(40), "dolor sit ".repeat(40));
        let t = texts(&[(TextField::Body, &body)]);
        let (_, snippet) = best_passage(&t, &TermMatcher::new(&["needle".into()], Matching::Exact));
        assert!(snippet.starts_with('…') && snippet.ends_with('…'), "{snippet}");
        assert!(snippet.contains("**needle**"), "{snippet}");
        assert!(snippet.chars().count() <= SNIPPET_CHARS + 10, "{snippet}");
    }

    #[test]
    fn stems_and_a_word_being_typed_are_marked_too() {
        let parts = crate::analysis::query_parts("meet landl");
        let stems = crate::analysis::stems(&parts.words, SearchLanguage::default());
        let request = Request { parts: &parts, stems: &stems, prefix: true, category: None, unknown: &[] };
        let matcher = TermMatcher::for_query(request, SearchLanguage::default(), Matching::Exact);
        let t = texts(&[(TextField::Body, "Meetings with the Landlords, then lunch")]);
        let (_, snippet) = best_passage(&t, &matcher);
        assert_eq!(snippet, "**Meetings** with the **Landlords**, then lunch");
        let exact_only = Request { prefix: false, ..request };
        let (_, snippet) =
            best_passage(&t, &TermMatcher::for_query(exact_only, SearchLanguage::default(), Matching::Exact));
        assert_eq!(snippet, "**Meetings** with the Landlords, then lunch");
    }

    #[test]
    fn fuzzy_marks_near_words() {
        let t = texts(&[(TextField::Body, "the kubernetes cluster")]);
        let (_, snippet) = best_passage(&t, &TermMatcher::new(&["kubernets".into()], Matching::Fuzzy));
        assert_eq!(snippet, "the **kubernetes** cluster");
    }
}
