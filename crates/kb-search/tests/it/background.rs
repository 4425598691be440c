//! A long-running owner commits in the background (`commit_in_background`): changes are
//! queued and committed together, yet every search reads what was queued before it, and
//! what is still queued when the index closes is committed.

use std::sync::Arc;
use std::time::Duration;

use kb_domain::{ChangeObserver, EntryChange, EntryPath};

use crate::support::{TestVault, eventually, paths, search};

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
