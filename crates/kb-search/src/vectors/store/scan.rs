//! The nearest-neighbour scan of a [`Store`]: the signs of every row around the rows' mean,
//! a first pass by signs, a ranking of the shortlist by the 8-bit vectors, and the helpers
//! they share with the file (quantising a vector).

use kb_domain::EntryPath;

use super::{Kept, Near, SHORTLIST_FACTOR, SHORTLIST_MIN, Store};

/// The most parts [`Store::typical_score`] compares a query with: enough for a steady
/// median, few enough to cost a fraction of a millisecond whatever the vault's size.
const TYPICAL_SAMPLE: usize = 512;

impl Store {
    /// Takes the signs again around the rows' mean when the rows doubled since the last
    /// time (once for a file read whole). A file read whole has every row to sign: the rows
    /// are shared among up to four of the processor's cores.
    pub(super) fn recentre_if_grown(&mut self) {
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

    /// The numbers of `row`.
    pub(super) fn row(&self, row: u32) -> &[i8] {
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

    /// The median similarity of `query` to the parts of the entries kept (those of about
    /// `TYPICAL_SAMPLE` entries, evenly spread; vectors of removed entries left in the file
    /// do not count): how the model scores text that has nothing particular to do with the
    /// query, as most parts have not. `None` before any part.
    pub fn typical_score(&self, query: &[f32]) -> Option<f32> {
        if query.len() != self.dimension || self.dimension == 0 {
            return None;
        }
        let (scale, query) = quantise(query);
        let step = self.slots.len().div_ceil(TYPICAL_SAMPLE).max(1);
        let mut scores: Vec<f32> = self
            .slots
            .iter()
            .step_by(step)
            .flat_map(|(_, kept)| self.rows_of(kept))
            .map(|row| dot(&query, self.row(*row)) as f32 * scale * self.scales[*row as usize])
            .collect();
        if scores.is_empty() {
            return None;
        }
        let middle = scores.len() / 2;
        let (_, median, _) = scores.select_nth_unstable_by(middle, f32::total_cmp);
        Some(*median)
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
}

/// `rows` split into one range per core (at most four), each at least 10,000 rows. The mean
/// is summed per range, so its last bits (and a sign right at it) may differ between
/// machines with other numbers of cores; the ranking by vectors does not.
pub(super) fn row_ranges(rows: usize) -> Vec<std::ops::Range<usize>> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4);
    let each = rows.div_ceil(cores).max(10_000);
    (0..rows).step_by(each).map(|start| start..(start + each).min(rows)).collect()
}

/// `work` done for each of `ranges`, the first on this thread and the others each on a
/// thread of its own (on this one when the system gives none); the answers in the order of
/// the ranges. A thread that panicked answers nothing: the signs then miss its rows (and
/// searches rank every entry by its vector), or the mean misses them (and the signs are
/// taken around a rougher centre).
pub(super) fn on_each<T: Send>(
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
pub(super) fn signs_of<'a>(
    values: &'a [i8],
    scale: f32,
    centre: &'a [f32],
) -> impl Iterator<Item = u64> + 'a {
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
pub(super) fn quantise(values: &[f32]) -> (f32, Vec<i8>) {
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
pub(super) fn dot(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum()
}
