//! How this store's vault scores queries on nothing it holds: the vectors of a fixed set of
//! such queries ([`crate::vectors::UNRELATED_QUERIES`]), kept in the file, and how high
//! the best part lands for them — the [`Chance`] a part scores by without being about the
//! query.
//!
//! Every part is somewhat similar to any query, and how much the best of many unrelated
//! parts stands out depends on the model, on how many parts there are and on how alike the
//! vault's notes are: measured here on the vault itself, it sets the cut of matches by
//! meaning. The second highest of the queries' measures is taken, so that one query the
//! vault happens to be about (a beekeeper's vault and the query on bees) does not raise
//! the cut.
//!
//! Two measures are taken. The share: how far above the query's own median the best part
//! lands, as a share of the room above the median — it follows each query's scores (a
//! query of punctuation or emoji scores high against every note, and its median with it).
//! And, in a vault under [`SMALL`] parts, the score itself: the best score an unrelated
//! query reaches over exactly these parts, which e5 places close under a loose paraphrase
//! while the share of a median of a few dozen parts moves with each query. A larger
//! vault's best unrelated score grows with its parts and with what its notes touch, while
//! the share holds: it is measured by the share alone.

use super::{Store, StoreError, UNRELATED, push_record};

/// A share is measured again once the entries' parts changed by this share of those it
/// was taken with (under [`SMALL`] parts, at any change of the file).
const REMEASURE_SHARE: usize = 16;
/// Fewer parts than this are measured again at every change (it costs little), and by
/// their best score too (see the module doc).
const SMALL: usize = 1_024;
/// Fewer parts than this are not measured by share: with one or two, the best part is the
/// median itself.
const MIN_SHARE_PARTS: usize = 3;

/// The file as read: its identity and the length read (any change to it changes this).
type FileState = (Option<(u64, u64)>, u64);

/// How high the vault's best part scores for queries on nothing it holds: the second
/// highest of the unrelated queries' measures.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Chance {
    /// The best part's score itself (a vault of fewer than [`SMALL`] parts).
    pub score: Option<f32>,
    /// How far above the query's typical score the best part lands, as a share of the
    /// room above it (from [`MIN_SHARE_PARTS`] parts).
    pub share: Option<f32>,
}

/// The unrelated queries' vectors and the last measure taken with them.
#[derive(Debug, Default)]
pub(super) struct Unrelated {
    /// The vectors, one per query.
    vectors: Vec<Vec<f32>>,
    /// The parts the last share was measured with, the file as read then, and the share.
    measured: Option<(usize, FileState, f32)>,
    /// The file as read when the last score was measured, and the score.
    scored: Option<(FileState, f32)>,
}

impl Store {
    /// Whether the unrelated queries' vectors are kept.
    pub fn has_unrelated(&self) -> bool {
        !self.unrelated.vectors.is_empty()
    }

    /// Keeps the vectors of the unrelated queries (each of the store's dimension; the
    /// index's owner only). Vectors of another size are refused.
    pub fn keep_unrelated(&mut self, vectors: &[Vec<f32>]) -> Result<(), StoreError> {
        self.refresh()?;
        let dimension = vectors.first().map_or(0, Vec::len);
        if dimension == 0 || vectors.iter().any(|v| v.len() != dimension) {
            return Ok(());
        }
        if self.dimension != 0 && self.dimension != dimension {
            return Ok(());
        }
        let payload: Vec<u8> = vectors.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
        let mut record = Vec::new();
        push_record(&mut record, UNRELATED, &payload);
        self.write(dimension, &record)
    }

    /// Takes in an unrelated-queries record; `false` when it does not parse.
    pub(super) fn read_unrelated(&mut self, payload: &[u8]) -> bool {
        let width = self.dimension * 4;
        if width == 0 || payload.is_empty() || !payload.len().is_multiple_of(width) {
            return false;
        }
        self.unrelated.vectors = payload
            .chunks_exact(width)
            .map(|vector| {
                vector.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
            })
            .collect();
        self.unrelated.measured = None;
        self.unrelated.scored = None;
        true
    }

    /// The payload of the unrelated-queries record, when there are vectors.
    pub(super) fn unrelated_payload(&self) -> Option<Vec<u8>> {
        self.has_unrelated()
            .then(|| self.unrelated.vectors.iter().flatten().flat_map(|x| x.to_le_bytes()).collect())
    }

    /// How high the best part of this store scores for a query on nothing it holds (see
    /// the module doc); `None` without the queries' vectors, with fewer than two of them,
    /// or without a part.
    pub fn chance(&mut self) -> Option<Chance> {
        let rows = self.live_parts();
        if rows == 0 || self.unrelated.vectors.len() < 2 {
            return None;
        }
        let score = if rows < SMALL { self.score() } else { None };
        let share = if rows >= MIN_SHARE_PARTS { self.share(rows) } else { None };
        (score.is_some() || share.is_some()).then_some(Chance { score, share })
    }

    /// The second highest of the unrelated queries' best scores, measured again whenever
    /// the file changed.
    fn score(&mut self) -> Option<f32> {
        let now = (self.file_id, self.read_to);
        if let Some((then, score)) = self.unrelated.scored
            && then == now
        {
            return Some(score);
        }
        let score =
            self.second_highest(|store, query| Some(store.nearest(query, 1, |_| true).first()?.score))?;
        self.unrelated.scored = Some((now, score));
        Some(score)
    }

    /// The second highest of the unrelated queries' shares, measured again as the module
    /// doc says.
    fn share(&mut self, rows: usize) -> Option<f32> {
        let now = (self.file_id, self.read_to);
        if let Some((measured_rows, then, share)) = self.unrelated.measured {
            let changed = rows.abs_diff(measured_rows);
            let small = measured_rows < SMALL && then == now;
            if small || (measured_rows >= SMALL && changed * REMEASURE_SHARE <= measured_rows) {
                return Some(share);
            }
        }
        let share = self.second_highest(|store, query| {
            let typical = store.typical_score(query)?;
            let best = store.nearest(query, 1, |_| true).first()?.score;
            Some(((best - typical) / (1.0 - typical).max(f32::EPSILON)).max(0.0))
        })?;
        self.unrelated.measured = Some((rows, now, share));
        Some(share)
    }

    /// The second highest of `measure` over the unrelated queries; `None` with fewer than
    /// two measures.
    fn second_highest(&self, measure: impl Fn(&Self, &[f32]) -> Option<f32>) -> Option<f32> {
        let mut measures: Vec<f32> =
            self.unrelated.vectors.iter().filter_map(|query| measure(self, query)).collect();
        if measures.len() < 2 {
            return None;
        }
        measures.sort_by(|a, b| b.total_cmp(a));
        Some(measures[1])
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use kb_domain::{EntryPath, Stamp};

    use super::super::{EntryRecord, Key, Store};
    use super::{Chance, SMALL};

    fn unit(values: &[f32]) -> Vec<f32> {
        let norm = values.iter().map(|x| x * x).sum::<f32>().sqrt();
        values.iter().map(|x| x / norm).collect()
    }

    fn key(n: usize) -> Key {
        let mut key = [0; 16];
        key[..8].copy_from_slice(&(n as u64).to_le_bytes());
        key
    }

    /// A store of `count` entries, one part each, spread over the first two axes.
    fn store_of(file: &std::path::Path, count: usize) -> Store {
        let mut store = Store::open(file).unwrap();
        let vectors: Vec<(Key, Vec<f32>)> =
            (0..count).map(|n| (key(n), unit(&[n as f32 + 1.0, (count - n) as f32, 0.5]))).collect();
        let entries: Vec<EntryRecord> = (0..count).map(|n| record(n, vec![key(n)])).collect();
        store.append(&vectors, &entries).unwrap();
        store
    }

    /// The record of entry `n` with `parts` (none: removed).
    fn record(n: usize, parts: Vec<Key>) -> EntryRecord {
        EntryRecord {
            path: EntryPath::parse(&format!("ideas/e{n}.md")).unwrap(),
            stamp: Stamp::new(1, 2),
            parts,
        }
    }

    /// A measure of `query` over `store`: its best part's score and its share of the room
    /// above the typical score.
    fn measures(store: &Store, query: &[f32]) -> (f32, f32) {
        let typical = store.typical_score(query).unwrap();
        let best = store.nearest(query, 1, |_| true)[0].score;
        (best, (best - typical) / (1.0 - typical))
    }

    /// One query the vault is about (an entry's own direction), three on nothing in it.
    fn queries() -> [Vec<f32>; 4] {
        [unit(&[10.0, 11.0, 0.5]), unit(&[0.1, 0.2, 1.0]), unit(&[0.3, 0.1, 1.0]), unit(&[0.2, 0.2, 1.0])]
    }

    /// The second highest of `values`.
    fn second(mut values: Vec<f32>) -> f32 {
        values.sort_by(|a, b| b.total_cmp(a));
        values[1]
    }

    #[test]
    fn a_vault_is_measured_by_the_second_highest_score_and_share() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.vec");
        let mut owner = store_of(&file, 80);
        assert!(!owner.has_unrelated());
        assert_eq!(owner.chance(), None, "not measured before the queries are kept");
        let queries = queries();
        owner.keep_unrelated(&queries).unwrap();
        let chance = owner.chance().unwrap();
        let scores: Vec<f32> = queries.iter().map(|q| measures(&owner, q).0).collect();
        let shares: Vec<f32> = queries.iter().map(|q| measures(&owner, q).1).collect();
        assert!(shares[0] > shares[1..].iter().copied().fold(0.0, f32::max), "{shares:?}");
        assert!((chance.share.unwrap() - second(shares)).abs() < 1e-6, "{chance:?}");
        assert!((chance.score.unwrap() - second(scores)).abs() < 1e-6, "{chance:?}");
        // Another process reads them from the file.
        let mut other = Store::open(&file).unwrap();
        assert!(other.has_unrelated());
        assert_eq!(other.chance(), Some(chance));
    }

    #[test]
    fn a_large_vault_is_measured_by_share_alone() {
        let dir = tempfile::tempdir().unwrap();
        let mut large = store_of(&dir.path().join("large.vec"), SMALL);
        large.keep_unrelated(&queries()).unwrap();
        let chance = large.chance().unwrap();
        assert_eq!(chance.score, None);
        assert!(chance.share.is_some());
    }

    #[test]
    fn removed_entries_do_not_count_and_one_or_two_parts_have_no_share() {
        let dir = tempfile::tempdir().unwrap();
        let queries = queries();
        let mut shrunk = store_of(&dir.path().join("shrunk.vec"), 80);
        shrunk.keep_unrelated(&queries).unwrap();
        let before = shrunk.chance().unwrap();
        // All but three removed: measured again over the three left.
        let gone: Vec<EntryRecord> = (3..80).map(|n| record(n, Vec::new())).collect();
        shrunk.append(&[], &gone).unwrap();
        assert_eq!(shrunk.live_parts(), 3);
        let after = shrunk.chance().unwrap();
        assert_ne!(after, before);
        let best = second(queries.iter().map(|q| measures(&shrunk, q).0).collect());
        assert!((after.score.unwrap() - best).abs() < 1e-6, "{after:?}");
        // A fresh store of the same three entries measures the same.
        let mut fresh = store_of(&dir.path().join("fresh.vec"), 80);
        fresh.keep_unrelated(&queries).unwrap();
        fresh.append(&[], &gone).unwrap();
        assert_eq!(fresh.chance(), shrunk.chance());
        // One entry: a score, no share.
        let mut one = store_of(&dir.path().join("one.vec"), 1);
        one.keep_unrelated(&queries).unwrap();
        assert!(matches!(one.chance(), Some(Chance { score: Some(_), share: None })));
    }

    #[test]
    fn queries_of_another_size_are_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut owner = store_of(&dir.path().join("m.vec"), 20);
        owner.keep_unrelated(&[vec![1.0, 0.0], vec![0.0, 1.0]]).unwrap();
        assert!(!owner.has_unrelated());
    }
}
