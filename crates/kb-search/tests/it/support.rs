//! Shared helpers: temp vaults, entry files, queries.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kb_domain::{Category, Entry, EntryPath, SearchIndex, SearchQuery, SearchResults};
use kb_search::{OpenError, OpenOptions, TantivyIndex};
use kb_storage::vault::EntryFiles;
use tempfile::TempDir;

/// A vault in a temp folder, with its index folder at `.kb/index`.
pub struct TestVault {
    pub dir: TempDir,
}

impl TestVault {
    pub fn new() -> TestVault {
        let dir = tempfile::tempdir().unwrap();
        for c in Category::ALL {
            fs::create_dir_all(dir.path().join(c.as_str())).unwrap();
        }
        TestVault { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn index_dir(&self) -> PathBuf {
        self.dir.path().join(".kb/index")
    }

    pub fn open(&self) -> TantivyIndex {
        self.try_open().unwrap()
    }

    /// Opens the index of this vault, as kb does (entry files from kb-storage).
    pub fn try_open(&self) -> Result<TantivyIndex, OpenError> {
        open_index(self.root(), OpenOptions::default())
    }

    /// Writes a file at a vault-relative path, returning the entry as kb reads it.
    pub fn write(&self, rel: &str, text: &str) -> Option<Entry> {
        let file = self.root().join(rel);
        fs::write(&file, text).unwrap();
        EntryPath::parse(rel).ok().and_then(|p| Entry::from_document(p, text).ok())
    }

    pub fn write_entry(&self, rel: &str, name: &str, body: &str) -> Entry {
        self.write(rel, &format!("---\nname: {name}\n---\n{body}")).unwrap()
    }
}

/// Opens the index of the vault at `root`, kept in `{root}/.kb/index`.
pub fn open_index(root: &Path, options: OpenOptions) -> Result<TantivyIndex, OpenError> {
    let files = Arc::new(EntryFiles::new(root).unwrap());
    TantivyIndex::open_with(files, &root.join(".kb/index"), options)
}

pub fn query(text: &str) -> SearchQuery {
    SearchQuery {
        text: text.to_string(),
        category: None,
        limit: 10,
        offset: 0,
        prefix: false,
        ..Default::default()
    }
}

pub fn search(index: &TantivyIndex, text: &str) -> SearchResults {
    index.search(&query(text)).unwrap()
}

pub fn paths(results: &SearchResults) -> Vec<String> {
    results.entries.iter().map(|h| h.path.to_string()).collect()
}

/// Polls `check` until it holds or `limit` passes; returns whether it held.
pub fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if check() {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}
