//! [`VaultWatcher`]: follows edits made outside kb (an editor, Obsidian, `git pull`) while
//! kb runs, so they reach the index within about a second.
//!
//! File events are debounced ([`DEBOUNCE`]), mapped to entry paths, and each path is
//! brought in line with its file ([`TantivyIndex::sync_paths`]): a file whose stamp matches
//! what is indexed — kb's own writes, already indexed by the change observer — is skipped.
//! Events that cannot be mapped to single files (a category folder renamed, the watcher
//! losing events) lead to a full [`TantivyIndex::reconcile`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kb_domain::{Category, EntryPath, VaultFiles};
use notify_debouncer_full::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, NoCache, new_debouncer_opt};

use crate::error::WatchError;
use crate::index::TantivyIndex;

/// How long events on a path settle before it is looked at.
pub const DEBOUNCE: Duration = Duration::from_millis(200);

/// Told of each entry path whose indexed entry changed because of an outside edit (so
/// kb-core can refresh the vault's cache: `EntryRepository::refresh`).
pub type OnChange = Arc<dyn Fn(&EntryPath) + Send + Sync>;

/// Watches a vault for outside edits while it lives; dropping it stops watching.
pub struct VaultWatcher {
    _debouncer: Debouncer<RecommendedWatcher, NoCache>,
    root: PathBuf,
}

impl std::fmt::Debug for VaultWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VaultWatcher").field("root", &self.root).finish()
    }
}

impl VaultWatcher {
    /// Starts watching the vault of `index` recursively.
    pub fn start(index: Arc<TantivyIndex>, on_change: Option<OnChange>) -> Result<VaultWatcher, WatchError> {
        let root = index.vault_root().to_path_buf();
        let handler = move |result: DebounceEventResult| {
            handle(&index, on_change.as_ref(), result);
        };
        let error = |e: notify_debouncer_full::notify::Error| WatchError {
            path: root.clone(),
            reason: e.to_string(),
        };
        let mut debouncer = new_debouncer_opt::<_, RecommendedWatcher, NoCache>(
            DEBOUNCE,
            None,
            handler,
            NoCache,
            notify_debouncer_full::notify::Config::default(),
        )
        .map_err(error)?;
        // The root (for category folders made, removed or renamed) and each category
        // folder, not deeper: kb's own state in `.kb/` (the index's files change on every
        // commit), `.git/` and sub-folders hold no entries, and their events would only
        // crowd the queue.
        debouncer.watch(&root, RecursiveMode::NonRecursive).map_err(error)?;
        for category in Category::ALL {
            let folder = root.join(category.as_str());
            if folder.is_dir() {
                debouncer.watch(&folder, RecursiveMode::NonRecursive).map_err(error)?;
            }
        }
        Ok(VaultWatcher { _debouncer: debouncer, root })
    }
}

/// What a batch of events asks for.
#[derive(Debug, Default, PartialEq)]
struct Plan {
    /// Look at every file again.
    rescan: bool,
    /// Look at these files.
    paths: Vec<EntryPath>,
}

fn plan(files: &dyn VaultFiles, events: impl IntoIterator<Item = (bool, Vec<PathBuf>)>) -> Plan {
    let mut plan = Plan::default();
    for (need_rescan, paths) in events {
        plan.rescan |= need_rescan;
        for path in paths {
            if let Some(entry) = files.entry_path_of(&path) {
                if !plan.paths.contains(&entry) {
                    plan.paths.push(entry);
                }
            } else if is_folder_event(files.root(), &path) {
                plan.rescan = true;
            }
        }
    }
    plan
}

/// Whether the event is about a whole category folder (made, removed or renamed). Events
/// on the root itself are not: its listing changes whenever kb writes its index file.
fn is_folder_event(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root).is_ok_and(|rel| rel.to_str().is_some_and(|r| r.parse::<Category>().is_ok()))
}

fn handle(index: &TantivyIndex, on_change: Option<&OnChange>, result: DebounceEventResult) {
    let (events, lost) = match result {
        Ok(events) => (events, false),
        Err(errors) => {
            for error in errors {
                tracing::warn!(%error, "file watcher error");
            }
            // Events may have been lost: look at everything.
            (Vec::new(), true)
        }
    };
    let mut plan =
        plan(index.files.as_ref(), events.into_iter().map(|e| (e.event.need_rescan(), e.event.paths)));
    plan.rescan |= lost;
    let changed = if plan.rescan {
        match index.reconcile_changes(None) {
            Ok((stats, mut changed)) => {
                tracing::debug!(?stats, "vault rescanned");
                // Where another process owns the index it may have indexed these already:
                // they are news to this process all the same.
                if !index.is_owner() {
                    let told: Vec<EntryPath> =
                        plan.paths.iter().filter(|p| !changed.contains(p)).cloned().collect();
                    changed.extend(told);
                }
                changed
            }
            Err(error) => {
                tracing::error!(%error, "vault rescan failed");
                Vec::new()
            }
        }
    } else {
        match index.sync_paths(&plan.paths) {
            Ok(changed) => changed,
            Err(error) => {
                tracing::error!(%error, "search index could not follow outside edits");
                Vec::new()
            }
        }
    };
    if let Some(on_change) = on_change {
        for path in &changed {
            on_change(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_become_paths_or_a_rescan() {
        let dir = tempfile::tempdir().unwrap();
        let files = kb_storage::vault::EntryFiles::new(dir.path()).unwrap();
        let v = files.root().to_path_buf();
        let p = |s: &str| v.join(s);
        let got = plan(
            &files,
            [(false, vec![p("ideas/a.md"), p("ideas/.a.md.tmp")]), (false, vec![p("ideas/a.md")])],
        );
        assert_eq!(got, Plan { rescan: false, paths: vec![EntryPath::parse("ideas/a.md").unwrap()] });
        assert!(plan(&files, [(false, vec![p("ideas")])]).rescan);
        // The root itself changes whenever kb writes its index file: no rescan for that.
        assert!(!plan(&files, [(false, vec![v.clone()])]).rescan);
        assert!(plan(&files, [(true, vec![])]).rescan);
        assert!(!plan(&files, [(false, vec![p(".kb/index/x")])]).rescan);
        assert!(!plan(&files, [(false, vec![PathBuf::from("/elsewhere/ideas/a.md")])]).rescan);
    }
}
