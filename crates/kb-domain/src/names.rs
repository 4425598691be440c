//! Names as people say them: folded for comparison (case, accents and punctuation aside),
//! stripped of the filler around a reference ("the passport thing" → "passport"), and how
//! the names of two entries relate ("Priya" and "Priya Raman").

use std::borrow::Cow;

/// A name folded for comparison: transliterated to ASCII, lowercase, apostrophes dropped,
/// any other punctuation a space, words joined by single spaces ("Zoë  O'Brien-Smith" →
/// "zoe obrien smith").
pub fn fold_name(text: &str) -> String {
    // Most names are ASCII already: those are folded in one pass into one string.
    let ascii = if text.is_ascii() { Cow::Borrowed(text) } else { Cow::Owned(deunicode::deunicode(text)) };
    let mut folded = String::with_capacity(ascii.len());
    let mut between_words = false;
    for c in ascii.chars().filter(|c| *c != '\'') {
        if c.is_ascii_alphanumeric() {
            if between_words && !folded.is_empty() {
                folded.push(' ');
            }
            between_words = false;
            folded.push(c.to_ascii_lowercase());
        } else {
            between_words = true;
        }
    }
    folded
}

/// Whether `text` folded ([`fold_name`]) may begin with the byte `first`: `false` only
/// when it surely does not, found without folding (for ASCII text, its first letter or
/// digit). Lets a look at every entry's names fold only the few that may match.
pub fn may_fold_to_start_with(text: &str, first: u8) -> bool {
    if !text.is_ascii() {
        return true;
    }
    text.bytes().find(u8::is_ascii_alphanumeric).is_some_and(|b| b.to_ascii_lowercase() == first)
}

/// Words that may open a reference without being part of the name.
const LEADING_FILLER: &[&str] = &["the", "my", "a", "an", "our", "that", "this", "about"];

/// Words that may close a reference without being part of the name ("the bakery idea",
/// "the passport thing").
const TRAILING_FILLER: &[&str] = &[
    "thing", "things", "stuff", "one", "entry", "note", "notes", "item", "task", "todo", "idea", "project",
    "person", "errand", "page", "file",
];

/// The folded ways a reference may name an entry, most literal first: as written; without
/// leading filler and a possessive ("my", "the", "Priya's" → "priya"); then also without
/// trailing filler ("the bakery idea" → "bakery"). Never empty words; no repeats.
pub fn reference_keys(reference: &str) -> Vec<String> {
    let without_possessive: String = reference
        .replace("'s ", " ")
        .replace("’s ", " ")
        .trim_end_matches("'s")
        .trim_end_matches("’s")
        .to_string();
    let mut keys: Vec<String> = Vec::new();
    let mut push = |key: String| {
        if !key.is_empty() && !keys.contains(&key) {
            keys.push(key);
        }
    };
    push(fold_name(reference));
    let folded = fold_name(&without_possessive);
    let mut words: Vec<&str> = folded.split(' ').filter(|w| !w.is_empty()).collect();
    while words.len() > 1 && LEADING_FILLER.contains(&words[0]) {
        words.remove(0);
    }
    push(words.join(" "));
    while words.len() > 1 && words.last().is_some_and(|w| TRAILING_FILLER.contains(w)) {
        words.pop();
    }
    push(words.join(" "));
    keys
}

/// How two names relate once folded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NameRelation {
    /// The same name ("Priya Raman", "priya  raman").
    Same,
    /// One name's words begin the other's ("Priya" and "Priya Raman").
    Prefix,
}

impl NameRelation {
    /// Why two entries with names so related may be one, in a person's words.
    pub fn reason(self) -> &'static str {
        match self {
            NameRelation::Same => "the same name",
            NameRelation::Prefix => "one name is the start of the other",
        }
    }
}

/// How the folded names `a` and `b` relate, if they do: the same, or the words of the
/// shorter beginning the longer's. Empty names relate to nothing.
pub fn relate(a: &str, b: &str) -> Option<NameRelation> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    if a == b {
        return Some(NameRelation::Same);
    }
    let (short, long) = if a.len() < b.len() { (a, b) } else { (b, a) };
    (long.starts_with(short) && long.as_bytes().get(short.len()) == Some(&b' '))
        .then_some(NameRelation::Prefix)
}

/// The first word of a folded name (what a name index is keyed by).
pub fn first_word(folded: &str) -> &str {
    folded.split(' ').next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Folding as first written: transliterate, map, then split and join the words.
    fn fold_in_steps(text: &str) -> String {
        let spaced: String = deunicode::deunicode(text)
            .chars()
            .filter(|c| *c != '\'')
            .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { ' ' })
            .collect();
        spaced.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

        /// The one-pass folding gives what folding step by step gives, for any text.
        #[test]
        fn folding_in_one_pass_is_folding_in_steps(text in "(?s)[ -~\t\nÀ-ÿĀ-ž’'—–\u{3000}-\u{30ff}😀]{0,24}") {
            proptest::prop_assert_eq!(fold_name(&text), fold_in_steps(&text));
        }

        /// The quick look at a name's first letter never rules out what it folds to.
        #[test]
        fn the_first_letter_look_rules_out_only_other_starts(
            text in "(?s)[ -~À-ÿ’]{0,12}",
            first in proptest::sample::select(b"abyz09 -'".to_vec()),
        ) {
            let folded = fold_name(&text);
            if folded.as_bytes().first() == Some(&first) {
                proptest::prop_assert!(may_fold_to_start_with(&text, first));
            }
            if !text.is_ascii() || folded.is_empty() {
                return Ok(());
            }
            proptest::prop_assert_eq!(may_fold_to_start_with(&text, first), folded.as_bytes()[0] == first);
        }
    }

    #[test]
    fn folding_sets_case_accents_and_punctuation_aside() {
        assert_eq!(fold_name("Zoë  O'Brien-Smith"), "zoe obrien smith");
        assert_eq!(fold_name("  PRIYA raman "), "priya raman");
        assert_eq!(fold_name("José Álvarez"), fold_name("jose alvarez"));
        assert_eq!(fold_name("?!"), "");
    }

    #[test]
    fn references_lose_their_filler_step_by_step() {
        assert_eq!(
            reference_keys("the passport thing"),
            ["the passport thing", "passport thing", "passport"]
        );
        assert_eq!(reference_keys("Priya"), ["priya"]);
        assert_eq!(reference_keys("Priya's"), ["priyas", "priya"]);
        assert_eq!(reference_keys("the bakery idea"), ["the bakery idea", "bakery idea", "bakery"]);
        // A name made only of filler keeps its last word.
        assert_eq!(reference_keys("the idea"), ["the idea", "idea"]);
        assert!(reference_keys("  ").is_empty());
    }

    #[test]
    fn names_relate_when_equal_or_when_words_begin_the_other() {
        assert_eq!(relate("priya raman", "priya raman"), Some(NameRelation::Same));
        assert_eq!(relate("priya", "priya raman"), Some(NameRelation::Prefix));
        assert_eq!(relate("priya raman", "priya"), Some(NameRelation::Prefix));
        assert_eq!(relate("sam", "samantha jones"), None);
        assert_eq!(relate("priya shah", "priya raman"), None);
        assert_eq!(relate("", "priya"), None);
        assert_eq!(first_word("priya raman"), "priya");
    }
}
