//! The person's own notes outside the category folders, on a real vault with history: they
//! are listed, read and edited as they are (no field of kb's added, bytes kept), undone to
//! the very bytes; and a move of an entry rewrites the `[[wikilinks]]` that led to it, in
//! one change that one undo puts back.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::Arc;

use kb_domain::{
    BodyEdit, Category, ChangeContext, ChangeSource, EntryCatalogue, EntryPath, EntryReader, EntryUpdate,
    EntryWriter, Frontmatter, LaterChanges, ListFilter, NewEntry, RevisionHistory, UndoScope,
};
use kb_storage::history::HistoryLog;
use kb_storage::vault::Vault;
use serde_json::json;

use super::common::clock;

fn open(dir: &Path) -> Vault {
    let log = HistoryLog::open_in(dir).unwrap();
    Vault::open_with_history(dir, clock(), Arc::new(log)).unwrap()
}

fn cli() -> ChangeContext {
    ChangeContext::from_source(ChangeSource::Cli)
}

fn write(root: &Path, rel: &str, text: &str) {
    let file = root.join(rel);
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(file, text).unwrap();
}

/// Every file of the vault outside `.kb/`, with its bytes.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|item| item.file_name() != ".kb")
        .map(Result::unwrap)
        .filter(|item| item.file_type().is_file())
        .map(|item| {
            let rel = item.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
            (rel, fs::read(item.path()).unwrap())
        })
        .collect()
}

fn path(text: &str) -> EntryPath {
    EntryPath::parse(text).unwrap()
}

#[test]
fn other_notes_are_listed_read_and_edited_as_they_are_and_undone_to_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "Journal/2025/Day one.md", "Walked to the lake.\r\nSaw herons.\r\n");
    let acme = "---\nclient: Acme   # since 2019\nrates: {day: 800}\n---\n# Acme\n\nCall Sam.\n";
    write(root, "Work/Clients/Acme.md", acme);
    write(root, "Reading.md", "- Dune\n");
    let before = snapshot(root);
    let vault = open(root);
    assert_eq!(snapshot(root), before, "opening changed the person's files");

    let other = |folder: Option<&str>| {
        let filter = ListFilter {
            category: Some(Category::Other),
            folder: folder.map(str::to_string),
            ..ListFilter::default()
        };
        let mut paths: Vec<String> =
            vault.list(&filter).unwrap().entries.iter().map(|e| e.path.to_string()).collect();
        paths.sort();
        paths
    };
    assert_eq!(other(None), ["Journal/2025/Day one.md", "Reading.md", "Work/Clients/Acme.md"]);
    assert_eq!(other(Some("Work")), ["Work/Clients/Acme.md"]);
    let day = vault.get(&path("Journal/2025/Day one.md")).unwrap();
    assert_eq!((day.category(), day.name()), (Category::Other, "Day one".to_string()));

    let append =
        EntryUpdate { fields: Frontmatter::new(), body: Some(BodyEdit::Append("Rain later.".into())) };
    vault.update_as(&day.path, &append, &cli()).unwrap();
    let day_text = fs::read_to_string(root.join("Journal/2025/Day one.md")).unwrap();
    assert!(day_text.starts_with("Walked to the lake.\r\nSaw herons.\r\n"), "{day_text:?}");
    assert!(day_text.contains("Rain later.") && !day_text.contains("---"), "a field was added: {day_text:?}");

    let mut fields = Frontmatter::new();
    fields.set("status", json!("paused"));
    vault.update_as(&path("Work/Clients/Acme.md"), &EntryUpdate { fields, body: None }, &cli()).unwrap();
    let acme_text = fs::read_to_string(root.join("Work/Clients/Acme.md")).unwrap();
    assert_eq!(
        acme_text,
        "---\nclient: Acme   # since 2019\nrates: {day: 800}\nstatus: paused\n---\n# Acme\n\nCall Sam.\n"
    );

    // History by path, and every change undone to the very bytes.
    assert_eq!(vault.history(&path("Work/Clients/Acme.md")).unwrap().len(), 1);
    for _ in 0..2 {
        vault.undo_as(&UndoScope::Anyone, LaterChanges::Refuse, &cli()).unwrap();
    }
    assert_eq!(snapshot(root), before);
    assert!(!root.join("projects").exists(), "no category folder was made");
}

#[test]
fn a_move_rewrites_the_wikilinks_that_led_to_the_entry_and_one_undo_puts_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let vault = open(root);
    let new = NewEntry {
        category: Category::Ideas,
        name: "Glass shed".into(),
        fields: Frontmatter::new(),
        body: "A shed of old windows.\n".into(),
    };
    let shed = vault.create_as(new, &cli()).unwrap();
    assert_eq!(shed.path.as_str(), "ideas/glass-shed.md");
    let journal = "Plans: [[glass-shed]], [[ideas/glass-shed|the shed]] and ![[glass-shed#Plan]].\r\n\
                   ```\n[[ideas/glass-shed]] in code stays\n```\nAlso `[[ideas/glass-shed]]`.\r\n";
    write(root, "Journal/2025/Weekend.md", journal);
    write(root, "Work/b.md", "---\ntags: [x]\n---\nsee [[ideas/glass-shed.md]] and [[Elsewhere]]\n");
    write(root, "Work/unrelated.md", "[[Reading]] only\n");
    for note in ["Journal/2025/Weekend.md", "Work/b.md", "Work/unrelated.md"] {
        vault.refresh(&path(note)).unwrap();
    }
    let before = snapshot(root);

    let moved = vault.move_entry_as(&shed.path, Category::Projects, &cli()).unwrap();
    assert_eq!(moved.entry.path.as_str(), "projects/glass-shed.md");
    let read = |rel: &str| fs::read_to_string(root.join(rel)).unwrap();
    assert_eq!(
        read("Journal/2025/Weekend.md"),
        "Plans: [[glass-shed]], [[projects/glass-shed|the shed]] and ![[glass-shed#Plan]].\r\n\
         ```\n[[ideas/glass-shed]] in code stays\n```\nAlso `[[ideas/glass-shed]]`.\r\n"
    );
    assert_eq!(read("Work/b.md"), "---\ntags: [x]\n---\nsee [[projects/glass-shed.md]] and [[Elsewhere]]\n");
    assert_eq!(read("Work/unrelated.md"), "[[Reading]] only\n");
    let backlinks: Vec<String> = vault
        .links(&moved.entry.path)
        .unwrap()
        .backlinks
        .iter()
        .filter_map(|note| note.path.as_ref().map(ToString::to_string))
        .collect();
    assert!(backlinks.contains(&"Journal/2025/Weekend.md".to_string()), "{backlinks:?}");
    assert!(backlinks.contains(&"Work/b.md".to_string()), "{backlinks:?}");

    vault.undo_as(&UndoScope::Anyone, LaterChanges::Refuse, &cli()).unwrap();
    assert_eq!(snapshot(root), before, "one undo puts every file back");
}

#[test]
fn a_note_moves_to_any_path_as_it_is_and_into_a_category_as_an_entry() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let kiln = "Fire the kiln; see [w](../Work.md) and [[Reading]].\n";
    write(root, "Journal/2025/Kiln idea.md", kiln);
    write(root, "Journal/Work.md", "work\n");
    write(root, "Reading.md", "- Dune\n");
    write(root, "Index of ideas.md", "[[Journal/2025/Kiln idea]] and [[Reading|books]]\n");
    let vault = open(root);
    let before = snapshot(root);

    // To another folder: the same bytes, but for the link written from its old folder.
    let kiln_path = path("Journal/2025/Kiln idea.md");
    let taken = vault.move_to_path_as(&kiln_path, &path("Reading.md"), &cli()).unwrap_err();
    assert!(taken.to_string().contains("taken"), "{taken}");
    assert_eq!(snapshot(root), before, "a refused move changes nothing");
    let moved = vault.move_to_path_as(&kiln_path, &path("Archive/Kiln idea.md"), &cli()).unwrap();
    assert_eq!(moved.entry.category(), Category::Other);
    let read = |rel: &str| fs::read_to_string(root.join(rel)).unwrap();
    assert_eq!(read("Archive/Kiln idea.md"), "Fire the kiln; see [w](../Journal/Work.md) and [[Reading]].\n");
    assert!(!root.join("Journal/2025/Kiln idea.md").exists());
    assert_eq!(read("Index of ideas.md"), "[[Archive/Kiln idea]] and [[Reading|books]]\n");

    // Into a category: adopted, with kb's fields, named by kb's slug rules.
    let adopted = vault.move_entry_as(&path("Reading.md"), Category::Ideas, &cli()).unwrap();
    assert_eq!(adopted.entry.path.as_str(), "ideas/reading.md");
    assert_eq!(adopted.entry.name(), "Reading");
    assert!(adopted.entry.id().is_some());
    assert!(read("ideas/reading.md").ends_with("---\n- Dune\n"), "{}", read("ideas/reading.md"));
    // A bare [[Reading]] still leads to it (file names match case aside): left as written.
    assert_eq!(read("Index of ideas.md"), "[[Archive/Kiln idea]] and [[Reading|books]]\n");

    for _ in 0..2 {
        vault.undo_as(&UndoScope::Anyone, LaterChanges::Refuse, &cli()).unwrap();
    }
    let mut after = snapshot(root);
    after.remove("index.md");
    assert_eq!(after, before, "two undos put every file back");
}
