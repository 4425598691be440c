//! Real markdown from outside the project (shared/corpora beside the repository): every file is an entry
//! or reported as malformed, nothing panics, and reading never rewrites a file.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use kb_domain::{Category, EntryCatalogue, EntryReader, ListFilter};
use sha2::{Digest, Sha256};

use super::common::open;

/// Where the shared corpora are: `shared/corpora` beside the repository (as in CI), or
/// `/work/shared/corpora`. Missing corpora skip the test locally and fail it under CI.
fn corpora_root() -> Option<PathBuf> {
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora");
    let found = [beside, PathBuf::from("/work/shared/corpora")].into_iter().find(|p| p.is_dir());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "the shared corpora are missing: CI must have shared/ beside the repo"
        );
        eprintln!("corpora not found; skipped");
    }
    found
}

fn corpus_files(corpora: &Path, corpus: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(corpora.join(corpus))
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| e.into_path())
        .collect();
    files.sort();
    files
}

/// sha256 of every file under `root` except `index.md` at the root and kb's `.kb/`.
fn hashes(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .filter(|e| !e.path().starts_with(root.join(".kb")))
        .map(|e| (e.path().to_path_buf(), Sha256::digest(fs::read(e.path()).unwrap()).to_vec()))
        .collect()
}

#[test]
fn corpora_read_without_panic_or_rewrite() {
    let Some(corpora) = corpora_root() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut copied = 0;
    for (i, corpus) in ["hugo-docs", "dataview-test-vault", "frontmatter-fixtures"].into_iter().enumerate() {
        let base = corpora.join(corpus);
        for file in corpus_files(&corpora, corpus) {
            let category = Category::ALL[(copied + i) % Category::ALL.len()];
            let relative = file.strip_prefix(&base).unwrap().to_string_lossy().replace('/', "__");
            let target = dir.path().join(category.as_str()).join(format!("{corpus}__{relative}"));
            fs::create_dir_all(target.parent().unwrap()).unwrap();
            fs::copy(&file, &target).unwrap();
            copied += 1;
        }
    }
    assert!(copied > 1000, "only {copied} files copied");
    let before = hashes(dir.path());

    let vault = open(dir.path());
    let page = vault.list(&ListFilter::default()).unwrap();
    let malformed = vault.malformed();
    assert_eq!(page.total + malformed.len(), copied, "every file is an entry or reported");
    assert!(
        malformed.iter().any(|m| m.path.to_string().contains("hugo-docs__archetypes__")),
        "a Go-template archetype should be malformed: {malformed:?}"
    );
    for summary in &page.entries {
        let entry = vault.get(&summary.path).unwrap();
        assert_eq!(entry.summary(), *summary);
    }
    let all = vault.all_entries().unwrap();
    assert_eq!(all.len(), page.total);
    assert!(vault.entry_list_markdown().lines().count() > page.total);
    drop(vault);
    let _again = open(dir.path());
    assert_eq!(hashes(dir.path()), before, "reading the vault rewrote a file");
}

#[test]
fn a_corpus_folder_as_it_is_opens_with_every_note_and_changes_nothing() {
    let Some(corpora) = corpora_root() else { return };
    let dir = tempfile::tempdir().unwrap();
    let source = corpora.join("dataview-test-vault");
    for item in walkdir::WalkDir::new(&source) {
        let item = item.unwrap();
        let target = dir.path().join(item.path().strip_prefix(&source).unwrap());
        if item.file_type().is_dir() {
            fs::create_dir_all(&target).unwrap();
        } else if item.file_type().is_file() {
            fs::copy(item.path(), &target).unwrap();
        }
    }
    let before = hashes(dir.path());
    let vault = open(dir.path());
    // Opening makes no category folder and no entry list file: only kb's own `.kb/`.
    for c in Category::ALL {
        assert_eq!(dir.path().join(c.as_str()).exists(), source.join(c.as_str()).exists(), "{c}");
    }
    assert!(!dir.path().join("index.md").exists() || source.join("index.md").exists());
    // Every visible markdown file is a note, known readable or malformed, in its folder.
    let notes: Vec<String> = walkdir::WalkDir::new(&source)
        .into_iter()
        .filter_entry(|item| !item.file_name().to_string_lossy().starts_with('.'))
        .map(Result::unwrap)
        .filter(|item| item.file_type().is_file() && item.path().extension().is_some_and(|e| e == "md"))
        .map(|item| item.path().strip_prefix(&source).unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(notes.len() > 10, "{notes:?}");
    let listed = vault.list(&ListFilter::default()).unwrap();
    assert_eq!(listed.total + vault.malformed().len(), notes.len());
    let other = ListFilter { category: Some(Category::Other), limit: 0, ..ListFilter::default() };
    for note in vault.list(&other).unwrap().entries {
        assert!(notes.contains(&note.path.to_string()), "{}", note.path);
        assert!(note.path.folder().is_empty() || dir.path().join(note.path.folder()).is_dir());
    }
    assert_eq!(hashes(dir.path()), before);
}
