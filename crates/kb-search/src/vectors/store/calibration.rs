//! How this store's vault scores queries on nothing it holds: the vectors of a fixed set of
//! such queries ([`crate::vectors::UNRELATED_QUERIES`]), kept in the file, and the share of
//! the room above its typical score that the best part reaches for them.
//!
//! Every part is somewhat similar to any query, and how much the best of many unrelated
//! parts stands out depends on the model, on how many parts there are and on how alike the
//! vault's notes are: measured here on the vault itself, it sets the cut of matches by
//! meaning. The second highest of the queries' shares is taken, so that one query the
//! vault happens to be about (a beekeeper's vault and the query on bees) does not raise
//! the cut.

use super::{Store, StoreError, UNRELATED, push_record};

/// A measure is taken again once the entries' parts changed by this share of those it was
/// taken with (or by any number, under [`SMALL`] parts).
const REMEASURE_SHARE: usize = 16;
/// Fewer parts than this are measured again at every change: it costs little.
const SMALL: usize = 1_024;
/// Fewer parts than this are not measured: with a handful, the best part is the median
/// itself, and the measure says nothing.
const MIN_MEASURED: usize = 16;

/// The unrelated queries' vectors and the last measure taken with them.
#[derive(Debug, Default)]
pub(super) struct Unrelated {
    /// The vectors, one per query.
    vectors: Vec<Vec<f32>>,
    /// The parts the last measure was taken with, and the share it found.
    measured: Option<(usize, f32)>,
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
        true
    }

    /// The payload of the unrelated-queries record, when there are vectors.
    pub(super) fn unrelated_payload(&self) -> Option<Vec<u8>> {
        self.has_unrelated()
            .then(|| self.unrelated.vectors.iter().flatten().flat_map(|x| x.to_le_bytes()).collect())
    }

    /// How far above its typical score the best part of this store lands for a query on
    /// nothing it holds, as a share of the room above the typical score (see the module
    /// doc); `None` without the queries' vectors, with fewer than two of them, or with
    /// fewer than `MIN_MEASURED` parts.
    pub fn unrelated_share(&mut self) -> Option<f32> {
        let rows = self.live_parts();
        if rows < MIN_MEASURED {
            return None;
        }
        if let Some((measured_rows, share)) = self.unrelated.measured {
            let changed = rows.abs_diff(measured_rows);
            let small = measured_rows < SMALL && changed == 0;
            if small || (measured_rows >= SMALL && changed * REMEASURE_SHARE <= measured_rows) {
                return Some(share);
            }
        }
        let mut shares: Vec<f32> = self
            .unrelated
            .vectors
            .iter()
            .filter_map(|query| {
                let typical = self.typical_score(query)?;
                let best = self.nearest(query, 1, |_| true).first()?.score;
                Some(((best - typical) / (1.0 - typical).max(f32::EPSILON)).max(0.0))
            })
            .collect();
        if shares.len() < 2 {
            return None;
        }
        shares.sort_by(|a, b| b.total_cmp(a));
        let share = shares[1];
        self.unrelated.measured = Some((rows, share));
        Some(share)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use kb_domain::{EntryPath, Stamp};

    use super::super::{EntryRecord, Key, Store};

    fn unit(values: &[f32]) -> Vec<f32> {
        let norm = values.iter().map(|x| x * x).sum::<f32>().sqrt();
        values.iter().map(|x| x / norm).collect()
    }

    /// A store of `count` entries, one part each, spread over the first two axes.
    fn store_of(file: &std::path::Path, count: u8) -> Store {
        let mut store = Store::open(file).unwrap();
        let vectors: Vec<(Key, Vec<f32>)> = (0..count)
            .map(|n| ([n; 16], unit(&[f32::from(n) + 1.0, f32::from(count) - f32::from(n), 0.5])))
            .collect();
        let entries: Vec<EntryRecord> = (0..count)
            .map(|n| EntryRecord {
                path: EntryPath::parse(&format!("ideas/e{n}.md")).unwrap(),
                stamp: Stamp::new(1, 2),
                parts: vec![[n; 16]],
            })
            .collect();
        store.append(&vectors, &entries).unwrap();
        store
    }

    /// A store of twenty entries.
    fn store(file: &std::path::Path) -> Store {
        store_of(file, 20)
    }

    #[test]
    fn the_share_is_the_second_highest_of_the_unrelated_queries() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.vec");
        let mut owner = store(&file);
        assert!(!owner.has_unrelated());
        assert_eq!(owner.unrelated_share(), None, "not measured before the queries are kept");
        // One query the vault is about (an entry's own direction), two on nothing in it.
        let about = unit(&[10.0, 11.0, 0.5]);
        let far = [unit(&[0.1, 0.2, 1.0]), unit(&[0.3, 0.1, 1.0])];
        owner.keep_unrelated(&[about.clone(), far[0].clone(), far[1].clone()]).unwrap();
        let share = owner.unrelated_share().unwrap();
        let measure = |query: &[f32]| {
            let typical = owner.typical_score(query).unwrap();
            let best = owner.nearest(query, 1, |_| true)[0].score;
            (best - typical) / (1.0 - typical)
        };
        let (own, first, second) = (measure(&about), measure(&far[0]), measure(&far[1]));
        assert!(own > first.max(second), "the query the vault is about stands out: {own} {first} {second}");
        assert!((share - first.max(second)).abs() < 1e-6, "{share} {first} {second}");
        // Another process reads them from the file.
        let mut other = Store::open(&file).unwrap();
        assert!(other.has_unrelated());
        assert!((other.unrelated_share().unwrap() - share).abs() < 1e-6);
    }

    #[test]
    fn a_handful_of_parts_is_not_measured_and_removed_entries_do_not_count() {
        let dir = tempfile::tempdir().unwrap();
        let queries = [unit(&[0.1, 0.2, 1.0]), unit(&[0.3, 0.1, 1.0])];
        // Two entries: the best part is the median itself, and every query would match.
        let mut few = store_of(&dir.path().join("few.vec"), 2);
        few.keep_unrelated(&queries).unwrap();
        assert_eq!(few.unrelated_share(), None);
        // Twenty, then all but three removed: measured, then no longer.
        let mut shrunk = store(&dir.path().join("shrunk.vec"));
        shrunk.keep_unrelated(&queries).unwrap();
        assert!(shrunk.unrelated_share().is_some());
        let gone: Vec<EntryRecord> = (3..20_u8)
            .map(|n| EntryRecord {
                path: EntryPath::parse(&format!("ideas/e{n}.md")).unwrap(),
                stamp: Stamp::new(1, 3),
                parts: Vec::new(),
            })
            .collect();
        shrunk.append(&[], &gone).unwrap();
        assert_eq!(shrunk.live_parts(), 3);
        assert_eq!(shrunk.unrelated_share(), None, "the removed entries' vectors are not measured");
    }

    #[test]
    fn queries_of_another_size_are_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut owner = store(&dir.path().join("m.vec"));
        owner.keep_unrelated(&[vec![1.0, 0.0], vec![0.0, 1.0]]).unwrap();
        assert!(!owner.has_unrelated());
    }
}
