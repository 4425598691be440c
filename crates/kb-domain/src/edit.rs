//! Exact edits of an entry's text: the body edit modes ([`body`]) and the in-place
//! frontmatter field setter ([`fields`]), put together by [`edit_document`], which changes
//! only the lines of the fields it sets and the body it is given, and checks that the
//! result reads back as intended.

pub mod body;
pub mod fields;

pub use body::{BodyEdit, BodyEditError, BodyEditMode, BodyEditRequest};
pub use fields::set_fields_in_place;

use serde_json::Value;

use crate::frontmatter::{
    Frontmatter, FrontmatterError, document_spans, parse_document, parse_frontmatter_yaml, render_document,
};

/// How [`edit_document`] wrote its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// Only the lines of the fields set (and the body, when given) changed.
    InPlace,
    /// The frontmatter block was written anew (kb's own layout), because the file had none
    /// or it is laid out in a way that cannot be edited in place. The body is still kept
    /// byte for byte unless a new one was given.
    Rendered,
}

/// A document after [`edit_document`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditedDocument {
    /// The new text of the file.
    pub text: String,
    /// How it was written.
    pub written: Written,
}

/// The document `text` with `changes` made to its frontmatter (each key set to its value,
/// or removed when the value is null; new keys at the end) and its body replaced by `body`
/// when given.
///
/// Every byte outside the lines of the fields set and outside the body is kept, and the
/// answer is read back to make sure it holds exactly the fields and body intended. Where
/// that cannot be done — a file without frontmatter, or a block laid out in a way the
/// in-place setter does not follow — the frontmatter block is written anew from its
/// parsed fields, as kb writes new entries, and the body is still kept as it was.
/// Fails only when `text` is not a readable document.
pub fn edit_document(
    text: &str,
    changes: &Frontmatter,
    body: Option<&str>,
) -> Result<EditedDocument, FrontmatterError> {
    let spans = document_spans(text)?;
    let new_body = body.unwrap_or(&text[spans.body.clone()]);
    let bom = if text.starts_with('\u{feff}') { "\u{feff}" } else { "" };
    let Some(yaml) = spans.yaml else {
        // No block to edit: one is written, above the body as it was — unless no field is
        // set, when the file stays without one.
        let frontmatter = with_changes(Frontmatter::new(), changes);
        if frontmatter.is_empty() {
            return Ok(EditedDocument { text: format!("{bom}{new_body}"), written: Written::InPlace });
        }
        return Ok(rendered(bom, &frontmatter, new_body, line_end(text)));
    };
    let expected = with_changes(parse_frontmatter_yaml(&text[yaml.clone()])?, changes);
    if let Some(new_yaml) = set_fields_in_place(&text[yaml.clone()], changes) {
        let between = &text[yaml.end..spans.body.start];
        let candidate = format!("{}{new_yaml}{between}{new_body}", &text[..yaml.start]);
        if reads_as(&candidate, &expected, new_body) {
            return Ok(EditedDocument { text: candidate, written: Written::InPlace });
        }
    }
    // A layout the setter cannot follow (or whose edit would read differently): the
    // block is written anew, which is unavoidable here.
    Ok(rendered(bom, &expected, new_body, line_end(text)))
}

/// `frontmatter` with `changes` made: null removes, anything else sets.
pub fn with_changes(mut frontmatter: Frontmatter, changes: &Frontmatter) -> Frontmatter {
    for (key, value) in changes.iter() {
        if value.is_null() {
            frontmatter.remove(key);
        } else {
            frontmatter.set(key.clone(), value.clone());
        }
    }
    frontmatter
}

/// The document written anew: `frontmatter` as kb writes it, its lines ended with `nl`
/// (the file's own line end), above `body`.
fn rendered(bom: &str, frontmatter: &Frontmatter, body: &str, nl: &str) -> EditedDocument {
    let block = render_document(frontmatter, "");
    let block = if nl == "\n" { block } else { block.replace('\n', nl) };
    let text = format!("{bom}{block}{body}");
    // YAML reads a `\r\n` inside a block of text as `\n`, so the fields read the same;
    // should they not, the block keeps kb's own line ends.
    if nl != "\n" && !reads_as(&text, frontmatter, body) {
        return EditedDocument {
            text: format!("{bom}{}", render_document(frontmatter, body)),
            written: Written::Rendered,
        };
    }
    EditedDocument { text, written: Written::Rendered }
}

/// The line end `text` uses: `\r\n` when its first line ends so, else `\n`.
fn line_end(text: &str) -> &'static str {
    match text.find('\n') {
        Some(at) if text[..at].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// Whether `text` reads as exactly these fields, in this order, and this body.
fn reads_as(text: &str, frontmatter: &Frontmatter, body: &str) -> bool {
    parse_document(text).is_ok_and(|doc| {
        doc.body == body && doc.frontmatter.is_some_and(|read| same_frontmatter(&read, frontmatter))
    })
}

/// Whether two frontmatters hold the same keys in the same order with the same values.
fn same_frontmatter(a: &Frontmatter, b: &Frontmatter) -> bool {
    a.len() == b.len() && a.iter().zip(b.iter()).all(|((k1, v1), (k2, v2))| k1 == k2 && same(v1, v2))
}

/// Whether two values are the same data (maps compared in order).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|((k1, v1), (k2, v2))| k1 == k2 && same(v1, v2))
        }
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y)),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests;
