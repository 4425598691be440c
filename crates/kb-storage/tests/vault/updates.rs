//! Property 4 at repository level: an update changes what it names and nothing else —
//! every other field keeps its value and place, the body stays unless replaced.

use kb_domain::{Category, EntryRepository, EntryUpdate, Frontmatter};
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
        let update = EntryUpdate { fields: fields.clone(), body: new_body.clone() };
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
