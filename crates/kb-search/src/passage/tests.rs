//! Tests of passages: which paragraph, which lines, how a long one is cut.

use kb_domain::{Entry, EntryLines, EntryPath};

use super::*;
use crate::document::{StoredLines, field_text};
use crate::query::Matching;
use crate::snippet::TermMatcher;

/// What the index stores for the file `text` at `path`.
fn stored(path: &str, text: &str) -> StoredHit {
    let entry = Entry::from_document(EntryPath::parse(path).unwrap(), text).unwrap();
    StoredHit {
        path: path.to_string(),
        texts: TextField::ALL.iter().map(|f| (*f, field_text(&entry, *f))).collect(),
        lines: StoredLines::of(&entry, &EntryLines::of(text)),
    }
}

/// The passage of `words` (exact terms) in `stored`.
fn found(stored: &StoredHit, words: &[&str]) -> Option<Passage> {
    let terms: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    let matcher = TermMatcher::new(&terms, Matching::Exact);
    let hits: Vec<Hits> = stored.texts.iter().map(|(_, text)| matcher.hits(text)).collect();
    by_words(stored, &hits)
}

#[test]
fn the_paragraph_with_the_most_terms_and_its_lines() {
    let text = "---\nname: Trip\n---\n# Plan\n\nTrain to Lyon.\n\nHotel near the station,\nbooked for May.\n";
    let hit = found(&stored("projects/trip.md", text), &["hotel", "may"]).unwrap();
    assert_eq!(hit.text, "Hotel near the station,\nbooked for May.");
    assert_eq!((hit.lines.start(), hit.lines.end()), (8, 9));
    let heading = found(&stored("projects/trip.md", text), &["plan"]).unwrap();
    assert_eq!((heading.text.as_str(), heading.lines.start()), ("# Plan", 4));
    let name = found(&stored("projects/trip.md", text), &["trip"]).unwrap();
    assert_eq!((name.text.as_str(), name.lines.start(), name.lines.end()), ("Trip", 2, 2));
}

#[test]
fn a_name_from_the_file_name_has_no_lines_but_the_notes_do() {
    let plain = stored("Journal/Day one.md", "Walked by the river.\n");
    assert_eq!(found(&plain, &["day"]), None);
    let river = found(&plain, &["river"]).unwrap();
    assert_eq!((river.text.as_str(), river.lines.start()), ("Walked by the river.", 1));
}

#[test]
fn a_long_paragraph_is_narrowed_and_a_long_line_cut() {
    let mut body: Vec<String> = (0..30).map(|i| format!("line {i}")).collect();
    body[20] = "the needle is here".into();
    let text = format!("---\nname: Long\n---\n{}\n", body.join("\n"));
    let hit = found(&stored("ideas/long.md", &text), &["needle"]).unwrap();
    assert_eq!(hit.lines.end() - hit.lines.start() + 1, MAX_PASSAGE_LINES as u32);
    assert!(hit.lines.start() <= 24 && 24 <= hit.lines.end(), "{:?}", hit.lines);
    let long = format!("{} needle {}", "word ".repeat(400), "more ".repeat(400));
    let hit = found(&stored("ideas/long.md", &format!("{long}\n")), &["needle"]).unwrap();
    assert!(hit.text.starts_with('…') && hit.text.ends_with('…'), "{}", hit.text);
    assert!(hit.text.contains("needle") && hit.text.chars().count() <= MAX_PASSAGE_CHARS + 2);
    assert_eq!((hit.lines.start(), hit.lines.end()), (1, 1));
}

#[test]
fn parts_found_by_meaning_span_their_fields_and_notes() {
    let text = "---\r\nname: Anna\r\none_liner: My sister\r\nstatus: x\r\n---\r\nLives in Lyon.\r\n\r\n# Work\r\nHospital.\r\n";
    let stored = stored("people/anna.md", text);
    let parts = crate::vectors::chunk::chunks(&stored.texts);
    let first = of_part(&stored, &parts[0]).unwrap();
    assert_eq!(first.text, "My sister\nLives in Lyon.");
    assert_eq!((first.lines.start(), first.lines.end()), (3, 6));
    let work = of_part(&stored, &parts[1]).unwrap();
    assert_eq!((work.text.as_str(), work.lines.start(), work.lines.end()), ("# Work\nHospital.", 8, 9));
}

#[test]
fn cuts_and_headings() {
    assert_eq!(cut("short", 0), "short");
    assert!(is_heading("## Travel") && is_heading("#") && !is_heading("#tag") && !is_heading("####### x"));
    let text = "é".repeat(3000);
    assert!(cut(&text, 1).chars().count() <= MAX_PASSAGE_CHARS + 2);
}
