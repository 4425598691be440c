//! Questions typed as they are said: words that carry no meaning are not required, and
//! entries holding only some of the words follow those holding all of them.

use kb_domain::{MatchedBy, SearchIndex, SearchQuery, SearchResults};
use kb_search::{OpenOptions, TantivyIndex};

use crate::support::{TestVault, open_index, paths, query};

fn travel() -> (TestVault, TantivyIndex) {
    let v = TestVault::new();
    v.write_entry("admin/passport.md", "Renew passport", "Renew it before the trip to Japan.\n");
    v.write_entry("admin/visa.md", "Visa", "Apply with a passport photo, weeks before the trip.\n");
    v.write_entry("people/sam.md", "Sam", "Sam will renew the lease in spring.\n");
    v.write_entry("ideas/garden.md", "Garden", "Plant tomatoes along the fence.\n");
    let index = v.open();
    (v, index)
}

/// A search as search_entries asks: partial hits wanted.
fn asked(text: &str) -> SearchQuery {
    SearchQuery { partial: true, ..query(text) }
}

fn matched_by(results: &SearchResults) -> Vec<MatchedBy> {
    results.entries.iter().map(|h| h.matched_by).collect()
}

#[test]
fn a_question_finds_entries_holding_some_of_its_words_after_those_holding_all() {
    let (_v, index) = travel();
    let r = index.search(&asked("How do I renew my passport before the trip?")).unwrap();
    assert_eq!(paths(&r), ["admin/passport.md", "admin/visa.md", "people/sam.md"], "{r:?}");
    assert_eq!(matched_by(&r), [MatchedBy::Keyword, MatchedBy::Partial, MatchedBy::Partial]);
    assert_eq!((r.total, r.partial_total), (1, 2));
    assert!(!r.fuzzy);
    // Holding two of the words (passport, trip) ranks before holding one (renew).
    assert!(r.entries[1].score > r.entries[2].score, "{r:?}");
}

#[test]
fn a_query_of_function_words_only_has_no_partial_hits() {
    let (_v, index) = travel();
    let r = index.search(&asked("the of and a to in is it that")).unwrap();
    assert_eq!((r.total, r.partial_total), (0, 0), "{r:?}");
    assert!(r.entries.is_empty(), "{r:?}");
}

#[test]
fn without_partial_hits_asked_for_only_all_words_hits_answer_with_the_same_total() {
    let (_v, index) = travel();
    let r = index.search(&query("How do I renew my passport before the trip?")).unwrap();
    assert_eq!(paths(&r), ["admin/passport.md"]);
    assert_eq!((r.total, r.partial_total), (1, 0));
    // Search as you type never adds partial hits.
    let typing = index.search(&SearchQuery { prefix: true, ..asked("renew passport tri") }).unwrap();
    assert_eq!(paths(&typing), ["admin/passport.md"]);
    assert_eq!(typing.partial_total, 0);
}

#[test]
fn a_page_full_of_all_words_hits_has_no_partial_hits() {
    let (_v, index) = travel();
    // "trip" is in two entries: a page of two is full.
    let full = index.search(&SearchQuery { limit: 2, ..asked("trip") }).unwrap();
    assert_eq!(matched_by(&full), [MatchedBy::Keyword, MatchedBy::Keyword]);
    assert_eq!((full.total, full.partial_total), (2, 0));
    let full = index.search(&SearchQuery { limit: 2, ..asked("before trip") }).unwrap();
    assert_eq!((full.total, full.partial_total), (2, 0), "{full:?}");
}

#[test]
fn pages_run_through_all_words_hits_then_partial_hits() {
    let (_v, index) = travel();
    let text = "renew passport trip";
    let page = |offset, limit| {
        let r = index.search(&SearchQuery { offset, limit, ..asked(text) }).unwrap();
        assert_eq!((r.total, r.partial_total), (1, 2), "{offset} {limit}: {r:?}");
        paths(&r)
    };
    assert_eq!(page(0, 2), ["admin/passport.md", "admin/visa.md"]);
    assert_eq!(page(1, 1), ["admin/visa.md"]);
    assert_eq!(page(2, 2), ["people/sam.md"]);
    assert!(page(3, 2).is_empty());
}

#[test]
fn quoted_words_stay_required_in_partial_hits() {
    let (_v, index) = travel();
    let r = index.search(&asked("renew trip \"passport\"")).unwrap();
    assert_eq!(paths(&r), ["admin/passport.md", "admin/visa.md"], "{r:?}");
    assert_eq!((r.total, r.partial_total), (1, 1));
}

#[test]
fn words_without_meaning_are_not_required_unless_they_are_all_there_is() {
    let v = TestVault::new();
    v.write_entry("ideas/band.md", "The Who", "A concert ticket.\n");
    v.write_entry("admin/passport.md", "Passport", "Renew soon.\n");
    let index = v.open();
    let r = index.search(&query("where is my passport")).unwrap();
    assert_eq!((paths(&r), r.total), (vec!["admin/passport.md".to_string()], 1));
    assert_eq!(matched_by(&r), [MatchedBy::Keyword]);
    let r = index.search(&query("the who")).unwrap();
    assert_eq!(paths(&r), ["ideas/band.md"]);
    // Quoted, a word without meaning must be there.
    assert!(index.search(&query("passport \"the\"")).unwrap().entries.is_empty());
}

#[test]
fn the_typo_tolerant_retry_comes_before_partial_hits() {
    let (_v, index) = travel();
    // Nothing holds "pasport": the retry finds the passport to renew; Sam's lease to renew
    // holds one of the words as typed.
    let r = index.search(&asked("pasport renew")).unwrap();
    assert!(r.fuzzy, "{r:?}");
    assert_eq!(paths(&r), ["admin/passport.md", "people/sam.md"], "{r:?}");
    assert_eq!(matched_by(&r), [MatchedBy::Keyword, MatchedBy::Partial]);
    assert_eq!((r.total, r.partial_total), (1, 1));
}

#[test]
fn german_questions_leave_out_german_function_words() {
    let v = TestVault::new();
    v.write_entry("admin/arzt.md", "Arzttermin", "Termin beim Arzt am Montag.\n");
    v.write_entry("admin/auto.md", "Auto", "Der TÜV für das Auto.\n");
    let options = OpenOptions { language: "german".parse().unwrap(), ..OpenOptions::default() };
    let index = open_index(v.root(), options).unwrap();
    let r = index.search(&asked("Wann ist mein Termin beim Arzt?")).unwrap();
    assert_eq!((paths(&r), r.total), (vec!["admin/arzt.md".to_string()], 1), "{r:?}");
    // "für" folds to "fur", and is still a word without meaning.
    let r = index.search(&asked("was ist für das Auto")).unwrap();
    assert_eq!((paths(&r), r.total), (vec!["admin/auto.md".to_string()], 1), "{r:?}");
}

#[test]
fn a_retry_that_finds_nothing_is_not_an_answer_of_close_spellings() {
    let (_v, index) = travel();
    // "zebra" is in no entry: the retry runs, finds nothing, and the partial hits answer.
    let r = index.search(&asked("passport zebra")).unwrap();
    assert!(!r.fuzzy, "{r:?}");
    assert_eq!((r.total, r.partial_total), (0, 2), "{r:?}");
    assert_eq!(matched_by(&r), [MatchedBy::Partial, MatchedBy::Partial]);
    assert!(!index.search(&query("ocelot")).unwrap().fuzzy);
}
