//! Which files are entries, and reading them: one file ([`read_entry`], [`read_stamped`])
//! or every entry file of the vault ([`list_folder`], [`scan`]). This is the one place the
//! rule is written; the vault and the [`kb_domain::VaultFiles`] port both use it. Reading
//! never writes.
//!
//! Only visible `.md` files directly inside a category folder are entries; sub-folders,
//! hidden files and anything else are left alone. A symlinked file or category folder
//! counts only when it resolves inside the vault. A file whose frontmatter does not parse
//! (or that is not UTF-8) is reported as malformed, with a warning, and skipped.

use std::fs::{self, Metadata};
use std::io;
use std::path::{Component, Path};
use std::time::UNIX_EPOCH;

use kb_domain::{Category, Entry, EntryPath, FileRead, MalformedFile, RepositoryError, Stamp};

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
    match fs::read(file) {
        Ok(bytes) => Ok(Some(parse_entry(path, &bytes))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(file, e)),
    }
}

/// The entry at `path` in the bytes of its file.
fn parse_entry(path: &EntryPath, bytes: &[u8]) -> Found {
    let malformed = |reason: String| Found::Malformed(MalformedFile { path: path.clone(), reason });
    let Ok(text) = std::str::from_utf8(bytes) else {
        return malformed(kb_domain::FrontmatterError::NotUtf8.to_string());
    };
    match Entry::from_document(path.clone(), text) {
        Ok(entry) => Found::Entry(entry),
        Err(e) => malformed(e.to_string()),
    }
}

/// Reads the entry at `path` for a change or a `get`: missing is `NotFound`, malformed is
/// `Malformed`.
pub(crate) fn read_existing(file: &Path, path: &EntryPath) -> Result<Entry, RepositoryError> {
    read_existing_document(file, path).map(|(entry, _)| entry)
}

/// Reads the entry at `path` and the text of its file, for a change made to that text:
/// missing is `NotFound`, malformed is `Malformed`.
pub(crate) fn read_existing_document(
    file: &Path,
    path: &EntryPath,
) -> Result<(Entry, String), RepositoryError> {
    let bytes = match fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(RepositoryError::NotFound(path.clone())),
        Err(e) => return Err(io_error(file, e)),
    };
    let malformed = |reason: String| RepositoryError::Malformed { path: path.clone(), reason };
    let text =
        String::from_utf8(bytes).map_err(|_| malformed(kb_domain::FrontmatterError::NotUtf8.to_string()))?;
    let entry = Entry::from_document(path.clone(), &text).map_err(|e| malformed(e.to_string()))?;
    Ok((entry, text))
}

/// Reads the entry at `path` with the stamp of its file, when it is an entry file.
pub(crate) fn read_stamped(root: &Root, path: &EntryPath) -> FileRead {
    let Some(before) = stamp_of_path(root, path) else {
        return FileRead::Missing;
    };
    let bytes = match fs::read(root.file(path)) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return FileRead::Missing,
        Err(e) => return FileRead::Malformed(format!("cannot read: {e}")),
    };
    // A stamp taken after the read would describe a newer version than the one read; the
    // one taken before can only be older, which makes the next look read it again.
    let stamp = Stamp { size: bytes.len() as u64, ..before };
    match parse_entry(path, &bytes) {
        Found::Entry(entry) => FileRead::Entry(entry, stamp),
        Found::Malformed(m) => FileRead::Malformed(m.reason),
    }
}

/// Reads every entry file of the vault, handing each result to `found`. Malformed files
/// are logged here.
pub(crate) fn scan(root: &Root, mut found: impl FnMut(Found)) -> Result<(), RepositoryError> {
    for category in Category::ALL {
        for (path, _) in list_folder(root, category)? {
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

/// The entry files of a category folder with their stamps, sorted, from the listing and
/// metadata only (no file is opened). A missing folder has none; so has one leading
/// outside the vault (with a warning).
pub(crate) fn list_folder(
    root: &Root,
    category: Category,
) -> Result<Vec<(EntryPath, Stamp)>, RepositoryError> {
    let mut found = Vec::new();
    for item in folder_items(root, category)? {
        found.extend(entry_of_item(root, category, &item));
    }
    found.sort_by(|(a, _), (b, _)| a.cmp(b));
    Ok(found)
}

/// The entry files of one category folder, from the listing alone: unlike [`list_folder`]
/// no file is looked at (but a symbolic link's target), so a folder of tens of thousands
/// costs one read of the folder.
pub(crate) fn list_folder_paths(root: &Root, category: Category) -> Result<Vec<EntryPath>, RepositoryError> {
    let mut found = Vec::new();
    for item in folder_items(root, category)? {
        let Some((path, kind)) = entry_name_of_item(category, &item) else { continue };
        if kind.is_file() || (kind.is_symlink() && stamp_of_path(root, &path).is_some()) {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

/// The items of one category folder (none when it does not exist or leads outside).
fn folder_items(root: &Root, category: Category) -> Result<Vec<fs::DirEntry>, RepositoryError> {
    let folder = match root.checked_folder(category) {
        Ok(folder) => folder,
        Err(RepositoryError::OutsideVault(_)) => {
            tracing::warn!(folder = category.as_str(), "category folder leads outside the vault; skipped");
            return Ok(Vec::new());
        }
        Err(RepositoryError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    let listing = match fs::read_dir(&folder) {
        Ok(listing) => listing,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error(&folder, e)),
    };
    listing.map(|item| item.map_err(|e| io_error(&folder, e))).collect()
}

/// The entry path a folder item's name makes, with the item's type (from the listing).
fn entry_name_of_item(category: Category, item: &fs::DirEntry) -> Option<(EntryPath, fs::FileType)> {
    let name = item.file_name();
    let Some(name) = name.to_str() else {
        tracing::warn!(file = ?item.path(), "file name is not UTF-8; not an entry");
        return None;
    };
    // Visible `.md` names only.
    let path = EntryPath::in_category(category, name).ok()?;
    Some((path, item.file_type().ok()?))
}

/// The entry path and stamp of a folder item, when it is an entry file.
fn entry_of_item(root: &Root, category: Category, item: &fs::DirEntry) -> Option<(EntryPath, Stamp)> {
    let (path, kind) = entry_name_of_item(category, item)?;
    let stamp = if kind.is_symlink() {
        stamp_of_path(root, &path)?
    } else {
        item.metadata().ok().filter(Metadata::is_file).map(|meta| stamp_of(&meta))?
    };
    Some((path, stamp))
}

/// The stamp of the entry file at `path`, or `None` when there is no entry file there
/// (missing, not a regular file, a symlink — of the file or its folder — leading out of
/// the vault). Symlinks are resolved only when there is one.
pub(crate) fn stamp_of_path(root: &Root, path: &EntryPath) -> Option<Stamp> {
    let file = root.file(path);
    let link = fs::symlink_metadata(&file).ok()?;
    let file_linked = link.file_type().is_symlink();
    if (file_linked || root.folder_is_symlink(path.category())) && !root.is_inside(&file) {
        tracing::warn!(file = %file.display(), "symlink leads outside the vault; not an entry");
        return None;
    }
    let meta = if file_linked { fs::metadata(&file).ok()? } else { link };
    meta.is_file().then(|| stamp_of(&meta))
}

/// The entry path of an absolute file path under the vault's canonical root (as a file
/// watcher reports it), when it names a possible entry file directly inside a category
/// folder. Only the path is looked at.
pub(crate) fn entry_path_of(root: &Root, file: &Path) -> Option<EntryPath> {
    let rel = file.strip_prefix(root.canonical()).ok()?;
    let mut parts = rel.components();
    let (Some(Component::Normal(folder)), Some(Component::Normal(name)), None) =
        (parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let category: Category = folder.to_str()?.parse().ok()?;
    EntryPath::in_category(category, name.to_str()?).ok()
}

/// The stamp of a file from its metadata.
fn stamp_of(meta: &Metadata) -> Stamp {
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_nanos()).ok())
        .unwrap_or(0);
    Stamp::new(mtime_ns, meta.len())
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    fn entries(root: &Root) -> Vec<String> {
        let mut found: Vec<String> = Category::ALL
            .into_iter()
            .flat_map(|c| list_folder(root, c).unwrap())
            .map(|(p, _)| p.to_string())
            .collect();
        found.sort();
        found
    }

    #[test]
    fn entry_paths_of_watcher_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path().to_path_buf()).unwrap();
        let v = root.canonical().to_path_buf();
        assert_eq!(entry_path_of(&root, &v.join("ideas/x.md")).unwrap().to_string(), "ideas/x.md");
        for other in ["ideas/sub/x.md", "ideas/.x.md", "ideas/x.md~", "index.md", "notes/x.md", "ideas"] {
            assert!(entry_path_of(&root, &v.join(other)).is_none(), "{other}");
        }
        assert!(entry_path_of(&root, Path::new("/w/ideas/x.md")).is_none());
    }

    #[test]
    fn scans_only_entries_and_refuses_symlinks_out() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path().to_path_buf()).unwrap();
        let v = root.canonical().to_path_buf();
        fs::create_dir_all(v.join("ideas/sub")).unwrap();
        fs::create_dir_all(v.join("people")).unwrap();
        fs::write(v.join("ideas/a.md"), "---\nname: A\n---\nbody").unwrap();
        fs::write(v.join("ideas/.hidden.md"), "x").unwrap();
        fs::write(v.join("ideas/sub/b.md"), "x").unwrap();
        fs::create_dir(v.join("ideas/dir.md")).unwrap();
        fs::write(v.join("ideas/c.txt"), "x").unwrap();
        fs::write(v.join("index.md"), "x").unwrap();
        fs::write(outside.path().join("secret.md"), "secret").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), v.join("ideas/out.md")).unwrap();
        std::os::unix::fs::symlink(v.join("ideas/a.md"), v.join("people/in.md")).unwrap();
        assert_eq!(entries(&root), ["ideas/a.md", "people/in.md"]);
        let out = EntryPath::parse("ideas/out.md").unwrap();
        assert!(matches!(read_stamped(&root, &out), FileRead::Missing));
        assert_eq!(stamp_of_path(&root, &out), None);
        let a = EntryPath::parse("ideas/a.md").unwrap();
        assert!(matches!(read_stamped(&root, &a), FileRead::Entry(e, _) if e.name() == "A"));
        let linked = EntryPath::parse("people/in.md").unwrap();
        assert_eq!(stamp_of_path(&root, &linked), stamp_of_path(&root, &a));
    }

    #[test]
    fn a_category_folder_leading_outside_has_no_entries() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.md"), "---\nname: S\n---\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("ideas")).unwrap();
        let root = Root::new(dir.path().to_path_buf()).unwrap();
        assert!(entries(&root).is_empty());
        let secret = EntryPath::parse("ideas/secret.md").unwrap();
        assert!(matches!(read_stamped(&root, &secret), FileRead::Missing));
    }

    #[test]
    fn malformed_files_are_reported_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("ideas")).unwrap();
        fs::write(dir.path().join("ideas/bad.md"), "---\nname: [unclosed\n---\n").unwrap();
        fs::write(dir.path().join("ideas/bin.md"), [0xff, 0xfe]).unwrap();
        let root = Root::new(dir.path().to_path_buf()).unwrap();
        for name in ["ideas/bad.md", "ideas/bin.md"] {
            let path = EntryPath::parse(name).unwrap();
            assert!(matches!(read_stamped(&root, &path), FileRead::Malformed(r) if !r.is_empty()), "{name}");
        }
        assert_eq!(fs::read(dir.path().join("ideas/bin.md")).unwrap(), [0xff, 0xfe]);
    }
}
