//! Requests that read the vault: a digest ("what's on my plate today?", "how did this week
//! go?"), a question about one entry ("what do I know about Priya?", "how's the cello project
//! going?"), one entry shown ("show projects/x.md", "open it"), a search ("find Priya") or a
//! list ("list my projects", "which projects are blocked?"). The digest asks are read in
//! `digests`.

use kb_domain::Category;
use kb_domain::category::{ADMIN_STATUSES, PROJECT_STATUSES};

use super::changes;
use super::dates::is_date_word;
use super::intent::{Intent, Subject};
use super::keywords::{STOPWORDS, category_word, status_word};
use super::utterance::{Utterance, find_phrase, starts_with};

mod digests;

pub use self::digests::digest;

/// Words that, before "about", only ask what there is ("what's there about", "is there
/// anything about").
const ASKING: &[&str] =
    &["s", "there", "you", "we", "know", "got", "else", "more", "much", "many", "list", "show"];

/// Ways of asking what the vault holds on someone or something, before its name.
const ABOUT_LEADS: &[&str] = &[
    "what do i know about",
    "what do i know on",
    "what do you know about",
    "what can you tell me about",
    "what have i got on",
    "what have i got about",
    "what have i on",
    "what do i have on",
    "what do i have about",
    "what do we have on",
    "what is there on",
    "what is there about",
    "do i have anything on",
    "do i have anything about",
    "do we have anything on",
    "have i got anything on",
    "anything on",
    "anything about",
    "everything about",
    "everything on",
    "everything i know about",
    "tell me about",
    "tell me more about",
    "tell me everything about",
    "remind me about",
    "remind me who",
    "remind me what",
    "who is",
    "who was",
    "who are",
    "info on",
    "info about",
    "details on",
    "details about",
    "what about",
    "fill me in on",
    "catch me up on",
    "bring me up to speed on",
    "update me on",
    "give me an update on",
    "what is the deal with",
    "what is the story with",
    "what is up with",
    "what is happening with",
    "what is going on with",
    "what is new with",
    "what is the latest on",
    "what is the latest with",
    "any updates on",
    "any update on",
    "any news on",
    "any news about",
    "how is it going with",
    "how are things with",
    "how are things going with",
    "where do things stand with",
    "where do things stand on",
    "where am i with",
    "where are we with",
    "where are we on",
    "where am i on",
    "how is",
    "how are",
    "when is",
];

/// Words that may close such a question without being part of the name ("who is Priya
/// again?", "how's the cello project going?", "when is the passport renewal due?").
const ABOUT_TAILS: &[&str] = &[
    "again",
    "is",
    "are",
    "was",
    "going",
    "doing",
    "coming",
    "along",
    "progressing",
    "due",
    "please",
    "now",
    "lately",
    "so",
    "far",
    "these",
    "days",
    "at",
];

/// "what do I know about Priya?", "tell me about the cello project", "who's Priya?": the entry
/// of that name, shown whole with its notes (the tool resolves the name; a name no entry has
/// becomes a search once the tool says so). A question that only names a category ("tell me
/// about my projects") is left to the list rules.
pub fn about(u: &Utterance) -> Option<Intent> {
    let core = u.core();
    let base = u.core_start();
    // "what's Priya's birthday?": the entry that holds the answer.
    if starts_with(&core, "what is")
        && let Some(owner) = core.iter().position(|w| w == "'s")
        && owner > 2
        && owner + 1 < core.len()
    {
        return Some(Intent::Get(Subject::Named(u.span(base + 2, base + owner))));
    }
    // "is the passport renewal done?": the entry, whose status answers it.
    if matches!(core.first().map(String::as_str), Some("is" | "are"))
        && core.len() > 2
        && core.last().is_some_and(|w| status_word(w).is_some())
        && !matches!(core[1].as_str(), "it" | "that" | "this" | "anything" | "everything" | "there")
    {
        return Some(Intent::Get(Subject::Named(u.span(base + 1, base + core.len() - 1))));
    }
    let lead = ABOUT_LEADS.iter().find(|p| starts_with(&core, p))?;
    let from = lead.split(' ').count();
    let mut to = core.len();
    while to > from && ABOUT_TAILS.contains(&core[to - 1].as_str()) {
        to -= 1;
    }
    let tails = core.len() - to;
    // "how is it going" is small talk; "how is the cello project" without "going" is not asked.
    if matches!(*lead, "how is" | "how are") && tails == 0 {
        return None;
    }
    let named = &core[from..to];
    let pronoun = |w: &String| {
        matches!(w.as_str(), "it" | "you" | "that" | "this" | "things" | "everything" | "i" | "we")
    };
    if named.is_empty() || named.iter().all(pronoun) {
        return None;
    }
    let only_category = named
        .iter()
        .all(|w| category_word(w).is_some() || matches!(w.as_str(), "my" | "the" | "all" | "our"));
    if only_category {
        return None;
    }
    let name = u.span(base + from, base + to);
    (!name.is_empty()).then(|| Intent::Get(Subject::Named(name)))
}

/// The words of a name worth searching for: without articles and words such as "project".
pub fn search_words(name: &str) -> String {
    let u = Utterance::new(name);
    let words = u.texts();
    let useful = |w: &String| {
        !STOPWORDS.contains(&w.as_str())
            && category_word(w).is_none()
            && w != "'s"
            && !matches!(w.as_str(), "thing" | "stuff" | "one")
    };
    let (Some(from), Some(to)) = (words.iter().position(useful), words.iter().rposition(useful)) else {
        return name.trim().to_string();
    };
    u.span(from, to + 1)
}

/// A request to show one entry.
pub fn get(u: &Utterance) -> Option<Intent> {
    if let Some(path) = u.paths().into_iter().next() {
        return Some(Intent::Get(Subject::Path(path)));
    }
    let core = u.core();
    if let Some(asked) = field_question(u) {
        return Some(asked);
    }
    let verbs = ["show me", "show", "open", "read", "view", "display", "fetch", "pull up", "bring up", "get"];
    let verb = verbs.iter().find(|p| starts_with(&core, p))?;
    let from = verb.split(' ').count();
    let (subject, end) = changes::scan_subject(&core, from)?;
    if subject == Subject::Recent {
        return (end == core.len()).then_some(Intent::Get(Subject::Recent));
    }
    named_entry(u, verb, from)
}

/// Fields a person asks the value of ("what's the due date of the passport renewal?").
const ASKED_FIELDS: &[&str] =
    &["due date", "deadline", "status", "next action", "next step", "context", "one liner", "tags"];

/// "what's the status of the garden shed?": the entry shown, which holds the answer.
fn field_question(u: &Utterance) -> Option<Intent> {
    let core = u.core();
    if !starts_with(&core, "what is") {
        return None;
    }
    let at = if core.get(2).is_some_and(|w| w == "the" || w == "my") { 3 } else { 2 };
    let field = ASKED_FIELDS.iter().find(|f| starts_with(&core[at.min(core.len())..], f))?;
    let of = at + field.split(' ').count();
    if !core.get(of).is_some_and(|w| matches!(w.as_str(), "of" | "for" | "on")) {
        return None;
    }
    let base = u.core_start();
    let name = u.span(base + of + 1, base + core.len());
    match changes::scan_subject(&core, of + 1)? {
        (Subject::Named(_), _) if !name.is_empty() => Some(Intent::Get(Subject::Named(name))),
        (Subject::Named(_), _) => None,
        (subject, _) => Some(Intent::Get(subject)),
    }
}

/// Verbs that, followed by a name, ask to see that entry ("show Priya", "open the passport
/// renewal"); "get", "read" and "fetch" are left out: "get milk" is an errand to file.
const SHOWING: &[&str] = &["show me", "show", "open", "view", "display", "pull up", "bring up"];

/// "show Priya", "open the passport renewal": one entry named in words, as said (the tool
/// resolves the name), unless the words read as a search or a list ("show me my projects",
/// "show everything about Priya") or name something new ("open a bank account").
fn named_entry(u: &Utterance, verb: &str, from: usize) -> Option<Intent> {
    if !SHOWING.contains(&verb) || search(u).is_some() || list(u).is_some() {
        return None;
    }
    let core = u.core();
    let first = core.get(from)?;
    if matches!(first.as_str(), "a" | "an" | "some" | "up" | "to") || category_word(first).is_some() {
        return None;
    }
    let base = u.core_start();
    let name = u.span(base + from, base + core.len());
    (!name.is_empty()).then(|| Intent::Get(Subject::Named(name)))
}

const SEARCH_LEADS: &[&str] = &[
    "search for",
    "search",
    "look up",
    "look for",
    "lookup",
    "find me",
    "find",
    "what do i know about",
    "what do i have on",
    "what do i have about",
    "do i have anything on",
    "do i have anything about",
    "do i have notes on",
    "do i have notes about",
    "anything about",
    "anything on",
    "anything regarding",
    "any notes on",
    "any notes about",
    "what about",
    "who is",
    "who was",
    "tell me about",
    "what did i say about",
    "what did i write about",
    "everything about",
    "notes on",
    "notes about",
    "info on",
    "info about",
    "where did i put",
    "where did i write about",
    "where did i mention",
    "where did i note",
    "where did i save",
    "where is",
    "when is",
    "when are",
    "when was",
];

/// A search, or a list when the words only name a category.
pub fn search(u: &Utterance) -> Option<Intent> {
    let core = u.core();
    let base = u.core_start();
    let start = match SEARCH_LEADS.iter().find(|p| starts_with(&core, p)) {
        // "find a new dentist by Friday" is a task, not a search
        Some(lead) if lead.starts_with("find") && core.iter().any(|w| w == "by" || is_date_word(w)) => {
            return None;
        }
        Some(lead) => lead.split(' ').count(),
        None => {
            let openers =
                ["show", "list", "give", "get", "anything", "any", "what", "is", "are", "everything"];
            if !core.first().is_some_and(|w| openers.contains(&w.as_str())) {
                return None;
            }
            let about =
                core.iter().position(|w| matches!(w.as_str(), "about" | "regarding" | "mentioning"))?;
            // "what did Priya say about the API spec?" asks more than the words after
            // "about": a question, searched whole.
            let asked_more = core[1..about]
                .iter()
                .any(|w| !STOPWORDS.contains(&w.as_str()) && !ASKING.contains(&w.as_str()));
            if asked_more {
                return None;
            }
            about + 1
        }
    };
    let mut from = start;
    let mut to = core.len();
    let mut category = None;
    // "find people named Priya", "search ideas for drones"
    if let Some(c) = core.get(from).and_then(|w| category_word(w)).or_else(|| {
        (core.get(from).is_some_and(|w| w == "my"))
            .then(|| core.get(from + 1).and_then(|w| category_word(w)))
            .flatten()
    }) {
        let skip = if core[from] == "my" { 2 } else { 1 };
        let glue = ["for", "about", "named", "called", "with", "mentioning", "on", "regarding"];
        if core.get(from + skip).is_some_and(|w| glue.contains(&w.as_str())) {
            category = Some(c);
            from += skip + 1;
        } else if from + skip == to {
            return Some(Intent::List { category: Some(c), status: None, limit: None });
        }
    }
    // "find drones in ideas", "search Priya in my people"
    if let Some(c) = core.last().and_then(|w| category_word(w))
        && let Some(at) = core[from..to].iter().rposition(|w| w == "in")
        && core[from + at + 1..to - 1].iter().all(|w| w == "my" || w == "the")
        && from + at > from
    {
        category = Some(c);
        to = from + at;
    }
    while from < to && (STOPWORDS.contains(&core[from].as_str()) || core[from] == "'s") {
        from += 1;
    }
    while to > from && (STOPWORDS.contains(&core[to - 1].as_str()) || core[to - 1] == "'s") {
        to -= 1;
    }
    let query = u.span(base + from, base + to);
    if query.is_empty() {
        return Some(Intent::Say(
            "What should I search for? For example: “find Priya” or “search for passport”.".into(),
        ));
    }
    Some(Intent::Search { query, category })
}

/// A request to list entries.
pub fn list(u: &Utterance) -> Option<Intent> {
    let core = u.core();
    let has = |p: &str| find_phrase(&core, p).is_some();
    if has("on my plate") || has("open loops") {
        return Some(Intent::List {
            category: Some(Category::Projects),
            status: Some("active"),
            limit: None,
        });
    }
    if has("what do i have to do") || has("todo list") || has("to do list") || has("to-do list") {
        return Some(Intent::List { category: Some(Category::Admin), status: Some("pending"), limit: None });
    }
    let recent = [
        "what did i capture",
        "what did i save",
        "what did i file",
        "what have i captured",
        "what have i saved",
    ];
    if recent.iter().any(|p| has(p)) || has("show recent") || has("recent entries") {
        return Some(Intent::List { category: None, status: None, limit: None });
    }
    if has("who do i know") || has("who have i met") {
        return Some(Intent::List { category: Some(Category::People), status: None, limit: None });
    }
    if starts_with(&core, "what if") {
        return None;
    }
    let category = core.iter().enumerate().find_map(|(k, w)| {
        let negated = k > 0 && core[k - 1] == "not";
        category_word(w).filter(|_| !negated)
    });
    let verbs = [
        "list", "show", "display", "see", "view", "give", "get", "open", "browse", "what", "which", "any",
        "anything",
    ];
    let questions = ["how many", "do i have", "have i got", "what are", "what is in"];
    let opens = core.first().is_some_and(|w| verbs.contains(&w.as_str()))
        || questions.iter().any(|q| starts_with(&core, q));
    let everything = ["everything", "entries", "all", "recent", "latest", "saved", "captured"];
    let bare = core.iter().all(|w| {
        category_word(w).is_some()
            || status_word(w).is_some()
            || matches!(w.as_str(), "my" | "all" | "the" | "open" | "recent" | "latest" | "items" | "entries")
            || w.parse::<u64>().is_ok()
    });
    let names_all = core.iter().any(|w| everything.contains(&w.as_str()));
    if !(category.is_some() && (opens || bare) || opens && names_all && core.len() <= 5) {
        return None;
    }
    let status = core.iter().find_map(|w| match (w.as_str(), category) {
        ("open", Some(Category::Projects)) => Some("active"),
        ("open", Some(Category::Admin)) => Some("pending"),
        (w, Some(Category::Projects | Category::Admin) | None) => status_word(w),
        _ => None,
    });
    let status = status.filter(|s| match category {
        Some(Category::Projects) => PROJECT_STATUSES.contains(s),
        Some(Category::Admin) => ADMIN_STATUSES.contains(s),
        _ => true,
    });
    let limit = core.iter().find_map(|w| {
        w.parse::<u64>().ok().filter(|n| (1..=kb_domain::paging::MAX_PAGE_SIZE as u64).contains(n))
    });
    Some(Intent::List { category, status, limit })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(message: &str) -> Option<Intent> {
        get(&Utterance::new(message))
    }

    fn named(name: &str) -> Option<Intent> {
        Some(Intent::Get(Subject::Named(name.into())))
    }

    #[test]
    fn one_entry_is_shown_by_its_path_a_pointer_or_its_name() {
        assert_eq!(read("show projects/x.md"), Some(Intent::Get(Subject::Path("projects/x.md".into()))));
        assert_eq!(read("open it"), Some(Intent::Get(Subject::Recent)));
        assert_eq!(read("show me Priya Raman"), named("Priya Raman"));
        assert_eq!(read("Show Priya."), named("Priya"));
        assert_eq!(read("please open the passport renewal"), named("the passport renewal"));
        assert_eq!(read("pull up José's entry"), named("José's entry"));
        assert_eq!(read("what's the due date of the passport renewal?"), named("the passport renewal"));
        assert_eq!(
            read("what is the status of projects/x.md"),
            Some(Intent::Get(Subject::Path("projects/x.md".into())))
        );
        assert_eq!(read("what's the next action for that?"), Some(Intent::Get(Subject::Recent)));
        // Lists, searches and things to do are not one entry.
        for other in [
            "show me my projects",
            "show the inbox",
            "show me everything about Priya",
            "open loops",
            "open a bank account",
            "get milk on the way home",
            "read the new Murakami",
            "show up at the gym at 7",
            "show",
            "what is the meaning of life",
            "what's the status",
        ] {
            assert_eq!(read(other), None, "{other}");
        }
    }
}
