//! Statements about something the vault already holds, said in passing rather than as a
//! command: a status ("the cello project is blocked", "kitchen renovation: done", "ClientCo
//! is waiting on Sarah"), a due date ("the passport renewal is due Dec 20"), or a fact about
//! someone or something ("Priya's birthday is March 3", "Sam's phone is 555 0100"). Each
//! becomes an update of the entry so named, once a look-up finds it by that name; when
//! none has it the statement is filed instead (see [`super::fallback`]).

use chrono::NaiveDate;
use kb_domain::fields::keys;
use serde_json::{Map, Value, json};

use super::changes;
use super::intent::Intent;
use super::keywords::status_word;
use super::utterance::{Utterance, starts_with};

/// Words that open a sentence without naming an entry ("I am blocked", "what is due").
const NOT_NAMES: &[&str] = &[
    "i",
    "we",
    "you",
    "he",
    "she",
    "they",
    "it",
    "that",
    "this",
    "there",
    "here",
    "what",
    "who",
    "which",
    "where",
    "when",
    "why",
    "how",
    "is",
    "are",
    "everything",
    "nothing",
    "something",
    "someone",
    "everyone",
    "today",
    "tomorrow",
    "today's",
    "life",
    "weather",
    "traffic",
    "my",
    "a",
    "an",
    "if",
    "do",
    "does",
    "did",
    "can",
    "should",
    "would",
    "could",
    "will",
];

/// Ways of saying a status beyond its own word, as (phrase, status).
const STATUS_PHRASES: &[(&str, &str)] = &[
    ("no longer blocked", "active"),
    ("not blocked anymore", "active"),
    ("not blocked any more", "active"),
    ("unblocked", "active"),
    ("back on", "active"),
    ("back on track", "active"),
    ("in progress", "active"),
    ("underway", "active"),
    ("under way", "active"),
    ("resumed", "active"),
    ("on hold", "someday"),
    ("paused", "someday"),
    ("parked", "someday"),
    ("shelved", "someday"),
    ("stalled", "blocked"),
    ("wrapped up", "done"),
    ("all done", "done"),
    ("over", "done"),
];

/// Words that may close a status statement ("active again", "blocked for now").
const STATUS_TAILS: &[&str] = &["again", "now", "anymore", "already", "finally", "for now", "at last", "too"];

/// Names of a fact as people say them, as (words, field key); any other one to three words
/// name a field of their own ("favourite tea" → `favourite_tea`).
const FACT_FIELDS: &[(&str, &str)] = &[
    ("birthday", "birthday"),
    ("date of birth", "birthday"),
    ("dob", "birthday"),
    ("phone number", "phone"),
    ("phone", "phone"),
    ("number", "phone"),
    ("cell", "phone"),
    ("mobile", "phone"),
    ("mobile number", "phone"),
    ("cell number", "phone"),
    ("email address", "email"),
    ("email", "email"),
    ("e-mail", "email"),
    ("home address", "address"),
    ("address", "address"),
];

/// A statement about an entry named in words, if the message is one.
pub fn said(u: &Utterance, today: NaiveDate) -> Option<Intent> {
    fact(u, today).or_else(|| status(u, today))
}

/// Whether the words from 0 to `end` may be an entry's name.
fn names_entry(w: &[String], end: usize) -> bool {
    (1..=6).contains(&end) && !NOT_NAMES.contains(&w[0].as_str()) && !w[..end].iter().any(|x| x == "'s")
}

/// "the cello project is blocked", "kitchen renovation: done", "the passport renewal is due
/// Dec 20": the status or due date of the entry so named.
fn status(u: &Utterance, today: NaiveDate) -> Option<Intent> {
    let w = u.core();
    let base = u.core_start();
    if let Some(intent) = stuck_on(u) {
        return Some(intent);
    }
    let copula = (1..w.len()).find(|&k| matches!(w[k].as_str(), "is" | "are" | "was"));
    // "cello project blocked": a name and a status, nothing between.
    if copula.is_none()
        && !u.original.contains(':')
        && let Some(k) =
            (1..w.len()).find(|&k| status_at(&w, k).is_some_and(|(_, after)| ends_statement(&w, after)))
        && names_entry(&w, k)
        && let Some((status, _)) = status_at(&w, k)
    {
        return Some(update(u.span(base, base + k), keys::STATUS, json!(status)));
    }
    // "cello project: blocked" — the name before a colon.
    let colon = u.original.find(':').and_then(|at| u.words.iter().position(|x| x.start > at));
    let (end, i) = match (copula, colon) {
        (_, Some(c)) if c > base && c - base < w.len() => (c - base, c - base),
        (Some(k), _) => (k, k + 1),
        _ => return None,
    };
    if !names_entry(&w, end) {
        return None;
    }
    let name = u.span(base, base + end);
    let mut i = i;
    while w.get(i).is_some_and(|x| {
        matches!(
            x.as_str(),
            "now" | "really" | "finally" | "officially" | "totally" | "completely" | "all" | "basically"
        )
    }) {
        i += 1;
    }
    if w.get(i).is_some_and(|x| x == "due") {
        return match changes::value_of(u, keys::DUE_DATE, i + 1, today) {
            Ok(date) => Some(update(name, keys::DUE_DATE, date)),
            Err(_) => None,
        };
    }
    let (status, after) = status_at(&w, i)?;
    // "waiting on Sarah", "blocked by legal": the status, with what it waits on.
    let closes = ends_statement(&w, after)
        || (matches!(status, "waiting" | "blocked")
            && w.get(after).is_some_and(|x| matches!(x.as_str(), "on" | "for" | "by" | "until")));
    closes.then(|| update(name, keys::STATUS, json!(status)))
}

/// "blocked on the cello project", "we're stuck on the kitchen renovation": the entry named
/// after "on" is blocked.
fn stuck_on(u: &Utterance) -> Option<Intent> {
    let w = u.core();
    let base = u.core_start();
    let from = ["i am", "we are", "i was", "we were", "still"]
        .iter()
        .find(|p| starts_with(&w, p))
        .map_or(0, |p| p.split(' ').count());
    let (status, after) = status_at(&w, from)?;
    let with = w.get(after).is_some_and(|x| x == "on" || x == "with");
    let named = w.len().saturating_sub(after + 1);
    (status == "blocked" && with && (1..=6).contains(&named))
        .then(|| update(u.span(base + after + 1, base + w.len()), keys::STATUS, json!(status)))
}

/// The status said at word `i`, and where the words after it begin.
pub(super) fn status_at(w: &[String], i: usize) -> Option<(&'static str, usize)> {
    let rest = &w[i.min(w.len())..];
    let mut phrases: Vec<&(&str, &str)> = STATUS_PHRASES.iter().collect();
    phrases.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
    if let Some((phrase, status)) = phrases.into_iter().find(|(p, _)| starts_with(rest, p)) {
        return Some((status, i + phrase.split(' ').count()));
    }
    status_word(rest.first()?).map(|s| (s, i + 1))
}

/// Whether nothing but closing words ("again", "for now") follow word `i`.
fn ends_statement(w: &[String], i: usize) -> bool {
    let mut i = i;
    while i < w.len() {
        match STATUS_TAILS.iter().find(|t| starts_with(&w[i..], t)) {
            Some(tail) => i += tail.split(' ').count(),
            None => return false,
        }
    }
    true
}

/// "Priya's birthday is March 3", "the cello project's next step is booking the hall": a field
/// of the entry named before the "'s", set to what follows "is" (or a colon).
fn fact(u: &Utterance, today: NaiveDate) -> Option<Intent> {
    let w = u.core();
    let base = u.core_start();
    // "set Priya's birthday to March 3", "add Priya's birthday: March 3"
    let lead =
        usize::from(w.first().is_some_and(|x| matches!(x.as_str(), "set" | "change" | "update" | "add")));
    let owner = w.iter().position(|x| x == "'s")?;
    if owner <= lead || !names_entry(&w[lead..], owner - lead) {
        return None;
    }
    let colon = u
        .original
        .find(':')
        .and_then(|at| u.words.iter().position(|x| x.start > at))
        .map(|c| c.saturating_sub(base));
    // "Priya's birthday is March 3", "Priya's birthday's March 3", "Priya's birthday: March 3"
    let copula = (owner + 1..w.len()).find(|&k| {
        matches!(w[k].as_str(), "is" | "are" | "=")
            || (w[k] == "'s" && k > owner + 1)
            || (lead == 1 && matches!(w[k].as_str(), "to" | "as"))
            || Some(k) == colon
    })?;
    let mut field_from = owner + 1;
    while w.get(field_from).is_some_and(|x| matches!(x.as_str(), "new" | "current" | "latest" | "actual")) {
        field_from += 1;
    }
    if copula <= field_from || copula - field_from > 3 {
        return None;
    }
    let said = w[field_from..copula].join(" ");
    let field = field_key(&said)?;
    let value_from = if Some(copula) == colon { copula } else { copula + 1 };
    let mut from = value_from;
    while w.get(from).is_some_and(|x| matches!(x.as_str(), "on" | "called" | "named" | "now")) {
        from += 1;
    }
    let name = without_possessive(&u.span(base + lead, base + owner));
    let value = match field.as_str() {
        keys::DUE_DATE
        | keys::STATUS
        | keys::TAGS
        | keys::NAME
        | keys::NEXT_ACTION
        | keys::CONTEXT
        | keys::ONE_LINER => changes::value_of(u, &field, from, today).ok()?,
        _ => {
            let text = u.rest_from(base + from);
            if text.is_empty() {
                return None;
            }
            json!(text)
        }
    };
    Some(update(name, &field, value))
}

/// The field key a fact's words name: kb's own fields by their names, the usual facts about
/// people by theirs, any other words joined with underscores.
fn field_key(said: &str) -> Option<String> {
    let words = Utterance::new(said).texts();
    if let Some((key, end)) = changes::field_named(&words, 0)
        && end == words.len()
    {
        return Some(key.to_string());
    }
    let joined = words.join(" ");
    if let Some((_, key)) = FACT_FIELDS.iter().find(|(w, _)| *w == joined) {
        return Some((*key).to_string());
    }
    let plain = words.iter().all(|x| x.chars().all(|c| c.is_alphanumeric() || c == '-'));
    (plain && !words.is_empty()).then(|| words.join("_").replace('-', "_"))
}

/// A name as written before its "'s" ("Priya's" → "Priya").
fn without_possessive(name: &str) -> String {
    let name = name.trim_end_matches("'s").trim_end_matches("’s");
    name.to_string()
}

fn update(name: String, field: &str, value: Value) -> Intent {
    let mut updates = Map::new();
    updates.insert(field.to_string(), value);
    Intent::Tell { name, updates }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<Intent> {
        said(&Utterance::new(text), NaiveDate::from_ymd_opt(2026, 11, 21).unwrap())
    }

    fn named(name: &str, updates: Value) -> Option<Intent> {
        let Value::Object(updates) = updates else { unreachable!() };
        Some(Intent::Tell { name: name.into(), updates })
    }

    #[test]
    fn statements_about_named_entries_are_updates() {
        assert_eq!(
            read("the cello project is blocked"),
            named("the cello project", json!({"status": "blocked"}))
        );
        assert_eq!(read("cello project: on hold"), named("cello project", json!({"status": "someday"})));
        assert_eq!(read("Priya's birthday is March 3"), named("Priya", json!({"birthday": "March 3"})));
        assert_eq!(read("the shed is due Friday"), named("the shed", json!({"due_date": "2026-11-27"})));
        for other in [
            "I am blocked",
            "Sam is stuck in traffic",
            "the plumber is coming on Friday",
            "what is due",
            "my sister's dog is cute and fluffy and very loud",
            "it's done",
        ] {
            assert_eq!(read(other), None, "{other}");
        }
    }
}
