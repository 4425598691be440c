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
    write(root, ".gitignore", "build/\n");
    let vault = open(root);
    let before = snapshot(root);

    // To another folder: the same bytes, but for the link written from its old folder.
    let kiln_path = path("Journal/2025/Kiln idea.md");
    let taken = vault.move_to_path_as(&kiln_path, &path("Reading.md"), &cli()).unwrap_err();
    assert!(taken.to_string().contains("taken"), "{taken}");
    let ignored = vault.move_to_path_as(&kiln_path, &path("build/Kiln.md"), &cli()).unwrap_err();
    assert!(ignored.to_string().contains("left out"), "{ignored}");
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

/// The notes under `root` (outside `.kb/`) with their text, by vault path.
fn notes_on_disk(root: &Path) -> BTreeMap<String, String> {
    snapshot(root)
        .into_iter()
        .filter(|(rel, _)| rel.ends_with(".md") && rel != "index.md")
        .map(|(rel, bytes)| (rel, String::from_utf8(bytes).unwrap()))
        .collect()
}

/// Where each link of each note leads, resolved from scratch over the notes as they are:
/// (note, link number) → the note's path, or `None` for a link to no note.
fn resolved(notes: &BTreeMap<String, String>) -> BTreeMap<(String, usize), Option<String>> {
    use kb_domain::links::{LinkResolver, parse_links};
    let resolver = LinkResolver::new(notes.keys().map(|p| (p.as_str(), Vec::new())));
    let mut out = BTreeMap::new();
    for (path, text) in notes {
        for (n, link) in parse_links(text).iter().enumerate() {
            out.insert((path.clone(), n), resolver.resolve(path, link).map(str::to_string));
        }
    }
    out
}

/// A note's text with each link's target cut out: what a move may not change.
fn without_targets(text: &str) -> String {
    let mut out = String::new();
    let mut at = 0;
    for link in kb_domain::links::parse_links(text) {
        out.push_str(&text[at..link.target_span.start]);
        out.push('\u{1}');
        at = link.target_span.end;
    }
    out.push_str(&text[at..]);
    out
}

const FOLDERS: [&str; 5] = ["", "Journal", "Journal/2025", "Work/Clients", "Archive"];
const STEMS: [&str; 4] = ["Kiln", "Anna", "Plan b", "Reading"];

/// A link to `(folder, stem)` from a note in `from`, in one of the forms kb keeps true on
/// a move: a bare name, a path, an alias, a heading, an embed, a Markdown link from the
/// root, a Markdown link from the note's folder; or one inside code, which is no link.
fn link_text(form: usize, from: &str, folder: &str, stem: &str) -> String {
    let path = if folder.is_empty() { stem.to_string() } else { format!("{folder}/{stem}") };
    let encoded = path.replace(' ', "%20");
    match form {
        0 => format!("[[{stem}]]"),
        1 => format!("[[{path}]]"),
        2 => format!("[[{path}|see this]]"),
        3 => format!("![[{stem}#Part two]]"),
        4 => format!("[text](/{encoded}.md)"),
        5 => {
            let ups = if from.is_empty() { String::new() } else { "../".repeat(from.split('/').count()) };
            format!("[rel]({ups}{encoded}.md)")
        }
        _ => format!("`[[{path}]]`"),
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    /// After random moves of random notes in a vault of notes linking one another in every
    /// form: every link that led to a note leads to it still, and every byte of every note
    /// but the link targets is as it was; one undo per move puts every file back.
    #[test]
    fn after_random_moves_every_link_leads_to_the_same_note(
        notes in proptest::collection::btree_map((0..FOLDERS.len(), 0..STEMS.len()), proptest::collection::vec((0..FOLDERS.len(), 0..STEMS.len(), 0..7usize), 0..5), 2..8),
        moves in proptest::collection::vec((0..8usize, 0..FOLDERS.len(), 0..STEMS.len(), proptest::bool::ANY), 1..4),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let rel = |folder: &str, stem: &str| if folder.is_empty() { format!("{stem}.md") } else { format!("{folder}/{stem}.md") };
        for (&(f, s), links) in &notes {
            let mut text = format!("# {}\n\nNotes\r\n", STEMS[s]);
            // Links to notes there are (a Markdown link to no note may be read by file name
            // elsewhere, which a move cannot keep).
            for &(lf, ls, form) in links.iter().filter(|(lf, ls, _)| notes.contains_key(&(*lf, *ls))) {
                text.push_str(&format!("- {}\n", link_text(form, FOLDERS[f], FOLDERS[lf], STEMS[ls])));
            }
            write(root, &rel(FOLDERS[f], STEMS[s]), &text);
        }
        let vault = open(root);
        let start = snapshot(root);
        let mut before = notes_on_disk(root);
        let mut leads = resolved(&before);
        let mut made = 0;
        for (pick, folder, stem, rename) in moves {
            let paths: Vec<String> = before.keys().cloned().collect();
            let from = paths[pick % paths.len()].clone();
            let from_path = path(&from);
            let new_stem = if rename { STEMS[stem] } else { from_path.stem() };
            let to = rel(FOLDERS[folder], &format!("{new_stem} moved"));
            if before.contains_key(&to) || to == from {
                continue;
            }
            vault.move_to_path_as(&from_path, &path(&to), &cli()).unwrap();
            made += 1;
            let after = notes_on_disk(root);
            let renamed = |p: &Option<String>| p.as_ref().map(|p| if *p == from { to.clone() } else { p.clone() });
            let expected: BTreeMap<(String, usize), Option<String>> = leads
                .iter()
                .map(|((note, n), target)| ((if *note == from { to.clone() } else { note.clone() }, *n), renamed(target)))
                .collect();
            let now = resolved(&after);
            // Links that led to a note lead to it still. (A link to no note may come to
            // lead to one: Obsidian reads a Markdown link's missing target by file name.)
            for (key, target) in expected.iter().filter(|(_, target)| target.is_some()) {
                proptest::prop_assert_eq!(now.get(key), Some(target), "{:?} after moving {} to {}: {:?}", key, from, to, after.get(&key.0));
            }
            for (note, text) in &before {
                let moved = if *note == from { &to } else { note };
                let kept = after.get(moved).map(|t| without_targets(t));
                // The moved note's own Markdown links from its folder are rewritten: their
                // targets only.
                proptest::prop_assert_eq!(kept, Some(without_targets(text)), "{} changed beyond its links", note);
            }
            before = after;
            leads = now;
        }
        for _ in 0..made {
            vault.undo_as(&UndoScope::Anyone, LaterChanges::Refuse, &cli()).unwrap();
        }
        let mut end = snapshot(root);
        end.remove("index.md");
        proptest::prop_assert_eq!(end, start);
    }
}

#[test]
fn a_deleted_note_comes_back_in_its_own_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "Journal/2025/Day one.md", "Walked to the lake.\n");
    let vault = open(root);
    let day = path("Journal/2025/Day one.md");
    vault.refresh(&day).unwrap();
    let deleted = vault.delete_as(&day, &cli()).unwrap().unwrap();
    fs::remove_dir_all(root.join("Journal")).unwrap();
    let history = vault.history(&day).unwrap();
    let before_delete = history.iter().find(|r| r.id != deleted.id).map_or(deleted.id, |r| r.id);
    let restored = vault.restore_as(&day, before_delete, &cli()).unwrap();
    assert_eq!(restored.path, day);
    assert_eq!(fs::read_to_string(root.join("Journal/2025/Day one.md")).unwrap(), "Walked to the lake.\n");
    assert!(!root.join("other").exists(), "no folder named after the category");
}

#[test]
fn a_link_from_the_root_to_a_note_moved_to_the_root_is_read_from_the_linking_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "Anna.md", "# Anna\n\nNotes\n- [rel](Archive/Reading.md)\n");
    write(root, "Archive/Reading.md", "# Reading\n");
    let vault = open(root);
    let anna = |root: &Path| fs::read_to_string(root.join("Journal/Anna moved.md")).unwrap();
    vault.move_to_path_as(&path("Anna.md"), &path("Journal/Anna moved.md"), &cli()).unwrap();
    assert_eq!(anna(root), "# Anna\n\nNotes\n- [rel](Archive/Reading.md)\n", "a path from the root stays");
    // At the root, the note's bare file name would be read from Journal/: the link climbs.
    vault.move_to_path_as(&path("Archive/Reading.md"), &path("Reading moved.md"), &cli()).unwrap();
    assert_eq!(anna(root), "# Anna\n\nNotes\n- [rel](../Reading%20moved.md)\n");
    vault.move_to_path_as(&path("Reading moved.md"), &path("Reading moved moved.md"), &cli()).unwrap();
    assert_eq!(anna(root), "# Anna\n\nNotes\n- [rel](../Reading%20moved%20moved.md)\n");
}
