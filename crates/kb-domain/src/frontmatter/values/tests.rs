use super::*;

fn values(yaml: &str) -> Vec<(String, Option<usize>, String, Quoting, bool, String)> {
    written_values(yaml)
        .unwrap()
        .into_iter()
        .map(|w| (w.key, w.item, yaml[w.range].to_string(), w.quoting, w.in_flow, w.value))
        .collect()
}

fn changed(yaml: &str, key: &str, item: Option<usize>, new: &str) -> String {
    let found = written_values(yaml).unwrap();
    let written = found.iter().find(|w| w.key == key && w.item == item).unwrap();
    let mut out = yaml.to_string();
    out.replace_range(written.range.clone(), &rewrite_value(yaml, written, new));
    out
}

#[test]
fn values_are_found_where_they_are_written() {
    let yaml = "# keep\r\nref: N/T.md  # c\r\nversion: 1.10\r\nq: \"a \\\"b\\\"\"   # c\r\ns: 'it''s' \r\n\
                l: [x, 'y', \"z\"] # c\r\nb:\r\n  - one é\r\n  - 'two'\r\nn:\r\n  k: v\r\nlit: |\r\n  text\r\n\
                e:\r\nt: !!str tagged\r\n";
    let found = values(yaml);
    let short: Vec<(&str, Option<usize>, &str)> =
        found.iter().map(|(k, i, raw, ..)| (k.as_str(), *i, raw.as_str())).collect();
    assert_eq!(
        short,
        [
            ("ref", None, "N/T.md"),
            ("version", None, "1.10"),
            ("q", None, "\"a \\\"b\\\"\""),
            ("s", None, "'it''s'"),
            ("l", Some(0), "x"),
            ("l", Some(1), "'y'"),
            ("l", Some(2), "\"z\""),
            ("b", Some(0), "one é"),
            ("b", Some(1), "'two'"),
        ]
    );
    assert_eq!(found[2].5, "a \"b\"");
    assert_eq!(found[3].5, "it's");
    assert!(found[4].4 && !found[7].4, "flow and block lists are told apart");
    assert_eq!(written_values("- a\n- b\n"), None, "not a map");
    let cut = written_values("a: x\nb: [c\n").unwrap();
    assert_eq!(cut.len(), 2, "the values before the place it stops reading: {cut:?}");
    let hugo = "t: x\naliases: [\n  '/a/',\n  '/b/',\n]\nafter: y\n";
    let values: Vec<String> = written_values(hugo).unwrap().into_iter().map(|w| w.value).collect();
    assert_eq!(values, ["x", "/a/", "/b/"], "a flow list closed in column 0");
    assert_eq!(written_values("").unwrap(), []);
}

#[test]
fn a_change_keeps_every_other_byte_and_quotes_as_yaml_needs() {
    let yaml = "# keep\r\nref: N/T.md\r\nversion: 1.10\r\n";
    assert_eq!(changed(yaml, "ref", None, "N/Re: T.md"), "# keep\r\nref: 'N/Re: T.md'\r\nversion: 1.10\r\n");
    assert_eq!(changed(yaml, "ref", None, "N/U.md"), "# keep\r\nref: N/U.md\r\nversion: 1.10\r\n");
    // Quoted values keep their quotes and their escapes outside the change.
    let yaml = "a: \"caf\\u00e9 [[Old]]\"\nb: 'it''s [[Old]]'\nc: [\"[[Old]]\", plain]\n";
    assert_eq!(
        changed(yaml, "a", None, "café [[New]]"),
        "a: \"caf\\u00e9 [[New]]\"\nb: 'it''s [[Old]]'\nc: [\"[[Old]]\", plain]\n"
    );
    assert_eq!(
        changed(yaml, "b", None, "it's [[N'w]]"),
        "a: \"caf\\u00e9 [[Old]]\"\nb: 'it''s [[N''w]]'\nc: [\"[[Old]]\", plain]\n"
    );
    assert_eq!(
        changed(yaml, "c", Some(0), "[[Say \"x\"]]"),
        "a: \"caf\\u00e9 [[Old]]\"\nb: 'it''s [[Old]]'\nc: [\"[[Say \\\"x\\\"]]\", plain]\n"
    );
    // A plain value that cannot hold the new text is quoted; in a flow list, `,` needs quotes.
    assert_eq!(
        changed(yaml, "c", Some(1), "a, b"),
        "a: \"caf\\u00e9 [[Old]]\"\nb: 'it''s [[Old]]'\nc: [\"[[Old]]\", 'a, b']\n"
    );
    assert_eq!(changed("x: a\n", "x", None, "1.5"), "x: '1.5'\n", "a number would not read as text");
    assert_eq!(changed("x: a\n", "x", None, "two\nlines"), "x: \"two\\nlines\"\n");
    assert_eq!(changed("x: 'a'\n", "x", None, "# b"), "x: '# b'\n");
    assert_eq!(changed("x: a\n", "x", None, "# b"), "x: '# b'\n");
}

mod rewriting {
    use proptest::prelude::*;

    use super::super::*;

    /// A value as a person may write it: quoted one way or another, escapes and all.
    fn written() -> impl Strategy<Value = String> {
        let text = "([a-z]|[ :#,'\"\\[\\]é-]|\\\\){0,12}";
        prop_oneof![
            text.prop_map(|t| format!("'{}'", t.replace('\'', "''"))),
            text.prop_map(|t| format!("\"{}\"", t.replace('\\', "\\\\").replace('"', "\\\""))),
            Just("\"caf\\u00e9 \\x41 \\t\"".to_string()),
            "[a-z][a-z ./]{0,10}".prop_map(|t| t.trim_end().to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(800))]

        /// Whatever the old value and its quoting, and whatever the new text, the bytes
        /// written read as the new text, in a list or not, and the block around them stays.
        #[test]
        fn a_rewritten_value_reads_as_the_new_text(
            old in written(),
            new in "([a-z]|[ :#,'\"\\[\\]é\\t-]|\\\\|\n){0,12}",
            in_flow in any::<bool>(),
        ) {
            let yaml = if in_flow { format!("# c\nk: [{old}, x]  # c\nz: 1.10\n") } else { format!("# c\nk: {old}  # c\nz: 1.10\n") };
            let Ok(serde_yaml::Value::Mapping(_)) = serde_yaml::from_str::<serde_yaml::Value>(&yaml) else { return Ok(()) };
            let found = written_values(&yaml).unwrap();
            let value = &found[0];
            prop_assert_eq!(&value.key, "k");
            let text = rewrite_value(&yaml, value, &new);
            let mut out = yaml.clone();
            out.replace_range(value.range.clone(), &text);
            let read: serde_yaml::Value = serde_yaml::from_str(&out).unwrap();
            let got = if in_flow { &read["k"][0] } else { &read["k"] };
            prop_assert_eq!(got.as_str(), Some(new.as_str()), "{}", out);
            prop_assert!(out.starts_with("# c\nk: ") && out.ends_with("  # c\nz: 1.10\n"), "{}", out);
        }
    }
}
