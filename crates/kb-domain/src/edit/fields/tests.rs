//! The in-place setter on hand-written blocks: which lines are a field's, and which
//! layouts it declines.

use super::*;
use serde_json::json;

fn changes(pairs: &[(&str, Value)]) -> Frontmatter {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

fn set(yaml: &str, pairs: &[(&str, Value)]) -> Option<String> {
    set_fields_in_place(yaml, &changes(pairs))
}

const YAML: &str = "\
# Shed project
name: 'Shed roof'   # the name
version: 1.10
status: active

tags:
  - home
  # - garden
  - roof
# about the due date
due_date: 2026-12-01
notes: |
  line one
  # not a comment

  line three
\"odd key\" : x
";

#[test]
fn a_set_field_rewrites_its_own_lines_only() {
    let out = set(YAML, &[("status", json!("done"))]).unwrap();
    assert_eq!(out, YAML.replace("status: active\n", "status: done\n"));
    let out = set(YAML, &[("tags", json!(["a"]))]).unwrap();
    assert_eq!(out, YAML.replace("tags:\n  - home\n  # - garden\n  - roof\n", "tags:\n- a\n"));
    let out = set(YAML, &[("notes", json!("short"))]).unwrap();
    assert_eq!(
        out,
        YAML.replace("notes: |\n  line one\n  # not a comment\n\n  line three\n", "notes: short\n")
    );
    // The key keeps the way it was written.
    let out = set(YAML, &[("odd key", json!(2))]).unwrap();
    assert_eq!(out, YAML.replace("\"odd key\" : x\n", "\"odd key\" : 2\n"));
    let out = set(YAML, &[("name", json!("Shed"))]).unwrap();
    assert_eq!(out, YAML.replace("name: 'Shed roof'   # the name\n", "name: Shed\n"));
}

#[test]
fn an_unchanged_value_keeps_its_bytes() {
    assert_eq!(set(YAML, &[("version", json!(1.1))]).unwrap(), YAML);
    assert_eq!(set(YAML, &[("due_date", json!("2026-12-01"))]).unwrap(), YAML);
}

#[test]
fn null_removes_the_fields_lines_only() {
    let out = set(YAML, &[("tags", Value::Null), ("missing", Value::Null)]).unwrap();
    assert_eq!(out, YAML.replace("tags:\n  - home\n  # - garden\n  - roof\n", ""));
    let out = set(YAML, &[("odd key", Value::Null)]).unwrap();
    assert_eq!(out, YAML.replace("\"odd key\" : x\n", ""));
}

#[test]
fn new_fields_go_at_the_end() {
    let out = set(YAML, &[("mood", json!("calm")), ("list", json!(["a", "b"]))]).unwrap();
    assert_eq!(out, format!("{YAML}mood: calm\nlist:\n- a\n- b\n"));
    assert_eq!(set("", &[("a", json!(1))]).unwrap(), "a: 1\n");
    assert_eq!(set("# only a comment\n", &[("a", json!(1))]).unwrap(), "# only a comment\na: 1\n");
    assert_eq!(set("a: 1", &[("b", json!(2))]).unwrap(), "a: 1\nb: 2\n");
}

#[test]
fn crlf_blocks_stay_crlf() {
    let yaml = "a: 1\r\nb: [x]\r\n";
    assert_eq!(
        set(yaml, &[("b", json!(["y", "z"])), ("c", json!(true))]).unwrap(),
        "a: 1\r\nb:\r\n- y\r\n- z\r\nc: true\r\n"
    );
}

#[test]
fn lists_at_the_keys_indentation_are_the_keys() {
    let yaml = "tags:\n- a\n- b\nnext: 1\n";
    assert_eq!(set(yaml, &[("tags", json!("x"))]).unwrap(), "tags: x\nnext: 1\n");
}

#[test]
fn layouts_it_cannot_follow_are_declined() {
    assert_eq!(set("{a: 1, b: 2}\n", &[("a", json!(3))]), None);
    assert_eq!(set("  a: 1\n  b: 2\n", &[("a", json!(3))]), None);
    assert_eq!(set("? a\n: 1\n", &[("a", json!(3))]), None);
    assert_eq!(set("a: [unclosed\n", &[("a", json!(3))]), None);
    // A key YAML reads differently from its text.
    assert_eq!(set("~: 1\n", &[("a", json!(3))]), None);
}

#[test]
fn key_lines_are_read_as_yaml_reads_them() {
    assert_eq!(key_of("a: 1"), Some(("a".into(), 2)));
    assert_eq!(key_of("a:"), Some(("a".into(), 2)));
    assert_eq!(key_of("url: http://x"), Some(("url".into(), 4)));
    assert_eq!(key_of("a:b: c"), Some(("a:b".into(), 4)));
    assert_eq!(key_of("'it''s': 1"), Some(("it's".into(), 8)));
    assert_eq!(key_of("\"a\\\"b\": 1"), Some(("a\"b".into(), 7)));
    assert_eq!(key_of("a:b"), None);
    assert_eq!(key_of("[a]: 1"), None);
    assert_eq!(key_of("a #b: 1"), None);
}
