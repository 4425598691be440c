//! Whole documents: in place when the block allows it, written anew (body kept) when it
//! does not, and always read back as intended.

use super::*;
use serde_json::json;

fn changes(pairs: &[(&str, Value)]) -> Frontmatter {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

#[test]
fn only_the_lines_of_the_fields_set_change() {
    let text =
        "\u{feff}---\n# mine\nname: \"Shed\"\nversion: 1.10\n\nstatus: active # now\n...\nBody\n---\nmore\n";
    let edited =
        edit_document(text, &changes(&[("status", json!("done")), ("new", json!(1))]), None).unwrap();
    assert_eq!(edited.written, Written::InPlace);
    assert_eq!(
        edited.text,
        "\u{feff}---\n# mine\nname: \"Shed\"\nversion: 1.10\n\nstatus: done\nnew: 1\n...\nBody\n---\nmore\n"
    );
    let with_body = edit_document(text, &changes(&[]), Some("new body")).unwrap();
    assert_eq!(
        with_body.text,
        "\u{feff}---\n# mine\nname: \"Shed\"\nversion: 1.10\n\nstatus: active # now\n...\nnew body"
    );
}

#[test]
fn a_file_without_frontmatter_gets_a_block_above_its_body() {
    // There is no block to edit: one is written, which is unavoidable.
    let edited =
        edit_document("# Notes\n\ntext", &changes(&[("a", json!("x")), ("b", Value::Null)]), None).unwrap();
    assert_eq!(edited.written, Written::Rendered);
    assert_eq!(edited.text, "---\na: x\n---\n# Notes\n\ntext");
}

#[test]
fn an_odd_layout_is_written_anew_with_the_body_kept() {
    // A flow map as the whole block: the setter declines, so the block is rendered.
    let text = "---\n{name: Shed, version: 1.10}\n---\n  body bytes \n";
    let edited = edit_document(text, &changes(&[("status", json!("done"))]), None).unwrap();
    assert_eq!(edited.written, Written::Rendered);
    assert_eq!(edited.text, "---\nname: Shed\nversion: 1.1\nstatus: done\n---\n  body bytes \n");
    // An alias whose anchor is replaced would change another field: written anew too.
    let text = "---\na: &x 1\nb: *x\n---\n";
    let edited = edit_document(text, &changes(&[("a", json!(2))]), None).unwrap();
    assert_eq!(edited.written, Written::Rendered);
    assert_eq!(edited.text, "---\na: 2\nb: 1\n---\n");
}

#[test]
fn unreadable_documents_are_errors() {
    assert!(edit_document("---\nname: x\n", &changes(&[("a", json!(1))]), None).is_err());
}

#[test]
fn a_block_written_anew_keeps_the_files_line_ends() {
    // A CRLF note without frontmatter gets its new block in CRLF too.
    let edited = edit_document("# Notes\r\n\r\ntext\r\n", &changes(&[("a", json!("x"))]), None).unwrap();
    assert_eq!(edited.text, "---\r\na: x\r\n---\r\n# Notes\r\n\r\ntext\r\n");
    let multi = edit_document("text\r\n", &changes(&[("a", json!("one\ntwo\n"))]), None).unwrap();
    assert_eq!(multi.text, "---\r\na: |\r\n  one\r\n  two\r\n---\r\ntext\r\n");
    assert_eq!(parse_document(&multi.text).unwrap().frontmatter.unwrap().get_str("a"), Some("one\ntwo\n"));
    // A CRLF block the setter cannot follow is written anew in CRLF.
    let text = "---\r\n{name: Shed}\r\n---\r\nbody\r\n";
    let edited = edit_document(text, &changes(&[("status", json!("done"))]), None).unwrap();
    assert_eq!(edited.text, "---\r\nname: Shed\r\nstatus: done\r\n---\r\nbody\r\n");
}
