//! What the person asked for, read from their last message by fixed rules, in order:
//! small talk, help, digests, questions about one entry, explicit captures, undo, deletes,
//! merges, duplicates, updates, statements about an entry named in words ([`super::facts`]),
//! moves, showing one entry, searches, lists ([`super::queries`], [`super::changes`]),
//! questions it cannot route, and — for any other statement — a capture.

use chrono::NaiveDate;
use kb_domain::Category;
use serde_json::{Map, Value};

use super::keywords::{FAREWELLS, GREETINGS, SMALL_TALK, STOPWORDS, THANKS};
use super::utterance::{Utterance, find_phrase, starts_with};
use super::{changes, facts, queries, tidy};

/// The entry a request points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A vault path the person wrote.
    Path(String),
    /// "that", "it": the entry handled most recently in the conversation.
    Recent,
    /// An entry named in words ("the passport task"), which the offline model cannot resolve.
    Named(String),
}

/// What the person asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Intent {
    /// "hi".
    Greeting,
    /// "thanks".
    Thanks,
    /// "bye".
    Farewell,
    /// "ok", "cool".
    Acknowledge,
    /// "help", "what can you do".
    Help,
    /// A question no rule routes, with nothing in it to search for.
    Unroutable,
    /// A plain answer or a question back ("Which date?").
    Say(String),
    /// File a thought.
    Capture {
        /// The text to file.
        text: String,
        /// A category hint such as `[idea]`.
        hints: Option<String>,
    },
    /// List entries.
    List {
        /// Only this category.
        category: Option<Category>,
        /// Only this status.
        status: Option<&'static str>,
        /// At most this many.
        limit: Option<u64>,
    },
    /// Show one entry.
    Get(Subject),
    /// Search.
    Search {
        /// The words to find.
        query: String,
        /// Only this category.
        category: Option<Category>,
    },
    /// A digest.
    Digest {
        /// Weekly rather than daily.
        weekly: bool,
    },
    /// Change fields of an entry.
    Update {
        /// Which entry.
        subject: Subject,
        /// The fields and their new values.
        updates: Map<String, Value>,
    },
    /// A statement about an entry named in words ("the cello project is blocked", "Priya's
    /// birthday is March 3"): the entry is looked up first, and updated only when found by
    /// its name (see [`super::fallback`]).
    Tell {
        /// The name as said.
        name: String,
        /// The fields and their new values.
        updates: Map<String, Value>,
    },
    /// Move an entry to another category.
    Move {
        /// Which entry.
        subject: Subject,
        /// Where to.
        target: Category,
    },
    /// Delete one entry (in a chat, kb asks first).
    Delete(Subject),
    /// Look for duplicate entries, all or those named like `name`.
    FindDuplicates {
        /// Only entries named like this.
        name: Option<String>,
    },
    /// Merge entries into one.
    Merge {
        /// The entry kept.
        target: Subject,
        /// The entries merged into it and removed.
        sources: Vec<Subject>,
    },
    /// Undo the last change made in the conversation.
    Undo {
        /// Even when a file changed since ("undo it anyway").
        force: bool,
    },
}

/// One routing rule: the intent of a message, if the rule recognises it.
type Rule<'a> = dyn Fn(&Utterance) -> Option<Intent> + 'a;

/// Reads what the message asks for. `today` resolves relative dates.
pub fn understand(message: &str, today: NaiveDate) -> Intent {
    let u = Utterance::new(message);
    let all = u.texts();
    if all.is_empty() {
        return Intent::Help;
    }
    if let Some(intent) = small_talk(&all) {
        return intent;
    }
    let rules: [&Rule; 14] = [
        &help,
        &queries::digest,
        &queries::about,
        &explicit_capture,
        &changes::undo,
        &changes::remove,
        &tidy::merge,
        &tidy::duplicates,
        &|u| changes::update(u, today),
        &|u| facts::said(u, today),
        &changes::relocate,
        &queries::get,
        &queries::search,
        &queries::list,
    ];
    if let Some(intent) = rules.iter().find_map(|rule| rule(&u)) {
        return intent;
    }
    if asks(&u) {
        // A question of the notes: searched as asked (search leaves out the words without
        // meaning), and answered with the passages found.
        let meaningful = u
            .core()
            .iter()
            .any(|w| !STOPWORDS.contains(&w.as_str()) && !QUESTION_WORDS.contains(&w.as_str()));
        if meaningful {
            return Intent::Search { query: u.original.trim().to_string(), category: None };
        }
        return Intent::Unroutable;
    }
    Intent::Capture { text: u.original.clone(), hints: None }
}

/// The words a question starts with.
const QUESTION_WORDS: &[&str] = &[
    "what", "how", "why", "when", "where", "who", "which", "can", "could", "should", "would", "is", "are",
    "does", "did", "am",
];

/// Whether `message` asks a question (starts with a question word or ends with `?`; "what if"
/// starts an idea).
pub fn is_question(message: &str) -> bool {
    asks(&Utterance::new(message))
}

/// Whether `u` asks a question (see [`is_question`]).
fn asks(u: &Utterance) -> bool {
    let core = u.core();
    let asks = core.first().is_some_and(|w| QUESTION_WORDS.contains(&w.as_str()))
        || u.original.trim_end().ends_with('?');
    asks && !starts_with(&core, "what if")
}

/// What a person says to turn down a proposal ("no", "cancel", "don't"), as words.
const REFUSALS: &[&str] = &[
    "no",
    "n",
    "nope",
    "nah",
    "cancel",
    "cancel that",
    "cancel it",
    "do not",
    "no do not",
    "no thanks",
    "no thank you",
    "never mind",
    "nevermind",
    "stop",
    "keep it",
    "not now",
    "forget it",
    "no cancel",
];

/// Whether `message` only turns something down: one of a short list, case and punctuation aside.
pub fn refuses(message: &str) -> bool {
    REFUSALS.contains(&Utterance::new(message).texts().join(" ").as_str())
}

fn small_talk(all: &[String]) -> Option<Intent> {
    let known = |w: &String| {
        let w = w.as_str();
        GREETINGS.contains(&w) || THANKS.contains(&w) || FAREWELLS.contains(&w) || SMALL_TALK.contains(&w)
    };
    if all.len() == 1 && matches!(all[0].as_str(), "done" | "finished") {
        return Some(Intent::Acknowledge);
    }
    if all.len() > 6 || !all.iter().all(known) {
        return None;
    }
    let any = |set: &[&str]| all.iter().any(|w| set.contains(&w.as_str()));
    Some(if any(THANKS) {
        Intent::Thanks
    } else if any(FAREWELLS) {
        Intent::Farewell
    } else if any(GREETINGS) || any(&["how"]) {
        Intent::Greeting
    } else {
        Intent::Acknowledge
    })
}

fn help(u: &Utterance) -> Option<Intent> {
    let core = u.core();
    let phrases = [
        "what can you do",
        "how does this work",
        "how do i use",
        "how do you work",
        "what are you",
        "who are you",
    ];
    let asks = phrases.iter().any(|p| find_phrase(&core, p).is_some())
        || (core.first().is_some_and(|w| w == "help") && core.len() <= 3)
        || matches!(core.join(" ").as_str(), "commands" | "usage" | "menu");
    asks.then_some(Intent::Help)
}

fn explicit_capture(u: &Utterance) -> Option<Intent> {
    let original = u.original.as_str();
    if let Some(rest) = original.strip_prefix('[')
        && let Some((hint, text)) = rest.split_once(']')
        && is_hint(hint)
    {
        let text = text.trim_start_matches([':', ' ', '-']).trim();
        return Some(if text.is_empty() {
            Intent::Say(
                "What should I file? Write it after the hint, like “[project] Website redesign”.".into(),
            )
        } else {
            Intent::Capture { text: text.to_string(), hints: Some(format!("[{}]", hint.trim())) }
        });
    }
    if let Some((label, text)) = original.split_once(':') {
        let hint = match label.trim().to_lowercase().as_str() {
            "idea" => Some("[idea]"),
            "project" => Some("[project]"),
            "person" => Some("[person]"),
            "admin" | "todo" | "to-do" | "task" | "errand" => Some("[admin]"),
            "note" | "capture" | "remember" | "save" => None,
            _ => return explicit_capture_phrase(u),
        };
        if !text.trim().is_empty() {
            return Some(Intent::Capture { text: text.trim().to_string(), hints: hint.map(str::to_string) });
        }
    }
    explicit_capture_phrase(u)
}

/// Whether the inside of a leading `[…]` is a category hint (`project`, `person:Sarah`).
fn is_hint(inside: &str) -> bool {
    let key = inside.split(':').next().unwrap_or("").trim().to_lowercase();
    matches!(key.as_str(), "project" | "projects" | "idea" | "ideas" | "admin" | "person" | "people")
}

fn explicit_capture_phrase(u: &Utterance) -> Option<Intent> {
    let core = u.core();
    let keep_whole =
        ["remember that", "remember to", "remind me", "don't forget", "do not forget", "note that"];
    if keep_whole.iter().any(|p| starts_with(&core, p)) {
        return Some(Intent::Capture { text: u.original.clone(), hints: None });
    }
    let verbs = ["jot down", "note down", "capture", "save", "log", "file this", "add a note"];
    let verb = verbs.iter().find(|p| starts_with(&core, p))?;
    let text = u.rest_from(u.core_start() + verb.split(' ').count());
    (!text.is_empty()).then(|| Intent::Capture { text, hints: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(message: &str) -> Intent {
        understand(message, NaiveDate::from_ymd_opt(2026, 11, 21).unwrap())
    }

    #[test]
    fn small_talk_is_not_filed() {
        assert_eq!(read("Hi there!"), Intent::Greeting);
        assert_eq!(read("thanks a lot"), Intent::Thanks);
        assert_eq!(read("good night"), Intent::Farewell);
        assert_eq!(read("cool"), Intent::Acknowledge);
        assert_eq!(read("what can you do?"), Intent::Help);
        assert_eq!(read("   "), Intent::Help);
        assert!(matches!(read("hi, met Priya today"), Intent::Capture { .. }));
    }

    #[test]
    fn statements_are_captured_as_written_and_labels_become_hints() {
        let text = "Sarah prefers email";
        assert_eq!(read(text), Intent::Capture { text: text.into(), hints: None });
        assert_eq!(
            read("todo: buy batteries"),
            Intent::Capture { text: "buy batteries".into(), hints: Some("[admin]".into()) }
        );
        assert_eq!(
            read("[person:Sarah] likes climbing"),
            Intent::Capture { text: "likes climbing".into(), hints: Some("[person:Sarah]".into()) }
        );
        assert!(matches!(read("what if shoes had wheels"), Intent::Capture { .. }));
        let wikilink = "[[Garden]] needs compost";
        assert_eq!(read(wikilink), Intent::Capture { text: wikilink.into(), hints: None });
        assert!(matches!(read("I want to set up a weekly review habit"), Intent::Capture { .. }));
        assert!(matches!(read("find a new dentist by Friday"), Intent::Capture { .. }));
        assert!(matches!(read("move the couch to the garage"), Intent::Capture { .. }));
    }

    #[test]
    fn refusals_are_a_short_list() {
        for no in ["no", "No.", "nope!", "Don't", "cancel", "never mind", "no thanks"] {
            assert!(refuses(no), "{no}");
        }
        for other in ["no idea", "not sure", "list my projects", "yes", ""] {
            assert!(!refuses(other), "{other}");
        }
    }

    #[test]
    fn deletes_and_undo_are_routed() {
        assert_eq!(
            read("delete projects/old-site.md"),
            Intent::Delete(Subject::Path("projects/old-site.md".into()))
        );
        assert_eq!(
            read("please remove the old site entry"),
            Intent::Delete(Subject::Named("old site".into()))
        );
        assert_eq!(read("undo that"), Intent::Undo { force: false });
        assert_eq!(read("Take that back."), Intent::Undo { force: false });
        assert!(matches!(read("remove the batteries from the smoke alarm"), Intent::Capture { .. }));
    }

    #[test]
    fn questions_no_rule_routes_search_the_notes_and_are_not_filed() {
        let search = |q: &str| Intent::Search { query: q.to_string(), category: None };
        assert_eq!(read("why is the sky blue?"), search("why is the sky blue?"));
        assert_eq!(read("is it going to rain"), search("is it going to rain"));
        assert_eq!(
            read("what did Priya say about the API spec?"),
            search("what did Priya say about the API spec?")
        );
        assert_eq!(read("what is it?"), Intent::Unroutable);
        assert!(is_question("when is the passport due?"));
        assert!(!is_question("what if we built a shed"));
    }

    #[test]
    fn vague_references_ask_back_instead_of_guessing() {
        assert!(matches!(
            read("mark the passport task done"),
            Intent::Update { subject: Subject::Named(_), .. }
        ));
        assert!(matches!(read("search"), Intent::Say(_)));
        assert!(matches!(read("move it"), Intent::Say(_)));
        assert!(matches!(read("set the due date of that to someday soon"), Intent::Say(_)));
    }
}
