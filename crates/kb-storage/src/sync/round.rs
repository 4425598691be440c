//! One round of sync: commit what changed here, fetch, merge, push — again from the fetch
//! when the push is refused because the remote moved meanwhile.
//!
//! The round holds the sync lock throughout, and the vault's write lock (the one every
//! change to an entry holds) from the commit of outside edits to the merged files written,
//! so no kb change lands in between; the network is used outside it.

use chrono::Utc;
use serde::Serialize;

use super::apply::{apply, finish};
use super::merge::Merge;
use super::state::Kept;
use super::tree::{self, LINK};
use super::{GitSync, REMOTE_NAME, SyncError};
use crate::vault::presence::WriteLock;

/// How many times a round fetches and merges again after its push was refused.
const ATTEMPTS: usize = 5;

/// A note two devices changed in ways that do not merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Conflict {
    /// The note, which keeps the remote's version (or, when `copy_holds_what_came`, the
    /// version saved here while the round wrote it).
    pub path: String,
    /// The copy holding the other version: this device's, or what came.
    pub copy: String,
    /// Whether the copy holds what came (the note was saved here while the round wrote
    /// it, and stays as saved).
    pub copy_holds_what_came: bool,
}

impl Conflict {
    /// The conflict of a note saved here while a round wrote it (`note`, as saved) and
    /// what came (in `copy`).
    fn beside((note, copy): (String, String)) -> Conflict {
        Conflict { path: note, copy, copy_holds_what_came: true }
    }
}

/// What a round did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoundReport {
    /// Files of the vault written or removed by what came from the remote.
    pub came: Vec<String>,
    /// Files whose changes went to the remote.
    pub went: Vec<String>,
    /// The conflicts this round met.
    pub conflicts: Vec<Conflict>,
    /// Files changed outside kb, committed by this round.
    pub outside_edits: usize,
}

impl GitSync {
    /// Syncs now (see the module doc); `Busy` when another process is syncing.
    pub fn round(&self) -> Result<RoundReport, SyncError> {
        let _lock = self.try_lock()?;
        let result = self.round_locked();
        let state_dir = self.state_dir();
        let mut kept = Kept::read(&state_dir);
        match &result {
            Ok(_) => {
                kept.last_sync = Some(Utc::now());
                kept.last_error = None;
            }
            Err(error) => kept.last_error = Some(error.to_string()),
        }
        // The round's own answer matters more than a state file that cannot be saved.
        if let Err(error) = kept.save(&state_dir) {
            tracing::warn!(%error, "the sync state cannot be saved");
        }
        result
    }

    fn round_locked(&self) -> Result<RoundReport, SyncError> {
        let mut report = RoundReport::default();
        let kb_dir = self.root.join(".kb");
        std::fs::create_dir_all(&kb_dir).map_err(|e| SyncError::io(&kb_dir, e))?;
        let writes = WriteLock::open(&kb_dir).map_err(|e| SyncError::io(&kb_dir, e))?;
        {
            let _writing = writes.hold();
            let finished = finish(&self.git, &self.root, &self.state_dir())?;
            report.came.extend(finished.written);
            report.conflicts.extend(finished.kept_beside.into_iter().map(Conflict::beside));
            report.outside_edits = self.commit_outside_edits()?;
        }
        // The remote is pointed at the URL set only by a round: `kb sync status` writes
        // nothing.
        super::setup::remote(&self.git, &self.settings.remote)?;
        let mut refused = String::new();
        for attempt in 0..ATTEMPTS {
            if attempt > 0 {
                // Devices that met at the remote would meet again at once: each waits a
                // little longer, by a little more or less.
                let jitter = std::time::SystemTime::UNIX_EPOCH
                    .elapsed()
                    .map_or(0, |d| u64::from(d.subsec_millis()) % 200);
                std::thread::sleep(std::time::Duration::from_millis(200 * attempt as u64 + jitter));
            }
            let remote = self.fetch()?;
            let mut kept = Kept::read(&self.state_dir());
            if let (Some(last), Some(remote)) = (&kept.last_remote, &remote)
                && last != remote
                && !self.git.succeeds(&["merge-base", "--is-ancestor", last, remote])?
            {
                return Err(SyncError::RewrittenRemote { last: last.clone() });
            }
            // A tree checked when it came is not checked again.
            if let Some(remote) = remote.as_ref().filter(|r| kept.last_remote.as_ref() != Some(*r)) {
                self.check_tree(remote)?;
            }
            {
                // An edit made outside kb while the fetch ran is not overwritten: the merge
                // refuses to write over it, and the next round commits it.
                let _writing = writes.hold();
                let (came, conflicts) = self.merge(remote.as_deref())?;
                // A copy the merge made is told as a conflict, not as a file that came.
                report
                    .came
                    .extend(came.into_iter().filter(|path| !conflicts.iter().any(|c| &c.copy == path)));
                report.conflicts.extend(conflicts);
            }
            if let Some(remote) = &remote {
                kept.last_remote = Some(remote.clone());
                kept.save(&self.state_dir())?;
            }
            let Some(head) = self.git.commit_of("HEAD")? else { return Ok(report) };
            if remote.as_deref() == Some(head.as_str()) {
                return Ok(report);
            }
            super::pause_for_tests("push");
            match self.push()? {
                None => {
                    report.went = self.files_between(remote.as_deref(), &head)?;
                    kept.last_remote = Some(head);
                    kept.save(&self.state_dir())?;
                    return Ok(report);
                }
                Some(why) => refused = why,
            }
            tracing::info!("the remote moved while syncing; fetching again");
        }
        Err(SyncError::Unreachable(format!(
            "the remote kept moving: {ATTEMPTS} pushes were refused (the last: {refused})"
        )))
    }

    /// Commits every change of the vault's files not committed yet (made outside kb, or
    /// by kb without `KB_GIT=commit`); how many files.
    fn commit_outside_edits(&self) -> Result<usize, SyncError> {
        // Most rounds find nothing: one question, and nothing written.
        if self.git.is_clean()? {
            return Ok(0);
        }
        // A repository inside the vault would go in as a submodule (or stop `git add`
        // when it has no commit yet): it is left out.
        let nested = self.nested_repositories();
        let mut args = vec!["add".to_string(), "--all".to_string(), "--".to_string(), ".".to_string()];
        args.extend(nested.iter().map(|path| format!(":(exclude,literal){path}")));
        if !nested.is_empty() {
            tracing::warn!(paths = ?nested, "not synced: a git repository inside the vault");
        }
        self.git.run(&args.iter().map(String::as_str).collect::<Vec<_>>())?;
        self.unstage_what_would_be_refused()?;
        let staged = self.git.output(&["diff", "--cached", "--name-only", "-z"])?.stdout;
        let count = staged.split(|b| *b == 0).filter(|p| !p.is_empty()).count();
        if count > 0 {
            let device = &self.settings.device;
            let message =
                format!("Outside edits, noticed on {device}\n\n{}: {device}", crate::history::DEVICE_TRAILER);
            self.git.run(&["commit", "--quiet", "--no-verify", "-m", &message])?;
        }
        Ok(count)
    }

    /// The folders of the vault that are repositories of their own (vault-relative).
    fn nested_repositories(&self) -> Vec<String> {
        walkdir::WalkDir::new(&self.root)
            .min_depth(1)
            .into_iter()
            .filter_entry(|e| !(e.depth() == 1 && (e.file_name() == ".git" || e.file_name() == ".kb")))
            .filter_map(Result::ok)
            .filter(|e| e.file_name() == ".git")
            .filter_map(|e| {
                e.path().parent()?.strip_prefix(&self.root).ok().map(|p| p.to_string_lossy().into_owned())
            })
            .collect()
    }

    /// Takes back from the commit what every device (this one too) would refuse to merge:
    /// a repository inside the vault (a submodule to git) and links that lead outside it.
    /// They stay on this device's disk, and a warning names them.
    fn unstage_what_would_be_refused(&self) -> Result<(), SyncError> {
        let staged = self.git.output(&["ls-files", "--stage", "-z"])?.stdout;
        let mut links = std::collections::HashSet::new();
        let mut entries = Vec::new();
        for record in staged.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let record = String::from_utf8_lossy(record).into_owned();
            let Some((meta, path)) = record.split_once('\t') else { continue };
            let mode = meta.split(' ').next().unwrap_or_default().to_string();
            if mode == LINK {
                links.insert(path.to_string());
            }
            entries.push((mode, path.to_string()));
        }
        let mut refused = Vec::new();
        for (mode, path) in entries {
            let out = match mode.as_str() {
                "160000" => true,
                LINK => std::fs::read_link(self.root.join(&path))
                    .map_or(true, |target| link_refusal(&path, &target.to_string_lossy(), &links).is_some()),
                _ => false,
            };
            if out {
                refused.push(path);
            }
        }
        if !refused.is_empty() {
            tracing::warn!(paths = ?refused, "not synced: a repository inside the vault, or a link leading out of it");
            let mut args = vec!["rm", "--cached", "--quiet", "-r", "--ignore-unmatch", "--"];
            args.extend(refused.iter().map(String::as_str));
            self.git.run(&args)?;
        }
        // A file another device wrote where this one has a link on the way (never written
        // through it) is missing here, not deleted: the repository keeps it for the others.
        let deleted = self.git.output(&["diff", "--cached", "--name-only", "--diff-filter=D", "-z"])?.stdout;
        let kept: Vec<String> = deleted
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .filter(|path| !super::apply::stays_in_vault(&self.root, path))
            .collect();
        if !kept.is_empty() {
            tracing::warn!(paths = ?kept, "not here: a link on this disk stands where the vault has these files; they stay in the vault for the other devices");
            let mut args = vec!["reset", "--quiet", "HEAD", "--"];
            args.extend(kept.iter().map(String::as_str));
            self.git.run(&args)?;
        }
        Ok(())
    }

    /// Fetches the remote's branches; the commit of the one synced with
    /// ([`GitSync::remote_branch`]), `None` when the remote has none yet.
    pub(super) fn fetch(&self) -> Result<Option<String>, SyncError> {
        let refspec = format!("+refs/heads/*:refs/remotes/{REMOTE_NAME}/*");
        // No housekeeping on the way (`gc --auto` would repack, writing in an idle round).
        let args =
            ["-c", "gc.auto=0", "-c", "maintenance.auto=false", "fetch", "--quiet", "--no-tags", "--prune"];
        let args = [&args[..], &["--no-write-fetch-head", REMOTE_NAME, &refspec]].concat();
        match self.git.output_within(&args, self.settings.timeout) {
            Ok(_) => match self.remote_branch()? {
                Some(branch) => self.git.commit_of(&format!("refs/remotes/{REMOTE_NAME}/{branch}")),
                // An empty remote: it receives the vault.
                None => Ok(None),
            },
            Err(SyncError::Git { message, .. }) => Err(SyncError::Unreachable(message)),
            Err(other) => Err(other),
        }
    }

    /// The remote's branch this device syncs with, as last fetched: the one named as this
    /// device's, else `main`, else `master`, else the first there is (so a vault that was a
    /// repository on `master` joins a remote on `main`); `None` for an empty remote.
    pub(super) fn remote_branch(&self) -> Result<Option<String>, SyncError> {
        let prefix = format!("refs/remotes/{REMOTE_NAME}/");
        let listed = self.git.run(&["for-each-ref", "--format=%(refname)", &prefix])?;
        let branches: Vec<&str> =
            listed.lines().filter_map(|r| r.strip_prefix(&prefix)).filter(|b| *b != "HEAD").collect();
        let chosen = [self.branch.as_str(), "main", "master"]
            .into_iter()
            .find(|b| branches.contains(b))
            .or_else(|| branches.first().copied());
        Ok(chosen.map(str::to_string))
    }

    /// Pushes to the remote's branch (this device's branch's name on an empty remote):
    /// git's reason when the remote refused it for having moved (or being pushed to).
    fn push(&self) -> Result<Option<String>, SyncError> {
        let branch = self.remote_branch()?.unwrap_or_else(|| self.branch.clone());
        let refspec = format!("HEAD:refs/heads/{branch}");
        match self
            .git
            .output_within(&["push", "--quiet", "--no-verify", REMOTE_NAME, &refspec], self.settings.timeout)
        {
            Ok(_) => Ok(None),
            // Refused for having moved, or pushed to by another device at the same moment
            // (the remote could not take the branch's lock): fetched and merged again.
            Err(SyncError::Git { message, .. })
                if message.contains("[rejected]")
                    || message.contains("non-fast-forward")
                    || message.contains("fetch first")
                    || message.contains("cannot lock ref")
                    || message.contains("failed to update ref") =>
            {
                let reason =
                    message.lines().find(|line| line.contains("cannot lock") || line.contains("rejected"));
                Ok(Some(reason.or_else(|| message.lines().next()).unwrap_or_default().trim().to_string()))
            }
            Err(SyncError::Git { message, .. }) => Err(SyncError::Unreachable(message)),
            Err(other) => Err(other),
        }
    }

    /// Merges `remote` into the branch and writes the result to the vault's files; the
    /// files written and the conflicts met.
    fn merge(&self, remote: Option<&str>) -> Result<(Vec<String>, Vec<Conflict>), SyncError> {
        let Some(remote) = remote else { return Ok((Vec::new(), Vec::new())) };
        let Some(local) = self.git.commit_of("HEAD")? else {
            // Nothing here yet: the remote's files, as they are.
            let empty = tree::empty_tree(&self.git)?;
            let applied = apply(&self.git, &self.root, &self.state_dir(), &empty, remote)?;
            return Ok((applied.written, applied.kept_beside.into_iter().map(Conflict::beside).collect()));
        };
        if local == remote || self.git.succeeds(&["merge-base", "--is-ancestor", remote, &local])? {
            return Ok((Vec::new(), Vec::new()));
        }
        if self.git.succeeds(&["merge-base", "--is-ancestor", &local, remote])? {
            let applied = apply(&self.git, &self.root, &self.state_dir(), &local, remote)?;
            return Ok((applied.written, applied.kept_beside.into_iter().map(Conflict::beside).collect()));
        }
        let base = match self.git.output(&["merge-base", &local, remote]) {
            Ok(out) => String::from_utf8_lossy(&out.stdout).trim().to_string(),
            // Two histories never joined (a vault and a remote that both had notes).
            Err(SyncError::Git { .. }) => tree::empty_tree(&self.git)?,
            Err(other) => return Err(other),
        };
        let merged = Merge {
            git: &self.git,
            base,
            local: local.clone(),
            remote: remote.to_string(),
            device: &self.settings.device,
            now: Utc::now(),
        }
        .build()?;
        let mut message = format!("Sync: merged on {}", self.settings.device);
        for conflict in &merged.conflicts {
            message.push_str(&format!(
                "\n\nConflict: {} (this device's version in {})",
                conflict.path, conflict.copy
            ));
        }
        let commit = self
            .git
            .run(&["commit-tree", &merged.tree, "-p", &local, "-p", remote, "-m", &message])?
            .trim()
            .to_string();
        let applied = apply(&self.git, &self.root, &self.state_dir(), &local, &commit)?;
        let mut conflicts = merged.conflicts;
        conflicts.extend(applied.kept_beside.into_iter().map(Conflict::beside));
        Ok((applied.written, conflicts))
    }

    /// Refuses a pulled tree that tracks files under `.kb/` or `.git`, submodules, links
    /// that leave the vault, or paths kb would not write.
    fn check_tree(&self, commit: &str) -> Result<(), SyncError> {
        let files = tree::files(&self.git, commit)?;
        let links: std::collections::HashSet<String> =
            files.iter().filter(|(_, f)| f.mode == LINK).map(|(p, _)| p.clone()).collect();
        for (path, file) in files {
            let parts: Vec<&str> = path.split('/').collect();
            let lower = path.to_lowercase();
            if lower == ".kb" || lower.starts_with(".kb/") {
                return Err(SyncError::Refused(format!(
                    "it tracks {path}, inside .kb/, which never travels"
                )));
            }
            if parts.iter().any(|p| p.eq_ignore_ascii_case(".git") || *p == ".." || *p == "." || p.is_empty())
                || path.contains('\\')
            {
                return Err(SyncError::Refused(format!("it holds a path kb does not write: {path:?}")));
            }
            if file.mode == "160000" {
                return Err(SyncError::Refused(format!("{path} is a submodule")));
            }
            if file.mode == LINK {
                let target = String::from_utf8_lossy(&self.git.blob(&file.oid)?).into_owned();
                if let Some(why) = link_refusal(&path, &target, &links) {
                    return Err(SyncError::Refused(format!("{path} is a link to {target}, {why}")));
                }
            }
        }
        Ok(())
    }

    /// The files that differ between `from` (none: the empty tree) and `to`.
    fn files_between(&self, from: Option<&str>, to: &str) -> Result<Vec<String>, SyncError> {
        let from = match from {
            Some(from) => from.to_string(),
            None => tree::empty_tree(&self.git)?,
        };
        let out =
            self.git.output(&["diff-tree", "-r", "-z", "--no-commit-id", "--name-only", &from, to])?.stdout;
        Ok(out
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect())
    }
}

/// Why a link at `path` (vault-relative) to `target` is refused, read without following
/// other links; `None` when it points inside the vault. One that passes through a link (of
/// `links`, the vault's links) is refused, as the folder it names may be anywhere.
fn link_refusal(path: &str, target: &str, links: &std::collections::HashSet<String>) -> Option<String> {
    const OUTSIDE: &str = "outside the vault";
    if target.starts_with('/') || target.starts_with('\\') || target.contains(':') {
        return Some(OUTSIDE.to_string());
    }
    let mut depth: Vec<&str> = path.split('/').collect();
    depth.pop();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if depth.pop().is_none() {
                    return Some(OUTSIDE.to_string());
                }
            }
            other => {
                depth.push(other);
                let through = depth.join("/");
                if links.contains(&through) {
                    return Some(format!("through another link ({through}), which may lead anywhere"));
                }
            }
        }
    }
    depth
        .first()
        .filter(|first| first.eq_ignore_ascii_case(".kb") || first.eq_ignore_ascii_case(".git"))
        .map(|first| format!("into {first}, which never travels"))
}
