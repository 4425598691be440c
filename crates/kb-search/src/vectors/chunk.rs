//! How an entry is cut into the parts that are embedded: its name and fields with the
//! start of its notes, then the rest of the notes split at headings and paragraphs, each
//! part at most [`MAX_WORDS`] words and each carrying the entry's name, so that a part
//! means something on its own ("Anna — …"). Each part says which fields and which lines
//! of the notes it holds, so a hit found by meaning can name the lines of its passage.

use std::ops::Range;

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
    /// The frontmatter fields it holds (the first part's), in the order it holds them.
    pub fields: Vec<TextField>,
    /// The lines of the notes it holds, counted from 0 as `str::lines` counts the notes'
    /// lines, the end excluded; `None` when it holds none.
    pub body_lines: Option<Range<usize>>,
}

/// A paragraph or heading of the notes (or a cut of a long paragraph), with its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    /// Its text.
    text: String,
    /// The notes' lines it comes from (from 0, the end excluded).
    lines: Range<usize>,
}

/// The parts of an entry whose searchable texts are `texts` (in [`TextField::ALL`]
/// order; missing fields are empty). An entry with no text at all has no part.
pub fn chunks(texts: &[(TextField, String)]) -> Vec<Chunk> {
    let text = |field: TextField| texts.iter().find(|(f, _)| *f == field).map_or("", |(_, t)| t.trim());
    let name = text(TextField::Name);
    let mut head: Vec<String> = Vec::new();
    let mut head_fields = Vec::new();
    for field in [TextField::OneLiner, TextField::Tags, TextField::NextAction, TextField::Context] {
        let value = text(field);
        if !value.is_empty() {
            head_fields.push(field);
            head.push(value.to_string());
        }
    }
    let whole_body = texts.iter().find(|(f, _)| *f == TextField::Body).map_or("", |(_, t)| t.as_str());
    let body = whole_body.trim();
    // The lines the trim took off the start, for counting the notes' lines as written.
    let skipped_lines = whole_body[..whole_body.len() - whole_body.trim_start().len()].matches('\n').count();
    // What was captured is usually in the notes already: only kept when it is not.
    let original = text(TextField::OriginalText);
    if !original.is_empty() && !body.contains(original) {
        head_fields.push(TextField::OriginalText);
        head.push(original.to_string());
    }
    let mut pieces = pieces(body, skipped_lines).into_iter().peekable();
    let mut parts = Vec::new();
    // The first part: the fields, then as much of the notes as fits.
    let mut first = Part { text: head.join("\n"), fields: head_fields, lines: None };
    let mut words = word_count(&first.text);
    while let Some(piece) = pieces.peek() {
        let piece_words = word_count(&piece.text);
        // A heading after some notes starts the next part, as further on.
        if (words > 0 && words + piece_words > MAX_WORDS)
            || (first.lines.is_some() && piece.text.starts_with('#'))
        {
            break;
        }
        words += piece_words;
        if let Some(piece) = pieces.next() {
            first.push(piece);
        }
    }
    if !first.text.is_empty() || !name.is_empty() {
        parts.push(first.into_chunk(name));
    }
    // The rest of the notes, packed up to the limit; a heading starts a new part.
    let mut current = Part::default();
    let mut current_words = 0;
    for piece in pieces {
        let piece_words = word_count(&piece.text);
        let heading = piece.text.starts_with('#');
        if !current.text.is_empty() && (heading || current_words + piece_words > MAX_WORDS) {
            parts.push(std::mem::take(&mut current).into_chunk(name));
            current_words = 0;
        }
        current.push(piece);
        current_words += piece_words;
    }
    if !current.text.is_empty() {
        parts.push(current.into_chunk(name));
    }
    parts
}

/// A part being put together.
#[derive(Debug, Default)]
struct Part {
    /// Its own words so far.
    text: String,
    /// The fields it holds.
    fields: Vec<TextField>,
    /// The lines of the notes it holds.
    lines: Option<Range<usize>>,
}

impl Part {
    /// Adds a piece of the notes on a line of its own.
    fn push(&mut self, piece: Piece) {
        push_line(&mut self.text, &piece.text);
        self.lines = Some(match self.lines.take() {
            Some(lines) => lines.start..piece.lines.end,
            None => piece.lines,
        });
    }

    /// The part of the entry named `name` (its field: the first it holds, the notes, or
    /// the name).
    fn into_chunk(self, name: &str) -> Chunk {
        let field = match (self.fields.first(), &self.lines) {
            (Some(field), _) => *field,
            (None, Some(_)) => TextField::Body,
            (None, None) => TextField::Name,
        };
        let text = match (name.is_empty(), self.text.is_empty()) {
            (true, _) => self.text.clone(),
            (false, true) => name.to_string(),
            (false, false) => format!("{name}\n{}", self.text),
        };
        Chunk { text, field, passage: self.text, fields: self.fields, body_lines: self.lines }
    }
}

/// Appends `piece` to `text` on a line of its own.
fn push_line(text: &mut String, piece: &str) {
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(piece);
}

/// The notes as paragraphs and headings, each at most [`MAX_WORDS`] words (a longer
/// paragraph is cut between words). `body`'s first line is the notes' line `first_line`.
fn pieces(body: &str, first_line: usize) -> Vec<Piece> {
    let mut pieces = Vec::new();
    // The paragraph's lines, each with its number.
    let mut paragraph: Vec<(usize, &str)> = Vec::new();
    let flush = |paragraph: &mut Vec<(usize, &str)>, pieces: &mut Vec<Piece>| {
        let (Some((first, _)), Some((last, _))) = (paragraph.first(), paragraph.last()) else { return };
        let lines = *first..*last + 1;
        let text = paragraph.iter().map(|(_, line)| *line).collect::<Vec<_>>().join("\n");
        let words: Vec<(usize, &str)> =
            paragraph.iter().flat_map(|(n, line)| line.split_whitespace().map(move |w| (*n, w))).collect();
        paragraph.clear();
        if words.len() <= MAX_WORDS {
            pieces.push(Piece { text, lines });
        } else {
            pieces.extend(words.chunks(MAX_WORDS).map(|cut| Piece {
                text: cut.iter().map(|(_, w)| *w).collect::<Vec<_>>().join(" "),
                lines: cut.first().map_or(0, |(n, _)| *n)..cut.last().map_or(0, |(n, _)| *n + 1),
            }));
        }
    };
    for (number, line) in (first_line..).zip(body.lines()) {
        let line = line.trim_end();
        if line.trim().is_empty() {
            flush(&mut paragraph, &mut pieces);
        } else if line.trim_start().starts_with('#') {
            flush(&mut paragraph, &mut pieces);
            paragraph.push((number, line.trim_start()));
        } else {
            paragraph.push((number, line));
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
    fn parts_know_their_fields_and_the_lines_of_the_notes() {
        let parts =
            chunks(&texts("Trip", "Lyon in May", "\nIntro line\n  and more\n\n# Travel\nFlights booked.\n"));
        assert_eq!(parts.len(), 2, "{parts:#?}");
        assert_eq!(parts[0].fields, [TextField::OneLiner]);
        assert_eq!(parts[0].body_lines, Some(1..3));
        assert_eq!(parts[1].fields, []);
        assert_eq!(parts[1].body_lines, Some(4..6));
        let long = (0..250).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
        let parts = chunks(&texts("Long", "", &format!("{long}\nlast words\n")));
        assert_eq!(parts.iter().map(|p| p.body_lines.clone()).collect::<Vec<_>>(), [Some(0..1), Some(0..2)]);
        assert_eq!(chunks(&texts("Priya", "", ""))[0].body_lines, None);
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
