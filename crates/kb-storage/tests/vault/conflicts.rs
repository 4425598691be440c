//! Resolving a sync conflict through the vault, on a real SQLite history: the copy kept as
//! a note of its own loses only what the merge added to it.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use kb_domain::conflicts::ConflictKeep;
use kb_domain::{ChangeContext, ChangeSource, EntryPath, EntryWriter};
use kb_storage::history::HistoryLog;
use kb_storage::vault::Vault;

use super::common::clock;

fn open(dir: &Path) -> Vault {
    let log = HistoryLog::open_in(dir).unwrap();
    Vault::open_with_history(dir, clock(), Arc::new(log)).unwrap()
}

fn path(text: &str) -> EntryPath {
    EntryPath::parse(text).unwrap()
}

#[test]
fn both_kept_a_copy_of_a_note_without_frontmatter_stays_without() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("Journal")).unwrap();
    fs::write(dir.path().join("Journal/day.md"), "Walked.\n").unwrap();
    let copy = "Journal/day.conflict-desktop-20261129-120000.md";
    fs::write(dir.path().join(copy), "---\nid: 01COPY\nconflict_of: Journal/day.md\n---\nRan.\n").unwrap();
    let vault = open(dir.path());
    let resolved = vault
        .resolve_conflict_as(
            &path("Journal/day.md"),
            ConflictKeep::Both,
            &ChangeContext::from_source(ChangeSource::Cli),
        )
        .unwrap();
    assert_eq!(resolved.kept_as, Some(path("Journal/day-2.md")));
    assert_eq!(fs::read_to_string(dir.path().join("Journal/day-2.md")).unwrap(), "Ran.\n");
    assert_eq!(fs::read_to_string(dir.path().join("Journal/day.md")).unwrap(), "Walked.\n");
    assert!(!dir.path().join(copy).exists());
}

#[test]
fn both_kept_a_copy_of_a_note_with_an_id_keeps_its_own() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("projects")).unwrap();
    fs::write(dir.path().join("projects/shed.md"), "---\nid: 01SHED\nname: Shed\n---\nLeaks.\n").unwrap();
    let copy = "projects/shed.conflict-desktop-20261129-120000.md";
    fs::write(
        dir.path().join(copy),
        "---\nid: 01COPY\nname: Shed\nconflict_of: projects/shed.md\n---\nFixed.\n",
    )
    .unwrap();
    let vault = open(dir.path());
    vault
        .resolve_conflict_as(&path(copy), ConflictKeep::Both, &ChangeContext::from_source(ChangeSource::Cli))
        .unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("projects/shed-2.md")).unwrap(),
        "---\nid: 01COPY\nname: Shed\n---\nFixed.\n"
    );
}
