//! Citations found and checked: the syntax's edges, clean removal, and a property test over
//! random answers mixing text, seen and unseen citations, and brackets that are no citations.

use proptest::prelude::*;

use super::*;

fn only(seen: &'static [&'static str]) -> impl Fn(&str) -> bool {
    move |path| seen.contains(&path)
}

fn written(text: &str) -> Vec<&str> {
    find(text).into_iter().map(|c| &text[c.span]).collect()
}

#[test]
fn a_citation_is_a_path_ending_in_md_then_the_last_colon_and_lines() {
    let text = "Priya [people/priya.md:12] renews [admin/passport.md:5-7].";
    let found = find(text);
    assert_eq!(found.len(), 2);
    assert_eq!((found[0].written_path, found[0].start_line, found[0].end_line), ("people/priya.md", 12, 12));
    assert_eq!((found[1].written_path, found[1].start_line, found[1].end_line), ("admin/passport.md", 5, 7));
    assert_eq!(&text[found[1].span.clone()], "[admin/passport.md:5-7]");

    // The line part is what follows the LAST colon: a path may hold colons and spaces.
    let found = find("see [Journal/2025: trip/Day one.md:3]");
    assert_eq!(found[0].written_path, "Journal/2025: trip/Day one.md");
    assert_eq!(found[0].path(), "Journal/2025: trip/Day one.md");
    // `]` in a path is written %5D.
    let found = find("[Reading/[draft%5D.md:4]");
    assert_eq!(found.len(), 1, "the inner [ starts it");
    let found = find("[Reading/draft%5D notes.md:4]");
    assert_eq!(found[0].path(), "Reading/draft] notes.md");
}

#[test]
fn brackets_that_are_no_citation_are_text() {
    for text in [
        "at [10:30] sharp",
        "[note]",
        "[a.md]",
        "[a.md:]",
        "[a.md:x]",
        "[a.md:3-]",
        "[a.md:-3]",
        "[a.md:+3]",
        "[ .md:3]",
        "[a.txt:3]",
        "[a.md:3](people/a.md)",
        "[[a.md:3]]",
        "[a.md\n:3]",
        "[a.md:99999999999]",
        "a.md:3]",
        "[a.md:3",
    ] {
        assert_eq!(find(text), Vec::new(), "{text}");
        assert_eq!(check(text, |_| false).text, text, "{text}");
    }
}

#[test]
fn seen_citations_stay_as_written_and_unseen_ones_go_cleanly() {
    let seen = only(&["people/priya.md", "admin/pass]port.md"]);
    let cases = [
        ("Priya lives in Paris [people/priya.md:3].", "Priya lives in Paris [people/priya.md:3]."),
        ("Priya lives in Paris [made/up.md:3].", "Priya lives in Paris."),
        ("Paris [made/up.md:3] and Lyon.", "Paris and Lyon."),
        ("Paris [made/up.md:3], Lyon", "Paris, Lyon"),
        ("Paris[made/up.md:3] and", "Paris and"),
        ("[made/up.md:1] Paris", "Paris"),
        ("Paris [people/priya.md:1] [made/up.md:2].", "Paris [people/priya.md:1]."),
        ("Paris [made/up.md:2] [people/priya.md:1].", "Paris [people/priya.md:1]."),
        ("Paris [made/up.md:2][people/priya.md:1].", "Paris [people/priya.md:1]."),
        ("one\n[made/up.md:2]\ntwo", "one\ntwo"),
        ("one\n  [made/up.md:2]\r\ntwo", "one\ntwo"),
        ("one [made/up.md:2]\ntwo", "one\ntwo"),
        ("- a [made/up.md:2]\n- b", "- a\n- b"),
        ("(see [made/up.md:2])", "(see)"),
        ("the pass [admin/pass%5Dport.md:2-3]", "the pass [admin/pass%5Dport.md:2-3]"),
        ("[made/up.md:9]", ""),
    ];
    for (text, expected) in cases {
        assert_eq!(check(text, &seen).text, expected, "{text:?}");
    }
    let checked = check("a [made/up.md:3] b [x%5Dy.md:1] [people/priya.md:2]", &seen);
    assert_eq!(checked.dropped, ["made/up.md", "x]y.md"]);
    assert_eq!(checked.text, "a b [people/priya.md:2]");
}

#[test]
fn escapes_that_make_no_utf8_leave_the_path_as_written() {
    assert_eq!(percent_decoded("a%ZZ%5d%e9.md"), "a%ZZ%5d%e9.md");
    assert_eq!(percent_decoded("a%20b%5D.md"), "a b].md");
    assert_eq!(percent_decoded("a%+5.md"), "a%+5.md");
    assert_eq!(percent_decoded("100%"), "100%");
}

/// Paths the property test cites; the first few are seen or not at random.
const PATHS: [&str; 6] =
    ["people/priya.md", "admin/pass port.md", "notes/a:b.md", "x%5Dy.md", "ideas/kiln.md", "made/up.md"];

/// A piece of an answer: plain text (no brackets), a citation of one of [`PATHS`], or
/// brackets that are no citation.
#[derive(Debug, Clone)]
enum Piece {
    Text(String),
    Cite { path: usize, start: u32, end: Option<u32> },
    Decoy(&'static str),
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        2 => "[a-zA-Zé0-9 ,.;!?\t\n-]{0,14}".prop_map(Piece::Text),
        // Spaces, line breaks and punctuation right beside citations, often.
        3 => prop::sample::select(vec![" ", "  ", ".", ", ", " and ", "\n", " \n", "\t", "x", "-"])
            .prop_map(|text| Piece::Text(text.to_string())),
        3 => (0..PATHS.len(), 1..500_u32, prop::option::of(1..500_u32))
            .prop_map(|(path, start, end)| Piece::Cite { path, start, end }),
        1 => prop::sample::select(vec!["[10:30]", "[note]", "[a.md]", "[b.md:x]", "[c.txt:3]"]).prop_map(Piece::Decoy),
    ]
}

fn render(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .map(|piece| match piece {
            Piece::Text(text) => text.clone(),
            Piece::Cite { path, start, end: None } => format!("[{}:{start}]", PATHS[*path]),
            Piece::Cite { path, start, end: Some(end) } => format!("[{}:{start}-{end}]", PATHS[*path]),
            Piece::Decoy(decoy) => (*decoy).to_string(),
        })
        .collect()
}

/// `text` without its citations and without whitespace: what must survive a check.
fn outside(text: &str) -> String {
    let mut rest = String::new();
    let mut at = 0;
    for citation in find(text) {
        rest.push_str(&text[at..citation.span.start]);
        at = citation.span.end;
    }
    rest.push_str(&text[at..]);
    rest.chars().filter(|c| !c.is_whitespace()).collect()
}

fn count(text: &str, what: &str) -> usize {
    text.matches(what).count()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn unseen_citations_go_seen_ones_stay_and_the_rest_is_kept(
        pieces in prop::collection::vec(piece(), 0..14),
        seen_mask in 0..(1_u8 << PATHS.len()),
    ) {
        let text = render(&pieces);
        let seen_paths: Vec<&str> =
            PATHS.iter().enumerate().filter(|(i, _)| seen_mask & (1 << i) != 0).map(|(_, p)| *p).collect();
        let seen = |path: &str| seen_paths.contains(&path);
        let checked = check(&text, seen);

        // Every citation written is found, none more.
        let cited = pieces.iter().filter(|p| matches!(p, Piece::Cite { .. })).count();
        prop_assert_eq!(find(&text).len(), cited);
        // What is left cites exactly the seen citations, byte for byte and in order.
        let kept: Vec<&str> = written(&text).into_iter().filter(|c| {
            find(c).first().is_some_and(|c2| seen(c2.written_path))
        }).collect();
        prop_assert_eq!(written(&checked.text), kept);
        prop_assert_eq!(checked.dropped.len(), cited - written(&checked.text).len());
        // The text around the citations is kept (whitespace aside), with no new double
        // space or space before a full stop or comma.
        prop_assert_eq!(outside(&checked.text), outside(&text));
        prop_assert!(count(&checked.text, "  ") <= count(&text, "  "), "{:?} -> {:?}", text, checked.text);
        for mark in [" .", " ,", "\t."] {
            prop_assert!(count(&checked.text, mark) <= count(&text, mark), "{:?} -> {:?}", text, checked.text);
        }
        // Nothing unseen: nothing changes. Checked twice: as checked once.
        if checked.dropped.is_empty() {
            prop_assert_eq!(&checked.text, &text);
        }
        prop_assert_eq!(check(&checked.text, seen).text, checked.text.clone());
    }
}
