//! [`GitCommits`]: a [`RevisionLog`] that forwards every call to the real one and, after each
//! change kb records, commits that change to the git work tree the vault is in
//! (`KB_GIT=commit`). Only the paths kb changed are staged and committed (`git commit --
//! paths` commits those paths alone), so a person's other edits, staged or not, stay as
//! they were. A git failure after the change is logged, never fails the change; changes
//! noticed from outside (`observe`) are not committed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use kb_domain::{
    ChangeContext, ContentHash, EntryPath, FileChange, HistoryError, ObservedFile, Revision, RevisionLog,
    UndoScope,
};

/// Why the vault cannot be committed to git.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    /// No `git` program could be run.
    #[error("KB_GIT=commit needs git, and git could not be run: {0}")]
    Missing(String),
    /// The vault's folder is not inside a git work tree.
    #[error("KB_GIT=commit needs the vault to be in a git work tree, and {} is not in one", .0.display())]
    NotAWorkTree(PathBuf),
}

/// Revision history that also commits each change kb makes to git (see the module doc).
pub struct GitCommits {
    inner: Arc<dyn RevisionLog>,
    root: PathBuf,
    /// `-c user.name=kb` / `-c user.email=kb@localhost` for what the person has not
    /// configured (their configuration is never changed).
    identity: Vec<String>,
}

impl std::fmt::Debug for GitCommits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitCommits").field("root", &self.root).finish_non_exhaustive()
    }
}

impl GitCommits {
    /// Checks that git runs and that `root` (the vault's folder, which must exist) is
    /// inside a git work tree.
    pub fn check(root: &Path) -> Result<(), GitError> {
        let output = git(root).args(["rev-parse", "--is-inside-work-tree"]).output();
        match output {
            Err(error) => Err(GitError::Missing(error.to_string())),
            Ok(output)
                if output.status.success() && String::from_utf8_lossy(&output.stdout).trim() == "true" =>
            {
                Ok(())
            }
            Ok(_) => Err(GitError::NotAWorkTree(root.to_path_buf())),
        }
    }

    /// Wraps `inner`, committing the changes of the vault at `root` (checked first, see
    /// [`GitCommits::check`]).
    pub fn new(inner: Arc<dyn RevisionLog>, root: impl Into<PathBuf>) -> Result<GitCommits, GitError> {
        let root = root.into();
        GitCommits::check(&root)?;
        let mut identity = Vec::new();
        for (key, fallback) in [("user.name", "kb"), ("user.email", "kb@localhost")] {
            let configured = git(&root)
                .args(["config", key])
                .output()
                .is_ok_and(|o| o.status.success() && !String::from_utf8_lossy(&o.stdout).trim().is_empty());
            if !configured {
                identity.push("-c".to_string());
                identity.push(format!("{key}={fallback}"));
            }
        }
        Ok(GitCommits { inner, root, identity })
    }

    /// Commits the files of one recorded operation; a failure is logged.
    fn commit(&self, by: &ChangeContext, revisions: &[Revision]) {
        let mut paths: Vec<String> = Vec::new();
        for revision in revisions {
            for path in [&revision.path_before, &revision.path_after].into_iter().flatten() {
                let path = path.to_string();
                if !paths.contains(&path) {
                    paths.push(path);
                }
            }
        }
        if paths.is_empty() {
            return;
        }
        if let Err(error) = self.try_commit(&message(by, revisions), &paths) {
            tracing::warn!(%error, paths = ?paths, "the change is made, but could not be committed to git");
        }
    }

    fn try_commit(&self, message: &str, paths: &[String]) -> Result<(), String> {
        // A path that is neither on disk nor known to git (a file created and removed while
        // commits failed) is nothing to commit, and git refuses a pathspec matching nothing.
        let tracked = run(git(&self.root).args(["ls-files", "-z", "--"]).args(paths))?;
        let tracked: Vec<&[u8]> = tracked.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()).collect();
        let paths: Vec<&String> =
            paths.iter().filter(|p| self.root.join(p).exists() || tracked.contains(&p.as_bytes())).collect();
        if paths.is_empty() {
            return Ok(());
        }
        run(git(&self.root).args(["add", "-A", "--"]).args(&paths))?;
        let changed =
            run(git(&self.root).args(["diff", "--cached", "--name-only", "-z", "--"]).args(&paths))?;
        if changed.stdout.is_empty() {
            // Already as committed (the bytes went back to what HEAD has).
            return Ok(());
        }
        run(git(&self.root)
            .args(&self.identity)
            .args(["commit", "--quiet", "--no-verify", "-m", message, "--"])
            .args(&paths))?;
        Ok(())
    }
}

/// The commit message: the tool (or the source) and what changed, naming the entry.
fn message(by: &ChangeContext, revisions: &[Revision]) -> String {
    let who = by.tool.clone().unwrap_or_else(|| by.source.as_str().to_string());
    let Some(first) = revisions.first() else { return who };
    let mut subject = format!("{who}: {}", first.description);
    if let Some(path) = first.last_path().map(ToString::to_string)
        && !first.description.contains(&path)
    {
        subject.push_str(&format!(" ({path})"));
    }
    if revisions.len() > 1 {
        subject.push('\n');
        for revision in revisions {
            subject.push_str(&format!("\n- {}", revision.description));
        }
    }
    // A synced vault's commits say which device made them, whoever the git author is.
    if let Some(device) = first.device.as_deref().filter(|d| !d.contains('\n')) {
        subject.push_str(&format!("\n\n{DEVICE_TRAILER}: {device}"));
    }
    subject
}

/// The commit trailer naming the device a change was made on.
pub(crate) const DEVICE_TRAILER: &str = "Kb-Device";

/// `git` run in `dir`, deaf to variables that would point it at another repository.
fn git(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(std::process::Stdio::null());
    command
}

fn run(command: &mut Command) -> Result<Output, String> {
    let output = command.output().map_err(|e| format!("cannot run git: {e}"))?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(format!("{:?} failed: {}", command, String::from_utf8_lossy(&output.stderr).trim()))
    }
}

impl RevisionLog for GitCommits {
    fn record(
        &self,
        at: DateTime<Utc>,
        by: &ChangeContext,
        reverts: Option<i64>,
        changes: Vec<FileChange>,
    ) -> Result<Vec<Revision>, HistoryError> {
        self.inner.record(at, by, reverts, changes)
    }

    fn written(&self, by: &ChangeContext, revisions: &[Revision]) {
        self.commit(by, revisions);
    }

    fn retract(&self, revisions: &[Revision]) -> Result<(), HistoryError> {
        self.inner.retract(revisions)
    }

    fn observe(&self, at: DateTime<Utc>, files: Vec<ObservedFile>) -> Result<Vec<Revision>, HistoryError> {
        self.inner.observe(at, files)
    }

    fn heads(&self) -> Result<Vec<(EntryPath, ContentHash)>, HistoryError> {
        self.inner.heads()
    }

    fn history(&self, path: &EntryPath, entry_id: Option<&str>) -> Result<Vec<Revision>, HistoryError> {
        self.inner.history(path, entry_id)
    }

    fn last_path_of(&self, entry_id: &str) -> Result<Option<EntryPath>, HistoryError> {
        self.inner.last_path_of(entry_id)
    }

    fn entry_of_revision(&self, id: i64) -> Result<Option<String>, HistoryError> {
        self.inner.entry_of_revision(id)
    }

    fn revision(&self, id: i64) -> Result<Option<Revision>, HistoryError> {
        self.inner.revision(id)
    }

    fn content(&self, hash: &ContentHash) -> Result<Option<Vec<u8>>, HistoryError> {
        self.inner.content(hash)
    }

    fn last_undoable(&self, scope: &UndoScope) -> Result<Vec<Revision>, HistoryError> {
        self.inner.last_undoable(scope)
    }
}
