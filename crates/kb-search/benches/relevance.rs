//! Relevance benchmark (figures, not a timed test): runs the labelled queries of
//! `benches/relevance/queries.tsv` through the `SearchIndex` port over two vaults built in a
//! temporary folder, and scores them:
//!
//! - **hugo**: every `.md` file of the Hugo documentation (`$KB_CORPORA/hugo-docs/content`,
//!   by default `../shared/corpora` beside the workspace) copied into `ideas/` under a
//!   flattened, lowercased name (`en/functions/strings/Contains.md` →
//!   `ideas/functions-strings-contains.md`, `en/templates/_index.md` →
//!   `ideas/templates-index.md`). Skipped, with a note, when the corpus is not there.
//! - **personal**: the hand-written entries of `benches/relevance/personal/` mixed into a
//!   generated vault of 2,000 entries (`kb_search::testgen::write_vault`).
//!
//! For each query: precision@5 (relevant hits among the first 5 ÷ min(5, relevant count))
//! and the reciprocal rank of the first relevant hit (0 when none is in the first 10). Prints
//! and saves to `target/bench/relevance.md` the means per vault and overall with the mean
//! search latency, next to the figures of `benches/relevance-before.tsv` (the search at
//! commit 51f6030, before stems, prefixes, phrases and name boosts), and one row per query; the raw figures go to `target/bench/relevance.tsv`, in
//! the format of the "before" file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "relevance/meaning.rs"]
mod meaning;
#[path = "relevance/suites.rs"]
mod suites;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kb_domain::{Category, Entry, EntryPath, SearchIndex, SearchQuery};
use kb_search::TantivyIndex;
use kb_search::testgen::write_vault;
use kb_storage::vault::EntryFiles;

/// Seed of the generated noise of the personal vault (not the search bench's: other entries).
const SEED: u64 = 20_261_313;
/// Generated entries the personal vault's own entries are mixed into (unless
/// `KB_BENCH_NOISE` says how many: embedding 2,000 of them takes a CPU model an hour).
const NOISE_ENTRIES: usize = 2_000;
/// Hits asked for per query.
const LIMIT: usize = 10;
/// Timed rounds of the whole query set (after one warm-up round).
const ROUNDS: usize = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vault {
    Hugo,
    Personal,
}

impl Vault {
    fn as_str(self) -> &'static str {
        match self {
            Vault::Hugo => "hugo",
            Vault::Personal => "personal",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The query as typed, every word complete.
    Words,
    /// Search as you type: the last word is unfinished.
    Prefix,
    /// A question in other words than the entries it is about (for search by meaning).
    Meaning,
    /// A query on something no entry is about: search by meaning should find nothing.
    Unrelated,
    /// A question as a person asks it, in a full sentence (scored in the suites table).
    Question,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::Words => "words",
            Mode::Prefix => "prefix",
            Mode::Meaning => "meaning",
            Mode::Unrelated => "unrelated",
            Mode::Question => "question",
        }
    }
}

/// One labelled query.
#[derive(Debug, Clone)]
struct Row {
    id: String,
    vault: Vault,
    mode: Mode,
    query: String,
    /// The entries that should come first, most relevant first; all of them are relevant.
    expected: Vec<String>,
}

/// What one query scored.
#[derive(Debug, Clone)]
struct Score {
    p5: f64,
    rr: f64,
    latency: Duration,
    hits: Vec<String>,
    /// The hits found by meaning only.
    by_meaning: usize,
}

/// Figures of one row of a figures file (`relevance.tsv`, `relevance-before.tsv`).
#[derive(Debug, Clone, Default)]
struct Figures {
    p5: f64,
    rr: f64,
    latency_ms: f64,
    hits: Vec<String>,
}

fn bench_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches")
}

fn load_queries() -> Vec<Row> {
    let file = bench_dir().join("relevance/queries.tsv");
    let text = fs::read_to_string(&file).unwrap();
    let mut rows: Vec<Row> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let bad = |why: &str| format!("{}:{}: {why}: {line:?}", file.display(), n + 1);
        assert!(cols.len() == 5, "{}", bad("expected 5 tab-separated columns"));
        let vault = match cols[1] {
            "hugo" => Vault::Hugo,
            "personal" => Vault::Personal,
            _ => panic!("{}", bad("vault is hugo or personal")),
        };
        let mode = match cols[2] {
            "words" => Mode::Words,
            "prefix" => Mode::Prefix,
            "meaning" => Mode::Meaning,
            "unrelated" => Mode::Unrelated,
            "question" => Mode::Question,
            _ => panic!("{}", bad("mode is words, prefix, meaning, unrelated or question")),
        };
        let expected: Vec<String> =
            cols[4].split_whitespace().filter(|p| *p != "-").map(str::to_string).collect();
        let paths_ok = (mode == Mode::Unrelated) == expected.is_empty()
            && expected.iter().all(|p| EntryPath::parse(p).is_ok());
        assert!(paths_ok, "{}", bad("expected entries are vault paths separated by spaces"));
        assert!(!rows.iter().any(|r| r.id == cols[0]), "{}", bad("duplicate id"));
        rows.push(Row { id: cols[0].to_string(), vault, mode, query: cols[3].to_string(), expected });
    }
    rows
}

/// The flattened entry file name of a Hugo content file (`path` relative to `content/`).
fn hugo_file_name(path: &Path) -> String {
    let mut parts: Vec<String> = path.iter().map(|p| p.to_string_lossy().to_lowercase()).collect::<Vec<_>>();
    if parts.first().is_some_and(|p| p == "en") {
        parts.remove(0);
    }
    let file = parts.pop().unwrap_or_default();
    let stem = file.strip_suffix(".md").unwrap_or(&file).to_string();
    if stem == "_index" {
        parts.push(if parts.is_empty() { "home-index".into() } else { "index".into() });
    } else {
        parts.push(stem);
    }
    format!("{}.md", parts.join("-"))
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut items: Vec<_> = fs::read_dir(dir).unwrap().flatten().map(|i| i.path()).collect();
    items.sort();
    for item in items {
        if item.is_dir() {
            markdown_files(&item, out);
        } else if item.extension().is_some_and(|e| e == "md") {
            out.push(item);
        }
    }
}

/// Copies the Hugo docs into `root/ideas/`; the number of files and of unreadable ones.
fn build_hugo(content: &Path, root: &Path) -> (usize, Vec<String>) {
    for category in Category::ALL {
        fs::create_dir_all(root.join(category.as_str())).unwrap();
    }
    let mut files = Vec::new();
    markdown_files(content, &mut files);
    let mut unreadable = Vec::new();
    let mut seen = HashMap::new();
    for file in &files {
        let name = hugo_file_name(file.strip_prefix(content).unwrap());
        if let Some(other) = seen.insert(name.clone(), file.clone()) {
            panic!("{} and {} both flatten to {name}", other.display(), file.display());
        }
        let text = fs::read_to_string(file).unwrap();
        let rel = format!("ideas/{name}");
        if Entry::from_document(EntryPath::parse(&rel).unwrap(), &text).is_err() {
            unreadable.push(rel.clone());
        }
        fs::write(root.join(&rel), text).unwrap();
    }
    (files.len(), unreadable)
}

/// Writes the generated noise and the hand-written entries; the number of entries.
fn build_personal(root: &Path) -> usize {
    let noise = noise_entries();
    write_vault(root, noise, SEED).unwrap();
    let own = bench_dir().join("relevance/personal");
    let mut count = noise;
    for category in Category::ALL {
        let Ok(items) = fs::read_dir(own.join(category.as_str())) else { continue };
        for item in items.flatten() {
            let target = root.join(category.as_str()).join(item.file_name());
            assert!(!target.exists(), "{} clashes with a generated entry", target.display());
            fs::copy(item.path(), target).unwrap();
            count += 1;
        }
    }
    count
}

/// How many generated entries the personal vault has: `KB_BENCH_NOISE`, else
/// [`NOISE_ENTRIES`].
fn noise_entries() -> usize {
    std::env::var("KB_BENCH_NOISE").ok().and_then(|n| n.parse().ok()).unwrap_or(NOISE_ENTRIES)
}

fn open_index(root: &Path, embeddings: Option<kb_search::VectorModel>) -> TantivyIndex {
    let files = Arc::new(EntryFiles::new(root).unwrap());
    let options = kb_search::OpenOptions { embeddings, ..kb_search::OpenOptions::default() };
    TantivyIndex::open_with(files, &root.join(".kb/index"), options).unwrap()
}

/// What one query scored in each mode.
struct ByMode {
    keyword: Score,
    semantic: Score,
    hybrid: Score,
    /// The embedding server's time for the query.
    embed: Duration,
}

/// Runs `rows` in the three modes (one timed pass each after the keyword warm-up).
fn run_modes(index: &TantivyIndex, rows: &[&Row], embedding: &meaning::Embedding) -> Vec<ByMode> {
    rows.iter()
        .map(|row| {
            let (vector, embed) = embedding.query(&row.query);
            let run = |mode| {
                let _ = meaning::search(index, &row.query, mode, &vector, LIMIT);
                let (hits, by_meaning, latency) = meaning::search(index, &row.query, mode, &vector, LIMIT);
                Score { by_meaning, ..score(row, hits, latency) }
            };
            ByMode {
                keyword: run(kb_domain::SearchMode::Keyword),
                semantic: run(kb_domain::SearchMode::Semantic),
                hybrid: run(kb_domain::SearchMode::Hybrid),
                embed,
            }
        })
        .collect()
}

fn request(row: &Row) -> SearchQuery {
    SearchQuery {
        text: row.query.clone(),
        limit: LIMIT,
        prefix: row.mode == Mode::Prefix,
        // As search_entries asks: partial hits after the all-words ones.
        partial: row.mode != Mode::Prefix,
        ..SearchQuery::default()
    }
}

fn score(row: &Row, hits: Vec<String>, latency: Duration) -> Score {
    let relevant = |p: &String| row.expected.contains(p);
    let in_top5 = hits.iter().take(5).filter(|p| relevant(p)).count();
    let p5 = in_top5 as f64 / row.expected.len().clamp(1, 5) as f64;
    let rr = hits.iter().position(relevant).map_or(0.0, |i| 1.0 / (i as f64 + 1.0));
    Score { p5, rr, latency, hits, by_meaning: 0 }
}

/// Runs the rows of one vault: one warm-up round, then the mean of [`ROUNDS`] timed ones.
fn run_rows(index: &TantivyIndex, rows: &[&Row]) -> Vec<Score> {
    let first: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let r = index.search(&request(row)).unwrap();
            r.entries.iter().map(|h| h.path.to_string()).collect()
        })
        .collect();
    let mut spent = vec![Duration::ZERO; rows.len()];
    for _ in 0..ROUNDS {
        for (row, total) in rows.iter().zip(&mut spent) {
            let q = request(row);
            let t = Instant::now();
            let r = index.search(&q).unwrap();
            *total += t.elapsed();
            std::hint::black_box(r);
        }
    }
    rows.iter()
        .zip(first)
        .zip(spent)
        .map(|((row, hits), total)| score(row, hits, total / ROUNDS as u32))
        .collect()
}

/// Reads a figures file: `kind id vault mode p@5 rr latency_ms hits`, tab-separated.
fn read_figures(path: &Path) -> Option<(Vec<String>, HashMap<String, Figures>)> {
    let text = fs::read_to_string(path).ok()?;
    let mut comments = Vec::new();
    let mut figures = HashMap::new();
    for line in text.lines() {
        if let Some(c) = line.strip_prefix('#') {
            comments.push(c.trim().to_string());
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 7 || cols[0] == "kind" {
            continue;
        }
        let num = |s: &str| s.parse::<f64>().unwrap_or(f64::NAN);
        let f = Figures {
            p5: num(cols[4]),
            rr: num(cols[5]),
            latency_ms: num(cols[6]),
            hits: cols.get(7).map(|h| h.split_whitespace().map(str::to_string).collect()).unwrap_or_default(),
        };
        figures.insert(format!("{}:{}", cols[0], cols[1]), f);
    }
    Some((comments, figures))
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 { f64::NAN } else { sum / n as f64 }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn fig(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.digits$}"),
        _ => "-".into(),
    }
}

fn main() {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace.join("target"), PathBuf::from);
    let out_dir = target.join("bench");
    fs::create_dir_all(&out_dir).unwrap();
    let corpora =
        std::env::var_os("KB_CORPORA").map_or_else(|| workspace.join("../shared/corpora"), PathBuf::from);
    let hugo_content = corpora.join("hugo-docs/content");

    let rows = load_queries();
    let embedding = meaning::Embedding::find(&target);
    let scratch = tempfile::tempdir().unwrap();
    let mut by_mode: Vec<(&Row, ByMode)> = Vec::new();
    let mut notes = Vec::new();
    let mut results: Vec<(&Row, Score)> = Vec::new();
    let mut rankings: Vec<suites::Ranking> = Vec::new();
    let mut deep = String::new();

    for vault in [Vault::Hugo, Vault::Personal] {
        let these: Vec<&Row> = rows.iter().filter(|r| r.vault == vault).collect();
        let root = scratch.path().join(vault.as_str());
        let entries = match vault {
            Vault::Hugo => {
                if !hugo_content.is_dir() {
                    notes.push(format!(
                        "hugo: skipped, no corpus at {} (set KB_CORPORA)",
                        hugo_content.display()
                    ));
                    continue;
                }
                let (count, unreadable) = build_hugo(&hugo_content, &root);
                notes.push(format!(
                    "hugo: {count} files of {} in ideas/ ({} unreadable by kb{})",
                    hugo_content.display(),
                    unreadable.len(),
                    if unreadable.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", unreadable.join(", "))
                    }
                ));
                count - unreadable.len()
            }
            Vault::Personal => {
                let count = build_personal(&root);
                notes.push(format!(
                    "personal: {} hand-written entries mixed into {} generated ones (seed {SEED})",
                    count - noise_entries(),
                    noise_entries()
                ));
                count
            }
        };
        for row in &these {
            for path in &row.expected {
                assert!(
                    root.join(path).is_file(),
                    "{}: expected entry {path} is not in the {} vault",
                    row.id,
                    vault.as_str()
                );
            }
        }
        eprintln!(
            "kb-search relevance: {} vault, {entries} entries, {} queries",
            vault.as_str(),
            these.len()
        );
        let index = open_index(&root, embedding.as_ref().ok().map(meaning::Embedding::vector_model));
        assert_eq!(index.len(), entries);
        let keyword_rows: Vec<&Row> =
            these.iter().copied().filter(|r| matches!(r.mode, Mode::Words | Mode::Prefix)).collect();
        let scores = run_rows(&index, &keyword_rows);
        results.extend(keyword_rows.into_iter().zip(scores));
        let bm25 = suites::Bm25::over(&root);
        for row in these.iter().filter(|r| suite(r).is_some()) {
            let keyword = index.search(&request(row)).unwrap();
            let keyword = keyword.entries.iter().map(|h| h.path.to_string()).collect();
            rankings.push(ranking(row, "keyword", keyword));
            rankings.push(ranking(row, "bm25", bm25.search(&row.query, LIMIT)));
        }
        if let Ok(embedding) = &embedding {
            // The vectors of an earlier run are kept by their texts' keys: only what
            // changed is embedded again.
            let kept = out_dir.join("relevance-vectors").join(vault.as_str());
            copy_folder(&kept, &root.join(".kb/vectors"));
            let (spent, texts) = embedding.embed_all(&index);
            copy_folder(&root.join(".kb/vectors"), &kept);
            notes.push(format!(
                "{}: {texts} parts embedded in {:.1} s; vectors in memory {:.1} MB",
                vault.as_str(),
                spent.as_secs_f64(),
                index.vector_memory() as f64 / 1e6
            ));
            let meaning_rows: Vec<&Row> = these.iter().copied().filter(|r| r.mode != Mode::Prefix).collect();
            let scores = run_modes(&index, &meaning_rows, embedding);
            deep_rankings(&index, &these, embedding, &mut deep);
            for (row, b) in meaning_rows.iter().zip(&scores).filter(|(r, _)| suite(r).is_some()) {
                rankings.push(ranking(row, "semantic", b.semantic.hits.clone()));
                rankings.push(ranking(row, "hybrid", b.hybrid.hits.clone()));
            }
            by_mode.extend(meaning_rows.into_iter().zip(scores));
        }
        drop(index);
        let _ = fs::remove_dir_all(&root);
    }

    let before_file = bench_dir().join("relevance-before.tsv");
    let before = read_figures(&before_file);
    let (before_notes, before) = before.unwrap_or_default();
    let was = |key: &str| before.get(key);

    // The raw figures.
    let mut tsv = String::new();
    let _ = writeln!(tsv, "# kb-search relevance figures (`cargo bench -p kb-search --bench relevance`).");
    let _ = writeln!(
        tsv,
        "# kind: summary (id = vault or all) or query; p@5, rr (MRR for a summary), mean search latency in ms, first hits (query rows)."
    );
    let _ = writeln!(tsv, "kind\tid\tvault\tmode\tp@5\trr\tlatency_ms\thits");
    let mut summary = Vec::new();
    for scope in ["hugo", "personal", "all"] {
        let these: Vec<&(&Row, Score)> =
            results.iter().filter(|(r, _)| scope == "all" || r.vault.as_str() == scope).collect();
        if these.is_empty() {
            continue;
        }
        let p5 = mean(these.iter().map(|(_, s)| s.p5));
        let mrr = mean(these.iter().map(|(_, s)| s.rr));
        let lat = mean(these.iter().map(|(_, s)| ms(s.latency)));
        let _ = writeln!(tsv, "summary\t{scope}\t{scope}\t-\t{p5:.4}\t{mrr:.4}\t{lat:.4}\t");
        summary.push((scope, these.len(), p5, mrr, lat));
    }
    for (row, s) in &results {
        let _ = writeln!(
            tsv,
            "query\t{}\t{}\t{}\t{:.4}\t{:.4}\t{:.4}\t{}",
            row.id,
            row.vault.as_str(),
            row.mode.as_str(),
            s.p5,
            s.rr,
            ms(s.latency),
            s.hits.iter().take(5).cloned().collect::<Vec<_>>().join(" ")
        );
    }

    // The table.
    let mut md = String::new();
    let _ = writeln!(md, "# kb-search relevance\n");
    let _ = writeln!(
        md,
        "{} labelled queries (`crates/kb-search/benches/relevance/queries.tsv`), limit {LIMIT}, through the `SearchIndex` port. P@5: relevant hits among the first 5 ÷ min(5, relevant entries); MRR: mean of 1 / rank of the first relevant hit (0 when none in the first {LIMIT}). Latency: mean over {ROUNDS} rounds of the set, warm. Prefix rows run as search as you type (`prefix: true`; the before figures ran them as plain queries, the only way then).\n",
        rows.len()
    );
    for n in &notes {
        let _ = writeln!(md, "- {n}");
    }
    match before_notes.iter().find(|c| c.starts_with("before:")) {
        Some(c) => {
            let _ = writeln!(md, "- {c}");
        }
        None if before.is_empty() => {
            let _ = writeln!(md, "- no before figures ({} not found)", before_file.display());
        }
        None => {}
    }
    let _ = writeln!(
        md,
        "\n| vault | queries | P@5 before | P@5 now | MRR before | MRR now | latency before | latency now |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for (scope, n, p5, mrr, lat) in &summary {
        let b = was(&format!("summary:{scope}"));
        let _ = writeln!(
            md,
            "| {scope} | {n} | {} | {p5:.3} | {} | {mrr:.3} | {} ms | {lat:.3} ms |",
            fig(b.map(|f| f.p5), 3),
            fig(b.map(|f| f.rr), 3),
            fig(b.map(|f| f.latency_ms), 3),
        );
    }
    let _ = writeln!(md, "\n## Per query\n");
    let _ = writeln!(
        md,
        "| id | mode | query | P@5 before → now | RR before → now | first 3 hits now (✓ relevant) | first hit before, when another |"
    );
    let _ = writeln!(md, "|---|---|---|---:|---:|---|---|");
    for (row, s) in &results {
        let b = was(&format!("query:{}", row.id));
        let hits: Vec<String> = s
            .hits
            .iter()
            .take(3)
            .map(|h| if row.expected.contains(h) { format!("{h} ✓") } else { h.clone() })
            .collect();
        let first_before = b.and_then(|f| f.hits.first()).filter(|h| s.hits.first() != Some(*h));
        let _ = writeln!(
            md,
            "| {} | {} | `{}` | {} → {:.2} | {} → {:.2} | {} | {} |",
            row.id,
            row.mode.as_str(),
            row.query.replace('|', "\\|"),
            fig(b.map(|f| f.p5), 2),
            s.p5,
            fig(b.map(|f| f.rr), 2),
            s.rr,
            if hits.is_empty() { "(none)".into() } else { hits.join(", ") },
            first_before.map_or("", String::as_str)
        );
    }

    let mut modes =
        modes_table(&by_mode, embedding.as_ref().map(|e| e.described.clone()).map_err(String::clone));
    let (suites_md, suites_tsv) = suites::table(&rankings);
    modes.push_str(&suites_md);
    tsv.push_str(&suites_tsv);
    md.push_str(&modes);
    let top: String = md.split("\n## Per query").next().unwrap_or_default().to_string();
    println!("{top}\n{modes}");
    println!("{top}");
    fs::write(out_dir.join("relevance.md"), &md).unwrap();
    fs::write(out_dir.join("relevance.tsv"), &tsv).unwrap();
    if !deep.is_empty() {
        fs::write(out_dir.join("relevance-rankings.tsv"), &deep).unwrap();
    }
    eprintln!("saved to {} and relevance.tsv", out_dir.join("relevance.md").display());
}

/// The table of the three modes side by side (or why there is none), then one row per
/// query of kind `meaning`.
fn modes_table(by_mode: &[(&Row, ByMode)], model: Result<String, String>) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "\n## Keyword, semantic and hybrid\n");
    let model = match model {
        Ok(model) => model,
        Err(why) => {
            let _ = writeln!(md, "Not measured: {why}.");
            return md;
        }
    };
    let _ = writeln!(
        md,
        "Model: {model}. Each query once per mode, warm; hybrid latency is the search alone, the query's embedding (server time) apart.\n"
    );
    let _ = writeln!(
        md,
        "| vault | queries | kind | P@5 keyword | P@5 semantic | P@5 hybrid | MRR keyword | MRR semantic | MRR hybrid | hybrid ms (p50 / max) | embed query ms |"
    );
    let _ = writeln!(md, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for vault in ["hugo", "personal", "all"] {
        for kind in [Mode::Words, Mode::Meaning, Mode::Question] {
            let these: Vec<&(&Row, ByMode)> = by_mode
                .iter()
                .filter(|(r, _)| (vault == "all" || r.vault.as_str() == vault) && r.mode == kind)
                .collect();
            if these.is_empty() {
                continue;
            }
            let m = |f: &dyn Fn(&ByMode) -> f64| mean(these.iter().map(|(_, b)| f(b)));
            let mut lat: Vec<f64> = these.iter().map(|(_, b)| ms(b.hybrid.latency)).collect();
            lat.sort_by(f64::total_cmp);
            let _ = writeln!(
                md,
                "| {vault} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.2} / {:.2} | {:.1} |",
                these.len(),
                kind.as_str(),
                m(&|b| b.keyword.p5),
                m(&|b| b.semantic.p5),
                m(&|b| b.hybrid.p5),
                m(&|b| b.keyword.rr),
                m(&|b| b.semantic.rr),
                m(&|b| b.hybrid.rr),
                lat[lat.len() / 2],
                lat[lat.len() - 1],
                m(&|b| ms(b.embed)),
            );
        }
    }
    let _ = writeln!(
        md,
        "\nUnrelated queries (kind `unrelated`, on what no entry is about): entries found by meaning, semantic mode (hits) and hybrid (`semanticHits`), mean and most per query.\n"
    );
    let _ = writeln!(md, "| vault | queries | semantic mean / most | hybrid mean / most |");
    let _ = writeln!(md, "|---|---:|---:|---:|");
    for vault in ["hugo", "personal", "all"] {
        let these: Vec<&(&Row, ByMode)> = by_mode
            .iter()
            .filter(|(r, _)| (vault == "all" || r.vault.as_str() == vault) && r.mode == Mode::Unrelated)
            .collect();
        if these.is_empty() {
            continue;
        }
        let counts = |f: &dyn Fn(&ByMode) -> usize| {
            let mean = mean(these.iter().map(|(_, b)| f(b) as f64));
            (mean, these.iter().map(|(_, b)| f(b)).max().unwrap_or(0))
        };
        let (semantic, semantic_most) = counts(&|b| b.semantic.hits.len());
        let (hybrid, hybrid_most) = counts(&|b| b.hybrid.by_meaning);
        let _ = writeln!(
            md,
            "| {vault} | {} | {semantic:.2} / {semantic_most} | {hybrid:.2} / {hybrid_most} |",
            these.len()
        );
    }
    let lost: Vec<String> = by_mode
        .iter()
        .filter(|(r, b)| r.mode == Mode::Words && (b.hybrid.p5 < b.keyword.p5 || b.hybrid.rr < b.keyword.rr))
        .map(|(r, b)| {
            format!(
                "{} `{}` (P@5 {:.2} → {:.2}, RR {:.2} → {:.2}; hybrid's first: {})",
                r.id,
                r.query,
                b.keyword.p5,
                b.hybrid.p5,
                b.keyword.rr,
                b.hybrid.rr,
                b.hybrid.hits.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    let _ = writeln!(
        md,
        "\nWords queries hybrid ranks worse than keyword: {}.",
        if lost.is_empty() { "none".to_string() } else { lost.join("; ") }
    );
    let _ = writeln!(md, "\n| id | query | RR keyword | RR semantic | RR hybrid | first hit hybrid |");
    let _ = writeln!(md, "|---|---|---:|---:|---:|---|");
    for (row, b) in by_mode.iter().filter(|(r, _)| r.mode == Mode::Meaning) {
        let first = b.hybrid.hits.first().map_or("(none)".to_string(), |h| {
            if row.expected.contains(h) { format!("{h} ✓") } else { h.clone() }
        });
        let _ = writeln!(
            md,
            "| {} | `{}` | {:.2} | {:.2} | {:.2} | {first} |",
            row.id,
            row.query.replace('|', "\\|"),
            b.keyword.rr,
            b.semantic.rr,
            b.hybrid.rr
        );
    }
    md
}

/// How deep [`deep_rankings`] reads each ranking.
const DEEP: usize = 50;

/// Appends to `out` the keyword and semantic rankings of the suite rows of `rows`,
/// [`DEEP`] hits each with why and how well they matched: what the ways of fusing the two
/// are tried on, away from the bench (`id suite expected way hits`, tab-separated, each hit
/// `path|matchedBy|score`).
fn deep_rankings(index: &TantivyIndex, rows: &[&Row], embedding: &meaning::Embedding, out: &mut String) {
    for row in rows.iter().filter(|r| suite(r).is_some()) {
        let (vector, _) = embedding.query(&row.query);
        for mode in [kb_domain::SearchMode::Keyword, kb_domain::SearchMode::Semantic] {
            let query = SearchQuery { limit: DEEP, mode, vector: Some(vector.clone()), ..request(row) };
            let found = index.search(&query).unwrap();
            let hits: Vec<String> = found
                .entries
                .iter()
                .map(|h| format!("{}|{}|{:.5}", h.path, h.matched_by.as_str(), h.score))
                .collect();
            let _ = writeln!(
                out,
                "{}\t{}\t{}\t{}\t{}",
                row.id,
                suite(row).unwrap_or("-"),
                row.expected.join(" "),
                mode.as_str(),
                hits.join(" ")
            );
        }
    }
}

/// The suite a row is scored in, when it is in one (prefix and unrelated rows are not).
fn suite(row: &Row) -> Option<&'static str> {
    match row.mode {
        Mode::Words => Some("words"),
        Mode::Meaning => Some("meaning"),
        Mode::Question => Some("question"),
        Mode::Prefix | Mode::Unrelated => None,
    }
}

/// The ranking `hits` of `row` searched in `way`.
fn ranking(row: &Row, way: &'static str, hits: Vec<String>) -> suites::Ranking {
    suites::Ranking {
        id: row.id.clone(),
        suite: suite(row).unwrap_or("words"),
        way,
        expected: row.expected.clone(),
        hits,
    }
}

/// Copies the files of `from` into `to` (made when missing); nothing when `from` is not
/// there.
fn copy_folder(from: &Path, to: &Path) {
    let Ok(items) = fs::read_dir(from) else { return };
    fs::create_dir_all(to).unwrap();
    for item in items.flatten() {
        if item.path().is_file() {
            fs::copy(item.path(), to.join(item.file_name())).unwrap();
        }
    }
}
