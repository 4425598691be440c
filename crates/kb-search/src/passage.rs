//! The passage of a hit: the part of the entry it matched best, as plain text, and the lines
//! of the entry's file holding it ([`kb_domain::Passage`]). Found from what the index
//! stores alone — the texts, and where they lie in the file
//! ([`crate::document::StoredLines`]) — so no file is read at search time.
//!
//! A match of words is in the paragraph of the notes (lines between blank lines; a heading
//! is a paragraph of its own) holding the most distinct query terms, cut to the
//! [`MAX_PASSAGE_LINES`] lines holding the most of them; or in a frontmatter value, all
//! its lines. The field is the one holding the most distinct terms among those whose
//! lines are known (a name taken from the file name has none). A match by meaning is in
//! the part of the entry nearest the query ([`crate::vectors::chunk`]): its fields and its
//! lines of the notes.

use std::ops::Range;

use kb_domain::{LineRange, Passage};

use crate::document::StoredHit;
use crate::schema::TextField;
use crate::snippet::{Hits, count_distinct};
use crate::vectors::chunk::Chunk;

/// The most lines a passage of the notes spans.
pub const MAX_PASSAGE_LINES: usize = 12;

/// The longest passage text, in characters: a longer one is cut around what matched.
pub const MAX_PASSAGE_CHARS: usize = 1000;

/// Characters kept before the first match when a passage's text is cut.
const LEAD_CHARS: usize = 200;

/// The passage of a hit found by its words, whose stored texts are `stored.texts` and the
/// query's terms found in `stored.texts[i]` are `hits[i]`.
pub(crate) fn by_words(stored: &StoredHit, hits: &[Hits]) -> Option<Passage> {
    let mut matched: Vec<(usize, usize)> = hits
        .iter()
        .map(|hits| count_distinct(hits))
        .enumerate()
        .filter(|(_, distinct)| *distinct > 0)
        .collect();
    if matched.is_empty() {
        // Nothing recognisable (a typo-tolerant hit on another form): the notes' opening,
        // as the snippet shows it.
        return body(stored).and_then(|body| in_notes(body, &[], stored));
    }
    // The most distinct terms first; the sort is stable, so ties keep the fields' order.
    matched.sort_by_key(|&(_, distinct)| std::cmp::Reverse(distinct));
    matched.into_iter().find_map(|(i, _)| {
        let (field, text) = stored.texts.get(i)?;
        let hits = hits.get(i)?;
        match field {
            TextField::Body => in_notes(text, hits, stored),
            other => {
                let text = text.trim_end();
                let around = hits.first().map_or(0, |(_, range)| range.start.min(text.len()));
                Some(Passage { text: cut(text, around), lines: stored.lines.field(*other)? })
            }
        }
    })
}

/// The passage of a hit found by meaning, whose nearest part is `part`.
pub(crate) fn of_part(stored: &StoredHit, part: &Chunk) -> Option<Passage> {
    let mut lines: Option<LineRange> = None;
    let mut texts: Vec<String> = Vec::new();
    let mut add = |range: LineRange, text: String| {
        lines = Some(lines.map_or(range, |lines| lines.union(range)));
        texts.push(text);
    };
    let fields = if part.fields.is_empty() && part.body_lines.is_none() {
        // A part holding the name alone.
        &[TextField::Name][..]
    } else {
        &part.fields[..]
    };
    for field in fields {
        if let (Some(range), Some(text)) = (stored.lines.field(*field), text_of(stored, *field)) {
            add(range, text.trim().to_string());
        }
    }
    if let (Some(wanted), Some(body)) = (&part.body_lines, body(stored)) {
        let spans = line_spans(body);
        let first = stored.lines.body_line(wanted.start);
        let last = stored.lines.body_line(wanted.end.saturating_sub(1));
        if let (Some(first), Some(last), Some(picked)) = (first, last, spans.get(wanted.clone())) {
            let text: Vec<&str> = picked.iter().map(|span| &body[span.clone()]).collect();
            if let Some(range) = LineRange::new(first, last) {
                add(range, text.join("\n"));
            }
        }
    }
    Some(Passage { text: cut(&texts.join("\n"), 0), lines: lines? })
}

/// The stored text of `field`.
fn text_of(stored: &StoredHit, field: TextField) -> Option<&str> {
    stored.texts.iter().find(|(f, _)| *f == field).map(|(_, text)| text.as_str())
}

/// The stored notes, when there are any.
fn body(stored: &StoredHit) -> Option<&str> {
    text_of(stored, TextField::Body).filter(|body| !body.trim().is_empty())
}

/// The passage of the notes `body` holding the most distinct terms of `hits` (their first
/// paragraph when `hits` is empty).
fn in_notes(body: &str, hits: &[(usize, Range<usize>)], stored: &StoredHit) -> Option<Passage> {
    let spans = line_spans(body);
    let blocks = paragraphs(body, &spans);
    let within = |lines: &Range<usize>| -> Hits {
        let (Some(first), Some(last)) = (spans.get(lines.start), spans.get(lines.end.saturating_sub(1)))
        else {
            return Vec::new();
        };
        hits.iter()
            .filter(|(_, range)| range.start >= first.start && range.end <= last.end)
            .cloned()
            .collect()
    };
    let block = richest(blocks.into_iter(), &within)?;
    let window = if block.len() > MAX_PASSAGE_LINES {
        let windows =
            (block.start..=block.end - MAX_PASSAGE_LINES).map(|start| start..start + MAX_PASSAGE_LINES);
        richest(windows, &within)?
    } else {
        block
    };
    let lines =
        LineRange::new(stored.lines.body_line(window.start)?, stored.lines.body_line(window.end - 1)?)?;
    // The text: the lines joined by `\n`; where the first match in it falls.
    let mut text = String::new();
    let mut around = 0;
    let first_hit = within(&window).first().map(|(_, range)| range.start);
    for span in spans.get(window)? {
        if !text.is_empty() {
            text.push('\n');
        }
        if let Some(hit) = first_hit.filter(|hit| span.contains(hit) || *hit == span.end) {
            around = text.len() + (hit - span.start);
        }
        text.push_str(&body[span.clone()]);
    }
    Some(Passage { text: cut(&text, around), lines })
}

/// Of `candidates` (ranges of lines), the one holding the most distinct terms as `within`
/// finds them (the first of equals; the first of all when none holds any).
fn richest(
    candidates: impl Iterator<Item = Range<usize>>,
    within: &impl Fn(&Range<usize>) -> Hits,
) -> Option<Range<usize>> {
    let mut best: Option<(usize, Range<usize>)> = None;
    for candidate in candidates {
        let distinct = count_distinct(&within(&candidate));
        if best.as_ref().is_none_or(|(most, _)| distinct > *most) {
            best = Some((distinct, candidate));
        }
    }
    best.map(|(_, range)| range)
}

/// The byte range of each line of `text` (as `str::lines` splits it), without its line
/// end.
fn line_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut start = 0;
    for piece in text.split_inclusive('\n') {
        let content = piece.strip_suffix('\n').unwrap_or(piece);
        let content = content.strip_suffix('\r').unwrap_or(content);
        spans.push(start..start + content.len());
        start += piece.len();
    }
    spans
}

/// The paragraphs of `text` whose lines are `spans`, as ranges of line numbers: runs of
/// lines that are not blank, a heading (`# …`) on its own.
fn paragraphs(text: &str, spans: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut blocks = Vec::new();
    let mut current: Option<Range<usize>> = None;
    for (number, span) in spans.iter().enumerate() {
        let line = text[span.clone()].trim();
        if line.is_empty() {
            blocks.extend(current.take());
        } else if is_heading(line) {
            blocks.extend(current.take());
            blocks.push(number..number + 1);
        } else {
            current = Some(current.map_or(number..number + 1, |block| block.start..number + 1));
        }
    }
    blocks.extend(current);
    blocks
}

/// Whether a trimmed line is a Markdown heading: `#` to `######`, then a space or nothing.
fn is_heading(line: &str) -> bool {
    let hashes = line.bytes().take_while(|b| *b == b'#').count();
    (1..=6).contains(&hashes) && line[hashes..].chars().next().is_none_or(char::is_whitespace)
}

/// `text`, or when it is longer than [`MAX_PASSAGE_CHARS`] the part of it starting a little
/// before the byte offset `around`, cut between words, with `…` where it was cut.
fn cut(text: &str, around: usize) -> String {
    if text.chars().nth(MAX_PASSAGE_CHARS).is_none() {
        return text.to_string();
    }
    let around = floor_char_boundary(text, around.min(text.len()));
    let mut start =
        text[..around].char_indices().rev().nth(LEAD_CHARS.saturating_sub(1)).map_or(0, |(i, _)| i);
    if start > 0 {
        // Start after a space.
        start = text[start..around].find(char::is_whitespace).map_or(start, |i| start + i + 1);
    }
    let mut end = text[start..].char_indices().nth(MAX_PASSAGE_CHARS).map_or(text.len(), |(i, _)| start + i);
    if end < text.len()
        && let Some(space) = text[around..end].rfind(char::is_whitespace)
    {
        end = around + space;
    }
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.push_str(text[start..end].trim());
    if end < text.len() {
        out.push('…');
    }
    out
}

/// The largest char boundary of `text` at or before `index`.
fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while index > 0 && !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

#[cfg(test)]
mod tests;
