//! Body edits: the five ways an update may change an entry's notes — append, prepend,
//! replace, add under a `## Section`, and find-and-replace a counted text.
//!
//! Every edit is checked before it changes anything, and no text of the old notes
//! disappears unless the edit names it: `append`, `prepend` and `section` only insert (the
//! old notes are kept byte for byte around the new text), `find_replace` changes exactly
//! the occurrences of its `find` text and only when they are as many as expected, and
//! `replace` names the whole of the notes.

use std::ops::Range;

use chrono::NaiveDate;
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// How a body edit changes the notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyEditMode {
    /// Add the content at the end, as a paragraph of its own.
    Append,
    /// Add the content at the start, as a paragraph of its own.
    Prepend,
    /// Replace the whole of the notes with the content.
    Replace,
    /// Add the content under `## {section}`, creating the section at the end when missing.
    Section,
    /// Replace each occurrence of `find` with the content, when there are exactly as many
    /// as expected.
    FindReplace,
}

impl BodyEditMode {
    /// The mode as callers name it (`append`, `find_replace`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            BodyEditMode::Append => "append",
            BodyEditMode::Prepend => "prepend",
            BodyEditMode::Replace => "replace",
            BodyEditMode::Section => "section",
            BodyEditMode::FindReplace => "find_replace",
        }
    }
}

/// A body edit as a caller gives it, before it is checked ([`BodyEdit::from_request`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyEditRequest {
    /// What to do.
    pub mode: BodyEditMode,
    /// The text to add, the new notes, or the replacement of `find`.
    pub content: String,
    /// The heading to add under (mode `section` only).
    pub section: Option<String>,
    /// The exact text to replace (mode `find_replace` only).
    pub find: Option<String>,
    /// How many times `find` must occur (mode `find_replace` only; default 1).
    pub expected_replacements: Option<u64>,
}

/// A checked change to an entry's notes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyEdit {
    /// Add this text at the end, as a paragraph of its own.
    Append(String),
    /// Add this text at the start, as a paragraph of its own.
    Prepend(String),
    /// Replace the notes with this text.
    Replace(String),
    /// Add `content` under the level-2 heading `heading`; a `Log` section gets the line
    /// `- {today}: {content}`.
    Section {
        /// The heading's text, like `Log` (matched ignoring case and extra spaces).
        heading: String,
        /// The text to add.
        content: String,
        /// The date of a `Log` line (the person's today).
        today: NaiveDate,
    },
    /// Replace every occurrence of `find` with `replace` when there are `expected` of them.
    FindReplace {
        /// The exact text to look for.
        find: String,
        /// What each occurrence becomes (may be empty: the text is removed).
        replace: String,
        /// How many occurrences there must be.
        expected: usize,
    },
}

/// Why a body edit was refused; nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyEditError {
    /// An edit that adds text was given none.
    #[error("body.content is empty: give the text to {0}")]
    EmptyContent(&'static str),
    /// Mode `section` without a section.
    #[error("body.section is required for mode section: give the heading to add under, like \"Log\"")]
    MissingSection,
    /// A section given with its `#` marks.
    #[error("body.section must be the text of the heading without its '#' marks, like \"Log\"")]
    BadSection,
    /// Mode `find_replace` without a find text.
    #[error("body.find is required for mode find_replace: give the exact text to replace")]
    MissingFind,
    /// An argument another mode uses.
    #[error("body.{field} is only for mode {only_for}, not {mode}")]
    NotForMode {
        /// The argument given.
        field: &'static str,
        /// The mode that uses it.
        only_for: &'static str,
        /// The mode given.
        mode: &'static str,
    },
    /// Zero (or an impossible number of) expected replacements.
    #[error("body.expectedReplacements must be a whole number of at least 1, got {0}")]
    BadExpected(u64),
    /// The find text does not occur as often as expected.
    #[error(
        "the notes contain {find} {found} time{s}, not {expected} as expected, so nothing was changed: \
         give expectedReplacements: {found} to replace them all, or a longer find text that occurs exactly \
         where you mean",
        find = quoted(.find),
        s = if *.found == 1 { "" } else { "s" }
    )]
    CountMismatch {
        /// The text looked for.
        find: String,
        /// How many times it occurs.
        found: usize,
        /// How many times it was expected.
        expected: usize,
    },
}

/// `text` in quotes, cut to a readable length.
fn quoted(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() <= MAX {
        format!("{text:?}")
    } else {
        let cut: String = text.chars().take(MAX - 1).collect();
        format!("{:?}", format!("{cut}…"))
    }
}

impl BodyEdit {
    /// Checks a request: the arguments its mode needs are there, no argument of another
    /// mode is given, and text to add is not blank. `today` dates `Log` lines.
    pub fn from_request(request: BodyEditRequest, today: NaiveDate) -> Result<BodyEdit, BodyEditError> {
        let BodyEditRequest { mode, content, section, find, expected_replacements } = request;
        let not_for = |field: &'static str, only_for: BodyEditMode| BodyEditError::NotForMode {
            field,
            only_for: only_for.as_str(),
            mode: mode.as_str(),
        };
        if section.is_some() && mode != BodyEditMode::Section {
            return Err(not_for("section", BodyEditMode::Section));
        }
        if mode != BodyEditMode::FindReplace {
            if find.is_some() {
                return Err(not_for("find", BodyEditMode::FindReplace));
            }
            if expected_replacements.is_some() {
                return Err(not_for("expectedReplacements", BodyEditMode::FindReplace));
            }
        }
        let adding = |content: String| {
            if content.trim().is_empty() {
                Err(BodyEditError::EmptyContent(mode.as_str()))
            } else {
                Ok(content)
            }
        };
        match mode {
            BodyEditMode::Append => Ok(BodyEdit::Append(adding(content)?)),
            BodyEditMode::Prepend => Ok(BodyEdit::Prepend(adding(content)?)),
            BodyEditMode::Replace => Ok(BodyEdit::Replace(content)),
            BodyEditMode::Section => {
                let heading = section.ok_or(BodyEditError::MissingSection)?;
                let heading = heading.split_whitespace().collect::<Vec<_>>().join(" ");
                if heading.is_empty() {
                    return Err(BodyEditError::MissingSection);
                }
                if heading.starts_with('#') {
                    return Err(BodyEditError::BadSection);
                }
                Ok(BodyEdit::Section { heading, content: adding(content)?, today })
            }
            BodyEditMode::FindReplace => {
                let find = find.filter(|f| !f.is_empty()).ok_or(BodyEditError::MissingFind)?;
                let expected = match expected_replacements {
                    None => 1,
                    Some(n) => {
                        usize::try_from(n).ok().filter(|n| *n >= 1).ok_or(BodyEditError::BadExpected(n))?
                    }
                };
                Ok(BodyEdit::FindReplace { find, replace: content, expected })
            }
        }
    }

    /// The mode of this edit.
    pub fn mode(&self) -> BodyEditMode {
        match self {
            BodyEdit::Append(_) => BodyEditMode::Append,
            BodyEdit::Prepend(_) => BodyEditMode::Prepend,
            BodyEdit::Replace(_) => BodyEditMode::Replace,
            BodyEdit::Section { .. } => BodyEditMode::Section,
            BodyEdit::FindReplace { .. } => BodyEditMode::FindReplace,
        }
    }

    /// The notes `body` after this edit, or why it cannot be made (then nothing changes).
    pub fn apply(&self, body: &str) -> Result<String, BodyEditError> {
        let nl = newline_of(body);
        match self {
            BodyEdit::Append(content) => {
                Ok(format!("{body}{}{}", paragraph_break_after(body, nl), block(content, nl)))
            }
            BodyEdit::Prepend(content) => {
                let gap = if body.trim().is_empty() || body.starts_with(nl) { "" } else { nl };
                Ok(format!("{}{gap}{body}", block(content, nl)))
            }
            BodyEdit::Replace(content) => Ok(content.clone()),
            BodyEdit::Section { heading, content, today } => {
                let line = section_line(heading, content, *today);
                Ok(add_to_section(body, heading, &line, nl))
            }
            BodyEdit::FindReplace { find, replace, expected } => {
                let found = body.matches(find.as_str()).count();
                if found != *expected {
                    return Err(BodyEditError::CountMismatch {
                        find: find.clone(),
                        found,
                        expected: *expected,
                    });
                }
                Ok(body.replace(find.as_str(), replace))
            }
        }
    }
}

/// The line ending the notes use: `\r\n` when they have any, else `\n`.
fn newline_of(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

/// `content` without trailing line breaks, its line breaks written as `nl`, ending in `nl`.
fn block(content: &str, nl: &str) -> String {
    let trimmed = content.trim_end_matches(['\n', '\r']);
    let mut out: String =
        trimmed.split('\n').map(|line| line.strip_suffix('\r').unwrap_or(line)).collect::<Vec<_>>().join(nl);
    out.push_str(nl);
    out
}

/// What goes between `body` and a new paragraph after it: nothing after blank notes or a
/// blank line, else enough line breaks to leave one blank line.
fn paragraph_break_after<'a>(body: &str, nl: &'a str) -> &'a str {
    if body.trim().is_empty() || body.ends_with(&format!("{nl}{nl}")) || body.ends_with("\n\n") {
        ""
    } else if body.ends_with('\n') {
        nl
    } else if nl == "\r\n" {
        "\r\n\r\n"
    } else {
        "\n\n"
    }
}

/// Whether `heading` names a log, whose lines are dated.
fn is_log(heading: &str) -> bool {
    heading.eq_ignore_ascii_case("log")
}

/// The text a section edit adds: the content, or in a log `- {today}: {content}` with
/// further lines indented under the item.
fn section_line(heading: &str, content: &str, today: NaiveDate) -> String {
    let content = content.trim_matches(['\n', '\r']);
    if !is_log(heading) {
        return content.to_string();
    }
    let content = content.trim_start();
    let content = content.strip_prefix("- ").unwrap_or(content);
    let mut lines = content.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let mut out = format!("- {}: {}", today.format("%Y-%m-%d"), lines.next().unwrap_or_default());
    for line in lines {
        out.push('\n');
        if !line.trim().is_empty() {
            out.push_str("  ");
        }
        out.push_str(line);
    }
    out
}

/// Whether a line is a Markdown list item.
fn is_list_item(line: &str) -> bool {
    let line = line.trim_start();
    let bullet = ["- ", "* ", "+ "].iter().any(|b| line.starts_with(b)) || matches!(line, "-" | "*" | "+");
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    let ordered = digits > 0 && matches!(line[digits..].chars().next(), Some('.' | ')'));
    bullet || ordered
}

/// `body` with `line` added at the end of its first level-2 section titled `heading`, or
/// with that section created at the end.
fn add_to_section(body: &str, heading: &str, line: &str, nl: &str) -> String {
    let added = block(line, nl);
    let Some(section) = find_section(body, heading) else {
        let title = format!("## {heading}{nl}{nl}");
        return format!("{body}{}{title}{added}", paragraph_break_after(body, nl));
    };
    let region = &body[section.clone()];
    let filled = region.trim_end().len();
    if filled == 0 {
        // An empty section: the text goes one blank line below the heading.
        let lead = if body[..section.start].ends_with('\n') { nl.to_string() } else { format!("{nl}{nl}") };
        return splice_at(body, section.start, &format!("{lead}{added}"));
    }
    // After the section's last line that is not blank; a list item joins a list directly,
    // anything else is a paragraph of its own.
    let last_line = region[..filled].rsplit('\n').next().unwrap_or_default();
    let gap = if is_list_item(last_line) && is_list_item(line) { "" } else { nl };
    match region[filled..].find('\n') {
        Some(i) => splice_at(body, section.start + filled + i + 1, &format!("{gap}{added}")),
        None => splice_at(body, section.end, &format!("{nl}{gap}{added}")),
    }
}

/// `text` with `insert` put at byte `at`.
fn splice_at(text: &str, at: usize, insert: &str) -> String {
    format!("{}{insert}{}", &text[..at], &text[at..])
}

/// The bytes of the first top-level `## {heading}` section after its heading line: up to
/// the next heading of level 1 or 2, or the end.
fn find_section(body: &str, heading: &str) -> Option<Range<usize>> {
    let headings = top_level_headings(body);
    let wanted = normalise(heading);
    let index = headings.iter().position(|h| h.level == HeadingLevel::H2 && normalise(&h.text) == wanted)?;
    let found = &headings[index];
    let start = match body[found.range.clone()].ends_with('\n') {
        true => found.range.end,
        false => body[found.range.end..].find('\n').map_or(body.len(), |i| found.range.end + i + 1),
    };
    let end = headings[index + 1..]
        .iter()
        .find(|h| h.level <= HeadingLevel::H2)
        .map_or(body.len(), |h| h.range.start.max(start));
    Some(start..end)
}

/// A heading of the notes (not inside a quote, list or code).
struct Heading {
    level: HeadingLevel,
    text: String,
    range: Range<usize>,
}

/// The headings outside block quotes, lists and footnotes, in order.
fn top_level_headings(body: &str) -> Vec<Heading> {
    let mut headings = Vec::new();
    let mut depth = 0usize;
    let mut open: Option<Heading> = None;
    for (event, range) in Parser::new_ext(body, Options::empty()).into_offset_iter() {
        match event {
            Event::Start(Tag::BlockQuote(_) | Tag::List(_) | Tag::FootnoteDefinition(_)) => depth += 1,
            Event::End(TagEnd::BlockQuote(_) | TagEnd::List(_) | TagEnd::FootnoteDefinition) => {
                depth = depth.saturating_sub(1);
            }
            Event::Start(Tag::Heading { level, .. }) if depth == 0 => {
                open = Some(Heading { level, text: String::new(), range });
            }
            Event::Text(text) | Event::Code(text) => {
                if let Some(heading) = open.as_mut() {
                    heading.text.push_str(&text);
                }
            }
            Event::End(TagEnd::Heading(_)) => headings.extend(open.take()),
            _ => {}
        }
    }
    headings
}

/// A heading's text for matching: spaces collapsed, case folded.
fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

#[cfg(test)]
mod tests;
