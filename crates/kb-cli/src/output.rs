//! What the commands print: the data as JSON (`--json`), or readable lines for a person.
//! The human renderers read the tools' `data` shapes (their output schemas) leniently: a
//! field that is missing prints as empty, never as a crash.

use std::io::Write;

use serde_json::Value;

use crate::failure::CliError;

/// Prints `value` as pretty JSON on stdout.
pub fn print_json(value: &Value) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// How a command prints its answer: text for a person, or (`--json`) the JSON data kb
/// answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Text for a person.
    Text,
    /// The JSON data, for programs.
    Json,
}

impl Format {
    /// The format the `--json` flag asks for.
    pub fn of(json_flag: bool) -> Format {
        if json_flag { Format::Json } else { Format::Text }
    }

    /// Whether this is JSON.
    pub fn is_json(self) -> bool {
        self == Format::Json
    }
}

/// Prints a command's answer: as JSON with `--json`, else as `human` renders that JSON.
pub fn show(
    format: Format,
    data: &impl serde::Serialize,
    human: impl Fn(&Value) -> String,
) -> Result<(), CliError> {
    // Through text, as kb serve answers: a number is written as its own type writes it
    // (an f32 score as 13.525, not as the f64 it widens to).
    let value: Value = serde_json::from_str(&serde_json::to_string(data)?)?;
    if format.is_json() { print_json(&value) } else { print_text(&human(&value)) }
}

/// Prints text on stdout (ending it with a newline when it has none).
pub fn print_text(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        writeln!(out)?;
    }
    Ok(())
}

/// The text of `field` in `value`, or "".
pub fn text<'a>(value: &'a Value, field: &str) -> &'a str {
    value.get(field).and_then(Value::as_str).unwrap_or("")
}

/// The lines of a list_entries answer: `path  name — summary`, then a count.
pub fn entry_list(data: &Value) -> String {
    let entries = data.get("entries").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    if entries.is_empty() {
        return "no entries\n".to_string();
    }
    let width = entries.iter().map(|e| text(e, "path").chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for entry in entries {
        let mut line = format!("{:<width$}  {}", text(entry, "path"), text(entry, "name"));
        let status = text(entry, "status");
        if !status.is_empty() {
            line.push_str(&format!(" [{status}]"));
        }
        let summary = text(entry, "summary");
        if !summary.is_empty() {
            line.push_str(&format!(" — {summary}"));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(&count_line(entries.len(), data, "entry", "entries"));
    out
}

/// The lines of a search_entries answer: each hit as `path:START-END` (the lines of its
/// passage, for an editor to open) with its name and snippet, then a count.
pub fn search_hits(data: &Value) -> String {
    let hits = data.get("entries").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let mut out = String::new();
    // Why meaning was not searched comes first, hits or none: "no matches" alone would
    // say nothing is about the subject.
    if let Some(notice) = data.get("notice").and_then(Value::as_str) {
        out.push_str(&format!("{notice}\n"));
    }
    if hits.is_empty() {
        out.push_str("no matches\n");
        return out;
    }
    if data.get("fuzzy").and_then(Value::as_bool).unwrap_or(false) {
        out.push_str("no exact matches; close spellings:\n");
    }
    // A hybrid hit's score is its place in two rankings fused, which tells a reader
    // nothing: only a score by words or by meaning is shown.
    let scored = text(data, "mode") != "hybrid";
    for hit in hits {
        let score = match hit.get("score").and_then(Value::as_f64) {
            Some(score) if scored => format!("  ({score:.2})"),
            _ => String::new(),
        };
        let how = match text(hit, "matchedBy") {
            "semantic" => "  by meaning",
            "partial" => "  some words",
            _ => "",
        };
        let at = passage_lines(hit);
        out.push_str(&format!("{}{at}  {}{score}{how}\n", text(hit, "path"), text(hit, "name")));
        let snippet = one_line(text(hit, "snippet"));
        if !snippet.is_empty() {
            out.push_str(&format!("    {snippet}\n"));
        }
    }
    out.push_str(&search_count(hits.len(), data));
    out
}

/// `:START` or `:START-END`, the lines of a hit's passage, or "" without one.
fn passage_lines(hit: &Value) -> String {
    let line = |key: &str| hit.pointer(&format!("/passage/{key}")).and_then(Value::as_u64);
    match (line("startLine"), line("endLine")) {
        (Some(start), Some(end)) if end > start => format!(":{start}-{end}"),
        (Some(start), _) => format!(":{start}"),
        _ => String::new(),
    }
}

/// The count under search hits: as [`count_line`], the entries holding only some of the
/// words when there are any, and those of the page found by meaning only.
fn search_count(shown: usize, data: &Value) -> String {
    let partial = data.get("partialTotal").and_then(Value::as_u64).unwrap_or(0) as usize;
    let meaning = data.get("semanticHits").and_then(Value::as_u64).unwrap_or(0) as usize;
    if partial == 0 && meaning == 0 {
        return count_line(shown, data, "match", "matches");
    }
    // In semantic mode every hit is by meaning, and `total` counts them, not words.
    let total = if text(data, "mode") == "semantic" {
        0
    } else {
        data.get("total").and_then(Value::as_u64).unwrap_or(0) as usize
    };
    let noun = |n: usize| if n == 1 { "match" } else { "matches" };
    let mut counts = Vec::new();
    if partial > 0 {
        counts.push(format!("{total} {} with every word, {partial} with some", noun(total)));
    } else if total > 0 {
        counts.push(format!("{total} {} by words", noun(total)));
    }
    if meaning > 0 {
        let more = if counts.is_empty() { noun(meaning) } else { "more" };
        counts.push(format!("{meaning} {more} by meaning"));
    }
    let counts = counts.join(", ");
    if shown < total + partial + meaning {
        format!("{shown} shown: {counts}\n")
    } else {
        format!("{counts}\n")
    }
}

/// A get_entry answer: the name, the path, the fields, then the body.
pub fn entry(data: &Value) -> String {
    entry_with(data, |body| format!("{body}\n"))
}

/// A get_entry answer for a terminal that takes colour: as [`entry`], with the body's
/// markdown rendered.
pub fn styled_entry(data: &Value) -> String {
    entry_with(data, crate::terminal::markdown)
}

/// A get_entry answer with the body (trimmed at its end) shown by `body`; one asked for
/// lines as [`entry_lines`].
fn entry_with(data: &Value, body: impl Fn(&str) -> String) -> String {
    if data.get("lines").is_some_and(Value::is_object) {
        return entry_lines(data);
    }
    let entry = data.get("entry").unwrap_or(data);
    let mut out = format!("{}\n{}\n", text(entry, "name"), text(entry, "path"));
    if let Some(fields) = entry.get("frontmatter").and_then(Value::as_object) {
        let width = fields.keys().filter(|k| *k != "name").map(|k| k.chars().count()).max().unwrap_or(0);
        if width > 0 {
            out.push('\n');
        }
        for (key, value) in fields.iter().filter(|(k, _)| *k != "name") {
            out.push_str(&format!(
                "{:<width$}  {}\n",
                format!("{key}:"),
                field_value(value),
                width = width + 1
            ));
        }
    }
    let content = text(entry, "content").trim_end();
    if !content.is_empty() {
        out.push('\n');
        out.push_str(&body(content));
    }
    out.push_str(&linked_notes("links to", data.get("links")));
    out.push_str(&linked_notes("linked from", data.get("backlinks")));
    out
}

/// A get_entry answer with `lines`: the name, `path:START-END` and how many lines the file
/// has, then each line after its number, as written.
pub fn entry_lines(data: &Value) -> String {
    let entry = data.get("entry").unwrap_or(data);
    let lines = data.get("lines").unwrap_or(data);
    let number = |key: &str| lines.get(key).and_then(Value::as_u64).unwrap_or(0);
    let (start, end, total) = (number("start"), number("end"), number("total"));
    let range = if end > start { format!("{start}-{end}") } else { start.to_string() };
    let noun = if total == 1 { "line" } else { "lines" };
    let mut out = format!("{}\n{}:{range} (of {total} {noun})\n\n", text(entry, "name"), text(entry, "path"));
    let width = end.to_string().len();
    for (number, line) in (start..).zip(text(lines, "text").split('\n')) {
        out.push_str(format!("{number:>width$}  {line}").trim_end());
        out.push('\n');
    }
    out
}

/// A get_entry answer's `links` or `backlinks` under `title`, a note a line with the line
/// that links (nothing when there are none).
fn linked_notes(title: &str, notes: Option<&Value>) -> String {
    let notes = notes.and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    if notes.is_empty() {
        return String::new();
    }
    let mut out = format!("\n{title}:\n");
    for note in notes {
        let path = match (note.get("path").and_then(Value::as_str), note.get("file").and_then(Value::as_str))
        {
            (Some(path), _) => path.to_string(),
            (None, Some(file)) => format!("{file} (file)"),
            (None, None) => "(missing)".to_string(),
        };
        out.push_str(&format!("  {path}  {} — {}\n", text(note, "name"), text(note, "line")));
    }
    out
}

/// A classify_and_capture answer in one or two lines.
pub fn captured(data: &Value) -> String {
    if data.get("merged").and_then(Value::as_bool) == Some(true) {
        return format!(
            "added to {} ({}): a dated line in its Log\n",
            text(data, "path"),
            text(data, "name")
        );
    }
    let confidence = data.get("confidence").and_then(Value::as_f64).unwrap_or(0.0);
    let mut out = format!(
        "filed {} ({}, confidence {confidence:.2}): {}\n",
        text(data, "path"),
        text(data, "category"),
        text(data, "name")
    );
    if let Some(attachment) = data.get("attachment").and_then(Value::as_str) {
        out.push_str(&format!("the file is kept as {attachment}\n"));
    }
    if data.get("clarificationNeeded").and_then(Value::as_bool).unwrap_or(false) {
        out.push_str("kb was not sure where this belongs: it waits in the inbox for you to move it\n");
    }
    out
}

/// A voice note filed: as a capture, and why it has no words when it has none.
pub fn voice_note(data: &Value) -> String {
    let mut out = captured(data);
    if let Some(problem) = data.get("problem").and_then(Value::as_str) {
        out.push_str(&format!("the recording was not transcribed: {problem}\n"));
    }
    out
}

/// An update_entry answer: `updated PATH: FIELD, FIELD` (`content` for the notes).
pub fn updated(data: &Value) -> String {
    let fields = data.get("updatedFields").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let fields: Vec<&str> = fields.iter().filter_map(Value::as_str).collect();
    format!("updated {}: {}\n", text(data, "path"), fields.join(", "))
}

/// A move_entry answer: `moved OLD to NEW (CATEGORY)`.
pub fn moved(data: &Value) -> String {
    format!("moved {} to {} ({})\n", text(data, "oldPath"), text(data, "newPath"), text(data, "category"))
}

/// A frontmatter value as a person reads it: text bare, lists comma-separated.
fn field_value(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(field_value).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// `text` safe to print on a terminal: control characters (an escape sequence, a carriage
/// return in a file name another device sent) written as `\u{1b}`, never sent as they are.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { c.escape_unicode().to_string() } else { c.to_string() })
        .collect()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn count_line(shown: usize, data: &Value, one: &str, many: &str) -> String {
    let total = data.get("total").and_then(Value::as_u64).map_or(shown, |t| t as usize);
    let noun = if total == 1 { one } else { many };
    if total > shown { format!("{shown} of {total} {many}\n") } else { format!("{total} {noun}\n") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hits_found_by_meaning_are_counted_as_such() {
        let hit = |path: &str, by: &str| json!({"path": path, "name": "N", "score": 0.05, "matchedBy": by});
        let only = json!({"entries": [hit("admin/dentist.md", "semantic")], "total": 0, "semanticHits": 1});
        assert!(search_hits(&only).ends_with("\n1 match by meaning\n"), "{}", search_hits(&only));
        let mixed = json!({
            "entries": [hit("admin/a.md", "keyword"), hit("admin/b.md", "semantic"), hit("admin/c.md", "semantic")],
            "total": 1, "semanticHits": 2
        });
        assert!(
            search_hits(&mixed).ends_with("\n1 match by words, 2 more by meaning\n"),
            "{}",
            search_hits(&mixed)
        );
    }

    #[test]
    fn control_characters_are_written_out_not_sent() {
        assert_eq!(printable("ideas/a\u{1b}[2Jb\r.md"), "ideas/a\\u{1b}[2Jb\\u{d}.md");
        assert_eq!(printable("Žluťoučký kůň.md"), "Žluťoučký kůň.md");
    }

    #[test]
    fn no_hits_still_say_why_meaning_was_not_searched() {
        let data = json!({"entries": [], "total": 0, "mode": "keyword",
            "notice": "search by meaning is unavailable: the embedding server did not answer"});
        assert_eq!(
            search_hits(&data),
            "search by meaning is unavailable: the embedding server did not answer\nno matches\n"
        );
        assert_eq!(search_hits(&json!({"entries": [], "total": 0})), "no matches\n");
    }

    #[test]
    fn semantic_hits_are_counted_once_by_meaning() {
        let hit = |path: &str| json!({"path": path, "name": "N", "score": 0.84, "matchedBy": "semantic"});
        let data = json!({"entries": [hit("admin/a.md"), hit("admin/b.md")], "total": 2, "semanticHits": 2,
            "mode": "semantic"});
        assert!(search_hits(&data).ends_with("\n2 matches by meaning\n"), "{}", search_hits(&data));
    }

    #[test]
    fn a_hybrid_hit_shows_no_fused_score_and_a_keyword_hit_its_own() {
        let hit =
            json!({"path": "admin/dentist.md", "name": "Dentist", "score": 0.045, "matchedBy": "semantic"});
        let hybrid = json!({"entries": [hit], "total": 0, "semanticHits": 1, "mode": "hybrid"});
        assert!(
            search_hits(&hybrid).starts_with("admin/dentist.md  Dentist  by meaning\n"),
            "{}",
            search_hits(&hybrid)
        );
        let keyword = json!({"entries": [{"path": "admin/a.md", "name": "A", "score": 3.25, "matchedBy": "keyword"}],
            "total": 1, "mode": "keyword"});
        assert!(search_hits(&keyword).starts_with("admin/a.md  A  (3.25)\n"), "{}", search_hits(&keyword));
    }

    #[test]
    fn search_hits_say_which_hold_only_some_words_and_count_them() {
        let data = json!({"entries": [
            {"path": "admin/passport.md", "name": "Passport", "score": 3.1, "matchedBy": "keyword", "snippet": "renew"},
            {"path": "admin/visa.md", "name": "Visa", "score": 1.2, "matchedBy": "partial", "snippet": "trip"}
        ], "total": 1, "partialTotal": 4});
        let text = search_hits(&data);
        assert!(text.contains("admin/passport.md  Passport  (3.10)\n"), "{text}");
        assert!(text.contains("admin/visa.md  Visa  (1.20)  some words\n"), "{text}");
        assert!(text.ends_with("2 shown: 1 match with every word, 4 with some\n"), "{text}");
    }

    #[test]
    fn lists_show_path_name_status_and_summary() {
        let data = json!({"entries": [
            {"path": "projects/a.md", "name": "A", "status": "active", "summary": "do it"},
            {"path": "ideas/bb.md", "name": "B", "summary": ""}
        ], "total": 3});
        let text = entry_list(&data);
        assert!(text.contains("projects/a.md  A [active] — do it"), "{text}");
        assert!(text.contains("ideas/bb.md    B\n"), "{text}");
        assert!(text.ends_with("2 of 3 entries\n"), "{text}");
    }

    #[test]
    fn odd_shapes_print_without_failing() {
        assert_eq!(entry_list(&json!(null)), "no entries\n");
        assert_eq!(search_hits(&json!({"entries": "x"})), "no matches\n");
        assert!(entry(&json!({"entry": {"frontmatter": [1]}})).starts_with('\n'));
        assert!(captured(&json!({})).starts_with("filed"));
        assert_eq!(updated(&json!({"updatedFields": [1]})), "updated : \n");
        assert_eq!(moved(&json!([])), "moved  to  ()\n");
    }

    #[test]
    fn changes_say_what_changed() {
        let update = json!({"path": "projects/a.md", "updatedFields": ["status", "content"]});
        assert_eq!(updated(&update), "updated projects/a.md: status, content\n");
        let moved_to = json!({"oldPath": "inbox/w.md", "newPath": "ideas/w.md", "category": "ideas"});
        assert_eq!(moved(&moved_to), "moved inbox/w.md to ideas/w.md (ideas)\n");
    }

    #[test]
    fn entries_show_fields_then_body() {
        let data = json!({"entry": {"path": "people/p.md", "name": "Priya",
            "frontmatter": {"name": "Priya", "tags": ["robotics", "meetup"], "confidence": 0.9},
            "content": "Met at the meetup.\n"}});
        let text = entry(&data);
        assert!(text.starts_with("Priya\npeople/p.md\n"), "{text}");
        assert!(text.contains("tags:        robotics, meetup\n"), "{text}");
        assert!(text.ends_with("\nMet at the meetup.\n"), "{text}");
    }

    #[test]
    fn lines_of_an_entry_are_numbered_and_hits_name_their_lines() {
        let data = json!({"entry": {"path": "ideas/kiln.md", "name": "Kiln", "frontmatter": {"name": "Kiln"}},
            "lines": {"start": 9, "end": 11, "total": 11, "text": "Glaze at 1240.\n\n  Cone 6."}});
        assert_eq!(
            entry(&data),
            "Kiln\nideas/kiln.md:9-11 (of 11 lines)\n\n 9  Glaze at 1240.\n10\n11    Cone 6.\n"
        );
        let one = json!({"entry": {"path": "a.md", "name": "A"}, "lines": {"start": 1, "end": 1, "total": 1, "text": "x"}});
        assert_eq!(entry(&one), "A\na.md:1 (of 1 line)\n\n1  x\n");
        let hits = json!({"entries": [
            {"path": "ideas/kiln.md", "name": "Kiln", "score": 2.0, "snippet": "**Glaze**",
             "passage": {"text": "Glaze", "startLine": 9, "endLine": 11}},
            {"path": "people/anna.md", "name": "Anna", "score": 1.0, "snippet": "x",
             "passage": {"text": "x", "startLine": 2, "endLine": 2}},
            {"path": "Journal/Day.md", "name": "Day", "score": 0.5, "snippet": "y"}], "total": 3});
        let text = search_hits(&hits);
        assert!(text.starts_with("ideas/kiln.md:9-11  Kiln  (2.00)\n"), "{text}");
        assert!(text.contains("\npeople/anna.md:2  Anna  (1.00)\n"), "{text}");
        assert!(text.contains("\nJournal/Day.md  Day  (0.50)\n"), "{text}");
    }

    #[test]
    fn an_entry_lists_what_it_links_to_and_what_links_to_it() {
        let data = json!({"entry": {"path": "projects/kiln.md", "name": "Kiln", "content": "Ask [[Priya]].\n"},
            "links": [{"path": "people/priya.md", "name": "Priya", "line": "Ask [[Priya]]."},
                      {"path": null, "name": "Glaze notes", "line": "See [[Glaze notes]]."},
                      {"path": null, "name": "kiln.png", "line": "![[kiln.png]]", "kind": "file", "file": "assets/kiln.png"}],
            "backlinks": [{"path": "ideas/glaze.md", "name": "Glaze", "line": "For the [[Kiln]]."}]});
        assert!(
            entry(&data).ends_with(
                "Ask [[Priya]].\n\nlinks to:\n  people/priya.md  Priya — Ask [[Priya]].\n  \
                 (missing)  Glaze notes — See [[Glaze notes]].\n  \
                 assets/kiln.png (file)  kiln.png — ![[kiln.png]]\n\nlinked from:\n  \
                 ideas/glaze.md  Glaze — For the [[Kiln]].\n"
            ),
            "{}",
            entry(&data)
        );
        let alone =
            json!({"entry": {"path": "a/b.md", "name": "B", "content": "x\n"}, "links": [], "backlinks": []});
        assert!(entry(&alone).ends_with("\nx\n"), "no section without links");
    }
}
