//! [`EntryListFile`]: the entry list file kb writes (`index.md`, or `kb-index.md`) and
//! everything kept about it — where it is, the text kb last wrote there, when, and from
//! which cache version — with the schedule of its writes.
//!
//! Its lock is taken after the vault's main lock or alone, never the other way round, and
//! the entry list is rendered under it alone (from a snapshot of the cache), so changes
//! never wait for the whole entry list to be rendered and written.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use super::atomic;
use super::cache::{EntryListPatch, EntryListSnapshot};
use super::entry_list::{self, Owner};
use super::entry_list_keep;
use super::entry_list_schedule::EntryListSchedule;

/// How long another kb process's write of the entry list file stands before this process,
/// whose view differs, writes its own: long enough for a watching process to follow the
/// change that write came from (a fraction of a second; more on a busy machine), so it
/// does not first write its older view and then the same list again.
const REPAIR_AFTER: Duration = Duration::from_secs(2);

/// A file's modification time and size: what tells kb's last write from a later one.
type Stamp = (SystemTime, u64);

/// The entry list file and what kb knows of it.
pub(crate) struct EntryListFile {
    /// The vault's root folder, where the file is chosen.
    root: PathBuf,
    /// What the file's lock guards.
    state: Mutex<Written>,
    /// Whether kb keeps the file: once it exists (found there, or written by another kb
    /// process) or kb has changed an entry. Until then nothing is created: opening a vault,
    /// searching it or following its edits leaves the person's folder as it was. Outside
    /// the lock: a change marks it holding the vault's lock, and must not wait meanwhile
    /// for a write of the whole file.
    kept: AtomicBool,
    /// When the file is written (shared with its background writer).
    schedule: Arc<EntryListSchedule>,
}

/// What the entry list file's lock guards.
struct Written {
    /// The text kb last wrote to its entry list file (empty before the first write).
    text: String,
    /// The cache version that text was rendered from: an older snapshot is never written.
    version: u64,
    /// Where kb writes its entry list (`None`: nowhere, every name is the person's).
    file: Option<PathBuf>,
    /// Why kb is not using `index.md`, for the person.
    notice: Option<String>,
    /// The file's stamp after kb last wrote it: another kb process writing it since (from
    /// an older view of the vault) shows as a difference.
    stamp: Option<Stamp>,
    /// The stamp the file was first found with after another process wrote it, and when
    /// (see [`EntryListFile::check`]).
    disturbed: Option<(Option<Stamp>, Instant)>,
}

/// Whether a write may be skipped when the text is what kb last wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rewrite {
    /// Only when the text differs from what kb last wrote.
    WhenChanged,
    /// Even when it does not: another process wrote the file since.
    EvenIfSame,
}

impl EntryListFile {
    /// The entry list file of the vault at `root`: `index.md`, or `kb-index.md` when
    /// `index.md` is the person's own (the notice saying so is logged), or none.
    pub(crate) fn choose(root: &Path) -> EntryListFile {
        let (file, notice) = entry_list::choose_file(root);
        if let Some(notice) = &notice {
            tracing::warn!("{notice}");
        }
        EntryListFile {
            root: root.to_path_buf(),
            state: Mutex::new(Written {
                text: String::new(),
                version: 0,
                file,
                notice,
                stamp: None,
                disturbed: None,
            }),
            kept: AtomicBool::new(false),
            schedule: Arc::default(),
        }
    }

    /// When the file is written (see [`EntryListSchedule`]).
    pub(crate) fn schedule(&self) -> &Arc<EntryListSchedule> {
        &self.schedule
    }

    /// Where kb writes its entry list; `None` when both names are the person's.
    pub(crate) fn file(&self) -> Option<PathBuf> {
        self.lock().file.clone()
    }

    /// Why kb is not writing its entry list to `index.md`, when it is not.
    pub(crate) fn notice(&self) -> Option<String> {
        self.lock().notice.clone()
    }

    /// From now on kb keeps the file, creating it at the next write: kb has changed an
    /// entry of the vault.
    pub(crate) fn keep(&self) {
        self.kept.store(true, Ordering::Release);
    }

    /// The file's lock. A panic while holding it leaves at worst a stale file, put right
    /// by the next write, so poisoning is ignored.
    fn lock(&self) -> MutexGuard<'_, Written> {
        kb_domain::sync::lock(&self.state)
    }

    /// Renders the entry list from `snapshot` and writes it when it differs from what kb
    /// last wrote and from what the file holds now (see [`EntryListFile::write_with`]).
    pub(crate) fn write(&self, snapshot: EntryListSnapshot) {
        self.write_with(snapshot, Rewrite::WhenChanged);
    }

    /// Brings the entry list file up to date with `patch`, changing only the changed
    /// entries' lines of the file as it is now (read again: another kb process may have
    /// written it), so one change costs a read and a write of the file, not rendering
    /// every entry. When the file cannot be patched (there is none yet, it is not kb's, or
    /// it does not hold what the patch expects) the whole list `full` gives is written, as
    /// [`EntryListFile::write`] does.
    pub(crate) fn write_patched(&self, patch: &EntryListPatch, full: impl FnOnce() -> EntryListSnapshot) {
        {
            let mut written = self.lock();
            if patch.version < written.version {
                return;
            }
            let Some(file) = written.file.clone() else { return };
            // A link put there since is the person's: the whole write below moves away from it.
            let linked = fs::symlink_metadata(&file).is_ok_and(|meta| meta.file_type().is_symlink());
            let current = (!linked)
                .then(|| fs::read_to_string(&file).ok())
                .flatten()
                .filter(|text| entry_list::is_kb_text(text));
            if let Some(current) = current
                && let Some(text) = with_line_ends_of(&current, |lf| entry_list::patch(lf, patch))
            {
                self.keep();
                written.stamp = if text == current { file_written(&file) } else { replace(&file, &text) };
                written.text = text;
                written.version = patch.version;
                return;
            }
        }
        self.write(full());
    }

    /// [`EntryListFile::write`] even when the text is what kb last wrote: another process
    /// wrote the file since.
    fn rewrite(&self, snapshot: EntryListSnapshot) {
        self.write_with(snapshot, Rewrite::EvenIfSame);
    }

    /// Renders the entry list from `snapshot` and writes it when it differs from what kb
    /// last wrote (or as `rewrite` says) and from what the file holds now, unless a newer
    /// snapshot was written already; and only over a file kb wrote itself: when the person
    /// has put their own file there since, kb moves to the other name (and says so)
    /// instead.
    fn write_with(&self, snapshot: EntryListSnapshot, rewrite: Rewrite) {
        let mut written = self.lock();
        if snapshot.version < written.version {
            return;
        }
        let Some(mut file) = written.file.clone() else { return };
        if !self.kept.load(Ordering::Acquire) {
            if fs::symlink_metadata(&file).is_err() {
                return;
            }
            self.keep();
        }
        let rendered = entry_list::render(&snapshot);
        // The whole file is read only once, at open: afterwards the text kb last wrote is
        // known, and only the file's first bytes are read to see it is still kb's (unless
        // the person added lines to it, see below).
        if rewrite == Rewrite::WhenChanged && !written.text.is_empty() && rendered == written.text {
            written.version = snapshot.version;
            return;
        }
        // A file not known to be kb's is left alone too; and where the file is gone, the
        // choice is made again, as another process opening the vault now makes it, so that
        // both keep one list.
        if !matches!(entry_list::owner(&file), Ok(Owner::Kb)) {
            let (chosen, notice) = entry_list::choose_file(&self.root);
            if let Some(notice) = notice.as_ref().filter(|notice| written.notice.as_ref() != Some(*notice)) {
                tracing::warn!("{notice}");
            }
            (written.file, written.notice) = (chosen.clone(), notice);
            let Some(chosen) = chosen else { return };
            file = chosen;
        }
        // Lines the person added to kb's file stay where they are, and so do its line ends.
        let text = match fs::read_to_string(&file).ok().filter(|current| entry_list::is_kb_text(current)) {
            Some(current) if current != rendered => with_line_ends_of(&current, |lf| {
                Some(entry_list_keep::keeping_added_lines(lf, &snapshot).unwrap_or_else(|| rendered.clone()))
            })
            .unwrap_or(rendered),
            _ => rendered,
        };
        // What is there already is never written again: another kb process on the vault
        // may have written this very text (sync tools and editors see every write).
        // The file's stamp is taken as this process left it (before the rename, or before
        // reading what is there), never after: another process's write right after ours
        // must not pass for ours, or it would never be put right.
        written.stamp = match holds(&file, &text) {
            Some(stamp) => Some(stamp),
            None => replace(&file, &text),
        };
        written.text = text;
        written.version = snapshot.version;
    }

    /// Rewrites the entry list file (from the snapshot `snapshot` takes) when another kb
    /// process wrote it since from an older view of the vault, once that write has stood
    /// for [`REPAIR_AFTER`]: a process about to follow the same change writes the same
    /// text and nothing is rewritten, and a file that already holds this process's text is
    /// never written again. `snapshot` is called without the file's lock held.
    pub(crate) fn check(&self, snapshot: impl FnOnce() -> EntryListSnapshot) {
        {
            let mut written = self.lock();
            let now = written.file.as_deref().and_then(file_written);
            if now == written.stamp {
                written.disturbed = None;
                return;
            }
            match written.disturbed {
                Some((seen, since)) if seen == now && since.elapsed() >= REPAIR_AFTER => {}
                Some((seen, _)) if seen == now => return,
                _ => {
                    written.disturbed = Some((now, Instant::now()));
                    return;
                }
            }
            written.disturbed = None;
        }
        self.rewrite(snapshot());
    }
}

/// What `change` makes of `text` read with LF line ends, given back with the line ends
/// `text` has: a list kept with CRLF (as Git on Windows may check it out) stays so.
fn with_line_ends_of(text: &str, change: impl FnOnce(&str) -> Option<String>) -> Option<String> {
    if !text.contains("\r\n") {
        return change(text);
    }
    change(&text.replace("\r\n", "\n")).map(|changed| changed.replace('\n', "\r\n"))
}

/// Replaces `file` with `text` (atomically), and its stamp as this process left it; when it
/// cannot be written, the stamp it has (the entry change itself is on disk; a stale entry
/// list is repaired next time).
fn replace(file: &Path, text: &str) -> Option<Stamp> {
    match atomic::replace(file, text.as_bytes()) {
        Ok(meta) => stamp_of(&meta),
        Err(e) => {
            tracing::warn!(error = %e, file = %file.display(), "could not write the entry list file");
            file_written(file)
        }
    }
}

/// The stamp of `file` when it holds exactly `text` (its size is looked at first, so a
/// file of another size is not read).
fn holds(file: &Path, text: &str) -> Option<Stamp> {
    // Stamped before it is read: a write after the read changes the stamp it is compared
    // with later, so it cannot go unseen.
    let stamp = file_written(file)?;
    (stamp.1 == text.len() as u64 && fs::read(file).is_ok_and(|bytes| bytes == text.as_bytes()))
        .then_some(stamp)
}

/// A file's modification time and size, when it can be read.
fn file_written(file: &Path) -> Option<Stamp> {
    stamp_of(&fs::metadata(file).ok()?)
}

/// The modification time and size in `meta`, when the platform gives the time.
fn stamp_of(meta: &fs::Metadata) -> Option<Stamp> {
    Some((meta.modified().ok()?, meta.len()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::mpsc;

    use super::*;

    #[test]
    fn a_change_does_not_wait_for_a_write_of_the_file_under_way() {
        let dir = tempfile::tempdir().unwrap();
        let file = EntryListFile::choose(dir.path());
        // A write of the whole list (thousands of entries) holds the file's lock meanwhile.
        let writing = file.lock();
        let (kept, heard) = mpsc::channel();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                file.keep();
                let _ = kept.send(());
            });
            let waited = heard.recv_timeout(Duration::from_secs(10));
            drop(writing);
            assert!(waited.is_ok(), "the change waited for the write");
        });
        assert!(file.kept.load(Ordering::Acquire));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_put_in_place_of_the_file_is_left_as_it_is() {
        use kb_domain::{Entry, EntryPath};

        use crate::vault::cache::Cache;

        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let file = EntryListFile::choose(dir.path());
        file.keep();
        let mut cache = Cache::default();
        let kiln = EntryPath::parse("ideas/kiln.md").unwrap();
        cache.insert(&Entry::from_document(kiln.clone(), "---\nname: Kiln\n---\n").unwrap());
        file.write(cache.entry_list_snapshot());
        let index = dir.path().join("index.md");
        // The person swaps kb's list for a link to a copy of it kept elsewhere.
        let copy = elsewhere.path().join("list.md");
        fs::copy(&index, &copy).unwrap();
        fs::remove_file(&index).unwrap();
        std::os::unix::fs::symlink(&copy, &index).unwrap();
        let before = fs::read(&copy).unwrap();

        let glaze = EntryPath::parse("ideas/glaze.md").unwrap();
        cache.insert(&Entry::from_document(glaze.clone(), "---\nname: Glaze\n---\n").unwrap());
        file.write_patched(&cache.entry_list_patch(&[glaze]), || cache.entry_list_snapshot());
        assert!(fs::symlink_metadata(&index).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(&copy).unwrap(), before);
        let list = fs::read_to_string(dir.path().join("kb-index.md")).unwrap();
        assert!(list.contains("Glaze") && list.contains("Kiln"), "{list}");
    }
}
