//! Applying changes to the index: through the owner, or with this process's writer, either
//! committed at once or queued for the background committer (see [`crate::commits`]).

use std::sync::{Arc, Weak};

use kb_domain::{Entry, EntryLines, EntryPath, FileRead, SearchError, Stamp};
use tantivy::Term;

use super::{Change, TantivyIndex, Unseen};
use crate::commits::CommitQueue;
use crate::document::to_document;
use crate::error::index_error;
use crate::owner::Request;

impl TantivyIndex {
    /// From now on commits this process's changes in the background, several together
    /// when they come together (see the `commits` module). For processes that live long
    /// (`kb serve`, MCP servers); a short-lived one commits each change before it returns.
    pub fn commit_in_background(self: &Arc<Self>) {
        if !self.queue.start() {
            return;
        }
        let this = Arc::downgrade(self);
        let queue = Arc::clone(&self.queue);
        let started = std::thread::Builder::new()
            .name("kb-index-commit".into())
            .spawn(move || commit_queued(&this, &queue));
        if let Err(error) = started {
            tracing::warn!(%error, "could not start committing in the background; committing each change");
            self.queue.stop();
        }
    }

    /// Applies changes: here when this process owns the index, else through the owner.
    pub(super) fn apply(&self, changes: Vec<Change>) -> Result<(), SearchError> {
        self.apply_by(changes, None)
    }

    /// [`TantivyIndex::apply`] for changes `person` asked for (`None`: no one in
    /// particular): queued under their name in the owner (see [`crate::commits`]); sent to
    /// another owner, they are no one's in particular.
    pub(super) fn apply_by(&self, changes: Vec<Change>, person: Option<&str>) -> Result<(), SearchError> {
        if changes.is_empty() || self.is_owner() {
            return self.apply_local_by(changes, person);
        }
        let paths = changes.iter().map(|c| c.path().to_string()).collect();
        match self.forward(&Request::Sync { paths, outside: false })? {
            Some(_) => Ok(()),
            None => self.apply_local_by(changes, person),
        }
    }

    /// Applies changes with this process's writer: queued for the background commit when
    /// there is one, else committed now.
    pub(super) fn apply_local(&self, changes: Vec<Change>) -> Result<(), SearchError> {
        self.apply_local_by(changes, None)
    }

    /// [`TantivyIndex::apply_local`] for changes `person` asked for.
    fn apply_local_by(&self, changes: Vec<Change>, person: Option<&str>) -> Result<(), SearchError> {
        if changes.is_empty() {
            return Ok(());
        }
        if self.queue.is_background() {
            if !self.is_owner() {
                return Err(SearchError::index_message("this kb process does not own the search index"));
            }
            // What is queued counts as indexed: a file event about kb's own write is then
            // skipped, as after a commit.
            let unseen = Unseen::of_batch(&changes, self.language);
            self.queue.push(changes, unseen, person, |queued| self.indexed.record(queued));
            return Ok(());
        }
        self.commit_now(changes)
    }

    /// Applies changes in one commit with this process's writer, then reloads the reader,
    /// and records what is indexed once committed.
    fn commit_now(&self, changes: Vec<Change>) -> Result<(), SearchError> {
        let staged = self.stage_and_commit(changes)?;
        self.indexed.record_staged(&staged);
        Ok(())
    }

    /// [`TantivyIndex::commit_now`] for changes taken from the queue: what is indexed was
    /// recorded when they were queued, and a failure forgets it so that the files are read
    /// again.
    pub(super) fn commit_queued_batch(&self, changes: Vec<Change>) -> Result<(), SearchError> {
        let paths: Vec<EntryPath> = changes.iter().map(|c| c.path().clone()).collect();
        let staged = self.stage_and_commit(changes);
        if staged.is_err() {
            self.indexed.forget(&paths);
        }
        staged.map(|_| ())
    }

    /// Stages changes in the writer and commits them: the stamp each path is indexed
    /// with (`None`: removed).
    fn stage_and_commit(&self, changes: Vec<Change>) -> Result<Vec<(EntryPath, Option<Stamp>)>, SearchError> {
        self.handles.with_writer(|writer| {
            let mut staged = Vec::with_capacity(changes.len());
            for change in changes {
                let path = change.path().clone();
                writer.delete_term(Term::from_field_text(self.fields.path, &path.to_string()));
                let stamp = match change {
                    Change::Upsert(entry, stamp, lines) => {
                        let lines = lines.unwrap_or_else(|| self.lines_on_disk(&entry));
                        if let Err(e) = writer.add_document(to_document(&self.fields, &entry, stamp, &lines))
                        {
                            let _ = writer.rollback();
                            return Err(index_error(e));
                        }
                        Some(stamp)
                    }
                    Change::Remove(_) => None,
                };
                staged.push((path, stamp));
            }
            self.handles.commit(writer)?;
            Ok(staged)
        })
    }
}

impl TantivyIndex {
    /// Where `entry`'s texts lie in its file, read from the file (off the request path: a
    /// change kb made is indexed in the background in a process that lives long). None
    /// are known when the file no longer holds the entry's notes and keys (it changed
    /// again since; its next change event indexes it anew).
    fn lines_on_disk(&self, entry: &Entry) -> EntryLines {
        match self.files.read(&entry.path) {
            FileRead::Entry(read, _, lines)
                if read.body == entry.body && read.frontmatter.keys().eq(entry.frontmatter.keys()) =>
            {
                lines
            }
            _ => EntryLines::default(),
        }
    }
}

/// The background committer's loop (see [`crate::commits`]): commits whatever is
/// queued, all of it together, until the index closes. A commit that fails (or panics)
/// is logged and remembered for [`TantivyIndex::health`]; those waiting for it go on.
fn commit_queued(index: &Weak<TantivyIndex>, queue: &CommitQueue) {
    while let Some(batch) = queue.next_batch(index) {
        let Some(this) = index.upgrade() else {
            queue.finished(batch.upto);
            return;
        };
        let committed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            this.commit_queued_batch(batch.changes)
        }));
        match committed {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::warn!(%error, "changes could not be indexed; they are read again on their next event")
            }
            Err(_) => {
                this.handles.commit_failed("the index commit panicked");
                tracing::error!("the index commit panicked");
            }
        }
        drop(this);
        queue.finished(batch.upto);
    }
}
