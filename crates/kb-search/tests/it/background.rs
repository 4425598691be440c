//! A long-running owner commits in the background (`commit_in_background`): changes are
//! queued and committed together, yet every search reads what was queued before it, and
//! what is still queued when the index closes is committed.

use std::sync::Arc;
use std::time::Duration;

use kb_domain::{ChangeObserver, EntryChange, EntryPath, SearchIndex, SearchQuery};

use crate::support::{TestVault, eventually, paths, query, search};

/// A word found in exactly one entry (letters only: `i` written in base 26).
fn word(i: usize) -> String {
    let mut n = i;
    let mut out = String::from("zqmark");
    loop {
        out.push(char::from(b'a' + (n % 26) as u8));
        n /= 26;
        if n == 0 {
            out.push('q');
            return out;
        }
    }
}

fn upsert(v: &TestVault, index: &kb_search::TantivyIndex, i: usize, text: &str) {
    let entry = v.write_entry(&format!("ideas/note-{i}.md"), &format!("Note {i}"), text);
    index.entry_changed(&EntryChange::Upserted(entry));
}

#[test]
fn a_search_reads_every_change_queued_before_it() {
    let v = TestVault::new();
    let index = Arc::new(v.open());
    index.commit_in_background();
    for i in 0..60 {
        upsert(&v, &index, i, &format!("first {}", word(i)));
        assert_eq!(paths(&search(&index, &word(i))), [format!("ideas/note-{i}.md")], "change {i}");
    }
    // Changed again, then removed: the search sees the last of them.
    upsert(&v, &index, 7, "second version");
    assert!(!paths(&search(&index, &word(7))).contains(&"ideas/note-7.md".to_string()));
    assert_eq!(paths(&search(&index, "second")), ["ideas/note-7.md"]);
    std::fs::remove_file(v.root().join("ideas/note-7.md")).unwrap();
    index.entry_changed(&EntryChange::Removed(EntryPath::parse("ideas/note-7.md").unwrap()));
    assert_eq!(search(&index, "second").total, 0);
    assert_eq!(index.len(), 59);
}

/// Several people on one kb: each reads their own changes at once, and another's soon
/// after; one person's burst of changes is a few commits however often the others search
/// meanwhile, and a change no one in particular made is read by everyone at once.
#[test]
fn each_person_reads_their_own_changes_at_once_and_the_others_soon_after() {
    let v = TestVault::new();
    let index = Arc::new(v.open());
    index.commit_in_background();
    let search_as = |text: &str, reader: &str| {
        let asked = SearchQuery { reader: Some(reader.to_string()), ..query(text) };
        paths(&index.search(&asked).unwrap())
    };
    let before = index.commit_count();
    for i in 0..40 {
        let entry = v.write_entry(&format!("ideas/note-{i}.md"), &format!("Note {i}"), &word(i));
        let written = entry.path.clone();
        index.entries_changed_by(&[EntryChange::Upserted(entry)], "ana");
        // The watcher's event about kb's own write finds nothing to do, and waits for
        // nothing; Bo searches after each of Ana's changes and need not wait for them.
        index.sync_paths(&[written]).unwrap();
        search_as(&word(i), "bo");
    }
    let commits = index.commit_count() - before;
    assert!(commits < 10, "{commits} commits for 40 changes while another person searched");
    assert!(
        eventually(Duration::from_secs(5), || (0..40).all(|i| search_as(&word(i), "bo").len() == 1)),
        "Bo sees Ana's changes once they are committed"
    );
    // Ana reads each of her own changes at once.
    for i in 40..50 {
        let entry = v.write_entry(&format!("ideas/note-{i}.md"), &format!("Note {i}"), &word(i));
        index.entries_changed_by(&[EntryChange::Upserted(entry)], "ana");
        assert_eq!(search_as(&word(i), "ana"), [format!("ideas/note-{i}.md")], "Ana's change {i}");
    }
    // A change no one in particular made (an edit followed from the files) is read by
    // everyone at once.
    upsert(&v, &index, 50, &word(50));
    assert_eq!(search_as(&word(50), "bo"), ["ideas/note-50.md"]);
}

/// A search waits only for the queued changes that may change its answer: a person's
/// burst of captures is a few commits while they search for other things (even misspelt),
/// yet whatever
/// could be found (by stem, by prefix, within a typo) or no longer found (an entry changed
/// or removed) is read at once.
#[test]
fn a_search_waits_only_for_the_queued_changes_that_may_change_its_answer() {
    let v = TestVault::new();
    let index = Arc::new(v.open());
    index.commit_in_background();
    let ask = |text: &str, prefix: bool| {
        let asked = SearchQuery { reader: Some("ana".to_string()), prefix, ..query(text) };
        paths(&index.search(&asked).unwrap())
    };
    let change = |path: &str, name: &str, text: &str| {
        let entry = v.write_entry(path, name, text);
        index.entries_changed_by(&[EntryChange::Upserted(entry)], "ana");
    };
    change("ideas/anchor.md", "Anchor", "the harbour anchor");
    change("ideas/keel.md", "Keel", "a wooden keel");
    assert_eq!(ask("anchor", false), ["ideas/anchor.md"]);
    let before = index.commit_count();
    for i in 0..40 {
        change(&format!("ideas/note-{i}.md"), &format!("Note {i}"), &word(i));
        assert_eq!(ask("anchor", false), ["ideas/anchor.md"], "search {i}");
        assert_eq!(ask("anchr", false), ["ideas/anchor.md"], "search {i} with a typo");
    }
    let commits = index.commit_count() - before;
    assert!(commits < 10, "{commits} commits for 40 changes that no search could find");

    change("ideas/tuning.md", "Tuning", "xylophone tuning");
    assert_eq!(ask("xyloph", true), ["ideas/tuning.md"], "completed as typed");
    change("ideas/meetings.md", "Gatherings", "weekly meetings");
    assert_eq!(ask("meeting", false), ["ideas/meetings.md"], "by its stem");
    change("ideas/quixote.md", "Windmills", "a quixotic plan");
    assert_eq!(ask("quixotc", false), ["ideas/quixote.md"], "within a typo");
    change("ideas/anchor.md", "Anchor", "moved to the other dock");
    assert_eq!(ask("anchor dock", false), ["ideas/anchor.md"], "its new text");
    assert_eq!(ask("harbour", false), Vec::<String>::new(), "its old text");
    std::fs::remove_file(v.root().join("ideas/keel.md")).unwrap();
    let removed = EntryPath::parse("ideas/keel.md").unwrap();
    index.entries_changed_by(&[EntryChange::Removed(removed)], "ana");
    assert_eq!(ask("keel", false), Vec::<String>::new(), "removed");
}

/// A change queued while an earlier one to the same entry is being committed (a delete
/// just after a capture) is waited for with it: the search never shows the entry the
/// capture made and the delete took away.
#[test]
fn a_search_never_shows_an_entry_a_queued_delete_took_away() {
    let v = TestVault::new();
    let index = Arc::new(v.open());
    index.commit_in_background();
    let ask = |text: &str| {
        let asked = SearchQuery { reader: Some("ana".to_string()), ..query(text) };
        paths(&index.search(&asked).unwrap())
    };
    for i in 0..40 {
        // Made by no one in particular, it is committed within a few milliseconds: the
        // delete comes before, during or after that commit.
        upsert(&v, &index, i, &word(i));
        std::thread::sleep(Duration::from_millis((i % 10) as u64 * 4));
        let path = format!("ideas/note-{i}.md");
        std::fs::remove_file(v.root().join(&path)).unwrap();
        index.entries_changed_by(&[EntryChange::Removed(EntryPath::parse(&path).unwrap())], "ana");
        assert_eq!(ask(&word(i)), Vec::<String>::new(), "round {i}");
    }
}

#[test]
fn changes_that_come_together_share_a_commit() {
    let v = TestVault::new();
    let index = Arc::new(v.open());
    index.commit_in_background();
    let before = index.commit_count();
    for i in 0..300 {
        upsert(&v, &index, i, &word(i));
    }
    assert_eq!(index.len(), 300, "every change is searchable once asked for");
    let commits = index.commit_count() - before;
    // One commit each would be 300; queued faster than a commit takes, they group.
    assert!(commits < 100, "{commits} commits for 300 changes");
    for i in [0, 150, 299] {
        assert_eq!(search(&index, &word(i)).total, 1);
    }
}

#[test]
fn what_is_queued_when_the_index_closes_is_committed() {
    let v = TestVault::new();
    let index = Arc::new(v.open());
    index.commit_in_background();
    for i in 0..40 {
        upsert(&v, &index, i, &word(i));
    }
    drop(index);
    // The last handle may be the committer's, closing the index a moment later.
    let all_there = eventually(Duration::from_secs(10), || {
        let reopened = v.open();
        reopened.len() == 40 && (0..40).all(|i| search(&reopened, &word(i)).total == 1)
    });
    assert!(all_there, "changes queued at close were lost");
}

#[test]
fn another_process_reads_the_owners_queued_changes_at_once() {
    let v = TestVault::new();
    let owner = Arc::new(v.open());
    owner.share_writes(None);
    owner.commit_in_background();
    // A second index on the same folder behaves as another process would (file locks).
    let other = v.open();
    assert!(owner.is_owner() && !other.is_owner());
    for i in 0..20 {
        upsert(&v, &owner, i, &word(i));
        // Asked right away, before the owner's commit could have happened on its own.
        assert_eq!(paths(&search(&other, &word(i))), [format!("ideas/note-{i}.md")], "change {i}");
    }
}
