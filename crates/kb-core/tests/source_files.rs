//! The code stays in small modules: no Rust file under a workspace crate's `src/` is over
//! 600 lines (its `tests/` and `benches/` aside). A file that would grow past it is split
//! by concern, each part a module of its own.

use std::path::{Path, PathBuf};

/// The most lines a source file may have.
const MOST_LINES: usize = 600;

#[test]
fn no_source_file_is_over_600_lines() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in std::fs::read_dir(&crates).unwrap() {
        rust_files(&krate.unwrap().path().join("src"), &mut files);
    }
    assert!(files.len() > 100, "the crates' sources were not found under {}", crates.display());
    let mut long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let lines = std::fs::read_to_string(file).unwrap().lines().count();
            let shown = file.strip_prefix(&crates).unwrap_or(file).display().to_string();
            (lines > MOST_LINES).then(|| format!("{shown} ({lines})"))
        })
        .collect();
    long.sort();
    assert!(long.is_empty(), "over {MOST_LINES} lines: {}", long.join(", "));
}

/// Every `.rs` file in `dir` and below.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}
