//! Reading entries from disk: one file ([`read_entry`]) or every `{category}/*.md` file of
//! the vault ([`scan`]). Reading never writes.
//!
//! Only visible `.md` files directly inside a category folder are entries; sub-folders,
//! hidden files and anything else are left alone. A file whose frontmatter does not parse
//! (or that is not UTF-8) is reported as malformed, with a warning, and skipped.

use std::fs;
use std::io;
use std::path::Path;

use kb_domain::{Category, Entry, EntryPath, MalformedFile, RepositoryError};

use super::safe_path::{Root, io_error};

/// What reading a file found.
#[derive(Debug)]
pub(crate) enum Found {
    /// A readable entry.
    Entry(Entry),
    /// A file that cannot be read as an entry.
    Malformed(MalformedFile),
}

/// Reads the entry at `path` from `file`: `Ok(None)` when the file is gone.
pub(crate) fn read_entry(file: &Path, path: &EntryPath) -> Result<Option<Found>, RepositoryError> {
    let bytes = match fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(file, e)),
    };
    let malformed = |reason: String| Found::Malformed(MalformedFile { path: path.clone(), reason });
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(Some(malformed(kb_domain::FrontmatterError::NotUtf8.to_string())));
    };
    Ok(Some(match Entry::from_document(path.clone(), text) {
        Ok(entry) => Found::Entry(entry),
        Err(e) => malformed(e.to_string()),
    }))
}

/// Reads the entry at `path` for a change or a `get`: missing is `NotFound`, malformed is
/// `Malformed`.
pub(crate) fn read_existing(file: &Path, path: &EntryPath) -> Result<Entry, RepositoryError> {
    match read_entry(file, path)? {
        Some(Found::Entry(entry)) => Ok(entry),
        Some(Found::Malformed(m)) => Err(RepositoryError::Malformed { path: m.path, reason: m.reason }),
        None => Err(RepositoryError::NotFound(path.clone())),
    }
}

/// Reads every entry file of the vault, handing each result to `found`. Malformed files
/// are logged here.
pub(crate) fn scan(root: &Root, mut found: impl FnMut(Found)) -> Result<(), RepositoryError> {
    for category in Category::ALL {
        let folder = match root.checked_folder(category) {
            Ok(folder) => folder,
            Err(RepositoryError::OutsideVault(_)) => {
                tracing::warn!(
                    folder = category.as_str(),
                    "category folder leads outside the vault; skipped"
                );
                continue;
            }
            Err(e) => return Err(e),
        };
        let listing = match fs::read_dir(&folder) {
            Ok(listing) => listing,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_error(&folder, e)),
        };
        let mut paths = Vec::new();
        for item in listing {
            let item = item.map_err(|e| io_error(&folder, e))?;
            if let Some(path) = entry_path_of(root, category, &item) {
                paths.push(path);
            }
        }
        paths.sort();
        for path in paths {
            match read_entry(&root.file(&path), &path)? {
                Some(Found::Malformed(m)) => {
                    tracing::warn!(path = %m.path, reason = %m.reason, "skipping malformed entry file");
                    found(Found::Malformed(m));
                }
                Some(entry) => found(entry),
                None => {}
            }
        }
    }
    Ok(())
}

/// The entry path of a folder item, when it is an entry file.
fn entry_path_of(root: &Root, category: Category, item: &fs::DirEntry) -> Option<EntryPath> {
    let name = item.file_name();
    let Some(name) = name.to_str() else {
        tracing::warn!(file = ?item.path(), "file name is not UTF-8; not an entry");
        return None;
    };
    if name.starts_with('.') || !name.ends_with(".md") {
        return None;
    }
    let kind = item.file_type().ok()?;
    if kind.is_dir() {
        return None;
    }
    if kind.is_symlink() {
        let target = fs::metadata(item.path()).ok()?;
        if !target.is_file() {
            return None;
        }
        if !root.is_inside(&item.path()) {
            tracing::warn!(file = ?item.path(), "symlink leads outside the vault; not an entry");
            return None;
        }
    }
    EntryPath::in_category(category, name).ok()
}
