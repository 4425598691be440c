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
//! In a small vault the measure is the best part's score itself: a median of a few dozen
//! parts moves with each query, and e5 scores unrelated text as high above it as a loose
//! paraphrase. The queries' best score is what an unrelated query reaches over exactly
//! these parts. In a larger vault, the best score of unrelated text grows with the number
//! of parts and with what the notes happen to touch, while the share of the room above
//! the query's own median holds: the measure is that share.

use super::{Store, StoreError, UNRELATED, push_record};

/// A measure is taken again once the entries' parts changed by this share of those it was
/// taken with (or by any number, under [`SMALL`] parts).
const REMEASURE_SHARE: usize = 16;
/// Fewer parts than this are measured again at every change: it costs little.
const SMALL: usize = 1_024;
/// Under this many parts the measure is a score, from this many on a share (see the
/// module doc). On e5 and hand-written notes, the score finds as many paraphrases as the
/// share up to about a hundred parts and lets far fewer unrelated queries through; on a
/// large vault it cuts too many paraphrases.
const SMALL_VAULT: usize = 64;

/// How high the vault's best part scores for queries on nothing it holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Chance {
    /// The best part's score itself (a vault of fewer than [`SMALL_VAULT`] parts).
    Score(f32),
    /// How far above the query's typical score the best part lands, as a share of the
    /// room above it.
    Share(f32),
}

/// The unrelated queries' vectors and the last measure taken with them.
#[derive(Debug, Default)]
pub(super) struct Unrelated {
    /// The vectors, one per query.
    vectors: Vec<Vec<f32>>,
    /// The parts the last share was measured with, and the share.
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

    /// How high the best part of this store scores for a query on nothing it holds (see
    /// the module doc); `None` without the queries' vectors, with fewer than two of them,
    /// or without a part.
    pub fn chance(&mut self) -> Option<Chance> {
        let rows = self.live_parts();
        if rows == 0 {
            return None;
        }
        if rows < SMALL_VAULT {
            // A few hundred products: measured at every search, never stale.
            let best =
                self.second_highest(|store, query| Some(store.nearest(query, 1, |_| true).first()?.score))?;
            return Some(Chance::Score(best));
        }
        if let Some((measured_rows, share)) = self.unrelated.measured {
            let changed = rows.abs_diff(measured_rows);
            let small = measured_rows < SMALL && changed == 0;
            if small || (measured_rows >= SMALL && changed * REMEASURE_SHARE <= measured_rows) {
                return Some(Chance::Share(share));
            }
        }
        let share = self.second_highest(|store, query| {
            let typical = store.typical_score(query)?;
            let best = store.nearest(query, 1, |_| true).first()?.score;
            Some(((best - typical) / (1.0 - typical).max(f32::EPSILON)).max(0.0))
        })?;
        self.unrelated.measured = Some((rows, share));
        Some(Chance::Share(share))
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
    use super::Chance;

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
    fn a_large_vault_is_measured_by_the_second_highest_share() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.vec");
        let mut owner = store_of(&file, 80);
        assert!(!owner.has_unrelated());
        assert_eq!(owner.chance(), None, "not measured before the queries are kept");
        let queries = queries();
        owner.keep_unrelated(&queries).unwrap();
        let Some(Chance::Share(share)) = owner.chance() else { panic!("{:?}", owner.chance()) };
        let shares: Vec<f32> = queries.iter().map(|q| measures(&owner, q).1).collect();
        assert!(shares[0] > shares[1..].iter().copied().fold(0.0, f32::max), "{shares:?}");
        assert!((share - second(shares)).abs() < 1e-6, "{share}");
        // Another process reads them from the file.
        let mut other = Store::open(&file).unwrap();
        assert!(other.has_unrelated());
        assert_eq!(other.chance(), Some(Chance::Share(share)));
    }

    #[test]
    fn a_small_vault_is_measured_by_its_live_parts_best_scores() {
        let dir = tempfile::tempdir().unwrap();
        let queries = queries();
        let mut shrunk = store_of(&dir.path().join("shrunk.vec"), 80);
        shrunk.keep_unrelated(&queries).unwrap();
        assert!(matches!(shrunk.chance(), Some(Chance::Share(_))));
        // All but three removed: measured again, by score, over the three left.
        let gone: Vec<EntryRecord> = (3..80_u8)
            .map(|n| EntryRecord {
                path: EntryPath::parse(&format!("ideas/e{n}.md")).unwrap(),
                stamp: Stamp::new(1, 3),
                parts: Vec::new(),
            })
            .collect();
        shrunk.append(&[], &gone).unwrap();
        assert_eq!(shrunk.live_parts(), 3);
        let best = second(queries.iter().map(|q| measures(&shrunk, q).0).collect());
        assert_eq!(shrunk.chance(), Some(Chance::Score(best)));
        // A fresh store of the same three entries measures the same.
        let mut fresh = store_of(&dir.path().join("fresh.vec"), 80);
        fresh.keep_unrelated(&queries).unwrap();
        fresh.append(&[], &gone).unwrap();
        assert_eq!(fresh.chance(), shrunk.chance());
        // One entry is still measured.
        let mut one = store_of(&dir.path().join("one.vec"), 1);
        one.keep_unrelated(&queries).unwrap();
        assert!(matches!(one.chance(), Some(Chance::Score(_))));
    }

    #[test]
    fn queries_of_another_size_are_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut owner = store_of(&dir.path().join("m.vec"), 20);
        owner.keep_unrelated(&[vec![1.0, 0.0], vec![0.0, 1.0]]).unwrap();
        assert!(!owner.has_unrelated());
    }
}
