//! Property 6 of the spec over generated vaults and queries: every hit contains every
//! query term in an indexed field; filters and limit hold; hits come best first; the total
//! is the number of matching entries counted by brute force.

use std::collections::BTreeMap;

use kb_domain::{Category, Entry, EntryPath, SearchIndex, SearchQuery};
use kb_search::analysis::{analyze, fuzzy_distance, query_terms, within_one_edit};
use proptest::prelude::*;

use crate::support::TestVault;

const WORDS: &[&str] = &[
    "alpha", "Alpha", "beta", "gamma", "delta", "café", "CAFE", "Zürich", "zurich", "naïve", "rust", "go",
    "x", "api", "API", "meeting", "meetings", "spec", "c++", "who's", "a:b", "sarah",
];

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

#[derive(Debug, Clone)]
struct GenQuery {
    text: String,
    category: Option<Category>,
    limit: usize,
    offset: usize,
}

fn gen_query() -> impl Strategy<Value = GenQuery> {
    (
        prop::collection::vec(
            prop_oneof![prop::sample::select(WORDS), Just("zzz"), Just("-"), Just("\"")],
            1..4,
        ),
        prop::option::of(prop::sample::select(Category::ALL.to_vec())),
        1usize..15,
        prop_oneof![Just(0usize), 0usize..6],
    )
        .prop_map(|(w, category, limit, offset)| GenQuery { text: w.join(" "), category, limit, offset })
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
            let request = SearchQuery { text: q.text.clone(), category: q.category, limit: q.limit, offset: q.offset };
            let results = index.search(&request).unwrap();
            let terms = query_terms(&q.text);
            let matching: Vec<&String> = by_path
                .iter()
                .filter(|(_, e)| q.category.is_none_or(|c| e.category() == c))
                .filter(|(_, e)| {
                    let have = searchable_terms(e);
                    !terms.is_empty() && terms.iter().all(|t| have.contains(t))
                })
                .map(|(p, _)| p)
                .collect();

            prop_assert!(results.entries.len() <= q.limit);
            prop_assert!(results.entries.windows(2).all(|w| w[0].score >= w[1].score), "{:?}", results);
            for hit in &results.entries {
                prop_assert!(q.category.is_none_or(|c| hit.category == c));
                prop_assert_eq!(hit.category, hit.path.category());
                let entry = &by_path[&hit.path.to_string()];
                prop_assert_eq!(&hit.name, &entry.name());
                let have = searchable_terms(entry);
                for t in &terms {
                    let found = if results.fuzzy {
                        have.iter().any(|h| h == t || (fuzzy_distance(t) > 0 && within_one_edit(t, h)))
                    } else {
                        have.contains(t)
                    };
                    prop_assert!(found, "term {:?} not in hit {} for {:?}", t, hit.path, q);
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
            }
            if terms.is_empty() {
                prop_assert!(results.entries.is_empty() && results.total == 0);
            }
        }
    }
}
