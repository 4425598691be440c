//! At repository level, an update changes what it names and nothing else —
//! every other field keeps its value and place, the body stays unless replaced.

use kb_domain::{Category, EntryReader, EntryUpdate, EntryWriter, Frontmatter};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::common::{entry, open, text, value, write_by_hand};

/// Keys an update may set freely (the person's own, or `tags` with a valid list).
fn settable(key: &str) -> bool {
    !Category::is_known_anywhere(key) && key != "category"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn update_keeps_every_field_not_updated(
        entry in entry(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), value()), 0..4),
        new_keys in prop::collection::vec((text(), value()), 0..3),
        tags in prop::option::of(prop::collection::vec("[a-z]{1,8}", 0..3)),
        new_body in prop::option::of(super::common::body()),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let vault = open(dir.path());
        write_by_hand(dir.path(), &entry);
        let existing: Vec<&String> = entry.frontmatter.keys().filter(|k| settable(k)).collect();
        let mut fields = Frontmatter::new();
        if !existing.is_empty() {
            for (index, v) in &picks {
                fields.set(index.get(&existing).as_str(), v.clone());
            }
        }
        for (k, v) in new_keys.into_iter().filter(|(k, _)| settable(k)) {
            fields.set(k, v);
        }
        if let Some(tags) = tags {
            fields.set("tags", json!(tags));
        }
        let update =
            EntryUpdate { fields: fields.clone(), body: new_body.clone().map(kb_domain::BodyEdit::Replace) };
        let result = vault.update(&entry.path, &update);
        if fields.is_empty() && new_body.is_none() {
            prop_assert!(result.is_err());
            return Ok(());
        }
        let outcome = result.unwrap();
        let read = vault.get(&entry.path).unwrap();
        prop_assert_eq!(&read, &outcome.entry);

        // Untouched fields: same values, same relative order.
        let untouched = |fm: &Frontmatter| -> Vec<(String, Value)> {
            fm.iter()
                .filter(|(k, _)| !fields.contains(k) && k.as_str() != "updated_at")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        prop_assert_eq!(untouched(&read.frontmatter), untouched(&entry.frontmatter));
        // Updated fields read back (null removes).
        for (k, v) in fields.iter() {
            if v.is_null() {
                prop_assert!(!read.frontmatter.contains(k));
            } else {
                prop_assert_eq!(read.frontmatter.get(k), Some(v));
            }
        }
        prop_assert_eq!(read.frontmatter.get_str("updated_at"), Some("2026-11-21T09:14:03Z"));
        prop_assert_eq!(&read.body, new_body.as_ref().unwrap_or(&entry.body));
        let mut expected_changed: Vec<String> = fields.keys().cloned().collect();
        if new_body.is_some() {
            expected_changed.push("content".into());
        }
        prop_assert_eq!(outcome.updated_fields, expected_changed);
    }
}

/// The vault writes an update from the file's own text: only the lines of the fields set
/// (and `updated_at`) change, and the body changes only through a body edit.
#[test]
fn an_update_on_disk_changes_only_the_lines_it_sets() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let file = dir.path().join("projects/shed.md");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let text = "---\n# my shed\nname: \"Shed\"   # quoted on purpose\nversion: 1.10\n\nstatus: active\ntags:\n  - home # first\n  - roof\n---\nRoof leaks.\n\n## Log\n\n- 2026-11-20: Measured\n";
    std::fs::write(&file, text).unwrap();
    let path = kb_domain::EntryPath::parse("projects/shed.md").unwrap();

    let update =
        EntryUpdate::from_json_object(json!({"status": "done"}).as_object().unwrap().clone()).unwrap();
    vault.update(&path, &update).unwrap();
    let after = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        after,
        text.replace("status: active\n", "status: done\n")
            .replace("  - roof\n---", "  - roof\nupdated_at: 2026-11-21T09:14:03Z\n---")
    );

    let log = kb_domain::BodyEdit::Section {
        heading: "Log".into(),
        content: "Called the roofer".into(),
        today: chrono::NaiveDate::from_ymd_opt(2026, 11, 23).unwrap(),
    };
    let update = EntryUpdate { fields: Frontmatter::new(), body: Some(log) };
    assert_eq!(vault.update(&path, &update).unwrap().updated_fields, ["content"]);
    let logged = std::fs::read_to_string(&file).unwrap();
    assert_eq!(logged, format!("{after}- 2026-11-23: Called the roofer\n"));
    assert_eq!(
        vault.get(&path).unwrap().body,
        "Roof leaks.\n\n## Log\n\n- 2026-11-20: Measured\n- 2026-11-23: Called the roofer\n"
    );

    // A failed edit changes nothing on disk.
    let find = kb_domain::BodyEdit::FindReplace { find: "Roof".into(), replace: "Wall".into(), expected: 2 };
    let mut failing = EntryUpdate { fields: Frontmatter::new(), body: Some(find) };
    failing.fields.set("status", json!("blocked"));
    let err = vault.update(&path, &failing).unwrap_err().to_string();
    assert!(err.contains("\"Roof\" 1 time, not 2"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), logged);
}

/// A file without frontmatter has no block to edit: the update writes one above the body,
/// which keeps its bytes, in the file's own line ends.
#[test]
fn an_update_of_a_file_without_frontmatter_keeps_its_body() {
    let dir = tempfile::tempdir().unwrap();
    let vault = open(dir.path());
    let file = dir.path().join("ideas/plain.md");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "# Plain\r\n\r\nwritten by hand  \r\n").unwrap();
    let path = kb_domain::EntryPath::parse("ideas/plain.md").unwrap();
    let update = EntryUpdate::from_json_object(json!({"tags": ["x"]}).as_object().unwrap().clone()).unwrap();
    vault.update(&path, &update).unwrap();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "---\r\ntags:\r\n- x\r\nupdated_at: 2026-11-21T09:14:03Z\r\n---\r\n# Plain\r\n\r\nwritten by hand  \r\n"
    );
}
