//! How an entry is cut into the parts that are embedded: its name and fields with the
//! start of its notes, then the rest of the notes split at headings and paragraphs, each
//! part at most [`MAX_WORDS`] words and each carrying the entry's name, so that a part
//! means something on its own ("Anna — …").

use crate::schema::TextField;

/// The most words a part holds (besides the name): small enough for every embedding
/// model's input, large enough to keep a paragraph whole.
pub const MAX_WORDS: usize = 200;

/// One part of an entry to embed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The text sent to the model.
    pub text: String,
    /// Where the part's own words come from (its snippet's field): the notes, or the
    /// first field it carries.
    pub field: TextField,
    /// The part without the name line, as a snippet shows it.
    pub passage: String,
}

/// The parts of an entry whose searchable texts are `texts` (in [`TextField::ALL`]
/// order; missing fields are empty). An entry with no text at all has no part.
pub fn chunks(texts: &[(TextField, String)]) -> Vec<Chunk> {
    let text = |field: TextField| texts.iter().find(|(f, _)| *f == field).map_or("", |(_, t)| t.trim());
    let name = text(TextField::Name);
    let mut head: Vec<String> = Vec::new();
    let mut head_field = None;
    for field in [TextField::OneLiner, TextField::Tags, TextField::NextAction, TextField::Context] {
        let value = text(field);
        if !value.is_empty() {
            head_field.get_or_insert(field);
            head.push(value.to_string());
        }
    }
    let body = text(TextField::Body);
    // What was captured is usually in the notes already: only kept when it is not.
    let original = text(TextField::OriginalText);
    if !original.is_empty() && !body.contains(original) {
        head_field.get_or_insert(TextField::OriginalText);
        head.push(original.to_string());
    }
    let mut pieces = pieces(body);
    let mut parts = Vec::new();
    // The first part: the fields, then as much of the notes as fits.
    let mut first = head.join("\n");
    let mut words = word_count(&first);
    let mut first_field = head_field;
    let mut took_notes = false;
    while let Some(piece) = pieces.first() {
        let piece_words = word_count(piece);
        // A heading after some notes starts the next part, as further on.
        if (words > 0 && words + piece_words > MAX_WORDS) || (took_notes && piece.starts_with('#')) {
            break;
        }
        took_notes = true;
        first_field.get_or_insert(TextField::Body);
        push_line(&mut first, piece);
        words += piece_words;
        pieces.remove(0);
    }
    if !first.is_empty() || !name.is_empty() {
        parts.push(part(name, first, first_field.unwrap_or(TextField::Name)));
    }
    // The rest of the notes, packed up to the limit; a heading starts a new part.
    let mut current = String::new();
    let mut current_words = 0;
    for piece in pieces {
        let piece_words = word_count(&piece);
        let heading = piece.starts_with('#');
        if !current.is_empty() && (heading || current_words + piece_words > MAX_WORDS) {
            parts.push(part(name, std::mem::take(&mut current), TextField::Body));
            current_words = 0;
        }
        push_line(&mut current, &piece);
        current_words += piece_words;
    }
    if !current.is_empty() {
        parts.push(part(name, current, TextField::Body));
    }
    parts
}

/// A part of the entry named `name` whose own words are `passage`.
fn part(name: &str, passage: String, field: TextField) -> Chunk {
    let text = match (name.is_empty(), passage.is_empty()) {
        (true, _) => passage.clone(),
        (false, true) => name.to_string(),
        (false, false) => format!("{name}\n{passage}"),
    };
    Chunk { text, field, passage }
}

/// Appends `piece` to `text` on a line of its own.
fn push_line(text: &mut String, piece: &str) {
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(piece);
}

/// The notes as paragraphs and headings, each at most [`MAX_WORDS`] words (a longer
/// paragraph is cut between words).
fn pieces(body: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut paragraph: Vec<&str> = Vec::new();
    let flush = |paragraph: &mut Vec<&str>, pieces: &mut Vec<String>| {
        if paragraph.is_empty() {
            return;
        }
        let text = paragraph.join("\n");
        paragraph.clear();
        let words: Vec<&str> = text.split_whitespace().collect();
        if words.len() <= MAX_WORDS {
            pieces.push(text);
        } else {
            pieces.extend(words.chunks(MAX_WORDS).map(|w| w.join(" ")));
        }
    };
    for line in body.lines() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            flush(&mut paragraph, &mut pieces);
        } else if line.trim_start().starts_with('#') {
            flush(&mut paragraph, &mut pieces);
            paragraph.push(line.trim_start());
        } else {
            paragraph.push(line);
        }
    }
    flush(&mut paragraph, &mut pieces);
    pieces
}

/// Words in `text`.
fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn texts(name: &str, one_liner: &str, body: &str) -> Vec<(TextField, String)> {
        vec![
            (TextField::Name, name.into()),
            (TextField::OneLiner, one_liner.into()),
            (TextField::Body, body.into()),
        ]
    }

    #[test]
    fn a_short_entry_is_one_part_with_its_name() {
        let parts = chunks(&texts("Anna", "My sister, lives in Lyon", "Called her on Sunday."));
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].text, "Anna\nMy sister, lives in Lyon\nCalled her on Sunday.");
        assert_eq!(parts[0].field, TextField::OneLiner);
        assert_eq!(parts[0].passage, "My sister, lives in Lyon\nCalled her on Sunday.");
    }

    #[test]
    fn headings_start_parts_and_every_part_names_the_entry() {
        let long = "word ".repeat(150);
        let body = format!("{long}\n\n## Travel\nFlights booked.\n\n## Money\nSam owes me for the tickets.");
        let parts = chunks(&texts("Concert", "", &body));
        assert_eq!(parts.len(), 3, "{parts:#?}");
        assert!(parts.iter().all(|p| p.text.starts_with("Concert\n")));
        assert!(parts[1].passage.starts_with("## Travel"));
        assert!(parts[2].passage.contains("Sam owes me"));
    }

    #[test]
    fn a_name_alone_is_a_part() {
        let parts = chunks(&texts("Priya", "", ""));
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].text, "Priya");
        assert!(chunks(&texts("", "", "")).is_empty());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Every word of the notes is in a part, in order, and no part is over the limit.
        #[test]
        fn parts_keep_every_word_within_the_limit(
            paragraphs in prop::collection::vec(("#?", prop::collection::vec("[a-z]{1,8}", 0..260)), 0..8),
            name in "[A-Z][a-z]{0,8}",
        ) {
            let body: String = paragraphs
                .iter()
                .map(|(hash, words)| format!("{hash}{}", words.join(" ")))
                .collect::<Vec<_>>()
                .join("\n\n");
            let parts = chunks(&texts(&name, "", &body));
            let mut seen: Vec<String> = Vec::new();
            for part in &parts {
                prop_assert!(part.text.starts_with(&name));
                prop_assert!(word_count(&part.passage) <= MAX_WORDS, "{} words", word_count(&part.passage));
                seen.extend(part.passage.split_whitespace().map(|w| w.trim_start_matches('#').to_string()));
            }
            let expected: Vec<String> = body
                .split_whitespace()
                .map(|w| w.trim_start_matches('#').to_string())
                .filter(|w| !w.is_empty())
                .collect();
            seen.retain(|w| !w.is_empty());
            prop_assert_eq!(seen, expected);
        }
    }
}
