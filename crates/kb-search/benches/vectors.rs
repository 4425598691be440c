//! Search by meaning at scale (figures, not a timed test): for generated vaults of 10,000
//! and 100,000 entries (`KB_BENCH_SIZES` to choose), every part of every entry is given a
//! precomputed pseudo-random 384-number vector (what an embedding server would answer;
//! its time is not measured here), then the keyword, semantic and hybrid searches of a
//! fixed query mix are timed, each with a query vector ready (a real search adds the
//! server's time to embed the query). Prints and saves `target/bench/vectors.md`: the
//! parts, the time to keep their vectors, the vector file's size and memory, the time a
//! new process takes to read the file, and search p50/p99 per mode. With `KB_BENCH_KEEP`
//! naming a folder, the vaults and their vectors are kept there for the next run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kb_domain::{QueryVector, SearchIndex, SearchMode, SearchQuery};
use kb_search::testgen::{word, write_vault};
use kb_search::{OpenOptions, TantivyIndex, VectorModel};
use kb_storage::vault::EntryFiles;

const SEED: u64 = 20_261_127;
const DIMENSION: usize = 384;
const ROUNDS: usize = 30;

/// A deterministic stream of numbers in [-1, 1) (xorshift).
struct Numbers(u64);

impl Numbers {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    fn vector(&mut self) -> Vec<f32> {
        (0..DIMENSION).map(|_| self.next()).collect()
    }
}

fn model() -> VectorModel {
    VectorModel { model: "bench-384".into(), identity: "bench-384".into() }
}

fn open(root: &Path) -> TantivyIndex {
    let files = Arc::new(EntryFiles::new(root).unwrap());
    TantivyIndex::open_with(
        files,
        &root.join(".kb/index"),
        OpenOptions { embeddings: Some(model()), ..OpenOptions::default() },
    )
    .unwrap()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[(((sorted.len() - 1) as f64) * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn run(size: usize, scratch: &Path, md: &mut String) {
    let root = scratch.join(format!("v{size}"));
    // A kept vault is used as it is (a run cut short while writing it leaves it partly
    // embedded: the coverage check below then fails; delete the folder).
    let reused = root.join(".kb/vectors").is_dir();
    if !reused {
        write_vault(&root, size, SEED).unwrap();
    }
    let index = open(&root);
    let mut numbers = Numbers(SEED);
    let began = Instant::now();
    let mut parts = 0;
    while let Some(work) = index.embedding_work(4096).unwrap().filter(|w| !w.is_empty()) {
        parts += work.texts().len();
        let vectors = work.texts().iter().map(|_| numbers.vector()).collect();
        index.save_embeddings(work, vectors).unwrap();
    }
    let kept = began.elapsed();
    let memory = index.vector_memory();
    let file: u64 =
        fs::read_dir(root.join(".kb/vectors")).unwrap().flatten().map(|f| f.metadata().unwrap().len()).sum();
    drop(index);
    // A new process: the index opens, then its first search by meaning reads the file.
    let index = open(&root);
    // The queries' vectors have their own stream: the same whether the parts were embedded
    // in this run or kept from an earlier one.
    let mut questions = Numbers(SEED ^ 0x5eed);
    let queries: Vec<(String, QueryVector)> = (0..10)
        .map(|i| {
            (
                format!("{} {}", word(i * 7), word(i * 13 + 1)),
                QueryVector::new("bench-384", questions.vector()),
            )
        })
        .collect();
    let first = Instant::now();
    let ask = |text: &str, vector: &QueryVector, mode| SearchQuery {
        text: text.to_string(),
        limit: 10,
        mode,
        vector: Some(vector.clone()),
        // As search_entries asks.
        partial: true,
        ..SearchQuery::default()
    };
    index.search(&ask(&queries[0].0, &queries[0].1, SearchMode::Semantic)).unwrap();
    let load = first.elapsed();
    let coverage = index.coverage().unwrap().unwrap();
    assert_eq!(coverage.embedded, coverage.total, "{coverage:?}");
    let embedded = if reused {
        "the vault and its vectors kept from an earlier run".to_string()
    } else {
        format!("{parts} parts, vectors kept in {:.1} s", kept.as_secs_f64())
    };
    let _ = writeln!(
        md,
        "\n### {size} entries\n\n{embedded}; vector file {:.1} MB, in memory {:.1} MB; a new process reads them at its first search by meaning in {:.0} ms.\n",
        file as f64 / 1e6,
        memory as f64 / 1e6,
        ms(load)
    );
    let _ = writeln!(md, "| mode | p50 ms | p99 ms |\n|---|---:|---:|");
    for mode in [SearchMode::Keyword, SearchMode::Semantic, SearchMode::Hybrid] {
        let mut times = Vec::new();
        for _ in 0..ROUNDS {
            for (text, vector) in &queries {
                let q = ask(text, vector, mode);
                let t = Instant::now();
                std::hint::black_box(index.search(&q).unwrap());
                times.push(t.elapsed());
            }
        }
        times.sort();
        let _ = writeln!(
            md,
            "| {} | {:.2} | {:.2} |",
            mode.as_str(),
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.99))
        );
    }
    drop(index);
    if std::env::var_os("KB_BENCH_KEEP").is_none() {
        let _ = fs::remove_dir_all(&root);
    }
}

fn main() {
    let sizes: Vec<usize> = std::env::var("KB_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().replace('_', "").parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| vec![10_000, 100_000]);
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace.join("target"), PathBuf::from);
    let out_dir = target.join("bench");
    fs::create_dir_all(&out_dir).unwrap();
    // KB_BENCH_KEEP names a folder where the generated vaults and their vectors are kept
    // and found again by the next run (which then generates and embeds nothing).
    let temporary = tempfile::tempdir().unwrap();
    let kept = std::env::var_os("KB_BENCH_KEEP").map(PathBuf::from);
    let scratch = kept.as_deref().unwrap_or(temporary.path());
    let mut md = String::from(
        "# Search by meaning at scale\n\nPrecomputed 384-number vectors (8-bit, exact scan on one core); 10 queries of two words, 30 rounds each, warm, limit 10; the query's vector is ready (the embedding server's time is apart).\n",
    );
    for size in sizes {
        eprintln!("kb-search vectors bench: {size} entries");
        run(size, scratch, &mut md);
    }
    println!("{md}");
    fs::write(out_dir.join("vectors.md"), &md).unwrap();
}
