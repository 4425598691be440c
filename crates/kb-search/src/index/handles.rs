//! [`Handles`]: tantivy's index with this process's reader and, in the process that owns
//! the index, its one writer; and what the commits made with that writer came to (how
//! many, and why the last one failed).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use kb_domain::SearchError;
use kb_domain::sync::lock;
use tantivy::{Index, IndexReader, IndexWriter, Searcher};

use crate::error::index_error;
use crate::open::kept_writer;

/// Tantivy's index and this process's handles on it.
pub(super) struct Handles {
    /// The index itself (a writer is made from it on taking ownership over).
    index: Index,
    /// This process's reader.
    reader: IndexReader,
    /// The writer, in the process that owns the index; `None` in the others.
    writer: Mutex<Option<IndexWriter>>,
    /// Whether `writer` holds one, known without waiting for a commit that holds it.
    owner: AtomicBool,
    /// Commits this process made (see [`crate::TantivyIndex::commit_count`]).
    commits: AtomicU64,
    /// Why the last commit failed, until one succeeds again.
    last_failure: Mutex<Option<String>>,
}

/// What trying to take the writer came to.
pub(super) enum Taking {
    /// This process held it already.
    HeldHere,
    /// This process holds it now.
    Taken,
    /// Another process holds it.
    HeldElsewhere,
}

impl Handles {
    /// The handles of an opened index, taking its writer when no other process holds it.
    pub(super) fn new(index: Index, reader: IndexReader) -> tantivy::Result<Handles> {
        let writer = match kept_writer(&index) {
            Ok(writer) => Some(writer),
            Err(tantivy::TantivyError::LockFailure(..)) => None,
            Err(other) => return Err(other),
        };
        Ok(Handles {
            index,
            reader,
            owner: AtomicBool::new(writer.is_some()),
            writer: Mutex::new(writer),
            commits: AtomicU64::new(0),
            last_failure: Mutex::new(None),
        })
    }

    /// Whether this process holds the writer.
    pub(super) fn is_owner(&self) -> bool {
        self.owner.load(Ordering::Acquire)
    }

    /// A searcher over what the reader sees now.
    pub(super) fn searcher(&self) -> Searcher {
        self.reader.searcher()
    }

    /// Makes the latest commit visible to the next search.
    pub(super) fn reload(&self) -> Result<(), SearchError> {
        self.reader.reload().map_err(index_error)
    }

    /// Takes the writer when no process holds it.
    pub(super) fn take_writer(&self) -> Result<Taking, SearchError> {
        let mut slot = lock(&self.writer);
        if slot.is_some() {
            return Ok(Taking::HeldHere);
        }
        match kept_writer(&self.index) {
            Ok(writer) => {
                *slot = Some(writer);
                self.owner.store(true, Ordering::Release);
                Ok(Taking::Taken)
            }
            Err(tantivy::TantivyError::LockFailure(..)) => Ok(Taking::HeldElsewhere),
            Err(e) => Err(index_error(e)),
        }
    }

    /// Runs `work` with the writer, holding it meanwhile; an error when this process does
    /// not own the index.
    pub(super) fn with_writer<T>(
        &self,
        work: impl FnOnce(&mut IndexWriter) -> Result<T, SearchError>,
    ) -> Result<T, SearchError> {
        let mut slot = lock(&self.writer);
        match slot.as_mut() {
            Some(writer) => work(writer),
            None => Err(SearchError::index_message("this kb process does not own the search index")),
        }
    }

    /// Gives the writer up (the index is closing): the others may take it over.
    pub(super) fn release_writer(&self) -> Option<IndexWriter> {
        let writer = lock(&self.writer).take();
        self.owner.store(false, Ordering::Release);
        writer
    }

    /// Commits what the writer holds and makes it visible to the next search. A failure is
    /// remembered for [`Handles::health`] until a commit succeeds.
    pub(super) fn commit(&self, writer: &mut IndexWriter) -> Result<(), SearchError> {
        let committed = match writer.commit() {
            Ok(_) => {
                self.commits.fetch_add(1, Ordering::AcqRel);
                self.reload()
            }
            Err(e) => {
                let _ = writer.rollback();
                Err(index_error(e))
            }
        };
        *lock(&self.last_failure) = committed.as_ref().err().map(ToString::to_string);
        committed
    }

    /// Remembers why a commit failed without an error of its own (it panicked).
    pub(super) fn commit_failed(&self, why: &str) {
        *lock(&self.last_failure) = Some(why.to_string());
    }

    /// How many commits this process has made.
    pub(super) fn commit_count(&self) -> u64 {
        self.commits.load(Ordering::Acquire)
    }

    /// `Err` with the reason when the last commit failed.
    pub(super) fn health(&self) -> Result<(), String> {
        match lock(&self.last_failure).clone() {
            Some(failure) => Err(failure),
            None => Ok(()),
        }
    }
}
