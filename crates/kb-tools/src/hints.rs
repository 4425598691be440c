//! Category hints in a capture: `[project]`, `[idea]`, `[admin]`, `[person:Name]` (also
//! `[projects]`, `[ideas]`, `[people]`, `[person]`, any case), given in the `hints`
//! argument (brackets optional there) or inline in the text, where they are removed.
//! Wikilinks (`[[like this]]`) and other bracketed text are left alone.

use kb_domain::Category;

/// A hint: the category it fixes and, for a person, their name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// The category.
    pub category: Category,
    /// The person's name from `[person:Name]`.
    pub person: Option<String>,
}

/// A capture's text with its hints taken out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HintedText {
    /// The text without inline hints, trimmed.
    pub text: String,
    /// The first hint found (the `hints` argument before the text).
    pub hint: Option<Hint>,
}

/// Reads one hint's inside (`project`, `person:Sarah`), if it is one.
pub fn parse_hint(inner: &str) -> Option<Hint> {
    let (key, value) = match inner.split_once(':') {
        Some((k, v)) => (k, Some(v.trim()).filter(|v| !v.is_empty())),
        None => (inner, None),
    };
    let category = match key.trim().to_lowercase().as_str() {
        "project" | "projects" => Category::Projects,
        "idea" | "ideas" => Category::Ideas,
        "admin" => Category::Admin,
        "person" | "people" => Category::People,
        _ => return None,
    };
    let person = match category {
        Category::People => value.map(str::to_string),
        _ if value.is_some() => return None,
        _ => None,
    };
    Some(Hint { category, person })
}

/// Finds hints in the `hints` argument and in the text; removes the text's.
pub fn parse_hints(text: &str, hints: Option<&str>) -> HintedText {
    let from_argument = hints.and_then(|h| {
        let (_, found) = strip_hints(h);
        found.into_iter().next().or_else(|| parse_hint(h.trim()))
    });
    let (stripped, found) = strip_hints(text);
    HintedText { text: stripped, hint: from_argument.or_else(|| found.into_iter().next()) }
}

/// The text without its `[hint]` tokens, and the hints in order.
fn strip_hints(text: &str) -> (String, Vec<Hint>) {
    let mut out = String::with_capacity(text.len());
    let mut hints = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let close = after.find(']');
        let is_wikilink = after.starts_with('[') || out.ends_with('[') || rest[..open].ends_with('[');
        match close {
            Some(close) if !is_wikilink && !after[..close].contains('[') => {
                let inner = &after[..close];
                let following = &after[close + 1..];
                match parse_hint(inner).filter(|_| !following.starts_with(']')) {
                    Some(hint) => {
                        hints.push(hint);
                        out.push_str(&rest[..open]);
                    }
                    None => out.push_str(&rest[..open + 1 + close + 1]),
                }
                rest = following;
            }
            _ => {
                // Not a hint: keep the bracket (and a wikilink's whole opening) as written.
                let keep = if after.starts_with('[') { open + 2 } else { open + 1 };
                out.push_str(&rest[..keep]);
                rest = &rest[keep..];
            }
        }
    }
    out.push_str(rest);
    if hints.is_empty() {
        return (text.trim().to_string(), hints);
    }
    let text = out.split(' ').filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ");
    (text.trim().to_string(), hints)
}

/// A short name made from the text, when no classifier named the entry.
pub fn name_from_text(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default();
    let mut name = String::new();
    for word in line.split_whitespace().take(8) {
        if name.chars().count() + word.chars().count() + 1 > 60 {
            break;
        }
        if !name.is_empty() {
            name.push(' ');
        }
        name.push_str(word);
    }
    let name = name.trim_end_matches(|c: char| c.is_ascii_punctuation() && c != ')').to_string();
    if name.is_empty() { "Untitled capture".to_string() } else { name }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_in_text_and_argument() {
        let h = parse_hints("[Project] build a shed", None);
        assert_eq!(h.text, "build a shed");
        assert_eq!(h.hint, Some(Hint { category: Category::Projects, person: None }));
        let h = parse_hints("met at the conf [person:Sarah Lee] likes climbing", None);
        assert_eq!(h.text, "met at the conf likes climbing");
        assert_eq!(h.hint, Some(Hint { category: Category::People, person: Some("Sarah Lee".into()) }));
        for given in ["[ideas]", "idea", "IDEAS", " [idea] "] {
            let h = parse_hints("[admin] x", Some(given));
            assert_eq!(h.hint.map(|h| h.category), Some(Category::Ideas), "{given}");
            assert_eq!(h.text, "x");
        }
        assert_eq!(parse_hints("x", Some("[people]")).hint.map(|h| h.category), Some(Category::People));
    }

    #[test]
    fn other_brackets_are_kept() {
        for text in
            ["see [[Project]] notes", "a [note] here", "odd [ bracket", "[[ideas]]", "x [project:y] z"]
        {
            let h = parse_hints(text, None);
            assert_eq!(h.hint, None, "{text}");
            assert_eq!(h.text, text, "{text}");
        }
        assert_eq!(parse_hints("x", Some("soon")).hint, None);
    }

    #[test]
    fn names_from_text() {
        assert_eq!(name_from_text("Renew passport by Dec 15."), "Renew passport by Dec 15");
        assert_eq!(name_from_text("  \n"), "Untitled capture");
        assert!(name_from_text(&"word ".repeat(40)).chars().count() <= 60);
    }
}
