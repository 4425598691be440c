//! The files kb keeps in `attachments/` follow the notes that link them: when a note goes
//! (a delete, an undone capture) a kept file no other note links any more goes to
//! `.kb/trash/attachments/`, and when a note linking it comes back (an undo, a restore) it
//! comes back too. A kept file is never rewritten; the trash is never emptied by kb.

use std::fs;

use kb_domain::{ATTACHMENTS_FOLDER, EntryPath};

use super::{State, Vault};

/// The folder of kept files no note links, inside `.kb/`.
const TRASH: &str = "trash";

/// How far back a note written by another process is read for links, beside the
/// catalogue: longer than any watcher takes to catch up.
const RECENT: std::time::Duration = std::time::Duration::from_secs(300);

impl Vault {
    /// The names of the kept files the note at `path` links (read before it goes).
    pub(super) fn kept_files_of(&self, state: &mut State, path: &EntryPath) -> Vec<String> {
        let folder = self.root.dir().join(ATTACHMENTS_FOLDER);
        let mut names: Vec<String> = state
            .cache
            .linked_file_names(path)
            .into_iter()
            .filter(|name| !name.is_empty() && folder.join(name).is_file())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The names of the kept files `text` (a note's, about to go) links: read from the text
    /// itself, so a delete builds no link graph unless the note links a kept file.
    pub(super) fn kept_files_in(&self, text: &str) -> Vec<String> {
        let folder = self.root.dir().join(ATTACHMENTS_FOLDER);
        let mut names: Vec<String> = kb_domain::links::parse_links(text)
            .iter()
            .map(|link| kb_domain::links::target_stem(&link.target).to_lowercase())
            .filter(|name| !name.is_empty() && folder.join(name).is_file())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Moves to the trash each of `names` (kept files the note at `gone` linked) that no
    /// other note links.
    pub(super) fn trash_unlinked(&self, state: &mut State, gone: &EntryPath, names: &[String]) {
        let kept = self.root.dir().join(ATTACHMENTS_FOLDER);
        let trash = self.root.dir().join(".kb").join(TRASH).join(ATTACHMENTS_FOLDER);
        for name in names {
            if state.cache.links_file_named(name, gone) || self.recent_note_links(gone, name) {
                continue;
            }
            if let Err(error) =
                fs::create_dir_all(&trash).and_then(|()| fs::rename(kept.join(name), trash.join(name)))
            {
                tracing::warn!(%error, file = %name, "a kept file no note links could not go to the trash");
            } else {
                tracing::info!(file = %name, "a kept file no note links went to .kb/trash/attachments/");
            }
        }
    }

    /// Whether a note written in the last minutes, other than `gone`, names the kept file
    /// `name`: one another process wrote that this one's catalogue may not know yet.
    fn recent_note_links(&self, gone: &EntryPath, name: &str) -> bool {
        let recent = std::time::SystemTime::now() - RECENT;
        super::scan::note_files(&self.root).into_iter().filter(|(path, _)| path != gone).any(|(path, _)| {
            let file = self.root.file(&path);
            let fresh =
                fs::metadata(&file).and_then(|m| m.modified()).is_ok_and(|modified| modified >= recent);
            fresh
                && fs::read(&file)
                    .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).to_lowercase().contains(name))
        })
    }

    /// Brings the kept file at `path` (`attachments/…`) back from the trash when it went
    /// there while a note linking it was being written: another process deleted the last
    /// note it knew to link it a moment before.
    pub fn keep_linked(&self, path: &str) {
        self.bring_back_kept_files(&format!("[[{path}]]"));
    }

    /// Brings back from the trash the kept files `text` (a note's, just written back) links
    /// that are missing.
    pub(super) fn bring_back_kept_files(&self, text: &str) {
        let kept = self.root.dir().join(ATTACHMENTS_FOLDER);
        let trash = self.root.dir().join(".kb").join(TRASH).join(ATTACHMENTS_FOLDER);
        for link in kb_domain::links::parse_links(text) {
            let name = link.target.trim().rsplit('/').next().unwrap_or_default().to_string();
            if name.is_empty()
                || name.starts_with('.')
                || kept.join(&name).exists()
                || !trash.join(&name).is_file()
            {
                continue;
            }
            let back =
                fs::create_dir_all(&kept).and_then(|()| fs::rename(trash.join(&name), kept.join(&name)));
            if let Err(error) = back {
                tracing::warn!(%error, file = %name, "a kept file could not come back from the trash");
            }
        }
    }
}
