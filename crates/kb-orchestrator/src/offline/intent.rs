//! What the person asked for, read from their last message by fixed rules, in order:
//! small talk, help, explicit captures, digests, updates, moves, showing one entry,
//! searches, lists, questions it cannot route, and — for any other statement — a capture.

use chrono::NaiveDate;
use kb_domain::Category;
use kb_domain::category::{ADMIN_STATUSES, PROJECT_STATUSES};
use serde_json::{Map, Value};

use super::changes;
use super::keywords::{FAREWELLS, GREETINGS, SMALL_TALK, STOPWORDS, THANKS, category_word, status_word};
use super::utterance::{Utterance, find_phrase, starts_with};

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
    /// A question no rule routes.
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
    /// Move an entry to another category.
    Move {
        /// Which entry.
        subject: Subject,
        /// Where to.
        target: Category,
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
    let rules: [&Rule; 8] = [
        &help,
        &explicit_capture,
        &digest,
        &|u| changes::update(u, today),
        &changes::relocate,
        &get,
        &search,
        &list,
    ];
    if let Some(intent) = rules.iter().find_map(|rule| rule(&u)) {
        return intent;
    }
    let core = u.core();
    let question = ["what", "how", "why", "when", "where", "who", "which", "can", "could", "should", "would"];
    let asks = core.first().is_some_and(|w| question.contains(&w.as_str())) || u.original.ends_with('?');
    if asks && !starts_with(&core, "what if") {
        return Intent::Unroutable;
    }
    Intent::Capture { text: u.original.clone(), hints: None }
}

fn small_talk(all: &[String]) -> Option<Intent> {
    let known = |w: &String| {
        let w = w.as_str();
        GREETINGS.contains(&w) || THANKS.contains(&w) || FAREWELLS.contains(&w) || SMALL_TALK.contains(&w)
    };
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

fn digest(u: &Utterance) -> Option<Intent> {
    let core = u.core();
    let has = |phrases: &[&str]| phrases.iter().any(|p| find_phrase(&core, p).is_some());
    let weekly_words = ["weekly", "week"];
    let weekly = has(&weekly_words);
    let asks_weekly = has(&[
        "weekly review",
        "weekly summary",
        "weekly report",
        "weekly recap",
        "weekly digest",
        "week in review",
        "review my week",
        "review of my week",
        "recap my week",
        "summary of my week",
        "summarize my week",
        "summarise my week",
        "how was my week",
        "how did my week go",
    ]);
    let asks_daily = has(&[
        "digest",
        "daily review",
        "daily summary",
        "daily briefing",
        "morning briefing",
        "what should i focus on",
        "what should i work on",
        "what should i do today",
        "plan my day",
        "my day look",
        "summary of my day",
        "priorities for today",
        "today's priorities",
        "top priorities",
        "focus today",
    ]);
    (asks_weekly || asks_daily).then_some(Intent::Digest { weekly: asks_weekly || weekly })
}

fn get(u: &Utterance) -> Option<Intent> {
    if let Some(path) = u.paths().into_iter().next() {
        return Some(Intent::Get(Subject::Path(path)));
    }
    let core = u.core();
    let verbs = ["show me", "show", "open", "read", "view", "display", "fetch", "pull up", "bring up", "get"];
    let verb = verbs.iter().find(|p| starts_with(&core, p))?;
    let (subject, end) = changes::scan_subject(&core, verb.split(' ').count())?;
    (subject == Subject::Recent && end == core.len()).then_some(Intent::Get(Subject::Recent))
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
];

fn search(u: &Utterance) -> Option<Intent> {
    let core = u.core();
    let base = u.core_start();
    let start = match SEARCH_LEADS.iter().find(|p| starts_with(&core, p)) {
        Some(lead) => lead.split(' ').count(),
        None => {
            let openers =
                ["show", "list", "give", "get", "anything", "any", "what", "is", "are", "everything"];
            if !core.first().is_some_and(|w| openers.contains(&w.as_str())) {
                return None;
            }
            core.iter().position(|w| matches!(w.as_str(), "about" | "regarding" | "mentioning"))? + 1
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

fn list(u: &Utterance) -> Option<Intent> {
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
    let limit = core.iter().find_map(|w| w.parse::<u64>().ok().filter(|n| (1..=100).contains(n)));
    Some(Intent::List { category, status, limit })
}
