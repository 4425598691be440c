//! The saved catalogue: what the cache knows of each entry (its catalogue record, the
//! entries it refers to, its links) with the stamp of the file it was read from, kept in
//! `.kb/catalogue.bin` so that a kb process starts without reading every file.
//!
//! It is validated, not trusted, the way git's index is: an entry is taken from it only
//! when its file's stamp (modification time and size, from the folder walk every start
//! makes, or the index's opening made a moment before) is the one saved, and the file was
//! not modified in the last
//! two seconds ([`Stamp::RACY_WINDOW_NS`]) before the catalogue was saved (a file written again within the same
//! tick of the file system's clock can keep its stamp: such an entry is read again, as git
//! checks a "racily clean" file). Files added, changed, renamed or deleted while no kb ran
//! are therefore found by the walk alone, appends that leave their folder's time as it was
//! included. The file is derived: a missing, damaged or older one (another format, another
//! kb version) is ignored and written anew.
//!
//! The file is `postcard` (a compact serde format): a header naming the format and the kb
//! version, the time it was saved, and the entries, each made into the cache's as it is
//! read. An entry's links are one byte string in the file, kept as they are until a note's
//! links are needed (see [`super::lazy_links::NoteLinks`]).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{DateTime, NaiveDate, Utc};
use kb_domain::{CatalogueEntry, EntryPath, EntrySummary, Stamp};
use serde::{Deserialize, Serialize};

use super::atomic;
use super::cache::KnownEntry;
use super::lazy_links::NoteLinks;

mod links;

pub(crate) use self::links::{any_link_target, decode_links, encode_links};

/// The file's name in the vault's `.kb/` folder.
pub(crate) const CATALOGUE_FILE: &str = "catalogue.bin";

/// Changes whenever what is saved, or how a record is made from a file, changes.
const FORMAT: u32 = 4;

/// The entries of a saved catalogue, by path, and when it was saved.
#[derive(Debug, Default)]
pub(crate) struct SavedCatalogue {
    /// The entries, sorted by path (the order they are saved and walked in), each taken
    /// at most once: looked up without hashing 100,000 paths twice.
    entries: Vec<(EntryPath, Option<KnownEntry>)>,
    /// Where the last entry taken was: the next is usually the one after.
    next: usize,
    /// How many entries are not taken.
    untaken: usize,
    /// The files that were not readable entries, with their stamps and why.
    malformed: HashMap<EntryPath, (Stamp, String)>,
    saved_at_ns: i64,
    /// Whether it was read from a usable file (an empty vault's holds no entry).
    found: bool,
}

impl SavedCatalogue {
    /// The saved catalogue of the vault whose state folder is `state_dir`; empty when there
    /// is none or it cannot be used (with the reason logged).
    pub(crate) fn load(state_dir: &Path) -> SavedCatalogue {
        let clock = std::time::Instant::now();
        let file = state_dir.join(CATALOGUE_FILE);
        let bytes = match std::fs::read(&file) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return SavedCatalogue::default(),
            Err(error) => {
                tracing::warn!(file = %file.display(), %error, "the saved catalogue cannot be read; reading every file");
                return SavedCatalogue::default();
            }
        };
        match decode(&bytes) {
            Ok(saved) => {
                let (entries, load_ms) = (saved.entries.len(), clock.elapsed().as_millis());
                tracing::debug!(entries, load_ms, "the saved catalogue is loaded");
                saved
            }
            Err(reason) => {
                tracing::info!(file = %file.display(), %reason, "the saved catalogue is not used; reading every file");
                SavedCatalogue::default()
            }
        }
    }

    /// Whether it was read from a usable file, even one with no entry: else there was none,
    /// or it could not be used.
    pub(crate) fn was_found(&self) -> bool {
        self.found
    }

    /// How many files it holds (entries and malformed files) that are not taken.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.untaken + self.malformed.len()
    }

    /// The paths of the entries and malformed files not taken.
    pub(crate) fn untaken_paths(&self) -> Vec<EntryPath> {
        let entries = self.entries.iter().filter(|(_, entry)| entry.is_some()).map(|(path, _)| path.clone());
        entries.chain(self.malformed.keys().cloned()).collect()
    }

    /// The entry saved at `path`, taken out. Walked in the same order, each is the one
    /// after the last; otherwise it is searched for.
    fn take_entry(&mut self, path: &EntryPath) -> Option<KnownEntry> {
        let at = match self.entries.get(self.next) {
            Some((next, _)) if next == path => self.next,
            _ => self.entries.binary_search_by(|(saved, _)| saved.cmp(path)).ok()?,
        };
        self.next = at + 1;
        let taken = self.entries.get_mut(at)?.1.take();
        if taken.is_some() {
            self.untaken -= 1;
        }
        taken
    }

    /// The saved entry (or malformed file) at `path`, taken out, when it can stand for the
    /// file there now, whose stamp is `stamp`: the same stamp as saved, and not racily so.
    pub(crate) fn take(&mut self, path: &EntryPath, stamp: Stamp) -> Taken {
        let racy = !stamp.settled_at(self.saved_at_ns);
        if let Some(saved) = self.take_entry(path) {
            return match (saved.stamp == stamp, racy) {
                (false, _) => Taken::Changed,
                (true, true) => Taken::Racy(Some(saved.record)),
                (true, false) => Taken::Current(saved),
            };
        }
        match self.malformed.remove(path) {
            Some((saved, _)) if saved != stamp => Taken::Changed,
            Some(_) if racy => Taken::Racy(None),
            Some((_, reason)) => Taken::Malformed(reason),
            None => Taken::Changed,
        }
    }
}

/// What the saved catalogue has for a file.
pub(crate) enum Taken {
    /// Its entry, current.
    Current(KnownEntry),
    /// Nothing, or an entry of another stamp: the file is read.
    Changed,
    /// An entry (or a malformed file: `None`) of the same stamp, but the file was modified
    /// too close to the save for the stamp to tell: the file is read (and the catalogue
    /// saved again, so that the next start need not). The saved record tells whether
    /// what was read differs.
    Racy(Option<Arc<CatalogueEntry>>),
    /// A file that is not a readable entry, as it was saved, with the reason.
    Malformed(String),
}

/// Saves `entries` as the vault's catalogue (atomically: a temporary file renamed over the
/// old one, so a reader sees one whole catalogue or the other). `saved_at` must be taken
/// before any of their stamps was.
pub(crate) fn save(
    state_dir: &Path,
    entries: &[(EntryPath, KnownEntry)],
    malformed: &[(EntryPath, Stamp, String)],
    saved_at: SystemTime,
) -> std::io::Result<()> {
    let file: PathBuf = state_dir.join(CATALOGUE_FILE);
    let saved_at_ns = nanos(saved_at);
    let saved = SavedFile {
        format: FORMAT,
        kb_version: env!("CARGO_PKG_VERSION").to_string(),
        saved_at_ns,
        entries: in_order(entries).map(|(path, entry)| SavedEntry::of(path, entry)).collect(),
        malformed: malformed
            .iter()
            .map(|(path, stamp, reason)| (path.to_string(), stamp.mtime_ns, stamp.size, reason.clone()))
            .collect(),
    };
    let bytes = postcard::to_stdvec(&saved).map_err(std::io::Error::other)?;
    atomic::write_atomic(&file, &bytes)
}

/// `entries` by path, each path once (the first), as a saved catalogue holds them.
fn in_order(entries: &[(EntryPath, KnownEntry)]) -> impl Iterator<Item = &(EntryPath, KnownEntry)> {
    let mut ordered: Vec<&(EntryPath, KnownEntry)> = entries.iter().collect();
    ordered.sort_by(|(a, _), (b, _)| a.cmp(b));
    ordered.dedup_by(|(later, _), (first, _)| later == first);
    ordered.into_iter()
}

/// A moment as nanoseconds since the Unix epoch (0 before it).
pub(crate) fn nanos(at: SystemTime) -> i64 {
    at.duration_since(UNIX_EPOCH).ok().and_then(|d| i64::try_from(d.as_nanos()).ok()).unwrap_or(0)
}

/// The catalogue in `bytes`, or why it cannot be used.
fn decode(bytes: &[u8]) -> Result<SavedCatalogue, String> {
    let header: (u32, String) =
        postcard::take_from_bytes(bytes).map(|(h, _)| h).map_err(|e| e.to_string())?;
    if header.0 != FORMAT || header.1 != env!("CARGO_PKG_VERSION") {
        return Err(format!(
            "saved by kb {} (format {}), this is kb {}",
            header.1,
            header.0,
            env!("CARGO_PKG_VERSION")
        ));
    }
    let saved: ReadFile = postcard::from_bytes(bytes).map_err(|e| e.to_string())?;
    let entries = saved.entries.0;
    // Saved in order of path; a file that is not (or names a path twice) is damaged.
    if !entries.is_sorted_by(|(a, _), (b, _)| a < b) {
        return Err("the entries are not in order of path".to_string());
    }
    let untaken = entries.len();
    let mut malformed = HashMap::with_capacity(saved.malformed.len());
    for (path, mtime_ns, size, reason) in saved.malformed {
        let path = EntryPath::parse(&path).map_err(|_| "a malformed file's path is not valid")?;
        malformed.insert(path, (Stamp::new(mtime_ns, size), reason));
    }
    Ok(SavedCatalogue { entries, next: 0, untaken, malformed, saved_at_ns: saved.saved_at_ns, found: true })
}

/// The file as written: the format and kb version come first, so an older file is told
/// apart before the rest is decoded.
#[derive(Serialize)]
struct SavedFile<'a> {
    format: u32,
    kb_version: String,
    saved_at_ns: i64,
    /// By path.
    #[serde(borrow)]
    entries: Vec<SavedEntry<'a>>,
    /// Files that are not readable entries: path, modification time, size, why.
    malformed: Vec<(String, i64, u64, String)>,
}

/// The file as read: [`SavedFile`], its entries made into the cache's as they are read
/// (a vault's worth of written entries is never held at once).
#[derive(Deserialize)]
struct ReadFile {
    // Read past: `decode` checked them first.
    _format: u32,
    _kb_version: IgnoredText,
    saved_at_ns: i64,
    entries: ReadEntries,
    malformed: Vec<(String, i64, u64, String)>,
}

/// Text read past without being kept.
struct IgnoredText;

impl<'de> Deserialize<'de> for IgnoredText {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&str>::deserialize(deserializer).map(|_| IgnoredText)
    }
}

/// The saved entries, each as the cache keeps it, in the order saved.
struct ReadEntries(Vec<(EntryPath, Option<KnownEntry>)>);

impl<'de> Deserialize<'de> for ReadEntries {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(ReadEntriesVisitor)
    }
}

struct ReadEntriesVisitor;

impl<'de> serde::de::Visitor<'de> for ReadEntriesVisitor {
    type Value = ReadEntries;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("the saved entries")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<ReadEntries, A::Error> {
        // The count is the file's own: a damaged one must not reserve more than it can hold.
        let mut entries = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(MAX_RESERVED));
        while let Some(entry) = seq.next_element::<SavedEntry<'de>>()? {
            let (path, known) =
                entry.known().ok_or_else(|| serde::de::Error::custom("an entry's path is not valid"))?;
            entries.push((path, Some(known)));
        }
        Ok(ReadEntries(entries))
    }
}

/// The most entries reserved for ahead of reading them.
const MAX_RESERVED: usize = 1 << 20;

/// One entry as written. Its paths are read in place (each becomes an [`EntryPath`]).
#[derive(Serialize, Deserialize)]
struct SavedEntry<'a> {
    path: &'a str,
    mtime_ns: i64,
    size: u64,
    name: String,
    status: Option<String>,
    updated_at: Option<(i64, u32)>,
    summary: String,
    created_at: Option<(i64, u32)>,
    due_date: Option<i32>,
    next_action: Option<String>,
    follow_ups: Vec<String>,
    last_touched: Option<i32>,
    tags: Vec<String>,
    suggested_category: Option<String>,
    aliases: Vec<String>,
    #[serde(borrow)]
    refers_to: Vec<&'a str>,
    /// Its links, in the form [`encode_links`] gives them: read only when needed.
    #[serde(borrow)]
    links: SavedBytes<'a>,
}

/// Bytes written as one byte string, and read in place.
struct SavedBytes<'a>(std::borrow::Cow<'a, [u8]>);

impl Serialize for SavedBytes<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for SavedBytes<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&'de [u8]>::deserialize(deserializer).map(|bytes| SavedBytes(std::borrow::Cow::Borrowed(bytes)))
    }
}

impl<'a> SavedEntry<'a> {
    fn of(path: &'a EntryPath, known: &'a KnownEntry) -> SavedEntry<'a> {
        let record = &known.record;
        SavedEntry {
            path: path.as_str(),
            mtime_ns: known.stamp.mtime_ns,
            size: known.stamp.size,
            name: record.summary.name.clone(),
            status: record.summary.status.clone(),
            updated_at: record.summary.updated_at.map(instant),
            summary: record.summary.summary.clone(),
            created_at: record.created_at.map(instant),
            due_date: record.due_date.map(|d| chrono::Datelike::num_days_from_ce(&d)),
            next_action: record.next_action.clone(),
            follow_ups: record.follow_ups.clone(),
            last_touched: record.last_touched.map(|d| chrono::Datelike::num_days_from_ce(&d)),
            tags: record.tags.clone(),
            suggested_category: record.suggested_category.clone(),
            aliases: record.aliases.clone(),
            refers_to: known.refers_to.iter().map(EntryPath::as_str).collect(),
            links: SavedBytes(match &known.links {
                NoteLinks::Saved(bytes) => std::borrow::Cow::Borrowed(bytes),
                NoteLinks::Parsed(links) => std::borrow::Cow::Owned(encode_links(links)),
            }),
        }
    }

    /// The entry back, `None` when a path in it is not valid (a damaged file).
    fn known(self) -> Option<(EntryPath, KnownEntry)> {
        let path = EntryPath::parse(self.path).ok()?;
        let refers_to: BTreeSet<EntryPath> =
            self.refers_to.iter().map(|p| EntryPath::parse(p).ok()).collect::<Option<_>>()?;
        let record = CatalogueEntry {
            summary: EntrySummary {
                path: path.clone(),
                category: path.category(),
                name: self.name,
                status: self.status,
                updated_at: self.updated_at.and_then(from_instant),
                summary: self.summary,
            },
            created_at: self.created_at.and_then(from_instant),
            due_date: self.due_date.and_then(NaiveDate::from_num_days_from_ce_opt),
            next_action: self.next_action,
            follow_ups: self.follow_ups,
            last_touched: self.last_touched.and_then(NaiveDate::from_num_days_from_ce_opt),
            tags: self.tags,
            suggested_category: self.suggested_category,
            aliases: self.aliases,
        };
        let links = match self.links.0.as_ref() {
            [] => NoteLinks::Parsed(Vec::new()),
            bytes => NoteLinks::Saved(bytes.into()),
        };
        let stamp = Stamp::new(self.mtime_ns, self.size);
        Some((path, KnownEntry { record: std::sync::Arc::new(record), refers_to, links, stamp }))
    }
}

/// A moment as seconds and nanoseconds since the Unix epoch.
fn instant(at: DateTime<Utc>) -> (i64, u32) {
    (at.timestamp(), at.timestamp_subsec_nanos())
}

fn from_instant((secs, nanos): (i64, u32)) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp(secs, nanos)
}

#[cfg(test)]
mod tests {
    use kb_domain::Entry;

    use super::*;

    fn known(path: &str, name: &str) -> (EntryPath, KnownEntry) {
        let path = EntryPath::parse(path).unwrap();
        let text = format!("---\nname: {name}\n---\nSee [[Ada]].\n");
        let entry = Entry::from_document(path.clone(), &text).unwrap();
        (path, KnownEntry::read(&entry, Stamp::new(1_000_000_000, 40)))
    }

    fn name_of(taken: Taken) -> Option<String> {
        match taken {
            Taken::Current(entry) => Some(entry.record.summary.name.clone()),
            _ => None,
        }
    }

    /// Entries saved in any order come back by path, each taken once, whatever order they
    /// are asked for in; what is not taken is what is gone.
    #[test]
    fn entries_are_taken_once_in_any_order() {
        let dir = tempfile::tempdir().unwrap();
        let entries = [known("people/cy.md", "Cy"), known("ideas/b.md", "B"), known("admin/a.md", "A")];
        save(dir.path(), &entries, &[], SystemTime::now()).unwrap();
        let mut saved = SavedCatalogue::load(dir.path());
        assert_eq!(saved.len(), 3);
        let stamp = Stamp::new(1_000_000_000, 40);
        let path = |p: &str| EntryPath::parse(p).unwrap();
        assert_eq!(name_of(saved.take(&path("people/cy.md"), stamp)), Some("Cy".to_string()));
        assert_eq!(name_of(saved.take(&path("admin/a.md"), stamp)), Some("A".to_string()));
        assert!(matches!(saved.take(&path("admin/a.md"), stamp), Taken::Changed), "taken twice");
        assert!(matches!(saved.take(&path("admin/zz.md"), stamp), Taken::Changed), "never saved");
        assert_eq!(saved.len(), 1, "ideas/b.md is left: gone from the vault");
        assert!(matches!(saved.take(&path("ideas/b.md"), Stamp::new(2_000_000_000, 40)), Taken::Changed));
        assert_eq!(saved.len(), 0);
        // The links come back with their lines.
        let mut again = SavedCatalogue::load(dir.path());
        let Taken::Current(entry) = again.take(&path("ideas/b.md"), stamp) else { panic!("not current") };
        let links = entry.links.parsed();
        assert_eq!(links.len(), 1);
        assert_eq!(links[0].1, "See [[Ada]].");
    }

    /// A catalogue whose entries are not in order of path (damaged, or written by hand) is
    /// not used: every file is read instead.
    #[test]
    fn entries_out_of_order_are_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let entries = [known("people/cy.md", "Cy"), known("people/a.md", "A")];
        let saved = SavedFile {
            format: FORMAT,
            kb_version: env!("CARGO_PKG_VERSION").to_string(),
            saved_at_ns: nanos(SystemTime::now()),
            entries: entries.iter().map(|(path, entry)| SavedEntry::of(path, entry)).collect(),
            malformed: Vec::new(),
        };
        std::fs::write(dir.path().join(CATALOGUE_FILE), postcard::to_stdvec(&saved).unwrap()).unwrap();
        assert_eq!(SavedCatalogue::load(dir.path()).len(), 0);
    }

    /// A catalogue naming a path that is not a note's (`../x.md`: damaged, or written by
    /// hand) is not used at all, not even its valid entries.
    #[test]
    fn an_entry_with_an_invalid_path_spoils_the_catalogue() {
        let dir = tempfile::tempdir().unwrap();
        let entries = [known("people/a.md", "A"), known("people/b.md", "B")];
        let mut written: Vec<SavedEntry<'_>> =
            entries.iter().map(|(path, entry)| SavedEntry::of(path, entry)).collect();
        written[1].path = "../b.md";
        let saved = SavedFile {
            format: FORMAT,
            kb_version: env!("CARGO_PKG_VERSION").to_string(),
            saved_at_ns: nanos(SystemTime::now()),
            entries: written,
            malformed: Vec::new(),
        };
        std::fs::write(dir.path().join(CATALOGUE_FILE), postcard::to_stdvec(&saved).unwrap()).unwrap();
        assert_eq!(SavedCatalogue::load(dir.path()).len(), 0);
        // The same entries with valid paths are used.
        save(dir.path(), &entries, &[], SystemTime::now()).unwrap();
        assert_eq!(SavedCatalogue::load(dir.path()).len(), 2);
    }
}
