//! Bringing the index in line with the vault's files: those a file watcher reports
//! ([`TantivyIndex::sync_paths`]), or every one ([`TantivyIndex::reconcile`]).

use kb_domain::{EntryPath, FileRead, SearchError, Stamp};
use tantivy::collector::DocSetCollector;
use tantivy::query::TermQuery;
use tantivy::schema::IndexRecordOption;
use tantivy::{Searcher, TantivyDocument, Term};

use super::{Change, TantivyIndex};
use crate::document::{same_stored, to_document};
use crate::error::index_error;
use crate::ingest::{Ingest, ProgressFn};
use crate::open::SyncStats;
use crate::owner::Request;

/// From this many files on, a sync reads them on several threads.
const PARALLEL_READ_FROM: usize = 64;

/// Which of the files a sync looks at are read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reread {
    /// Those whose stamp differs from what is indexed.
    Changed,
    /// Every one, even when its stamp matches (another kb process says it changed them:
    /// on a filesystem with coarse modification times a same-size edit keeps its stamp).
    All,
}

/// What a file needs from the index (see [`TantivyIndex::look_at`]).
enum Found {
    /// A change to apply.
    Change(Change),
    /// A file that is not a readable entry and was never indexed.
    Unreadable(EntryPath),
    /// Indexed as it is, by an owner before this process (see [`super::Indexed`]), yet to
    /// be reported changed.
    Unreported(EntryPath),
    /// Nothing: indexed as it is, or gone and never indexed.
    Unchanged,
}

impl TantivyIndex {
    /// Brings the index in line with the files at `paths` (as a file watcher reports
    /// them), all in one commit however many there are; returns the paths whose indexed
    /// entry changed, the files found unreadable (so the vault can count them), and those
    /// an earlier owner indexed that this process may not have seen change. Files
    /// whose stamp matches what is indexed (kb's own writes, or edits the owner's own
    /// watcher already followed) are not read again. In a process that does not own the
    /// index, the owner does this on one request, and every path asked about is returned
    /// (this process's view of them may be older than the owner's).
    pub fn sync_paths(&self, paths: &[EntryPath]) -> Result<Vec<EntryPath>, SearchError> {
        if paths.is_empty() || self.is_owner() {
            return self.sync_local(paths, Reread::Changed);
        }
        let request = Request::Sync { paths: paths.iter().map(ToString::to_string).collect(), outside: true };
        if self.forward(&request)?.is_none() {
            self.sync_local(paths, Reread::Changed)?;
        }
        Ok(paths.to_vec())
    }

    /// [`TantivyIndex::sync_paths`] with this process's writer, reading again the files
    /// `reread` says.
    pub(crate) fn sync_local(
        &self,
        paths: &[EntryPath],
        reread: Reread,
    ) -> Result<Vec<EntryPath>, SearchError> {
        let mut changes = Vec::new();
        // Not indexed, yet changed for whoever asked.
        let mut unreported = Vec::new();
        for found in self.look_at_all(paths, reread) {
            match found {
                Found::Change(change) => changes.push(change),
                Found::Unreadable(path) | Found::Unreported(path) => unreported.push(path),
                Found::Unchanged => {}
            }
        }
        let changed = changes.iter().map(|c| c.path().clone()).chain(unreported).collect();
        let applied = !changes.is_empty();
        self.apply_local(changes)?;
        // Answered once searchable (another process reloads its reader on the answer). The
        // changes people asked for that are queued meanwhile need not be waited for (they
        // may linger, see `commits`): searches wait for what they must see anyway. A file
        // event about kb's own write applies nothing, and waits for nothing.
        if applied {
            self.queue.wait_for_anyones();
        }
        Ok(changed)
    }

    /// What each of `paths` needs (see [`TantivyIndex::look_at`]), in their order; many
    /// files (a `git pull`) are read on several threads at once.
    fn look_at_all(&self, paths: &[EntryPath], reread: Reread) -> Vec<Found> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
        if paths.len() < PARALLEL_READ_FROM || threads == 1 {
            return paths.iter().map(|path| self.look_at(path, reread)).collect();
        }
        let chunk = paths.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = paths
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || part.iter().map(|p| self.look_at(p, reread)).collect::<Vec<_>>())
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|part| {
                    part.join().unwrap_or_else(|_| {
                        tracing::error!(
                            "a thread reading entry files panicked; they are read again at the next start"
                        );
                        Vec::new()
                    })
                })
                .collect()
        })
    }

    /// What the index needs for the file at `path`: its entry read again (or dropped), or
    /// nothing when its stamp matches what is indexed (unless `reread` says otherwise).
    fn look_at(&self, path: &EntryPath, reread: Reread) -> Found {
        let unreported = self.indexed.take_unreported(path);
        match self.look_at_file(path, reread) {
            Found::Unchanged if unreported => Found::Unreported(path.clone()),
            found => found,
        }
    }

    /// [`TantivyIndex::look_at`] by the file's stamp alone.
    fn look_at_file(&self, path: &EntryPath, reread: Reread) -> Found {
        let indexed = self.indexed.stamp(path);
        let on_disk = self.files.stamp(path);
        if reread == Reread::Changed && on_disk.is_some() && on_disk == indexed {
            return Found::Unchanged;
        }
        let read = if on_disk.is_some() { self.files.read(path) } else { FileRead::Missing };
        match read {
            FileRead::Entry(entry, stamp, lines) => Found::Change(Change::Upsert(entry, stamp, Some(lines))),
            FileRead::Malformed(reason) => {
                tracing::warn!(%path, %reason, "skipping a file that is not a readable entry");
                if indexed.is_some() {
                    Found::Change(Change::Remove(path.clone()))
                } else {
                    Found::Unreadable(path.clone())
                }
            }
            FileRead::Missing if indexed.is_some() => Found::Change(Change::Remove(path.clone())),
            FileRead::Missing => Found::Unchanged,
        }
    }

    /// Brings the index in line with the vault on disk: files whose stamp differs from
    /// what is indexed are read again, entries whose file is gone are dropped. Used at
    /// start and when the file watcher lost track of events.
    pub fn reconcile(&self) -> Result<SyncStats, SearchError> {
        self.reconcile_changes(None).map(|(stats, _)| stats)
    }

    /// [`TantivyIndex::reconcile`], also giving the paths whose indexed entry changed;
    /// done by the owner.
    pub(crate) fn reconcile_changes(
        &self,
        progress: Option<&ProgressFn>,
    ) -> Result<(SyncStats, Vec<EntryPath>), SearchError> {
        if self.is_owner() {
            return self.reconcile_local(progress);
        }
        match self.forward(&Request::Reconcile)? {
            Some(answer) => Ok((
                answer.stats.map(SyncStats::from).unwrap_or_default(),
                answer.changed.iter().filter_map(|p| EntryPath::parse(p).ok()).collect(),
            )),
            None => self.reconcile_local(progress),
        }
    }

    /// [`TantivyIndex::reconcile`] with this process's writer.
    pub(crate) fn reconcile_local(
        &self,
        progress: Option<&ProgressFn>,
    ) -> Result<(SyncStats, Vec<EntryPath>), SearchError> {
        // What is queued is committed first; the writer is then held from the walk to the
        // commit, so no change kb makes meanwhile can be mistaken for one made outside
        // (a change queued meanwhile is committed after, and found unchanged by the next).
        self.queue.wait_for_queued();
        self.handles.with_writer(|writer| {
            let clock = std::time::Instant::now();
            let on_disk = self.files.entry_files();
            let walk_ms = clock.elapsed().as_millis();
            let differences = self.indexed.differences(&on_disk);
            tracing::debug!(
                walk_ms,
                compare_ms = clock.elapsed().as_millis() - walk_ms,
                "the folders are walked and compared with the index"
            );
            let (mut changed, listed_gone) = (differences.changed, differences.gone);
            // A walk begun before the index's stamps were loaded (see
            // `EntryFiles::walk_ahead`) misses a file another kb process wrote and indexed
            // meanwhile: a file the walk did not list is looked at once more before its
            // entry is dropped, and read again when it is there.
            let mut gone = Vec::with_capacity(listed_gone.len());
            for path in listed_gone {
                if self.files.stamp(&path).is_some() { changed.push(path) } else { gone.push(path) }
            }
            let settles = self.settle_doubts(differences.doubted, &mut changed);
            if changed.is_empty() && gone.is_empty() {
                // A commit now puts the doubted files found as indexed out of the next
                // opening's doubt, which would otherwise look at them in every process.
                if settles {
                    self.handles.commit(writer)?;
                }
                return Ok((SyncStats::default(), Vec::new()));
            }
            for path in &gone {
                writer.delete_term(Term::from_field_text(self.fields.path, &path.to_string()));
            }
            let ingest =
                Ingest { writer: &*writer, fields: &self.fields, files: self.files.as_ref(), progress };
            let ingested = match ingest.catch_up(&changed) {
                Ok(ingested) => ingested,
                Err(e) => {
                    let _ = writer.rollback();
                    return Err(index_error(e));
                }
            };
            self.handles.commit(writer)?;
            let indexed = ingested.indexed.len();
            let mut touched: Vec<EntryPath> = gone.clone();
            touched.extend(ingested.dropped.iter().cloned());
            touched.extend(ingested.indexed.iter().map(|(p, _)| p.clone()));
            let removed = self.indexed.caught_up(gone.iter().chain(&ingested.dropped), ingested.indexed);
            let added = differences.added.min(indexed);
            let stats =
                SyncStats { added, updated: indexed - added, removed, malformed: ingested.malformed.len() };
            Ok((stats, touched))
        })
    }
}

impl TantivyIndex {
    /// Looks at the files whose stamp is the one a doubted entry was indexed with: one whose
    /// entry is what the index stores for it is indexed already, and its stamp is trusted
    /// again; any other joins `changed`, to be read again. Whether a commit made now would
    /// settle some of those found indexed (modified well before now): their doubt comes
    /// from the time of the last commit, and lasts until a later one.
    fn settle_doubts(&self, doubted: Vec<(EntryPath, Stamp)>, changed: &mut Vec<EntryPath>) -> bool {
        if doubted.is_empty() {
            return false;
        }
        let searcher = self.handles.searcher();
        let mut indexed = Vec::new();
        for (path, stamp) in doubted {
            if self.stores_file_as_it_is(&searcher, &path, stamp) {
                indexed.push((path, stamp));
            } else {
                changed.push(path);
            }
        }
        tracing::debug!(confirmed = indexed.len(), "files written just before the last commit are looked at");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .and_then(|since| i64::try_from(since.as_nanos()).ok());
        let settles = now.is_some_and(|now| indexed.iter().any(|(_, stamp)| stamp.settled_at(now)));
        self.indexed.caught_up(std::iter::empty(), indexed);
        settles
    }

    /// Whether the one document `searcher` finds for `path` stores what the file there
    /// gives now, read with `stamp`.
    fn stores_file_as_it_is(&self, searcher: &Searcher, path: &EntryPath, stamp: Stamp) -> bool {
        let FileRead::Entry(entry, read_with, lines) = self.files.read(path) else { return false };
        if read_with != stamp {
            return false;
        }
        let term = Term::from_field_text(self.fields.path, path.as_str());
        let query = TermQuery::new(term, IndexRecordOption::Basic);
        let Ok(found) = searcher.search(&query, &DocSetCollector) else { return false };
        let mut found = found.into_iter();
        let (Some(address), None) = (found.next(), found.next()) else { return false };
        let Ok(stored) = searcher.doc::<TantivyDocument>(address) else { return false };
        same_stored(searcher.schema(), &stored, &to_document(&self.fields, &entry, stamp, &lines))
    }
}
