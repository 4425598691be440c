//! The `git` program as sync runs it: in the vault's folder, deaf to variables that would
//! point it at another repository, never asking at a terminal (credentials come from git's
//! own helpers and ssh), with its messages in English and scrubbed of credentials before
//! they reach a log or an error.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::SyncError;

/// git, run in one folder.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    /// Where it runs.
    dir: PathBuf,
    /// `-c user.name=…` / `-c user.email=…` for what the person has not configured.
    identity: Vec<String>,
    /// The index file to use instead of the repository's own, when set.
    index_file: Option<PathBuf>,
    /// The device it runs on (the name of the conflict copies it makes).
    device: String,
}

impl Git {
    /// git in `dir`, committing as `device` where the person has set no name and email.
    pub(crate) fn new(dir: &Path, device: &str) -> Git {
        let mut git = Git {
            dir: dir.to_path_buf(),
            identity: Vec::new(),
            index_file: None,
            device: device.to_string(),
        };
        for (key, fallback) in
            [("user.name", format!("kb on {device}")), ("user.email", "kb@localhost".into())]
        {
            let configured = git.run(&["config", key]).is_ok_and(|value| !value.trim().is_empty());
            if !configured {
                git.identity.push("-c".into());
                git.identity.push(format!("{key}={fallback}"));
            }
        }
        git
    }

    /// The device it runs on.
    pub(crate) fn device(&self) -> &str {
        &self.device
    }

    /// The same git using `index` as its index file (a merge built apart from the
    /// repository's own index).
    pub(crate) fn with_index(&self, index: &Path) -> Git {
        Git { index_file: Some(index.to_path_buf()), ..self.clone() }
    }

    /// The command, ready for arguments.
    fn command(&self) -> Command {
        let mut command = Command::new("git");
        command
            .current_dir(&self.dir)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GCM_INTERACTIVE", "never")
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            // git's own housekeeping after a commit runs within the round that made the
            // objects, not detached into the next rounds (where it would race them).
            .args(["-c", "gc.autoDetach=false", "-c", "maintenance.autoDetach=false"])
            .args(&self.identity);
        if let Some(index) = &self.index_file {
            command.env("GIT_INDEX_FILE", index);
        }
        command
    }

    /// Runs git with `args`; its output when it succeeds.
    pub(crate) fn output(&self, args: &[&str]) -> Result<Output, SyncError> {
        let output = self.command().args(args).output().map_err(SyncError::NoGit)?;
        if output.status.success() { Ok(output) } else { Err(failed(args, &output)) }
    }

    /// Runs git with `args` (a fetch or a push), stopping it — and what it started, ssh
    /// say — when it takes longer than `limit`: a remote that takes the connection and
    /// never answers would hold the round for ever.
    pub(crate) fn output_within(
        &self,
        args: &[&str],
        limit: std::time::Duration,
    ) -> Result<Output, SyncError> {
        let mut command = self.command();
        command.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn().map_err(SyncError::NoGit)?;
        // The pipes are read as the command runs, so a full pipe never stops it.
        let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut bytes);
                }
                bytes
            })
        };
        let stdout = read(child.stdout.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
        let stderr = read(child.stderr.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
        let began = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().map_err(SyncError::NoGit)? {
                break status;
            }
            if began.elapsed() > limit {
                #[cfg(target_os = "linux")]
                if let Some(group) = rustix::process::Pid::from_raw(child.id() as i32) {
                    let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
                }
                let _ = child.kill();
                let _ = child.wait();
                return Err(SyncError::Unreachable(format!(
                    "git {} gave no answer within {} s",
                    subcommand(args),
                    limit.as_secs()
                )));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let output = Output {
            status,
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        };
        if output.status.success() { Ok(output) } else { Err(failed(args, &output)) }
    }

    /// Runs git with `args`; what it printed, as text.
    pub(crate) fn run(&self, args: &[&str]) -> Result<String, SyncError> {
        self.output(args).map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    }

    /// Runs git with `args`, giving it `input`; what it printed.
    pub(crate) fn run_with_input(&self, args: &[&str], input: &[u8]) -> Result<Vec<u8>, SyncError> {
        let mut child = self
            .command()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(SyncError::NoGit)?;
        // Written from another thread while the answer is read here: with a long input and
        // a long answer, each side would otherwise wait for the other's pipe to drain.
        let output = std::thread::scope(|scope| {
            if let Some(mut stdin) = child.stdin.take() {
                // A git that stopped reading has failed, which its status says.
                scope.spawn(move || {
                    let _ = stdin.write_all(input);
                });
            }
            child.wait_with_output()
        })
        .map_err(SyncError::NoGit)?;
        if output.status.success() { Ok(output.stdout) } else { Err(failed(args, &output)) }
    }

    /// Whether the work tree holds nothing to commit (no file changed, added or removed
    /// since the last commit), asked without writing anything: git's index is not
    /// refreshed (`GIT_OPTIONAL_LOCKS=0`).
    pub(crate) fn is_clean(&self) -> Result<bool, SyncError> {
        let args = ["status", "--porcelain", "-z", "--untracked-files=all"];
        let output =
            self.command().env("GIT_OPTIONAL_LOCKS", "0").args(args).output().map_err(SyncError::NoGit)?;
        if output.status.success() { Ok(output.stdout.is_empty()) } else { Err(failed(&args, &output)) }
    }

    /// Whether git with `args` succeeds (a question such as `merge-base --is-ancestor`).
    pub(crate) fn succeeds(&self, args: &[&str]) -> Result<bool, SyncError> {
        let status = self
            .command()
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(SyncError::NoGit)?;
        Ok(status.success())
    }

    /// The commit `name` names, when it names one.
    pub(crate) fn commit_of(&self, name: &str) -> Result<Option<String>, SyncError> {
        let spec = format!("{name}^{{commit}}");
        match self.output(&["rev-parse", "--verify", "--quiet", &spec]) {
            Ok(output) => Ok(Some(String::from_utf8_lossy(&output.stdout).trim().to_string())),
            Err(SyncError::Git { .. }) => Ok(None),
            Err(other) => Err(other),
        }
    }

    /// The bytes of the blob `oid`.
    pub(crate) fn blob(&self, oid: &str) -> Result<Vec<u8>, SyncError> {
        self.output(&["cat-file", "blob", oid]).map(|o| o.stdout)
    }

    /// The bytes of each blob of `oids`, in order, read by one `git cat-file --batch`.
    pub(crate) fn blobs(&self, oids: &[&str]) -> Result<Vec<Vec<u8>>, SyncError> {
        if oids.is_empty() {
            return Ok(Vec::new());
        }
        let input: String = oids.iter().map(|oid| format!("{oid}\n")).collect();
        let out = self.run_with_input(&["cat-file", "--batch"], input.as_bytes())?;
        let mut blobs = Vec::with_capacity(oids.len());
        let mut rest = out.as_slice();
        for oid in oids {
            // Each answer: `OID TYPE SIZE\n`, the bytes, `\n`.
            let header_end = rest.iter().position(|b| *b == b'\n').ok_or_else(|| short(oid))?;
            let header = String::from_utf8_lossy(&rest[..header_end]).into_owned();
            let size: usize =
                header.rsplit(' ').next().and_then(|s| s.parse().ok()).ok_or_else(|| short(oid))?;
            let start = header_end + 1;
            let bytes = rest.get(start..start + size).ok_or_else(|| short(oid))?;
            blobs.push(bytes.to_vec());
            rest = rest.get(start + size + 1..).unwrap_or_default();
        }
        Ok(blobs)
    }

    /// Stores `bytes` as a blob; its id.
    pub(crate) fn store_blob(&self, bytes: &[u8]) -> Result<String, SyncError> {
        let out = self.run_with_input(&["hash-object", "-w", "--stdin"], bytes)?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }
}

/// The error of a blob `git cat-file --batch` did not answer whole.
fn short(oid: &str) -> SyncError {
    SyncError::Git { command: "cat-file --batch".into(), message: format!("no whole answer for {oid}") }
}

/// The error of a git run that failed, its message scrubbed.
/// The git command `args` run (`fetch` of `-c gc.auto=0 fetch …`).
fn subcommand<'a>(args: &[&'a str]) -> &'a str {
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if *arg == "-c" {
            rest.next();
        } else if !arg.starts_with('-') {
            return arg;
        }
    }
    ""
}

fn failed(args: &[&str], output: &Output) -> SyncError {
    let message = String::from_utf8_lossy(&output.stderr);
    SyncError::Git { command: scrub(&args.join(" ")), message: scrub(message.trim()) }
}

/// `text` with the credentials of any URL in it (`https://user:secret@host`) replaced by
/// `***`.
pub fn scrub(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        // Credentials end at the last `@` before a space or quote (a password may hold a `/`).
        let end = after.find(|c: char| c.is_whitespace() || c == '\'' || c == '"').unwrap_or(after.len());
        match after[..end].rfind('@') {
            Some(credentials_end) => {
                out.push_str("***");
                rest = &after[credentials_end..];
            }
            None => rest = after,
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::scrub;

    #[test]
    fn credentials_in_urls_are_scrubbed() {
        assert_eq!(
            scrub("fatal: unable to access 'https://me:s3cret@example.com/v.git/': 403"),
            "fatal: unable to access 'https://***@example.com/v.git/': 403"
        );
        assert_eq!(
            scrub("push https://tok@host/x and ssh://git@h/y"),
            "push https://***@host/x and ssh://***@h/y"
        );
        assert_eq!(scrub("/srv/vault.git: not found"), "/srv/vault.git: not found");
    }
}
