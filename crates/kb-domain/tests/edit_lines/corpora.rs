//! The real markdown of the shared corpora (shared/corpora beside the repository): an
//! update of any field of any file changes only that field's lines and `updated_at`'s,
//! and the body keeps its bytes.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use kb_domain::edit::{Written, edit_document};
use kb_domain::frontmatter::{document_spans, parse_document};
use kb_domain::{Entry, EntryPath, EntryUpdate, Frontmatter};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::oracle::only_changed_lines;

/// Where the shared corpora are: `shared/corpora` beside the repository (as in CI), or
/// `/work/shared/corpora`. Missing corpora skip the tests locally and fail them under CI.
fn corpora_root() -> Option<PathBuf> {
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora");
    let found = [beside, PathBuf::from("/work/shared/corpora")].into_iter().find(|p| p.is_dir());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "the shared corpora are missing: CI must have shared/ beside the repo"
        );
        eprintln!("corpora not found; skipped");
    }
    found
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            markdown_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "md") {
            out.push(path);
        }
    }
}

/// A corpus file kb can read as an entry.
struct Sample {
    name: String,
    text: String,
    keys: Vec<String>,
}

/// Every readable corpus file, in path order.
static SAMPLES: LazyLock<Vec<Sample>> = LazyLock::new(|| {
    let Some(root) = corpora_root() else { return Vec::new() };
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    files.sort();
    files
        .into_iter()
        .filter_map(|file| {
            let text = String::from_utf8(std::fs::read(&file).ok()?).ok()?;
            let doc = parse_document(&text).ok()?;
            let keys = doc.frontmatter.map(|fm| fm.keys().cloned().collect()).unwrap_or_default();
            let name = file.strip_prefix(&root).unwrap_or(&file).display().to_string();
            Some(Sample { name, text, keys })
        })
        .collect()
});

fn now() -> DateTime<Utc> {
    "2026-11-23T09:14:03Z".parse().unwrap()
}

/// Checks an edit of `sample`: in place, only the changed fields' lines differ, the body
/// is the same bytes. Answers how it was written.
fn check(sample: &Sample, edited_text: &str, written: Written, changes: &Frontmatter) -> Result<(), String> {
    let old = document_spans(&sample.text).map_err(|e| e.to_string())?;
    let new = document_spans(edited_text).map_err(|e| e.to_string())?;
    if edited_text[new.body.clone()] != sample.text[old.body.clone()] {
        return Err(format!("{}: the body changed", sample.name));
    }
    match (written, old.yaml, new.yaml) {
        (Written::InPlace, Some(old_yaml), Some(new_yaml)) => {
            if edited_text[..new_yaml.start] != sample.text[..old_yaml.start]
                || edited_text[new_yaml.end..new.body.start] != sample.text[old_yaml.end..old.body.start]
            {
                return Err(format!("{}: the delimiters changed", sample.name));
            }
            only_changed_lines(&sample.text[old_yaml], &edited_text[new_yaml], changes)
                .map_err(|e| format!("{}: {e}", sample.name))
        }
        // No block to edit, or a JSON-style flow map as the whole block: written anew.
        (Written::Rendered, None, Some(_)) => Ok(()),
        (Written::Rendered, Some(old_yaml), Some(_))
            if sample.text[old_yaml.clone()].trim_start().starts_with('{') =>
        {
            Ok(())
        }
        (written, _, _) => Err(format!("{}: written {written:?}", sample.name)),
    }
}

#[test]
fn every_corpus_file_takes_an_update_in_place() {
    let samples = &*SAMPLES;
    if samples.is_empty() {
        return;
    }
    assert!(samples.len() > 1000, "only {} readable corpus files", samples.len());
    let path = EntryPath::parse("ideas/sample.md").unwrap();
    let update = EntryUpdate::from_json_object(
        json!({"kb_checked": "yes", "tags": ["kb"]}).as_object().cloned().unwrap_or_default(),
    )
    .unwrap();
    let mut changes = update.fields.clone();
    changes.set("updated_at", json!("2026-11-23T09:14:03Z"));
    let mut problems = Vec::new();
    let mut rendered = 0;
    for sample in samples {
        let entry = Entry::from_document(path.clone(), &sample.text).unwrap();
        let updated = update.apply_to_document(&entry, &sample.text, now()).unwrap();
        assert_eq!(
            Entry::from_document(path.clone(), &updated.text).unwrap(),
            updated.entry,
            "{}",
            sample.name
        );
        if updated.written == Written::Rendered {
            rendered += 1;
        }
        if let Err(problem) = check(sample, &updated.text, updated.written, &changes) {
            problems.push(problem);
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
    eprintln!("{} corpus files updated, {rendered} with their block written anew", samples.len());
}

fn new_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        "[a-zA-Z .:#-]{0,16}".prop_map(Value::from),
        (-100i64..100).prop_map(Value::from),
        Just(json!(0.5)),
        Just(json!(false)),
        prop::collection::vec("[a-z]{1,6}", 0..3).prop_map(Value::from),
        Just(json!("line one\nline two")),
        Just(json!({"nested": {"a": 1}})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    #[test]
    fn a_field_update_of_a_corpus_file_changes_only_its_lines(
        file in any::<prop::sample::Index>(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), new_value()), 1..3),
        added in prop::option::of(new_value()),
    ) {
        let samples: Vec<&Sample> = SAMPLES.iter().filter(|s| !s.keys.is_empty()).collect();
        if samples.is_empty() {
            return Ok(());
        }
        let sample = *file.get(&samples);
        let mut changes = Frontmatter::new();
        for (key, value) in picks {
            changes.set(key.get(&sample.keys).clone(), value);
        }
        if let Some(value) = added {
            changes.set("kb_added", value);
        }
        changes.set("updated_at", json!("2026-11-23T09:14:03Z"));
        let edited = edit_document(&sample.text, &changes, None).unwrap();
        if let Err(problem) = check(sample, &edited.text, edited.written, &changes) {
            prop_assert!(false, "{}", problem);
        }
    }
}
