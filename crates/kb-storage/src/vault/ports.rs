//! The vault as kb-domain's ports: [`RevisionHistory`], [`EntryReader`] and
//! [`EntryCatalogue`], each answered by the vault's own methods or its cache.

use chrono::{DateTime, NaiveDate, Utc};
use kb_domain::{
    ChangeContext, DigestCandidates, Entry, EntryCatalogue, EntryPath, EntryReader, EntrySummary,
    LaterChanges, ListFilter, ListPage, MalformedFile, NameMatch, RepositoryError, RestoreOutcome, Revision,
    RevisionHistory, RevisionText, UndoOutcome, UndoScope,
};

use super::reread::Notify;
use super::scan::{self, Found, read_existing, read_existing_document};
use super::{Vault, entry_list};

impl RevisionHistory for Vault {
    fn history(&self, path: &EntryPath) -> Result<Vec<Revision>, RepositoryError> {
        self.entry_history(path)
    }

    fn revision(&self, path: &EntryPath, revision: i64) -> Result<RevisionText, RepositoryError> {
        self.revision_text(path, revision)
    }

    fn restore_as(
        &self,
        path: &EntryPath,
        revision: i64,
        by: &ChangeContext,
    ) -> Result<RestoreOutcome, RepositoryError> {
        self.restore(path, revision, by)
    }

    fn undo_as(
        &self,
        scope: &UndoScope,
        later: LaterChanges,
        by: &ChangeContext,
    ) -> Result<UndoOutcome, RepositoryError> {
        self.undo(scope, later, by)
    }
}

impl EntryReader for Vault {
    fn get(&self, path: &EntryPath) -> Result<Entry, RepositoryError> {
        let file = self.root.checked_file(path)?;
        read_existing(&file, path)
    }

    fn get_with_text(&self, path: &EntryPath) -> Result<(Entry, String), RepositoryError> {
        let file = self.root.checked_file(path)?;
        read_existing_document(&file, path)
    }

    fn all_entries(&self) -> Result<Vec<Entry>, RepositoryError> {
        let mut entries = Vec::new();
        scan::scan(&self.root, |found| {
            if let Found::Entry(entry) = found {
                entries.push(entry);
            }
        })?;
        Ok(entries)
    }
}

impl EntryCatalogue for Vault {
    fn list(&self, filter: &ListFilter) -> Result<ListPage, RepositoryError> {
        Ok(self.lock().cache.list(filter))
    }

    fn find_by_name(&self, name: &str) -> Result<Vec<NameMatch>, RepositoryError> {
        Ok(self.lock().cache.find_by_name(name))
    }

    fn named_entries(&self) -> Result<Vec<(EntrySummary, Vec<String>)>, RepositoryError> {
        Ok(self.lock().cache.named_entries())
    }

    fn context(&self, path: &EntryPath, depth: u8) -> Result<kb_domain::EntryContext, RepositoryError> {
        self.lock().cache.context(path, depth).ok_or_else(|| RepositoryError::NotFound(path.clone()))
    }

    fn links(&self, path: &EntryPath) -> Result<kb_domain::EntryLinks, RepositoryError> {
        let links = self.lock().cache.links(path).unwrap_or_default();
        Ok(self.with_files(path, links))
    }

    fn other_note_folders(&self) -> Result<Vec<kb_domain::FolderCount>, RepositoryError> {
        Ok(self.lock().cache.other_note_folders())
    }

    fn digest_candidates(
        &self,
        today: NaiveDate,
        now: DateTime<Utc>,
    ) -> Result<DigestCandidates, RepositoryError> {
        Ok(self.lock().cache.digest_candidates(today, now))
    }

    fn nudge_candidates(
        &self,
        today: NaiveDate,
        now: DateTime<Utc>,
        settings: kb_domain::nudges::NudgeSettings,
    ) -> Result<kb_domain::nudges::NudgeCandidates, RepositoryError> {
        Ok(self.lock().cache.nudge_candidates(today, now, settings))
    }

    fn malformed(&self) -> Vec<MalformedFile> {
        self.lock().cache.malformed()
    }

    fn entry_list_markdown(&self) -> String {
        // Rendered now: the file itself may be a moment behind (see
        // `write_entry_list_in_background`).
        let snapshot = self.lock().cache.entry_list_snapshot();
        entry_list::render(&snapshot)
    }

    #[tracing::instrument(skip_all, fields(path = %path))]
    fn refresh(&self, path: &EntryPath) -> Result<Option<Entry>, RepositoryError> {
        self.reread(path, Notify::Observers)
    }
}
