//! What a kb server remembers of its accounts between requests: the tokens it found valid
//! and the vaults it found each person may use, so that a request costs a hash and a
//! lookup in memory, not a query.
//!
//! It is remembered only while the accounts stay as they were. Every change to them, in
//! any process (`kb tokens revoke`, `kb vaults ungrant`, a second `kb serve`), writes a new
//! mark into the file [`MARK_FILE`] beside the database once the change is committed. Each
//! lookup first reads that mark (a few microseconds) and forgets everything when it
//! differs, so a token revoked anywhere is refused at its very next request. Without a
//! readable mark nothing is remembered. What is remembered is also looked up afresh after
//! [`AT_MOST`], in case a process could write neither a mark nor remove the old one.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kb_domain::StoreError;
use rand::RngCore;

use super::Bearer;
use super::vaults::Access;

/// The file every change to the accounts marks anew, in the server's data folder.
pub(crate) const MARK_FILE: &str = "accounts.changed";
/// The longest anything is remembered without being looked up again.
const AT_MOST: Duration = Duration::from_secs(60);
/// The most of the mark file read: a mark kb writes is 32 hex digits.
const MARK_MAX: u64 = 64;
/// At most this many tokens and as many vault answers are remembered; beyond it they are
/// all forgotten (a person naming ever new vaults must not grow memory without bound).
const LIMIT: usize = 10_000;

/// A token found valid, with what its next uses need.
#[derive(Debug, Clone)]
pub(crate) struct KnownToken {
    /// Who it speaks for.
    pub(crate) bearer: Bearer,
    /// When it stops working (as stored), when it does.
    pub(crate) expires_at: Option<String>,
    /// The minute its last use was noted in the database (`YYYY-MM-DDTHH:MM`).
    pub(crate) noted: String,
}

/// The vault a person asked for (`None`: their own), as a key.
type AccessKey = (String, Option<String>);

/// What is remembered, and the mark it was found under.
#[derive(Debug, Default)]
struct Memory {
    mark: Option<Vec<u8>>,
    tokens: HashMap<String, (KnownToken, Instant)>,
    access: HashMap<AccessKey, (Option<Access>, Instant)>,
}

impl Memory {
    /// Forgets everything unless it was found under `mark`; then remembers that mark.
    fn under(&mut self, mark: &[u8]) {
        if self.mark.as_deref() != Some(mark) {
            self.tokens.clear();
            self.access.clear();
            self.mark = Some(mark.to_vec());
        }
    }
}

/// The accounts remembered by one process (see the module's documentation).
#[derive(Debug)]
pub(crate) struct Remembered {
    mark_file: PathBuf,
    memory: Mutex<Memory>,
}

/// The mark read before a lookup in the database: what it finds is remembered under it.
#[derive(Debug)]
pub(crate) struct Mark(Option<Vec<u8>>);

impl Mark {
    /// Whether there was no mark to read (nothing is remembered then).
    pub(crate) fn is_missing(&self) -> bool {
        self.0.is_none()
    }
}

impl Remembered {
    /// What is remembered of the accounts in `data_dir`: nothing yet.
    pub(crate) fn new(data_dir: &Path) -> Remembered {
        Remembered { mark_file: data_dir.join(MARK_FILE), memory: Mutex::default() }
    }

    /// The mark as it is now. Read before the database, so that a change committed after
    /// the read marks anew and is seen by the next lookup.
    pub(crate) fn mark(&self) -> Mark {
        Mark(read_mark(&self.mark_file))
    }

    /// The token whose hash is `hash`, when it was found valid under `mark` less than
    /// [`AT_MOST`] ago.
    pub(crate) fn token(&self, mark: &Mark, hash: &str) -> Option<KnownToken> {
        self.recall(mark, |memory| fresh(memory.tokens.get(hash)))
    }

    /// Remembers `known` under `mark`, unless the accounts changed since.
    pub(crate) fn keep_token(&self, mark: &Mark, hash: String, known: KnownToken) {
        self.keep(mark, |memory| keep_within_limit(&mut memory.tokens, hash, known));
    }

    /// Notes that the token of `hash` had its last use noted in minute `minute`.
    pub(crate) fn noted(&self, hash: &str, minute: &str) {
        if let Some((known, _)) = self.lock().tokens.get_mut(hash) {
            known.noted = minute.to_string();
        }
    }

    /// What `person` may use of `vault`, when it was looked up under `mark` less than
    /// [`AT_MOST`] ago: `Some(None)` when they may use none.
    pub(crate) fn access(&self, mark: &Mark, person: &str, vault: Option<&str>) -> Option<Option<Access>> {
        let key = (person.to_string(), vault.map(str::to_string));
        self.recall(mark, |memory| fresh(memory.access.get(&key)))
    }

    /// Remembers `access` under `mark`, unless the accounts changed since.
    pub(crate) fn keep_access(&self, mark: &Mark, person: &str, vault: Option<&str>, access: Option<Access>) {
        let key = (person.to_string(), vault.map(str::to_string));
        self.keep(mark, |memory| keep_within_limit(&mut memory.access, key, access));
    }

    /// What `find` finds in the memory under `mark` (forgotten first when the accounts
    /// changed); nothing without a mark.
    fn recall<T>(&self, mark: &Mark, find: impl FnOnce(&Memory) -> Option<T>) -> Option<T> {
        let mark = mark.0.as_deref()?;
        let mut memory = self.lock();
        memory.under(mark);
        find(&memory)
    }

    /// Lets `keep` add to the memory under `mark`, unless the accounts changed since that
    /// mark was read (what was looked up may be out of date) or there is no mark.
    fn keep(&self, mark: &Mark, keep: impl FnOnce(&mut Memory)) {
        let Some(mark) = mark.0.as_deref() else { return };
        let mut memory = self.lock();
        if memory.mark.as_deref().is_some_and(|now| now != mark) {
            return;
        }
        memory.under(mark);
        keep(&mut memory);
    }

    /// Says the accounts changed (called once the change is committed): forgets what this
    /// process remembers and writes a new mark for every process. When no mark can be
    /// written the old one is removed, so that no process remembers anything until one
    /// can be; when neither can be done, other processes may go on with what they
    /// remember for up to [`AT_MOST`], and the error says so.
    pub(crate) fn changed(&self) -> Result<(), StoreError> {
        {
            let mut memory = self.lock();
            memory.tokens.clear();
            memory.access.clear();
            memory.mark = None;
        }
        let mut bytes = [0u8; 16];
        rand::rng().fill_bytes(&mut bytes);
        let mark = super::hex(&bytes);
        let temp = self.mark_file.with_file_name(format!("{MARK_FILE}.{mark}.tmp"));
        let written =
            std::fs::write(&temp, mark.as_bytes()).and_then(|()| std::fs::rename(&temp, &self.mark_file));
        let Err(error) = written else { return Ok(()) };
        let _ = std::fs::remove_file(&temp);
        tracing::warn!(%error, "the accounts' change mark could not be written; removing it");
        match std::fs::remove_file(&self.mark_file) {
            Ok(()) => Ok(()),
            // Nothing there reads as a mark (gone, a folder, a device): no process
            // remembers anything.
            Err(_) if read_mark(&self.mark_file).is_none() => Ok(()),
            Err(_) => Err(StoreError::database(
                format!(
                    "the change is made, but kb servers running on these accounts may not see it for up to a \
                     minute: {} can be neither rewritten nor removed",
                    self.mark_file.display()
                ),
                error,
            )),
        }
    }

    /// The memory, even after a panic elsewhere (it is rebuilt from the database anyway).
    fn lock(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.memory.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `found`'s value, when it was remembered less than [`AT_MOST`] ago.
fn fresh<T: Clone>(found: Option<&(T, Instant)>) -> Option<T> {
    found.filter(|(_, at)| at.elapsed() < AT_MOST).map(|(value, _)| value.clone())
}

/// Remembers `value` under `key` in `map`, forgetting all of it first when it holds
/// [`LIMIT`] already.
fn keep_within_limit<K: std::hash::Hash + Eq, T>(map: &mut HashMap<K, (T, Instant)>, key: K, value: T) {
    if map.len() >= LIMIT {
        map.clear();
    }
    map.insert(key, (value, Instant::now()));
}

/// The mark in `file`, when it is a regular file holding one: opened without waiting (a
/// pipe put there must not hold a request up) and read no further than [`MARK_MAX`]
/// bytes (the folder is one people may edit by hand).
fn read_mark(file: &Path) -> Option<Vec<u8>> {
    let opened = open_without_waiting(file).ok()?;
    if !opened.metadata().ok()?.is_file() {
        return None;
    }
    let mut mark = Vec::new();
    opened.take(MARK_MAX).read_to_end(&mut mark).ok()?;
    (!mark.is_empty()).then_some(mark)
}

/// `file` opened to read, without waiting for a writer when it is a pipe.
#[cfg(unix)]
fn open_without_waiting(file: &Path) -> std::io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(file, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC, Mode::empty())?;
    Ok(File::from(fd))
}

/// `file` opened to read.
#[cfg(not(unix))]
fn open_without_waiting(file: &Path) -> std::io::Result<File> {
    File::open(file)
}
