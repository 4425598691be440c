//! Each body edit mode and each way one is refused; properties: the inserting modes keep
//! every byte of the old notes, find_replace changes nothing unless the count matches.

use super::*;
use proptest::prelude::*;

fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 23).unwrap()
}

fn request(mode: BodyEditMode, content: &str) -> BodyEditRequest {
    BodyEditRequest { mode, content: content.into(), section: None, find: None, expected_replacements: None }
}

fn edit(request: BodyEditRequest) -> BodyEdit {
    BodyEdit::from_request(request, today()).unwrap()
}

fn section(heading: &str, content: &str) -> BodyEdit {
    edit(BodyEditRequest { section: Some(heading.into()), ..request(BodyEditMode::Section, content) })
}

fn find_replace(find: &str, with: &str, expected: Option<u64>) -> BodyEditRequest {
    BodyEditRequest {
        find: Some(find.into()),
        expected_replacements: expected,
        ..request(BodyEditMode::FindReplace, with)
    }
}

#[test]
fn append_adds_a_paragraph_and_keeps_the_old_notes() {
    let append = edit(request(BodyEditMode::Append, "Felt bought.\n\n"));
    assert_eq!(append.apply("").unwrap(), "Felt bought.\n");
    assert_eq!(append.apply("\n").unwrap(), "\nFelt bought.\n");
    assert_eq!(append.apply("Roof leaks.").unwrap(), "Roof leaks.\n\nFelt bought.\n");
    assert_eq!(append.apply("Roof leaks.\n").unwrap(), "Roof leaks.\n\nFelt bought.\n");
    assert_eq!(append.apply("Roof leaks.\n\n\n").unwrap(), "Roof leaks.\n\n\nFelt bought.\n");
    assert_eq!(append.apply("a\r\nb\r\n").unwrap(), "a\r\nb\r\n\r\nFelt bought.\r\n");
}

#[test]
fn prepend_adds_a_paragraph_before_the_old_notes() {
    let prepend = edit(request(BodyEditMode::Prepend, "Urgent."));
    assert_eq!(prepend.apply("").unwrap(), "Urgent.\n");
    assert_eq!(prepend.apply("# Shed\n").unwrap(), "Urgent.\n\n# Shed\n");
    assert_eq!(prepend.apply("\n# Shed\n").unwrap(), "Urgent.\n\n# Shed\n");
    assert_eq!(prepend.apply("a\r\n").unwrap(), "Urgent.\r\n\r\na\r\n");
}

#[test]
fn replace_names_the_whole_notes() {
    let replace = edit(request(BodyEditMode::Replace, "new"));
    assert_eq!(replace.apply("old\ntext\n").unwrap(), "new");
    assert_eq!(edit(request(BodyEditMode::Replace, "")).apply("old").unwrap(), "");
}

#[test]
fn empty_content_is_refused_for_edits_that_add() {
    for mode in [BodyEditMode::Append, BodyEditMode::Prepend] {
        let err = BodyEdit::from_request(request(mode, " \n\t"), today()).unwrap_err();
        assert_eq!(err, BodyEditError::EmptyContent(mode.as_str()));
        assert!(err.to_string().contains("body.content is empty"), "{err}");
    }
    let err = BodyEdit::from_request(
        BodyEditRequest { section: Some("Log".into()), ..request(BodyEditMode::Section, "") },
        today(),
    );
    assert_eq!(err, Err(BodyEditError::EmptyContent("section")));
}

#[test]
fn arguments_of_another_mode_are_refused() {
    let refused = |r: BodyEditRequest| BodyEdit::from_request(r, today()).unwrap_err().to_string();
    let with_find = BodyEditRequest { find: Some("x".into()), ..request(BodyEditMode::Append, "y") };
    assert_eq!(refused(with_find), "body.find is only for mode find_replace, not append");
    let with_section = BodyEditRequest { section: Some("Log".into()), ..request(BodyEditMode::Replace, "y") };
    assert_eq!(refused(with_section), "body.section is only for mode section, not replace");
    let with_count =
        BodyEditRequest { expected_replacements: Some(2), ..request(BodyEditMode::Prepend, "y") };
    assert!(refused(with_count).contains("expectedReplacements is only for mode find_replace"));
    assert!(refused(request(BodyEditMode::Section, "y")).contains("body.section is required"));
    let blank = BodyEditRequest { section: Some("  ".into()), ..request(BodyEditMode::Section, "y") };
    assert!(refused(blank).contains("body.section is required"));
    let hashes = BodyEditRequest { section: Some("## Log".into()), ..request(BodyEditMode::Section, "y") };
    assert!(refused(hashes).contains("without its '#' marks"));
    let lines = BodyEditRequest { section: Some("A\nB".into()), ..request(BodyEditMode::Section, "y") };
    assert_eq!(BodyEdit::from_request(lines, today()), Ok(section("A B", "y")));
    assert!(refused(request(BodyEditMode::FindReplace, "y")).contains("body.find is required"));
    assert!(refused(find_replace("", "y", None)).contains("body.find is required"));
    assert!(refused(find_replace("x", "y", Some(0))).contains("at least 1, got 0"));
}

#[test]
fn find_replace_needs_the_expected_count_and_names_the_count_found() {
    let body = "Call Sarah. Then call Sarah again.\n";
    let once = edit(find_replace("Sarah", "Priya", None));
    let err = once.apply(body).unwrap_err();
    assert_eq!(err, BodyEditError::CountMismatch { find: "Sarah".into(), found: 2, expected: 1 });
    let message = err.to_string();
    assert!(message.contains("\"Sarah\" 2 times, not 1"), "{message}");
    assert!(message.contains("nothing was changed"), "{message}");
    assert!(message.contains("expectedReplacements: 2"), "{message}");

    let twice = edit(find_replace("Sarah", "Priya", Some(2)));
    assert_eq!(twice.apply(body).unwrap(), "Call Priya. Then call Priya again.\n");
    let missing = edit(find_replace("Bob", "Priya", None)).apply(body).unwrap_err();
    assert!(missing.to_string().contains("\"Bob\" 0 times, not 1"), "{missing}");
    // Removing text is naming it.
    assert_eq!(
        edit(find_replace(" Then call Sarah again.", "", None))
            .apply("Call Sarah. Then call Sarah again.")
            .unwrap(),
        "Call Sarah."
    );
    let long = "x".repeat(200);
    let err = edit(find_replace(&long, "y", None)).apply("").unwrap_err().to_string();
    assert!(err.len() < 400 && err.contains('…'), "{err}");
}

#[test]
fn a_missing_section_is_created_at_the_end() {
    let add = section("Tasks", "- [ ] buy felt");
    assert_eq!(add.apply("").unwrap(), "## Tasks\n\n- [ ] buy felt\n");
    assert_eq!(add.apply("Roof leaks.").unwrap(), "Roof leaks.\n\n## Tasks\n\n- [ ] buy felt\n");
    assert_eq!(add.apply("Roof leaks.\n").unwrap(), "Roof leaks.\n\n## Tasks\n\n- [ ] buy felt\n");
    // A level-3 heading, a quoted heading and a heading in code are not the section.
    let body = "### Tasks\n\n> ## Tasks\n\n```\n## Tasks\n```\n";
    assert_eq!(add.apply(body).unwrap(), format!("{body}\n## Tasks\n\n- [ ] buy felt\n"));
}

#[test]
fn an_existing_section_gets_the_text_after_its_last_line() {
    let add = section("tasks", "- [ ] buy felt");
    let body = "Intro.\n\n## Tasks\n\n- [ ] measure\n\n## Later\n\nmore\n";
    assert_eq!(
        add.apply(body).unwrap(),
        "Intro.\n\n## Tasks\n\n- [ ] measure\n- [ ] buy felt\n\n## Later\n\nmore\n"
    );
    // Prose is a paragraph of its own; subsections belong to the section.
    let prose = section("Notes", "Felt is cheaper in spring.");
    let body = "## Notes\nRoof leaks.\n### Detail\nNorth side.\n# Next\n";
    assert_eq!(
        prose.apply(body).unwrap(),
        "## Notes\nRoof leaks.\n### Detail\nNorth side.\n\nFelt is cheaper in spring.\n# Next\n"
    );
    // An empty section, at the end with and without a final line break.
    assert_eq!(prose.apply("## Notes\n").unwrap(), "## Notes\n\nFelt is cheaper in spring.\n");
    assert_eq!(prose.apply("## Notes").unwrap(), "## Notes\n\nFelt is cheaper in spring.\n");
    assert_eq!(
        prose.apply("## Notes\n\n## Next\n").unwrap(),
        "## Notes\n\nFelt is cheaper in spring.\n\n## Next\n"
    );
    // The last line without a line break; a setext heading; CRLF notes.
    assert_eq!(prose.apply("## Notes\nRoof.").unwrap(), "## Notes\nRoof.\n\nFelt is cheaper in spring.\n");
    assert_eq!(
        prose.apply("Notes\n---\nRoof.\n").unwrap(),
        "Notes\n---\nRoof.\n\nFelt is cheaper in spring.\n"
    );
    assert_eq!(
        prose.apply("## Notes\r\nRoof.\r\n").unwrap(),
        "## Notes\r\nRoof.\r\n\r\nFelt is cheaper in spring.\r\n"
    );
}

#[test]
fn a_log_section_gets_a_dated_line() {
    let log = section("Log", "Called the roofer");
    assert_eq!(log.apply("").unwrap(), "## Log\n\n- 2026-11-23: Called the roofer\n");
    let body = "Notes.\n\n## Log\n\n- 2026-11-20: Measured\n";
    assert_eq!(
        log.apply(body).unwrap(),
        "Notes.\n\n## Log\n\n- 2026-11-20: Measured\n- 2026-11-23: Called the roofer\n"
    );
    // A leading "- " is not doubled; further lines stay inside the item.
    let two_lines = section("log", "- Called\nNo answer");
    assert_eq!(two_lines.apply("## LOG\n").unwrap(), "## LOG\n\n- 2026-11-23: Called\n  No answer\n");
}

/// Notes made of lines that may be headings, list items, code fences, quotes and prose.
fn notes() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just("## Log".to_string()),
        Just("## Tasks".to_string()),
        Just("# Top".to_string()),
        Just("### Sub".to_string()),
        Just("```".to_string()),
        Just("> ## Log".to_string()),
        Just("- item".to_string()),
        Just("---".to_string()),
        Just(String::new()),
        "[a-zA-Z #*>-]{0,12}",
    ];
    (prop::collection::vec(line, 0..12), prop::bool::ANY, prop::bool::ANY).prop_map(|(lines, crlf, end)| {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut text = lines.join(nl);
        if end && !text.is_empty() {
            text.push_str(nl);
        }
        text
    })
}

/// Whether `new` is `old` with one run of text inserted somewhere.
fn is_insertion(old: &str, new: &str) -> bool {
    let prefix = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    let rest = &old.as_bytes()[prefix..];
    new.len() >= old.len() && new.as_bytes().ends_with(rest)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn append_prepend_and_section_keep_every_byte_of_the_old_notes(
        body in notes(),
        content in "[a-zA-Z][a-zA-Z -]{0,19}(\n[a-z ]{0,10}){0,2}",
        heading in prop::sample::select(vec!["Log", "Tasks", "Notes", "Top"]),
    ) {
        let appended = edit(request(BodyEditMode::Append, &content)).apply(&body).unwrap();
        prop_assert!(appended.starts_with(&body));
        prop_assert!(appended.len() > body.len());
        let prepended = edit(request(BodyEditMode::Prepend, &content)).apply(&body).unwrap();
        prop_assert!(prepended.ends_with(&body));
        prop_assert!(prepended.len() > body.len());
        let added = section(heading, &content).apply(&body).unwrap();
        prop_assert!(is_insertion(&body, &added), "{:?} -> {:?}", body, added);
        prop_assert!(added.len() > body.len());
        let first = content.trim_start().trim_start_matches("- ").lines().next().unwrap_or_default().trim_end();
        prop_assert!(added.contains(first), "{:?} not in {:?}", first, added);
    }

    #[test]
    fn find_replace_changes_nothing_unless_the_count_matches(
        body in "[ab\n ]{0,40}",
        find in "[ab]{1,3}",
        with in "[xy]{0,3}",
        expected in 1u64..5,
    ) {
        let found = body.matches(find.as_str()).count();
        let result = edit(find_replace(&find, &with, Some(expected))).apply(&body);
        if found as u64 == expected {
            let replaced = result.unwrap();
            prop_assert_eq!(replaced, body.replace(find.as_str(), &with));
        } else {
            prop_assert_eq!(
                result,
                Err(BodyEditError::CountMismatch { find: find.clone(), found, expected: expected as usize })
            );
        }
    }
}
