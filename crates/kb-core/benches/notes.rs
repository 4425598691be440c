//! Notes benchmark (figures, not a timed test): kb on a generated Obsidian-like vault of
//! 10,000 notes (`KB_BENCH_NOTES` to choose another size) in about 200 folders, with
//! about five links a note in every form Obsidian writes, driven in-process through
//! [`kb_core::Assistant`] opened as `kb serve` opens it (offline model, following outside
//! edits). Prints a Markdown table and saves it to `target/bench/notes.md`, and the raw
//! figures to `target/bench/notes.tsv`.
//!
//! The vault: notes in folders up to three levels deep outside the category folders (a
//! few at the root), three in a hundred of them kb entries in `people/`, `projects/` and
//! `ideas/`; some file names shared between folders; free-form frontmatter (tags,
//! aliases, dates) on most notes, none on the rest; a few paragraphs each with `[[Note]]`,
//! `[[Folder/Note]]`, `[[Note|alias]]`, `[[Note#Heading]]`, `![[Note]]`, Markdown links
//! `[x](../Folder/Note.md)`, links to aliases and to notes that do not exist, and now and
//! then a code block whose `[[...]]` is not a link. One note is linked to by exactly 100
//! others, each by its path (`[[Folder/Sub/Note]]`).
//!
//! What is measured:
//! - the first start with no `.kb/` (catalogue and search index built from scratch) until
//!   a search answers, and a warm start; the vault's files are compared byte for byte
//!   before and after them, and again after the reads below;
//! - get_entry with its links and backlinks, and build_context at depth 2, for 500 random
//!   notes each; then, on the vault alone, its catalogue's links and context (what the
//!   tools read, without them);
//! - search for a word of the generated text, 200 queries;
//! - moving the note 100 others link to into another folder and back, 10 times, checking
//!   after each move that all 100 files link to the new path and nothing else in them
//!   changed (and, after the first, that no other file of the vault changed);
//! - the process's resident memory after the first start.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::fs;
use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kb_core::clock::ZonedClock;
use kb_core::domain::EntryCatalogue;
use kb_core::tools::context::BuildContext;
use kb_core::{
    Assistant, CaptureSource, Config, EntryPath, IndexOpenOptions, IndexProgress, ProgressFn, SearchRequest,
};
use kb_storage::vault::Vault;
use serde_json::json;

/// The generator's seed: the same vault on every run.
const SEED: u64 = 20_261_127;
/// Notes in the vault unless `KB_BENCH_NOTES` says otherwise.
const DEFAULT_NOTES: usize = 10_000;
/// Notes read with get_entry and build_context (each).
const SAMPLES: usize = 500;
/// Searches.
const QUERIES: usize = 200;
/// Notes that link to the note that is moved.
const LINKERS: usize = 100;
/// Moves of that note (there and back, so it ends where it began).
const MOVES: usize = 10;
/// The moved note's name (no generated name can be it).
const HUB: &str = "Quarterly Planning Hub";
/// Where the moved note goes, and comes back from.
const HUB_AWAY: &str = "Archive";
/// The vault's top folders outside the category folders.
const TOPS: [&str; 10] = [
    "Journal", "Work", "Reading", "Areas", "Archive", "Clients", "Recipes", "Travel", "Research", "Meetings",
];
/// The pieces words are made of.
const SYLLABLES: [&str; 32] = [
    "ba", "ce", "di", "fo", "gu", "ka", "le", "mi", "no", "pa", "ri", "sa", "te", "vo", "zu", "lan", "mer",
    "tor", "vin", "sol", "dra", "kel", "mor", "fen", "quil", "bro", "tha", "wen", "yar", "gis", "nup", "hes",
];

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (which is not 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// A number below `n`, small ones far more often (about as words are used).
    fn skewed(&mut self, n: usize) -> usize {
        let unit = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((n as f64).powf(unit) as usize).saturating_sub(1).min(n - 1)
    }
}

/// Words and names from a fixed vocabulary of made-up words.
struct Words {
    rng: Rng,
    vocabulary: Vec<String>,
}

impl Words {
    fn new(seed: u64) -> Words {
        let mut rng = Rng(seed);
        let mut seen = HashSet::new();
        let mut vocabulary = Vec::new();
        while vocabulary.len() < 2000 {
            let syllables = 2 + rng.below(2);
            let word: String = (0..syllables).map(|_| SYLLABLES[rng.below(SYLLABLES.len())]).collect();
            if seen.insert(word.clone()) {
                vocabulary.push(word);
            }
        }
        Words { rng, vocabulary }
    }

    /// One word, common ones more often.
    fn word(&mut self) -> &str {
        let i = self.rng.skewed(self.vocabulary.len());
        &self.vocabulary[i]
    }

    /// `n` words, lower case.
    fn words(&mut self, n: usize) -> String {
        (0..n).map(|_| self.word().to_string()).collect::<Vec<_>>().join(" ")
    }

    /// `n` words, each capitalised: a note's or a heading's name.
    fn title(&mut self, n: usize) -> String {
        (0..n).map(|_| capitalised(self.word())).collect::<Vec<_>>().join(" ")
    }

    /// A note's name: one to three words, any word as likely as another (with the skew
    /// of [`Words::word`], names would be shared far more often than in a person's vault).
    fn note_name(&mut self) -> String {
        let length = match self.rng.below(10) {
            0 => 1,
            1..=6 => 2,
            _ => 3,
        };
        let names: Vec<String> = (0..length)
            .map(|_| capitalised(&self.vocabulary[self.rng.below(self.vocabulary.len())]))
            .collect();
        names.join(" ")
    }

    /// A paragraph of a few sentences, as words (the last of each ending with a period).
    fn paragraph(&mut self) -> Vec<String> {
        let mut words = Vec::new();
        for _ in 0..2 + self.rng.below(3) {
            let length = 6 + self.rng.below(9);
            for i in 0..length {
                let word = self.word().to_string();
                let word = if i == 0 { capitalised(&word) } else { word };
                words.push(if i + 1 == length { format!("{word}.") } else { word });
            }
        }
        words
    }
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// What a note is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A note of the person's, outside the category folders.
    Own,
    /// A kb entry in this category folder.
    Entry(&'static str),
    /// The note the 100 linking notes link to.
    Hub,
}

/// One note of the generated vault.
struct Note {
    kind: Kind,
    /// Its folder, vault-relative (empty at the root).
    folder: String,
    /// Its file name without `.md`: what a `[[link]]` names.
    stem: String,
    /// Its name as kb's frontmatter says it (entries only).
    name: String,
    headings: Vec<String>,
    aliases: Vec<String>,
}

impl Note {
    /// Its vault path.
    fn path(&self) -> String {
        if self.folder.is_empty() {
            format!("{}.md", self.stem)
        } else {
            format!("{}/{}.md", self.folder, self.stem)
        }
    }
}

/// The vault before it is written: its folders, its notes, and who links to the hub.
struct Plan {
    folders: Vec<String>,
    /// How many notes share their file name with another, and the most that share one.
    shared_names: (usize, usize),
    notes: Vec<Note>,
    /// Notes linked to far more often than the rest.
    popular: Vec<usize>,
    /// Whether each note links to the hub.
    links_hub: Vec<bool>,
}

/// The folders outside the category folders: ten at the top, four in each, four in each
/// of those (210).
fn folders(words: &mut Words) -> Vec<String> {
    let mut folders: Vec<String> = TOPS.iter().map(|t| t.to_string()).collect();
    for depth in 0..2 {
        let parents: Vec<String> =
            folders.iter().filter(|f| f.matches('/').count() == depth).cloned().collect();
        for parent in parents {
            let mut names = HashSet::new();
            while names.len() < 4 {
                names.insert(words.title(1));
            }
            let mut names: Vec<String> = names.into_iter().collect();
            names.sort();
            folders.extend(names.into_iter().map(|name| format!("{parent}/{name}")));
        }
    }
    folders
}

/// Plans a vault of `size` notes: note 0 is the hub, then the kb entries, then the
/// person's own notes.
fn plan(size: usize, words: &mut Words) -> Plan {
    let folders = folders(words);
    let hub_folder = folders.iter().find(|f| f.starts_with("Work/") && f.matches('/').count() == 1).unwrap();
    let entries = size * 3 / 100;
    let mut notes: Vec<Note> = Vec::with_capacity(size);
    let mut taken = HashSet::new();
    for i in 0..size {
        let (kind, folder, stem, name) = if i == 0 {
            (Kind::Hub, hub_folder.clone(), HUB.to_string(), HUB.to_string())
        } else if i <= entries {
            let category = ["people", "projects", "ideas"][i % 3];
            let name = words.title(2);
            let slug = format!("{}-{i}", name.to_lowercase().replace(' ', "-"));
            (Kind::Entry(category), category.to_string(), slug, name)
        } else {
            let folder = if words.rng.chance(1) {
                String::new()
            } else {
                folders[words.rng.below(folders.len())].clone()
            };
            // Now and then a file name another folder has too.
            let shared = i > entries + 1 && words.rng.chance(5);
            let stem = if shared {
                notes[entries + 1 + words.rng.below(i - entries - 1)].stem.clone()
            } else {
                words.note_name()
            };
            (Kind::Own, folder, stem.clone(), stem)
        };
        let mut note = Note { kind, folder, stem, name, headings: Vec::new(), aliases: Vec::new() };
        let mut n = 2;
        while !taken.insert(note.path().to_lowercase()) {
            note.stem = format!("{} {n}", note.name);
            n += 1;
        }
        note.headings = (0..1 + words.rng.below(3)).map(|_| words.title(2)).collect();
        if kind != Kind::Hub && words.rng.chance(12) {
            note.aliases.push(words.title(2));
        }
        notes.push(note);
    }
    let popular = (0..200).map(|_| 1 + words.rng.below(size - 1)).collect();
    let mut links_hub = vec![false; size];
    let mut linkers = 0;
    while linkers < LINKERS {
        let i = 1 + words.rng.below(size - 1);
        if !links_hub[i] {
            links_hub[i] = true;
            linkers += 1;
        }
    }
    let shared_names = shared_names(&notes);
    Plan { folders, notes, popular, links_hub, shared_names }
}

/// How many notes share their file name (case aside) with another, and the most notes
/// that share one.
fn shared_names(notes: &[Note]) -> (usize, usize) {
    let mut by_name: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for note in notes {
        *by_name.entry(note.stem.to_lowercase()).or_default() += 1;
    }
    let shared = by_name.values().filter(|n| **n > 1).sum();
    (shared, by_name.values().copied().max().unwrap_or(0))
}

/// The path from a note in `from` (a folder) to the file at `to`, as a Markdown link
/// writes it (`../Other/Note%20name.md`).
fn relative(from: &str, to: &str) -> String {
    let from: Vec<&str> = from.split('/').filter(|p| !p.is_empty()).collect();
    let to: Vec<&str> = to.split('/').collect();
    let folders = &to[..to.len() - 1];
    let common = from.iter().zip(folders).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; from.len() - common];
    parts.extend(&to[common..]);
    parts.join("/").replace(' ', "%20")
}

/// How many links a note's text holds, by whether they lead anywhere.
#[derive(Default, Clone, Copy)]
struct LinkCount {
    written: usize,
    unresolved: usize,
}

/// A link from `source` to note `target`, in one of the forms Obsidian writes.
fn link(words: &mut Words, source: &Note, target: &Note, count: &mut LinkCount) -> String {
    count.written += 1;
    match words.rng.below(100) {
        0..5 => {
            count.unresolved += 1;
            format!("[[Unwritten {}]]", words.title(2))
        }
        5..58 => format!("[[{}]]", target.stem),
        58..66 => {
            let path = target.path();
            let path = path.strip_suffix(".md").unwrap_or(&path);
            // The whole path, or its last folder and the file name.
            let short = path.rsplitn(3, '/').take(2).collect::<Vec<_>>();
            let written = if words.rng.chance(50) || short.len() < 2 {
                path.to_string()
            } else {
                format!("{}/{}", short[1], short[0])
            };
            format!("[[{written}]]")
        }
        66..74 => format!("[[{}|{}]]", target.stem, words.words(2)),
        74..82 => format!("[[{}#{}]]", target.stem, target.headings[0]),
        82..87 => format!("![[{}]]", target.stem),
        87..96 => format!("[{}]({})", words.words(2), relative(&source.folder, &target.path())),
        _ => match target.aliases.first() {
            Some(alias) => format!("[[{alias}]]"),
            None => format!("[[{}]]", target.stem),
        },
    }
}

/// A note to link to from note `source`: a popular one a quarter of the time; never the
/// hub, never itself.
fn target(words: &mut Words, plan: &Plan, source: usize) -> usize {
    loop {
        let t = if words.rng.chance(25) {
            plan.popular[words.rng.below(plan.popular.len())]
        } else {
            1 + words.rng.below(plan.notes.len() - 1)
        };
        if t != source {
            return t;
        }
    }
}

/// The hub's path without `.md`, as the 100 linking notes write it, when it is in `folder`.
fn hub_target(folder: &str) -> String {
    format!("{folder}/{HUB}")
}

/// The link to the hub that a linking note writes: its path, with an alias, a heading or
/// as an embed now and then.
fn hub_link(words: &mut Words, folder: &str) -> String {
    let target = hub_target(folder);
    match words.rng.below(10) {
        0..=1 => format!("[[{target}|the plan]]"),
        2..=3 => format!("[[{target}#Goals]]"),
        4 => format!("![[{target}]]"),
        _ => format!("[[{target}]]"),
    }
}

/// Note `i`'s frontmatter (with its final newline), or nothing.
fn frontmatter(words: &mut Words, note: &Note, i: usize) -> String {
    let mut lines = Vec::new();
    let tags = |words: &mut Words| {
        let n = 1 + words.rng.below(3);
        format!("tags: [{}]", words.words(n).replace(' ', ", "))
    };
    let day =
        |words: &mut Words| format!("2025-{:02}-{:02}", 1 + words.rng.below(12), 1 + words.rng.below(28));
    match note.kind {
        Kind::Entry(category) => {
            let stamp = format!("{}T{:02}:{:02}:00Z", day(words), words.rng.below(24), words.rng.below(60));
            lines.push(format!("id: 01JD{i:022}"));
            lines.push(format!("name: {}", note.name));
            match category {
                "people" => lines.push(format!("context: {}", words.words(6))),
                "projects" => {
                    lines.push("status: active".to_string());
                    lines.push(format!("next_action: {}", words.words(5)));
                }
                _ => lines.push(format!("one_liner: {}", words.words(8))),
            }
            lines.push(tags(words));
            lines.push(format!("created_at: {stamp}"));
            lines.push(format!("updated_at: {stamp}"));
            lines.push(format!("confidence: 0.{}", 50 + words.rng.below(50)));
            lines.push("source: chat".to_string());
        }
        Kind::Own | Kind::Hub => {
            if note.aliases.is_empty() && words.rng.chance(40) {
                return String::new();
            }
            if words.rng.chance(80) {
                lines.push(tags(words));
            }
            if words.rng.chance(50) {
                lines.push(format!("date: {}", day(words)));
            }
            if words.rng.chance(15) {
                lines.push("status: draft".to_string());
            }
        }
    }
    if !note.aliases.is_empty() {
        lines.push(format!("aliases: [{}]", note.aliases.join(", ")));
    }
    if lines.is_empty() {
        return String::new();
    }
    format!("---\n{}\n---\n", lines.join("\n"))
}

/// Note `i`'s whole text, counting its links in `count`.
fn text(words: &mut Words, plan: &Plan, i: usize, count: &mut LinkCount) -> String {
    let note = &plan.notes[i];
    let mut text = frontmatter(words, note, i);
    if words.rng.chance(50) {
        let _ = write!(text, "# {}\n\n", note.name);
    }
    let mut paragraphs: Vec<Vec<String>> =
        (0..(3 + words.rng.below(3)).max(note.headings.len() + 1)).map(|_| words.paragraph()).collect();
    let links = if note.kind == Kind::Hub { 4 } else { 1 + words.rng.below(9) };
    for _ in 0..links {
        let t = target(words, plan, i);
        let written = link(words, note, &plan.notes[t], count);
        let p = words.rng.below(paragraphs.len());
        let at = words.rng.below(paragraphs[p].len() + 1);
        paragraphs[p].insert(at, written);
    }
    for (p, paragraph) in paragraphs.iter().enumerate() {
        if p > 0
            && let Some(heading) = note.headings.get(p - 1)
        {
            let _ = write!(text, "## {heading}\n\n");
        }
        text.push_str(&paragraph.join(" "));
        text.push_str("\n\n");
    }
    if words.rng.chance(8) {
        // Not links: inside a code block and inline code.
        let _ =
            write!(text, "```\nsee [[{}]]\n```\n\nWrite `[[{}]]` for a link.\n\n", note.stem, words.title(2));
    }
    if plan.links_hub[i] {
        let hub_folder = &plan.notes[0].folder;
        let _ = writeln!(text, "Filed under {} for {}.", hub_link(words, hub_folder), words.words(3));
        count.written += 1;
    }
    text
}

/// Writes the planned vault under `root`: how many links its notes hold.
fn write_vault(root: &Path, plan: &Plan, words: &mut Words) -> LinkCount {
    let mut count = LinkCount::default();
    for i in 0..plan.notes.len() {
        let text = text(words, plan, i, &mut count);
        let path = root.join(plan.notes[i].path());
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    count
}

/// Every file (with a hash of its bytes) and folder (`None`) of the vault outside `.kb/`.
fn snapshot(root: &Path) -> BTreeMap<String, Option<u64>> {
    let mut files = BTreeMap::new();
    let walk = walkdir::WalkDir::new(root).min_depth(1).into_iter();
    for entry in walk.filter_entry(|e| !(e.depth() == 1 && e.file_name() == ".kb")) {
        let entry = entry.unwrap();
        let name = entry.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
        let hash = entry.file_type().is_file().then(|| {
            let mut hasher = DefaultHasher::new();
            hasher.write(&fs::read(entry.path()).unwrap());
            hasher.finish()
        });
        files.insert(name, hash);
    }
    files
}

/// What differs between two snapshots: files or folders changed, added or gone.
fn differences(before: &BTreeMap<String, Option<u64>>, after: &BTreeMap<String, Option<u64>>) -> Vec<String> {
    let mut changed: Vec<String> = after
        .iter()
        .filter(|(path, hash)| before.get(*path) != Some(*hash))
        .map(|(path, _)| path.clone())
        .collect();
    changed.extend(before.keys().filter(|path| !after.contains_key(*path)).cloned());
    changed.sort();
    changed
}

/// A summary of a snapshot comparison, for the table.
fn compared(differences: &[String], files: usize) -> String {
    if differences.is_empty() {
        format!("yes: the {files} files the same, byte for byte; no file or folder added or gone")
    } else {
        let shown: Vec<&str> = differences.iter().take(5).map(String::as_str).collect();
        format!("**no**: {} differ ({}…)", differences.len(), shown.join(", "))
    }
}

/// The process's resident memory in kB (`VmRSS`) and its peak (`VmHWM`).
fn memory() -> (u64, u64) {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The CPU time this process has used so far, every thread (10 ms steps: `/proc`'s
/// clock ticks, 100 a second on Linux).
fn cpu_time() -> Duration {
    let stat = fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name (which may hold spaces) in parentheses; utime and
    // stime are the 14th and 15th of the line.
    let rest: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let ticks: u64 = [11, 12].iter().filter_map(|&i| rest.get(i)?.parse::<u64>().ok()).sum();
    Duration::from_millis(ticks * 10)
}

/// kb as `kb serve` opens it: offline model, following outside edits.
fn config(dir: &Path) -> Config {
    Config { watch: true, ..Config::offline(dir) }
}

/// A start: how long until a search for `word` answers with hits, and when the index
/// build reported its first and last progress (when it did).
struct Start {
    took: Duration,
    /// The CPU time the process used meanwhile.
    cpu: Duration,
    progress: Vec<(Duration, IndexProgress)>,
}

async fn start(dir: &Path, word: &str) -> (Assistant, Start) {
    let reports = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&reports);
    let began = Instant::now();
    let cpu = cpu_time();
    let progress: ProgressFn =
        Arc::new(move |p: IndexProgress| sink.lock().unwrap().push((began.elapsed(), p)));
    let options = IndexOpenOptions { progress: Some(progress), ..IndexOpenOptions::default() };
    let kb = Assistant::open_with_progress(config(dir), options).await.unwrap();
    let hits = kb.entries().search(&SearchRequest::new(word)).await.unwrap();
    let took = began.elapsed();
    let cpu = cpu_time().saturating_sub(cpu);
    assert!(hits.total > 0, "no note found for {word:?} after the start");
    let progress = reports.lock().unwrap().clone();
    (kb, Start { took, cpu, progress })
}

/// Sorted durations with their percentiles.
struct Timings(Vec<Duration>);

impl Timings {
    fn new(mut samples: Vec<Duration>) -> Timings {
        samples.sort();
        Timings(samples)
    }

    fn at(&self, q: f64) -> Duration {
        let i = ((self.0.len() - 1) as f64 * q).round() as usize;
        self.0[i]
    }

    fn p50(&self) -> Duration {
        self.at(0.5)
    }

    fn p99(&self) -> Duration {
        self.at(0.99)
    }

    fn max(&self) -> Duration {
        self.at(1.0)
    }
}

/// A duration as the table writes it.
fn show(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else if ms >= 1.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

/// Everything measured.
struct Figures {
    notes: usize,
    folders: usize,
    shared_names: (usize, usize),
    links: LinkCount,
    cold: Start,
    warm: Start,
    unchanged_after_start: String,
    unchanged_after_reads: String,
    get: Timings,
    links_seen: (usize, usize, usize),
    context: Timings,
    context_sizes: (f64, usize),
    search: Timings,
    moves: Timings,
    /// The CPU time the process used during each move.
    move_cpu: Timings,
    move_check: String,
    /// Opening the vault alone (reading every note, building the catalogue of links).
    vault_open: Duration,
    catalogue_links: Timings,
    catalogue_context: Timings,
    memory_before: (u64, u64),
    memory_after_start: (u64, u64),
    memory_end: (u64, u64),
}

/// get_entry of `sample`: timings, and the most links, the most backlinks and the mean
/// backlinks seen.
async fn read_entries(kb: &Assistant, sample: &[String]) -> (Timings, (usize, usize, usize)) {
    let (mut times, mut most_links, mut most_backlinks, mut backlinks) = (Vec::new(), 0, 0, 0);
    for path in sample {
        let began = Instant::now();
        let found = kb.entries().get(path).await.unwrap();
        times.push(began.elapsed());
        most_links = most_links.max(found.links().len());
        most_backlinks = most_backlinks.max(found.backlinks().len());
        backlinks += found.backlinks().len();
    }
    (Timings::new(times), (most_links, most_backlinks, backlinks / sample.len().max(1)))
}

/// build_context at depth 2 of `sample`: timings, and the mean and largest number of
/// notes found within the depth.
async fn contexts(kb: &Assistant, sample: &[String]) -> (Timings, (f64, usize)) {
    let (mut times, mut total, mut largest) = (Vec::new(), 0, 0);
    for path in sample {
        let began = Instant::now();
        let args = kb.tools().decode::<BuildContext>(json!({ "path": path, "depth": 2 })).unwrap();
        let context = kb.run::<BuildContext>(args, CaptureSource::Api).await.unwrap();
        times.push(began.elapsed());
        total += context.total;
        largest = largest.max(context.total);
    }
    (Timings::new(times), (total as f64 / sample.len().max(1) as f64, largest))
}

/// Searches for each of `queries`.
async fn searches(kb: &Assistant, queries: &[String]) -> Timings {
    let mut times = Vec::new();
    for query in queries {
        let began = Instant::now();
        kb.entries().search(&SearchRequest::new(query.as_str())).await.unwrap();
        times.push(began.elapsed());
    }
    Timings::new(times)
}

/// Moves the hub to [`HUB_AWAY`] and back, [`MOVES`] times: timings, and what the checks
/// found (every linking file leads to the new path, nothing else in it changed; after the
/// first move, no other file of the vault changed).
async fn moves(kb: &Assistant, root: &Path, plan: &Plan) -> (Timings, Timings, String) {
    let linkers: Vec<String> =
        plan.notes.iter().zip(&plan.links_hub).filter(|(_, links)| **links).map(|(n, _)| n.path()).collect();
    let home = plan.notes[0].folder.clone();
    let mut problems = Vec::new();
    let (mut times, mut cpu) = (Vec::new(), Vec::new());
    let before = snapshot(root);
    for round in 0..MOVES {
        let (from, to) = if round % 2 == 0 { (home.as_str(), HUB_AWAY) } else { (HUB_AWAY, home.as_str()) };
        let texts: Vec<String> = linkers.iter().map(|p| fs::read_to_string(root.join(p)).unwrap()).collect();
        let (began, cpu_before) = (Instant::now(), cpu_time());
        let moved = kb.entries().move_to_path(&format!("{from}/{HUB}.md"), &format!("{to}/{HUB}.md")).await;
        times.push(began.elapsed());
        cpu.push(cpu_time().saturating_sub(cpu_before));
        let moved = moved.unwrap();
        assert_eq!(moved.new_path, format!("{to}/{HUB}.md"));
        let (old_link, new_link) = (format!("[[{}", hub_target(from)), format!("[[{}", hub_target(to)));
        for (path, old) in linkers.iter().zip(&texts) {
            let now = fs::read_to_string(root.join(path)).unwrap();
            if now != old.replace(&old_link, &new_link) {
                problems.push(format!("move {}: {path} does not link to {to}/{HUB} as expected", round + 1));
            }
        }
        let backlinks = kb.entries().get(&moved.new_path).await.unwrap().backlinks.unwrap_or_default();
        let from_linkers: HashSet<&str> = backlinks.iter().filter_map(|b| b.path.as_deref()).collect();
        if from_linkers.len() != LINKERS {
            problems.push(format!("move {}: {} notes link to the moved note", round + 1, from_linkers.len()));
        }
        if round == 0 {
            let after = snapshot(root);
            let changed = differences(&before, &after);
            // The linking notes, and the moved note gone from one folder and in another.
            if changed.len() != LINKERS + 2 {
                problems.push(format!("the first move changed {} files, not {}", changed.len(), LINKERS + 2));
            }
        }
        // A person does not move notes back to back.
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let check = if problems.is_empty() {
        format!(
            "yes: after each of the {MOVES} moves all {LINKERS} files link to the new path (alias, heading and \
             embed kept) and nothing else in them changed; the first changed only them and the moved note"
        )
    } else {
        format!("**no**: {}", problems.join("; "))
    };
    (Timings::new(times), Timings::new(cpu), check)
}

/// The catalogue's links and context at depth 2 of `sample`, read from a [`Vault`] opened
/// alone: what get_entry and build_context read, without the tools around them.
fn catalogue(root: &Path, sample: &[String]) -> (Duration, Timings, Timings) {
    let began = Instant::now();
    let vault = Vault::open(root, Arc::new(ZonedClock::new(None))).unwrap();
    let opened = began.elapsed();
    let paths: Vec<EntryPath> = sample.iter().map(|p| EntryPath::parse(p).unwrap()).collect();
    let mut links = Vec::new();
    for path in &paths {
        let began = Instant::now();
        vault.links(path).unwrap();
        links.push(began.elapsed());
    }
    let mut context = Vec::new();
    for path in &paths {
        let began = Instant::now();
        vault.context(path, 2).unwrap();
        context.push(began.elapsed());
    }
    (opened, Timings::new(links), Timings::new(context))
}

async fn run(root: &Path, size: usize) -> Figures {
    let mut words = Words::new(SEED);
    let plan = plan(size, &mut words);
    let links = write_vault(root, &plan, &mut words);
    eprintln!(
        "  {} notes, {} folders, {} links written",
        plan.notes.len(),
        plan.folders.len(),
        links.written
    );
    let mut sampler = Rng(SEED ^ 0x5eed);
    let sample: Vec<String> =
        (0..SAMPLES).map(|_| plan.notes[sampler.below(plan.notes.len())].path()).collect();
    let queries: Vec<String> = (0..QUERIES).map(|_| words.word().to_string()).collect();
    let original = snapshot(root);
    let memory_before = memory();

    eprintln!("  first start (no .kb/)");
    let (kb, cold) = start(root, &queries[0]).await;
    let memory_after_start = memory();
    let unchanged_after_start = compared(&differences(&original, &snapshot(root)), plan.notes.len());
    kb.close().await;
    drop(kb);
    eprintln!("  warm start");
    let (kb, warm) = start(root, &queries[1]).await;

    eprintln!("  get_entry, build_context, search");
    let (get, links_seen) = read_entries(&kb, &sample).await;
    let (context, context_sizes) = contexts(&kb, &sample).await;
    let search = searches(&kb, &queries).await;
    let unchanged_after_reads = compared(&differences(&original, &snapshot(root)), plan.notes.len());

    eprintln!("  moves");
    let (moves, move_cpu, move_check) = moves(&kb, root, &plan).await;
    kb.close().await;
    drop(kb);

    eprintln!("  the catalogue alone");
    let (vault_open, catalogue_links, catalogue_context) = catalogue(root, &sample);
    Figures {
        notes: plan.notes.len(),
        folders: plan.folders.len(),
        shared_names: plan.shared_names,
        links,
        cold,
        warm,
        unchanged_after_start,
        unchanged_after_reads,
        get,
        links_seen,
        context,
        context_sizes,
        search,
        moves,
        move_cpu,
        move_check,
        vault_open,
        catalogue_links,
        catalogue_context,
        memory_before,
        memory_after_start,
        memory_end: memory(),
    }
}

/// When the index build first and last reported progress during a start.
fn progress(start: &Start) -> String {
    match (start.progress.first(), start.progress.last()) {
        (Some((first, p)), Some((last, q))) => format!(
            "index progress: {} of {} files at {}, {} at {}",
            p.done,
            p.total,
            show(*first),
            q.done,
            show(*last)
        ),
        _ => "no index progress reported".to_string(),
    }
}

/// The 1-minute load average (other work on the machine skews the figures).
fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn table(f: &Figures, load: &str, took: Duration) -> String {
    let mut out = String::new();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let _ = writeln!(out, "# kb notes benchmark\n");
    let _ = writeln!(
        out,
        "{} notes ({} kb entries in people/ projects/ ideas/, the rest in {} folders up to three deep \
         and at the root), {} links ({} to notes that do not exist). {cores} cores, load {load} at the \
         start; the run took {}. {} notes share their file name with another, at most {} one name.\n",
        f.notes,
        f.notes * 3 / 100,
        f.folders,
        f.links.written,
        f.links.unresolved,
        show(took),
        f.shared_names.0,
        f.shared_names.1
    );
    let _ = writeln!(out, "| operation | p50 | p99 / max | target |");
    let _ = writeln!(out, "|---|---:|---:|---|");
    let row = |out: &mut String, name: &str, p50: String, p99: String, target: &str| {
        let _ = writeln!(out, "| {name} | {p50} | {p99} | {target} |");
    };
    row(&mut out, "first start (no `.kb/`) until a search answers", show(f.cold.took), "—".into(), "< 10 s");
    row(&mut out, "warm start until a search answers", show(f.warm.took), "—".into(), "—");
    row(&mut out, "the vault alone opened (notes read, links resolved)", show(f.vault_open), "—".into(), "—");
    let (g, c) = (&f.get, &f.context);
    row(&mut out, "get_entry with links and backlinks", show(g.p50()), show(g.p99()), "p99 < 10 ms");
    let (l, k) = (&f.catalogue_links, &f.catalogue_context);
    row(&mut out, "links and backlinks, catalogue alone", show(l.p50()), show(l.p99()), "p99 < 10 ms");
    row(&mut out, "build_context, depth 2", show(c.p50()), show(c.p99()), "p99 < 20 ms");
    row(&mut out, "context depth 2, catalogue alone", show(k.p50()), show(k.p99()), "p99 < 20 ms");
    row(&mut out, "search (one word)", show(f.search.p50()), show(f.search.p99()), "—");
    let m = &f.moves;
    row(
        &mut out,
        "move a note 100 files link to",
        show(m.p50()),
        format!("{} (max)", show(m.max())),
        "< 500 ms",
    );
    let mib = |kb: u64| format!("{:.0} MiB", kb as f64 / 1024.0);
    row(&mut out, "resident memory after the first start", mib(f.memory_after_start.0), "—".into(), "—");
    let _ = writeln!(out);
    let _ = writeln!(out, "- Files unchanged after the first start: {}.", f.unchanged_after_start);
    let _ =
        writeln!(out, "- Files unchanged after the warm start and the reads: {}.", f.unchanged_after_reads);
    let _ = writeln!(out, "- Moves check: {}.", f.move_check);
    let _ = writeln!(
        out,
        "- First start: {} of CPU, {}; warm start: {} of CPU, {}.",
        show(f.cold.cpu),
        progress(&f.cold),
        show(f.warm.cpu),
        progress(&f.warm)
    );
    let _ = writeln!(
        out,
        "- A move used {} of CPU (p50; {} at most) of the process, background threads included.",
        show(f.move_cpu.p50()),
        show(f.move_cpu.max())
    );
    let (most_links, most_backlinks, mean_backlinks) = f.links_seen;
    let _ = writeln!(
        out,
        "- get_entry read notes with up to {most_links} links and {most_backlinks} backlinks ({mean_backlinks} \
         backlinks on average); build_context found {:.0} notes within depth 2 on average, at most {}.",
        f.context_sizes.0, f.context_sizes.1
    );
    let _ = writeln!(
        out,
        "- Memory: {} resident before the first start (the generator), {} after it; {} resident, {} at the \
         peak, at the end.",
        mib(f.memory_before.0),
        mib(f.memory_after_start.0),
        mib(f.memory_end.0),
        mib(f.memory_end.1)
    );
    let _ = writeln!(
        out,
        "\nHow the figures are taken: in one process, with `Assistant` opened as `kb serve` opens it \
         (offline model, following outside edits), calls made one after another. A start runs until a \
         one-word search answers with hits. get_entry and build_context (depth 2) read {SAMPLES} random \
         notes by path; the catalogue rows read the same notes from a `Vault` opened alone after the \
         rest. Search: {QUERIES} one-word queries from the generated text. The move takes the note {LINKERS} \
         others link to by its path (`[[Folder/Sub/Note]]`, some with an alias, a heading or as an embed) \
         to another folder and back, {MOVES} moves in all, 200 ms apart; each is timed until move_entry \
         answers."
    );
    out
}

/// The raw figures, one a line: name, milliseconds (or kB for memory).
fn raw(f: &Figures) -> String {
    let ms = |d: Duration| format!("{:.3}", d.as_secs_f64() * 1000.0);
    let mut out = String::from("figure\tvalue\n");
    let mut line = |name: &str, value: String| {
        let _ = writeln!(out, "{name}\t{value}");
    };
    line("first_start_ms", ms(f.cold.took));
    line("warm_start_ms", ms(f.warm.took));
    line("first_start_cpu_ms", ms(f.cold.cpu));
    line("warm_start_cpu_ms", ms(f.warm.cpu));
    line("vault_open_ms", ms(f.vault_open));
    for (name, t) in [
        ("get_entry", &f.get),
        ("catalogue_links", &f.catalogue_links),
        ("build_context", &f.context),
        ("catalogue_context", &f.catalogue_context),
        ("search", &f.search),
        ("move", &f.moves),
        ("move_cpu", &f.move_cpu),
    ] {
        line(&format!("{name}_p50_ms"), ms(t.p50()));
        line(&format!("{name}_p99_ms"), ms(t.p99()));
        line(&format!("{name}_max_ms"), ms(t.max()));
    }
    line("rss_after_start_kb", f.memory_after_start.0.to_string());
    line("rss_peak_kb", f.memory_end.1.to_string());
    out
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not used.
    let began = Instant::now();
    let size = std::env::var("KB_BENCH_NOTES")
        .ok()
        .and_then(|n| n.trim().replace('_', "").parse::<usize>().ok())
        .unwrap_or(DEFAULT_NOTES)
        .max(1000);
    let load = load_average();
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace.join("target"), PathBuf::from);
    let out_dir = target.join("bench");
    fs::create_dir_all(&out_dir).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("vault");
    eprintln!("kb notes bench: {size} notes in {}", root.display());
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let figures = runtime.block_on(run(&root, size));
    let table = table(&figures, &load, began.elapsed());
    println!("{table}");
    let file = out_dir.join("notes.md");
    fs::write(&file, &table).unwrap();
    fs::write(out_dir.join("notes.tsv"), raw(&figures)).unwrap();
    eprintln!("saved to {} (raw figures: notes.tsv)", file.display());
}
