//! The answer to a question of the notes ("what did Priya say about the API spec?", "when is
//! the passport due?") from search_entries' hits: the best passages, each quoted with its
//! citation `[path:line]` or `[path:start-end]`, the lines being the file's own. The offline
//! model does not compose an answer: it shows where the answer is.

use kb_domain::ChatCompletion;
use serde_json::Value;

/// How many passages an answer quotes at most.
const MAX_PASSAGES: usize = 3;
/// How many characters of a passage are quoted at most (then "…").
const MAX_QUOTE_CHARS: usize = 280;

/// The answer to a question from search_entries' `data`.
pub fn answer(data: &Value) -> String {
    let hits: &[Value] = data.get("entries").and_then(Value::as_array).map_or(&[], Vec::as_slice);
    if hits.is_empty() {
        return "Nothing in your notes answers that.".to_string();
    }
    let quoted: Vec<String> = hits.iter().take(MAX_PASSAGES).filter_map(quote).collect();
    if quoted.is_empty() {
        return "Nothing in your notes answers that.".to_string();
    }
    // Hits holding only some of the question's words may not answer it: say so.
    let every_word = data.get("total").and_then(Value::as_u64).unwrap_or(0) > 0
        || hits.iter().any(|h| h.get("matchedBy").and_then(Value::as_str) != Some("partial"));
    let head = match (every_word, quoted.len()) {
        (false, _) => "No note holds all of that; the nearest:",
        (true, 1) => "From your notes:",
        (true, _) => "From your notes, best first:",
    };
    let mut lines = vec![head.to_string()];
    lines.extend(quoted);
    lines.join("\n")
}

/// The lines of an entry a question reads at most.
const READ_LINES: &str = "1-200";

/// Makes a get_entry call of `next` (a question about one entry: "when is the passport
/// due?") ask for the entry's lines, which the answer quotes with their citation.
pub fn read_lines(next: &mut ChatCompletion) {
    for call in next.tool_calls.iter_mut().filter(|call| call.name == "get_entry") {
        if let Ok(Value::Object(mut args)) = serde_json::from_str::<Value>(&call.arguments) {
            args.entry("lines").or_insert_with(|| Value::from(READ_LINES));
            call.arguments = Value::Object(args).to_string();
        }
    }
}

/// The entry of get_entry's `data` holding `lines` (a question about one entry), with its
/// notes taken from those lines, and the citation of the lines; `None` without lines.
pub fn entry_with_lines(data: &Value) -> Option<(Value, String)> {
    let lines = data.get("lines")?;
    let mut entry = data.get("entry")?.clone();
    let path = entry.get("path").and_then(Value::as_str).filter(|p| !p.is_empty())?.to_string();
    let text = lines.get("text").and_then(Value::as_str).unwrap_or("");
    if let Some(fields) = entry.as_object_mut() {
        fields.insert("content".into(), Value::from(notes_of(text)));
    }
    let number = |key: &str| lines.get(key).and_then(Value::as_u64);
    let mut cite = citation(&path, number("start"), number("end"));
    // A long note is read in part: say how much.
    if let (Some(end), Some(total)) = (number("end"), number("total"))
        && total > end
    {
        cite.push_str(&format!(" (the first {end} of its {total} lines)"));
    }
    Some((entry, cite))
}

/// The notes of a file's `text`: what follows its frontmatter block, when it opens with one.
fn notes_of(text: &str) -> &str {
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else { return "" };
    if first.trim_end() != "---" {
        return text;
    }
    let mut at = first.len();
    for line in lines {
        at += line.len();
        if matches!(line.trim_end(), "---" | "...") {
            return &text[at..];
        }
    }
    text
}

/// One hit quoted: its name, its passage (or snippet) on one line, and its citation.
fn quote(hit: &Value) -> Option<String> {
    let path = hit.get("path").and_then(Value::as_str).filter(|p| !p.is_empty())?;
    let name = hit.get("name").and_then(Value::as_str).unwrap_or(path);
    let passage = hit.get("passage");
    let text = passage
        .and_then(|p| p.get("text"))
        .and_then(Value::as_str)
        .or_else(|| hit.get("snippet").and_then(Value::as_str))
        .unwrap_or("");
    let line = |key: &str| passage.and_then(|p| p.get(key)).and_then(Value::as_u64);
    let cite = citation(path, line("startLine"), line("endLine"));
    // The note's own words, brackets escaped so that nothing in them reads as a citation
    // of the answer (a note may hold `[path:3]` of its own).
    let text = one_line(&text.replace("**", "")).replace('[', "\\[").replace(']', "\\]");
    Some(if text.is_empty() { format!("- {name} {cite}") } else { format!("- {name}: “{text}” {cite}") })
}

/// The citation of `path` at lines `start..=end`: `[path:start]`, `[path:start-end]`, or
/// `[path]` without lines; a `]` in the path is written `%5D`.
pub fn citation(path: &str, start: Option<u64>, end: Option<u64>) -> String {
    let path = path.replace(']', "%5D");
    match (start, end) {
        (Some(start), Some(end)) if end > start => format!("[{path}:{start}-{end}]"),
        (Some(start), _) => format!("[{path}:{start}]"),
        _ => format!("[{path}]"),
    }
}

/// `text` on one line, its runs of white space made one space, cut to
/// [`MAX_QUOTE_CHARS`] characters.
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= MAX_QUOTE_CHARS {
        return joined;
    }
    let cut: String = joined.chars().take(MAX_QUOTE_CHARS).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    format!("{}…", cut.trim_end_matches([',', ';', ':', '.']))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_question_is_answered_with_passages_and_their_citations() {
        let data = json!({"entries": [
            {"path": "people/priya.md", "name": "Priya", "snippet": "the **API** spec",
             "passage": {"text": "Priya said the API spec\nneeds a review by Friday.", "startLine": 12, "endLine": 13}},
            {"path": "projects/api.md", "name": "API", "snippet": "Spec drafted",
             "passage": {"text": "Spec drafted.", "startLine": 4, "endLine": 4}},
            {"path": "ideas/odd].md", "name": "Odd", "snippet": "no passage here"}
        ], "total": 1, "partialTotal": 2});
        assert_eq!(
            answer(&data),
            "From your notes, best first:\n\
             - Priya: “Priya said the API spec needs a review by Friday.” [people/priya.md:12-13]\n\
             - API: “Spec drafted.” [projects/api.md:4]\n\
             - Odd: “no passage here” [ideas/odd%5D.md]"
        );
    }

    #[test]
    fn hits_holding_some_words_are_called_the_nearest_and_brackets_in_notes_are_not_citations() {
        let data = json!({"total": 0, "partialTotal": 1, "entries": [
            {"path": "ideas/z.md", "name": "Z", "matchedBy": "partial",
             "passage": {"text": "see [people/nobody.md:2] here", "startLine": 4, "endLine": 4}}]});
        assert_eq!(
            answer(&data),
            "No note holds all of that; the nearest:\n- Z: “see \\[people/nobody.md:2\\] here” [ideas/z.md:4]"
        );
    }

    #[test]
    fn no_hits_say_nothing_answers_and_long_passages_are_cut_at_a_word() {
        assert_eq!(answer(&json!({"entries": [], "total": 0})), "Nothing in your notes answers that.");
        let long = "word ".repeat(100);
        let data = json!({"entries": [{"path": "a/b.md", "name": "B",
            "passage": {"text": long, "startLine": 1, "endLine": 1}}]});
        let text = answer(&data);
        assert!(text.contains("word word…” [a/b.md:1]"), "{text}");
        assert!(text.chars().count() < MAX_QUOTE_CHARS + 60, "{text}");
    }
}
