//! [`Store`]: the vectors of one embedding model, kept in `.kb/vectors/` as an append-only
//! file, and their nearest-neighbour scan.
//!
//! The file is derived data (deleting it re-embeds everything) and written by one process
//! at a time, the search index's owner; the others read what it appended since they last
//! looked. It starts with a header (`KBVECS02`, then the dimension as a little-endian
//! `u32`) and holds records, each a `u32` payload length, a kind byte and the payload:
//! - a **vector**: the 16-byte key of the text it embeds, a `f32` scale and the dimension's
//!   `i8`s (the unit vector quantised: each number is `scale × i8`);
//! - an **entry**: the file stamp it was read with, its path and the keys of its parts,
//!   in order (no part: the entry is gone);
//! - a **probe**: the vector the server gave a fixed text (see [`Store::check_probe`]),
//!   as `f32`s: a server that answers another vector for it is another model, whatever its
//!   name, and the file starts again rather than mix two models' vectors;
//! - the **unrelated queries**: the vectors of queries on nothing in particular, as `f32`s
//!   one after the other, which calibrate the cut of matches by meaning ([`calibration`]).
//!
//! A vector is kept by its text's key, so a part that did not change is never embedded
//! again (a restart, a reindex, a move, another process). A later entry record replaces
//! an earlier one; a record cut short (a crash while appending) ends the file and the
//! next owner cuts it off. Records no entry uses any more are dropped when the owner
//! rewrites the file, once they outnumber the ones in use.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use kb_domain::{EntryPath, Stamp};

pub use calibration::Chance;
use format::{
    ENTRY, HEADER_LEN, MAGIC, PROBE, Reader, UNRELATED, VECTOR, push_record, read_entry, record_at,
    write_entry,
};
use scan::{quantise, signs_of};

mod calibration;
mod format;
mod scan;

/// A search by meaning ranks by their vectors this many times the entries asked for,
/// chosen by their signs first (see [`Store::nearest`]).
pub const SHORTLIST_FACTOR: usize = 20;
/// ... and at least this many.
pub const SHORTLIST_MIN: usize = 1_000;
/// Rewrite the file when it holds more unused records than this and than those in use.
const REWRITE_AFTER: usize = 1_000;
/// The least cosine similarity of two probe vectors of one model: a server gives the same
/// text the same vector but for rounding (another machine, another batch); another model
/// gives another.
const SAME_PROBE: f32 = 0.99;

/// The key of a text: the first 16 bytes of its SHA-256 (with the model's identity).
pub type Key = [u8; 16];

/// Hashes [`Key`]s for the map of rows: they are digests already, so their words are
/// mixed (as FxHash does) rather than hashed again with SipHash, which took a tenth of the
/// time a process spends reading a vector file.
type BuildKeyHasher = std::hash::BuildHasherDefault<KeyHasher>;

/// See [`BuildKeyHasher`].
#[derive(Debug, Default)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0_u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 =
                (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
}

/// An entry whose parts have vectors.
#[derive(Debug, Clone)]
pub struct Kept {
    /// The stamp of the file it was read from.
    pub stamp: Stamp,
    /// Where the rows of its parts' vectors start in [`Store::part_rows`].
    first: u32,
    /// How many parts it has.
    count: u32,
}

/// An entry to record: its path, text key, stamp and parts' keys.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryRecord {
    /// The entry.
    pub path: EntryPath,
    /// The stamp it was read with.
    pub stamp: Stamp,
    /// Its parts' keys, in order (none: the entry is gone).
    pub parts: Vec<Key>,
}

/// One nearest entry: its path, the similarity of its nearest part, and which part.
#[derive(Debug, Clone, PartialEq)]
pub struct Near {
    /// The entry.
    pub path: EntryPath,
    /// The cosine similarity of its nearest part to the query.
    pub score: f32,
    /// Which part (0 is the first).
    pub part: usize,
}

/// What the check of a probe vector against the one the vectors were made with found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeCheck {
    /// The file had no probe: this one is kept (its vectors are taken as this model's).
    Recorded,
    /// The file's vectors are this model's.
    Same,
    /// The file held another model's vectors (or of another size): it starts again.
    StartedAgain,
}

/// Why the vector file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Reading or writing the file failed.
    #[error("vector file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// Vectors of another length than the file's.
    #[error(
        "the embedding server answered vectors of {got} numbers, but those kept for this model have {kept}: \
         delete {path} to start again with the new size"
    )]
    Dimension {
        /// The file.
        path: PathBuf,
        /// The file's dimension.
        kept: usize,
        /// The answer's.
        got: usize,
    },
}

/// The vectors of one model, as this process last read them.
#[derive(Debug)]
pub struct Store {
    /// The file.
    path: PathBuf,
    /// The vectors' length (0 until the first is kept).
    dimension: usize,
    /// Every vector read, row after row.
    values: Vec<i8>,
    /// Each row's scale.
    scales: Vec<f32>,
    /// Each row's signs, a bit per number (set: above the centre's), in whole `u64`s: the
    /// coarse first pass of a search compares these.
    signs: Vec<u64>,
    /// The mean of the rows when the signs were last taken (empty: none yet). Signs are
    /// taken around it: a model's vectors share a large common part, and signs around zero
    /// would mostly tell that part.
    centre: Vec<f32>,
    /// How many rows there were then: the signs are taken again around a new mean each
    /// time the rows double.
    centred_rows: usize,
    /// The row of each key.
    rows: HashMap<Key, u32, BuildKeyHasher>,
    /// The slot of each entry with vectors in `slots`.
    entries: HashMap<EntryPath, usize>,
    /// The entries with vectors, in no order, without gaps: a search walks them in the
    /// order of memory.
    slots: Vec<(EntryPath, Kept)>,
    /// The rows of the entries' parts, each entry's in a run ([`Kept::first`]); an entry
    /// recorded again gets a new run (the old one stays unused until the file is
    /// rewritten and read again).
    part_rows: Vec<u32>,
    /// Where the last whole record read ends.
    read_to: u64,
    /// The file read (device and inode): another one means it was rewritten.
    file_id: Option<(u64, u64)>,
    /// Records read that a later one replaced or no entry uses.
    superseded: usize,
    /// The vector of the probe text, when recorded.
    probe: Option<Vec<f32>>,
    /// The vectors of the unrelated queries, and what they last measured.
    unrelated: calibration::Unrelated,
}

impl Store {
    /// The store kept in `path`, read as far as it goes (empty when there is no file).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let mut store = Store::empty(path);
        store.refresh()?;
        Ok(store)
    }

    /// A store of `path` with nothing read.
    fn empty(path: &Path) -> Store {
        Store {
            path: path.to_path_buf(),
            dimension: 0,
            values: Vec::new(),
            scales: Vec::new(),
            signs: Vec::new(),
            centre: Vec::new(),
            centred_rows: 0,
            rows: HashMap::default(),
            entries: HashMap::new(),
            slots: Vec::new(),
            part_rows: Vec::new(),
            read_to: 0,
            file_id: None,
            superseded: 0,
            probe: None,
            unrelated: calibration::Unrelated::default(),
        }
    }

    /// Reads what was appended since the last read (all of it again when the file was
    /// rewritten or replaced).
    pub fn refresh(&mut self) -> Result<(), StoreError> {
        let mut file = match File::open(&self.path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                if self.file_id.is_some() {
                    *self = Store::empty(&self.path);
                }
                return Ok(());
            }
            Err(source) => return Err(self.io(source)),
        };
        let meta = file.metadata().map_err(|e| self.io(e))?;
        let id = (meta.dev(), meta.ino());
        if self.file_id.is_some_and(|known| known != id) || meta.len() < self.read_to {
            *self = Store::empty(&self.path);
        }
        self.file_id = Some(id);
        if meta.len() == self.read_to {
            return Ok(());
        }
        let start = self.read_to;
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len() - start).unwrap_or(0));
        file.seek(SeekFrom::Start(start)).map_err(|e| self.io(e))?;
        file.read_to_end(&mut bytes).map_err(|e| self.io(e))?;
        let mut at = 0;
        if start == 0 {
            if bytes.len() < HEADER_LEN as usize || &bytes[..8] != MAGIC {
                // Not a vector file of this version, or its header is cut: nothing is kept
                // (the owner starts the file again).
                return Ok(());
            }
            self.dimension = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize;
            at = HEADER_LEN as usize;
            self.read_to = HEADER_LEN;
        }
        self.read_to = start + self.apply_all(&bytes, at) as u64;
        self.recentre_if_grown();
        Ok(())
    }

    /// Takes in the records of `bytes` from `at` on, up to the first cut short or not
    /// parsing; where the last one taken ends.
    fn apply_all(&mut self, bytes: &[u8], mut at: usize) -> usize {
        while let Some((kind, payload, next)) = record_at(bytes, at) {
            if !self.apply(kind, payload) {
                break;
            }
            at = next;
        }
        at
    }

    /// Takes in one record read from the file; `false` when it does not parse (the file
    /// ends there).
    fn apply(&mut self, kind: u8, payload: &[u8]) -> bool {
        let mut reader = Reader(payload);
        match kind {
            VECTOR => {
                let (Some(key), Some(scale), Some(values)) =
                    (reader.key(), reader.f32(), reader.take(self.dimension))
                else {
                    return false;
                };
                if self.dimension == 0 || !reader.0.is_empty() {
                    return false;
                }
                self.push_row(key, scale, values.iter().map(|b| *b as i8));
                true
            }
            ENTRY => {
                let Some(record) = read_entry(&mut reader) else { return false };
                self.put_entry(record);
                true
            }
            PROBE => {
                let Some(values) = reader.take(self.dimension * 4) else { return false };
                if self.dimension == 0 || !reader.0.is_empty() {
                    return false;
                }
                let values = values.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                self.probe = Some(values.collect());
                true
            }
            UNRELATED => self.read_unrelated(payload),
            _ => false,
        }
    }

    /// Keeps a vector for `key` (a key seen before keeps its first row).
    fn push_row(&mut self, key: Key, scale: f32, values: impl Iterator<Item = i8>) {
        if self.rows.contains_key(&key) {
            self.superseded += 1;
            return;
        }
        let row = u32::try_from(self.scales.len()).unwrap_or(u32::MAX);
        let start = self.values.len();
        self.values.extend(values);
        // Before the first mean is taken there is no centre: the signs of every row are
        // taken together once it is (see `recentre_if_grown`).
        if !self.centre.is_empty() {
            let signs: Vec<u64> = signs_of(&self.values[start..], scale, &self.centre).collect();
            self.signs.extend(signs);
        }
        self.scales.push(scale);
        self.rows.insert(key, row);
    }

    /// Records an entry's parts (none: forgets the entry).
    fn put_entry(&mut self, record: EntryRecord) {
        if record.parts.is_empty() {
            if let Some(slot) = self.entries.remove(&record.path) {
                self.slots.swap_remove(slot);
                if let Some((moved, _)) = self.slots.get(slot) {
                    self.entries.insert(moved.clone(), slot);
                }
                self.superseded += 1;
            }
            self.superseded += 1;
            return;
        }
        let rows: Option<Vec<u32>> = record.parts.iter().map(|key| self.rows.get(key).copied()).collect();
        let Some(rows) = rows else { return };
        let (Ok(first), Ok(count)) = (u32::try_from(self.part_rows.len()), u32::try_from(rows.len())) else {
            return;
        };
        self.part_rows.extend(rows);
        let kept = Kept { stamp: record.stamp, first, count };
        match self.entries.get(&record.path) {
            Some(slot) => {
                self.slots[*slot].1 = kept;
                self.superseded += 1;
            }
            None => {
                self.entries.insert(record.path.clone(), self.slots.len());
                self.slots.push((record.path, kept));
            }
        }
    }

    /// The rows of `kept`'s parts, in order.
    fn rows_of(&self, kept: &Kept) -> &[u32] {
        &self.part_rows[kept.first as usize..][..kept.count as usize]
    }

    /// The vectors' length (0 before the first).
    pub fn dimension(&self) -> usize {
        self.dimension
    }

    /// Whether a vector is kept for `key`.
    pub fn has(&self, key: &Key) -> bool {
        self.rows.contains_key(key)
    }

    /// What is kept of `path`.
    pub fn entry(&self, path: &EntryPath) -> Option<&Kept> {
        self.entries.get(path).map(|slot| &self.slots[*slot].1)
    }

    /// The entries with vectors.
    pub fn entries(&self) -> impl Iterator<Item = (&EntryPath, &Kept)> {
        self.slots.iter().map(|(path, kept)| (path, kept))
    }

    /// How many vectors are kept (the parts of the entries, and those of earlier versions
    /// until the file is rewritten).
    #[cfg(test)]
    pub fn rows(&self) -> usize {
        self.scales.len()
    }

    /// How many entries have vectors.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// How many parts the entries kept have (rows of removed or changed entries aside).
    pub fn live_parts(&self) -> usize {
        self.slots.iter().map(|(_, kept)| kept.count as usize).sum()
    }

    /// Bytes the vectors take in memory.
    pub fn memory_bytes(&self) -> usize {
        self.values.len()
            + self.scales.len() * 4
            + self.signs.len() * 8
            + self.rows.len() * 24
            + self.part_rows.len() * 4
            + self.centre.len() * 4
    }

    /// Appends `vectors` (text key and numbers) and then `entries` to the file, and keeps
    /// them. Only the index's owner appends. The file is read to its end first (another
    /// owner may have appended before this one took over) and a record cut short is cut
    /// off.
    pub fn append(&mut self, vectors: &[(Key, Vec<f32>)], entries: &[EntryRecord]) -> Result<(), StoreError> {
        self.refresh()?;
        let expected =
            if self.dimension == 0 { vectors.first().map_or(0, |(_, v)| v.len()) } else { self.dimension };
        if let Some(got) = vectors.iter().map(|(_, v)| v.len()).find(|n| *n != expected) {
            return Err(StoreError::Dimension { path: self.path.clone(), kept: expected, got });
        }
        let mut bytes = Vec::new();
        for (key, values) in vectors {
            let (scale, quantised) = quantise(values);
            let mut payload = Vec::with_capacity(20 + quantised.len());
            payload.extend_from_slice(key);
            payload.extend_from_slice(&scale.to_le_bytes());
            payload.extend(quantised.iter().map(|q| *q as u8));
            push_record(&mut bytes, VECTOR, &payload);
        }
        for entry in entries {
            push_record(&mut bytes, ENTRY, &write_entry(entry));
        }
        self.write(expected, &bytes)
    }

    /// Checks that `probe`, the vector the server now gives the probe text, is the one the
    /// file's vectors were made with; the file starts again when it is not (another model
    /// answers under the same name, or vectors of another size), and keeps `probe` when it
    /// has none. Only the index's owner checks.
    pub fn check_probe(&mut self, probe: &[f32]) -> Result<ProbeCheck, StoreError> {
        self.refresh()?;
        let check = match &self.probe {
            Some(kept) if same_model(kept, probe) => return Ok(ProbeCheck::Same),
            Some(_) => ProbeCheck::StartedAgain,
            None if self.dimension != 0 && self.dimension != probe.len() => ProbeCheck::StartedAgain,
            None => ProbeCheck::Recorded,
        };
        let mut record = Vec::new();
        push_record(&mut record, PROBE, &probe_payload(probe));
        if check == ProbeCheck::Recorded {
            self.write(probe.len(), &record)?;
            return Ok(check);
        }
        // A new file in its place, so that the other processes read it from its start
        // (they tell it by its inode), never the new records at the old offsets.
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| self.io(e))?;
        }
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&u32::try_from(probe.len()).unwrap_or(u32::MAX).to_le_bytes());
        bytes.extend_from_slice(&record);
        let temporary = self.path.with_extension("vec.tmp");
        std::fs::write(&temporary, &bytes).map_err(|e| self.io(e))?;
        std::fs::rename(&temporary, &self.path).map_err(|e| self.io(e))?;
        *self = Store::empty(&self.path);
        self.refresh()?;
        Ok(check)
    }

    /// Writes `records` at the end of the file as read (cutting off a record cut short),
    /// and keeps them as if read back. A new file, or one that is not a vector file of
    /// this version, is emptied and gets a header of `dimension` first.
    fn write(&mut self, dimension: usize, records: &[u8]) -> Result<(), StoreError> {
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| self.io(e))?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(|e| self.io(e))?;
        let meta = file.metadata().map_err(|e| self.io(e))?;
        if self.read_to == 0 || meta.len() < HEADER_LEN {
            // A new file, or one that is not a vector file of this version: start again.
            if dimension == 0 {
                return Ok(());
            }
            *self = Store::empty(&self.path);
            file.set_len(0).map_err(|e| self.io(e))?;
            let mut header = MAGIC.to_vec();
            header.extend_from_slice(&u32::try_from(dimension).unwrap_or(u32::MAX).to_le_bytes());
            file.write_all(&header).map_err(|e| self.io(e))?;
            self.dimension = dimension;
            self.read_to = HEADER_LEN;
        } else if meta.len() > self.read_to {
            file.set_len(self.read_to).map_err(|e| self.io(e))?;
        }
        file.seek(SeekFrom::Start(self.read_to)).map_err(|e| self.io(e))?;
        file.write_all(records).map_err(|e| self.io(e))?;
        let meta = file.metadata().map_err(|e| self.io(e))?;
        self.file_id = Some((meta.dev(), meta.ino()));
        // Keep what was written as if read back.
        self.read_to += self.apply_all(records, 0) as u64;
        self.recentre_if_grown();
        Ok(())
    }

    /// Rewrites the file with only what entries use, when unused records outnumber them
    /// (and [`REWRITE_AFTER`]). Only the index's owner rewrites; the others read the new
    /// file whole at their next refresh.
    pub fn compact_if_worth_it(&mut self) -> Result<bool, StoreError> {
        let used: usize = self.slots.iter().map(|(_, kept)| kept.count as usize + 1).sum();
        if self.superseded + self.scales.len().saturating_sub(used) < REWRITE_AFTER.max(used) {
            return Ok(false);
        }
        let mut fresh = Store::empty(&self.path);
        fresh.dimension = self.dimension;
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&u32::try_from(self.dimension).unwrap_or(u32::MAX).to_le_bytes());
        if let Some(probe) = &self.probe {
            push_record(&mut bytes, PROBE, &probe_payload(probe));
            fresh.probe = Some(probe.clone());
        }
        if let Some(payload) = self.unrelated_payload() {
            push_record(&mut bytes, UNRELATED, &payload);
            fresh.read_unrelated(&payload);
        }
        let keys: HashMap<u32, Key> = self.rows.iter().map(|(key, row)| (*row, *key)).collect();
        for (path, kept) in &self.slots {
            let mut parts = Vec::with_capacity(kept.count as usize);
            for row in self.rows_of(kept) {
                let Some(key) = keys.get(row) else { continue };
                parts.push(*key);
                if !fresh.has(key) {
                    let values = self.row(*row).to_vec();
                    let mut payload = key.to_vec();
                    payload.extend_from_slice(&self.scales[*row as usize].to_le_bytes());
                    payload.extend(values.iter().map(|q| *q as u8));
                    push_record(&mut bytes, VECTOR, &payload);
                    fresh.push_row(*key, self.scales[*row as usize], values.into_iter());
                }
            }
            let record = EntryRecord { path: path.clone(), stamp: kept.stamp, parts };
            push_record(&mut bytes, ENTRY, &write_entry(&record));
            fresh.put_entry(record);
        }
        let temporary = self.path.with_extension("vec.tmp");
        std::fs::write(&temporary, &bytes).map_err(|e| self.io(e))?;
        std::fs::rename(&temporary, &self.path).map_err(|e| self.io(e))?;
        let meta = std::fs::metadata(&self.path).map_err(|e| self.io(e))?;
        fresh.read_to = bytes.len() as u64;
        fresh.file_id = Some((meta.dev(), meta.ino()));
        // Its rows were signed around zero as they were kept: around their mean now.
        fresh.recentre_if_grown();
        *self = fresh;
        Ok(true)
    }

    /// The vector of the probe text the file's vectors were made with, when recorded.
    #[cfg(test)]
    pub fn probe(&self) -> Option<&[f32]> {
        self.probe.as_deref()
    }

    /// The error of an I/O failure on the file.
    fn io(&self, source: std::io::Error) -> StoreError {
        StoreError::Io { path: self.path.clone(), source }
    }
}

/// The payload of a probe record.
fn probe_payload(probe: &[f32]) -> Vec<u8> {
    probe.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Whether two probe vectors are one model's: of one length and nearly the same direction.
fn same_model(a: &[f32], b: &[f32]) -> bool {
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    let (na, nb) = (norm(a), norm(b));
    a.len() == b.len() && na > 0.0 && nb > 0.0 && {
        let cosine = a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>() / (na * nb);
        cosine >= SAME_PROBE
    }
}

#[cfg(test)]
mod tests;
