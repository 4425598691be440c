//! Slugs follow the slug rules (`kb_domain::slug`) and never collide, even when threads and
//! two vault instances on one folder (as two processes would) create at the same time.

use std::collections::BTreeSet;
use std::sync::Arc;

use kb_domain::slug::is_valid_slug;
use kb_domain::{Category, EntryReader, EntryWriter, Frontmatter, NewEntry};
use proptest::prelude::*;

use super::common::{entry_files, open};

fn similar_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "Garden shed",
            "garden  shed!",
            "GARDEN-SHED",
            "Gärden shed",
            "",
            "!!!",
            "🎉"
        ])
        .prop_map(str::to_string),
        "\\PC{0,80}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn concurrent_creates_never_share_a_slug(
        names in prop::collection::vec(prop::collection::vec(similar_name(), 1..6), 2..5),
        category in prop::sample::select(Category::ALL.to_vec()),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let first = Arc::new(open(dir.path()));
        let second = Arc::new(open(dir.path()));
        let handles: Vec<_> = names
            .iter()
            .enumerate()
            .map(|(i, batch)| {
                let vault = if i % 2 == 0 { first.clone() } else { second.clone() };
                let batch = batch.clone();
                std::thread::spawn(move || {
                    batch
                        .into_iter()
                        .filter_map(|name| {
                            let new = NewEntry { category, name, fields: Frontmatter::new(), body: String::new() };
                            match vault.create(new) {
                                Ok(entry) => Some(Ok(entry)),
                                // An empty name is refused, never filed.
                                Err(kb_domain::RepositoryError::Field(_)) => None,
                                Err(e) => Some(Err(e.to_string())),
                            }
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut created = Vec::new();
        for handle in handles {
            for result in handle.join().unwrap() {
                created.push(result.map_err(TestCaseError::fail)?);
            }
        }
        let expected = names.iter().flatten().filter(|n| !n.trim().is_empty()).count();
        prop_assert_eq!(created.len(), expected);
        let paths: BTreeSet<String> = created.iter().map(|e| e.path.to_string()).collect();
        prop_assert_eq!(paths.len(), created.len(), "two entries share a path");
        for entry in &created {
            prop_assert!(is_valid_slug(entry.path.stem()), "bad slug {}", entry.path);
            prop_assert_eq!(first.get(&entry.path).unwrap(), entry.clone());
        }
        prop_assert_eq!(entry_files(dir.path()), paths.into_iter().collect::<Vec<_>>());
    }
}
