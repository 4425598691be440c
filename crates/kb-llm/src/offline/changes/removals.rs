//! Requests to delete an entry ("delete projects/x.md", "remove the old site entry",
//! "delete that") and to undo the last change ("undo", "take that back", "revert that").

use super::ANCHORS;
use crate::offline::intent::{Intent, Subject};
use crate::offline::keywords::REFERENCE_WORDS;
use crate::offline::utterance::{Utterance, as_path};

/// Verbs that ask for an entry to be deleted.
const DELETERS: &[&str] = &["delete", "remove", "erase", "trash"];
/// Words that say the thing named is an entry ("remove the old site entry").
const ENTRY_WORDS: &[&str] = &["entry", "note", "item", "file", "record"];
/// Words around a path or a pointer in a delete that do not change it.
const DELETE_GLUE: &[&str] =
    &["the", "my", "a", "an", "entry", "note", "item", "file", "record", "please", "now"];

/// A request to delete one entry, if the message is one: "delete projects/x.md", "delete
/// that", "remove the old site entry". A thing named after "remove" must be called an entry
/// (so "remove the batteries from the smoke alarm" stays something to file).
pub fn remove(u: &Utterance) -> Option<Intent> {
    let base = u.core_start();
    let w = u.core();
    let verb = w.first()?.as_str();
    if !DELETERS.contains(&verb) {
        return None;
    }
    let rest = &w[1..];
    if rest.is_empty() {
        return Some(Intent::Say(
            "Which entry should I delete? Give me its path, like projects/old-site.md.".into(),
        ));
    }
    let paths: Vec<String> = rest.iter().filter_map(|x| as_path(x)).collect();
    if let [path] = paths.as_slice()
        && rest.iter().all(|x| as_path(x).is_some() || DELETE_GLUE.contains(&x.as_str()))
    {
        return Some(Intent::Delete(Subject::Path(path.clone())));
    }
    if rest.iter().all(|x| REFERENCE_WORDS.contains(&x.as_str()) || DELETE_GLUE.contains(&x.as_str()))
        && rest.iter().any(|x| ANCHORS.contains(&x.as_str()))
    {
        return Some(Intent::Delete(Subject::Recent));
    }
    // A name: the words after the verb, less articles before and "entry" after.
    let mut from = 1;
    while w.get(from).is_some_and(|x| matches!(x.as_str(), "the" | "my" | "a" | "an")) {
        from += 1;
    }
    let mut to = w.len();
    let mut called_an_entry = false;
    while to > from && ENTRY_WORDS.contains(&w[to - 1].as_str()) {
        to -= 1;
        called_an_entry = true;
    }
    if to <= from || (verb == "remove" && !called_an_entry) || paths.len() > 1 {
        return None;
    }
    Some(Intent::Delete(Subject::Named(u.span(base + from, base + to))))
}

/// A request to undo the last change: "undo", "undo that", "take that back", "revert that",
/// "undo it anyway" (forced: a file changed since is replaced, its version kept in history).
pub fn undo(u: &Utterance) -> Option<Intent> {
    let w = u.core();
    let rest = match w.first()?.as_str() {
        "undo" | "revert" => &w[1..],
        "take" if w.len() >= 3 && w.last().is_some_and(|x| x == "back") => &w[1..w.len() - 1],
        _ => return None,
    };
    let glue = ["that", "it", "this", "the", "my", "last", "latest", "change", "one", "again", "please"];
    let force = rest.iter().any(|x| matches!(x.as_str(), "anyway" | "anyways" | "force"));
    let plain = rest
        .iter()
        .all(|x| glue.contains(&x.as_str()) || matches!(x.as_str(), "anyway" | "anyways" | "force"));
    let take_back = w[0] == "take";
    (plain && (!take_back || rest.iter().any(|x| ANCHORS.contains(&x.as_str()))))
        .then_some(Intent::Undo { force })
}
