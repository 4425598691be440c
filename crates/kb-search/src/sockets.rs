//! Where a kb process that serves other kb processes of the same vault listens: a Unix
//! socket beside the state it serves (in `.kb/`), or, when that path is too long for a
//! socket or the filesystem there has none, in a private folder of this user. The index's
//! owner answers on one (see [`crate::TantivyIndex`]); `kb serve` answers kb's HTTP API on another,
//! so a command beside it is answered at once.

use std::io;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

/// Unix socket paths longer than this do not fit the system's limit (108 bytes on Linux,
/// 104 on macOS): such a socket lives in a private folder of this user instead.
const MAX_SOCKET_PATH: usize = 100;
/// The private folder made for sockets in `$XDG_RUNTIME_DIR`.
const RUNTIME_FOLDER: &str = "kb";

/// A place where a kb process may answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketPlace {
    /// The socket's path.
    pub path: PathBuf,
    /// The private folder of this user holding the socket, checked before each use (and
    /// made by the listener when missing); `None` for a socket beside what it serves.
    pub private: Option<PathBuf>,
}

impl SocketPlace {
    /// Whether a client may use this place: a socket in a private folder is used only
    /// while the folder is this user's own and closed to others.
    pub fn usable(&self) -> bool {
        match &self.private {
            None => true,
            Some(folder) => match check_private(folder) {
                Ok(()) => true,
                Err(error) => {
                    if error.kind() != io::ErrorKind::NotFound {
                        tracing::debug!(%error, "skipping a place of a kb socket");
                    }
                    false
                }
            },
        }
    }

    /// Listens here, first making a private folder that is missing and removing a socket
    /// a process that is gone left at this path.
    pub fn bind(&self) -> io::Result<UnixListener> {
        if let Some(folder) = &self.private {
            make_private(folder)?;
        }
        match std::fs::remove_file(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        UnixListener::bind(&self.path)
    }

    /// [`SocketPlace::bind`], the socket usable by this user alone (mode 0600) from the
    /// moment it has its name: it is made under a temporary name, closed to others, then
    /// renamed into place, so no other user can connect in between, whatever the umask.
    pub fn bind_owner_only(&self) -> io::Result<UnixListener> {
        if let Some(folder) = &self.private {
            make_private(folder)?;
        }
        let name = self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let temporary = self.path.with_file_name(format!(".{name}.{}", std::process::id()));
        match std::fs::remove_file(&temporary) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let listener = UnixListener::bind(&temporary)?;
        let placed = std::fs::set_permissions(&temporary, std::fs::Permissions::from_mode(0o600))
            .and_then(|()| std::fs::rename(&temporary, &self.path));
        if let Err(error) = placed {
            let _ = std::fs::remove_file(&temporary);
            return Err(error);
        }
        Ok(listener)
    }
}

/// Where a socket named `file` for the folder `dir` may be, in the order a listener tries
/// them: `dir/file`; then (for when that path is too long for a socket, or the filesystem
/// there has no sockets, as exFAT and SMB shares do not) in a private folder of this user,
/// `$XDG_RUNTIME_DIR/kb/`, else `kb-{uid}/` in the temporary folder, as
/// `{prefix}-{hash of dir}.sock`. Never directly in the temporary folder, where another
/// user could take the name first. Clients try each: processes started with and without
/// `$XDG_RUNTIME_DIR` still find one another.
pub fn socket_places(dir: &Path, file: &str, prefix: &str) -> Vec<SocketPlace> {
    places_with(dir, file, prefix, &private_folders())
}

/// This user's private folders for sockets, in the order they are tried.
fn private_folders() -> Vec<PathBuf> {
    let uid = rustix::process::getuid().as_raw();
    let mut folders = Vec::new();
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
        && runtime.is_absolute()
    {
        folders.push(runtime.join(RUNTIME_FOLDER));
    }
    // Where systemd makes `$XDG_RUNTIME_DIR`: also found by a process started without it
    // (from cron, say) while the listener has it.
    #[cfg(target_os = "linux")]
    folders.push(PathBuf::from(format!("/run/user/{uid}")).join(RUNTIME_FOLDER));
    folders.push(std::env::temp_dir().join(format!("kb-{uid}")));
    folders.dedup();
    folders
}

/// [`socket_places`] with the private folders given.
fn places_with(dir: &Path, file: &str, prefix: &str, private: &[PathBuf]) -> Vec<SocketPlace> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let name = format!("{prefix}-{:016x}.sock", path_hash(&dir));
    let beside = SocketPlace { path: dir.join(file), private: None };
    let elsewhere =
        private.iter().map(|folder| SocketPlace { path: folder.join(&name), private: Some(folder.clone()) });
    std::iter::once(beside)
        .chain(elsewhere)
        .filter(|place| place.path.as_os_str().len() <= MAX_SOCKET_PATH)
        .collect()
}

/// A hash of `path` that every build of kb computes alike (64-bit FNV-1a).
fn path_hash(path: &Path) -> u64 {
    use std::os::unix::ffi::OsStrExt as _;
    path.as_os_str()
        .as_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3))
}

/// [`check_private`], first making `folder` when it is missing (mode 0700).
fn make_private(folder: &Path) -> io::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(folder) {
        // Exactly 0700, whatever the umask.
        Ok(()) => std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700))?,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    check_private(folder)
}

/// Checks that `folder` is this user's own: a folder (not a link to one), owned by this
/// user, that no one else may read, write or enter.
fn check_private(folder: &Path) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(folder)?;
    let refused = |why: &str| {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is not used for kb's socket: {why}", folder.display()),
        ))
    };
    if !meta.file_type().is_dir() {
        return refused("it is not a folder");
    }
    if meta.uid() != rustix::process::getuid().as_raw() {
        return refused("it belongs to another user");
    }
    if meta.mode() & 0o077 != 0 {
        return refused("other users may open it (it should have mode 0700)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::FileTypeExt as _;

    use super::*;

    /// A private folder made under `base` (as kb makes `$XDG_RUNTIME_DIR/kb`).
    fn made(base: &Path) -> PathBuf {
        let folder = base.join("kb");
        make_private(&folder).unwrap();
        folder
    }

    #[test]
    fn the_socket_is_beside_or_in_a_private_folder_never_directly_in_tmp() {
        let base = tempfile::tempdir().unwrap();
        let private = [base.path().join("run/kb"), base.path().join("kb-1000")];
        let index = base.path().join("vault/.kb/index");
        std::fs::create_dir_all(&index).unwrap();
        let index = std::fs::canonicalize(&index).unwrap();
        let name = format!("kb-{:016x}.sock", path_hash(&index));
        let places = places_with(&index, "kb-owner.sock", "kb", &private);
        assert_eq!(places[0], SocketPlace { path: index.join("kb-owner.sock"), private: None });
        let elsewhere: Vec<(PathBuf, Option<PathBuf>)> =
            places[1..].iter().map(|p| (p.path.clone(), p.private.clone())).collect();
        assert_eq!(
            elsewhere,
            private.iter().map(|f| (f.join(&name), Some(f.clone()))).collect::<Vec<_>>(),
            "in each private folder, under a name made from the folder's path"
        );

        // A path too long for a socket: the private folders alone.
        let long = base.path().join("v".repeat(120)).join(".kb/index");
        let places = places_with(&long, "kb-owner.sock", "kb", &private);
        assert!(places.iter().all(|p| p.private.is_some()), "{places:?}");
        assert_eq!(places.len(), 2);

        // What kb uses outside tests: private folders, none of them the temporary folder.
        let temp = std::env::temp_dir();
        for place in socket_places(&long, "kb-owner.sock", "kb") {
            let folder = place.private.unwrap();
            assert_ne!(folder, temp);
            assert_eq!(place.path.parent(), Some(folder.as_path()));
        }
    }

    #[test]
    fn a_socket_bound_for_its_owner_only_has_mode_0600_and_answers_at_its_name() {
        let base = tempfile::tempdir().unwrap();
        let place = SocketPlace { path: base.path().join("kb-serve.sock"), private: None };
        // A socket a process that is gone left there is replaced.
        drop(UnixListener::bind(&place.path).unwrap());
        let listener = place.bind_owner_only().unwrap();
        let meta = std::fs::symlink_metadata(&place.path).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        assert!(meta.file_type().is_socket());
        let _client = std::os::unix::net::UnixStream::connect(&place.path).unwrap();
        assert!(listener.accept().is_ok(), "the listener answers at the socket's name");
        let left: Vec<_> = std::fs::read_dir(base.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["kb-serve.sock"], "no temporary name is left behind");
    }

    #[test]
    fn the_name_is_the_same_in_every_build() {
        // 64-bit FNV-1a test vectors.
        assert_eq!(path_hash(Path::new("")), 0xcbf2_9ce4_8422_2325);
        assert_eq!(path_hash(Path::new("a")), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn a_private_folder_is_made_0700_and_checked_before_use() {
        let base = tempfile::tempdir().unwrap();
        let folder = made(base.path());
        let meta = std::fs::symlink_metadata(&folder).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o700);
        assert_eq!(meta.uid(), rustix::process::getuid().as_raw());
        check_private(&folder).unwrap();
        make_private(&folder).unwrap();

        let missing = base.path().join("missing");
        assert_eq!(check_private(&missing).unwrap_err().kind(), io::ErrorKind::NotFound);

        // Others may open it: refused, made or not.
        let open = base.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        for attempt in [check_private, make_private] {
            let refused = attempt(&open).unwrap_err();
            assert_eq!(refused.kind(), io::ErrorKind::PermissionDenied);
            assert!(refused.to_string().contains("0700"), "{refused}");
        }
        let place = SocketPlace { path: open.join("kb.sock"), private: Some(open.clone()) };
        assert!(!place.usable());
        assert!(place.bind().is_err(), "never listens where others may open the socket");
        // A link to a private folder, or a file: refused.
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&folder, &link).unwrap();
        assert!(make_private(&link).unwrap_err().to_string().contains("not a folder"));
        let file = base.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert!(make_private(&file).unwrap_err().to_string().contains("not a folder"));

        // Another user's folder: refused.
        let theirs = base.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
        let mine = rustix::process::getuid().as_raw();
        let theirs = if std::os::unix::fs::chown(&theirs, Some(mine.wrapping_add(1)), None).is_ok() {
            theirs
        } else {
            // Not root: a folder of root's stands for another user's.
            PathBuf::from("/")
        };
        let refused = make_private(&theirs).unwrap_err();
        assert!(refused.to_string().contains("another user"), "{refused}");
    }
}
