//! Reading many entry files in parallel and handing them to an index writer: the bulk path
//! of a rebuild and of a start-up reconcile. Files are read, parsed and tokenised on every
//! core at once; nothing is held in memory beyond what the writer buffers.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use kb_domain::{EntryPath, FileRead, Stamp, VaultFiles};
use tantivy::{IndexWriter, Term};

use crate::document::to_document;
use crate::index::lock;
use crate::schema::IndexFields;

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

/// Reads `paths` on all cores and adds their entries to `writer` (replacing any indexed
/// version when `replace`). Does not commit.
pub(crate) fn ingest(
    writer: &IndexWriter,
    fields: &IndexFields,
    files: &dyn VaultFiles,
    paths: &[EntryPath],
    replace: bool,
    progress: Option<&ProgressFn>,
    rebuilding: bool,
) -> tantivy::Result<Ingested> {
    let cursor = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let total = paths.len();
    let result = Mutex::new(Ingested::default());
    let failure: Mutex<Option<tantivy::TantivyError>> = Mutex::new(None);
    let workers = thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8).min(total.max(1));
    let report = |done: usize| {
        if let Some(progress) = progress {
            progress(IndexProgress { rebuilding, done, total });
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
                    if replace {
                        writer.delete_term(Term::from_field_text(fields.path, &path.to_string()));
                    }
                    match files.read(path) {
                        FileRead::Entry(entry, stamp) => {
                            match writer.add_document(to_document(fields, &entry, stamp)) {
                                Ok(_) => local.indexed.push((entry.path, stamp)),
                                Err(e) => {
                                    lock(&failure).get_or_insert(e);
                                    break;
                                }
                            }
                        }
                        FileRead::Missing => local.dropped.push(path.clone()),
                        FileRead::Malformed(reason) => {
                            tracing::warn!(%path, %reason, "skipping a file that is not a readable entry");
                            local.dropped.push(path.clone());
                            local.malformed.push((path.clone(), reason));
                        }
                    }
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if n.is_multiple_of(REPORT_EVERY) && n < total {
                        report(n);
                    }
                }
                let mut all = lock(&result);
                all.indexed.append(&mut local.indexed);
                all.dropped.append(&mut local.dropped);
                all.malformed.append(&mut local.malformed);
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
        return Err(e);
    }
    report(total);
    Ok(result.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner))
}
