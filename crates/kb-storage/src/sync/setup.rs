//! Setting a vault up for sync: the remote's URL checked, the vault made a repository of
//! its own, the remote named, and the list of what does not travel written to the
//! repository's own exclude file (`.git/info/exclude`, which never travels either).

use std::path::Path;

use super::git::Git;
use super::{SyncError, SyncSettings};

/// The name of the remote kb syncs with, beside any the person has.
pub const REMOTE_NAME: &str = "kb-sync";

/// The branch a repository kb makes starts on.
const NEW_BRANCH: &str = "main";

/// The lines that open and close kb's part of the exclude file.
const BEGIN: &str = "# kb sync: what does not travel (rewritten by kb)";
const END: &str = "# kb sync: end";

/// Refuses a remote URL that holds a password (`https://user:secret@host/…`), and an
/// HTTP URL with any user name (`https://TOKEN@host/…` is how a token is usually pasted,
/// and git would write it to `.git/config`): credentials come from git's own helpers and
/// ssh, never from kb's settings. An ssh user (`ssh://git@host/…`) is no secret.
pub fn check_remote(remote: &str) -> Result<(), SyncError> {
    // `https:/TOKEN@host` (one slash) is no URL git reads as https, but a token all the same.
    if remote.to_ascii_lowercase().starts_with("http") && !remote.contains("://") && remote.contains('@') {
        return Err(SyncError::PasswordInUrl("an http URL with one slash".to_string()));
    }
    if let Some(at) = remote.find("://") {
        let scheme = &remote[..at];
        let after = &remote[at + 3..];
        let http = scheme.to_ascii_lowercase().contains("http");
        // Whatever a password holds (a `/`, a space), it ends at the URL's last `@`; a user
        // name ends the host's part, before the path (which may hold an `@` of its own).
        let password = after.rfind('@').is_some_and(|end| after[..end].contains(':'));
        let user = http && after.split('/').next().is_some_and(|authority| authority.contains('@'));
        if password || user {
            return Err(SyncError::PasswordInUrl(format!("{scheme}://***@…")));
        }
        // A token in the query (`?access_token=…`) is a password too.
        if http && after.contains('?') {
            return Err(SyncError::PasswordInUrl(format!("{scheme}://…?***")));
        }
    }
    Ok(())
}

/// Makes sure `root` is the root of a repository, making one when it is in none; the
/// branch it is on.
pub(super) fn repository(root: &Path) -> Result<String, SyncError> {
    let git = Git::new(root, "setup");
    let top = git.output(&["rev-parse", "--show-toplevel"]);
    match top {
        Ok(output) => {
            let top = String::from_utf8_lossy(&output.stdout).trim().to_string();
            let same = std::fs::canonicalize(&top).ok() == std::fs::canonicalize(root).ok();
            if !same {
                return Err(SyncError::InsideAnotherRepository {
                    vault: root.to_path_buf(),
                    repository: top.into(),
                });
            }
        }
        Err(SyncError::Git { .. }) => {
            git.run(&["init", "--quiet", "--initial-branch", NEW_BRANCH])?;
        }
        Err(other) => return Err(other),
    }
    let branch = git.run(&["symbolic-ref", "--short", "HEAD"])?;
    Ok(branch.trim().to_string())
}

/// Points the remote [`REMOTE_NAME`] at `url`.
pub(super) fn remote(git: &Git, url: &str) -> Result<(), SyncError> {
    match git.run(&["remote", "get-url", REMOTE_NAME]) {
        Ok(current) if current.trim() == url => Ok(()),
        Ok(_) => git.run(&["remote", "set-url", REMOTE_NAME, url]).map(drop),
        Err(SyncError::Git { .. }) => git.run(&["remote", "add", REMOTE_NAME, url]).map(drop),
        Err(other) => Err(other),
    }
}

/// Writes what does not travel into the repository's exclude file (keeping the person's
/// own lines there), and stops tracking anything already tracked that should not travel.
pub(super) fn exclude(root: &Path, git: &Git, settings: &SyncSettings) -> Result<(), SyncError> {
    let mut patterns = vec!["/.kb/".to_string(), "/.obsidian/workspace*".to_string()];
    if let Some(name) = settings.entry_list.as_ref().and_then(|file| file.strip_prefix(root).ok()) {
        patterns.push(format!("/{}", name.to_string_lossy()));
    }
    // `.kbignore` is read as `.gitignore` patterns, as git reads these.
    if let Ok(text) = std::fs::read_to_string(root.join(".kbignore")) {
        patterns.extend(
            text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(String::from),
        );
    }
    patterns.extend(settings.exclude.iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()));
    let git_dir = git.run(&["rev-parse", "--git-dir"])?;
    let file = root.join(git_dir.trim()).join("info").join("exclude");
    let old = std::fs::read_to_string(&file).unwrap_or_default();
    let mut kept: Vec<&str> = Vec::new();
    let mut inside = false;
    for line in old.lines() {
        match line {
            BEGIN => inside = true,
            END => inside = false,
            _ if !inside => kept.push(line),
            _ => {}
        }
    }
    let mut text: String = kept.iter().map(|l| format!("{l}\n")).collect();
    text.push_str(&format!("{BEGIN}\n"));
    patterns.iter().for_each(|p| text.push_str(&format!("{p}\n")));
    text.push_str(&format!("{END}\n"));
    if text != old {
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| SyncError::io(parent, e))?;
        }
        std::fs::write(&file, text).map_err(|e| SyncError::io(&file, e))?;
    }
    // Files tracked before that are now left out are not taken out of the repository by
    // kb: every other device would then delete its copy. A warning says so.
    let tracked = git.output(&["ls-files", "-z", "--cached", "--ignored", "--exclude-standard"])?.stdout;
    let tracked: Vec<String> = tracked
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    let tracked: Vec<&String> = tracked.iter().filter(|p| !p.starts_with(".kb/")).collect();
    if !tracked.is_empty() {
        tracing::warn!(
            paths = ?tracked,
            "these files are left out of sync but were synced before, so they still travel; `git rm --cached PATH` \
             in the vault stops that (and removes them from the other devices)"
        );
    }
    // kb's own state never travels, even when an earlier tool committed it (asked first:
    // taking it out writes the index, which a person's git command may be using).
    if !git.run(&["ls-files", "--", ".kb"])?.trim().is_empty() {
        git.run(&["rm", "--cached", "--quiet", "-r", "--ignore-unmatch", "--", ".kb"])?;
    }
    Ok(())
}
