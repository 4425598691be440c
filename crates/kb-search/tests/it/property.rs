//! Search over generated vaults and queries: every hit holds every query
//! word in an indexed field — as written, by its stem, or (the last
//! word of a search-as-you-type query) as the beginning of a word; filters and limit hold;
//! hits come best first; the total is the number of matching entries counted by brute
//! force; and every entry the exact conjunction of the words finds is still found (stems
//! and prefixes only add hits).

use std::collections::BTreeMap;

use kb_domain::{Category, Entry, EntryPath, MatchedBy, SearchIndex, SearchQuery};
use kb_search::SearchLanguage;
use kb_search::analysis::{analyze, fuzzy_distance, query_parts, query_terms, stems, within_one_edit};
use proptest::prelude::*;

use crate::support::TestVault;

const WORDS: &[&str] = &[
    "alpha",
    "Alpha",
    "beta",
    "gamma",
    "delta",
    "café",
    "CAFE",
    "Zürich",
    "zurich",
    "naïve",
    "rust",
    "go",
    "x",
    "api",
    "API",
    "meeting",
    "meetings",
    "meet",
    "spec",
    "c++",
    "who's",
    "a:b",
    "sarah",
    "running",
    "run",
    "runs",
    "landlord",
    "landlords",
];

/// Beginnings of words of [`WORDS`], for search-as-you-type queries.
const STARTS: &[&str] = &["al", "me", "meet", "land", "ru", "caf", "zur", "sa", "spe"];

fn words(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 0..=max).prop_map(|w| w.join(" "))
}

#[derive(Debug, Clone)]
struct GenEntry {
    category: Category,
    name: String,
    field: String,
    tags: Vec<&'static str>,
    body: String,
}

fn gen_entry() -> impl Strategy<Value = GenEntry> {
    (
        prop::sample::select(Category::ALL.to_vec()),
        words(3),
        words(4),
        prop::collection::vec(prop::sample::select(WORDS), 0..3),
        words(12),
    )
        .prop_map(|(category, name, field, tags, body)| GenEntry { category, name, field, tags, body })
}

fn own_field(category: Category) -> &'static str {
    match category {
        Category::People => "context",
        Category::Projects => "next_action",
        Category::Ideas => "one_liner",
        Category::Admin => "extra_note",
        Category::Inbox => "original_text",
        Category::Other => "summary",
    }
}

fn document(e: &GenEntry) -> String {
    let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    let tags: Vec<String> = e.tags.iter().map(|t| q(t)).collect();
    format!(
        "---\nname: {}\n{}: {}\ntags: [{}]\n---\n{}\n",
        q(&e.name),
        own_field(e.category),
        q(&e.field),
        tags.join(", "),
        e.body
    )
}

/// The searchable text of an entry, gathered independently of the index.
fn searchable_terms(entry: &Entry) -> Vec<String> {
    let fm = &entry.frontmatter;
    let mut text = vec![entry.name(), entry.tags().join(" "), entry.body.clone()];
    for key in ["one_liner", "next_action", "context", "original_text"] {
        text.push(fm.get_str(key).unwrap_or_default().to_string());
    }
    analyze(&text.join("\n"))
}

/// Whether `entry` holds the query word `word` (whose stem is `stem`): as written, by stem,
/// or, when `completing`, as the start of a word.
fn holds(entry: &Entry, word: &str, stem: &str, completing: bool) -> bool {
    let have = searchable_terms(entry);
    have.iter().any(|h| h == word)
        || stems(&have, SearchLanguage::default()).iter().any(|s| s == stem)
        || (completing && have.iter().any(|h| h.starts_with(word)))
}

#[derive(Debug, Clone)]
struct GenQuery {
    text: String,
    category: Option<Category>,
    limit: usize,
    offset: usize,
    prefix: bool,
}

fn gen_query() -> impl Strategy<Value = GenQuery> {
    (
        prop::collection::vec(prop_oneof![prop::sample::select(WORDS), Just("zzz"), Just("-")], 1..4),
        prop::option::of(prop::sample::select(STARTS)),
        prop::option::of(prop::sample::select(Category::ALL.to_vec())),
        1usize..15,
        prop_oneof![Just(0usize), 0usize..6],
    )
        .prop_map(|(mut w, start, category, limit, offset)| {
            w.extend(start);
            GenQuery { text: w.join(" "), category, limit, offset, prefix: start.is_some() }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn search_answers_hold_property_six(
        entries in prop::collection::vec(gen_entry(), 1..25),
        queries in prop::collection::vec(gen_query(), 1..6),
    ) {
        let v = TestVault::new();
        let mut by_path: BTreeMap<String, Entry> = BTreeMap::new();
        for (i, e) in entries.iter().enumerate() {
            let rel = format!("{}/e{i}.md", e.category);
            let entry = Entry::from_document(EntryPath::parse(&rel).unwrap(), &document(e)).unwrap();
            v.write(&rel, &document(e));
            by_path.insert(rel, entry);
        }
        let index = v.open();
        for q in &queries {
            let request = SearchQuery {
                text: q.text.clone(),
                category: q.category,
                limit: q.limit,
                offset: q.offset,
                prefix: q.prefix,
    ..Default::default()
};
            let results = index.search(&request).unwrap();
            let terms = query_terms(&q.text);
            let parts = query_parts(&q.text).meaningful(SearchLanguage::default(), q.prefix);
            let word_stems = stems(&parts.words, SearchLanguage::default());
            let typing = parts.typing.as_ref().and_then(|t| parts.words.iter().position(|w| w == t));
            let completing = |i: usize| q.prefix && typing == Some(i);
            let in_category = |e: &Entry| q.category.is_none_or(|c| e.category() == c);
            let matches = |e: &Entry| {
                !parts.words.is_empty()
                    && parts.words.iter().zip(&word_stems).enumerate().all(|(i, (w, s))| holds(e, w, s, completing(i)))
            };
            let matching: Vec<&String> =
                by_path.iter().filter(|(_, e)| in_category(e) && matches(e)).map(|(p, _)| p).collect();
            // What the exact conjunction of the words finds: never lost.
            let exact: Vec<&String> = by_path
                .iter()
                .filter(|(_, e)| in_category(e))
                .filter(|(_, e)| !terms.is_empty() && terms.iter().all(|t| searchable_terms(e).contains(t)))
                .map(|(p, _)| p)
                .collect();
            for path in &exact {
                prop_assert!(matching.contains(path), "{} matches exactly but not {:?}", path, q);
            }

            prop_assert!(results.entries.len() <= q.limit);
            prop_assert!(results.entries.windows(2).all(|w| w[0].score >= w[1].score), "{:?}", results);
            for hit in &results.entries {
                prop_assert!(q.category.is_none_or(|c| hit.category == c));
                prop_assert_eq!(hit.category, hit.path.category());
                let entry = &by_path[&hit.path.to_string()];
                prop_assert_eq!(&hit.name, &entry.name());
                let have = searchable_terms(entry);
                for (i, (t, s)) in parts.words.iter().zip(&word_stems).enumerate() {
                    let found = if results.fuzzy {
                        have.iter().any(|h| h == t || (fuzzy_distance(t) > 0 && within_one_edit(t, h)))
                    } else {
                        holds(entry, t, s, completing(i))
                    };
                    prop_assert!(found, "word {:?} not in hit {} for {:?}", t, hit.path, q);
                }
            }
            if results.fuzzy {
                prop_assert!(matching.is_empty(), "fuzzy retry although {:?} match", matching);
            } else {
                prop_assert_eq!(results.total, matching.len(), "query {:?}", q);
                prop_assert_eq!(results.entries.len(), q.limit.min(matching.len().saturating_sub(q.offset)));
                for hit in &results.entries {
                    prop_assert!(matching.contains(&&hit.path.to_string()));
                }
                if q.offset == 0 && matching.len() <= q.limit {
                    let listed: Vec<String> = results.entries.iter().map(|h| h.path.to_string()).collect();
                    for path in &exact {
                        prop_assert!(listed.contains(path), "{} matches exactly but is not listed for {:?}", path, q);
                    }
                }
            }
            if terms.is_empty() {
                prop_assert!(results.entries.is_empty() && results.total == 0);
            }

            // With partial hits asked for: the same hits first, the same total, then
            // entries holding some of the words but not all, only when the page has room.
            let with_partial = index.search(&SearchQuery { partial: true, ..request.clone() }).unwrap();
            prop_assert_eq!(with_partial.total, results.total, "{:?}", q);
            prop_assert_eq!(with_partial.fuzzy, results.fuzzy);
            let all_words = with_partial.entries.iter().take_while(|h| h.matched_by != MatchedBy::Partial).count();
            prop_assert_eq!(&with_partial.entries[..all_words], &results.entries[..]);
            prop_assert!(with_partial.entries.len() <= q.limit);
            let partial = &with_partial.entries[all_words..];
            if q.prefix || parts.words.len() < 2 || results.total >= q.offset + q.limit {
                prop_assert!(partial.is_empty() && with_partial.partial_total == 0, "{:?}: {:?}", q, with_partial);
            }
            prop_assert!(partial.len() <= with_partial.partial_total);
            for hit in partial {
                prop_assert!(q.category.is_none_or(|c| hit.category == c));
                let entry = &by_path[&hit.path.to_string()];
                let held = parts.words.iter().zip(&word_stems).filter(|(w, s)| holds(entry, w, s, false)).count();
                prop_assert!(held >= 1, "partial hit {} holds none of {:?}", hit.path, q);
                prop_assert!(!matching.contains(&&hit.path.to_string()), "{} holds every word of {:?}", hit.path, q);
            }
            if !results.fuzzy && !q.prefix && parts.words.len() >= 2 && parts.exact.is_empty() && parts.phrases.is_empty() {
                let some: usize = by_path
                    .values()
                    .filter(|e| in_category(e) && !matches(e))
                    .filter(|e| parts.words.iter().zip(&word_stems).any(|(w, s)| holds(e, w, s, false)))
                    .count();
                if results.total < q.offset + q.limit {
                    prop_assert_eq!(with_partial.partial_total, some, "{:?}", q);
                    let expected = q.limit.min((results.total + some).saturating_sub(q.offset));
                    prop_assert_eq!(with_partial.entries.len(), expected, "{:?}", q);
                }
            }
        }
    }
}
