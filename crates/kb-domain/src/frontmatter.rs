//! Frontmatter: the ordered YAML map at the top of an entry file, and the reader and
//! writer of whole entry documents (`---` YAML `---` body).
//!
//! Reading is forgiving (no frontmatter at all is fine) but never guesses: YAML that does
//! not parse, or is not a map, is reported as malformed so the file is skipped and never
//! rewritten.

mod values;

use std::ops::Range;

pub use values::{Quoting, WrittenValue, rewrite_value, written_values};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The frontmatter of an entry: keys in file order, values as JSON-like data.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Frontmatter(IndexMap<String, Value>);

impl Frontmatter {
    /// An empty map.
    pub fn new() -> Frontmatter {
        Frontmatter(IndexMap::new())
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// The value under `key` when it is a string.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    /// The value under `key` as a list of strings: a list keeps its string items, a single
    /// string is a one-item list, anything else is empty.
    pub fn get_str_list(&self, key: &str) -> Vec<String> {
        match self.0.get(key) {
            Some(Value::Array(items)) => {
                items.iter().filter_map(|v| v.as_str().map(str::to_string)).collect()
            }
            Some(Value::String(s)) if !s.is_empty() => vec![s.clone()],
            _ => Vec::new(),
        }
    }

    /// Sets `key`, keeping its position when it already exists, appending it otherwise.
    pub fn set(&mut self, key: impl Into<String>, value: Value) {
        self.0.insert(key.into(), value);
    }

    /// Removes `key`, keeping the order of the others.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.0.shift_remove(key)
    }

    /// Whether `key` is present.
    pub fn contains(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// The keys and values in order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.0.iter()
    }

    /// The keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.keys()
    }

    /// How many keys there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The map as a JSON object.
    pub fn to_json(&self) -> Value {
        Value::Object(self.0.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
    }
}

impl FromIterator<(String, Value)> for Frontmatter {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        Frontmatter(iter.into_iter().collect())
    }
}

/// Why a document's frontmatter could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontmatterError {
    /// The bytes are not UTF-8 text.
    #[error("file is not UTF-8 text")]
    NotUtf8,
    /// The opening `---` has no closing `---`.
    #[error("frontmatter opened with '---' is never closed")]
    Unclosed,
    /// The YAML does not parse.
    #[error("frontmatter is not valid YAML: {0}")]
    Yaml(String),
    /// The YAML is valid but not a map of keys to values.
    #[error("frontmatter must be a map of keys to values, found {0}")]
    NotAMap(&'static str),
}

/// A document split into its frontmatter (absent when the file has none) and its body.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The parsed frontmatter, `None` when the file does not start with `---`.
    pub frontmatter: Option<Frontmatter>,
    /// Everything after the closing delimiter line, byte for byte.
    pub body: String,
}

/// Reads a document from raw bytes.
pub fn parse_document_bytes(bytes: &[u8]) -> Result<Document, FrontmatterError> {
    let text = std::str::from_utf8(bytes).map_err(|_| FrontmatterError::NotUtf8)?;
    parse_document(text)
}

/// Reads a document: an optional `---` … `---` (or `...`) YAML block, then the body.
pub fn parse_document(text: &str) -> Result<Document, FrontmatterError> {
    let spans = document_spans(text)?;
    let body = text[spans.body.clone()].to_string();
    match spans.yaml {
        None => Ok(Document { frontmatter: None, body }),
        Some(yaml) => Ok(Document { frontmatter: Some(parse_yaml_map(&text[yaml])?), body }),
    }
}

/// Where the parts of a document are, as byte ranges of its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentSpans {
    /// The YAML between the delimiter lines, `None` when the document has no frontmatter.
    pub yaml: Option<Range<usize>>,
    /// The body: everything after the closing delimiter line (or the whole text without a
    /// leading byte-order mark when there is no frontmatter).
    pub body: Range<usize>,
}

/// Finds the frontmatter block and the body of a document without parsing the YAML.
pub fn document_spans(text: &str) -> Result<DocumentSpans, FrontmatterError> {
    let start = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    let mut lines = LineSplitter { rest: &text[start..], offset: start };
    match lines.next() {
        Some((first, _)) if is_delimiter(first, false) => {}
        _ => return Ok(DocumentSpans { yaml: None, body: start..text.len() }),
    }
    let yaml_start = lines.offset;
    while let Some((line, line_start)) = lines.next() {
        if is_delimiter(line, true) {
            return Ok(DocumentSpans { yaml: Some(yaml_start..line_start), body: lines.offset..text.len() });
        }
    }
    Err(FrontmatterError::Unclosed)
}

/// Parses the YAML of a frontmatter block (the text between the delimiter lines).
pub fn parse_frontmatter_yaml(yaml: &str) -> Result<Frontmatter, FrontmatterError> {
    parse_yaml_map(yaml)
}

/// Writes a document the way kb stores entries: `---\n{yaml}---\n{body}`.
pub fn render_document(frontmatter: &Frontmatter, body: &str) -> String {
    let mut out = String::from("---\n");
    if !frontmatter.is_empty() {
        // Serialising a map of strings to JSON values cannot fail; an empty block is the
        // harmless answer if it ever did.
        out.push_str(&serde_yaml::to_string(&frontmatter.0).unwrap_or_default());
    }
    out.push_str("---\n");
    out.push_str(body);
    out
}

fn is_delimiter(line: &str, closing: bool) -> bool {
    let trimmed = line.trim_end_matches([' ', '\t', '\r']);
    trimmed == "---" || (closing && trimmed == "...")
}

/// Splits text into lines (without their `\n`), tracking the byte offset after each.
struct LineSplitter<'a> {
    rest: &'a str,
    offset: usize,
}

impl<'a> Iterator for LineSplitter<'a> {
    /// The line and the byte offset where it starts.
    type Item = (&'a str, usize);

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let start = self.offset;
        let (line, consumed) = match self.rest.find('\n') {
            Some(i) => (&self.rest[..i], i + 1),
            None => (self.rest, self.rest.len()),
        };
        self.rest = &self.rest[consumed..];
        self.offset += consumed;
        Some((line, start))
    }
}

fn parse_yaml_map(yaml: &str) -> Result<Frontmatter, FrontmatterError> {
    if yaml.trim().is_empty() {
        return Ok(Frontmatter::new());
    }
    let value: serde_yaml::Value =
        serde_yaml::from_str(yaml).map_err(|e| FrontmatterError::Yaml(e.to_string()))?;
    if has_complex_key(&value) {
        // `title: {{ .Name }}` (a Go template) parses as a map used as a key: not
        // frontmatter anyone meant, and rewriting it would change its meaning.
        return Err(FrontmatterError::Yaml("a key is a map or a list, not text (a template?)".into()));
    }
    match value {
        serde_yaml::Value::Null => Ok(Frontmatter::new()),
        serde_yaml::Value::Mapping(map) => {
            Ok(map.into_iter().map(|(k, v)| (key_text(k), yaml_to_json(v))).collect())
        }
        other => Err(FrontmatterError::NotAMap(kind_name(&other))),
    }
}

/// Whether any map in `value` has a key that is itself a map or a list.
fn has_complex_key(value: &serde_yaml::Value) -> bool {
    match value {
        serde_yaml::Value::Mapping(map) => map.iter().any(|(k, v)| {
            matches!(k, serde_yaml::Value::Mapping(_) | serde_yaml::Value::Sequence(_)) || has_complex_key(v)
        }),
        serde_yaml::Value::Sequence(items) => items.iter().any(has_complex_key),
        serde_yaml::Value::Tagged(tagged) => has_complex_key(&tagged.value),
        _ => false,
    }
}

fn kind_name(value: &serde_yaml::Value) -> &'static str {
    match value {
        serde_yaml::Value::Null => "nothing",
        serde_yaml::Value::Bool(_) => "a boolean",
        serde_yaml::Value::Number(_) => "a number",
        serde_yaml::Value::String(_) => "a string",
        serde_yaml::Value::Sequence(_) => "a list",
        serde_yaml::Value::Mapping(_) => "a map",
        serde_yaml::Value::Tagged(_) => "a tagged value",
    }
}

fn key_text(key: serde_yaml::Value) -> String {
    match key {
        serde_yaml::Value::String(s) => s,
        serde_yaml::Value::Null => String::new(),
        serde_yaml::Value::Bool(b) => b.to_string(),
        serde_yaml::Value::Number(n) => n.to_string(),
        other => serde_yaml::to_string(&other).map(|s| s.trim_end().to_string()).unwrap_or_default(),
    }
}

/// Converts YAML data to JSON data. Tags are dropped (their value kept); numbers JSON cannot
/// hold (`.nan`, `.inf`) become their YAML text.
fn yaml_to_json(value: serde_yaml::Value) -> Value {
    match value {
        serde_yaml::Value::Null => Value::Null,
        serde_yaml::Value::Bool(b) => Value::Bool(b),
        serde_yaml::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                n.as_f64()
                    .and_then(serde_json::Number::from_f64)
                    .map_or_else(|| Value::String(n.to_string()), Value::Number)
            }
        }
        serde_yaml::Value::String(s) => Value::String(s),
        serde_yaml::Value::Sequence(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        serde_yaml::Value::Mapping(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (key_text(k), yaml_to_json(v))).collect())
        }
        serde_yaml::Value::Tagged(tagged) => yaml_to_json(tagged.value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn reads_frontmatter_and_body() {
        let doc = parse_document("---\nname: A\ntags: [x, y]\nmood: calm\n---\nHello\n").unwrap();
        let fm = doc.frontmatter.unwrap();
        assert_eq!(fm.keys().collect::<Vec<_>>(), ["name", "tags", "mood"]);
        assert_eq!(fm.get_str_list("tags"), ["x", "y"]);
        assert_eq!(doc.body, "Hello\n");
    }

    #[test]
    fn crlf_bom_and_dots() {
        let doc = parse_document("\u{feff}---\r\nname: A\r\n...\r\nbody\r\nmore\r\n").unwrap();
        assert_eq!(doc.frontmatter.unwrap().get_str("name"), Some("A"));
        assert_eq!(doc.body, "body\r\nmore\r\n");
    }

    #[test]
    fn no_frontmatter_means_all_body() {
        let doc = parse_document("# Title\n\ntext").unwrap();
        assert!(doc.frontmatter.is_none());
        assert_eq!(doc.body, "# Title\n\ntext");
        let empty = parse_document("").unwrap();
        assert!(empty.frontmatter.is_none());
    }

    #[test]
    fn malformed_is_reported() {
        assert_eq!(parse_document("---\nname: A\n"), Err(FrontmatterError::Unclosed));
        assert!(matches!(parse_document("---\n- a\n- b\n---\n"), Err(FrontmatterError::NotAMap(_))));
        assert!(matches!(parse_document("---\nname: [unclosed\n---\n"), Err(FrontmatterError::Yaml(_))));
        assert!(matches!(
            parse_document("---\ntitle: \"{{ replace .Name \"-\" \" \" | title }}\"\n---\n"),
            Err(FrontmatterError::Yaml(_))
        ));
        assert_eq!(parse_document_bytes(&[0xff, 0xfe]), Err(FrontmatterError::NotUtf8));
        let hugo = "---\ntitle: {{ replace .File.ContentBaseName \"-\" \" \" | title }}\n---\n";
        assert!(matches!(parse_document(hugo), Err(FrontmatterError::Yaml(_))));
        assert!(matches!(parse_document("---\na:\n  ? [x]\n  : y\n---\n"), Err(FrontmatterError::Yaml(_))));
    }

    #[test]
    fn comment_only_and_empty_blocks_are_empty_maps() {
        let doc = parse_document("---\n# just a comment\n---\nx").unwrap();
        assert_eq!(doc.frontmatter, Some(Frontmatter::new()));
        let doc = parse_document("---\n---\n").unwrap();
        assert_eq!(doc.frontmatter, Some(Frontmatter::new()));
        assert_eq!(doc.body, "");
    }

    #[test]
    fn render_round_trips_awkward_values() {
        let fm: Frontmatter = [
            ("name".to_string(), json!("yes")),
            ("n".to_string(), json!("1.0")),
            ("multi".to_string(), json!("line one\nline two\n")),
            ("colon".to_string(), json!("a: b # c")),
            ("nested".to_string(), json!({"a": [1, 2.5, null, true]})),
        ]
        .into_iter()
        .collect();
        let text = render_document(&fm, "body\r\n");
        let doc = parse_document(&text).unwrap();
        assert_eq!(doc.frontmatter.unwrap(), fm);
        assert_eq!(doc.body, "body\r\n");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = parse_document_bytes(&bytes);
        }

        #[test]
        fn near_yaml_never_panics(
            lines in proptest::collection::vec(
                "(---|\\.\\.\\.|[a-z_]{1,6}: ?|  - |[\\[\\]{}:,&*!|>'\"#%@`?-]|[a-z0-9 ]{0,8}|\t|\r){0,6}", 0..12)
        ) {
            let text = format!("---\n{}\n", lines.join("\n"));
            let _ = parse_document(&text);
        }
    }
}
