#![allow(clippy::unwrap_used, clippy::expect_used)]
//! How the offline model reads everyday phrasing, through the real chat turn: each row is a
//! message a person might type to kb without an API key, sent to a real assistant over a
//! small seeded vault (people, projects, admin, ideas). A row names the tools the turn called
//! (`a>b`: first a, then b), a subset of the last call's arguments, and what happened to the
//! files: nothing, one entry changed (holding some text), or a new entry filed.

use std::collections::BTreeMap;
use std::path::Path;

use kb_core::domain::turn_events::TurnEvent;
use kb_core::{Assistant, Config};
use serde_json::{Value, json};

/// What a row's turn did to the vault's files.
#[derive(Debug, Clone, Copy)]
enum Effect {
    /// No file changed.
    Nothing,
    /// Only this entry changed, and now holds this text ("" checks no text).
    Changed(&'static str, &'static str),
    /// One new entry, in this folder; no other file changed.
    Filed(&'static str),
}
use Effect::{Changed, Filed, Nothing};

/// The seeded vault: a few entries of each kind.
const SEEDS: &[(&str, &str)] = &[
    (
        "people/priya-raman.md",
        "---\nname: Priya Raman\ncontext: Robotics meetup\n---\nMet at the robotics meetup. Likes climbing.\n",
    ),
    ("people/jose-alvarez.md", "---\nname: José Álvarez\ncontext: Neighbour\n---\nLends us his ladder.\n"),
    ("people/sam-lee.md", "---\nname: Sam Lee\ncontext: College friend\n---\nLives in Oslo.\n"),
    (
        "projects/cello-recital.md",
        "---\nname: Cello recital\nstatus: active\nnext_action: Practise the Bach suite\n---\nSpring recital.\n",
    ),
    (
        "projects/kitchen-renovation.md",
        "---\nname: Kitchen renovation\nstatus: active\nnext_action: Get three quotes\n---\nNew cabinets.\n",
    ),
    (
        "projects/clientco-integration.md",
        "---\nname: ClientCo integration\nstatus: active\nnext_action: Email Sarah the spec\n---\nAPI work.\n",
    ),
    ("admin/renew-passport.md", "---\nname: Renew passport\nstatus: pending\ndue_date: 2026-12-15\n---\n"),
    ("admin/pay-rent.md", "---\nname: Pay rent\nstatus: pending\ndue_date: 2026-12-01\n---\n"),
    (
        "ideas/urban-gardening-podcast.md",
        "---\nname: Urban gardening podcast\none_liner: A podcast about growing food in cities\n---\n",
    ),
];

/// Every note in a folder of the vault, outside kb's own `.kb/`, with its text (the vault's
/// top-level index, which kb keeps, is left out).
fn files(root: &Path) -> BTreeMap<String, String> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|item| item.unwrap())
        .filter(|item| item.file_type().is_file() && !item.path().starts_with(root.join(".kb")))
        .map(|item| {
            let relative = item.path().strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            (relative, std::fs::read_to_string(item.path()).unwrap_or_default())
        })
        .filter(|(path, _)| path.contains('/') && !path.starts_with(".git/") && path.ends_with(".md"))
        .collect()
}

/// Whether every key of `expected` is in `actual` with the same value (objects compared the
/// same way, so a subset of nested fields may be given; strings ignore case).
fn contains(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => {
            e.iter().all(|(k, v)| a.get(k).is_some_and(|found| contains(found, v)))
        }
        (Value::String(a), Value::String(e)) => a.to_lowercase() == e.to_lowercase(),
        _ => actual == expected,
    }
}

/// What one row's turn did: the tools called with their arguments, and the files after.
struct Outcome {
    calls: Vec<(String, Value)>,
    answer: String,
    before: BTreeMap<String, String>,
    after: BTreeMap<String, String>,
}

/// Sends `message` as the first turn of a conversation with the offline model over a fresh
/// seeded vault.
async fn turn(message: &str) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in SEEDS {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let kb = Assistant::open(Config::offline(dir.path())).await.unwrap();
    let before = files(dir.path());
    let (sender, mut events) = tokio::sync::mpsc::unbounded_channel();
    let reply = kb.chat().send_with_events(None, message, sender).await.unwrap();
    let mut calls = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let TurnEvent::ToolStarted { name, arguments } = event {
            calls.push((name, arguments));
        }
    }
    let after = files(dir.path());
    kb.close().await;
    Outcome { calls, answer: reply.message.content, before, after }
}

/// Why a row failed, or `None` when its turn did what the row says.
fn check(message: &str, tools: &str, args: &Value, effect: Effect, outcome: &Outcome) -> Option<String> {
    let called: Vec<&str> = outcome.calls.iter().map(|(name, _)| name.as_str()).collect();
    let expected: Vec<&str> = tools.split('>').collect();
    let last_args = outcome.calls.last().map(|(_, a)| a.clone()).unwrap_or(Value::Null);
    let fail = |why: String| {
        Some(format!("{message:?}: {why}\n  calls: {:?}\n  answer: {}", outcome.calls, outcome.answer))
    };
    if called != expected {
        return fail(format!("called {called:?}, expected {expected:?}"));
    }
    // After a second call, the answer tells what it found, not the miss that led to it.
    if expected.len() > 1 && outcome.answer.contains("not found") {
        return fail("the answer tells of the miss".to_string());
    }
    if !contains(&last_args, args) {
        return fail(format!("arguments {last_args} lack {args}"));
    }
    let changed: Vec<&String> = outcome
        .after
        .iter()
        .filter(|(path, text)| outcome.before.get(*path) != Some(*text))
        .map(|(path, _)| path)
        .chain(outcome.before.keys().filter(|path| !outcome.after.contains_key(*path)))
        .collect();
    match effect {
        Nothing if !changed.is_empty() => fail(format!("changed {changed:?}, expected nothing")),
        Changed(path, text) => {
            let holds = outcome.after.get(path).is_some_and(|t| t.contains(text));
            if changed == [path] && holds {
                return None;
            }
            fail(format!("changed {changed:?}, expected only {path} holding {text:?}"))
        }
        Filed(folder) => {
            let new = changed.len() == 1
                && !outcome.before.contains_key(changed[0])
                && changed[0].starts_with(folder);
            if new {
                return None;
            }
            fail(format!("changed {changed:?}, expected one new entry in {folder}"))
        }
        _ => None,
    }
}

/// The table: (message, tools called, arguments of the last call (a subset), effect on files).
fn rows() -> Vec<(&'static str, &'static str, Value, Effect)> {
    let daily = || json!({"type": "daily"});
    let weekly = || json!({"type": "weekly"});
    vec![
        // What is on today: the daily digest (what is due, overdue, active), not a search.
        ("what's on my plate today?", "generate_digest", daily(), Nothing),
        ("What's on my plate", "generate_digest", daily(), Nothing),
        ("whats on my plate this week", "generate_digest", daily(), Nothing),
        ("what should I focus on", "generate_digest", daily(), Nothing),
        ("What should I focus on today?", "generate_digest", daily(), Nothing),
        ("wat should i focus on", "generate_digest", daily(), Nothing),
        ("what should i be working on right now?", "generate_digest", daily(), Nothing),
        ("anything due this week?", "generate_digest", daily(), Nothing),
        ("Anything due today?", "generate_digest", daily(), Nothing),
        ("what's due this week", "generate_digest", daily(), Nothing),
        ("whats due soon", "generate_digest", daily(), Nothing),
        ("is anything overdue?", "generate_digest", daily(), Nothing),
        ("what's overdue", "generate_digest", daily(), Nothing),
        ("what do I have today?", "generate_digest", daily(), Nothing),
        ("what's on the agenda today", "generate_digest", daily(), Nothing),
        ("whats on my agenda?", "generate_digest", daily(), Nothing),
        ("What’s on for today?", "generate_digest", daily(), Nothing),
        ("what needs my attention?", "generate_digest", daily(), Nothing),
        ("anything urgent?", "generate_digest", daily(), Nothing),
        ("what's urgent", "generate_digest", daily(), Nothing),
        ("what's coming up?", "generate_digest", daily(), Nothing),
        ("what's coming up this week?", "generate_digest", daily(), Nothing),
        ("what do i need to do today", "generate_digest", daily(), Nothing),
        ("what do I need to get done this week?", "generate_digest", daily(), Nothing),
        ("where should I start today?", "generate_digest", daily(), Nothing),
        ("how's my day looking?", "generate_digest", daily(), Nothing),
        ("how does today look", "generate_digest", daily(), Nothing),
        ("morning briefing please", "generate_digest", daily(), Nothing),
        ("brief me", "generate_digest", daily(), Nothing),
        ("catch me up", "generate_digest", daily(), Nothing),
        ("give me the rundown for today", "generate_digest", daily(), Nothing),
        ("plan for today?", "generate_digest", daily(), Nothing),
        ("todays plan", "generate_digest", daily(), Nothing),
        ("what's next?", "generate_digest", daily(), Nothing),
        ("what should I do next", "generate_digest", daily(), Nothing),
        ("Daily digest", "generate_digest", daily(), Nothing),
        ("start my day", "generate_digest", daily(), Nothing),
        ("good morning! what's on today?", "generate_digest", daily(), Nothing),
        // Looking back over the week: the weekly review.
        ("how did this week go?", "generate_digest", weekly(), Nothing),
        ("weekly review please", "generate_digest", weekly(), Nothing),
        ("recap my week", "generate_digest", weekly(), Nothing),
        ("review the week", "generate_digest", weekly(), Nothing),
        ("what did I get done this week?", "generate_digest", weekly(), Nothing),
        ("what happened this week", "generate_digest", weekly(), Nothing),
        ("let's do the weekly review", "generate_digest", weekly(), Nothing),
        ("How was my week", "generate_digest", weekly(), Nothing),
        // Asking about someone or something the vault knows: that entry, with its notes.
        ("what do I know about Priya?", "get_entry", json!({"path": "Priya"}), Nothing),
        ("tell me about Priya", "get_entry", json!({"path": "Priya"}), Nothing),
        ("Tell me about Priya Raman.", "get_entry", json!({"path": "Priya Raman"}), Nothing),
        ("what do i know about priya", "get_entry", json!({"path": "priya"}), Nothing),
        ("who's Priya?", "get_entry", json!({"path": "Priya"}), Nothing),
        ("who is priya again", "get_entry", json!({"path": "priya"}), Nothing),
        ("remind me who Priya is", "get_entry", json!({"path": "Priya"}), Nothing),
        ("what have I got on Priya?", "get_entry", json!({"path": "Priya"}), Nothing),
        ("anything on Priya?", "get_entry", json!({"path": "Priya"}), Nothing),
        ("what do you know about priya raman", "get_entry", json!({"path": "priya raman"}), Nothing),
        ("what can you tell me about Priya?", "get_entry", json!({"path": "Priya"}), Nothing),
        ("everything about Priya", "get_entry", json!({"path": "Priya"}), Nothing),
        ("what do I have on José?", "get_entry", json!({"path": "José"}), Nothing),
        ("tell me about Jose", "get_entry", json!({"path": "Jose"}), Nothing),
        ("info on josé álvarez", "get_entry", json!({"path": "josé álvarez"}), Nothing),
        ("who is Sam Lee", "get_entry", json!({"path": "Sam Lee"}), Nothing),
        ("what about Sam?", "get_entry", json!({"path": "Sam"}), Nothing),
        ("tell me abt sam", "get_entry", json!({"path": "sam"}), Nothing),
        ("what do I know about ClientCo", "get_entry", json!({"path": "ClientCo"}), Nothing),
        (
            "tell me about the kitchen renovation",
            "get_entry",
            json!({"path": "the kitchen renovation"}),
            Nothing,
        ),
        (
            "what's the deal with the cello project?",
            "get_entry",
            json!({"path": "the cello project"}),
            Nothing,
        ),
        ("fill me in on the cello project", "get_entry", json!({"path": "the cello project"}), Nothing),
        ("catch me up on Priya", "get_entry", json!({"path": "Priya"}), Nothing),
        ("bring me up to speed on clientco", "get_entry", json!({"path": "clientco"}), Nothing),
        ("how's the cello project going?", "get_entry", json!({"path": "the cello project"}), Nothing),
        (
            "where am I with the kitchen renovation?",
            "get_entry",
            json!({"path": "the kitchen renovation"}),
            Nothing,
        ),
        (
            "what's the status of the cello project?",
            "get_entry",
            json!({"path": "the cello project"}),
            Nothing,
        ),
        ("when is the passport renewal due?", "get_entry", json!({"path": "the passport renewal"}), Nothing),
        ("what do I know about the podcast idea", "get_entry", json!({"path": "the podcast idea"}), Nothing),
        ("show me Priya", "get_entry", json!({"path": "Priya"}), Nothing),
        ("pull up José's entry", "get_entry", json!({"path": "José's entry"}), Nothing),
        // A topic one entry clearly holds: that entry (the tool finds it by its words).
        ("what do I know about climbing?", "get_entry", json!({"path": "climbing"}), Nothing),
        ("tell me about robotics", "get_entry", json!({"path": "robotics"}), Nothing),
        ("anything on cabinets?", "get_entry", json!({"path": "cabinets"}), Nothing),
        // Asking about something no entry holds: the question becomes a search.
        (
            "what do I know about quantum physics?",
            "get_entry>search_entries",
            json!({"query": "quantum physics"}),
            Nothing,
        ),
        (
            "tell me about the Lisbon trip",
            "get_entry>search_entries",
            json!({"query": "Lisbon trip"}),
            Nothing,
        ),
        ("who is Dana?", "get_entry>search_entries", json!({"query": "Dana"}), Nothing),
        // Plain searches stay searches.
        ("find Priya", "search_entries", json!({"query": "Priya"}), Nothing),
        ("search for passport", "search_entries", json!({"query": "passport"}), Nothing),
        ("Search robotics", "search_entries", json!({"query": "robotics"}), Nothing),
        ("look up the ladder", "search_entries", json!({"query": "ladder"}), Nothing),
        ("find notes on ClientCo", "search_entries", json!({"query": "ClientCo"}), Nothing),
        ("any notes mentioning climbing?", "search_entries", json!({"query": "climbing"}), Nothing),
        ("where did I write about gardening", "search_entries", json!({"query": "gardening"}), Nothing),
        (
            "search ideas for podcast",
            "search_entries",
            json!({"query": "podcast", "category": "ideas"}),
            Nothing,
        ),
        ("find stuff about cabinets", "search_entries", json!({"query": "cabinets"}), Nothing),
        ("search for \"urban gardening\"", "search_entries", json!({"query": "urban gardening"}), Nothing),
        ("look for Oslo", "search_entries", json!({"query": "Oslo"}), Nothing),
        (
            "find Bach in my projects",
            "search_entries",
            json!({"query": "Bach", "category": "projects"}),
            Nothing,
        ),
        // A project's status said in passing: that project's status changes.
        (
            "the cello project is blocked",
            "get_entry>update_entry",
            json!({"updates": {"status": "blocked"}}),
            Changed("projects/cello-recital.md", "status: blocked"),
        ),
        (
            "Cello project is blocked.",
            "get_entry>update_entry",
            json!({"updates": {"status": "blocked"}}),
            Changed("projects/cello-recital.md", "status: blocked"),
        ),
        (
            "the cello recital is stuck",
            "get_entry>update_entry",
            json!({"updates": {"status": "blocked"}}),
            Changed("projects/cello-recital.md", "status: blocked"),
        ),
        (
            "cello project: blocked",
            "get_entry>update_entry",
            json!({"updates": {"status": "blocked"}}),
            Changed("projects/cello-recital.md", "status: blocked"),
        ),
        (
            "The kitchen renovation is done!",
            "get_entry>update_entry",
            json!({"updates": {"status": "done"}}),
            Changed("projects/kitchen-renovation.md", "status: done"),
        ),
        (
            "kitchen renovation is finished",
            "get_entry>update_entry",
            json!({"updates": {"status": "done"}}),
            Changed("projects/kitchen-renovation.md", "status: done"),
        ),
        (
            "the kitchen renovation is complete",
            "get_entry>update_entry",
            json!({"updates": {"status": "done"}}),
            Changed("projects/kitchen-renovation.md", "status: done"),
        ),
        (
            "ClientCo integration is on hold",
            "get_entry>update_entry",
            json!({"updates": {"status": "someday"}}),
            Changed("projects/clientco-integration.md", "status: someday"),
        ),
        (
            "the clientco project is waiting",
            "get_entry>update_entry",
            json!({"updates": {"status": "waiting"}}),
            Changed("projects/clientco-integration.md", "status: waiting"),
        ),
        (
            "clientco is waiting on Sarah",
            "get_entry>update_entry",
            json!({"updates": {"status": "waiting"}}),
            Changed("projects/clientco-integration.md", "status: waiting"),
        ),
        (
            "the cello project is active again",
            "get_entry>update_entry",
            json!({"updates": {"status": "active"}}),
            Changed("projects/cello-recital.md", "status: active"),
        ),
        (
            "mark the cello project as blocked",
            "update_entry",
            json!({"updates": {"status": "blocked"}}),
            Changed("projects/cello-recital.md", "status: blocked"),
        ),
        (
            "mark the kitchen renovation done",
            "update_entry",
            json!({"updates": {"status": "done"}}),
            Changed("projects/kitchen-renovation.md", "status: done"),
        ),
        (
            "set the cello project to someday",
            "update_entry",
            json!({"updates": {"status": "someday"}}),
            Changed("projects/cello-recital.md", "status: someday"),
        ),
        (
            "done with the kitchen renovation",
            "get_entry>update_entry",
            json!({"updates": {"status": "done"}}),
            Changed("projects/kitchen-renovation.md", "status: done"),
        ),
        (
            "I finished the cello recital",
            "get_entry>update_entry",
            json!({"updates": {"status": "done"}}),
            Changed("projects/cello-recital.md", "status: done"),
        ),
        (
            "finished the kitchen renovation!",
            "get_entry>update_entry",
            json!({"updates": {"status": "done"}}),
            Changed("projects/kitchen-renovation.md", "status: done"),
        ),
        (
            "the passport renewal is done",
            "get_entry>update_entry",
            json!({"updates": {"status": "done"}}),
            Changed("admin/renew-passport.md", "status: done"),
        ),
        (
            "mark pay rent as done",
            "update_entry",
            json!({"updates": {"status": "done"}}),
            Changed("admin/pay-rent.md", "status: done"),
        ),
        (
            "the cello project is no longer blocked",
            "get_entry>update_entry",
            json!({"updates": {"status": "active"}}),
            Changed("projects/cello-recital.md", "status: active"),
        ),
        (
            "the cello project is unblocked",
            "get_entry>update_entry",
            json!({"updates": {"status": "active"}}),
            Changed("projects/cello-recital.md", "status: active"),
        ),
        (
            "put the kitchen renovation on hold",
            "update_entry",
            json!({"updates": {"status": "someday"}}),
            Changed("projects/kitchen-renovation.md", "status: someday"),
        ),
        (
            "the kitchen renovation is paused",
            "get_entry>update_entry",
            json!({"updates": {"status": "someday"}}),
            Changed("projects/kitchen-renovation.md", "status: someday"),
        ),
        // A project no entry is named: the statement is filed as it was said.
        (
            "the garden shed project is blocked",
            "get_entry>classify_and_capture",
            json!({"text": "the garden shed project is blocked"}),
            Filed(""),
        ),
        // A fact about someone the vault knows: added to that person's entry.
        (
            "Priya's birthday is March 3",
            "get_entry>update_entry",
            json!({"path": "people/priya-raman.md", "updates": {"birthday": "March 3"}}),
            Changed("people/priya-raman.md", "birthday: March 3"),
        ),
        (
            "priya's bday is 3rd march",
            "get_entry>update_entry",
            json!({"path": "people/priya-raman.md", "updates": {"birthday": "3rd march"}}),
            Changed("people/priya-raman.md", "birthday: 3rd march"),
        ),
        (
            "José's birthday is on June 12",
            "get_entry>update_entry",
            json!({"updates": {"birthday": "June 12"}}),
            Changed("people/jose-alvarez.md", "birthday: June 12"),
        ),
        (
            "Jose's birthday: June 12",
            "get_entry>update_entry",
            json!({"updates": {"birthday": "June 12"}}),
            Changed("people/jose-alvarez.md", "birthday: June 12"),
        ),
        (
            "Sam Lee's phone number is 555-0100",
            "get_entry>update_entry",
            json!({"updates": {"phone": "555-0100"}}),
            Changed("people/sam-lee.md", "555-0100"),
        ),
        (
            "sam's phone is 555 0100",
            "get_entry>update_entry",
            json!({"updates": {"phone": "555 0100"}}),
            Changed("people/sam-lee.md", "555 0100"),
        ),
        (
            "Priya's email is priya@example.com",
            "get_entry>update_entry",
            json!({"updates": {"email": "priya@example.com"}}),
            Changed("people/priya-raman.md", "priya@example.com"),
        ),
        (
            "Priya's email address is priya@example.com",
            "get_entry>update_entry",
            json!({"updates": {"email": "priya@example.com"}}),
            Changed("people/priya-raman.md", "priya@example.com"),
        ),
        (
            "Sam's new address is 12 Elm St",
            "get_entry>update_entry",
            json!({"updates": {"address": "12 Elm St"}}),
            Changed("people/sam-lee.md", "12 Elm St"),
        ),
        (
            "Priya's partner is Tom",
            "get_entry>update_entry",
            json!({"updates": {"partner": "Tom"}}),
            Changed("people/priya-raman.md", "Tom"),
        ),
        (
            "priya's favourite tea is oolong",
            "get_entry>update_entry",
            json!({"updates": {"favourite_tea": "oolong"}}),
            Changed("people/priya-raman.md", "oolong"),
        ),
        (
            "José’s wife is called Ana",
            "get_entry>update_entry",
            json!({"updates": {"wife": "Ana"}}),
            Changed("people/jose-alvarez.md", "Ana"),
        ),
        (
            "Priya Raman's birthday is 3 March",
            "get_entry>update_entry",
            json!({"updates": {"birthday": "3 March"}}),
            Changed("people/priya-raman.md", "3 March"),
        ),
        (
            "the cello project's next step is booking the hall",
            "get_entry>update_entry",
            json!({"updates": {"next_action": "booking the hall"}}),
            Changed("projects/cello-recital.md", "booking the hall"),
        ),
        (
            "Kitchen renovation's budget is $12k",
            "get_entry>update_entry",
            json!({"updates": {"budget": "$12k"}}),
            Changed("projects/kitchen-renovation.md", "12k"),
        ),
        // Someone the vault does not know: the fact is filed as a new note.
        (
            "Dana's birthday is May 5",
            "get_entry>classify_and_capture",
            json!({"text": "Dana's birthday is May 5"}),
            Filed(""),
        ),
        // Dates for what is already there.
        (
            "the passport renewal is due Dec 20",
            "get_entry>update_entry",
            json!({"updates": {"due_date": "2026-12-20"}}),
            Changed("admin/renew-passport.md", "2026-12-20"),
        ),
        (
            "push the cello project to 2027-04-01",
            "update_entry",
            json!({"updates": {"due_date": "2027-04-01"}}),
            Changed("projects/cello-recital.md", "2027-04-01"),
        ),
        // Lists.
        ("list my projects", "list_entries", json!({"category": "projects"}), Nothing),
        ("show me my people", "list_entries", json!({"category": "people"}), Nothing),
        (
            "which projects are blocked?",
            "list_entries",
            json!({"category": "projects", "status": "blocked"}),
            Nothing,
        ),
        ("what ideas do I have", "list_entries", json!({"category": "ideas"}), Nothing),
        ("who do I know?", "list_entries", json!({"category": "people"}), Nothing),
        ("show my todo list", "list_entries", json!({"category": "admin"}), Nothing),
        ("what's in the inbox", "list_entries", json!({"category": "inbox"}), Nothing),
        ("active projects", "list_entries", json!({"category": "projects", "status": "active"}), Nothing),
        ("all my errands", "list_entries", json!({"category": "admin"}), Nothing),
        ("list everything", "list_entries", json!({}), Nothing),
        ("WHAT'S ON MY PLATE TODAY", "generate_digest", json!({"type": "daily"}), Nothing),
        ("whats on my plate 2day", "generate_digest", json!({"type": "daily"}), Nothing),
        ("what shud i focus on", "generate_digest", json!({"type": "daily"}), Nothing),
        ("anythign due this week?", "generate_digest", json!({"type": "daily"}), Nothing),
        ("what do i have due", "generate_digest", json!({"type": "daily"}), Nothing),
        ("What do I know about priya raman??", "get_entry", json!({"path": "priya raman"}), Nothing),
        ("tell me bout José Álvarez", "get_entry", json!({"path": "José Álvarez"}), Nothing),
        ("who's josé?", "get_entry", json!({"path": "josé"}), Nothing),
        ("any updates on clientco?", "get_entry", json!({"path": "clientco"}), Nothing),
        (
            "how's it going with the kitchen renovation",
            "get_entry",
            json!({"path": "the kitchen renovation"}),
            Nothing,
        ),
        ("is the passport renewal done?", "get_entry", json!({"path": "the passport renewal"}), Nothing),
        (
            "the cello thing is blocked",
            "get_entry>update_entry",
            json!({"updates": {"status": "blocked"}}),
            Changed("projects/cello-recital.md", "status: blocked"),
        ),
        (
            "cello project blocked",
            "get_entry>update_entry",
            json!({"updates": {"status": "blocked"}}),
            Changed("projects/cello-recital.md", "status: blocked"),
        ),
        (
            "blocked on the cello project",
            "get_entry>update_entry",
            json!({"updates": {"status": "blocked"}}),
            Changed("projects/cello-recital.md", "status: blocked"),
        ),
        (
            "we're stuck on the kitchen renovation",
            "get_entry>update_entry",
            json!({"updates": {"status": "blocked"}}),
            Changed("projects/kitchen-renovation.md", "status: blocked"),
        ),
        (
            "priya’s birthday is march 3rd",
            "get_entry>update_entry",
            json!({"updates": {"birthday": "march 3rd"}}),
            Changed("people/priya-raman.md", "march 3rd"),
        ),
        (
            "Priya's birthday's March 3",
            "get_entry>update_entry",
            json!({"updates": {"birthday": "March 3"}}),
            Changed("people/priya-raman.md", "March 3"),
        ),
        // Said without "'s … is": filed, and the capture adds it to Priya's entry as a Log line.
        (
            "Priya birthday march 3",
            "classify_and_capture",
            json!({}),
            Changed("people/priya-raman.md", "Priya birthday march 3"),
        ),
        (
            "It's Priya's birthday on March 3",
            "classify_and_capture",
            json!({}),
            Changed("people/priya-raman.md", "birthday on March 3"),
        ),
        (
            "the Kitchen Renovation is DONE",
            "get_entry>update_entry",
            json!({"updates": {"status": "done"}}),
            Changed("projects/kitchen-renovation.md", "status: done"),
        ),
        ("remind me what's due", "generate_digest", json!({"type": "daily"}), Nothing),
        ("Do I have anything due?", "generate_digest", json!({"type": "daily"}), Nothing),
        ("what's happening today?", "generate_digest", json!({"type": "daily"}), Nothing),
        (
            "The ClientCo integration is blocked by legal",
            "get_entry>update_entry",
            json!({"updates": {"status": "blocked"}}),
            Changed("projects/clientco-integration.md", "status: blocked"),
        ),
        (
            "set priya's birthday to march 3",
            "get_entry>update_entry",
            json!({"path": "people/priya-raman.md", "updates": {"birthday": "march 3"}}),
            Changed("people/priya-raman.md", "birthday: march 3"),
        ),
        (
            "add José's email: jose@example.org",
            "get_entry>update_entry",
            json!({"updates": {"email": "jose@example.org"}}),
            Changed("people/jose-alvarez.md", "jose@example.org"),
        ),
        (
            "What do I know about the Álvarez family?",
            "get_entry>search_entries",
            json!({"query": "Álvarez family"}),
            Nothing,
        ),
        (
            "Sam Lee moved to Bergen",
            "classify_and_capture",
            json!({}),
            Changed("people/sam-lee.md", "Bergen"),
        ),
        ("the robotics meetup is done", "get_entry>classify_and_capture", json!({}), Filed("")),
        ("dinner is done", "get_entry>classify_and_capture", json!({}), Filed("")),
        // New things are filed.
        ("met Dana at the climbing gym, she runs a bakery", "classify_and_capture", json!({}), Filed("")),
        (
            "idea: a podcast about balcony tomatoes",
            "classify_and_capture",
            json!({"hints": "[idea]"}),
            Filed("ideas/"),
        ),
        ("renew my driving licence by Jan 10", "classify_and_capture", json!({}), Filed("")),
        ("remind me to call the plumber tomorrow", "classify_and_capture", json!({}), Filed("")),
        ("need to buy a new cello bow", "classify_and_capture", json!({}), Filed("")),
        ("what if kitchens had herb walls", "classify_and_capture", json!({}), Filed("")),
        ("Sarah from ClientCo prefers email", "classify_and_capture", json!({}), Filed("")),
        ("book the vet for the cat", "classify_and_capture", json!({}), Filed("")),
        ("[project] Garden shed", "classify_and_capture", json!({"hints": "[project]"}), Filed("projects/")),
        ("todo: return library books", "classify_and_capture", json!({"hints": "[admin]"}), Filed("admin/")),
        ("the plumber is coming on Friday", "classify_and_capture", json!({}), Filed("")),
        // Someone the vault knows, met again: the capture adds to their entry.
        (
            "had lunch with Sam Lee, he's moving to Bergen",
            "classify_and_capture",
            json!({}),
            Changed("people/sam-lee.md", "Bergen"),
        ),
    ]
}

/// How many rows run at once.
const AT_ONCE: usize = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everyday_phrasing_routes_to_the_right_tool_over_a_real_vault() {
    let rows = rows();
    assert!(rows.len() >= 150, "{} rows", rows.len());
    // Each row has its own vault; a few run at once.
    let mut running = tokio::task::JoinSet::new();
    let mut failures = Vec::new();
    for (index, (message, tools, args, effect)) in rows.iter().cloned().enumerate() {
        if running.len() >= AT_ONCE
            && let Some(done) = running.join_next().await
        {
            failures.extend(done.unwrap());
        }
        running.spawn(async move {
            let outcome = turn(message).await;
            check(message, tools, &args, effect, &outcome).map(|why| (index, why))
        });
    }
    while let Some(done) = running.join_next().await {
        failures.extend(done.unwrap());
    }
    failures.sort();
    let failures: Vec<String> = failures.into_iter().map(|(_, why)| why).collect();
    let passed = rows.len() - failures.len();
    eprintln!("{passed}/{} rows pass", rows.len());
    assert!(failures.is_empty(), "{passed}/{} rows pass; failing:\n{}", rows.len(), failures.join("\n"));
}
