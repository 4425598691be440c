//! The three-way merge: fields by field, bodies by lines, dated logs in date order, and
//! conflicts where two sides changed one thing two ways.

use proptest::prelude::*;

use super::{NoteMerge, merge_note};

fn clean(base: &str, remote: &str, local: &str) -> String {
    match merge_note(base, remote, local) {
        NoteMerge::Clean(text) => text,
        NoteMerge::Conflict => panic!("a conflict merging\n{base}\n--- remote\n{remote}\n--- local\n{local}"),
    }
}

#[test]
fn different_fields_changed_on_two_devices_are_both_kept_and_other_bytes_stay() {
    let base = "---\r\n# kept comment\r\nname: Shed\r\nstatus: active\r\nversion: 1.10\r\n---\r\nBody\r\n";
    let remote = "---\r\n# kept comment\r\nname: Shed\r\nstatus: done\r\nversion: 1.10\r\n---\r\nBody\r\n";
    let local =
        "---\nname: Shed\nstatus: active\nversion: 1.10\nnext_action: 'Buy felt: two rolls'\n---\nBody\r\n";
    // The local block's layout (no comment, plain line ends) is not a change of a field.
    let merged = clean(base, remote, local);
    assert_eq!(
        merged,
        "---\r\n# kept comment\r\nname: Shed\r\nstatus: done\r\nversion: 1.10\r\nnext_action: 'Buy felt: two rolls'\r\n---\r\nBody\r\n"
    );
}

#[test]
fn two_edits_by_kb_stamp_the_note_twice_and_the_later_stamp_stands() {
    let note = |status: &str, due: &str, at: &str, log: &str| {
        format!(
            "---\nname: Shed\nstatus: {status}\ndue_date: {due}\nupdated_at: {at}\n---\n## Log\n\n- 2026-11-01: started\n{log}"
        )
    };
    let base = note("active", "2026-12-01", "2026-11-01T10:00:00Z", "");
    let remote = note("done", "2026-12-01", "2026-11-02T09:00:00Z", "- 2026-11-02: roof fixed\n");
    let local = note("active", "2026-12-05", "2026-11-02T11:30:00Z", "- 2026-11-03: bought paint\n");
    assert_eq!(
        clean(&base, &remote, &local),
        note(
            "done",
            "2026-12-05",
            "2026-11-02T11:30:00Z",
            "- 2026-11-02: roof fixed\n- 2026-11-03: bought paint\n"
        )
    );
    // The remote's stamp the later: it stays.
    let earlier = note("active", "2026-12-05", "2026-11-01T12:00:00Z", "");
    assert!(clean(&base, &remote, &earlier).contains("updated_at: 2026-11-02T09:00:00Z"));
    // Any other field set to two values is still a conflict.
    let other = note("someday", "2026-12-01", "2026-11-02T11:30:00Z", "");
    assert_eq!(merge_note(&base, &remote, &other), NoteMerge::Conflict);
}

#[test]
fn a_field_added_locally_lands_after_the_field_it_follows() {
    let base = "---\nname: A\ntags: [x]\n---\n";
    let remote = "---\nname: A\ntags: [x, y]\n---\n";
    let local = "---\nname: A\nemail: a@example.com\ntags: [x]\n---\n";
    assert_eq!(clean(base, remote, local), "---\nname: A\nemail: a@example.com\ntags: [x, y]\n---\n");
}

#[test]
fn a_field_added_first_locally_stays_first() {
    let base = "---\n# people\nname: A\n---\nx\n";
    let remote = "---\n# people\nname: A\n---\nx\ny\n";
    let local = "---\n# people\ntag: desk\nname: A\n---\nx\n";
    assert_eq!(clean(base, remote, local), "---\n# people\ntag: desk\nname: A\n---\nx\ny\n");
}

#[test]
fn a_field_removed_on_one_side_and_untouched_on_the_other_is_removed() {
    let base = "---\nname: A\nold: 1\nkeep: 2\n---\nx\n";
    let remote = "---\nname: A\nkeep: 2\n---\nx\n";
    let local = "---\nname: A\nold: 1\nkeep: 2\n---\nx\ny\n";
    assert_eq!(clean(base, remote, local), "---\nname: A\nkeep: 2\n---\nx\ny\n");
}

#[test]
fn one_field_set_to_two_values_is_a_conflict() {
    let base = "---\nstatus: active\n---\n";
    let remote = "---\nstatus: done\n---\n";
    let local = "---\nstatus: someday\n---\n";
    assert_eq!(merge_note(base, remote, local), NoteMerge::Conflict);
}

#[test]
fn a_field_set_to_one_value_on_both_sides_merges() {
    let base = "---\nstatus: active\n---\na\n";
    let remote = "---\nstatus: done\n---\na\nb\n";
    let local = "---\nstatus: \"done\"\n---\na\n";
    assert_eq!(clean(base, remote, local), "---\nstatus: done\n---\na\nb\n");
}

#[test]
fn two_appends_to_a_log_are_both_kept_in_date_order() {
    let base = "---\nname: Shed\n---\n## Log\n\n- 2026-11-01: started\n";
    let remote = format!("{base}- 2026-11-20: bought felt\n");
    let local = format!("{base}- 2026-11-12: measured the roof\n  (4 m by 3 m)\n- 2026-11-25: asked Sam\n");
    assert_eq!(
        clean(base, &remote, &local),
        format!(
            "{base}- 2026-11-12: measured the roof\n  (4 m by 3 m)\n- 2026-11-20: bought felt\n- 2026-11-25: asked Sam\n"
        )
    );
}

#[test]
fn two_undated_additions_at_one_place_keep_the_remote_first() {
    let base = "a\nb\n";
    assert_eq!(clean(base, "a\nb\nremote\n", "a\nb\nlocal\n"), "a\nb\nremote\nlocal\n");
}

#[test]
fn overlapping_body_edits_are_a_conflict() {
    let base = "---\nname: A\n---\nthe roof leaks\n";
    let remote = "---\nname: A\n---\nthe roof leaked\n";
    let local = "---\nname: A\n---\nthe roof is fixed\n";
    assert_eq!(merge_note(base, remote, local), NoteMerge::Conflict);
}

#[test]
fn a_missing_last_line_end_follows_the_side_that_changed_it() {
    assert_eq!(clean("a\nb", "a\nb\n", "x\nb"), "x\nb\n");
    assert_eq!(clean("a\nb", "a\nb\nc", "x\nb"), "x\nb\nc");
}

#[test]
fn notes_without_frontmatter_merge_by_lines() {
    assert_eq!(clean("one\ntwo\nthree\n", "ONE\ntwo\nthree\n", "one\ntwo\nTHREE\n"), "ONE\ntwo\nTHREE\n");
}

#[test]
fn a_block_that_does_not_parse_is_a_conflict_not_a_guess() {
    let base = "---\nname: A\n---\nx\n";
    let remote = "---\nname: [A\n---\nx\n";
    let local = "---\nname: A\n---\ny\n";
    assert_eq!(merge_note(base, remote, local), NoteMerge::Conflict);
}

/// A base of numbered lines, and edits of the lines in `[from, to)` (each a new text or a
/// deletion) with additions after some of them.
fn edited(
    base: &[String],
    edits: &[(usize, Option<String>, Option<String>)],
    from: usize,
    to: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    for (i, line) in base.iter().enumerate() {
        let edit = edits.iter().find(|(at, _, _)| *at == i).filter(|_| i >= from && i < to);
        match edit {
            Some((_, replaced, added)) => {
                out.extend(replaced.clone());
                out.extend(added.clone());
            }
            None => out.push(line.clone()),
        }
    }
    out
}

fn text(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Edits of two parts of a note apart by a line neither touched merge into the note
    /// with both sides' edits, whichever side is remote.
    #[test]
    fn edits_of_separate_lines_are_both_kept(
        size in 4usize..40,
        edits in proptest::collection::vec(
            (0usize..40, proptest::option::of("[a-z ]{1,12}"), proptest::option::of("[A-Z ]{1,12}")),
            0..12,
        ),
        cut in 0.2f64..0.8,
    ) {
        let base: Vec<String> = (0..size).map(|i| format!("line {i}")).collect();
        let middle = ((size as f64) * cut) as usize;
        let first = edited(&base, &edits, 0, middle);
        let second = edited(&base, &edits, middle + 1, size);
        // The expected text: each line as the side that owns its part left it.
        let mut expected = Vec::new();
        for (i, line) in base.iter().enumerate() {
            let owner = if i < middle { (0, middle) } else if i > middle { (middle + 1, size) } else { (size, size) };
            let edit = edits.iter().find(|(at, _, _)| *at == i).filter(|_| i >= owner.0 && i < owner.1);
            match edit {
                Some((_, replaced, added)) => {
                    expected.extend(replaced.clone());
                    expected.extend(added.clone());
                }
                None => expected.push(line.clone()),
            }
        }
        let (base, first, second, expected) = (text(&base), text(&first), text(&second), text(&expected));
        prop_assert_eq!(merge_note(&base, &first, &second), NoteMerge::Clean(expected.clone()));
        prop_assert_eq!(merge_note(&base, &second, &first), NoteMerge::Clean(expected));
    }

    /// A side that changed nothing takes the other's text, byte for byte; two sides that
    /// made one change agree.
    #[test]
    fn one_side_unchanged_takes_the_other(base in "[a-z\n:-]{0,80}", changed in "[a-z\n:-]{0,80}") {
        prop_assert_eq!(merge_note(&base, &base, &changed), NoteMerge::Clean(changed.clone()));
        prop_assert_eq!(merge_note(&base, &changed, &base), NoteMerge::Clean(changed.clone()));
        prop_assert_eq!(merge_note(&base, &changed, &changed), NoteMerge::Clean(changed.clone()));
    }

    /// Whatever two sides did, a clean merge holds every line both sides added: nothing a
    /// device wrote is dropped without a conflict.
    #[test]
    fn a_clean_merge_keeps_every_added_line(
        base in proptest::collection::vec("[a-c]{1,3}", 0..12),
        remote in proptest::collection::vec("[a-c]{1,3}", 0..12),
        local in proptest::collection::vec("[a-c]{1,3}", 0..12),
    ) {
        let (base, remote, local) = (text(&base), text(&remote), text(&local));
        if let NoteMerge::Clean(merged) = merge_note(&base, &remote, &local) {
            let count = |t: &str, line: &str| t.lines().filter(|l| *l == line).count();
            for side in [&remote, &local] {
                for line in side.lines() {
                    let added = count(side, line).saturating_sub(count(&base, line));
                    prop_assert!(
                        count(&merged, line) >= added,
                        "{line:?} added {added} times is in the merge {} times", count(&merged, line)
                    );
                }
            }
        }
    }
}
