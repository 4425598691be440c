//! Where words begin and end in a text, and the form each word is indexed and searched
//! in, for the analyzers (see `analysis`).
//!
//! A word is a run of letters and digits, as in tantivy's `SimpleTokenizer`, with these
//! differences:
//! - an accent written as a character of its own (a combining mark, as macOS and some
//!   keyboards write "é": an "e" followed by U+0301) belongs to the word it follows, and
//!   so do the invisible joiners (zero-width joiner and non-joiner, word joiner, soft
//!   hyphen), which are then left out: "Ame\u{301}lie" is one word, not "ame" and "lie";
//! - after a Latin, Greek or Cyrillic letter, accents are left out however they were
//!   written (as part of the letter or after it, one or several): "Ọ̀yọ́" is "Oyo",
//!   "Αθηνά" is "Αθηνα", "ёлка" is "елка"; so are Hebrew points and Arabic harakat, most
//!   often not written at all; in other scripts (Devanagari, Tamil…) the marks are part of
//!   the spelling and stay;
//! - the Greek final sigma is written as any other sigma;
//! - what is left is put in composed form (NFC).
//!
//! The result reads the same when it is read again, so a term found in the index is found
//! by itself as a query.

use std::str::CharIndices;

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Whether `c` continues a word begun by a letter or a digit.
pub(crate) fn continues_word(c: char) -> bool {
    // Most text is ASCII, where no mark or joiner is: the tables are for the rest.
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    c.is_alphanumeric() || is_combining_mark(c) || is_joiner(c)
}

/// The invisible characters that join the letters around them (zero-width non-joiner and
/// joiner, word joiner, soft hyphen): inside a word, and left out of it.
fn is_joiner(c: char) -> bool {
    matches!(c, '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{00AD}')
}

/// Whether accents after `c` are left out: a letter of the Latin, Greek or Cyrillic
/// alphabets, where an accent is a variant of its letter, not a letter of its own; or of
/// Hebrew and Arabic, whose vowel points and harakat are mostly not written at all (so
/// "שלום" finds "שָׁלוֹם", "كتاب" finds "كِتَاب").
fn sheds_accents(c: char) -> bool {
    matches!(c,
        '\u{0041}'..='\u{024F}'        // Basic Latin letters to Latin Extended-B
        | '\u{1E00}'..='\u{1EFF}'      // Latin Extended Additional
        | '\u{2C60}'..='\u{2C7F}'      // Latin Extended-C
        | '\u{A720}'..='\u{A7FF}'      // Latin Extended-D
        | '\u{0370}'..='\u{03FF}'      // Greek and Coptic
        | '\u{1F00}'..='\u{1FFF}'      // Greek Extended
        | '\u{0400}'..='\u{052F}'      // Cyrillic and its supplement
        | '\u{A640}'..='\u{A69F}'      // Cyrillic Extended-B
        | '\u{0590}'..='\u{05FF}'      // Hebrew
        | '\u{FB1D}'..='\u{FB4F}'      // Hebrew presentation forms
        | '\u{0600}'..='\u{06FF}'      // Arabic
        | '\u{0750}'..='\u{077F}'      // Arabic Supplement
        | '\u{08A0}'..='\u{08FF}'      // Arabic Extended-A
    )
}

/// Appends `word` to `out` in the form it is indexed and searched in (see the module doc).
fn push_plain(word: &str, out: &mut String) {
    let mut shedding = false;
    let kept = word
        .nfd()
        .filter(move |&c| {
            if is_combining_mark(c) {
                return !shedding;
            }
            if is_joiner(c) {
                return false;
            }
            shedding = sheds_accents(c);
            true
        })
        .map(|c| if c == 'ς' { 'σ' } else { c });
    out.extend(kept.nfc());
}

/// Splits a text into its words (see the module doc).
#[derive(Clone, Default)]
pub(crate) struct WordTokenizer {
    token: Token,
}

/// The words of one text, in order.
pub(crate) struct WordStream<'a> {
    text: &'a str,
    chars: CharIndices<'a>,
    token: &'a mut Token,
}

impl Tokenizer for WordTokenizer {
    type TokenStream<'a> = WordStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordStream<'a> {
        self.token.reset();
        WordStream { text, chars: text.char_indices(), token: &mut self.token }
    }
}

impl WordStream<'_> {
    /// Where the word under way ends: at the first character that does not continue it.
    fn word_end(&mut self) -> usize {
        self.chars.find(|(_, c)| !continues_word(*c)).map_or(self.text.len(), |(offset, _)| offset)
    }
}

impl TokenStream for WordStream<'_> {
    fn advance(&mut self) -> bool {
        self.token.text.clear();
        self.token.position = self.token.position.wrapping_add(1);
        // A mark with no letter before it (after a space) starts no word.
        while let Some((start, c)) = self.chars.next() {
            if c.is_alphanumeric() {
                let end = self.word_end();
                let word = &self.text[start..end];
                self.token.offset_from = start;
                self.token.offset_to = end;
                if word.is_ascii() {
                    self.token.text.push_str(word);
                } else {
                    push_plain(word, &mut self.token.text);
                }
                return true;
            }
        }
        false
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each word of `text` with the bytes it came from.
    fn words(text: &str) -> Vec<(String, &str)> {
        let mut tokenizer = WordTokenizer::default();
        let mut stream = tokenizer.token_stream(text);
        let mut out = Vec::new();
        while let Some(token) = stream.next() {
            out.push((token.text.clone(), &text[token.offset_from..token.offset_to]));
        }
        out
    }

    /// The terms of `text` alone.
    fn terms(text: &str) -> Vec<String> {
        words(text).into_iter().map(|(term, _)| term).collect()
    }

    #[test]
    fn a_separate_accent_stays_in_its_word_and_accents_after_latin_letters_go() {
        let decomposed = "Ame\u{301}lie at the cafe\u{301}!";
        assert_eq!(
            words(decomposed),
            [
                ("Amelie".to_string(), "Ame\u{301}lie"),
                ("at".to_string(), "at"),
                ("the".to_string(), "the"),
                ("cafe".to_string(), "cafe\u{301}"),
            ]
        );
        assert_eq!(terms("Amélie"), ["Amelie"]);
        // Stacked, repeated and letters with no single-character form.
        assert_eq!(terms("O\u{323}\u{300}yo\u{323}\u{301} ha\u{328}\u{301}a\u{328}\u{301}"), ["Oyo", "haa"]);
        assert_eq!(
            terms("re\u{301}sume\u{301}\u{301}\u{301} c\u{335}o\u{336}m\u{337}e\u{338}s"),
            ["resume", "comes"]
        );
        // Greek and Cyrillic alike; the final sigma is a sigma.
        assert_eq!(terms("Αθηνά ΟΔΥΣΣΕΑΣ Οδυσσέας ёлка"), ["Αθηνα", "ΟΔΥΣΣΕΑΣ", "Οδυσσεασ", "елка"]);
    }

    #[test]
    fn hebrew_points_and_arabic_harakat_are_left_out() {
        assert_eq!(terms("שָׁלוֹם כִּתָב"), terms("שלום כתב"));
        assert_eq!(terms("كِتَابٌ"), terms("كتاب"));
    }

    #[test]
    fn marks_of_other_scripts_stay_and_joiners_join() {
        // Devanagari's vowel signs and virama are its spelling.
        assert_eq!(terms("हिन्दी"), ["हिन्दी"]);
        assert_eq!(
            terms("joi\u{200d}ner hy\u{ad}phen word\u{2060}joined zero\u{200b}width"),
            ["joiner", "hyphen", "wordjoined", "zero", "width"]
        );
    }

    #[test]
    fn a_term_read_again_is_itself() {
        for text in ["O\u{323}\u{300}yo\u{323}\u{301}", "Οδυσσέας", "हिन्दी", "Zoe\u{308}", "ŁÓDŹ", "ﬁne"]
        {
            for term in terms(text) {
                assert_eq!(terms(&term), std::slice::from_ref(&term), "{text:?}");
            }
        }
    }

    #[test]
    fn words_split_as_before_on_anything_but_letters_digits_and_accents() {
        assert_eq!(
            words("  renew-passport, by Dec 15 \u{301}x"),
            [
                ("renew".to_string(), "renew"),
                ("passport".to_string(), "passport"),
                ("by".to_string(), "by"),
                ("Dec".to_string(), "Dec"),
                ("15".to_string(), "15"),
                ("x".to_string(), "x"),
            ]
        );
        assert!(words("").is_empty());
        assert!(words(" \u{301} -- ").is_empty());
    }
}
