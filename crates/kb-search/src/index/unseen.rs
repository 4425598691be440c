//! Which changes still queued for the background commit (see [`crate::commits`]) a keyword
//! search must wait for: only those that may change its answer.
//!
//! A search reads the index as last committed. A change queued before it can change what
//! it finds in two ways only: the entry's path is in that index (an older version, or the
//! entry a removal takes away, may be among the hits), or the entry is new and its texts
//! hold one of the query's terms. So when a change is queued, the terms its texts would be
//! indexed with are kept beside it; a search that finds neither case for every change it
//! would have waited for reads the index at once, and one that finds either waits for the
//! commit as before. A word no committed entry holds may be a typo, which the
//! typo-tolerant retry matches within an edit: a new entry holding a term that close to it
//! is waited for too. The test errs one way only: a change it cannot rule out is waited
//! for.

use std::collections::HashSet;
use std::sync::Arc;

use kb_domain::{Entry, EntryPath};
use tantivy::{Searcher, Term};

use super::{Change, TantivyIndex};
use crate::analysis::{SearchLanguage, analyze, stems, within_one_edit};
use crate::document::field_text;
use crate::schema::TextField;

/// Entries of a batch larger than this are queued without their terms: every search waits
/// for them (a sync's or a rebuild's thousands of changes are not worth analysing twice).
const TERMS_AT_MOST: usize = 16;

/// A queued change as a search sees it before it is committed.
#[derive(Debug, Clone)]
pub(crate) struct Unseen {
    /// The entry it is about.
    path: EntryPath,
    /// What the change brings.
    brings: Brings,
}

/// What a queued change brings to the index.
#[derive(Debug, Clone)]
enum Brings {
    /// Nothing: the entry is removed.
    Nothing,
    /// An entry whose texts are indexed as these terms (exact and stemmed).
    Terms(Arc<HashSet<String>>),
    /// An entry whose terms were not worked out.
    Unknown,
}

/// What a search is looking for, to tell which queued changes may change its answer.
pub(super) struct Sought<'a> {
    /// The query's terms (loose, quoted and phrase words).
    pub(super) terms: &'a [String],
    /// The stems of its loose words.
    pub(super) stems: &'a [String],
    /// The word a search as you type completes.
    pub(super) typing: Option<&'a str>,
    /// The terms no committed entry holds: the typo-tolerant retry matches them within an
    /// edit.
    pub(super) unknown: &'a [String],
}

impl Unseen {
    /// The entry the change is about.
    pub(crate) fn path(&self) -> &EntryPath {
        &self.path
    }

    /// How `changes` (one batch) are seen by the searches made before they are committed.
    pub(super) fn of_batch(changes: &[Change], language: SearchLanguage) -> Vec<Unseen> {
        let small = changes.len() <= TERMS_AT_MOST;
        changes
            .iter()
            .map(|change| match change {
                Change::Upsert(entry, ..) => Unseen {
                    path: entry.path.clone(),
                    brings: if small {
                        Brings::Terms(Arc::new(terms_of(entry, language)))
                    } else {
                        Brings::Unknown
                    },
                },
                Change::Remove(path) => Unseen { path: path.clone(), brings: Brings::Nothing },
            })
            .collect()
    }
}

/// The terms `entry`'s texts are indexed with: each text's terms as written and their stems.
fn terms_of(entry: &Entry, language: SearchLanguage) -> HashSet<String> {
    let written: Vec<String> =
        TextField::ALL.into_iter().flat_map(|kind| analyze(&field_text(entry, kind))).collect();
    let stemmed = stems(&written, language);
    written.into_iter().chain(stemmed).collect()
}

impl TantivyIndex {
    /// Whether `change`, queued but not committed, may change what a search for `sought`
    /// finds in `searcher` (see the module documentation).
    pub(super) fn may_change(&self, searcher: &Searcher, sought: &Sought<'_>, change: &Unseen) -> bool {
        let path = Term::from_field_text(self.fields.path, &change.path.to_string());
        // Deleted documents still count here: an entry removed already errs towards waiting.
        if searcher.doc_freq(&path).map_or(true, |n| n > 0) {
            return true;
        }
        match &change.brings {
            Brings::Nothing => false,
            Brings::Unknown => true,
            Brings::Terms(terms) => {
                sought.unknown.iter().any(|typed| terms.iter().any(|term| within_one_edit(typed, term)))
                    || sought.terms.iter().chain(sought.stems).any(|term| terms.contains(term))
                    || sought.typing.is_some_and(|typed| terms.iter().any(|term| term.starts_with(typed)))
            }
        }
    }
}
