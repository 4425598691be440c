//! Setting a vault up for sync writes only what a round needs: `kb sync status` leaves the
//! repository's settings as they were.

use std::process::Command;

use super::tests::{Device, bare_remote, round};
use super::{GitSync, SyncSettings};

fn remote_url(root: &std::path::Path) -> String {
    let out = Command::new("git").args(["remote", "get-url", "kb-sync"]).current_dir(root).output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn the_status_under_another_remote_changes_nothing_until_a_round() {
    let (_remote_dir, remote) = bare_remote();
    let a = Device::with_files(&remote, "laptop", &[("people/sam.md", "Sam\n")]);
    a.round();
    assert_eq!(remote_url(&a.root), remote);
    let (_other_dir, other) = bare_remote();
    let moved = GitSync::open(&a.root, SyncSettings::new(other.clone(), "laptop".to_string())).unwrap();
    let status = moved.status().unwrap();
    assert_eq!(status.remote, other);
    assert_eq!(remote_url(&a.root), remote, "the status wrote the new remote");
    round(&moved).unwrap();
    assert_eq!(remote_url(&a.root), other);
}

#[test]
fn opening_sync_on_a_synced_vault_takes_no_index_lock() {
    let (_remote_dir, remote) = bare_remote();
    let a = Device::with_files(&remote, "laptop", &[("people/sam.md", "Sam\n")]);
    a.round();
    // A person's git command holds the index: kb opening sync (every command does) must
    // not need it.
    let lock = a.root.join(".git/index.lock");
    std::fs::write(&lock, "").unwrap();
    let opened = GitSync::open(&a.root, SyncSettings::new(remote.clone(), "laptop".to_string()));
    std::fs::remove_file(&lock).unwrap();
    opened.unwrap().status().unwrap();
}
