//! The entry list file of a long-running process, written by the background writer.

use std::fs;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kb_domain::{Category, ChangeContext, EntryCatalogue, EntryUpdate, EntryWriter, Frontmatter};
use serde_json::json;

use super::PATCH_AT_MOST;
use super::tests::{new_entry, open, path};

/// A long-running process's entry list file: each pass of the background writer changes
/// the lines of what changed since the last (or, after a burst too large to patch, writes
/// the whole list), and the file always ends as the whole list rendered afresh.
#[test]
fn the_background_writer_ends_with_the_whole_list_whether_it_patches_or_rewrites() {
    let dir = tempfile::tempdir().unwrap();
    let vault = Arc::new(open(dir.path()));
    let by = ChangeContext::from_source(kb_domain::ChangeSource::Api);
    vault.create_as(new_entry(Category::Ideas, "First"), &by).unwrap();
    vault.write_entry_list_in_background();
    let settled = |passes: u64| {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(20) {
            let file = fs::read_to_string(dir.path().join("index.md")).unwrap_or_default();
            if vault.background_entry_list_writes() > passes
                && !vault.entry_list.schedule().is_due()
                && file == vault.entry_list_markdown()
            {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    };
    // A few changes of every kind: patched.
    let passes = vault.background_entry_list_writes();
    let kiln = vault.create_as(new_entry(Category::Projects, "Kiln"), &by).unwrap();
    let priya = vault.create_as(new_entry(Category::People, "Priya"), &by).unwrap();
    let mut fields = Frontmatter::new();
    fields.set("next_action", json!("Fire the second batch"));
    let update = EntryUpdate { fields, ..EntryUpdate::default() };
    vault.update_as(&kiln.path, &update, &by).unwrap();
    vault.move_entry_as(&priya.path, Category::Admin, &by).unwrap();
    vault.delete_as(&path("ideas/first.md"), &by).unwrap();
    assert!(settled(passes), "{}", vault.entry_list_markdown());
    assert!(fs::read_to_string(dir.path().join("index.md")).unwrap().contains("Fire the second batch"));
    // More at once than a patch takes: the whole list.
    let passes = vault.background_entry_list_writes();
    for i in 0..(PATCH_AT_MOST + 10) {
        vault.create_as(new_entry(Category::Ideas, &format!("Idea {i}")), &by).unwrap();
    }
    assert!(settled(passes));
    // And patched again after.
    let passes = vault.background_entry_list_writes();
    vault.delete_as(&path("ideas/idea-3.md"), &by).unwrap();
    assert!(settled(passes));
    assert!(!fs::read_to_string(dir.path().join("index.md")).unwrap().contains("idea-3.md"));
}
