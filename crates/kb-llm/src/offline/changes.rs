//! Requests that change an existing entry: updates ("mark that done", "set the due date of
//! projects/x.md to Dec 15", "rename that to …"), moves ("actually that's a project",
//! "move inbox/x.md to people"), deletes ("delete projects/x.md", "remove the old site
//! entry", "delete that") and undo ("undo", "undo that", "take that back", "revert that");
//! deletes and undo are read in `removals`.

use chrono::NaiveDate;
use kb_domain::Category;
use kb_domain::fields::{keys, statuses};
use serde_json::{Map, Value, json};

use super::dates::{find_date, is_date_word};
use super::intent::{Intent, Subject};
use super::keywords::{REFERENCE_WORDS, category_word, status_word};
use super::utterance::{Utterance, as_path, starts_with};

mod removals;

pub use self::removals::{remove, undo};

/// Words that point back at the entry just handled; a subject needs one of them.
const ANCHORS: &[&str] = &["that", "it", "this", "last", "latest", "previous", "its"];
const COPULAS: &[&str] = &["is", "was", "be", "'s", "now", "also", "should", "really", "actually"];
const LINKS: &[&str] = &["to", "as", "is", "be", "on", "by", "=", "for", "into"];
const FIELDS: &[(&str, &str)] = &[
    ("due date", keys::DUE_DATE),
    ("deadline", keys::DUE_DATE),
    ("due", keys::DUE_DATE),
    ("status", keys::STATUS),
    ("next action", keys::NEXT_ACTION),
    ("next step", keys::NEXT_ACTION),
    ("name", keys::NAME),
    ("title", keys::NAME),
    ("context", keys::CONTEXT),
    ("one liner", keys::ONE_LINER),
    ("one-liner", keys::ONE_LINER),
    ("tags", keys::TAGS),
];
const SETTERS: &[&str] =
    &["set", "change", "update", "make", "move", "push", "put", "switch", "postpone", "reschedule", "delay"];
const MOVERS: &[&str] = &[
    "move",
    "file",
    "put",
    "refile",
    "reclassify",
    "recategorize",
    "recategorise",
    "change",
    "convert",
    "turn",
    "make",
    "switch",
    "categorize",
    "categorise",
];
/// Words that may sit around the target of a move without changing it.
const MOVE_GLUE: &[&str] = &[
    "to",
    "into",
    "under",
    "in",
    "as",
    "over",
    "a",
    "an",
    "the",
    "my",
    "back",
    "folder",
    "category",
    "section",
    "instead",
    "entry",
    "item",
    "items",
    "one",
    "really",
    "actually",
    "probably",
    "definitely",
    "more",
    "like",
    "belongs",
    "belong",
    "goes",
    "go",
    "should",
    "be",
    "is",
    "was",
    "'s",
    "it",
    "that",
    "this",
    "not",
];

/// The entry a request points at, starting at `i`, and where the words after it begin.
pub fn scan_subject(w: &[String], i: usize) -> Option<(Subject, usize)> {
    let first = w.get(i)?;
    if let Some(path) = as_path(first) {
        return Some((Subject::Path(path), i + 1));
    }
    let mut j = i;
    while j < w.len() && j - i < 4 && REFERENCE_WORDS.contains(&w[j].as_str()) {
        j += 1;
    }
    if j > i && w[i..j].iter().any(|x| ANCHORS.contains(&x.as_str())) {
        return Some((Subject::Recent, j));
    }
    if first == "its" {
        return Some((Subject::Recent, i + 1));
    }
    let stop = |x: &String| LINKS.contains(&x.as_str()) || x == "done" || x == "'s";
    let end = (i..w.len()).find(|&k| stop(&w[k])).unwrap_or(w.len());
    (end > i).then(|| (Subject::Named(w[i..end].join(" ")), end))
}

fn field_at(w: &[String], i: usize) -> Option<(&'static str, usize)> {
    let i = if w.get(i).is_some_and(|x| x == "the") { i + 1 } else { i };
    FIELDS
        .iter()
        .find(|(phrase, _)| starts_with(&w[i.min(w.len())..], phrase))
        .map(|(phrase, key)| (*key, i + phrase.split(' ').count()))
}

/// The kb field the words at `i` name ("due date", "next step"), and where the words after
/// it begin.
pub(super) fn field_named(w: &[String], i: usize) -> Option<(&'static str, usize)> {
    field_at(w, i)
}

/// The value of `field` said by the words of the message's core from `i` on, or a question
/// back (see [`value`]).
pub(super) fn value_of(u: &Utterance, field: &str, i: usize, today: NaiveDate) -> Result<Value, String> {
    value(u, field, i, today)
}

fn skip(w: &[String], mut i: usize, words: &[&str]) -> usize {
    while w.get(i).is_some_and(|x| words.contains(&x.as_str())) {
        i += 1;
    }
    i
}

/// The updates that setting `field` to the words of the message's core from `i` on means,
/// or a question back.
fn value(u: &Utterance, field: &str, i: usize, today: NaiveDate) -> Result<Value, String> {
    let (base, w) = (u.core_start(), u.core());
    let w = w.as_slice();
    let i = skip(w, i, LINKS);
    match field {
        keys::DUE_DATE => find_date(&w[i.min(w.len())..], today)
            .map(|(d, _)| json!(d.format("%Y-%m-%d").to_string()))
            .ok_or_else(|| "Which date? Write it like 2026-12-15, Dec 15 or Friday.".to_string()),
        keys::STATUS => w
            .get(i)
            .and_then(|x| status_word(x))
            .map(|s| json!(s))
            .ok_or_else(|| "Which status? Projects can be active, waiting, blocked, someday or done; admin items pending or done.".to_string()),
        keys::TAGS => {
            let tags: Vec<String> = u
                .rest_from(base + i)
                .split([',', ' '])
                .map(|t| t.trim().to_lowercase())
                .filter(|t| !t.is_empty() && t != "and")
                .collect();
            if tags.is_empty() { Err("Which tags?".to_string()) } else { Ok(json!(tags)) }
        }
        _ => {
            let text = u.rest_from(base + i);
            if text.is_empty() { Err(format!("What should the {} be?", field.replace('_', " "))) } else { Ok(json!(text)) }
        }
    }
}

fn update_of(subject: Subject, field: &str, value: Result<Value, String>) -> Intent {
    match value {
        Ok(value) => {
            let mut updates = Map::new();
            updates.insert(field.to_string(), value);
            Intent::Update { subject, updates }
        }
        Err(question) => Intent::Say(question),
    }
}

fn is_pointer(subject: &Subject) -> bool {
    !matches!(subject, Subject::Named(_))
}

/// A request to change fields of an entry, if the message is one.
pub fn update(u: &Utterance, today: NaiveDate) -> Option<Intent> {
    let w = u.core();
    let first = w.first()?.as_str();
    // "mark that (as) done"
    if matches!(first, "mark" | "flag") {
        let (subject, i) = scan_subject(&w, 1).unwrap_or((Subject::Recent, 1));
        let i = skip(&w, i, &["as"]);
        let status = status_word(w.get(i)?)?;
        return Some(update_of(subject, keys::STATUS, Ok(json!(status))));
    }
    // "rename that to Garden plan", "call it Garden plan"
    if first == "rename" {
        let (subject, i) = scan_subject(&w, 1).unwrap_or((Subject::Recent, 1));
        let i = skip(&w, i, &["to", "as"]);
        return Some(update_of(subject, keys::NAME, value(u, keys::NAME, i, today)));
    }
    if first == "call"
        && w.get(1).is_some_and(|x| matches!(x.as_str(), "it" | "that" | "this"))
        && w.len() > 2
    {
        return Some(update_of(Subject::Recent, keys::NAME, value(u, keys::NAME, 2, today)));
    }
    // "tag that with x, y"
    if first == "tag" {
        // A name runs to "with" ("tag the garden shed with diy").
        let with = (1..w.len()).find(|&k| w[k] == "with").unwrap_or(w.len());
        let (subject, i) = match scan_subject(&w[..with], 1)? {
            (Subject::Named(_), _) => (Subject::Named(w[1..with].join(" ")), with),
            found => found,
        };
        let i = skip(&w, i, &["with", "as"]);
        return Some(update_of(subject, keys::TAGS, value(u, keys::TAGS, i, today)));
    }
    // "set the due date of that to Dec 15", "set that to blocked", "make it due Friday"
    if SETTERS.contains(&first) {
        if let Some((field, i)) = field_at(&w, 1) {
            let i = skip(&w, i, &["of", "for", "on", "in"]);
            let (subject, i) = scan_subject(&w, i).unwrap_or((Subject::Recent, i));
            return Some(update_of(subject, field, value(u, field, i, today)));
        }
        let (subject, i) = scan_subject(&w, 1)?;
        let i = skip(&w, i, &["'s"]);
        if let Some((field, j)) = field_at(&w, i) {
            return Some(update_of(subject, field, value(u, field, j, today)));
        }
        let after = skip(&w, i, &["to", "as", "until", "till"]);
        if matches!(first, "push" | "move" | "postpone" | "reschedule" | "delay")
            && is_pointer(&subject)
            && let Some((date, _)) = find_date(&w[after.min(w.len())..], today)
        {
            return Some(update_of(subject, keys::DUE_DATE, Ok(json!(date.format("%Y-%m-%d").to_string()))));
        }
        // "postpone the dentist appointment to Friday": a name, when a date follows it at once.
        if matches!(first, "push" | "postpone" | "reschedule" | "delay")
            && let Some((name, date)) = rescheduled(&w, today)
        {
            return Some(update_of(Subject::Named(name), keys::DUE_DATE, Ok(json!(date))));
        }
        if is_pointer(&subject) {
            let status = status_word(w.get(after)?)?;
            return Some(update_of(subject, keys::STATUS, Ok(json!(status))));
        }
        // "set the cello project to someday", "put the kitchen renovation on hold": a name,
        // when a status and nothing more follows it.
        let end = (1..w.len())
            .find(|&k| matches!(w[k].as_str(), "to" | "as" | "on" | "back"))
            .filter(|&k| k > 1)?;
        let (status, last) = super::facts::status_at(&w, skip(&w, end, &["to", "as"]))?;
        let base = u.core_start();
        return (last == w.len()).then(|| {
            update_of(Subject::Named(u.span(base + 1, base + end)), keys::STATUS, Ok(json!(status)))
        });
    }
    // "next action for projects/x.md: email Sarah", "due date for that is Friday"
    if let Some((field, i)) = field_at(&w, 0)
        && w.get(i).is_some_and(|x| matches!(x.as_str(), "of" | "for" | "on"))
    {
        let (subject, i) = scan_subject(&w, i + 1)?;
        return Some(update_of(subject, field, value(u, field, i, today)));
    }
    // "I finished that", "done with projects/x.md"
    for lead in ["i finished", "i completed", "i am done with", "done with", "finished", "completed", "close"]
    {
        if starts_with(&w, lead) {
            let from = lead.split(' ').count();
            let (subject, i) = scan_subject(&w, from)?;
            if i < w.len() {
                return None;
            }
            // "finished the kitchen renovation": a short name, said whole, looked up first
            // (a statement, see super::facts).
            return match subject {
                Subject::Named(_) if i - from <= 4 => {
                    let mut updates = Map::new();
                    updates.insert(keys::STATUS.to_string(), json!(statuses::DONE));
                    let name = u.span(u.core_start() + from, u.core_start() + i);
                    Some(Intent::Tell { name, updates })
                }
                Subject::Named(_) => None,
                pointer => Some(update_of(pointer, keys::STATUS, Ok(json!(statuses::DONE)))),
            };
        }
    }
    // "that is done", "it is due Friday", "projects/x.md is blocked"
    let (subject, i) = scan_subject(&w, 0)?;
    if !is_pointer(&subject) {
        return None;
    }
    let i = skip(&w, i, COPULAS);
    let next = w.get(i)?;
    if next == "due" {
        return Some(update_of(subject, keys::DUE_DATE, value(u, keys::DUE_DATE, i + 1, today)));
    }
    let status = status_word(next)?;
    (i + 1 >= w.len() || w[i + 1] == "now").then(|| update_of(subject, keys::STATUS, Ok(json!(status))))
}

/// "push the dentist appointment to Friday": the words between the verb and the last "to",
/// "until" or "till" as a name, when what follows that word is a date and nothing more.
fn rescheduled(w: &[String], today: NaiveDate) -> Option<(String, String)> {
    let link = (2..w.len()).rev().find(|&k| matches!(w[k].as_str(), "to" | "until" | "till"))?;
    let rest = &w[link + 1..];
    let (date, _) = find_date(rest, today)?;
    let date_only = rest.iter().all(|x| {
        is_date_word(x)
            || find_date(std::slice::from_ref(x), today).is_some()
            || matches!(x.as_str(), "may" | "mar")
            || x.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse::<u32>().is_ok()
            || matches!(
                x.as_str(),
                "on" | "next" | "this" | "the" | "of" | "in" | "day" | "days" | "week" | "weeks"
            )
    });
    date_only.then(|| (w[1..link].join(" "), date.format("%Y-%m-%d").to_string()))
}

/// The category a move aims at: the last category named that is not negated ("a project,
/// not an idea"), when every other word only glues the sentence together.
fn move_target(w: &[String]) -> Option<Category> {
    let mut target = None;
    for (k, word) in w.iter().enumerate() {
        if let Some(category) = category_word(word) {
            let negated = w[k.saturating_sub(2)..k].iter().any(|x| x == "not");
            if !negated {
                target = Some(category);
            }
        } else if !MOVE_GLUE.contains(&word.as_str()) {
            return None;
        }
    }
    target
}

/// A request to move an entry to another category, if the message is one.
pub fn relocate(u: &Utterance) -> Option<Intent> {
    let w = u.core();
    let first = w.first()?.as_str();
    if MOVERS.contains(&first) {
        let stop = (1..w.len())
            .find(|&k| {
                matches!(w[k].as_str(), "to" | "into" | "under" | "in" | "as" | "a" | "an")
                    || category_word(&w[k]).is_some()
            })
            .unwrap_or(w.len());
        let Some(target) = move_target(&w[stop..]) else {
            let bare = w.len() <= 3 && scan_subject(&w, 1).is_none_or(|(s, _)| is_pointer(&s));
            return (bare
                && matches!(first, "move" | "refile" | "reclassify" | "recategorize" | "recategorise"))
            .then(|| Intent::Say("Where should it go: people, projects, ideas or admin?".to_string()));
        };
        let subject = match scan_subject(&w[..stop], 1) {
            Some((subject, end)) if end == stop => subject,
            Some((Subject::Path(p), _)) => Subject::Path(p),
            None => Subject::Recent,
            Some(_) => Subject::Named(w[1..stop].join(" ")),
        };
        return Some(Intent::Move { subject, target });
    }
    let says_where = |x: &String| COPULAS.contains(&x.as_str()) || x == "belongs" || x == "goes";
    let (subject, i) = match scan_subject(&w, 0)? {
        // A name runs to the verb ("the bakery idea belongs in projects").
        (Subject::Named(_), _) => {
            let verb = (1..w.len()).find(|&k| says_where(&w[k]))?;
            (Subject::Named(w[..verb].join(" ")), verb)
        }
        found => found,
    };
    if !w[i..].iter().any(says_where) {
        return None;
    }
    // An entry named in words ("actually the zine is a project") is a correction only when
    // said as one; "Garden club is a project" alone may be something new to file.
    if !is_pointer(&subject) && !corrects(u, &w[i..]) {
        return None;
    }
    let target = move_target(&w[i..])?;
    Some(Intent::Move { subject, target })
}

/// Whether a message saying where something belongs corrects what is there: it opens with
/// "actually", "no", "oops" or "wait", or says the thing belongs, goes or should be somewhere.
fn corrects(u: &Utterance, predicate: &[String]) -> bool {
    let lead = &u.texts()[..u.core_start().min(u.words.len())];
    lead.iter().any(|x| matches!(x.as_str(), "actually" | "no" | "oops" | "wait" | "sorry"))
        || predicate
            .iter()
            .any(|x| matches!(x.as_str(), "belongs" | "goes" | "should" | "actually" | "really"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        Utterance::new(text).texts()
    }

    fn delete(text: &str) -> Option<Intent> {
        remove(&Utterance::new(text))
    }

    #[test]
    fn deletes_name_a_path_a_pointer_or_an_entry_by_name() {
        let path = |p: &str| Some(Intent::Delete(Subject::Path(p.into())));
        assert_eq!(delete("delete projects/old-site.md"), path("projects/old-site.md"));
        assert_eq!(delete("Please remove the entry ideas/drone"), path("ideas/drone.md"));
        assert_eq!(delete("delete that"), Some(Intent::Delete(Subject::Recent)));
        assert_eq!(delete("remove the last entry"), Some(Intent::Delete(Subject::Recent)));
        assert_eq!(delete("trash it"), Some(Intent::Delete(Subject::Recent)));
        assert_eq!(
            delete("remove the Old Site entry"),
            Some(Intent::Delete(Subject::Named("Old Site".into())))
        );
        assert_eq!(
            delete("delete the trip to Paris"),
            Some(Intent::Delete(Subject::Named("trip to Paris".into())))
        );
        assert!(matches!(delete("delete"), Some(Intent::Say(_))));
        // "remove" a thing not called an entry is something to do, not a delete.
        assert_eq!(delete("remove the batteries from the smoke alarm"), None);
        assert_eq!(delete("delete projects/a.md and projects/b.md"), None);
        assert_eq!(delete("deleted scenes are fun"), None);
    }

    #[test]
    fn undo_takes_a_few_plain_forms() {
        let undo_of = |text: &str| undo(&Utterance::new(text));
        for text in [
            "undo",
            "Undo that",
            "undo it",
            "undo the last change",
            "take that back",
            "Revert that!",
            "oops, undo that please",
            "no wait, take it back",
        ] {
            assert_eq!(undo_of(text), Some(Intent::Undo { force: false }), "{text}");
        }
        assert_eq!(undo_of("undo it anyway"), Some(Intent::Undo { force: true }));
        for text in
            ["undo the knot in the rope", "take the bins back", "take out the trash", "revert to the plan"]
        {
            assert_eq!(undo_of(text), None, "{text}");
        }
    }

    #[test]
    fn subjects_are_paths_references_or_names() {
        assert_eq!(
            scan_subject(&words("projects/x.md to done"), 0),
            Some((Subject::Path("projects/x.md".into()), 1))
        );
        assert_eq!(scan_subject(&words("that one as done"), 0), Some((Subject::Recent, 2)));
        assert_eq!(scan_subject(&words("the last entry"), 0), Some((Subject::Recent, 3)));
        assert_eq!(
            scan_subject(&words("the passport task done"), 0),
            Some((Subject::Named("the passport task".into()), 3))
        );
        assert_eq!(scan_subject(&words(""), 0), None);
    }

    #[test]
    fn a_named_entry_is_moved_when_the_message_corrects_it() {
        let moved = |text: &str| relocate(&Utterance::new(text));
        let to = |name: &str, target: Category| {
            Some(Intent::Move { subject: Subject::Named(name.into()), target })
        };
        assert_eq!(moved("actually the zine is a project"), to("the zine", Category::Projects));
        assert_eq!(moved("the bakery idea belongs in projects"), to("the bakery idea", Category::Projects));
        assert_eq!(moved("no, Priya is a person, not an idea"), to("priya", Category::People));
        // Said plainly, it may be something new to file.
        assert_eq!(moved("garden club is a project"), None);
        assert_eq!(moved("actually Sam is a great friend"), None);
    }

    #[test]
    fn a_negated_category_is_not_the_target() {
        assert_eq!(move_target(&words("is a project, not an idea")), Some(Category::Projects));
        assert_eq!(move_target(&words("is not an idea it is a person")), Some(Category::People));
        assert_eq!(move_target(&words("is a great idea")), None);
    }

    #[test]
    fn updates_carry_typed_values() {
        let today = NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
        let update = |text: &str| match update(&Utterance::new(text), today) {
            Some(Intent::Update { updates, .. }) => Value::Object(updates),
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(update("push it to tomorrow"), json!({"due_date": "2026-11-22"}));
        assert_eq!(update("tag that with travel, family"), json!({"tags": ["travel", "family"]}));
        assert_eq!(update("set that to someday"), json!({"status": "someday"}));
        assert_eq!(update("call it “Garden plan”"), json!({"name": "Garden plan"}));
        assert!(matches!(update_fn("set the status of that to purple", today), Some(Intent::Say(_))));
    }

    #[test]
    fn named_entries_are_tagged_and_rescheduled() {
        let today = NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
        let update = |text: &str| update_fn(text, today);
        let named = |name: &str, updates: Value| {
            let Value::Object(updates) = updates else { unreachable!() };
            Some(Intent::Update { subject: Subject::Named(name.into()), updates })
        };
        assert_eq!(
            update("tag the garden shed with diy, weekend"),
            named("the garden shed", json!({"tags": ["diy", "weekend"]}))
        );
        assert_eq!(
            update("push the dentist appointment to Friday"),
            named("the dentist appointment", json!({"due_date": "2026-11-27"}))
        );
        assert_eq!(
            update("postpone the passport renewal until Dec 20"),
            named("the passport renewal", json!({"due_date": "2026-12-20"}))
        );
        assert_eq!(
            update("reschedule the vet visit to next week"),
            named("the vet visit", json!({"due_date": "2026-11-28"}))
        );
        // A place, or a date with more after it, is no reschedule.
        assert_eq!(update("push the car to the garage"), None);
        assert_eq!(update("push the car to the garage on Friday"), None);
        assert_eq!(update("move the couch to the garage"), None);
    }

    fn update_fn(text: &str, today: NaiveDate) -> Option<Intent> {
        update(&Utterance::new(text), today)
    }
}
