//! Any valid entry written and read back is equal — frontmatter order, unknown
//! keys, unicode and CRLF bodies included — whether a person wrote it or kb created it.

use kb_domain::{Category, EntryCatalogue, EntryReader, EntryWriter, Frontmatter, NewEntry};
use proptest::prelude::*;

use super::common::{body, entry, frontmatter, open, write_by_hand};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn hand_written_entries_read_back_equal(entry in entry()) {
        let dir = tempfile::tempdir().unwrap();
        let vault = open(dir.path());
        write_by_hand(dir.path(), &entry);
        let read = vault.get(&entry.path).unwrap();
        prop_assert_eq!(&read, &entry);
        // And the same after reopening (the scan reads it too).
        let vault = open(dir.path());
        prop_assert!(vault.malformed().is_empty(), "{:?}", vault.malformed());
        prop_assert_eq!(vault.all_entries().unwrap(), vec![entry]);
    }

    #[test]
    fn created_entries_read_back_equal(
        category in super::common::category(),
        name in "\\PC{1,30}",
        fields in frontmatter(),
        body in body(),
    ) {
        prop_assume!(!name.trim().is_empty());
        // Known fields are checked at creation; the person's own keys are anything.
        let fields: Frontmatter = fields
            .iter()
            .filter(|(k, _)| !Category::is_known_anywhere(k) && k.as_str() != "category")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let vault = open(dir.path());
        let created = vault.create(NewEntry { category, name: name.clone(), fields: fields.clone(), body }).unwrap();
        prop_assert_eq!(vault.get(&created.path).unwrap(), created.clone());
        for (k, v) in fields.iter() {
            prop_assert_eq!(created.frontmatter.get(k), Some(v));
        }
        prop_assert_eq!(created.name(), name.trim());
    }
}
