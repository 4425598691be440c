//! Which files are notes, and reading them: one file ([`read_entry`], [`read_stamped`])
//! or every note of the vault ([`note_files`], [`scan`]). This is the one place the rule is
//! written; the vault and the [`kb_domain::VaultFiles`] port both use it. Reading never
//! writes.
//!
//! Every visible `.md` file of the vault is a note, in any folder: an entry of a category
//! when it is in a category folder (or a sub-folder of one), else one of the person's other
//! notes. Left out: hidden files and folders (`.kb/`, `.git/`, `.obsidian/`, `.trash/`),
//! what the vault's [`super::scope::Scope`] excludes, and kb's own entry list file. A
//! symlinked file or category folder counts only when it resolves inside the vault; other
//! symlinked folders are not walked into (their notes would be found twice). A file whose
//! frontmatter does not parse (or that is not UTF-8) is reported as malformed, with a
//! warning, and skipped.

use std::fs::{self, Metadata};
use std::io;
use std::path::Path;
use std::time::UNIX_EPOCH;

use kb_domain::{Category, Entry, EntryLines, EntryPath, FileRead, MalformedFile, RepositoryError, Stamp};
use walkdir::WalkDir;

use super::entry_list;
use super::safe_path::{Root, io_error};
use super::stamping::{Batch, Stamping};

/// What reading a file found.
#[derive(Debug)]
pub(crate) enum Found {
    /// A readable entry.
    Entry(Entry),
    /// A file that cannot be read as an entry.
    Malformed(MalformedFile),
}

/// Reads the entry at `path` from `file`: `Ok(None)` when the file is gone (or is kb's own
/// entry list file).
pub(crate) fn read_entry(file: &Path, path: &EntryPath) -> Result<Option<Found>, RepositoryError> {
    match fs::read(file) {
        Ok(bytes) if entry_list::is_kb_list(path, &bytes) => Ok(None),
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
        Ok(bytes) if entry_list::is_kb_list(path, &bytes) => {
            return Err(RepositoryError::NotFound(path.clone()));
        }
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
        Ok(bytes) if entry_list::is_kb_list(path, &bytes) => return FileRead::Missing,
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return FileRead::Missing,
        Err(e) => return FileRead::Malformed(format!("cannot read: {e}")),
    };
    // A stamp taken after the read would describe a newer version than the one read; the
    // one taken before can only be older, which makes the next look read it again.
    let stamp = Stamp { size: bytes.len() as u64, ..before };
    match parse_entry(path, &bytes) {
        Found::Entry(entry) => {
            // The bytes are UTF-8 text: the entry was read from them.
            let lines = std::str::from_utf8(&bytes).map(EntryLines::of).unwrap_or_default();
            FileRead::Entry(entry, stamp, lines)
        }
        Found::Malformed(m) => FileRead::Malformed(m.reason),
    }
}

/// Reads every entry file of the vault, handing each result to `found`. Malformed files
/// are logged here.
pub(crate) fn scan(root: &Root, mut found: impl FnMut(Found)) -> Result<(), RepositoryError> {
    for (path, _) in note_files(root) {
        match read_entry(&root.file(&path), &path)? {
            Some(Found::Malformed(m)) => {
                tracing::warn!(path = %m.path, reason = %m.reason, "skipping malformed entry file");
                found(Found::Malformed(m));
            }
            Some(entry) => found(entry),
            None => {}
        }
    }
    Ok(())
}

/// Every note file of the vault with its stamp, sorted, from folder listings and metadata
/// only (no file is opened). A folder that cannot be listed is skipped with a warning; a
/// category folder leading outside the vault has none.
pub(crate) fn note_files(root: &Root) -> Vec<(EntryPath, Stamp)> {
    let mut found = Vec::new();
    walk(root, root.dir(), &mut found);
    // A symlinked category folder is walked on its own (the walk does not follow links),
    // when it resolves inside the vault.
    for category in Category::ALL {
        if root.folder_is_symlink(category) {
            match root.checked_folder(category) {
                Ok(folder) if !folder_leads_into_scope(root, &folder) => {
                    tracing::debug!(
                        folder = category.as_str(),
                        "category folder leads to a folder the vault leaves out; skipped"
                    );
                }
                Ok(folder) => walk(root, &folder, &mut found),
                Err(_) => {
                    tracing::warn!(
                        folder = category.as_str(),
                        "category folder leads outside the vault; skipped"
                    );
                }
            }
        }
    }
    found.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
    found
}

/// Whether the folder `folder` (a symlinked category folder inside the vault) leads to a
/// folder kb walks: not hidden, not left out by the vault's scope.
fn folder_leads_into_scope(root: &Root, folder: &Path) -> bool {
    fs::canonicalize(folder).is_ok_and(|resolved| root.leaves_out(&resolved) == Some(false))
}

/// Every folder of the vault notes may be in, the root first, under the vault's canonical
/// root (where a file watcher reports its events): the folders [`note_files`] walks.
pub(crate) fn note_folders(root: &Root) -> Vec<std::path::PathBuf> {
    let under_root = walked_folders(root);
    under_root
        .iter()
        .filter_map(|folder| folder.strip_prefix(root.dir()).ok())
        .map(|rel| root.canonical().join(rel))
        .collect()
}

/// [`note_folders`] under the root as given.
fn walked_folders(root: &Root) -> Vec<std::path::PathBuf> {
    let mut folders = vec![root.dir().to_path_buf()];
    let mut starts = vec![root.dir().to_path_buf()];
    starts.extend(
        Category::ALL
            .into_iter()
            .filter(|c| root.folder_is_symlink(*c))
            .filter_map(|c| root.checked_folder(c).ok()),
    );
    for (n, start) in starts.iter().enumerate() {
        if n > 0 {
            folders.push(start.clone());
        }
        let items = walk_items(root, start).filter_map(Result::ok).filter(|item| item.file_type().is_dir());
        folders.extend(items.map(|item| item.path().to_path_buf()));
    }
    folders
}

/// Every file of the vault that is not a note (an image, a PDF, …), vault-relative, from
/// the folder listings: in the folders a walk for notes enters, not left out by the vault's
/// scope; a symlink only when it leads to such a file inside the vault. None is opened.
pub(crate) fn other_files(root: &Root) -> Vec<String> {
    let mut found = Vec::new();
    for item in walk_items(root, root.dir()).filter_map(Result::ok) {
        let kind = item.file_type();
        if kind.is_dir() {
            continue;
        }
        let Some(rel) = relative(root, item.path()) else { continue };
        let note = EntryPath::parse(&rel).is_ok() && !root.scope().excludes(&rel, false);
        if note || root.scope().leaves_out(&rel, false) {
            continue;
        }
        let is_file = if kind.is_symlink() {
            fs::metadata(item.path()).is_ok_and(|meta| meta.is_file()) && leads_into_scope(root, item.path())
        } else {
            kind.is_file()
        };
        if is_file {
            found.push(rel);
        }
    }
    found
}

/// The vault-relative path of an absolute folder under the vault's canonical root when
/// notes may be in it (see [`kb_domain::VaultFiles::note_folder_of`]).
pub(crate) fn note_folder_of(root: &Root, folder: &Path) -> Option<String> {
    let rel = slashed(folder.strip_prefix(root.canonical()).ok()?.to_str()?);
    let visible = !rel.is_empty() && rel.split('/').all(|part| !part.is_empty() && !part.starts_with('.'));
    (visible && !root.scope().excludes(&rel, true)).then_some(rel)
}

/// The items under `start` (the root, or a symlinked category folder) a walk for notes
/// looks at: hidden ones and folders the vault's scope leaves out are not entered.
fn walk_items(root: &Root, start: &Path) -> impl Iterator<Item = walkdir::Result<walkdir::DirEntry>> {
    let base = root.clone();
    WalkDir::new(start).min_depth(1).into_iter().filter_entry(move |item| {
        let Some(rel) = relative(&base, item.path()) else { return false };
        let visible = !item.file_name().to_string_lossy().starts_with('.');
        visible && !(item.file_type().is_dir() && base.scope().leaves_out(&rel, true))
    })
}

/// Adds the note files under `start` (the root, or a symlinked category folder) to `found`.
///
/// Each folder is listed with `read_dir`, and each file's metadata asked of its folder's
/// handle (`statx` on a name, not a whole path), which costs about half what looking up
/// every file's full path does; the files are stamped on every core while the walk lists
/// on (see [`super::stamping`]). This is the start of every command.
fn walk(root: &Root, start: &Path, found: &mut Vec<(EntryPath, Stamp)>) {
    let Some(rel) = relative(root, start) else { return };
    let stamped = Stamping::run(|stamping, batch, found| {
        let mut folders = vec![(start.to_path_buf(), rel)];
        while let Some((folder, rel)) = folders.pop() {
            batch.next_folder();
            list_folder(root, (&folder, &rel), (stamping, batch), found, &mut folders);
        }
    });
    found.extend(stamped);
}

/// Lists one folder (at `rel` in the vault): its files to `batch`, handed out to be
/// stamped as it fills (a symlinked file is checked and stamped at once, into `found`), its
/// sub-folders to walk to `folders`.
fn list_folder(
    root: &Root,
    (folder, rel): (&Path, &str),
    (stamping, batch): (&Stamping, &mut Batch),
    found: &mut Vec<(EntryPath, Stamp)>,
    folders: &mut Vec<(std::path::PathBuf, String)>,
) {
    let items = match fs::read_dir(folder) {
        Ok(items) => items,
        Err(error) => {
            tracing::warn!(folder = %folder.display(), %error, "a folder of the vault cannot be listed; skipped");
            return;
        }
    };
    let scope = root.scope();
    for item in items {
        let item = match item {
            Ok(item) => item,
            Err(error) => {
                tracing::warn!(folder = %folder.display(), %error, "a folder of the vault cannot be listed; skipped");
                continue;
            }
        };
        let name = item.file_name();
        let Some(name) = name.to_str() else {
            tracing::warn!(file = %item.path().display(), "file name is not UTF-8; not a note");
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let item_rel = if rel.is_empty() { name.to_string() } else { format!("{rel}/{name}") };
        let Ok(kind) = item.file_type() else { continue };
        // A symlinked folder is not walked into (see `note_files`): like a symlinked file,
        // it is looked at as a file below, and is not one.
        if kind.is_dir() {
            if !scope.excludes(&item_rel, true) {
                folders.push((item.path(), item_rel));
            }
            continue;
        }
        let Ok(path) = EntryPath::parse(&item_rel) else { continue };
        if scope.excludes(&item_rel, false) || entry_list::is_kb_list_file(&path, &item.path()) {
            continue;
        }
        if kind.is_symlink() {
            found.extend(stamp_of_path(root, &path).map(|stamp| (path, stamp)));
        } else {
            batch.push((item, path));
            stamping.hand_out(batch, found);
        }
    }
}

/// The vault-relative text of a path under the vault's root as given, `/`-separated;
/// `None` when it is not under it or not UTF-8 (with a warning: such a file cannot be
/// named).
fn relative(root: &Root, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(root.dir()).ok()?;
    let Some(text) = rel.to_str() else {
        tracing::warn!(file = %file.display(), "file name is not UTF-8; not a note");
        return None;
    };
    Some(slashed(text))
}

/// A vault-relative path as kb writes it: `/`-separated on every system.
fn slashed(rel: &str) -> String {
    if std::path::MAIN_SEPARATOR == '/' { rel.to_string() } else { rel.replace('\\', "/") }
}

/// The entry files of one category folder, from the listing alone: unlike [`list_folder`]
/// no file is looked at (but a symbolic link's target), so a folder of tens of thousands
/// costs one read of the folder.
pub(crate) fn list_folder_paths(root: &Root, category: Category) -> Result<Vec<EntryPath>, RepositoryError> {
    let mut found = Vec::new();
    for item in folder_items(root, category)? {
        let Some((path, kind)) = entry_name_of_item(category, &item) else { continue };
        if root.scope().excludes(path.as_str(), false) {
            continue;
        }
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
        Ok(folder) if root.folder_is_symlink(category) && !folder_leads_into_scope(root, &folder) => {
            return Ok(Vec::new());
        }
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

/// The stamp of the entry file at `path`, or `None` when there is no entry file there
/// (missing, not a regular file, a symlink — of the file or its folder — leading out of
/// the vault). Symlinks are resolved only when there is one.
pub(crate) fn stamp_of_path(root: &Root, path: &EntryPath) -> Option<Stamp> {
    if root.scope().excludes(path.as_str(), false) {
        return None;
    }
    let file = root.file(path);
    let link = fs::symlink_metadata(&file).ok()?;
    let file_linked = link.file_type().is_symlink();
    if (file_linked || root.folder_may_be_linked(path)) && !leads_into_scope(root, &file) {
        return None;
    }
    let meta = if file_linked { fs::metadata(&file).ok()? } else { link };
    meta.is_file().then(|| stamp_of(&meta))
}

/// Whether `file` (through whatever symlinks) is a file kb may read as a note: inside the
/// vault, in no hidden folder, and not left out by the vault's scope. A symlink to a note
/// the scope leaves out (`Private/secret.md` under a `.kbignore`'s `Private/`) is left out
/// with it: its text would otherwise be read, indexed and shown under the link's name.
fn leads_into_scope(root: &Root, file: &Path) -> bool {
    let Ok(resolved) = fs::canonicalize(file) else { return false };
    match root.leaves_out(&resolved) {
        Some(false) => true,
        Some(true) => {
            tracing::debug!(file = %file.display(), "symlink leads to a file the vault leaves out; not an entry");
            false
        }
        None => {
            tracing::warn!(file = %file.display(), "symlink leads outside the vault; not an entry");
            false
        }
    }
}

/// The entry path of an absolute file path under the vault's canonical root (as a file
/// watcher reports it), when it names a possible note file: a visible `.md` file the
/// vault's scope does not leave out, and not kb's own entry list file. Only the path is
/// looked at (and, at the entry list's names, the file's first bytes: kb rewrites that file
/// after its changes, and its events must not have it read whole).
pub(crate) fn entry_path_of(root: &Root, file: &Path) -> Option<EntryPath> {
    let rel = slashed(file.strip_prefix(root.canonical()).ok()?.to_str()?);
    let path = EntryPath::parse(&rel).ok()?;
    let kept_in = !root.scope().excludes(&rel, false) && !entry_list::is_kb_list_file(&path, file);
    kept_in.then_some(path)
}

/// The stamp of a file from its metadata.
pub(super) fn stamp_of(meta: &Metadata) -> Stamp {
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
mod tests;
