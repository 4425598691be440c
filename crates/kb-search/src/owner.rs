//! Several kb processes on one index: one of them, the owner, holds tantivy's writer; the
//! others read the index (their readers follow the owner's commits within a second) and
//! send what they changed to the owner over a Unix socket beside the index (or in a
//! private folder of this user, see [`socket_paths`]). The owner
//! reads those files from the vault itself (the vault is the truth, so a message is only
//! a list of paths), commits, and answers once the change is searchable; the sender then
//! reloads its reader, so it reads its own writes at once. Before a search, the others also
//! ask the owner to commit what it has queued ([`Request::Flush`]), so they read the
//! owner's changes at once too.
//!
//! When the owner is gone (it exited, or was killed), the next process that needs to write
//! or to search takes the writer over, catches up with the vault (the dead owner may have
//! left changes uncommitted: their files are on disk), and starts answering on the socket.
//! tantivy's writer lock (a file lock, released by the system when a process dies) decides
//! who owns the index; whoever owns it replaces a socket left behind by a dead owner.

use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::MetadataExt as _;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use kb_domain::{EntryPath, SearchError};
use serde::{Deserialize, Serialize};

use crate::index::{Reread, TantivyIndex};
use crate::open::SyncStats;
pub(crate) use crate::sockets::SocketPlace;

/// The socket's name in the index folder.
const SOCKET_FILE: &str = "kb-owner.sock";
/// The start of the socket's name in a private folder (`kb-{hash}.sock`).
const SOCKET_PREFIX: &str = "kb";
/// How long a sender waits for the owner to answer (and the owner for a request). A
/// change whose answer does not come in time still reaches the index: the owner's file
/// watcher sees the file.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
/// How much longer a sender waits for each path it sends: the owner reads every file of a
/// `git pull` of thousands in one request.
const ANSWER_TIMEOUT_PER_PATH: Duration = Duration::from_millis(5);

/// What a process asks of the owner.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "ask")]
pub(crate) enum Request {
    /// Bring the index in line with these files (written, moved or deleted).
    Sync {
        /// Vault paths.
        paths: Vec<String>,
        /// The paths are outside edits the sender's file watcher saw: files whose stamp
        /// matches what is indexed (the owner's own watcher followed them already) are not
        /// read again. Otherwise (the sender's own changes, and senders from before this
        /// field) every file is read again: on a filesystem with coarse modification
        /// times a same-size change keeps its stamp.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        outside: bool,
    },
    /// Bring the whole index in line with the vault.
    Reconcile,
    /// Answer once every change queued so far is committed (the owner commits in the
    /// background): the sender then reads every change made before it asked.
    Flush,
}

impl Request {
    /// How long the sender waits for the answer.
    fn answer_timeout(&self) -> Duration {
        let paths = match self {
            Request::Sync { paths, .. } => u32::try_from(paths.len()).unwrap_or(u32::MAX),
            Request::Reconcile | Request::Flush => 0,
        };
        ANSWER_TIMEOUT.saturating_add(ANSWER_TIMEOUT_PER_PATH.saturating_mul(paths))
    }
}

/// The owner's answer.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Answer {
    /// Why the request failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// The paths whose indexed entry changed.
    #[serde(default)]
    pub(crate) changed: Vec<String>,
    /// What a reconcile did.
    #[serde(default)]
    pub(crate) stats: Option<SyncStatsWire>,
}

/// [`SyncStats`] as sent over the socket.
#[derive(Debug, Default, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct SyncStatsWire {
    added: usize,
    updated: usize,
    removed: usize,
    malformed: usize,
}

impl From<&SyncStats> for SyncStatsWire {
    fn from(s: &SyncStats) -> SyncStatsWire {
        SyncStatsWire { added: s.added, updated: s.updated, removed: s.removed, malformed: s.malformed }
    }
}

impl From<SyncStatsWire> for SyncStats {
    fn from(s: SyncStatsWire) -> SyncStats {
        SyncStats { added: s.added, updated: s.updated, removed: s.removed, malformed: s.malformed }
    }
}

/// Where the owner of the index in `index_dir` may answer, in the order it tries them
/// (see [`crate::sockets::socket_places`]).
pub(crate) fn socket_paths(index_dir: &Path) -> Vec<SocketPlace> {
    crate::sockets::socket_places(index_dir, SOCKET_FILE, SOCKET_PREFIX)
}

/// Why a request could not be answered by an owner.
pub(crate) enum SendError {
    /// No owner answers on the socket (none, or it died).
    NoOwner,
    /// The owner answered with a failure, or the exchange broke off.
    Failed(SearchError),
}

/// Sends `request` to the owner, at whichever of `sockets` it answers, and waits for its
/// answer. A socket in a private folder that is not this user's own is never used.
pub(crate) fn send(sockets: &[SocketPlace], request: &Request) -> Result<Answer, SendError> {
    for socket in sockets {
        if !socket.usable() {
            continue;
        }
        match send_to(&socket.path, request) {
            Err(SendError::NoOwner) => continue,
            answered => return answered,
        }
    }
    Err(SendError::NoOwner)
}

fn send_to(socket: &Path, request: &Request) -> Result<Answer, SendError> {
    let mut stream = match UnixStream::connect(socket) {
        Ok(stream) => stream,
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset
            ) =>
        {
            return Err(SendError::NoOwner);
        }
        Err(e) => return Err(SendError::Failed(broken(e))),
    };
    let mut exchange = || -> io::Result<Answer> {
        stream.set_read_timeout(Some(request.answer_timeout()))?;
        let mut line = serde_json::to_string(request).map_err(io::Error::other)?;
        line.push('\n');
        stream.write_all(line.as_bytes())?;
        let mut answer = String::new();
        BufReader::new(&stream).read_line(&mut answer)?;
        if answer.is_empty() {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the owner hung up"));
        }
        serde_json::from_str(&answer).map_err(io::Error::other)
    };
    match exchange() {
        Ok(Answer { error: Some(error), .. }) => Err(SendError::Failed(SearchError::index_message(error))),
        Ok(answer) => Ok(answer),
        // The owner died mid-request: whether it committed is unknown, so the caller asks
        // again (a sync is idempotent).
        Err(e) if matches!(e.kind(), io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset) => {
            Err(SendError::NoOwner)
        }
        Err(e) => Err(SendError::Failed(broken(e))),
    }
}

fn broken(e: io::Error) -> SearchError {
    SearchError::index("the kb process that writes the search index did not answer", e)
}

/// Called with the paths another process changed, once the owner indexed them (so the
/// owner's own view of the vault follows too).
pub type OnForwarded = Arc<dyn Fn(&[EntryPath]) + Send + Sync>;

/// The owner's listener: answers on the socket until dropped.
pub(crate) struct OwnerServer {
    socket: PathBuf,
    /// The socket file's device and inode as bound: the name is given back only while it
    /// is still this server's (a new owner may have bound its own there since).
    bound: Option<(u64, u64)>,
    stop: Arc<AtomicBool>,
}

/// The device and inode of the file at `path`.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

impl OwnerServer {
    /// Starts answering for `index` on the first of `sockets` that can be made (replacing
    /// a socket a dead owner left; making a private folder that is missing).
    pub(crate) fn start(
        index: Weak<TantivyIndex>,
        sockets: &[SocketPlace],
        on_forwarded: Option<OnForwarded>,
    ) -> io::Result<OwnerServer> {
        let mut failure = io::Error::new(io::ErrorKind::NotFound, "no place for the socket");
        for socket in sockets {
            match socket.bind() {
                Ok(listener) => {
                    return OwnerServer::serve(index, socket.path.clone(), listener, on_forwarded);
                }
                Err(e) => {
                    tracing::debug!(error = %e, socket = %socket.path.display(), "cannot answer there");
                    failure = e;
                }
            }
        }
        Err(failure)
    }

    fn serve(
        index: Weak<TantivyIndex>,
        socket: PathBuf,
        listener: UnixListener,
        on_forwarded: Option<OnForwarded>,
    ) -> io::Result<OwnerServer> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        std::thread::Builder::new().name("kb-index-owner".into()).spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::Acquire) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let index = index.clone();
                let on_forwarded = on_forwarded.clone();
                let spawned = std::thread::Builder::new()
                    .name("kb-index-request".into())
                    .spawn(move || answer(&index, on_forwarded.as_ref(), stream));
                if let Err(error) = spawned {
                    tracing::warn!(%error, "could not answer a kb process");
                }
            }
        })?;
        tracing::info!(socket = %socket.display(), "this process writes the search index for every kb process");
        let bound = identity(&socket);
        Ok(OwnerServer { socket, bound, stop })
    }
}

impl Drop for OwnerServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Wakes the listener so it sees the stop, then gives the name back.
        let _ = UnixStream::connect(&self.socket);
        if self.bound.is_some() && identity(&self.socket) == self.bound {
            let _ = std::fs::remove_file(&self.socket);
        }
    }
}

/// Answers one request on `stream`. The answer goes out before `on_forwarded` runs: the
/// sender may hold locks of its own that whatever `on_forwarded` does would wait for.
fn answer(index: &Weak<TantivyIndex>, on_forwarded: Option<&OnForwarded>, stream: UnixStream) {
    // The sender writes its request at once; one that does not is not waited for long.
    if stream.set_read_timeout(Some(ANSWER_TIMEOUT)).is_err() {
        return;
    }
    let mut line = String::new();
    if BufReader::new(&stream).read_line(&mut line).is_err() || line.is_empty() {
        return;
    }
    // An owner that is closing does not answer at all: the sender then asks again or
    // takes the writer over, rather than taking "closing" for a failed change.
    let Some(index) = index.upgrade() else { return };
    let (reply, changed) = match serde_json::from_str::<Request>(&line) {
        Ok(request) => run(&index, request),
        Err(e) => {
            (Answer { error: Some(format!("unreadable request: {e}")), ..Answer::default() }, Vec::new())
        }
    };
    drop(index);
    let mut text = serde_json::to_string(&reply).unwrap_or_else(|_| "{\"error\":\"answer\"}".into());
    text.push('\n');
    let mut stream = stream;
    if let Err(error) = stream.write_all(text.as_bytes()) {
        tracing::debug!(%error, "a kb process left before its answer");
    }
    drop(stream);
    if let Some(on_forwarded) = on_forwarded
        && !changed.is_empty()
    {
        on_forwarded(&changed);
    }
}

/// Does what was asked; the answer and the paths whose indexed entry changed.
fn run(index: &TantivyIndex, request: Request) -> (Answer, Vec<EntryPath>) {
    let result = match request {
        Request::Sync { paths, outside } => {
            let paths: Vec<EntryPath> = paths.iter().filter_map(|p| EntryPath::parse(p).ok()).collect();
            let reread = if outside { Reread::Changed } else { Reread::All };
            index.sync_local(&paths, reread).map(|changed| (changed, None))
        }
        Request::Reconcile => index.reconcile_local(None).map(|(stats, changed)| (changed, Some(stats))),
        Request::Flush => {
            index.wait_for_queued();
            Ok((Vec::new(), None))
        }
    };
    match result {
        Ok((changed, stats)) => {
            let answer = Answer {
                error: None,
                changed: changed.iter().map(ToString::to_string).collect(),
                stats: stats.as_ref().map(SyncStatsWire::from),
            };
            (answer, changed)
        }
        Err(error) => {
            (Answer { error: Some(kb_domain::Chain(&error).to_string()), ..Answer::default() }, Vec::new())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    /// Listens at `socket`, answering one request with an empty answer.
    fn answering(socket: &Path) -> std::thread::JoinHandle<()> {
        let listener = UnixListener::bind(socket).unwrap();
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut line = String::new();
            BufReader::new(&stream).read_line(&mut line).unwrap();
            stream.write_all(b"{}\n").unwrap();
        })
    }

    #[test]
    fn a_socket_in_a_folder_others_may_open_is_never_asked() {
        let base = tempfile::tempdir().unwrap();
        let folder = base.path().join("kb");
        std::fs::create_dir(&folder).unwrap();
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
        let place = SocketPlace { path: folder.join("kb-test.sock"), private: Some(folder.clone()) };
        let listener = answering(&place.path);
        // Loosened after the socket was made there (as another user's folder would be).
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(matches!(send(std::slice::from_ref(&place), &Request::Flush), Err(SendError::NoOwner)));
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(send(&[place], &Request::Flush).is_ok(), "the owner in a private folder answers");
        listener.join().unwrap();
    }
}
