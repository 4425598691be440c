//! The catalogue port: [`EntryCatalogue`], what kb knows of every entry in memory (lists,
//! names, the facts digests and nudges read, the entry list), and its value types.

use chrono::{DateTime, NaiveDate, Utc};

use super::entries::RepositoryError;
use crate::category::Category;
use crate::digest_orders::DigestCandidates;
use crate::entry::{Entry, EntrySummary};
use crate::links::LinkGraph;
use crate::names::NameRelation;
use crate::nudges::{NudgeCandidates, NudgeSettings};
use crate::path::EntryPath;

/// Filters of a list of entries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListFilter {
    /// Only this category.
    pub category: Option<Category>,
    /// Only this status.
    pub status: Option<String>,
    /// Only notes in this folder or below it (vault-relative, `Journal/2025`, no trailing
    /// `/`).
    pub folder: Option<String>,
    /// At most this many (callers cap it).
    pub limit: usize,
    /// Skip this many first.
    pub offset: usize,
}

/// A top folder of the person's own notes (outside the category folders) and how many
/// notes it holds, sub-folders included; the folder is empty for the notes at the vault
/// root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderCount {
    /// The folder, vault-relative (`Journal`), or empty for the root.
    pub folder: String,
    /// How many notes are in it and below it.
    pub notes: usize,
}

/// A page of entries, newest `updated_at` first.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage {
    /// The entries of the page.
    pub entries: Vec<EntrySummary>,
    /// How many entries match in all.
    pub total: usize,
}

/// An entry whose name or alias relates to a name asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct NameMatch {
    /// The entry.
    pub entry: EntrySummary,
    /// How its name (or alias) relates to the name asked for.
    pub relation: NameRelation,
    /// The alias that matched, when it was not the name.
    pub alias: Option<String>,
}

/// A file in the vault that looks like an entry but cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedFile {
    /// Its path.
    pub path: EntryPath,
    /// Why.
    pub reason: String,
}

/// What a link leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// A note of the vault.
    Note,
    /// A file of the vault that is not a note: an image, a PDF, a drawing (`![[photo.png]]`,
    /// `[doc](file.pdf)`).
    File,
    /// Nothing: no note or file of the vault is there (a broken link).
    Missing,
}

/// A note an entry links to, or that links to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedNote {
    /// Where the note is (`None`: the link leads to no note).
    pub path: Option<EntryPath>,
    /// The note's name; the link's target as written when it leads to none.
    pub name: String,
    /// The line that links, trimmed.
    pub line: String,
    /// What the link leads to.
    pub kind: LinkKind,
    /// The vault path of the file it leads to, when that is a file that is not a note
    /// (`assets/photo.png`).
    pub file: Option<String>,
}

impl LinkedNote {
    /// This link, found to lead to the file at `file` (vault-relative): no note, but not
    /// broken either.
    pub fn to_file(self, file: String) -> LinkedNote {
        LinkedNote { kind: LinkKind::File, file: Some(file), ..self }
    }
}

/// An entry's links, in the order written, and the links to it from other entries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EntryLinks {
    /// What it links to.
    pub links: Vec<LinkedNote>,
    /// What links to it.
    pub backlinks: Vec<LinkedNote>,
}

impl EntryLinks {
    /// The links and backlinks of the entry at `path` in `graph`, each note named by
    /// `name_of` (its name in the catalogue).
    pub fn of(
        graph: &LinkGraph,
        path: &EntryPath,
        name_of: impl Fn(&EntryPath) -> Option<String>,
    ) -> EntryLinks {
        let key = path.to_string();
        let note = |to: Option<&str>, written: &str, line: &str| {
            let path = to.and_then(|to| EntryPath::parse(to).ok());
            let name = path.as_ref().and_then(&name_of).unwrap_or_else(|| written.to_string());
            let kind = if path.is_some() { LinkKind::Note } else { LinkKind::Missing };
            LinkedNote { path, name, line: line.to_string(), kind, file: None }
        };
        EntryLinks {
            links: graph
                .links_of(&key)
                .iter()
                .map(|l| note(l.to.as_deref(), &l.link.target, &l.line_text))
                .collect(),
            backlinks: graph
                .backlinks_of(&key)
                .iter()
                .map(|b| note(Some(&b.from), &b.from, &b.line_text))
                .collect(),
        }
    }
}

/// How a note near an entry is linked to the note it was reached from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// That note links to it.
    LinkedTo,
    /// It links to that note.
    LinksHere,
}

/// A note reached from an entry by following links, either way.
#[derive(Debug, Clone, PartialEq)]
pub struct NearbyNote {
    /// The note.
    pub entry: EntrySummary,
    /// How many links away it is (1: linked to or from the entry itself).
    pub distance: u8,
    /// How it is linked to the note it was reached from.
    pub relation: Relation,
    /// The note it was reached from.
    pub via: EntryPath,
}

/// An entry with the notes around it by their links (see [`EntryCatalogue::context`]).
#[derive(Debug, Clone, PartialEq)]
pub struct EntryContext {
    /// The entry.
    pub entry: EntrySummary,
    /// The notes within the depth asked, nearest first, then newest first.
    pub nearby: Vec<NearbyNote>,
}

impl EntryContext {
    /// The context of the entry at `path` in `graph` to `depth`, each note's summary from
    /// `summary_of` (notes without one, such as files kb cannot read, are passed over);
    /// `None` when `path` has no summary.
    pub fn of(
        graph: &LinkGraph,
        path: &EntryPath,
        depth: u8,
        summary_of: impl Fn(&EntryPath) -> Option<EntrySummary>,
    ) -> Option<EntryContext> {
        let entry = summary_of(path)?;
        let mut seen = std::collections::HashSet::from([path.to_string()]);
        let mut frontier = vec![path.clone()];
        let mut nearby = Vec::new();
        for distance in 1..=depth {
            let mut next = Vec::new();
            for from in &frontier {
                let key = from.to_string();
                let out = graph.targets_of(&key).into_iter().map(|to| (to, Relation::LinkedTo));
                let inward = graph.sources_of(&key).map(|by| (by, Relation::LinksHere));
                for (other, relation) in out.chain(inward) {
                    if !seen.insert(other.to_string()) {
                        continue;
                    }
                    let Some(summary) = EntryPath::parse(other).ok().and_then(|p| summary_of(&p)) else {
                        continue;
                    };
                    next.push(summary.path.clone());
                    nearby.push(NearbyNote { entry: summary, distance, relation, via: from.clone() });
                }
            }
            frontier = next;
        }
        nearby.sort_by(|a, b| {
            a.distance
                .cmp(&b.distance)
                .then_with(|| b.entry.updated_at.cmp(&a.entry.updated_at))
                .then_with(|| a.entry.path.cmp(&b.entry.path))
        });
        Some(EntryContext { entry, nearby })
    }
}

/// The vault's catalogue: answers about every entry from memory, without reading the
/// files again.
pub trait EntryCatalogue: Send + Sync {
    /// Lists entries matching the filter, newest first, from memory: the cost grows with
    /// the page asked for, not with the vault.
    fn list(&self, filter: &ListFilter) -> Result<ListPage, RepositoryError>;
    /// The entries whose name or an alias is `name` or begins or is begun by its words
    /// ([`crate::names::relate`]), case, accents and punctuation aside; the same names first.
    /// Conflict copies ([`crate::conflicts::is_conflict_copy`]) are left out: they bear
    /// their note's name. Costs the entries sharing the name's first word, not the vault.
    fn find_by_name(&self, name: &str) -> Result<Vec<NameMatch>, RepositoryError>;
    /// The entry's links (`[[wikilinks]]` and Markdown links, resolved as Obsidian does)
    /// and the links to it, from memory; none for an entry the catalogue does not know (yet).
    fn links(&self, path: &EntryPath) -> Result<EntryLinks, RepositoryError>;
    /// The top folders of the person's own notes with how many each holds, by folder (the
    /// root's first when there are notes there); from memory.
    fn other_note_folders(&self) -> Result<Vec<FolderCount>, RepositoryError>;
    /// The entry at `path` with every note within `depth` links of it, either way (what it
    /// links to, what links to it, and so on), nearest first and newest first at each
    /// distance; from memory, reading no file. `NotFound` when the catalogue does not know it.
    fn context(&self, path: &EntryPath, depth: u8) -> Result<EntryContext, RepositoryError>;
    /// Every readable entry's summary with its aliases, for a whole-vault duplicate scan.
    fn named_entries(&self) -> Result<Vec<(EntrySummary, Vec<String>)>, RepositoryError>;
    /// The catalogue records a digest on `today` at `now` reads (see [`DigestCandidates`]):
    /// no file is read, and the cost is the records at the front of each digest order and
    /// the week's activity, not the vault.
    fn digest_candidates(
        &self,
        today: NaiveDate,
        now: DateTime<Utc>,
    ) -> Result<DigestCandidates, RepositoryError>;
    /// The catalogue records the nudges on `today` at `now` read (see [`NudgeCandidates`]).
    fn nudge_candidates(
        &self,
        today: NaiveDate,
        now: DateTime<Utc>,
        settings: NudgeSettings,
    ) -> Result<NudgeCandidates, RepositoryError>;
    /// Files that look like entries but cannot be read.
    fn malformed(&self) -> Vec<MalformedFile>;
    /// The entry list file's text (`index.md`) as it is now.
    fn entry_list_markdown(&self) -> String;
    /// Re-reads one path into the catalogue after a change made outside kb (or notices it
    /// is gone).
    fn refresh(&self, path: &EntryPath) -> Result<Option<Entry>, RepositoryError>;
}
