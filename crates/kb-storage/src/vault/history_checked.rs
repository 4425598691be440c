//! What the last check of history against the files found in agreement: for each file, the
//! stamp it had and the revision history held for it then, kept in `.kb/history-checked.bin`
//! so that the next check ([`super::Vault::check_history`]) reads only the files whose stamp
//! or history changed since. A file modified within two seconds of that check is read
//! again (its stamp cannot tell a later version from the one checked, see
//! [`super::saved_catalogue`]). The file is derived: missing or unreadable, every file is
//! read, as before it existed.

use std::collections::HashMap;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use kb_domain::{ContentHash, EntryPath, Stamp};
use serde::{Deserialize, Serialize};

use super::atomic;

/// The file's name in the vault's `.kb/` folder.
const FILE: &str = "history-checked.bin";

/// Changes whenever what is saved changes.
const FORMAT: u32 = 1;

/// The files found in agreement with history by the last check.
#[derive(Debug, Default)]
pub(crate) struct HistoryChecked {
    files: HashMap<String, (i64, u64, String)>,
    checked_at_ns: i64,
}

#[derive(Serialize, Deserialize)]
struct Saved {
    format: u32,
    checked_at_ns: i64,
    files: Vec<(String, i64, u64, String)>,
}

impl HistoryChecked {
    /// What the last check of the vault whose state folder is `state_dir` found.
    pub(crate) fn load(state_dir: &Path) -> HistoryChecked {
        let Ok(bytes) = std::fs::read(state_dir.join(FILE)) else { return HistoryChecked::default() };
        match postcard::from_bytes::<Saved>(&bytes) {
            Ok(saved) if saved.format == FORMAT => HistoryChecked {
                files: saved
                    .files
                    .into_iter()
                    .map(|(path, mtime, size, head)| (path, (mtime, size, head)))
                    .collect(),
                checked_at_ns: saved.checked_at_ns,
            },
            _ => HistoryChecked::default(),
        }
    }

    /// Whether the file at `path`, whose stamp is `stamp` and whose last revision is `head`,
    /// is as the last check found it in agreement with history.
    pub(crate) fn agrees(&self, path: &EntryPath, stamp: Stamp, head: &ContentHash) -> bool {
        let Some((mtime, size, checked_head)) = self.files.get(path.as_str()) else { return false };
        let settled = stamp.settled_at(self.checked_at_ns);
        settled && *mtime == stamp.mtime_ns && *size == stamp.size && *checked_head == head.to_string()
    }

    /// Saves `agreeing` (each file with the stamp taken before it was read and the revision
    /// its bytes matched) as what a check begun at `began` found.
    pub(crate) fn save(
        state_dir: &Path,
        agreeing: &[(EntryPath, Stamp, ContentHash)],
        began: SystemTime,
    ) -> std::io::Result<()> {
        let checked_at_ns =
            began.duration_since(UNIX_EPOCH).ok().and_then(|d| i64::try_from(d.as_nanos()).ok()).unwrap_or(0);
        let files = agreeing
            .iter()
            .map(|(path, stamp, head)| (path.to_string(), stamp.mtime_ns, stamp.size, head.to_string()))
            .collect();
        let bytes = postcard::to_stdvec(&Saved { format: FORMAT, checked_at_ns, files })
            .map_err(std::io::Error::other)?;
        atomic::write_atomic(&state_dir.join(FILE), &bytes)
    }
}
