//! What the last apply wrote and from which device (`.kb/sync/pulled`), so history
//! records those files as the other device's changes (source `sync`) rather than as edits
//! made outside kb, whichever process notices them first.
//!
//! One line a file: its content hash (`-` for a removal), the device, the path, separated
//! by tabs. Written before the files, replaced by the next apply.

use std::collections::HashMap;
use std::path::Path;

use kb_domain::ContentHash;

use super::SyncError;
use super::git::Git;
use crate::history::DEVICE_TRAILER;
use crate::vault::atomic::write_atomic;

/// The file's name in `.kb/sync/`.
const FILE: &str = "pulled";

/// What a sync wrote at one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pulled {
    /// The bytes' hash (`None`: the file was removed).
    pub(crate) hash: Option<ContentHash>,
    /// The device whose change it was.
    pub(crate) device: String,
}

/// Keeps `files` (path, what was written) as the last apply's, in `state_dir`.
pub(super) fn keep(state_dir: &Path, files: &[(String, Pulled)]) -> Result<(), SyncError> {
    let mut text = String::new();
    for (path, pulled) in files {
        // A tab or line end in a name or device would break the line: such a file is
        // recorded as an outside change instead.
        if path.contains(['\t', '\n']) || pulled.device.contains(['\t', '\n']) {
            continue;
        }
        let hash = pulled.hash.as_ref().map_or("-", |h| h.0.as_str());
        text.push_str(&format!("{hash}\t{}\t{path}\n", pulled.device));
    }
    let file = state_dir.join(FILE);
    write_atomic(&file, text.as_bytes()).map_err(|e| SyncError::io(&file, e))
}

/// Adds `path` to what the apply under way wrote (see [`keep`]).
pub(super) fn add(state_dir: &Path, path: &str, pulled: &Pulled) -> Result<(), SyncError> {
    if path.contains(['\t', '\n']) || pulled.device.contains(['\t', '\n']) {
        return Ok(());
    }
    let file = state_dir.join(FILE);
    let hash = pulled.hash.as_ref().map_or("-", |h| h.0.as_str());
    let mut kept = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .map_err(|e| SyncError::io(&file, e))?;
    std::io::Write::write_all(&mut kept, format!("{hash}\t{}\t{path}\n", pulled.device).as_bytes())
        .map_err(|e| SyncError::io(&file, e))
}

/// What the last apply in the vault whose state folder (`.kb`) is `kb_state` wrote, by path;
/// empty when nothing was pulled.
pub(crate) fn read(kb_state: &Path) -> HashMap<String, Pulled> {
    let Ok(text) = std::fs::read_to_string(kb_state.join("sync").join(FILE)) else { return HashMap::new() };
    text.lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, '\t');
            let (hash, device, path) = (fields.next()?, fields.next()?, fields.next()?);
            let hash = (hash != "-").then(|| ContentHash(hash.to_string()));
            Some((path.to_string(), Pulled { hash, device: device.to_string() }))
        })
        .collect()
}

/// Which device each pulled path comes from (see [`devices`]).
#[derive(Debug, Default)]
pub(super) struct Devices {
    by_path: HashMap<String, String>,
    newest: Option<String>,
}

impl Devices {
    /// The device `path` comes from, when any commit brought it.
    pub(super) fn of(&self, path: &str) -> Option<&String> {
        self.by_path.get(path).or(self.newest.as_ref())
    }

    /// Every device named, newest first.
    pub(super) fn names(&self) -> impl Iterator<Item = &String> {
        self.newest.iter().chain(self.by_path.values())
    }
}

/// The device that last changed each path among the commits reachable from `target` and
/// not from `local` (merges left out): the commit's `Kb-Device` trailer, else its
/// author's name without the `kb on ` kb gives it when the person set none. A path no such
/// commit changed (what a merge made: merged text, a conflict copy, a note renamed beside
/// another) is the newest commit's device's: the merge took it in from there.
pub(super) fn devices(git: &Git, local: &str, target: &str) -> Result<Devices, SyncError> {
    let range = format!("{local}..{target}");
    let format = format!("--format=%x01%(trailers:key={DEVICE_TRAILER},valueonly,separator=%x2C)%x02%an");
    let out = git.output(&["log", "--no-merges", &format, "-z", "--name-only", &range])?.stdout;
    let mut devices = Devices::default();
    let mut device = String::new();
    // `\x01TRAILER\x02AUTHOR\0` then `\nPATH\0PATH\0…` for each commit, newest first.
    for token in out.split(|b| *b == 0) {
        let token = String::from_utf8_lossy(token);
        if let Some(named) = token.strip_prefix('\u{1}') {
            let (trailer, author) = named.split_once('\u{2}').unwrap_or(("", named));
            let trailer = trailer.trim();
            device = if trailer.is_empty() {
                author.strip_prefix("kb on ").unwrap_or(author).to_string()
            } else {
                trailer.to_string()
            };
            devices.newest.get_or_insert_with(|| device.clone());
        } else {
            let path = token.trim_start_matches('\n');
            if !path.is_empty() {
                devices.by_path.entry(path.to_string()).or_insert_with(|| device.clone());
            }
        }
    }
    Ok(devices)
}
