//! Merging entries through the vault, on a real SQLite history: one file is left with the
//! sources' notes, aliases and tags; references to a source point at the target; one undo
//! puts every file back to its very bytes; bad input changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::Arc;

use chrono::{NaiveDate, TimeZone, Utc};
use kb_domain::merge::MergeError;
use kb_domain::{
    Category, ChangeContext, ChangeSource, Clock, ConversationId, EntryPath, EntryRepository, FixedClock,
    RepositoryError,
};
use kb_storage::history::HistoryLog;
use kb_storage::vault::Vault;

fn clock() -> Arc<dyn Clock> {
    Arc::new(FixedClock(Utc.with_ymd_and_hms(2026, 11, 21, 9, 14, 3).unwrap()))
}

/// A vault at `dir` keeping history in `dir/.kb/kb.sqlite`.
fn open(dir: &Path) -> Vault {
    let log = HistoryLog::open_in(dir).unwrap();
    Vault::open_with_history(dir, clock(), Arc::new(log)).unwrap()
}

fn chat() -> ChangeContext {
    ChangeContext {
        source: ChangeSource::Chat,
        tool: Some("merge_entries".into()),
        conversation_id: Some(ConversationId::new("c1")),
    }
}

fn on() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 21).unwrap()
}

fn path(text: &str) -> EntryPath {
    EntryPath::parse(text).unwrap()
}

/// Every entry file's bytes, by vault path.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for category in Category::ALL {
        let Ok(listing) = fs::read_dir(root.join(category.as_str())) else { continue };
        for item in listing {
            let item = item.unwrap();
            let name = item.file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") && !name.starts_with('.') {
                files.insert(format!("{category}/{name}"), fs::read(item.path()).unwrap());
            }
        }
    }
    files
}

/// A vault with two entries for one person, a third about her, and a project linking to
/// the short one, written by hand (odd formatting included).
fn two_priyas(dir: &Path) -> Vault {
    let vault = open(dir);
    let files = [
        (
            "people/priya-raman.md",
            "---\nid: T1\nname: Priya Raman\ncontext: Robotics lead\ntags: [work]\n---\nMet at the meetup.\n",
        ),
        (
            "people/priya.md",
            "---\nid: S1\nname: Priya\ntags: [Work, robots]\nfollow_ups: [send the deck]\n---\nLikes tea.\n",
        ),
        ("people/pri.md", "---\nid: S2\nname: Pri\nphone: 555 0100\n---\n"),
        (
            "projects/robot.md",
            "---\nid: P1\nname: Robot   # the arm\nrelated_people: [people/priya.md, people/sam.md]\n---\n\
             Ask [Priya](../people/priya.md) and [Pri](/people/pri.md).\r\n",
        ),
        ("ideas/tea.md", "---\nname: Tea\n---\nNothing about anyone.\n"),
    ];
    for (at, text) in files {
        fs::write(dir.join(at), text).unwrap();
        vault.refresh(&path(at)).unwrap();
    }
    vault
}

#[test]
fn two_people_become_one_and_one_undo_puts_every_file_back() {
    let dir = tempfile::tempdir().unwrap();
    let vault = two_priyas(dir.path());
    let before = snapshot(dir.path());
    let outcome = vault
        .merge_as(
            &path("people/priya-raman.md"),
            &[path("people/priya.md"), path("people/pri.md")],
            on(),
            &chat(),
        )
        .unwrap();
    assert_eq!(outcome.removed, [path("people/priya.md"), path("people/pri.md")]);
    assert_eq!(outcome.references_updated, [path("projects/robot.md")]);

    let after = snapshot(dir.path());
    let people: Vec<&String> = after.keys().filter(|k| k.starts_with("people/")).collect();
    assert_eq!(people, ["people/priya-raman.md"]);
    let merged = vault.get(&path("people/priya-raman.md")).unwrap();
    assert_eq!(merged, outcome.entry);
    assert_eq!(merged.id(), Some("T1"));
    assert_eq!(merged.frontmatter.get_str("context"), Some("Robotics lead"));
    assert_eq!(merged.tags(), ["work", "robots"]);
    assert_eq!(merged.frontmatter.get_str_list("aliases"), ["Priya", "Pri"]);
    assert_eq!(merged.frontmatter.get_str("phone"), Some("555 0100"));
    assert!(merged.body.contains("## Merged from Priya (2026-11-21)\n\nLikes tea.\n"), "{}", merged.body);
    assert!(merged.body.contains("## Merged from Pri (2026-11-21)\n"), "{}", merged.body);
    // The project's references now lead to the target, in the style they were written.
    let robot = String::from_utf8(after["projects/robot.md"].clone()).unwrap();
    assert_eq!(
        robot,
        "---\nid: P1\nname: Robot   # the arm\nrelated_people: [people/priya-raman.md, people/sam.md]\n---\n\
         Ask [Priya](../people/priya-raman.md) and [Pri](/people/priya-raman.md).\r\n"
    );
    // The catalogue follows: the old names find the target, the project refers to it.
    let found = vault.find_by_name("Priya").unwrap();
    assert!(found.iter().any(|m| m.entry.path == path("people/priya-raman.md")), "{found:?}");
    assert!(vault.get(&path("people/priya.md")).is_err());
    assert_eq!(after["ideas/tea.md"], before["ideas/tea.md"]);

    // One operation in history: one undo reverts the whole merge, to the very bytes.
    let undone = vault.undo_as(Some(&ConversationId::new("c1")), false, &chat()).unwrap();
    assert!(
        undone.description.starts_with("Merged people/priya.md, people/pri.md into people/priya-raman.md")
    );
    assert_eq!(undone.undone.len(), 4, "{:?}", undone.undone);
    assert_eq!(snapshot(dir.path()), before);
    assert_eq!(vault.get(&path("people/priya.md")).unwrap().name(), "Priya");
    assert!(vault.get(&path("people/priya-raman.md")).unwrap().frontmatter.get("aliases").is_none());
    // The merge itself was the only change kb made in the conversation.
    let err = vault.undo_as(Some(&ConversationId::new("c1")), false, &chat()).unwrap_err();
    assert!(matches!(err, RepositoryError::NothingToUndo(_)), "{err}");
}

#[test]
fn bad_input_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let vault = two_priyas(dir.path());
    fs::write(dir.path().join("people/broken.md"), "---\nname: [unclosed\n---\nBody\n").unwrap();
    let before = snapshot(dir.path());
    let target = path("people/priya-raman.md");
    let merge = |sources: &[&str]| {
        let sources: Vec<EntryPath> = sources.iter().map(|s| path(s)).collect();
        vault.merge_as(&target, &sources, on(), &chat()).unwrap_err()
    };

    let missing = merge(&["people/priya.md", "people/nobody.md"]);
    assert!(
        matches!(missing, RepositoryError::NotFound(ref p) if p == &path("people/nobody.md")),
        "{missing}"
    );
    let itself = merge(&["people/priya-raman.md"]);
    assert!(matches!(itself, RepositoryError::Merge(MergeError::IntoItself(_))), "{itself}");
    let twice = merge(&["people/priya.md", "people/priya.md"]);
    assert!(matches!(twice, RepositoryError::Merge(MergeError::Repeated(_))), "{twice}");
    let none = merge(&[]);
    assert!(matches!(none, RepositoryError::Merge(MergeError::NoSources(_))), "{none}");
    let malformed = merge(&["people/priya.md", "people/broken.md"]);
    assert!(matches!(malformed, RepositoryError::Malformed { .. }), "{malformed}");
    let missing_target =
        vault.merge_as(&path("people/nobody.md"), &[path("people/priya.md")], on(), &chat()).unwrap_err();
    assert!(matches!(missing_target, RepositoryError::NotFound(_)), "{missing_target}");

    assert_eq!(snapshot(dir.path()), before);
    let err = vault.undo_as(Some(&ConversationId::new("c1")), false, &chat()).unwrap_err();
    assert!(matches!(err, RepositoryError::NothingToUndo(_)), "nothing was recorded: {err}");
}

#[test]
fn a_merge_across_categories_keeps_the_sources_links_leading_where_they_did() {
    let dir = tempfile::tempdir().unwrap();
    let vault = two_priyas(dir.path());
    fs::write(
        dir.path().join("inbox/call-priya.md"),
        "---\nname: Call Priya\n---\nSee [tea](../ideas/tea.md), [p](priya.md).\n",
    )
    .unwrap();
    vault.refresh(&path("inbox/call-priya.md")).unwrap();
    let outcome = vault
        .merge_as(&path("people/priya-raman.md"), &[path("inbox/call-priya.md")], on(), &chat())
        .unwrap();
    assert!(
        outcome.entry.body.contains("See [tea](../ideas/tea.md), [p](../inbox/priya.md).\n"),
        "{}",
        outcome.entry.body
    );
    assert!(!dir.path().join("inbox/call-priya.md").exists());
}
