#![allow(clippy::unwrap_used, clippy::expect_used)]
//! One person, one file: capturing the same person several times, under the ways
//! people write a name — in full, the first name only, in another case, with or without its
//! accents — with the hint `[person:<as written>]`, leaves exactly one file in people/. The
//! file's `## Log` holds one dated line per capture, the first included, in order.

use std::path::Path;

use kb_core::{Assistant, CaptureOptions, CaptureSource, Category, Config};
use proptest::prelude::*;

/// A person's name as the vault first learns it, and the other ways it is written.
struct Person {
    full: &'static str,
    first: &'static str,
    /// The full name without its accents.
    plain_full: &'static str,
    /// The first name without its accents.
    plain_first: &'static str,
}

const PEOPLE: [Person; 4] = [
    Person { full: "José Álvarez", first: "José", plain_full: "Jose Alvarez", plain_first: "Jose" },
    Person { full: "Priya Raman", first: "Priya", plain_full: "Priya Raman", plain_first: "Priya" },
    Person { full: "Zoë Kim", first: "Zoë", plain_full: "Zoe Kim", plain_first: "Zoe" },
    Person { full: "Renée O'Brien", first: "Renée", plain_full: "Renee O'Brien", plain_first: "Renee" },
];

/// How many ways [`variant`] writes a name.
const VARIANTS: usize = 8;

/// The `k`th way of writing `person`'s name.
fn variant(person: &Person, k: usize) -> String {
    match k % VARIANTS {
        0 => person.full.to_string(),
        1 => person.first.to_string(),
        2 => person.full.to_lowercase(),
        3 => person.first.to_lowercase(),
        4 => person.plain_full.to_string(),
        5 => person.plain_first.to_lowercase(),
        6 => person.full.to_uppercase(),
        _ => person.plain_full.to_lowercase(),
    }
}

/// What a capture says (never a name, so no text looks like another person).
const TOPICS: [&str; 6] = [
    "likes climbing on weekends",
    "is moving to Boston in spring",
    "recommended a book on gardening",
    "wants to review the robotics kit",
    "asked about the hiking trip",
    "prefers email over calls",
];

/// One capture: which way of writing the name, which topic, and whether the hint is in the
/// text or in the `hints` argument.
#[derive(Debug, Clone)]
struct Capture {
    variant: usize,
    topic: usize,
    inline_hint: bool,
}

fn capture() -> impl Strategy<Value = Capture> {
    (0..VARIANTS, 0..TOPICS.len(), any::<bool>()).prop_map(|(variant, topic, inline_hint)| Capture {
        variant,
        topic,
        inline_hint,
    })
}

/// The `.md` files in `vault/people`.
fn people_files(vault: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(vault.join("people"))
        .map(|read| {
            read.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".md"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Whether `line` is a dated Log line `- YYYY-MM-DD: text`.
fn dated(line: &str, text: &str) -> bool {
    let Some(rest) = line.strip_prefix("- ") else { return false };
    let Some((date, said)) = rest.split_once(": ") else { return false };
    chrono_like_date(date) && said == text
}

fn chrono_like_date(date: &str) -> bool {
    let b = date.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// Captures `person` once per item of `captures` in a fresh vault and checks the one file.
async fn same_person(person: &Person, captures: &[Capture]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let kb = Assistant::open(Config::offline(dir.path())).await.unwrap();
    let mut texts = Vec::new();
    for (k, c) in captures.iter().enumerate() {
        let name = variant(person, c.variant);
        let text = format!("Note {k}: {} {}", person.first, TOPICS[c.topic]);
        let hint = format!("[person:{name}]");
        let entries = kb.entries().by(CaptureSource::Cli);
        let answer = if c.inline_hint {
            entries.capture(&format!("{hint} {text}"), &CaptureOptions::default()).await
        } else {
            entries.capture(&text, &CaptureOptions { hints: Some(hint), ..CaptureOptions::default() }).await
        };
        let answer = answer.map_err(|e| TestCaseError::fail(format!("capture {k} ({name}): {e:?}")))?;
        prop_assert_eq!(answer.category, Category::People, "capture {} ({}): {:?}", k, name, answer);
        prop_assert_eq!(answer.merged, k > 0, "capture {} ({}): {:?}", k, name, answer);
        texts.push(text);
    }
    let files = people_files(dir.path());
    prop_assert_eq!(files.len(), 1, "{:?}", files);
    let body = std::fs::read_to_string(dir.path().join("people").join(&files[0])).unwrap();
    let body = body.splitn(3, "---\n").nth(2).unwrap_or_default().to_string();
    for text in &texts {
        prop_assert!(body.contains(text.as_str()), "{:?} is not in the notes:\n{}", text, body);
    }
    // Every capture, the first included, is a dated line under the one `## Log`, in order.
    prop_assert!(body.starts_with("## Log\n"), "{}", body);
    let log: Vec<&str> = match body.split_once("## Log\n") {
        Some((_, after)) => after.lines().filter(|l| !l.trim().is_empty()).collect(),
        None => Vec::new(),
    };
    prop_assert_eq!(log.len(), texts.len(), "{}", body);
    for (line, text) in log.iter().zip(&texts) {
        prop_assert!(dated(line, text), "{:?} is not the dated line of {:?}", line, text);
    }
    prop_assert_eq!(body.matches("## Log").count(), 1, "{}", body);
    kb.close().await;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_same_person_captured_under_name_variants_stays_one_file(
        who in 0..PEOPLE.len(),
        captures in prop::collection::vec(capture(), 1..=5),
    ) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(same_person(&PEOPLE[who], &captures))?;
    }
}
