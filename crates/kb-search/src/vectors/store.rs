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
//!   in order (no part: the entry is gone).
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

/// The first bytes of a vector file.
const MAGIC: &[u8; 8] = b"KBVECS02";
/// The header: the magic and the dimension.
const HEADER_LEN: u64 = 12;
/// The kind byte of a vector record.
const VECTOR: u8 = 1;
/// The kind byte of an entry record.
const ENTRY: u8 = 2;
/// The longest record read (a bound against a damaged length).
const MAX_RECORD: u32 = 16 * 1024 * 1024;
/// A search by meaning ranks by their vectors this many times the entries asked for,
/// chosen by their signs first (see [`Store::nearest`]).
pub const SHORTLIST_FACTOR: usize = 20;
/// ... and at least this many.
pub const SHORTLIST_MIN: usize = 1_000;
/// Rewrite the file when it holds more unused records than this and than those in use.
const REWRITE_AFTER: usize = 1_000;

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

    /// Takes the signs again around the rows' mean when the rows doubled since the last
    /// time (once for a file read whole). A file read whole has every row to sign: the rows
    /// are shared among up to four of the processor's cores.
    fn recentre_if_grown(&mut self) {
        let rows = self.scales.len();
        if rows == 0 || rows < self.centred_rows * 2 || self.dimension == 0 {
            return;
        }
        let dimension = self.dimension;
        let (values, scales) = (&self.values, &self.scales);
        let ranges = row_ranges(rows);
        let sums: Vec<Vec<f32>> = on_each(&ranges, |range| {
            let mut sum = vec![0.0_f32; dimension];
            for row in range {
                for (c, q) in sum.iter_mut().zip(&values[row * dimension..][..dimension]) {
                    *c += f32::from(*q) * scales[row];
                }
            }
            sum
        });
        let mut centre = vec![0.0_f32; dimension];
        for sum in &sums {
            centre.iter_mut().zip(sum).for_each(|(c, s)| *c += s);
        }
        centre.iter_mut().for_each(|c| *c /= rows as f32);
        let words = dimension.div_ceil(64);
        let signed: Vec<Vec<u64>> = on_each(&ranges, |range| {
            let mut signs = Vec::with_capacity(range.len() * words);
            for row in range {
                signs.extend(signs_of(&values[row * dimension..][..dimension], scales[row], &centre));
            }
            signs
        });
        self.signs = signed.concat();
        self.centre = centre;
        self.centred_rows = rows;
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

    /// How many entries have vectors.
    pub fn len(&self) -> usize {
        self.entries.len()
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
            let dimension = vectors.first().map_or(self.dimension, |(_, v)| v.len());
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
        file.seek(SeekFrom::Start(self.read_to)).map_err(|e| self.io(e))?;
        file.write_all(&bytes).map_err(|e| self.io(e))?;
        let meta = file.metadata().map_err(|e| self.io(e))?;
        self.file_id = Some((meta.dev(), meta.ino()));
        // Keep what was written as if read back.
        self.read_to += self.apply_all(&bytes, 0) as u64;
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

    /// The numbers of `row`.
    fn row(&self, row: u32) -> &[i8] {
        let start = row as usize * self.dimension;
        &self.values[start..start + self.dimension]
    }

    /// The entries nearest `query` (any length: another is no match), best first, at most
    /// `limit`, among those `keep` accepts.
    ///
    /// Two passes: the signs of every part are compared with the query's (a Hamming
    /// distance, a few instructions a part, over a tenth of the memory), which keeps the
    /// [`SHORTLIST_FACTOR`] × `limit` entries (at least [`SHORTLIST_MIN`]) nearest by
    /// signs; those are then ranked by their 8-bit vectors. With fewer entries than that,
    /// all of them are ranked by their vectors.
    pub fn nearest(&self, query: &[f32], limit: usize, keep: impl Fn(&EntryPath) -> bool) -> Vec<Near> {
        if query.len() != self.dimension || self.dimension == 0 || limit == 0 {
            return Vec::new();
        }
        let (scale, query) = quantise(query);
        let shortlist = (limit * SHORTLIST_FACTOR).max(SHORTLIST_MIN);
        let query_signs: Vec<u64> = signs_of(&query, scale, &self.centre).collect();
        let words = query_signs.len();
        // Every row has its signs once a centre is taken (after each read or append).
        if self.slots.len() <= shortlist || self.signs.len() != self.scales.len() * words {
            return self.rank(&query, scale, self.entries().filter(|(path, _)| keep(path)), limit);
        }
        let distance = |row: &u32| -> u32 {
            let signs = &self.signs[*row as usize * words..][..words];
            signs.iter().zip(&query_signs).map(|(a, b)| (a ^ b).count_ones()).sum()
        };
        // Each entry's nearest part by signs, the entries in the order of memory (and their
        // parts' rows, kept as they were appended, mostly so too).
        let mut coarse: Vec<(u32, usize)> = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, (path, _))| keep(path))
            .map(|(slot, (_, kept))| {
                (self.rows_of(kept).iter().map(distance).min().unwrap_or(u32::MAX), slot)
            })
            .collect();
        if coarse.len() > shortlist {
            coarse.select_nth_unstable(shortlist);
            coarse.truncate(shortlist);
        }
        let shortlisted = coarse.into_iter().map(|(_, slot)| (&self.slots[slot].0, &self.slots[slot].1));
        self.rank(&query, scale, shortlisted, limit)
    }

    /// The best `limit` of `entries` by the 8-bit vectors of their parts.
    fn rank<'a>(
        &self,
        query: &[i8],
        scale: f32,
        entries: impl Iterator<Item = (&'a EntryPath, &'a Kept)>,
        limit: usize,
    ) -> Vec<Near> {
        // Scored by reference; only the paths of those returned are copied. Best first, then
        // by path (a stable order for equal scores).
        let mut scored: Vec<(f32, usize, &EntryPath)> = entries
            .map(|(path, kept)| {
                let mut best = (f32::MIN, 0);
                for (part, row) in self.rows_of(kept).iter().enumerate() {
                    let score = dot(query, self.row(*row)) as f32 * scale * self.scales[*row as usize];
                    if score > best.0 {
                        best = (score, part);
                    }
                }
                (best.0, best.1, path)
            })
            .collect();
        let order = |a: &(f32, usize, &EntryPath), b: &(f32, usize, &EntryPath)| {
            b.0.total_cmp(&a.0).then_with(|| a.2.cmp(b.2))
        };
        if scored.len() > limit {
            scored.select_nth_unstable_by(limit, order);
            scored.truncate(limit);
        }
        scored.sort_by(order);
        scored.into_iter().map(|(score, part, path)| Near { path: path.clone(), score, part }).collect()
    }

    /// The mean of `path`'s parts' vectors, as a unit vector (for its related entries).
    pub fn entry_vector(&self, path: &EntryPath) -> Option<Vec<f32>> {
        let kept = self.entry(path)?;
        let mut sum = vec![0.0_f32; self.dimension];
        for row in self.rows_of(kept) {
            let scale = self.scales[*row as usize];
            for (s, q) in sum.iter_mut().zip(self.row(*row)) {
                *s += f32::from(*q) * scale;
            }
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        (norm > 0.0).then(|| sum.into_iter().map(|x| x / norm).collect())
    }

    /// The error of an I/O failure on the file.
    fn io(&self, source: std::io::Error) -> StoreError {
        StoreError::Io { path: self.path.clone(), source }
    }
}

/// `rows` split into one range per core (at most four), each at least 10,000 rows. The mean
/// is summed per range, so its last bits (and a sign right at it) may differ between
/// machines with other numbers of cores; the ranking by vectors does not.
fn row_ranges(rows: usize) -> Vec<std::ops::Range<usize>> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4);
    let each = rows.div_ceil(cores).max(10_000);
    (0..rows).step_by(each).map(|start| start..(start + each).min(rows)).collect()
}

/// `work` done for each of `ranges`, the first on this thread and the others each on a
/// thread of its own (on this one when the system gives none); the answers in the order of
/// the ranges. A thread that panicked answers nothing: the signs then miss its rows (and
/// searches rank every entry by its vector), or the mean misses them (and the signs are
/// taken around a rougher centre).
fn on_each<T: Send>(
    ranges: &[std::ops::Range<usize>],
    work: impl Fn(std::ops::Range<usize>) -> T + Sync,
) -> Vec<T> {
    let Some((first, others)) = ranges.split_first() else { return Vec::new() };
    let work = &work;
    std::thread::scope(|scope| {
        let spawned: Vec<_> = others
            .iter()
            .map(|range| {
                let for_thread = range.clone();
                std::thread::Builder::new()
                    .name("kb-vectors".into())
                    .spawn_scoped(scope, move || work(for_thread))
                    .map_err(|_| range.clone())
            })
            .collect();
        let mut answers = vec![work(first.clone())];
        for thread in spawned {
            match thread {
                Ok(handle) => answers.extend(handle.join().ok()),
                Err(range) => answers.push(work(range)),
            }
        }
        answers
    })
}

/// The signs of a row's numbers (`values` × `scale`) around `centre` (empty: zero), 64 to
/// a word (set: above).
fn signs_of<'a>(values: &'a [i8], scale: f32, centre: &'a [f32]) -> impl Iterator<Item = u64> + 'a {
    values.chunks(64).enumerate().map(move |(word, chunk)| {
        let centre = centre.get(word * 64..).unwrap_or(&[]);
        let mut bits = 0_u64;
        for (i, value) in chunk.iter().enumerate() {
            let at = centre.get(i).copied().unwrap_or(0.0);
            bits |= u64::from(f32::from(*value) * scale > at) << i;
        }
        bits
    })
}

/// `values` as a unit vector quantised to `i8`s with its scale.
fn quantise(values: &[f32]) -> (f32, Vec<i8>) {
    let norm = values.iter().map(|x| x * x).sum::<f32>().sqrt();
    let largest = values.iter().fold(0.0_f32, |m, x| m.max(x.abs()));
    if norm == 0.0 || largest == 0.0 || !norm.is_finite() {
        return (0.0, vec![0; values.len()]);
    }
    let scale = largest / norm / 127.0;
    let quantised = values.iter().map(|x| (x / norm / scale).round().clamp(-127.0, 127.0) as i8).collect();
    (scale, quantised)
}

/// The dot product of two rows (written so that the compiler vectorises it).
fn dot(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum()
}

/// Appends a record of `kind` holding `payload` to `bytes`.
fn push_record(bytes: &mut Vec<u8>, kind: u8, payload: &[u8]) {
    bytes.extend_from_slice(&u32::try_from(payload.len()).unwrap_or(u32::MAX).to_le_bytes());
    bytes.push(kind);
    bytes.extend_from_slice(payload);
}

/// The record at `at` in `bytes`: its kind, payload and where the next starts; `None`
/// when it is cut short or too long.
fn record_at(bytes: &[u8], at: usize) -> Option<(u8, &[u8], usize)> {
    let head = bytes.get(at..at + 5)?;
    let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    if len > MAX_RECORD {
        return None;
    }
    let end = at + 5 + len as usize;
    Some((head[4], bytes.get(at + 5..end)?, end))
}

/// The payload of an entry record.
fn write_entry(entry: &EntryRecord) -> Vec<u8> {
    let path = entry.path.to_string();
    let mut payload = Vec::with_capacity(28 + path.len() + entry.parts.len() * 16);
    payload.extend_from_slice(&entry.stamp.mtime_ns.to_le_bytes());
    payload.extend_from_slice(&entry.stamp.size.to_le_bytes());
    payload.extend_from_slice(&u32::try_from(path.len()).unwrap_or(u32::MAX).to_le_bytes());
    payload.extend_from_slice(path.as_bytes());
    payload.extend_from_slice(&u32::try_from(entry.parts.len()).unwrap_or(u32::MAX).to_le_bytes());
    for key in &entry.parts {
        payload.extend_from_slice(key);
    }
    payload
}

/// An entry record read back.
fn read_entry(reader: &mut Reader<'_>) -> Option<EntryRecord> {
    let mtime_ns = i64::from_le_bytes(reader.array()?);
    let size = u64::from_le_bytes(reader.array()?);
    let path_len = u32::from_le_bytes(reader.array()?) as usize;
    let path = std::str::from_utf8(reader.take(path_len)?).ok()?;
    let path = EntryPath::parse(path).ok()?;
    let count = u32::from_le_bytes(reader.array()?) as usize;
    let mut parts = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        parts.push(reader.key()?);
    }
    reader.0.is_empty().then_some(EntryRecord { path, stamp: Stamp::new(mtime_ns, size), parts })
}

/// Reads a payload from the front.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    /// The next `n` bytes.
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (taken, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(taken)
    }

    /// The next `N` bytes as an array.
    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    /// The next key.
    fn key(&mut self) -> Option<Key> {
        self.array()
    }

    /// The next little-endian `f32`.
    fn f32(&mut self) -> Option<f32> {
        self.array().map(f32::from_le_bytes)
    }
}

#[cfg(test)]
mod tests;
