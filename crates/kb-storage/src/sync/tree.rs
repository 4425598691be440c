//! Reading git trees for a merge: every file of a tree with its mode and blob, and the
//! changes between two trees (moves found as git finds renames).

use std::collections::BTreeMap;

use super::SyncError;
use super::git::Git;

/// The mode git gives a symbolic link.
pub(super) const LINK: &str = "120000";

/// One file of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct File {
    /// Its mode (`100644`, `100755`, `120000` for a link, `160000` for a submodule).
    pub(super) mode: String,
    /// Its blob.
    pub(super) oid: String,
}

/// Every file of a tree by path.
pub(super) type Files = BTreeMap<String, File>;

/// Every file of `tree` (a commit or tree id).
pub(super) fn files(git: &Git, tree: &str) -> Result<Files, SyncError> {
    let out = git.output(&["ls-tree", "-r", "-z", "--full-tree", tree])?.stdout;
    let mut files = Files::new();
    for record in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let record = String::from_utf8_lossy(record);
        let Some((meta, path)) = record.split_once('\t') else { continue };
        let mut parts = meta.split(' ');
        let (Some(mode), Some(_kind), Some(oid)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        files.insert(path.to_string(), File { mode: mode.to_string(), oid: oid.to_string() });
    }
    Ok(files)
}

/// The id of the empty tree in this repository's hash.
pub(super) fn empty_tree(git: &Git) -> Result<String, SyncError> {
    let out = git.run_with_input(&["hash-object", "-t", "tree", "--stdin"], b"")?;
    Ok(String::from_utf8_lossy(&out).trim().to_string())
}

/// A file's change from one tree to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Change {
    /// Added, or changed (the path is in the newer tree).
    Written(String),
    /// Removed.
    Removed(String),
    /// Moved (and perhaps changed).
    Moved {
        /// Where it was.
        from: String,
        /// Where it is.
        to: String,
    },
}

/// The changes from tree `from` to tree `to`, moves found as git finds renames (files at
/// least half alike).
pub(super) fn changes(git: &Git, from: &str, to: &str) -> Result<Vec<Change>, SyncError> {
    let out =
        git.output(&["diff-tree", "-r", "-z", "--no-commit-id", "--name-status", "-M", from, to])?.stdout;
    let mut fields =
        out.split(|b| *b == 0).filter(|f| !f.is_empty()).map(|f| String::from_utf8_lossy(f).into_owned());
    let mut changes = Vec::new();
    while let Some(status) = fields.next() {
        let Some(path) = fields.next() else { break };
        match status.chars().next() {
            Some('R') => {
                let Some(to) = fields.next() else { break };
                changes.push(Change::Moved { from: path, to });
            }
            Some('C') => {
                // A copy leaves its source as it was: only the new file is a change.
                let Some(to) = fields.next() else { break };
                changes.push(Change::Written(to));
            }
            Some('D') => changes.push(Change::Removed(path)),
            _ => changes.push(Change::Written(path)),
        }
    }
    Ok(changes)
}
