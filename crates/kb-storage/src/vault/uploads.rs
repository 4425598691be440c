//! [`Upload`]: a file handed to kb (an upload, `kb capture --file`, a voice note), written
//! as it arrives to `.kb/uploads/` while its SHA-256 is computed and its size checked, then
//! kept in the vault's `attachments/` folder under the name kb makes from its hash and the
//! name it was sent with ([`kb_domain::attachment_path`]). A kept file is never rewritten:
//! the same bytes sent again are the same file. An upload given up (too large, broken off,
//! dropped) leaves nothing behind.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::atomic::{sync_dir, unique_suffix};

/// The folder of uploads being received, inside `.kb/`.
const UPLOADS_DIR: &str = "uploads";

/// Why an upload was not kept.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// More bytes than the limit (`KB_UPLOAD_MAX_BYTES`).
    #[error("the file is larger than {limit} bytes (KB_UPLOAD_MAX_BYTES)")]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// The file could not be written.
    #[error("the file could not be kept: {0}")]
    Io(#[source] io::Error),
}

/// A file kb keeps in `attachments/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptFile {
    /// Its vault path (`attachments/HASH-SLUG.EXT`).
    pub path: String,
    /// Its SHA-256, in hex.
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
    /// Whether this upload put it there (`false`: the same bytes were kept already).
    pub created: bool,
}

/// A file being received; see the module's documentation.
#[derive(Debug)]
pub struct Upload {
    root: PathBuf,
    temp: PathBuf,
    file: Option<File>,
    hasher: Sha256,
    size: u64,
    limit: u64,
}

impl Upload {
    /// Starts receiving a file of at most `limit` bytes into the vault at `root`.
    pub fn start(root: &Path, limit: u64) -> Result<Upload, UploadError> {
        let dir = root.join(".kb").join(UPLOADS_DIR);
        fs::create_dir_all(&dir).map_err(UploadError::Io)?;
        sweep_abandoned(&dir);
        let temp = dir.join(format!("{}.part", unique_suffix()));
        let file = File::options().write(true).create_new(true).open(&temp).map_err(UploadError::Io)?;
        Ok(Upload { root: root.to_path_buf(), temp, file: Some(file), hasher: Sha256::new(), size: 0, limit })
    }

    /// Adds the next bytes; past the limit the upload is given up.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), UploadError> {
        if self.size + bytes.len() as u64 > self.limit {
            return Err(UploadError::TooLarge { limit: self.limit });
        }
        let file =
            self.file.as_mut().ok_or_else(|| UploadError::Io(io::Error::other("the upload is closed")))?;
        file.write_all(bytes).map_err(UploadError::Io)?;
        self.hasher.update(bytes);
        self.size += bytes.len() as u64;
        Ok(())
    }

    /// The file as received so far, flushed to disk: to read before it is kept.
    pub fn received(&mut self) -> Result<&Path, UploadError> {
        if let Some(file) = self.file.as_mut() {
            file.flush().map_err(UploadError::Io)?;
        }
        Ok(&self.temp)
    }

    /// The SHA-256 of the bytes so far, in hex.
    pub fn sha256(&self) -> String {
        hex(&self.hasher.clone().finalize())
    }

    /// How many bytes were received.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Keeps the file, sent as `sent_name`, in `attachments/`: flushed to disk first; when
    /// a file of the same bytes and name is there already, that one is kept.
    pub fn keep(mut self, sent_name: &str) -> Result<KeptFile, UploadError> {
        let sha256 = self.sha256();
        let path = kb_domain::attachment_path(&sha256, sent_name);
        let target = self.root.join(&path);
        if let Some(file) = self.file.take() {
            file.sync_all().map_err(UploadError::Io)?;
        }
        let folder = target.parent().ok_or_else(|| UploadError::Io(io::Error::other("no folder")))?;
        fs::create_dir_all(folder).map_err(UploadError::Io)?;
        // The name holds the hash: a file already there has these bytes; it is not touched.
        let created = match fs::hard_link(&self.temp, &target) {
            Ok(()) => true,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => false,
            Err(_) if !target.exists() => {
                fs::rename(&self.temp, &target).map_err(UploadError::Io)?;
                true
            }
            Err(_) => false,
        };
        if created {
            sync_dir(folder).map_err(UploadError::Io)?;
        }
        Ok(KeptFile { path, sha256, size: self.size, created })
    }
}

impl Drop for Upload {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.temp);
    }
}

/// How old a `.part` file must be to count as left by a process that was killed while
/// receiving it (no upload takes a day).
const ABANDONED_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

/// Removes the `.part` files in `dir` left by processes killed while receiving them.
fn sweep_abandoned(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|at| at.elapsed().ok())
            .is_some_and(|age| age > ABANDONED_AFTER);
        if old && path.extension().is_some_and(|e| e == "part") {
            let _ = fs::remove_file(path);
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(root: &Path) -> usize {
        fs::read_dir(root.join(".kb/uploads")).map(|d| d.count()).unwrap_or(0)
    }

    #[test]
    fn a_file_is_kept_under_its_hash_and_the_same_bytes_are_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut upload = Upload::start(dir.path(), 100).unwrap();
        upload.write(b"hello ").unwrap();
        upload.write(b"world").unwrap();
        let kept = upload.keep("Greeting.TXT").unwrap();
        assert_eq!(kept.sha256, "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9");
        assert_eq!(kept.path, "attachments/b94d27b9934d3e08-greeting.txt");
        assert_eq!(fs::read(dir.path().join(&kept.path)).unwrap(), b"hello world");
        let mut again = Upload::start(dir.path(), 100).unwrap();
        again.write(b"hello world").unwrap();
        assert_eq!(again.keep("greeting.txt").unwrap().path, kept.path);
        assert_eq!(fs::read_dir(dir.path().join("attachments")).unwrap().count(), 1);
        assert_eq!(parts(dir.path()), 0, "no part file is left");
    }

    #[test]
    fn an_upload_over_the_limit_or_dropped_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut upload = Upload::start(dir.path(), 8).unwrap();
        upload.write(b"12345").unwrap();
        assert!(matches!(upload.write(b"6789"), Err(UploadError::TooLarge { limit: 8 })));
        drop(upload);
        assert_eq!(parts(dir.path()), 0);
        assert!(!dir.path().join("attachments").exists());
    }

    #[test]
    fn parts_left_by_a_killed_process_go_at_the_next_upload() {
        let dir = tempfile::tempdir().unwrap();
        let uploads = dir.path().join(".kb").join(UPLOADS_DIR);
        fs::create_dir_all(&uploads).unwrap();
        let (old, fresh) = (uploads.join("old.part"), uploads.join("fresh.part"));
        fs::write(&old, b"half").unwrap();
        fs::write(&fresh, b"half").unwrap();
        let long_ago = std::time::SystemTime::now() - ABANDONED_AFTER * 2;
        File::options().write(true).open(&old).unwrap().set_modified(long_ago).unwrap();
        let upload = Upload::start(dir.path(), 8).unwrap();
        assert!(!old.exists(), "a day-old part is swept");
        assert!(fresh.exists(), "another process's upload under way is left alone");
        drop(upload);
    }
}
