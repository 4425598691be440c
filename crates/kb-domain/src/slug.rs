//! Slugs: the file-name stem kb gives an entry it creates.
//!
//! Rules: lowercase ASCII `[a-z0-9-]`, words joined by single `-`, no leading or
//! trailing `-`, at most 60 characters, unicode transliterated or dropped, an empty result
//! becomes `entry`, and a taken slug gets `-2`, `-3`, … .

use std::fmt;

/// The longest slug kb writes.
pub const MAX_SLUG_LEN: usize = 60;
const FALLBACK: &str = "entry";

/// A valid slug. The only ways to get one are [`Slug::from_name`] and [`Slug::parse`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slug(String);

/// A string that is not a valid slug.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid slug {0:?}: use 1 to 60 of a-z, 0-9 and single inner dashes")]
pub struct InvalidSlug(pub String);

impl Slug {
    /// Makes the slug of an entry name: transliterates, lowercases, joins words by `-`.
    pub fn from_name(name: &str) -> Slug {
        let ascii = deunicode::deunicode(name);
        let mut out = String::with_capacity(ascii.len().min(MAX_SLUG_LEN));
        let mut pending_dash = false;
        for ch in ascii.chars() {
            if ch.is_ascii_alphanumeric() {
                if pending_dash && !out.is_empty() {
                    out.push('-');
                }
                pending_dash = false;
                out.push(ch.to_ascii_lowercase());
                if out.len() >= MAX_SLUG_LEN {
                    break;
                }
            } else if ch != '\'' {
                // Apostrophes join ("who's" -> "whos"); anything else separates words.
                pending_dash = true;
            }
        }
        Slug(finish(out, MAX_SLUG_LEN))
    }

    /// Accepts a string that already follows the slug rules.
    pub fn parse(text: &str) -> Result<Slug, InvalidSlug> {
        if is_valid_slug(text) { Ok(Slug(text.to_string())) } else { Err(InvalidSlug(text.to_string())) }
    }

    /// The slug with collision suffix `-n` (n >= 2), shortened so the whole stays within 60.
    pub fn with_suffix(&self, n: u32) -> Slug {
        let suffix = format!("-{n}");
        let room = MAX_SLUG_LEN.saturating_sub(suffix.len());
        let base = finish(self.0.chars().take(room).collect(), room);
        Slug(format!("{base}{suffix}"))
    }

    /// The slug as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Cuts to `max`, trims dashes at the ends, and falls back to `entry` when nothing is left.
fn finish(mut text: String, max: usize) -> String {
    text.truncate(max);
    let trimmed = text.trim_matches('-');
    if trimmed.is_empty() { FALLBACK.to_string() } else { trimmed.to_string() }
}

/// Whether `text` follows the slug rules.
pub fn is_valid_slug(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= MAX_SLUG_LEN
        && text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !text.starts_with('-')
        && !text.ends_with('-')
        && !text.contains("--")
}

impl fmt::Display for Slug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn examples() {
        assert_eq!(Slug::from_name("ClientCo integration").as_str(), "clientco-integration");
        assert_eq!(Slug::from_name("  Renew passport!! by Dec 15 ").as_str(), "renew-passport-by-dec-15");
        assert_eq!(Slug::from_name("Zoë Ångström").as_str(), "zoe-angstrom");
        assert_eq!(Slug::from_name("who's there").as_str(), "whos-there");
        assert_eq!(Slug::from_name("").as_str(), "entry");
        assert_eq!(Slug::from_name("!!! ---").as_str(), "entry");
        assert_eq!(Slug::from_name("🎉").as_str(), "tada");
    }

    #[test]
    fn suffix_keeps_the_limit() {
        let long = Slug::from_name(&"a".repeat(100));
        assert_eq!(long.as_str().len(), 60);
        let s = long.with_suffix(12);
        assert_eq!(s.as_str().len(), 60);
        assert!(s.as_str().ends_with("-12"));
        assert_eq!(Slug::from_name("x").with_suffix(2).as_str(), "x-2");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn any_name_gives_a_valid_slug(name in any::<String>(), n in 2u32..100_000) {
            let slug = Slug::from_name(&name);
            prop_assert!(is_valid_slug(slug.as_str()), "{:?} -> {:?}", name, slug);
            let suffixed = slug.with_suffix(n);
            prop_assert!(is_valid_slug(suffixed.as_str()), "{:?}", suffixed);
            prop_assert!(Slug::parse(slug.as_str()).is_ok());
        }

        #[test]
        fn words_of_letters_keep_their_order(words in proptest::collection::vec("[a-z]{1,8}", 1..5)) {
            let name = words.join(" ");
            let expected = words.join("-");
            prop_assume!(expected.len() <= MAX_SLUG_LEN);
            let slug = Slug::from_name(&name);
            prop_assert_eq!(slug.as_str(), expected.as_str());
        }
    }
}
