//! Requests that tidy the vault: finding duplicates ("find duplicates", "any duplicates of
//! Priya?") and merging entries ("merge Priya into Priya Raman", "combine
//! people/sam.md and people/sam-lee.md").

use super::intent::{Intent, Subject};
use super::utterance::{Utterance, as_path, find_phrase};

/// Words that ask for duplicates.
const DUPLICATE_WORDS: &[&str] = &["duplicate", "duplicates", "dupes", "dupe", "doubles", "duplicated"];
/// Verbs that merge.
const MERGERS: &[&str] = &["merge", "combine", "unite", "consolidate"];

/// "find duplicates", "are there any duplicates of Priya", "show dupes named Sam".
pub fn duplicates(u: &Utterance) -> Option<Intent> {
    let core = u.core();
    let at = core.iter().position(|w| DUPLICATE_WORDS.contains(&w.as_str()))?;
    // "duplicate the bakery idea" is not a question about duplicates.
    if at == 0 && core.len() > 1 && !matches!(core[1].as_str(), "of" | "for" | "named" | "called") {
        return None;
    }
    let base = u.core_start();
    let after = at + 1;
    let name = match core.get(after).map(String::as_str) {
        Some("of" | "for" | "named" | "called" | "about") => Some(u.rest_from(base + after + 1)),
        _ => None,
    }
    .filter(|n| !n.is_empty());
    Some(Intent::FindDuplicates { name })
}

/// "merge A into B" (B is kept; A may be several, joined by "and"), "merge A with B" (A is
/// kept). "merge A and B" alone is not read: which one is kept would be a guess.
pub fn merge(u: &Utterance) -> Option<Intent> {
    let core = u.core();
    if !core.first().is_some_and(|w| MERGERS.contains(&w.as_str())) {
        return None;
    }
    let base = u.core_start();
    let part = |from: usize, to: usize| subject(u, base + from, base + to);
    let (target, sources) = match find_phrase(&core, "into") {
        Some(into) => (part(into + 1, core.len())?, split(&core, 1, into, &part)?),
        None => {
            let link = core.iter().position(|w| w == "with")?;
            (part(1, link)?, split(&core, link + 1, core.len(), &part)?)
        }
    };
    Some(Intent::Merge { target, sources })
}

/// The subjects of words `from..to`, split at "and" and commas (paths stand alone).
fn split(
    core: &[String],
    from: usize,
    to: usize,
    part: &dyn Fn(usize, usize) -> Option<Subject>,
) -> Option<Vec<Subject>> {
    let mut subjects = Vec::new();
    let mut start = from;
    let ands = core.get(from..to)?.iter().enumerate().filter(|(_, w)| *w == "and").map(|(k, _)| from + k);
    for end in ands.chain(std::iter::once(to)) {
        subjects.push(part(start, end)?);
        start = end + 1;
    }
    (!subjects.is_empty()).then_some(subjects)
}

/// Words `from..to` of the message as an entry: a path, or the words as said.
fn subject(u: &Utterance, from: usize, to: usize) -> Option<Subject> {
    let words = u.texts();
    let slice = words.get(from..to)?;
    if let [one] = slice
        && let Some(path) = as_path(one)
    {
        return Some(Subject::Path(path));
    }
    let said = u.span(from, to);
    let said = said.trim_end_matches(',').trim();
    (!said.is_empty()).then(|| Subject::Named(said.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(s: &str) -> Subject {
        Subject::Named(s.to_string())
    }

    #[test]
    fn duplicates_are_asked_for_in_several_ways() {
        let ask = |m: &str| duplicates(&Utterance::new(m));
        assert_eq!(ask("find duplicates"), Some(Intent::FindDuplicates { name: None }));
        assert_eq!(ask("are there any duplicates?"), Some(Intent::FindDuplicates { name: None }));
        assert_eq!(
            ask("any duplicates of Priya?"),
            Some(Intent::FindDuplicates { name: Some("Priya".into()) })
        );
        assert_eq!(ask("duplicate the bakery idea"), None);
        assert_eq!(ask("met Priya"), None);
    }

    #[test]
    fn merges_name_what_is_kept_and_what_goes() {
        let ask = |m: &str| merge(&Utterance::new(m));
        assert_eq!(
            ask("merge Priya into Priya Raman"),
            Some(Intent::Merge { target: named("Priya Raman"), sources: vec![named("Priya")] })
        );
        assert_eq!(
            ask("please merge people/sam.md and people/s-lee.md into people/sam-lee.md"),
            Some(Intent::Merge {
                target: Subject::Path("people/sam-lee.md".into()),
                sources: vec![Subject::Path("people/sam.md".into()), Subject::Path("people/s-lee.md".into())]
            })
        );
        assert_eq!(
            ask("combine the bakery idea with the book swap"),
            Some(Intent::Merge { target: named("the bakery idea"), sources: vec![named("the book swap")] })
        );
        assert_eq!(ask("merge"), None);
        assert_eq!(ask("merge into Priya"), None);
    }
}
