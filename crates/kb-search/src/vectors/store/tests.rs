//! The vector file: what one process appends another reads, a cut record ends the file,
//! a rewrite keeps what entries use, and the quantised scan ranks as exact cosine does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;

use super::*;

fn key(n: u8) -> Key {
    [n; 16]
}

fn path(name: &str) -> EntryPath {
    EntryPath::parse(&format!("ideas/{name}.md")).unwrap()
}

fn entry(name: &str, parts: &[u8]) -> EntryRecord {
    EntryRecord { path: path(name), stamp: Stamp::new(1, 2), parts: parts.iter().map(|n| key(*n)).collect() }
}

fn unit(values: &[f32]) -> Vec<f32> {
    let norm = values.iter().map(|x| x * x).sum::<f32>().sqrt();
    values.iter().map(|x| x / norm).collect()
}

#[test]
fn what_the_owner_appends_another_process_reads() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("vectors").join("m.vec");
    let mut owner = Store::open(&file).unwrap();
    let mut reader = Store::open(&file).unwrap();
    owner
        .append(
            &[(key(1), vec![1.0, 0.0, 0.0]), (key(2), vec![0.0, 1.0, 0.0])],
            &[entry("a", &[1]), entry("b", &[2])],
        )
        .unwrap();
    reader.refresh().unwrap();
    assert_eq!((reader.len(), reader.dimension()), (2, 3));
    let near = reader.nearest(&[0.9, 0.1, 0.0], 5, |_| true);
    assert_eq!(near[0].path, path("a"));
    assert!((near[0].score - 0.994).abs() < 0.02, "{near:?}");

    owner.append(&[], &[EntryRecord { parts: Vec::new(), ..entry("a", &[]) }]).unwrap();
    reader.refresh().unwrap();
    assert_eq!(reader.len(), 1, "a gone entry is forgotten");
    assert!(reader.entry(&path("a")).is_none());
    let reopened = Store::open(&file).unwrap();
    assert_eq!(reopened.len(), 1);
    assert!(reopened.has(&key(1)), "its vector stays for a text that comes back");
}

#[test]
fn a_record_cut_short_ends_the_file_and_the_next_append_cuts_it_off() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.vec");
    let mut owner = Store::open(&file).unwrap();
    owner.append(&[(key(1), vec![1.0, 0.0])], &[entry("a", &[1])]).unwrap();
    let whole = std::fs::metadata(&file).unwrap().len();
    // A crash in the middle of an append: half a record.
    let mut f = OpenOptions::new().append(true).open(&file).unwrap();
    f.write_all(&[40, 0, 0, 0, VECTOR, 9, 9]).unwrap();
    drop(f);
    let mut next_owner = Store::open(&file).unwrap();
    assert_eq!(next_owner.len(), 1);
    next_owner.append(&[(key(2), vec![0.0, 1.0])], &[entry("b", &[2])]).unwrap();
    let reread = Store::open(&file).unwrap();
    assert_eq!(reread.len(), 2, "the record after the cut one is read");
    assert!(std::fs::metadata(&file).unwrap().len() > whole);
}

#[test]
fn vectors_of_another_length_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("m.vec")).unwrap();
    store.append(&[(key(1), vec![1.0, 0.0])], &[entry("a", &[1])]).unwrap();
    let error = store.append(&[(key(2), vec![1.0, 0.0, 0.0])], &[entry("b", &[2])]).unwrap_err();
    assert!(matches!(error, StoreError::Dimension { kept: 2, got: 3, .. }), "{error}");
    assert_eq!(Store::open(&dir.path().join("m.vec")).unwrap().len(), 1, "nothing was written");
}

#[test]
fn a_rewrite_keeps_what_entries_use_and_readers_follow_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.vec");
    let mut owner = Store::open(&file).unwrap();
    let mut reader = Store::open(&file).unwrap();
    // One entry edited 1,500 times: every old vector is unused.
    for round in 0..1_500_u32 {
        let k = {
            let mut k = [0_u8; 16];
            k[..4].copy_from_slice(&round.to_le_bytes());
            k
        };
        let x = round as f32;
        let record = EntryRecord { path: path("a"), stamp: Stamp::new(i64::from(round), 1), parts: vec![k] };
        owner.append(&[(k, vec![1.0, x])], &[record]).unwrap();
    }
    let before = std::fs::metadata(&file).unwrap().len();
    assert!(owner.compact_if_worth_it().unwrap());
    assert!(std::fs::metadata(&file).unwrap().len() < before / 100);
    assert_eq!(owner.entry(&path("a")).unwrap().stamp, Stamp::new(1_499, 1));
    reader.refresh().unwrap();
    assert_eq!(reader.len(), 1);
    assert_eq!(reader.entry(&path("a")).unwrap().stamp, Stamp::new(1_499, 1));
    assert!(!owner.compact_if_worth_it().unwrap(), "nothing left to drop");
}

#[test]
fn a_file_of_another_kind_is_started_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.vec");
    std::fs::write(&file, b"not a vector file at all").unwrap();
    let mut store = Store::open(&file).unwrap();
    assert_eq!(store.len(), 0);
    store.append(&[(key(1), vec![1.0])], &[entry("a", &[1])]).unwrap();
    assert_eq!(Store::open(&file).unwrap().len(), 1);
}

#[test]
fn another_model_behind_the_same_name_starts_the_file_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.vec");
    let mut owner = Store::open(&file).unwrap();
    let mut reader = Store::open(&file).unwrap();
    let probe = unit(&[1.0, 2.0, 3.0]);
    assert_eq!(owner.check_probe(&probe).unwrap(), ProbeCheck::Recorded);
    owner.append(&[(key(1), vec![1.0, 0.0, 0.0])], &[entry("a", &[1])]).unwrap();
    // The same model, rounding aside: the vectors stay.
    let rounded: Vec<f32> = probe.iter().map(|x| x + 0.001).collect();
    assert_eq!(owner.check_probe(&rounded).unwrap(), ProbeCheck::Same);
    assert_eq!(Store::open(&file).unwrap().len(), 1);
    reader.refresh().unwrap();
    assert_eq!(reader.len(), 1);
    // Another model of the same size: nothing of the old one is kept, in any process.
    let other = unit(&[3.0, -1.0, 0.5]);
    assert_eq!(owner.check_probe(&other).unwrap(), ProbeCheck::StartedAgain);
    assert_eq!((owner.len(), owner.probe()), (0, Some(other.as_slice())));
    owner.append(&[(key(2), vec![0.0, 1.0, 0.0])], &[entry("b", &[2])]).unwrap();
    reader.refresh().unwrap();
    assert!(reader.entry(&path("a")).is_none() && reader.entry(&path("b")).is_some());
    assert_eq!(reader.probe(), Some(other.as_slice()));
    // Another size too; and a rewrite keeps the probe.
    assert_eq!(owner.check_probe(&[1.0, 0.0]).unwrap(), ProbeCheck::StartedAgain);
    assert_eq!(owner.dimension(), 2);
    assert_eq!(Store::open(&file).unwrap().probe(), Some([1.0, 0.0].as_slice()));
}

#[test]
fn a_file_without_a_probe_keeps_its_vectors_and_records_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.vec");
    let mut owner = Store::open(&file).unwrap();
    owner.append(&[(key(1), vec![1.0, 0.0])], &[entry("a", &[1])]).unwrap();
    assert_eq!(owner.check_probe(&[0.6, 0.8]).unwrap(), ProbeCheck::Recorded);
    let reread = Store::open(&file).unwrap();
    assert_eq!((reread.len(), reread.probe()), (1, Some([0.6, 0.8].as_slice())));
}

#[test]
fn a_reader_that_follows_the_file_knows_what_one_that_reads_it_whole_knows() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.vec");
    let mut owner = Store::open(&file).unwrap();
    let mut follower = Store::open(&file).unwrap();
    for round in 0..20_u8 {
        let stamp = Stamp::new(i64::from(round), 1);
        let vectors = [(key(round), unit(&[1.0, f32::from(round)]))];
        let records = [
            EntryRecord { path: path(&format!("e{}", round % 5)), stamp, parts: vec![key(round)] },
            EntryRecord {
                path: path("gone"),
                stamp,
                parts: if round % 2 == 0 { vec![key(round)] } else { vec![] },
            },
        ];
        owner.append(&vectors, &records).unwrap();
        follower.refresh().unwrap();
    }
    let whole = Store::open(&file).unwrap();
    let kept = |store: &Store| {
        let mut kept: Vec<(String, Stamp)> = store.entries().map(|(p, k)| (p.to_string(), k.stamp)).collect();
        kept.sort_by(|a, b| a.0.cmp(&b.0));
        kept
    };
    assert_eq!(kept(&follower), kept(&whole));
    assert_eq!(kept(&follower), kept(&owner));
}

#[test]
fn the_typical_score_is_the_median_over_the_parts() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("m.vec")).unwrap();
    assert_eq!(store.typical_score(&[1.0, 0.0]), None);
    let vectors: Vec<(Key, Vec<f32>)> =
        (0..5_u8).map(|n| (key(n), unit(&[f32::from(n), 4.0 - f32::from(n)]))).collect();
    let records: Vec<EntryRecord> = (0..5_u8).map(|n| entry(&format!("e{n}"), &[n])).collect();
    store.append(&vectors, &records).unwrap();
    assert_eq!(store.rows(), 5);
    // Cosines with (1, 0): 0, 0.32, 0.71, 0.95, 1: the median is the middle one.
    let typical = store.typical_score(&[1.0, 0.0]).unwrap();
    assert!((typical - std::f32::consts::FRAC_1_SQRT_2).abs() < 0.02, "{typical}");
    assert_eq!(store.typical_score(&[1.0, 0.0, 0.0]), None, "another size");
}

#[test]
fn related_vector_is_the_mean_of_the_parts() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("m.vec")).unwrap();
    store.append(&[(key(1), vec![1.0, 0.0]), (key(2), vec![0.0, 1.0])], &[entry("a", &[1, 2])]).unwrap();
    let mean = store.entry_vector(&path("a")).unwrap();
    assert!((mean[0] - std::f32::consts::FRAC_1_SQRT_2).abs() < 0.01 && (mean[0] - mean[1]).abs() < 0.01);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The quantised scan ranks entries as exact cosine similarity does, but for ties
    /// closer than quantisation can tell apart.
    #[test]
    fn the_scan_ranks_as_exact_cosine(
        rows in prop::collection::vec(prop::collection::vec(-1.0_f32..1.0, 24), 2..40),
        query in prop::collection::vec(-1.0_f32..1.0, 24),
    ) {
        prop_assume!(query.iter().any(|x| x.abs() > 0.05));
        prop_assume!(rows.iter().all(|r| r.iter().any(|x| x.abs() > 0.05)));
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.vec")).unwrap();
        let vectors: Vec<(Key, Vec<f32>)> = rows.iter().enumerate().map(|(i, r)| (key(i as u8), r.clone())).collect();
        let entries: Vec<EntryRecord> = (0..rows.len()).map(|i| entry(&format!("e{i}"), &[i as u8])).collect();
        store.append(&vectors, &entries).unwrap();
        let q = unit(&query);
        let exact: Vec<f32> = rows.iter().map(|r| unit(r).iter().zip(&q).map(|(a, b)| a * b).sum()).collect();
        let near = store.nearest(&query, rows.len(), |_| true);
        prop_assert_eq!(near.len(), rows.len());
        for pair in near.windows(2) {
            let i = |n: &Near| n.path.to_string().trim_start_matches("ideas/e").trim_end_matches(".md").parse::<usize>().unwrap();
            prop_assert!(exact[i(&pair[0])] >= exact[i(&pair[1])] - 0.03, "{:?}", pair);
        }
        for n in &near {
            let i = n.path.to_string().trim_start_matches("ideas/e").trim_end_matches(".md").parse::<usize>().unwrap();
            prop_assert!((n.score - exact[i]).abs() < 0.03, "{} vs {}", n.score, exact[i]);
        }
    }
}

/// A deterministic stream of numbers in [-1, 1) (xorshift), for vectors with no structure:
/// the hardest case for the first pass by signs.
fn numbers(mut state: u64) -> impl FnMut() -> f32 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1_u64 << 23) as f32 - 1.0
    }
}

#[test]
fn the_two_pass_scan_finds_what_an_exact_scan_finds() {
    // As many numbers as small models give, and six times the shortlist of 10 hits.
    const DIMENSION: usize = 384;
    const ENTRIES: usize = 6_000;
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("m.vec")).unwrap();
    let mut next = numbers(7);
    let mut rows: Vec<Vec<f32>> = Vec::new();
    let mut vectors = Vec::new();
    let mut entries = Vec::new();
    for i in 0..ENTRIES {
        // Two parts an entry, as long notes have.
        let mut parts = Vec::new();
        for p in 0..2_u32 {
            let mut k = [0_u8; 16];
            k[..4].copy_from_slice(&u32::try_from(i).unwrap().to_le_bytes());
            k[4..8].copy_from_slice(&p.to_le_bytes());
            let v: Vec<f32> = (0..DIMENSION).map(|_| next()).collect();
            vectors.push((k, v.clone()));
            rows.push(v);
            parts.push(k);
        }
        entries.push(EntryRecord { path: path(&format!("e{i}")), stamp: Stamp::new(0, 0), parts });
    }
    store.append(&vectors, &entries).unwrap();
    assert!(signs_are_taken(&store), "the first pass has no signs to compare");
    let (mut found, mut wanted) = (0, 0);
    for q in 0..20 {
        let query: Vec<f32> = (0..DIMENSION).map(|_| next()).collect();
        let qu = unit(&query);
        let mut exact: Vec<(f32, usize)> = (0..ENTRIES)
            .map(|i| {
                let best = rows[2 * i..2 * i + 2]
                    .iter()
                    .map(|r| unit(r).iter().zip(&qu).map(|(a, b)| a * b).sum::<f32>())
                    .fold(f32::MIN, f32::max);
                (best, i)
            })
            .collect();
        exact.sort_by(|a, b| b.0.total_cmp(&a.0));
        let near = store.nearest(&query, 10, |_| true);
        assert_eq!(near.len(), 10, "query {q}");
        let names: Vec<String> = near.iter().map(|n| n.path.to_string()).collect();
        for (_, i) in exact.iter().take(10) {
            wanted += 1;
            found += usize::from(names.contains(&format!("ideas/e{i}.md")));
        }
    }
    let recall = found as f64 / wanted as f64;
    assert!(recall >= 0.9, "recall@10 of the two-pass scan: {recall}");
}

/// Whether every row has its signs around a centre, so that a search takes the two
/// passes (without them it ranks every entry by its vector: right, but slow).
fn signs_are_taken(store: &Store) -> bool {
    !store.centre.is_empty() && store.signs.len() == store.scales.len() * store.dimension.div_ceil(64)
}

/// Recall@10 of `store`'s scan against exact cosine over `rows` (entry `i` is `ei`, one
/// part each), for 20 queries drawn like the rows by `draw`.
fn recall_at_10(store: &Store, rows: &[Vec<f32>], mut draw: impl FnMut() -> Vec<f32>) -> f64 {
    let (mut found, mut wanted) = (0, 0);
    for _ in 0..20 {
        let query = draw();
        let qu = unit(&query);
        let mut exact: Vec<(f32, usize)> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| (unit(r).iter().zip(&qu).map(|(a, b)| a * b).sum::<f32>(), i))
            .collect();
        exact.sort_by(|a, b| b.0.total_cmp(&a.0));
        let names: Vec<String> =
            store.nearest(&query, 10, |_| true).iter().map(|n| n.path.to_string()).collect();
        for (_, i) in exact.iter().take(10) {
            wanted += 1;
            found += usize::from(names.contains(&format!("ideas/e{i}.md")));
        }
    }
    found as f64 / wanted as f64
}

#[test]
fn signs_are_taken_around_the_mean_after_a_rewrite_too() {
    // Vectors sharing a large common part, as a model's do: signs around zero would all
    // be the common part's, and the first pass would shortlist at random.
    const DIMENSION: usize = 64;
    const ENTRIES: usize = 2_500;
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("m.vec")).unwrap();
    let mut next = numbers(11);
    let common: Vec<f32> = (0..DIMENSION).map(|_| next() * 3.0).collect();
    let mut draw = move || -> Vec<f32> { common.iter().map(|c| c + next()).collect() };
    let rows: Vec<Vec<f32>> = (0..ENTRIES).map(|_| draw()).collect();
    let key_of = |i: usize| {
        let mut k = [0_u8; 16];
        k[..8].copy_from_slice(&(i as u64).to_le_bytes());
        k
    };
    let vectors: Vec<(Key, Vec<f32>)> =
        rows.iter().enumerate().map(|(i, r)| (key_of(i), r.clone())).collect();
    let entries: Vec<EntryRecord> = (0..ENTRIES)
        .map(|i| EntryRecord {
            path: path(&format!("e{i}")),
            stamp: Stamp::new(0, 0),
            parts: vec![key_of(i)],
        })
        .collect();
    store.append(&vectors, &entries).unwrap();
    assert!(signs_are_taken(&store));
    let before = recall_at_10(&store, &rows, &mut draw);
    assert!(before >= 0.9, "recall@10 before the rewrite: {before}");
    // Each entry recorded twice more: unused records outnumber used ones, and the file
    // is rewritten.
    store.append(&[], &entries).unwrap();
    store.append(&[], &entries).unwrap();
    assert!(store.compact_if_worth_it().unwrap());
    assert!(signs_are_taken(&store), "the rewritten store has no signs: every search would rank all");
    let after = recall_at_10(&store, &rows, &mut draw);
    assert!(after >= 0.9, "recall@10 after the rewrite: {after}");
}

#[test]
fn forgetting_an_entry_keeps_the_others_found_and_a_new_record_replaces_the_parts() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.vec");
    let mut store = Store::open(&file).unwrap();
    let vectors = [
        (key(1), vec![1.0, 0.0, 0.0]),
        (key(2), vec![0.0, 1.0, 0.0]),
        (key(3), vec![0.0, 0.0, 1.0]),
        (key(4), vec![0.6, 0.8, 0.0]),
    ];
    store.append(&vectors, &[entry("a", &[1]), entry("b", &[2]), entry("c", &[3])]).unwrap();
    // "a" is forgotten: the last entry takes its place in the table.
    store.append(&[], &[EntryRecord { parts: Vec::new(), ..entry("a", &[]) }]).unwrap();
    assert!(store.entry(&path("a")).is_none());
    assert_eq!(store.entries().count(), 2);
    let first = |store: &Store, query: &[f32]| store.nearest(query, 1, |_| true)[0].path.clone();
    assert_eq!(first(&store, &[0.0, 0.1, 1.0]), path("c"));
    assert_eq!(first(&store, &[0.1, 1.0, 0.0]), path("b"));
    assert_eq!(store.entry_vector(&path("c")).unwrap(), vec![0.0, 0.0, 1.0]);
    // "c" recorded again with another part: found by it, not by its old one, before and
    // after the file is rewritten.
    store.append(&[], &[entry("c", &[4])]).unwrap();
    let check = |store: &Store| {
        assert_eq!(first(store, &[0.6, 0.8, 0.0]), path("c"));
        assert_eq!(first(store, &[0.0, 0.1, 1.0]), path("b"), "c is no longer near its old part");
        let mean = store.entry_vector(&path("c")).unwrap();
        assert!((mean[0] - 0.6).abs() < 0.01 && (mean[1] - 0.8).abs() < 0.01, "{mean:?}");
    };
    check(&store);
    for _ in 0..1_100 {
        store.append(&[], &[entry("b", &[2])]).unwrap();
    }
    assert!(store.compact_if_worth_it().unwrap());
    check(&store);
    check(&Store::open(&file).unwrap());
}
