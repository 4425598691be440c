//! The word tables of the offline model, in one place so they can be read and tuned.
//!
//! Everything here is lowercase. Phrases are matched as whole words in order (so `"met"`
//! does not match "metric"). Classifier weights: 3 = the text names the category outright,
//! 2 = strong evidence, 1 = a hint.

use kb_domain::Category;

/// Evidence that a text is about a person.
pub const PEOPLE_WORDS: &[(&str, u32)] = &[
    ("person", 3),
    ("met", 2),
    ("meet", 1),
    ("talked to", 2),
    ("talked with", 2),
    ("spoke to", 2),
    ("spoke with", 2),
    ("chatted with", 2),
    ("coffee with", 2),
    ("lunch with", 2),
    ("dinner with", 2),
    ("catch up with", 2),
    ("follow up with", 2),
    ("introduced me", 2),
    ("birthday", 2),
    ("friend", 2),
    ("colleague", 2),
    ("coworker", 2),
    ("mentor", 2),
    ("recruiter", 2),
    ("manager", 1),
    ("boss", 1),
    ("neighbor", 2),
    ("neighbour", 2),
    ("sister", 2),
    ("brother", 2),
    ("cousin", 2),
    ("wife", 2),
    ("husband", 2),
    ("works at", 2),
    ("works on", 1),
    ("she", 1),
    ("he", 1),
    ("her", 1),
    ("his", 1),
    ("likes", 1),
    ("loves", 1),
];

/// Evidence that a text is a project: something with several steps and a next action.
pub const PROJECT_WORDS: &[(&str, u32)] = &[
    ("project", 3),
    ("build", 2),
    ("launch", 2),
    ("ship", 2),
    ("integration", 2),
    ("migrate", 2),
    ("migration", 2),
    ("redesign", 2),
    ("refactor", 2),
    ("implement", 2),
    ("prototype", 2),
    ("milestone", 2),
    ("roadmap", 2),
    ("release", 2),
    ("proposal", 2),
    ("deliver", 2),
    ("renovate", 2),
    ("renovation", 2),
    ("website", 1),
    ("app", 1),
    ("client", 1),
    ("working on", 2),
    ("finish", 1),
    ("draft", 1),
    ("report", 1),
    ("plan", 1),
    ("set up", 1),
    ("organize", 1),
    ("write", 1),
    ("next step", 2),
    ("next action", 2),
];

/// Evidence that a text is an idea: a thought worth keeping, not yet a plan.
pub const IDEA_WORDS: &[(&str, u32)] = &[
    ("idea", 3),
    ("what if", 3),
    ("concept", 2),
    ("imagine", 2),
    ("brainstorm", 2),
    ("would be cool", 2),
    ("would be nice", 2),
    ("could be", 1),
    ("someday", 2),
    ("maybe", 1),
    ("might", 1),
    ("wonder", 2),
    ("thought", 1),
    ("startup", 2),
    ("invent", 2),
    ("theory", 2),
    ("hypothesis", 2),
    ("blog post", 2),
    ("book about", 2),
    ("an app that", 3),
    ("a tool that", 3),
];

/// Evidence that a text is an admin task: an errand or paperwork with a date.
pub const ADMIN_WORDS: &[(&str, u32)] = &[
    ("admin", 3),
    ("errand", 3),
    ("renew", 2),
    ("passport", 2),
    ("pay", 2),
    ("bill", 2),
    ("invoice", 2),
    ("tax", 2),
    ("taxes", 2),
    ("appointment", 2),
    ("dentist", 2),
    ("doctor", 2),
    ("insurance", 2),
    ("bank", 2),
    ("rent", 2),
    ("license", 2),
    ("licence", 2),
    ("visa", 2),
    ("register", 2),
    ("registration", 2),
    ("subscription", 2),
    ("cancel", 2),
    ("mortgage", 2),
    ("dmv", 2),
    ("vet", 2),
    ("oil change", 2),
    ("remind me", 2),
    ("schedule", 1),
    ("book a", 1),
    ("buy", 1),
    ("groceries", 1),
    ("pick up", 1),
    ("return", 1),
    ("submit", 1),
    ("form", 1),
    ("call the", 1),
    ("deadline", 1),
];

/// The keyword table of each category the classifier can choose.
pub fn table(category: Category) -> &'static [(&'static str, u32)] {
    match category {
        Category::People => PEOPLE_WORDS,
        Category::Projects => PROJECT_WORDS,
        Category::Ideas => IDEA_WORDS,
        Category::Admin | Category::Inbox => ADMIN_WORDS,
        // Never chosen: nothing is captured outside the category folders.
        Category::Other => &[],
    }
}

/// Words that name a category in requests ("list my projects", "that's a person").
pub const CATEGORY_WORDS: &[(&str, Category)] = &[
    ("people", Category::People),
    ("person", Category::People),
    ("contacts", Category::People),
    ("contact", Category::People),
    ("projects", Category::Projects),
    ("project", Category::Projects),
    ("ideas", Category::Ideas),
    ("idea", Category::Ideas),
    ("admin", Category::Admin),
    ("tasks", Category::Admin),
    ("task", Category::Admin),
    ("errands", Category::Admin),
    ("errand", Category::Admin),
    ("chores", Category::Admin),
    ("chore", Category::Admin),
    ("todos", Category::Admin),
    ("todo", Category::Admin),
    ("to-dos", Category::Admin),
    ("inbox", Category::Inbox),
    ("unfiled", Category::Inbox),
];

/// The category a single word names, if any.
pub fn category_word(word: &str) -> Option<Category> {
    CATEGORY_WORDS.iter().find(|(w, _)| *w == word).map(|(_, c)| *c)
}

/// Words that name an entry status, with the status they mean.
pub const STATUS_WORDS: &[(&str, &str)] = &[
    ("done", "done"),
    ("complete", "done"),
    ("completed", "done"),
    ("finished", "done"),
    ("closed", "done"),
    ("active", "active"),
    ("waiting", "waiting"),
    ("blocked", "blocked"),
    ("stuck", "blocked"),
    ("someday", "someday"),
    ("pending", "pending"),
    ("outstanding", "pending"),
];

/// The status a word names, if any.
pub fn status_word(word: &str) -> Option<&'static str> {
    STATUS_WORDS.iter().find(|(w, _)| *w == word).map(|(_, s)| *s)
}

/// Words that open a chat without asking for anything.
pub const GREETINGS: &[&str] =
    &["hi", "hello", "hey", "hiya", "howdy", "yo", "morning", "afternoon", "evening", "greetings"];

/// Words of thanks.
pub const THANKS: &[&str] = &["thanks", "thank", "thx", "ty", "cheers"];

/// Words of farewell.
pub const FAREWELLS: &[&str] = &["bye", "goodbye", "ciao", "later", "night"];

/// Words that may surround a greeting, thanks or an acknowledgement without changing it.
pub const SMALL_TALK: &[&str] = &[
    "there", "kb", "good", "you", "so", "much", "a", "lot", "how", "are", "is", "it", "going", "doing", "ok",
    "okay", "great", "cool", "nice", "see", "very", "all", "for", "that", "yes", "no", "yep", "nope", "sure",
    "alright", "fine", "got", "perfect", "awesome", "oh", "ah", "hmm", "i", "am", "today",
];

/// Words at the start of a request that carry no meaning of their own.
pub const FILLERS: &[&str] = &[
    "please", "pls", "kb", "hey", "ok", "okay", "so", "actually", "oh", "um", "uh", "no", "wait", "also",
    "now", "just", "and", "then", "hmm", "well", "oops", "sorry", "right", "yes", "yeah",
];

/// Multi-word lead-ins of a request that carry no meaning of their own.
pub const FILLER_PHRASES: &[&str] = &[
    "can you",
    "could you",
    "would you",
    "will you",
    "i want to",
    "i would like to",
    "i'd like to",
    "let's",
    "lets",
    "go ahead and",
    "help me",
];

/// Words that refer back to the entry just handled ("that", "it", "the last one").
pub const REFERENCE_WORDS: &[&str] = &[
    "that", "it", "this", "one", "the", "last", "latest", "entry", "item", "note", "thing", "just", "filed",
    "captured", "saved", "you", "i", "project", "idea", "person", "task", "admin", "new", "previous",
];

/// Words that carry no meaning in a search query or a tag.
pub const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "my",
    "me",
    "i",
    "any",
    "all",
    "for",
    "of",
    "on",
    "in",
    "at",
    "to",
    "and",
    "or",
    "is",
    "are",
    "was",
    "were",
    "be",
    "about",
    "regarding",
    "notes",
    "note",
    "entries",
    "entry",
    "stuff",
    "things",
    "anything",
    "everything",
    "with",
    "named",
    "called",
    "mentioning",
    "that",
    "this",
    "it",
    "do",
    "did",
    "have",
    "has",
    "know",
    "what",
    "who",
    "please",
    "by",
    "from",
    "up",
    "we",
    "our",
    "you",
    "your",
    "his",
    "her",
    "he",
    "she",
    "they",
    "them",
    "their",
    "met",
    "need",
    "needs",
    "should",
    "could",
    "would",
    "will",
    "can",
    "get",
    "got",
    "some",
    "want",
    "into",
    "out",
    "over",
    "then",
    "than",
    "just",
    "really",
    "very",
    "also",
    "today",
    "tomorrow",
    "next",
    "due",
    "before",
    "after",
    "maybe",
    "idea",
    "remember",
    "remind",
    "new",
    "its",
    "not",
    "but",
    "so",
    "if",
    "when",
    "where",
    "how",
    "why",
    "which",
];
