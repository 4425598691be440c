//! A second kb process opening an index that another process holds never clears it: the
//! child is this test binary itself, re-run on the ignored test `child_opens_the_index`
//! with `KB_SEARCH_CHILD_VAULT` naming the vault.

use std::fs;
use std::path::Path;
use std::process::Command;

use kb_search::{META_FILE, OpenError, OpenOptions};

use crate::support::{TestVault, open_index, paths, search};

const VAULT_VAR: &str = "KB_SEARCH_CHILD_VAULT";

/// The child: opens the index and says how that went. Does nothing in a normal run.
#[test]
#[ignore = "run by a_second_process_never_wipes_a_held_index as a child process"]
fn child_opens_the_index() {
    let Ok(dir) = std::env::var(VAULT_VAR) else { return };
    let root = Path::new(&dir);
    match open_index(root, OpenOptions::default()) {
        Ok(_) => println!("child: opened"),
        Err(OpenError::Locked { .. }) => println!("child: locked"),
        Err(other) => println!("child: failed: {other}"),
    }
}

fn segment_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".idx") || n.ends_with(".store") || n == "meta.json")
        .collect();
    names.sort();
    names
}

#[test]
fn a_second_process_never_wipes_a_held_index() {
    let v = TestVault::new();
    v.write_entry("ideas/garden.md", "Garden", "plant tomatoes");
    let index = v.open();
    // What a rebuild in progress looks like from outside: segments, no meta file yet.
    fs::remove_file(v.index_dir().join(META_FILE)).unwrap();
    let before = segment_files(&v.index_dir());
    assert!(!before.is_empty());

    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "processes::child_opens_the_index", "--nocapture", "--ignored"])
        .env(VAULT_VAR, v.root())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("child: locked"), "the child should be refused, not rebuild: {said}");
    assert_eq!(segment_files(&v.index_dir()), before, "the held index lost files");
    assert_eq!(paths(&search(&index, "tomatoes")), ["ideas/garden.md"]);

    // Alone, a process rebuilds the index it cannot read.
    drop(index);
    let reopened = v.open();
    assert!(reopened.open_stats().rebuild_reason.is_some());
    assert_eq!(paths(&search(&reopened, "tomatoes")), ["ideas/garden.md"]);
}
