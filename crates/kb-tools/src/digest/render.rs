//! The deterministic markdown rendering of a digest's facts: what the person gets when no
//! LLM writes the digest, and what the LLM is shown to write from. Items are shortened
//! and, if need be, dropped (longest section first) to keep under the word limit.

use super::{DigestFacts, DigestSection};

/// The most words one item keeps.
const ITEM_WORDS: usize = 14;
/// What an empty section says.
const NOTHING: &str = "Nothing here today.";

/// The facts as markdown under the digest's headings, within its word limit.
pub fn render_markdown(facts: &DigestFacts) -> String {
    let mut sections: Vec<DigestSection> = facts
        .sections
        .iter()
        .map(|s| DigestSection { heading: s.heading, items: s.items.iter().map(|i| shorten(i)).collect() })
        .collect();
    loop {
        let text = render(facts, &sections);
        if word_count(&text) < facts.kind.word_limit() {
            return text;
        }
        match sections.iter_mut().filter(|s| !s.items.is_empty()).max_by_key(|s| s.items.len()) {
            Some(longest) => {
                longest.items.pop();
            }
            None => return text,
        }
    }
}

/// The facts as markdown, in full (what an LLM writer is shown).
pub fn render_full(facts: &DigestFacts) -> String {
    render(facts, &facts.sections)
}

fn render(facts: &DigestFacts, sections: &[DigestSection]) -> String {
    let mut out = format!("# {}\n", facts.kind.title(facts.today));
    for section in sections {
        out.push_str(&format!("\n## {}\n", section.heading));
        if section.items.is_empty() {
            out.push_str(&format!("- {NOTHING}\n"));
        }
        for item in &section.items {
            out.push_str(&format!("- {item}\n"));
        }
    }
    out
}

fn shorten(item: &str) -> String {
    let words: Vec<&str> = item.split_whitespace().collect();
    if words.len() <= ITEM_WORDS { words.join(" ") } else { format!("{}…", words[..ITEM_WORDS].join(" ")) }
}

/// Words as a reader counts them (markdown markers such as `#` and `-` are not words).
pub fn word_count(text: &str) -> usize {
    text.split_whitespace().filter(|w| w.chars().any(char::is_alphanumeric)).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::DigestKind;
    use chrono::NaiveDate;

    fn facts(kind: DigestKind, items: usize) -> DigestFacts {
        DigestFacts {
            kind,
            today: NaiveDate::from_ymd_opt(2026, 11, 21).unwrap_or_default(),
            sections: kind
                .headings()
                .iter()
                .map(|heading| DigestSection {
                    heading,
                    items: (0..items)
                        .map(|i| {
                            format!(
                                "item {i} with quite a lot of words in it, more than anyone needs to read"
                            )
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    #[test]
    fn every_heading_shows_and_the_limit_holds() {
        for kind in [DigestKind::Daily, DigestKind::Weekly] {
            for items in [0, 1, 5, 40] {
                let text = render_markdown(&facts(kind, items));
                assert!(word_count(&text) < kind.word_limit(), "{kind:?} {items}: {text}");
                for heading in kind.headings() {
                    assert!(text.contains(&format!("## {heading}\n")), "{heading} missing in {text}");
                }
            }
        }
        assert!(render_markdown(&facts(DigestKind::Daily, 0)).contains(NOTHING));
    }
}
