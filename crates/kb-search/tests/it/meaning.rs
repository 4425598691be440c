//! Search that finds what people mean: words in other forms (stems in the
//! vault's language), a word still being typed, names and tags above the body, the newer of
//! equal hits first, quoted phrases, and snippets marking what matched.

use kb_domain::{SearchIndex, SearchQuery};
use kb_search::{OpenOptions, SearchLanguage};

use crate::support::{TestVault, open_index, paths, query, search};

fn as_you_type(text: &str) -> SearchQuery {
    SearchQuery { prefix: true, ..query(text) }
}

/// How many entries matched other than through the typo-tolerant retry.
fn matched(results: &kb_domain::SearchResults) -> usize {
    if results.fuzzy { 0 } else { results.total }
}

#[test]
fn other_forms_of_a_word_are_found_in_english() {
    let v = TestVault::new();
    v.write_entry("admin/lease.md", "Lease", "Meeting with the landlord about the lease.");
    v.write_entry("ideas/marathon.md", "Marathon", "Running three times a week.");
    let index = v.open();
    assert_eq!(paths(&search(&index, "meet")), ["admin/lease.md"]);
    assert_eq!(paths(&search(&index, "landlords")), ["admin/lease.md"]);
    assert_eq!(paths(&search(&index, "run")), ["ideas/marathon.md"]);
    let hit = &search(&index, "landlords meet").entries[0];
    assert!(hit.snippet.contains("**Meeting**") && hit.snippet.contains("**landlord**"), "{}", hit.snippet);
    assert!(!search(&index, "meet").fuzzy);
}

#[test]
fn a_french_vault_stems_in_french() {
    let v = TestVault::new();
    v.write_entry("ideas/village.md", "Village", "Les maisons du village sont en pierre.");
    let french: SearchLanguage = "french".parse().unwrap();
    let index = open_index(v.root(), OpenOptions { language: french, ..Default::default() }).unwrap();
    assert_eq!(paths(&search(&index, "maison")), ["ideas/village.md"]);
    drop(index);
    // Opened for another language, the index is rebuilt with that language's stems.
    let english = open_index(v.root(), OpenOptions::default()).unwrap();
    assert!(english.open_stats().rebuild_reason.as_deref().is_some_and(|r| r.contains("french")));
}

#[test]
fn an_exact_match_ranks_above_a_stemmed_one() {
    let v = TestVault::new();
    v.write_entry("ideas/a.md", "Notes a", "We meet on Fridays with the team.");
    v.write_entry("ideas/b.md", "Notes b", "Meeting on Fridays with the team.");
    let index = v.open();
    assert_eq!(paths(&search(&index, "meeting")), ["ideas/b.md", "ideas/a.md"]);
    assert_eq!(paths(&search(&index, "meet")), ["ideas/a.md", "ideas/b.md"]);
    // Quoted, a word matches only as written.
    assert_eq!(paths(&search(&index, "\"meeting\"")), ["ideas/b.md"]);
}

#[test]
fn a_word_being_typed_is_completed() {
    let v = TestVault::new();
    v.write_entry("admin/lease.md", "Lease", "Meeting with the landlord about the lease.");
    v.write_entry("ideas/land-art.md", "Land art", "Stones in a field.");
    let index = v.open();
    assert_eq!(matched(&search(&index, "landl")), 0, "without prefix, landl is not a word");
    let typed = index.search(&as_you_type("landl")).unwrap();
    assert_eq!(paths(&typed), ["admin/lease.md"]);
    assert!(typed.entries[0].snippet.contains("**landlord**"), "{}", typed.entries[0].snippet);
    // "land": the entry named so first, the completion in a body after it.
    assert_eq!(paths(&index.search(&as_you_type("land")).unwrap()), ["ideas/land-art.md", "admin/lease.md"]);
    // Only the last word is completed, and only while it is being typed.
    assert_eq!(matched(&index.search(&as_you_type("landl lease")).unwrap()), 0);
    assert_eq!(matched(&index.search(&as_you_type("landl ")).unwrap()), 0);
    assert_eq!(matched(&index.search(&as_you_type("lease landl")).unwrap()), 1);
}

#[test]
fn names_and_tags_outrank_the_body_and_the_newer_of_equals_comes_first() {
    let v = TestVault::new();
    let filler = "word ".repeat(200);
    v.write("ideas/body.md", &format!("---\nname: Other\n---\n{filler} garden garden garden\n"));
    v.write("ideas/named.md", "---\nname: Garden\n---\nSomething else entirely.\n");
    v.write("ideas/tagged.md", "---\nname: Plot\ntags: [garden]\n---\nSomething else.\n");
    let index = v.open();
    let found = paths(&search(&index, "garden"));
    assert_eq!(found.last().map(String::as_str), Some("ideas/body.md"), "{found:?}");

    let w = TestVault::new();
    let entry = |when: &str| format!("---\nname: Same\nupdated_at: {when}\n---\nthe same words\n");
    w.write("ideas/old.md", &entry("2026-01-01T10:00:00Z"));
    w.write("ideas/new.md", &entry("2026-11-01T10:00:00Z"));
    w.write("ideas/mid.md", &entry("2026-06-01T10:00:00Z"));
    let index = w.open();
    assert_eq!(paths(&search(&index, "same words")), ["ideas/new.md", "ideas/mid.md", "ideas/old.md"]);
}

#[test]
fn names_outrank_the_body_across_the_segments_of_a_vault_that_grew() {
    let v = TestVault::new();
    let filler = "word ".repeat(100);
    // The names sort first in a folder: a name match holds a lower document number than
    // the body matches scoring above it by their words alone.
    let body =
        |n: usize| (format!("ideas/other-{n}.md"), format!("Other {n}"), "garden garden garden".to_string());
    let named = |n: usize| (format!("ideas/garden-{n}.md"), format!("Garden {n}"), filler.clone());
    for (path, name, text) in [body(0), named(0), body(1), body(2), named(1)] {
        v.write_entry(&path, &name, &text);
    }
    let index = v.open();
    // Entries added one by one land in segments of their own, in another order.
    for (path, name, text) in [named(2), body(3), body(4), named(3), body(5)] {
        index.upsert(&v.write_entry(&path, &name, &text)).unwrap();
        assert!(search(&index, "garden").total > 0);
    }
    let found = paths(&search(&index, "garden"));
    assert_eq!(found.len(), 10, "{found:?}");
    assert!(found[..4].iter().all(|p| p.starts_with("ideas/garden-")), "names first: {found:?}");
    assert!(found[4..].iter().all(|p| p.starts_with("ideas/other-")), "{found:?}");
}

#[test]
fn a_quoted_phrase_matches_only_as_a_phrase() {
    let v = TestVault::new();
    v.write_entry("ideas/a.md", "A", "Edit the front matter of each page.");
    v.write_entry("ideas/b.md", "B", "The matter at the front of the queue.");
    let index = v.open();
    assert_eq!(search(&index, "front matter").total, 2);
    assert_eq!(paths(&search(&index, "\"front matter\"")), ["ideas/a.md"]);
    assert_eq!(paths(&search(&index, "“front matter” page")), ["ideas/a.md"]);
}
