//! Where words begin and end in a text, for the analyzers (see `analysis`).
//!
//! A word is a run of letters and digits, as in tantivy's `SimpleTokenizer`, with one
//! difference: an accent written as a character of its own (a combining mark, as macOS
//! and some keyboards write "é": an "e" followed by U+0301) belongs to the word it
//! follows, and each word is put in composed form (NFC) before the other filters see it.
//! "Ame\u{301}lie" is then the one word "amélie", folded to "amelie" like "Amélie" typed
//! with its accented letter, not the two words "ame" and "lie".

use std::str::CharIndices;

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Whether `c` continues a word begun by a letter or a digit.
pub(crate) fn continues_word(c: char) -> bool {
    c.is_alphanumeric() || is_combining_mark(c)
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
        (&mut self.chars).find(|(_, c)| !continues_word(*c)).map_or(self.text.len(), |(offset, _)| offset)
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
                    self.token.text.extend(word.nfc());
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

    #[test]
    fn a_separate_accent_stays_in_its_word_which_is_composed() {
        let decomposed = "Ame\u{301}lie at the cafe\u{301}!";
        assert_eq!(
            words(decomposed),
            [
                ("Amélie".to_string(), "Ame\u{301}lie"),
                ("at".to_string(), "at"),
                ("the".to_string(), "the"),
                ("café".to_string(), "cafe\u{301}"),
            ]
        );
        assert_eq!(words("Amélie"), [("Amélie".to_string(), "Amélie")]);
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
