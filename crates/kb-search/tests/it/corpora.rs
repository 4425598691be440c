//! Real markdown from elsewhere (hugo docs, an Obsidian vault) copied into a vault: nothing
//! crashes, malformed files are skipped, readable ones are searchable.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{TestVault, search};

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

/// Copies every .md file under `from` into `to`, flattening sub-folders into the name.
fn copy_flat(from: &Path, to: &Path) -> usize {
    let mut copied = 0;
    let mut stack = vec![from.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for item in fs::read_dir(&dir).unwrap() {
            let path = item.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                let rel = path.strip_prefix(from).unwrap().to_string_lossy().replace('/', "--");
                fs::copy(&path, to.join(rel.trim_start_matches('.'))).unwrap();
                copied += 1;
            }
        }
    }
    copied
}

#[test]
fn real_corpora_are_indexed_and_searchable() {
    let Some(root) = corpora_root() else { return };
    let v = TestVault::new();
    let hugo = copy_flat(&root.join("hugo-docs"), &v.root().join("ideas"));
    let dataview = copy_flat(&root.join("dataview-test-vault"), &v.root().join("people"));
    assert!(hugo > 900 && dataview > 5, "{hugo} {dataview}");
    fs::write(v.root().join("ideas/zz-broken.md"), "---\ntitle: [unclosed\n---\nshortcode").unwrap();
    let index = v.open();
    let stats = index.open_stats().sync.clone();
    assert!(stats.malformed >= 1, "{stats:?}");
    assert_eq!(index.len() + stats.malformed, hugo + dataview + 1);

    // A page of the hugo docs about the front matter of content.
    let hits = search(&index, "archetype");
    assert!(
        hits.entries
            .iter()
            .any(|h| h.path.to_string() == "ideas/content--en--content-management--archetypes.md"),
        "{hits:?}"
    );
    let r = search(&index, "shortcode");
    assert!(r.entries.iter().any(|h| h.path.to_string().contains("shortcode")), "{r:?}");
    for hit in &r.entries {
        assert!(hit.snippet.to_lowercase().contains("**shortcode"), "{hit:?}");
    }
    // The Obsidian vault's books.
    let gatsby = search(&index, "gatsby");
    assert!(
        gatsby.entries.iter().any(|h| h.path.to_string() == "people/books--The Great Gatsby.md"),
        "{gatsby:?}"
    );
}
