//! Search benchmark (figures, not a timed test): for generated vaults of 1,000 / 10,000 /
//! 100,000 entries (`KB_BENCH_SIZES=1000,10000` to choose), prints and saves to
//! `target/bench/search.md` a table of cold index time, warm open time, search p50/p99 over
//! a fixed query mix, capture-to-searchable latency (through the change observer and
//! through the file watcher), a brute-force scan of the files for the same queries, and
//! peak RSS.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kb_domain::{Category, ChangeObserver, Entry, EntryChange, EntryPath, SearchIndex, SearchQuery};
use kb_search::analysis::{analyze, query_terms};
use kb_search::testgen::{word, write_vault};
use kb_search::{TantivyIndex, VaultWatcher};
use kb_storage::vault::EntryFiles;

const SEED: u64 = 20_261_121;
const SEARCH_ROUNDS: usize = 200;

struct Case {
    label: &'static str,
    text: String,
    category: Option<Category>,
}

fn query_mix() -> Vec<Case> {
    let case = |label, text: String, category| Case { label, text, category };
    vec![
        case("common term", word(0), None),
        case("common term", word(3), None),
        case("rare term", word(2500), None),
        case("rare term", word(4700), None),
        case("two terms", format!("{} {}", word(4), word(21)), None),
        case("two terms", format!("{} {}", word(1), word(300)), None),
        case("category filter", word(2), Some(Category::Ideas)),
        case("category filter", format!("{} {}", word(10), word(5)), Some(Category::Projects)),
        case("accent-folded", "cafe".to_string(), None),
        case("typo (fuzzy)", "schedlue".to_string(), None),
        // Questions as people type them: the words without meaning are left out, and when
        // the entries holding every other word are fewer than the page, those holding some
        // follow (the partial pass).
        case("question, 2 words", format!("{} {}", word(7), word(3100)), None),
        case("question, 2 words", format!("{} {}", word(2), word(800)), None),
        case(
            "question, 12 words",
            format!(
                "when did I talk about {} and {} with {} for {}",
                word(7),
                word(3100),
                word(12),
                word(950)
            ),
            None,
        ),
        case(
            "question, 12 words",
            format!("what was the {} {} that {} asked me to {} today", word(2), word(800), word(40), word(5)),
            None,
        ),
    ]
}

struct Row {
    size: usize,
    cold: Duration,
    warm: Duration,
    p50: Duration,
    p99: Duration,
    observer: Duration,
    watcher: Duration,
    brute: Duration,
    rss_mib: f64,
    disk_mib: f64,
    per_kind: Vec<(&'static str, Duration, Duration)>,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn peak_rss_mib() -> f64 {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn dir_size(path: &Path) -> u64 {
    fs::read_dir(path)
        .map(|items| {
            items.flatten().filter_map(|i| i.metadata().ok()).filter(|m| m.is_file()).map(|m| m.len()).sum()
        })
        .unwrap_or(0)
}

fn request(case: &Case) -> SearchQuery {
    SearchQuery {
        text: case.text.clone(),
        category: case.category,
        limit: 10,
        offset: 0,
        prefix: false,
        // As search_entries asks.
        partial: true,
        ..Default::default()
    }
}

/// The same question answered without an index: read every entry file, analyse it, and
/// count the files holding every term (ripgrep is not used: it does not fold accents).
fn brute_force(root: &Path, case: &Case) -> usize {
    let terms = query_terms(&case.text);
    let mut count = 0;
    for category in Category::ALL {
        if case.category.is_some_and(|c| c != category) {
            continue;
        }
        for item in fs::read_dir(root.join(category.as_str())).unwrap().flatten() {
            let text = fs::read_to_string(item.path()).unwrap_or_default();
            let words = analyze(&text);
            if terms.iter().all(|t| words.contains(t)) {
                count += 1;
            }
        }
    }
    count
}

/// Polls until searching `text` finds the entry at `path` exactly (not through the
/// typo-tolerant retry, which would find an earlier, similar marker).
fn wait_for(index: &TantivyIndex, text: &str, path: &str, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        let r = index.search(&request(&Case { label: "", text: text.into(), category: None })).unwrap();
        if !r.fuzzy && r.entries.iter().any(|h| h.path.to_string() == path) {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    None
}

fn run(size: usize, scratch: &Path) -> Row {
    let root = scratch.join(format!("vault-{size}"));
    let _ = fs::remove_dir_all(&root);
    let generated = Instant::now();
    write_vault(&root, size, SEED).unwrap();
    eprintln!("  {size}: vault written in {:.1?}", generated.elapsed());
    let index_dir = root.join(".kb/index");
    let files = Arc::new(EntryFiles::new(&root).unwrap());

    let start = Instant::now();
    let index = TantivyIndex::open(files.clone(), &index_dir).unwrap();
    let cold = start.elapsed();
    assert_eq!(index.len(), size);
    drop(index);

    let start = Instant::now();
    let index = Arc::new(TantivyIndex::open(files, &index_dir).unwrap());
    let warm = start.elapsed();
    assert!(index.open_stats().rebuild_reason.is_none());
    eprintln!("  {size}: cold {cold:.1?}, warm {warm:.1?}");

    let mix = query_mix();
    let mut all = Vec::new();
    let mut by_kind: Vec<(&'static str, Vec<Duration>)> = Vec::new();
    for case in &mix {
        let q = request(case);
        index.search(&q).unwrap(); // warm the caches once
        for _ in 0..SEARCH_ROUNDS {
            let t = Instant::now();
            let r = index.search(&q).unwrap();
            let d = t.elapsed();
            std::hint::black_box(r);
            all.push(d);
            match by_kind.iter_mut().find(|(l, _)| *l == case.label) {
                Some((_, v)) => v.push(d),
                None => by_kind.push((case.label, vec![d])),
            }
        }
    }
    all.sort();
    let per_kind = by_kind
        .into_iter()
        .map(|(l, mut v)| {
            v.sort();
            (l, percentile(&v, 0.5), percentile(&v, 0.99))
        })
        .collect();

    // Capture to searchable through the change observer (kb's own writes).
    let mut observer = Vec::new();
    for i in 0..20 {
        let rel = format!("inbox/bench-capture-{i}.md");
        let text = format!("---\nname: Capture {i}\n---\nfreshcapture{i} note\n");
        let t = Instant::now();
        fs::write(root.join(&rel), &text).unwrap();
        let entry = Entry::from_document(EntryPath::parse(&rel).unwrap(), &text).unwrap();
        index.entry_changed(&EntryChange::Upserted(entry));
        let found = wait_for(&index, &format!("freshcapture{i}"), &rel, Duration::from_secs(1));
        assert!(found.is_some());
        observer.push(t.elapsed());
    }
    observer.sort();

    // An outside edit to searchable through the watcher.
    let watcher = VaultWatcher::start(index.clone(), None).unwrap();
    let mut outside = Vec::new();
    for i in 0..5 {
        let rel = format!("ideas/bench-outside-{i}.md");
        fs::write(root.join(&rel), format!("outsideedit{i} words\n")).unwrap();
        let found = wait_for(&index, &format!("outsideedit{i}"), &rel, Duration::from_secs(5));
        outside.push(found.unwrap_or(Duration::MAX));
    }
    drop(watcher);
    outside.sort();

    // Brute force over the files, once per query (the index mean is over the same queries).
    let t = Instant::now();
    for case in &mix {
        std::hint::black_box(brute_force(&root, case));
    }
    let brute = t.elapsed() / mix.len() as u32;

    let row = Row {
        size,
        cold,
        warm,
        p50: percentile(&all, 0.5),
        p99: percentile(&all, 0.99),
        observer: percentile(&observer, 0.5),
        watcher: percentile(&outside, 0.5),
        brute,
        rss_mib: peak_rss_mib(),
        disk_mib: dir_size(&index_dir) as f64 / (1024.0 * 1024.0),
        per_kind,
    };
    drop(index);
    let _ = fs::remove_dir_all(&root);
    row
}

fn ms(d: Duration) -> String {
    if d == Duration::MAX {
        return "timeout".into();
    }
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 { format!("{ms:.2} ms") } else { format!("{ms:.0} ms") }
}

fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# kb-search benchmark\n");
    let _ = writeln!(
        out,
        "Generated vaults (seed {SEED}, 150–400 words per body), {} cores. Search: {} rounds of each of {} queries, limit 10, snippets included. Brute force: read + analyse every file per query (plain Rust scan). Peak RSS is the process high-water mark so far (sizes run in increasing order).\n",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        SEARCH_ROUNDS,
        query_mix().len()
    );
    let _ = writeln!(
        out,
        "| entries | cold index | warm open | search p50 | search p99 | capture→searchable (observer) | outside edit→searchable (watcher) | brute force / query | brute ÷ index p50 | index on disk | peak RSS |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let ratio = r.brute.as_secs_f64() / r.p50.as_secs_f64().max(1e-9);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.0}× | {:.0} MiB | {:.0} MiB |",
            r.size,
            ms(r.cold),
            ms(r.warm),
            ms(r.p50),
            ms(r.p99),
            ms(r.observer),
            ms(r.watcher),
            ms(r.brute),
            ratio,
            r.disk_mib,
            r.rss_mib
        );
    }
    let _ = writeln!(out, "\n## Search latency by query kind (p50 / p99)\n");
    let kinds: Vec<&str> =
        rows.first().map(|r| r.per_kind.iter().map(|(l, ..)| *l).collect()).unwrap_or_default();
    let _ = writeln!(
        out,
        "| query kind | {} |",
        rows.iter().map(|r| r.size.to_string()).collect::<Vec<_>>().join(" | ")
    );
    let _ = writeln!(out, "|---|{}", "---:|".repeat(rows.len()));
    for kind in kinds {
        let cells: Vec<String> = rows
            .iter()
            .map(|r| {
                r.per_kind
                    .iter()
                    .find(|(l, ..)| *l == kind)
                    .map_or("-".into(), |(_, a, b)| format!("{} / {}", ms(*a), ms(*b)))
            })
            .collect();
        let _ = writeln!(out, "| {kind} | {} |", cells.join(" | "));
    }
    out
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not used.
    let sizes: Vec<usize> = std::env::var("KB_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().replace('_', "").parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000]);
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace.join("target"), PathBuf::from);
    let out_dir = target.join("bench");
    fs::create_dir_all(&out_dir).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let mut rows = Vec::new();
    for size in sizes {
        eprintln!("kb-search bench: {size} entries");
        rows.push(run(size, scratch.path()));
    }
    let table = table(&rows);
    println!("{table}");
    let file = out_dir.join("search.md");
    fs::write(&file, &table).unwrap();
    eprintln!("saved to {}", file.display());
}
