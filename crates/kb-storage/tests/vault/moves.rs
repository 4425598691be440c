//! Moves: exactly one file afterwards, in the target's schema, with the same id and every
//! piece of text the person wrote still there.

use kb_domain::{Category, Entry, EntryPath, EntryReader, EntryWriter};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::common::{entry, entry_files, open, text, write_by_hand};

/// Every string in a value (keys of nested maps included).
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k.clone());
            strings(v, out);
        }),
        _ => {}
    }
}

/// An entry with, besides anything else, some of its category's own fields.
fn movable_entry() -> impl Strategy<Value = Entry> {
    (
        entry(),
        prop::option::of(prop::sample::select(vec![
            "active", "waiting", "blocked", "someday", "done", "pending", "odd",
        ])),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of("[0-9A-Z]{26}"),
    )
        .prop_map(|(mut e, status, original, name, id)| {
            if let Some(status) = status {
                e.frontmatter.set("status", json!(status));
            }
            if let Some(original) = original {
                e.frontmatter.set("original_text", json!(original));
                e.frontmatter.set("suggested_category", json!("projects"));
            }
            if let Some(name) = name {
                e.frontmatter.set("name", json!(name));
            }
            if let Some(id) = id {
                e.frontmatter.set("id", json!(id));
            }
            e
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn move_leaves_one_file_in_the_target_schema_losing_nothing(
        entry in movable_entry(),
        target in prop::sample::select(Category::FILING.to_vec()),
    ) {
        prop_assume!(target != entry.category());
        let dir = tempfile::tempdir().unwrap();
        let vault = open(dir.path());
        write_by_hand(dir.path(), &entry);
        let outcome = vault.move_entry(&entry.path, target).unwrap();
        let moved = vault.get(&outcome.entry.path).unwrap();
        prop_assert_eq!(&moved, &outcome.entry);
        prop_assert_eq!(moved.category(), target);
        prop_assert_eq!(entry_files(dir.path()), vec![moved.path.to_string()]);
        prop_assert!(matches!(vault.get(&entry.path), Err(kb_domain::RepositoryError::NotFound(_))));
        prop_assert!(!dir.path().join(".kb/move-journal.json").exists());
        prop_assert_eq!(EntryPath::parse(&moved.path.to_string()).unwrap(), moved.path.clone());

        // Target schema: a valid status where the category has one.
        match target {
            Category::Projects => prop_assert!(
                ["active", "waiting", "blocked", "someday", "done"].contains(&moved.status().unwrap_or(""))
            ),
            Category::Admin => prop_assert!(["pending", "done"].contains(&moved.status().unwrap_or(""))),
            _ => {}
        }
        // The same id (one is given to an entry that had none).
        match entry.frontmatter.get("id") {
            Some(Value::String(id)) if !id.trim().is_empty() => prop_assert_eq!(moved.id(), Some(id.as_str())),
            _ => prop_assert!(moved.id().is_some()),
        }
        // Nothing the person wrote is lost.
        let mut after = Vec::new();
        strings(&moved.frontmatter.to_json(), &mut after);
        for (key, value) in entry.frontmatter.iter() {
            if entry.category() == Category::Inbox && key == "suggested_category" {
                continue;
            }
            let mut before = Vec::new();
            strings(value, &mut before);
            for s in before {
                let kept = after.contains(&s) || moved.body.contains(s.trim());
                prop_assert!(kept, "lost {:?} of field {:?}", s, key);
            }
            if !matches!(key.as_str(), "id" | "updated_at" | "status" | "name" | "original_text" | "suggested_category") {
                prop_assert_eq!(moved.frontmatter.get(key), Some(value), "field {:?} changed", key);
            }
        }
        prop_assert!(moved.body.contains(&entry.body), "body lost");
    }
}
