//! Shared helpers: a fixed clock, vault setup, and proptest generators of frontmatter
//! values, entries and bodies.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use chrono::{TimeZone, Utc};
use kb_domain::{Category, Clock, Entry, EntryPath, FixedClock, Frontmatter};
use kb_storage::vault::Vault;
use proptest::prelude::*;
use serde_json::Value;

/// 2026-11-21T09:14:03Z.
pub fn clock() -> Arc<dyn Clock> {
    Arc::new(FixedClock(Utc.with_ymd_and_hms(2026, 11, 21, 9, 14, 3).unwrap()))
}

/// Opens (creating) a vault at `dir`.
pub fn open(dir: &Path) -> Vault {
    Vault::open(dir, clock()).unwrap()
}

/// Every visible `.md` file directly inside the category folders, as vault paths.
pub fn entry_files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for c in Category::ALL {
        // A category folder is made when kb first files an entry there.
        let Ok(items) = fs::read_dir(root.join(c.as_str())) else { continue };
        for item in items {
            let name = item.unwrap().file_name().to_string_lossy().into_owned();
            if !name.starts_with('.') && name.ends_with(".md") {
                out.push(format!("{c}/{name}"));
            }
        }
    }
    out.sort();
    out
}

/// Writes an entry's document by hand, the way an editor would.
pub fn write_by_hand(root: &Path, entry: &Entry) {
    let file = entry.path.under(root);
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(file, entry.to_document()).unwrap();
}

/// Any category.
pub fn category() -> impl Strategy<Value = Category> {
    prop::sample::select(Category::ALL.to_vec())
}

/// Text of any kind: arbitrary unicode, words, YAML-looking words and awkward spacing.
pub fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<String>(),
        2 => "[a-zA-Z0-9 ]{0,20}",
        1 => prop::sample::select(vec![
            "yes", "no", "null", "~", "true", "1.0", "0x1F", "- a", "a: b", "#c", "'q'", "\"", "---",
            "...", "  lead", "trail  ", "multi\nline\n", "crlf\r\nline", "tab\there", "é😀漢字", "",
            "2026-11-21", "2026-11-21T09:14:03Z", "[x]", "{y}", "&a", "*b", "!tag", "%p", "@at", "`t`",
        ])
        .prop_map(str::to_string),
    ]
}

/// A JSON/YAML value: scalars, lists and nested maps.
pub fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f).map(Value::Number)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((text(), inner), 0..5)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

/// A frontmatter of arbitrary keys (unique, in generated order) and values.
pub fn frontmatter() -> impl Strategy<Value = Frontmatter> {
    prop::collection::vec((text(), value()), 0..8).prop_map(|pairs| pairs.into_iter().collect())
}

/// A body: arbitrary text, or lines joined by CRLF or LF.
pub fn body() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        (prop::collection::vec(text(), 0..6), any::<bool>()).prop_map(|(lines, crlf)| lines.join(if crlf {
            "\r\n"
        } else {
            "\n"
        })),
    ]
}

/// A file stem a person might use: words, unicode, spaces.
pub fn stem() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9éü漢 _-]{1,20}"
        .prop_filter("visible, not dot-led", |s| !s.trim().is_empty() && !s.starts_with('.'))
}

/// An entry as a person might have written it in any category.
pub fn entry() -> impl Strategy<Value = Entry> {
    (category(), stem(), frontmatter(), body()).prop_map(|(category, stem, frontmatter, body)| Entry {
        path: EntryPath::in_category(category, &format!("{}.md", stem.trim())).unwrap(),
        frontmatter,
        body,
    })
}
