//! [`DeliveryLocks`]: which process may try which delivery, through a lock file per
//! delivery beside the database.

use std::collections::HashSet;
use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use kb_domain::StoreError;
use kb_domain::outreach::DeliveryHold;
use kb_domain::sync::lock;

/// Who may try which delivery, across processes: the holder of an exclusive lock on
/// `{database}.deliveries/{id}.lock`. The operating system lets go of a lock when its
/// process ends, however it ends, so a delivery a killed process was trying is free at
/// once. A file is removed once its delivery is finished (by the holder, before it lets
/// go: who opens it later finds the delivery finished). In memory a set of this process's
/// holds stands in; where the filesystem has no locks that set does too, with a warning
/// (other processes are then not kept off).
#[derive(Debug, Clone)]
pub(super) struct DeliveryLocks {
    /// The lock files' folder (`None`: in memory).
    dir: Option<PathBuf>,
    /// The deliveries this process holds where files cannot say.
    held: Arc<Mutex<HashSet<i64>>>,
}

/// A delivery's lock file, locked: dropping it closes the file, which lets go of the lock.
struct FileHold {
    _file: File,
}

/// A delivery held in this process's set: dropping it takes it out.
struct MemoryHold {
    held: Arc<Mutex<HashSet<i64>>>,
    id: i64,
}

impl Drop for MemoryHold {
    fn drop(&mut self) {
        lock(&self.held).remove(&self.id);
    }
}

impl DeliveryLocks {
    /// The locks of the database at `file` (`None`: in memory).
    pub(super) fn beside(file: Option<&Path>) -> DeliveryLocks {
        let dir = file.map(|file| {
            let mut name = file.file_name().map(|name| name.to_os_string()).unwrap_or_default();
            name.push(".deliveries");
            file.with_file_name(name)
        });
        DeliveryLocks { dir, held: Arc::default() }
    }

    /// The lock file of delivery `id` (`None`: in memory).
    fn file(&self, id: i64) -> Option<PathBuf> {
        self.dir.as_ref().map(|dir| dir.join(format!("{id}.lock")))
    }

    /// Holds delivery `id`, or `None` when someone else does.
    pub(super) fn hold(&self, id: i64) -> Result<Option<DeliveryHold>, StoreError> {
        let Some(path) = self.file(id) else { return Ok(self.hold_in_memory(id)) };
        let locked = lock_file(&path)
            .map_err(|e| StoreError::database(format!("cannot lock {}", path.display()), e))?;
        match locked {
            Locked::Held(file) => Ok(Some(DeliveryHold::new(id, FileHold { _file: file }))),
            Locked::Busy => Ok(None),
            Locked::Unsupported(error) => {
                static WARNED: std::sync::Once = std::sync::Once::new();
                WARNED.call_once(|| {
                    tracing::warn!(
                        %error,
                        "the filesystem has no locks: only this process is kept off a delivery it sends"
                    );
                });
                Ok(self.hold_in_memory(id))
            }
        }
    }

    /// Holds delivery `id` in this process's set, or `None` when this process holds it.
    fn hold_in_memory(&self, id: i64) -> Option<DeliveryHold> {
        let taken = lock(&self.held).insert(id);
        taken.then(|| DeliveryHold::new(id, MemoryHold { held: Arc::clone(&self.held), id }))
    }

    /// Removes the lock file of a finished delivery (its holder calls this before it
    /// lets go).
    pub(super) fn forget(&self, id: i64) {
        if let Some(path) = self.file(id)
            && let Err(error) = std::fs::remove_file(&path)
            && error.kind() != io::ErrorKind::NotFound
        {
            tracing::debug!(%error, path = %path.display(), "could not remove a delivery's lock file");
        }
    }
}

/// What locking a file found.
enum Locked {
    /// Locked by this call.
    Held(File),
    /// Locked by someone else.
    Busy,
    /// The filesystem has no locks.
    Unsupported(io::Error),
}

/// Opens (creating it and its folder) and locks `path` without waiting.
fn lock_file(path: &Path) -> io::Result<Locked> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = OpenOptions::new().create(true).truncate(false).write(true).open(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Locked::Held(file)),
        Err(TryLockError::WouldBlock) => Ok(Locked::Busy),
        Err(TryLockError::Error(error)) if error.kind() == io::ErrorKind::Unsupported => {
            Ok(Locked::Unsupported(error))
        }
        Err(TryLockError::Error(error)) => Err(error),
    }
}
