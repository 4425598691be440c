//! The cut of matches by meaning in a vault of many alike notes: measured on the vault
//! with the queries on nothing in particular, it lets a paraphrase through that the
//! default cut (made for a few hand-written notes) drops, and still lets no unrelated
//! query find anything.
//!
//! The vectors are made as e5's look: every one shares a large common part (so any two
//! score near 0.8) and differs in a random direction of many dimensions (so their scores
//! spread little). The paraphrased note leans towards the query's direction by a share
//! of 0.18 of the room above the typical score: above the chance of the vault (about 0.1
//! here), below what the default assumes (0.24 for 400 parts).

use std::collections::HashMap;

use kb_domain::{QueryVector, SearchIndex, SearchMode, SearchQuery};
use kb_search::{OpenOptions, TantivyIndex, UNRELATED_QUERIES, VectorModel};

use crate::support::{TestVault, open_index};

/// Dimensions of the test's vectors.
const DIMENSION: usize = 1024;
/// Notes in the vault besides the paraphrased one.
const NOTES: usize = 400;

/// A deterministic source of normal numbers (xorshift and Box–Muller).
struct Normal(u64);

impl Normal {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn next(&mut self) -> f32 {
        let (a, b) = (self.uniform(), self.uniform());
        ((-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()) as f32
    }

    /// A random unit direction orthogonal to the first axis (the common part's).
    fn direction(&mut self) -> Vec<f32> {
        let mut v: Vec<f32> = (0..DIMENSION).map(|_| self.next()).collect();
        v[0] = 0.0;
        unit(v)
    }
}

fn unit(v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}

/// The vector of a text whose own direction is `direction`: the common part (twice as
/// long) plus it.
fn alike(direction: &[f32]) -> Vec<f32> {
    let mut v = direction.to_vec();
    v[0] += 2.0;
    unit(v)
}

fn semantic(index: &TantivyIndex, vector: &[f32]) -> Vec<String> {
    let query = SearchQuery {
        text: "q".into(),
        limit: 10,
        mode: SearchMode::Semantic,
        vector: Some(QueryVector::new("alike", vector.to_vec())),
        ..Default::default()
    };
    index.search(&query).unwrap().entries.into_iter().map(|hit| hit.path.to_string()).collect()
}

#[test]
fn in_a_vault_of_alike_notes_the_measured_cut_finds_the_paraphrase_and_nothing_unrelated() {
    let mut random = Normal(0x9e37_79b9_7f4a_7c15);
    let v = TestVault::new();
    let mut vectors: HashMap<String, Vec<f32>> = HashMap::new();
    for i in 0..NOTES {
        let marker = format!("marker{i}");
        v.write_entry(&format!("ideas/note-{i}.md"), &marker, &format!("{marker} body\n"));
        vectors.insert(marker, alike(&random.direction()));
    }
    // The query's direction, and the paraphrase: 0.18 of it, the rest another direction.
    let query_direction = random.direction();
    let other = random.direction();
    let along = query_direction.iter().zip(&other).map(|(q, o)| q * o).sum::<f32>();
    let across = unit(other.iter().zip(&query_direction).map(|(o, q)| o - along * q).collect());
    let cos: f32 = 0.18;
    let leaning: Vec<f32> =
        query_direction.iter().zip(&across).map(|(q, a)| cos * q + (1.0 - cos * cos).sqrt() * a).collect();
    v.write_entry("ideas/paraphrased.md", "markerp", "markerp body\n");
    vectors.insert("markerp".into(), alike(&leaning));
    let query = alike(&query_direction);

    let model = VectorModel { model: "alike".into(), identity: "alike-v1".into() };
    let index = open_index(v.root(), OpenOptions { embeddings: Some(model), ..Default::default() }).unwrap();
    while let Some(work) = index.embedding_work(256).unwrap().filter(|work| !work.is_empty()) {
        let found: Vec<Vec<f32>> = work
            .texts()
            .iter()
            .map(|text| {
                let marker = text.split_whitespace().find(|w| w.starts_with("marker")).unwrap();
                vectors[marker].clone()
            })
            .collect();
        index.save_embeddings(work, found).unwrap();
    }
    let unrelated: Vec<Vec<f32>> = (0..5).map(|_| alike(&random.direction())).collect();

    // The default cut, before the vault is measured: the paraphrase is dropped.
    assert_eq!(semantic(&index, &query), Vec::<String>::new());

    let queries = index.unrelated_queries_needed().unwrap().unwrap();
    index.keep_unrelated(queries.iter().map(|_| alike(&random.direction())).collect()).unwrap();
    assert_eq!(index.unrelated_queries_needed().unwrap(), None, "kept once");
    assert_eq!(queries.len(), UNRELATED_QUERIES.len());

    assert_eq!(semantic(&index, &query), vec!["ideas/paraphrased.md".to_string()]);
    for vector in &unrelated {
        assert_eq!(semantic(&index, vector), Vec::<String>::new(), "an unrelated query found something");
    }
}

#[test]
fn a_vault_of_one_or_two_notes_still_finds_nothing_for_unrelated_queries() {
    for notes in [1, 2] {
        let mut random = Normal(0x2545_f491_4f6c_dd1d + notes as u64);
        let v = TestVault::new();
        let mut vectors: HashMap<String, Vec<f32>> = HashMap::new();
        for i in 0..notes {
            let marker = format!("marker{i}");
            v.write_entry(&format!("ideas/note-{i}.md"), &marker, &format!("{marker} body\n"));
            vectors.insert(marker, alike(&random.direction()));
        }
        let model = VectorModel { model: "alike".into(), identity: "alike-v1".into() };
        let index =
            open_index(v.root(), OpenOptions { embeddings: Some(model), ..Default::default() }).unwrap();
        while let Some(work) = index.embedding_work(256).unwrap().filter(|work| !work.is_empty()) {
            let found: Vec<Vec<f32>> = work
                .texts()
                .iter()
                .map(|text| {
                    vectors[text.split_whitespace().find(|w| w.starts_with("marker")).unwrap()].clone()
                })
                .collect();
            index.save_embeddings(work, found).unwrap();
        }
        let queries = index.unrelated_queries_needed().unwrap().unwrap();
        index.keep_unrelated(queries.iter().map(|_| alike(&random.direction())).collect()).unwrap();
        // With a note or two the best part is the median itself: the measure says nothing.
        for _ in 0..5 {
            let unrelated = alike(&random.direction());
            assert_eq!(semantic(&index, &unrelated), Vec::<String>::new(), "{notes} notes: a hit");
        }
    }
}
