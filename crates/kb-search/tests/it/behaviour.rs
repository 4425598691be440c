//! What a person notices about search answers: matching, folding, syntax as data,
//! filters, paging, snippets, fuzzy retry.

use kb_domain::{Category, SearchIndex, SearchQuery};
use kb_tools::output::SearchFindings;

use crate::support::{TestVault, paths, query, search};

fn sample() -> (TestVault, kb_search::TantivyIndex) {
    let v = TestVault::new();
    v.write("ideas/cafe.md", "---\nname: Café culture\none_liner: Open a small coffee bar\ntags: [coffee, business]\n---\nNotes about espresso machines and Zürich rents.\n");
    v.write("projects/clientco.md", "---\nname: ClientCo integration\nstatus: active\nnext_action: Email Sarah the API spec\ntags: [clientco, api]\n---\nWho's responsible for the C++ bindings? a:b mapping (draft.\n");
    v.write("people/sarah.md", "---\nname: Sarah Chen\ncontext: Met at the API conference\nfollow_ups: [Send slides]\n---\nLikes coffee.\n");
    v.write("inbox/thought.md", "---\nname: Thought\noriginal_text: maybe learn kubernetes this winter\nsuggested_category: ideas\n---\n");
    v.write(
        "admin/taxes.md",
        "---\nname: Taxes\nstatus: pending\n---\nFile the taxes before April. Coffee receipts.\n",
    );
    let index = v.open();
    (v, index)
}

#[test]
fn every_term_must_match_and_best_first() {
    let (_v, index) = sample();
    let r = search(&index, "coffee");
    assert_eq!(r.total, 3);
    assert_eq!(r.entries[0].path.to_string(), "ideas/cafe.md", "{r:?}");
    let r = search(&index, "coffee receipts");
    assert_eq!(paths(&r), ["admin/taxes.md"]);
    assert!(!r.fuzzy);
    let scores: Vec<f32> = search(&index, "coffee").entries.iter().map(|h| h.score).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
}

#[test]
fn case_and_accents_do_not_matter() {
    let (_v, index) = sample();
    assert_eq!(paths(&search(&index, "cafe")), ["ideas/cafe.md"]);
    assert_eq!(paths(&search(&index, "CAFÉ")), ["ideas/cafe.md"]);
    assert_eq!(paths(&search(&index, "zurich")), ["ideas/cafe.md"]);
}

#[test]
fn an_accent_typed_as_a_character_of_its_own_matches_like_any_other() {
    let v = TestVault::new();
    // "Amélie" and "café" with the accent as a separate mark (NFD, as macOS writes them),
    // "Zoë" with its accented letter (NFC).
    v.write("people/amelie.md", "---\nname: Ame\u{301}lie\n---\nMet at the cafe\u{301} near Zoë's office.\n");
    // Letters with no single-character form, Greek and Cyrillic accents, invisible joiners.
    v.write(
        "ideas/trip.md",
        "---\nname: Trip to O\u{323}\u{300}yo\u{323}\u{301}\n---\nThen Αθηνά and Οδυσσέας, a ёлка, a joi\u{200d}ner.\n",
    );
    let index = v.open();
    for query in ["amelie", "Amélie", "Ame\u{301}lie", "cafe", "café", "zoe", "Zoe\u{308}", "ZOË"] {
        assert_eq!(paths(&search(&index, query)), ["people/amelie.md"], "{query:?}");
    }
    for query in ["oyo", "O\u{323}\u{300}yo\u{323}\u{301}", "Ọ̀yọ́", "αθηνα", "ΟΔΥΣΣΕΑΣ", "елка", "joiner"]
    {
        let r = search(&index, query);
        assert_eq!((paths(&r), r.fuzzy), (vec!["ideas/trip.md".to_string()], false), "{query:?}");
    }
    // The whole word is marked, its accent with it.
    let hit = &search(&index, "cafe").entries[0];
    assert!(hit.snippet.contains("**cafe\u{301}**"), "{}", hit.snippet);
    // A word cut at the accent is not what was written.
    assert!(search(&index, "lie").entries.is_empty());
}

#[test]
fn query_syntax_is_data() {
    let (_v, index) = sample();
    for text in [
        "c++",
        "who's",
        "a:b",
        "\"unbalanced",
        "(x",
        "AND",
        "-x",
        "*",
        "OR NOT",
        "title:x^2~",
        "[1 TO 5]",
        "\\",
        "{}",
    ] {
        let r = index.search(&query(text));
        assert!(r.is_ok(), "{text:?} gave {r:?}");
    }
    assert_eq!(paths(&search(&index, "c++")), ["projects/clientco.md"]);
    assert_eq!(paths(&search(&index, "who's")), ["projects/clientco.md"]);
    assert_eq!(paths(&search(&index, "a:b")), ["projects/clientco.md"]);
    assert_eq!(paths(&search(&index, "(draft")), ["projects/clientco.md"]);
    // "-x" is the word x, not "everything without x".
    assert_eq!(search(&index, "-coffee").total, 3);
}

#[test]
fn empty_query_has_no_hits() {
    let (_v, index) = sample();
    for text in ["", "   ", "*", "+-:()\""] {
        let r = search(&index, text);
        assert!(r.entries.is_empty() && r.total == 0 && !r.fuzzy, "{text:?}: {r:?}");
    }
}

#[test]
fn category_filter_limit_offset_and_total() {
    let (_v, index) = sample();
    let q = SearchQuery {
        text: "coffee".into(),
        category: Some(Category::People),
        limit: 10,
        offset: 0,
        prefix: false,
        ..Default::default()
    };
    let r = index.search(&q).unwrap();
    assert_eq!((paths(&r), r.total), (vec!["people/sarah.md".to_string()], 1));
    let all = search(&index, "coffee");
    let page = index
        .search(&SearchQuery {
            text: "coffee".into(),
            category: None,
            limit: 1,
            offset: 1,
            prefix: false,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(page.total, 3);
    assert_eq!(paths(&page), [all.entries[1].path.to_string()]);
    let past = index
        .search(&SearchQuery {
            text: "coffee".into(),
            category: None,
            limit: 5,
            offset: 1_000_000,
            prefix: false,
            ..Default::default()
        })
        .unwrap();
    assert!(past.entries.is_empty());
    assert_eq!(past.total, 3);
    let huge = index
        .search(&SearchQuery {
            text: "coffee".into(),
            category: None,
            limit: 100_000,
            offset: 0,
            prefix: false,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(huge.entries.len(), 3);
    let default = index
        .search(&SearchQuery {
            text: "coffee".into(),
            category: None,
            limit: 0,
            offset: 0,
            prefix: false,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(default.entries.len(), 3);
}

#[test]
fn limit_defaults_to_ten_and_caps_at_one_hundred() {
    let v = TestVault::new();
    for i in 0..120 {
        v.write_entry(&format!("ideas/n{i}.md"), &format!("Note {i}"), "shared word");
    }
    let index = v.open();
    let q = |limit| SearchQuery {
        text: "shared".into(),
        category: None,
        limit,
        offset: 0,
        prefix: false,
        ..Default::default()
    };
    assert_eq!(index.search(&q(0)).unwrap().entries.len(), 10);
    let capped = index.search(&q(500)).unwrap();
    assert_eq!((capped.entries.len(), capped.total), (100, 120));
}

#[test]
fn hits_say_where_they_matched_with_marked_snippets() {
    let (_v, index) = sample();
    let hit = &search(&index, "kubernetes").entries[0];
    assert_eq!(hit.matched_field, "original_text");
    assert_eq!(hit.snippet, "maybe learn **kubernetes** this winter");
    assert_eq!((hit.name.as_str(), hit.category), ("Thought", Category::Inbox));
    let hit = &search(&index, "sarah").entries[0];
    assert_eq!(hit.path.to_string(), "people/sarah.md");
    assert_eq!((hit.matched_field.as_str(), hit.snippet.as_str()), ("name", "**Sarah** Chen"));
    let hit = &search(&index, "espresso").entries[0];
    assert_eq!(hit.matched_field, "content");
    assert!(hit.snippet.contains("**espresso**"), "{}", hit.snippet);
    assert_eq!(search(&index, "spec").entries[0].matched_field, "next_action");
    assert_eq!(search(&index, "conference").entries[0].matched_field, "context");
    assert_eq!(search(&index, "bar").entries[0].matched_field, "one_liner");
    assert_eq!(search(&index, "business").entries[0].matched_field, "tags");
}

#[test]
fn a_typo_gets_a_marked_fuzzy_answer() {
    let (_v, index) = sample();
    // Two letters swapped: no stem matches it, so the typo-tolerant retry answers.
    let r = search(&index, "kuberentes");
    assert!(r.fuzzy);
    assert_eq!(paths(&r), ["inbox/thought.md"]);
    assert!(r.entries[0].snippet.contains("**kubernetes**"), "{}", r.entries[0].snippet);
    let none = search(&index, "zzzzqqq");
    assert!(none.entries.is_empty() && none.total == 0);
    assert!(!search(&index, "kubernetes").fuzzy);
}

#[test]
fn serialises_as_the_tool_contract_says() {
    let (_v, index) = sample();
    let json = serde_json::to_value(SearchFindings::from(search(&index, "kubernetes"))).unwrap();
    let hit = &json["entries"][0];
    for key in ["path", "name", "category", "matchedField", "snippet", "score"] {
        assert!(hit.get(key).is_some(), "{key} missing in {hit}");
    }
    assert_eq!(json["total"], 1);
}
