//! Symlinks leading out of the vault are refused and never listed.

#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;

use kb_domain::{Category, EntryCatalogue, EntryPath, EntryReader, EntryWriter, ListFilter, RepositoryError};

use super::common::open;

#[test]
fn symlink_out_of_the_vault_is_refused_and_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.md");
    fs::write(&secret, "---\nname: Secret\n---\nprivate\n").unwrap();
    fs::create_dir_all(dir.path().join("projects")).unwrap();
    symlink(&secret, dir.path().join("projects/secret.md")).unwrap();
    // A symlink that stays inside the vault is an ordinary entry.
    fs::create_dir_all(dir.path().join("ideas")).unwrap();
    fs::write(dir.path().join("ideas/real.md"), "---\nname: Real\n---\n").unwrap();
    symlink(dir.path().join("ideas/real.md"), dir.path().join("projects/alias.md")).unwrap();

    let vault = open(dir.path());
    let path = EntryPath::parse("projects/secret.md").unwrap();
    assert!(matches!(vault.get(&path), Err(RepositoryError::OutsideVault(_))));
    assert!(matches!(vault.refresh(&path), Err(RepositoryError::OutsideVault(_))));
    assert!(matches!(vault.move_entry(&path, Category::Ideas), Err(RepositoryError::OutsideVault(_))));
    let listed: Vec<String> =
        vault.list(&ListFilter::default()).unwrap().entries.iter().map(|s| s.path.to_string()).collect();
    assert_eq!(listed, ["projects/alias.md", "ideas/real.md"]);
    assert!(vault.all_entries().unwrap().iter().all(|e| e.path != path));
    assert!(!vault.entry_list_markdown().contains("secret"));
    assert_eq!(fs::read_to_string(&secret).unwrap(), "---\nname: Secret\n---\nprivate\n");

    // The link inside the vault is read, but changed only through the file it points to.
    let alias = EntryPath::parse("projects/alias.md").unwrap();
    assert_eq!(vault.get(&alias).unwrap().name(), "Real");
    let update = kb_domain::EntryUpdate::from_json_object(
        serde_json::json!({"status": "done"}).as_object().unwrap().clone(),
    )
    .unwrap();
    assert!(matches!(vault.update(&alias, &update), Err(RepositoryError::Linked(_))));
    assert!(matches!(vault.move_entry(&alias, Category::People), Err(RepositoryError::Linked(_))));
    assert!(fs::symlink_metadata(dir.path().join("projects/alias.md")).unwrap().file_type().is_symlink());
    assert!(!dir.path().join("people").read_dir().map(|mut d| d.next().is_some()).unwrap_or(false));
}

#[test]
fn category_folder_linked_out_of_the_vault_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("x.md"), "---\nname: X\n---\n").unwrap();
    symlink(outside.path(), dir.path().join("people")).unwrap();
    let vault = open(dir.path());
    let path = EntryPath::parse("people/x.md").unwrap();
    assert!(matches!(vault.get(&path), Err(RepositoryError::OutsideVault(_))));
    assert_eq!(vault.list(&ListFilter::default()).unwrap().total, 0);
    let new = kb_domain::NewEntry {
        category: Category::People,
        name: "Sarah".into(),
        fields: kb_domain::Frontmatter::new(),
        body: String::new(),
    };
    assert!(matches!(vault.create(new), Err(RepositoryError::OutsideVault(_))));
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 1);
}
