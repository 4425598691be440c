//! Tests of line ranges, picking lines and where an entry's texts lie in its file.

use super::*;

/// The lines `range` of `text`, as `sed -n START,ENDp` prints them.
fn sed(text: &str, range: LineRange) -> String {
    file_lines(text)
        .skip(range.start() as usize - 1)
        .take((range.end() - range.start() + 1) as usize)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn ranges_are_read_as_people_write_them() {
    assert_eq!(LineRange::parse("3-7"), Ok(LineRange::new(3, 7).unwrap()));
    assert_eq!(LineRange::parse(" 12 "), Ok(LineRange::line(12).unwrap()));
    assert_eq!(LineRange::parse("4 - 4"), Ok(LineRange::line(4).unwrap()));
    assert_eq!(LineRange::parse("0-3"), Err(LineRangeError::Zero("0-3".into())));
    assert_eq!(LineRange::parse("0"), Err(LineRangeError::Zero("0".into())));
    assert_eq!(LineRange::parse("5-2"), Err(LineRangeError::Backwards("5-2".into())));
    for bad in ["a-b", "", "-", "3-", "-3", "1-2-3", "+1", "1.5", "99999999999", "3–7"] {
        assert!(matches!(LineRange::parse(bad), Err(LineRangeError::Malformed(_))), "{bad:?}");
    }
    assert_eq!(LineRange::new(3, 7).unwrap().to_string(), "3-7");
    assert_eq!(LineRange::line(3).unwrap().to_string(), "3");
    assert!(LineRange::new(0, 1).is_none() && LineRange::new(4, 3).is_none());
    let message = LineRange::parse("a-b").unwrap_err().to_string();
    assert!(message.contains("START-END") && message.contains("\"a-b\""), "{message}");
}

#[test]
fn picking_lines_cuts_at_the_end_and_refuses_past_it() {
    let text = "one\r\ntwo\r\nthree\r\n";
    let picked = pick_lines(text, LineRange::new(2, 3).unwrap()).unwrap();
    assert_eq!(
        (picked.range, picked.total, picked.text.as_str()),
        (LineRange::new(2, 3).unwrap(), 3, "two\nthree")
    );
    let cut = pick_lines(text, LineRange::new(3, 9).unwrap()).unwrap();
    assert_eq!((cut.range.end(), cut.text.as_str()), (3, "three"));
    assert_eq!(
        pick_lines(text, LineRange::line(4).unwrap()),
        Err(LineRangeError::PastEnd { start: 4, lines: 3 })
    );
    assert_eq!(
        pick_lines("", LineRange::line(1).unwrap()),
        Err(LineRangeError::PastEnd { start: 1, lines: 0 })
    );
    let no_end = pick_lines("\u{feff}a\n\nb", LineRange::new(1, 3).unwrap()).unwrap();
    assert_eq!((no_end.total, no_end.text.as_str()), (3, "a\n\nb"));
}

#[test]
fn the_notes_start_after_the_frontmatter_and_its_delimiters() {
    let text = "---\nname: Anna\ntags: [a]\n---\nFirst line\nSecond line\n";
    let lines = EntryLines::of(text);
    assert_eq!(lines.body_start(), Some(5));
    assert_eq!(lines.body_line(1), Some(6));
    assert_eq!(sed(text, LineRange::line(6).unwrap()), "Second line");
    assert_eq!(lines.frontmatter(), LineRange::new(2, 3));
    assert_eq!(EntryLines::of("# Title\n\ntext").body_start(), Some(1));
    assert_eq!(EntryLines::of("\u{feff}# Title\n").body_start(), Some(1));
    assert_eq!(EntryLines::of("---\r\nname: A\r\n...\r\nbody\r\n").body_start(), Some(4));
    assert_eq!(EntryLines::of("---\n---\nx").frontmatter(), None);
    assert_eq!(EntryLines::of("---\nname: A\n"), EntryLines::default());
}

#[test]
fn each_key_spans_its_value() {
    let text = "---\n\
        name: Anna\n\
        one_liner: >\n  My sister,\n  lives in Lyon\n\
        \n\
        # people I call\n\
        tags:\n- family\n- lyon\n\
        \"odd: key\": 1\n\
        context: |\n  # not a comment\n\
        ---\nbody\n";
    let lines = EntryLines::of(text);
    let at = |key: &str| lines.key(key).unwrap();
    assert_eq!(at("name"), LineRange::line(2).unwrap());
    assert_eq!(at("one_liner"), LineRange::new(3, 5).unwrap());
    assert_eq!(sed(text, at("one_liner")), "one_liner: >\n  My sister,\n  lives in Lyon");
    assert_eq!(at("tags"), LineRange::new(8, 10).unwrap());
    assert_eq!(at("odd: key"), LineRange::line(11).unwrap());
    assert_eq!(at("context"), LineRange::new(12, 13).unwrap());
    assert_eq!(lines.key("missing"), None);
    assert_eq!(lines.body_start(), Some(15));
}

#[test]
fn keys_in_a_crlf_file_and_a_flow_map() {
    let lines = EntryLines::of("---\r\nname: A\r\nnext_action: Call\r\n  the bank\r\n---\r\nx\r\n");
    assert_eq!(lines.key("next_action"), LineRange::new(3, 4));
    assert_eq!(lines.body_start(), Some(6));
    let flow = EntryLines::of("---\n{name: A, tags: [x]}\n---\nx\n");
    assert_eq!(flow.key("name"), None);
    assert_eq!(flow.frontmatter(), LineRange::line(2));
}

#[test]
fn key_lines_are_told_from_others() {
    assert_eq!(top_level_key("name: A"), Some("name"));
    assert_eq!(top_level_key("tags:"), Some("tags"));
    assert_eq!(top_level_key("url: http://x"), Some("url"));
    assert_eq!(top_level_key("a:b: c"), Some("a:b"));
    assert_eq!(top_level_key("'it''s': x"), Some("it''s"));
    for not_a_key in ["  name: A", "- item", "# c: x", "{a: 1}", "just text", "", "\"open: x"] {
        assert_eq!(top_level_key(not_a_key), None, "{not_a_key:?}");
    }
}

mod properties {
    use super::*;
    use crate::frontmatter::{Frontmatter, parse_frontmatter_yaml, render_document};
    use proptest::prelude::*;
    use serde_json::Value;

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            "[a-zA-Z0-9 ,.:#'\"-]{0,30}".prop_map(Value::from),
            "[a-z ]{0,20}\n[a-z ]{0,20}\n?".prop_map(Value::from),
            prop::collection::vec("[a-z]{1,8}", 0..4).prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// In a file kb writes, each key's lines read alone as YAML give that key and its
        /// value, and the notes start where the lines say.
        #[test]
        fn each_key_s_lines_hold_its_value(
            pairs in prop::collection::vec(("[a-z_]{1,10}", value()), 0..6),
            body in "[a-z \n]{0,40}",
        ) {
            let fm: Frontmatter = pairs.into_iter().collect();
            let text = render_document(&fm, &body);
            let lines = EntryLines::of(&text);
            for (key, value) in fm.iter() {
                let range = lines.key(key).unwrap();
                let alone = parse_frontmatter_yaml(&format!("{}\n", sed(&text, range))).unwrap();
                // Blank lines ending a block scalar (`|+`) are left out of its lines.
                let trimmed = |v: &Value| v.as_str().map_or_else(|| v.clone(), |s| Value::from(s.trim_end()));
                prop_assert_eq!(alone.get(key).map(trimmed), Some(trimmed(value)), "{}", text);
                prop_assert_eq!(alone.len(), 1);
            }
            let start = lines.body_start().unwrap();
            let after: Vec<&str> = file_lines(&text).skip(start as usize - 1).collect();
            prop_assert_eq!(after, file_lines(&body).collect::<Vec<_>>());
        }
    }
}
