//! Reading many entry files in parallel and handing them to an index writer: the bulk path
//! of a rebuild and of a start-up reconcile. Files are read, parsed and tokenised on every
//! core at once; nothing is held in memory beyond what the writer buffers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use kb_domain::{EntryPath, FileRead, Stamp, VaultFiles};
use tantivy::{IndexWriter, Term};

use crate::document::to_document;
use crate::schema::IndexFields;
use kb_domain::sync::lock;

/// How far an index build has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexProgress {
    /// Whether the whole index is being rebuilt (rather than brought up to date).
    pub rebuilding: bool,
    /// Files read so far.
    pub done: usize,
    /// Files to read in all.
    pub total: usize,
}

/// A callback called with progress while files are read (from several threads).
pub type ProgressFn = Arc<dyn Fn(IndexProgress) + Send + Sync>;

/// Progress is reported every this many files (and at the end).
const REPORT_EVERY: usize = 1000;

/// What an ingest did.
#[derive(Debug, Default)]
pub(crate) struct Ingested {
    /// Entries indexed, with the stamps of their files.
    pub indexed: Vec<(EntryPath, Stamp)>,
    /// Paths with no readable entry (gone, malformed): dropped from the index.
    pub dropped: Vec<EntryPath>,
    /// Files that are not readable entries, with the reason.
    pub malformed: Vec<(EntryPath, String)>,
}

impl Ingested {
    /// Adds what another worker did.
    fn append(&mut self, mut other: Ingested) {
        self.indexed.append(&mut other.indexed);
        self.dropped.append(&mut other.dropped);
        self.malformed.append(&mut other.malformed);
    }
}

/// Where an ingest reads entries from and puts them.
pub(crate) struct Ingest<'a> {
    /// The writer the entries are added to (not committed).
    pub(crate) writer: &'a IndexWriter,
    /// The index's fields.
    pub(crate) fields: &'a IndexFields,
    /// The vault's entry files.
    pub(crate) files: &'a dyn VaultFiles,
    /// Called with how far the ingest has come.
    pub(crate) progress: Option<&'a ProgressFn>,
}

/// Which kind of ingest it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// Into a fresh index: nothing is indexed yet.
    Rebuild,
    /// Into an index holding older versions of the entries, which are replaced.
    CatchUp,
}

impl Ingest<'_> {
    /// Reads `paths` on all cores and adds their entries to a fresh index. Does not commit.
    pub(crate) fn rebuild(&self, paths: &[EntryPath]) -> tantivy::Result<Ingested> {
        self.run(paths, Pass::Rebuild)
    }

    /// Reads `paths` on all cores and puts their entries in place of any version indexed.
    /// Does not commit.
    pub(crate) fn catch_up(&self, paths: &[EntryPath]) -> tantivy::Result<Ingested> {
        self.run(paths, Pass::CatchUp)
    }

    /// Reads `paths` on all cores and adds their entries to the writer.
    fn run(&self, paths: &[EntryPath], pass: Pass) -> tantivy::Result<Ingested> {
        let cursor = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        let total = paths.len();
        let result = Mutex::new(Ingested::default());
        let failure: Mutex<Option<tantivy::TantivyError>> = Mutex::new(None);
        let workers = thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8).min(total.max(1));
        let report = |done: usize| {
            if let Some(progress) = self.progress {
                progress(IndexProgress { rebuilding: pass == Pass::Rebuild, done, total });
            }
        };
        thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    let mut local = Ingested::default();
                    loop {
                        let i = cursor.fetch_add(1, Ordering::Relaxed);
                        let Some(path) = paths.get(i) else { break };
                        if lock(&failure).is_some() {
                            break;
                        }
                        if let Err(e) = self.read_one(path, pass, &mut local) {
                            lock(&failure).get_or_insert(e);
                            break;
                        }
                        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                        if n.is_multiple_of(REPORT_EVERY) && n < total {
                            report(n);
                        }
                    }
                    lock(&result).append(local);
                });
            }
        });
        if let Some(e) = failure.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
            return Err(e);
        }
        report(total);
        Ok(result.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// Reads the file at `path` and adds its entry to the writer (replacing the version
    /// indexed when catching up), noting what became of it in `local`.
    fn read_one(&self, path: &EntryPath, pass: Pass, local: &mut Ingested) -> tantivy::Result<()> {
        if pass == Pass::CatchUp {
            self.writer.delete_term(Term::from_field_text(self.fields.path, &path.to_string()));
        }
        match self.files.read(path) {
            FileRead::Entry(entry, stamp, lines) => {
                self.writer.add_document(to_document(self.fields, &entry, stamp, &lines))?;
                local.indexed.push((entry.path, stamp));
            }
            FileRead::Missing => local.dropped.push(path.clone()),
            FileRead::Malformed(reason) => {
                tracing::warn!(%path, %reason, "skipping a file that is not a readable entry");
                local.dropped.push(path.clone());
                local.malformed.push((path.clone(), reason));
            }
        }
        Ok(())
    }
}
