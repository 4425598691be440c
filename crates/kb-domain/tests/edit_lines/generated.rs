//! Generated frontmatter blocks with comments, blank lines, quoted keys and values, odd
//! number and date formats, flow and block lists and block scalars: setting, adding and
//! removing fields changes only those fields' lines, and the body keeps its bytes.

use kb_domain::Frontmatter;
use kb_domain::edit::{Written, edit_document};
use kb_domain::frontmatter::{document_spans, parse_document};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::oracle::{only_changed_lines, same_frontmatter};

/// Values as people write them (the text after `key:`); block scalars are marked so no
/// indented comment is generated after them (it would be their text).
const VALUES: &[(&str, bool)] = &[
    (" 1.10", false),
    (" 007", false),
    (" 1e3", false),
    (" 0x1F", false),
    (" -0.0", false),
    (" .5", false),
    (" +12", false),
    (" 1_000", false),
    (" 2026-11-23", false),
    (" 2026-11-23T10:00:00+02:00", false),
    (" 2026-11-23 10:00:00", false),
    (" 23/11/2026", false),
    (" '2026-11-23'", false),
    (" 'single ''quoted'''", false),
    (" \"double \\\" quoted \\u00e9\"", false),
    (" plain text   # a trailing comment", false),
    (" yes", false),
    (" ~", false),
    ("", false),
    (" true", false),
    (" [a, 'b', \"c\", 1.50]", false),
    (" {x: 1, y: [2, 3]}", false),
    ("\n  - a\n  - 'b'", false),
    ("\n- a\n- 2.0", false),
    ("\n  - a\n  # a commented-out item\n  - b", false),
    ("\n  nested: map\n  other: 1.0", false),
    (" |\n  text\n  # a hash in the text\n\n  more", true),
    (" >-\n  folded\n  text", true),
    (" first line\n  continued", false),
    (" \"quoted\n  across lines\"", false),
    (" https://example.com/a#b", false),
];

/// A line of the block that is not a field.
const OTHER_LINES: &[&str] = &["", "# a comment", "  # an indented comment", "#", "   "];

/// One top-level item of a generated block.
#[derive(Debug, Clone)]
enum Item {
    /// A field: how its key is written (0 plain, 1 single, 2 double quotes), its value's
    /// index in [`VALUES`].
    Field { quoting: u8, value: usize },
    /// A comment or blank line from [`OTHER_LINES`].
    Other(usize),
}

fn block(items: &[Item], crlf: bool) -> (String, Vec<String>) {
    let mut text = String::new();
    let mut keys = Vec::new();
    let mut after_block_scalar = false;
    for item in items {
        match item {
            Item::Field { quoting, value } => {
                let key = format!("k{}", keys.len());
                let written = match quoting {
                    0 => key.clone(),
                    1 => format!("'{key}'"),
                    _ => format!("\"{key}\" "),
                };
                let (value, block_scalar) = VALUES[*value];
                text.push_str(&format!("{written}:{value}\n"));
                after_block_scalar = block_scalar;
                keys.push(key);
            }
            Item::Other(i) => {
                let line = OTHER_LINES[*i];
                // After a block scalar an indented line would be its text: keep comments
                // in column 0 there.
                let line = if after_block_scalar { line.trim_start() } else { line };
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    if crlf {
        text = text.replace('\n', "\r\n");
    }
    (text, keys)
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        3 => (0u8..3, 0..VALUES.len()).prop_map(|(quoting, value)| Item::Field { quoting, value }),
        1 => (0..OTHER_LINES.len()).prop_map(Item::Other),
    ]
}

/// A value an update may set.
fn new_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        "[a-z ]{0,10}".prop_map(Value::from),
        Just(json!("2026-11-23T09:14:03Z")),
        Just(json!("1.10")),
        Just(json!("multi\nline\n")),
        Just(json!("# not a comment")),
        Just(json!("---")),
        (-1000i64..1000).prop_map(Value::from),
        Just(json!(1.1)),
        Just(json!(true)),
        prop::collection::vec("[a-z]{1,5}", 0..3).prop_map(Value::from),
        Just(json!({"a": [1, 2], "b": "c"})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_field_update_changes_only_its_lines(
        items in prop::collection::vec(item(), 0..14),
        crlf in any::<bool>(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), new_value()), 0..3),
        added in prop::collection::vec(new_value(), 0..2),
        body in "(---\n|[a-z #:]{0,10}\n){0,4}",
    ) {
        let (yaml, keys) = block(&items, crlf);
        let text = format!("---\n{yaml}---\n{body}");
        prop_assume!(parse_document(&text).is_ok());
        let mut changes = Frontmatter::new();
        if !keys.is_empty() {
            for (index, value) in &picks {
                changes.set(index.get(&keys).clone(), value.clone());
            }
        }
        for (i, value) in added.iter().enumerate() {
            changes.set(format!("new{i}"), value.clone());
        }
        changes.set("updated_at", json!("2026-11-23T09:14:03Z"));

        let edited = edit_document(&text, &changes, None).unwrap();
        prop_assert_eq!(edited.written, Written::InPlace, "{}", text);
        let spans = document_spans(&edited.text).unwrap();
        prop_assert_eq!(&edited.text[spans.body.clone()], body.as_str());
        prop_assert_eq!(&edited.text[..4], "---\n");
        let new_yaml = &edited.text[spans.yaml.unwrap()];
        if let Err(problem) = only_changed_lines(&yaml, new_yaml, &changes) {
            prop_assert!(false, "{}", problem);
        }
        let mut expected = parse_document(&text).unwrap().frontmatter.unwrap();
        for (key, value) in changes.iter() {
            if value.is_null() { expected.remove(key); } else { expected.set(key.clone(), value.clone()); }
        }
        let read = parse_document(&edited.text).unwrap().frontmatter.unwrap();
        prop_assert!(same_frontmatter(&read, &expected));
    }
}
