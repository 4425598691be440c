//! Reading the vault from the index's side: which files are entries, their content stamps
//! (modification time and size, from metadata only), and reading one entry safely.
//!
//! Only `{category}/*.md` files directly inside a category folder are entries; hidden
//! files, sub-folders and anything else are left alone. A symlink (of a file or of a
//! category folder) is followed only when it resolves inside the vault.

use std::fs::{self, Metadata};
use std::io;
use std::path::{Component, Path};
use std::time::UNIX_EPOCH;

use kb_domain::{Category, Entry, EntryPath};

/// What the index remembers of a file to tell whether it changed: modification time
/// (nanoseconds since the epoch) and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stamp {
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// Size in bytes.
    pub size: u64,
}

impl Stamp {
    /// The stamp of an entry indexed without a file behind it: matches no real file.
    pub const NONE: Stamp = Stamp { mtime_ns: i64::MIN, size: u64::MAX };

    /// The stamp of a file from its metadata.
    pub fn of(meta: &Metadata) -> Stamp {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_nanos()).ok())
            .unwrap_or(0);
        Stamp { mtime_ns, size: meta.len() }
    }
}

/// What reading one entry file gave.
#[derive(Debug)]
pub(crate) enum FileRead {
    /// The entry and the stamp of the file it was read from.
    Entry(Entry, Stamp),
    /// No entry there: the file is gone, is not a regular file, or leads out of the vault.
    Missing,
    /// The file is there but is not an entry (frontmatter does not parse, not UTF-8).
    Malformed(String),
}

/// The stamp of the entry file at `path`, or `None` when there is no readable entry file
/// there (missing, not a regular file, a symlink leading out of the vault).
pub(crate) fn stat_entry(root: &Path, path: &EntryPath) -> Option<Stamp> {
    let file = path.under(root);
    let link = fs::symlink_metadata(&file).ok()?;
    let linked = link.file_type().is_symlink() || folder_is_symlink(root, path.category());
    if linked && !resolves_inside(root, &file) {
        return None;
    }
    let meta = if link.file_type().is_symlink() { fs::metadata(&file).ok()? } else { link };
    meta.is_file().then(|| Stamp::of(&meta))
}

/// Reads the entry at `path`.
pub(crate) fn read_entry(root: &Path, path: &EntryPath) -> FileRead {
    let Some(before) = stat_entry(root, path) else {
        return FileRead::Missing;
    };
    let bytes = match fs::read(path.under(root)) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return FileRead::Missing,
        Err(e) => return FileRead::Malformed(format!("cannot read: {e}")),
    };
    // A stamp taken after the read would describe a newer version than the one read; the
    // one taken before can only be older, which makes the next look read it again.
    let stamp = Stamp { size: bytes.len() as u64, ..before };
    let Ok(text) = String::from_utf8(bytes) else {
        return FileRead::Malformed("file is not UTF-8 text".into());
    };
    match Entry::from_document(path.clone(), &text) {
        Ok(entry) => FileRead::Entry(entry, stamp),
        Err(e) => FileRead::Malformed(e.to_string()),
    }
}

/// Every entry file of the vault with its stamp, from directory listings and metadata
/// only (no file is opened).
pub(crate) fn scan(root: &Path) -> Vec<(EntryPath, Stamp)> {
    let mut out = Vec::new();
    for category in Category::ALL {
        let folder = root.join(category.as_str());
        if folder_is_symlink(root, category) && !resolves_inside(root, &folder) {
            tracing::warn!(folder = %folder.display(), "category folder leads outside the vault; skipped");
            continue;
        }
        let Ok(listing) = fs::read_dir(&folder) else { continue };
        for item in listing.flatten() {
            let Some(name) = item.file_name().to_str().map(str::to_string) else { continue };
            let Ok(path) = EntryPath::in_category(category, &name) else { continue };
            let Ok(kind) = item.file_type() else { continue };
            let stamp = if kind.is_file() {
                item.metadata().ok().map(|m| Stamp::of(&m))
            } else if kind.is_symlink() {
                stat_entry(root, &path)
            } else {
                None
            };
            if let Some(stamp) = stamp {
                out.push((path, stamp));
            }
        }
    }
    out
}

/// The entry path of an absolute file path reported by the file watcher, when it names a
/// possible entry file directly inside a category folder of `root`.
pub(crate) fn entry_path_of(root: &Path, file: &Path) -> Option<EntryPath> {
    let rel = file.strip_prefix(root).ok()?;
    let mut parts = rel.components();
    let (Some(Component::Normal(folder)), Some(Component::Normal(name)), None) =
        (parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let category: Category = folder.to_str()?.parse().ok()?;
    EntryPath::in_category(category, name.to_str()?).ok()
}

fn folder_is_symlink(root: &Path, category: Category) -> bool {
    fs::symlink_metadata(root.join(category.as_str())).is_ok_and(|m| m.file_type().is_symlink())
}

/// Whether `path` resolves to somewhere inside `root` (which is canonical).
fn resolves_inside(root: &Path, path: &Path) -> bool {
    fs::canonicalize(path).is_ok_and(|real| real.starts_with(root))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_paths_of_watcher_paths() {
        let root = Path::new("/v");
        assert_eq!(entry_path_of(root, Path::new("/v/ideas/x.md")).unwrap().to_string(), "ideas/x.md");
        for other in [
            "/v/ideas/sub/x.md",
            "/v/ideas/.x.md",
            "/v/ideas/x.md~",
            "/v/index.md",
            "/v/notes/x.md",
            "/w/ideas/x.md",
            "/v/ideas",
        ] {
            assert!(entry_path_of(root, Path::new(other)).is_none(), "{other}");
        }
    }

    #[test]
    fn scans_only_entries_and_refuses_symlinks_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir_all(root.join("ideas/sub")).unwrap();
        fs::create_dir_all(root.join("people")).unwrap();
        fs::write(root.join("ideas/a.md"), "---\nname: A\n---\nbody").unwrap();
        fs::write(root.join("ideas/.hidden.md"), "x").unwrap();
        fs::write(root.join("ideas/sub/b.md"), "x").unwrap();
        fs::write(root.join("ideas/c.txt"), "x").unwrap();
        fs::write(root.join("index.md"), "x").unwrap();
        fs::write(outside.path().join("secret.md"), "secret").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join("ideas/out.md")).unwrap();
        std::os::unix::fs::symlink(root.join("ideas/a.md"), root.join("people/in.md")).unwrap();
        let mut found: Vec<String> = scan(&root).into_iter().map(|(p, _)| p.to_string()).collect();
        found.sort();
        assert_eq!(found, ["ideas/a.md", "people/in.md"]);
        let out = EntryPath::parse("ideas/out.md").unwrap();
        assert!(matches!(read_entry(&root, &out), FileRead::Missing));
        let a = EntryPath::parse("ideas/a.md").unwrap();
        assert!(matches!(read_entry(&root, &a), FileRead::Entry(e, _) if e.name() == "A"));
    }
}
