//! Vault benchmark (figures, not a timed test): what a person waits for when kb drives a
//! generated vault of 10,000 / 100,000 entries (`KB_BENCH_SIZES=10000` to choose), each
//! figure printed next to the one the kb binary had at commit 12f149e, before the
//! performance work (read from `benches/vault-before.tsv`), and next to its target. Prints a Markdown table and
//! saves it to `target/bench/vault.md`, and the raw figures to `target/bench/vault.tsv`.
//!
//! Per size, on a fresh vault ([`kb_search::testgen::write_vault`]):
//! - `kb serve` with the offline model (own port, own `DATABASE_URL`): cold start (no
//!   `.kb/`) and warm start (after SIGTERM) until `/healthz` reports the index ready, and the
//!   first list after it;
//! - over HTTP, sequentially: search, capture, update, move, list (plain and filtered),
//!   daily and weekly digest, chat turn (offline model), p50 and p99 each;
//! - a second `kb serve` on the same vault: writes in one, time until the other's search and
//!   list show them;
//! - 5,000 entry files rewritten on disk at once (a `git pull`), time until a search on the
//!   server counts all of them;
//! - in-process chat turns through [`kb_core::Assistant`] with the offline model (a model that
//!   answers at once): the turn's overhead beyond the model.
//!
//! `KB_BENCH_BIN` names another kb binary to drive (default: this crate's `kb`), for
//! example one built from an older commit; `KB_BENCH_LABEL` names it in the table. The
//! in-process rows need this crate's library and are left out then.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use std::{fs, io};

use kb_core::{Assistant, Config};
use kb_domain::Category;
use kb_search::testgen::{entry, word, write_vault};
use serde_json::{Value, json};

mod common;
use common::{cpu_time, letters, load_average, machine, source_state, tail};

/// The generator's seed (the search benchmark's).
const SEED: u64 = 20_261_121;
/// Samples of each cheap operation.
const ROUNDS: usize = 200;
/// Samples of each digest.
const DIGEST_ROUNDS: usize = 30;
/// Chat turns over HTTP.
const HTTP_CHAT_ROUNDS: usize = 50;
/// Chat turns timed in-process (after a few untimed ones).
const CHAT_ROUNDS: usize = 200;
/// Untimed chat turns first (caches, the database file).
const CHAT_WARMUP: usize = 10;
/// A conversation goes on for this many turns, then a new one starts.
const TURNS_PER_CONVERSATION: usize = 10;
/// Writes whose visibility in another process is timed.
const CROSS_ROUNDS: usize = 50;
/// Entry files a `git pull` changes (at most half the vault).
const BULK: usize = 5_000;
/// One operation stops sampling after this long (with at least [`MIN_SAMPLES`]).
const OP_BUDGET: Duration = Duration::from_secs(60);
/// The fewest samples of an operation.
const MIN_SAMPLES: usize = 5;
/// The longest a start may take.
const START_LIMIT: Duration = Duration::from_secs(20 * 60);
/// The longest one write may take to show in another process.
const VISIBLE_LIMIT: Duration = Duration::from_secs(10);
/// The longest the bulk edits may take to be searchable.
const BULK_LIMIT: Duration = Duration::from_secs(120);
/// A process is idle once it used less than this share of one core over [`IDLE_WINDOW`].
const IDLE_SHARE: f64 = 0.1;
/// The window over which idleness is judged.
const IDLE_WINDOW: Duration = Duration::from_secs(2);
/// The longest the background work after a start may take.
const IDLE_LIMIT: Duration = Duration::from_secs(120);
/// The longest one request may take.
const REQUEST_LIMIT: Duration = Duration::from_secs(300);
/// The file of figures measured with the kb binary at commit 12f149e.
const BEFORE_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/vault-before.tsv");

// ---------------------------------------------------------------------------------------
// Figures and targets

/// What kind of figure a measurement gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Several samples: p50, p99 and their count.
    Samples,
    /// One duration.
    Once,
    /// Mebibytes (p50 holds the value).
    Mib,
    /// The binary refused (a second process on one vault).
    Refused,
    /// Not done within the limit (p50 holds the limit).
    Timeout,
    /// Not measured: a figure quoted from an earlier measurement.
    Quoted,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Samples => "samples",
            Kind::Once => "once",
            Kind::Mib => "mib",
            Kind::Refused => "refused",
            Kind::Timeout => "timeout",
            Kind::Quoted => "quoted",
        }
    }

    fn parse(text: &str) -> Option<Kind> {
        [Kind::Samples, Kind::Once, Kind::Mib, Kind::Refused, Kind::Timeout, Kind::Quoted]
            .into_iter()
            .find(|k| k.name() == text)
    }
}

/// One measured (or quoted) figure; durations in milliseconds.
#[derive(Debug, Clone)]
struct Figure {
    kind: Kind,
    p50: f64,
    p99: f64,
    n: usize,
    note: String,
}

impl Figure {
    fn samples(mut times: Vec<Duration>) -> Figure {
        times.sort();
        let at = |p: f64| {
            let i = ((times.len() as f64 - 1.0) * p).round() as usize;
            times[i.min(times.len() - 1)].as_secs_f64() * 1000.0
        };
        Figure { kind: Kind::Samples, p50: at(0.5), p99: at(0.99), n: times.len(), note: String::new() }
    }

    fn once(d: Duration) -> Figure {
        let ms = d.as_secs_f64() * 1000.0;
        Figure { kind: Kind::Once, p50: ms, p99: ms, n: 1, note: String::new() }
    }

    fn other(kind: Kind, value: f64, note: impl Into<String>) -> Figure {
        Figure { kind, p50: value, p99: value, n: 0, note: note.into() }
    }

    fn with_note(mut self, note: impl Into<String>) -> Figure {
        self.note = note.into();
        self
    }

    fn show(&self) -> String {
        let mut text = match self.kind {
            Kind::Samples => format!("{} / {} (n={})", ms(self.p50), ms(self.p99), self.n),
            Kind::Once => ms(self.p50),
            Kind::Mib => format!("{:.0} MiB", self.p50),
            Kind::Refused => "refused".into(),
            Kind::Timeout => format!("not within {}", ms(self.p50)),
            Kind::Quoted => format!("{} p50 (quoted)", ms(self.p50)),
        };
        if !self.note.is_empty() {
            let _ = write!(text, " — {}", self.note);
        }
        text
    }
}

/// A duration in milliseconds, written for reading.
fn ms(ms: f64) -> String {
    if ms >= 10_000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else if ms >= 1.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

/// The goal a row is checked against (stated for 100,000 entries).
#[derive(Debug, Clone, Copy)]
enum Target {
    None,
    /// p50 and p99 under these milliseconds.
    P50P99(f64, f64),
    /// p99 under this.
    P99(f64),
    /// p50 under this.
    P50(f64),
    /// Every sample (p99, or the one figure) under this.
    Under(f64),
}

impl Target {
    fn show(self) -> String {
        match self {
            Target::None => "—".into(),
            Target::P50P99(a, b) => format!("p50 < {}, p99 < {}", ms(a), ms(b)),
            Target::P99(b) => format!("p99 < {}", ms(b)),
            Target::P50(a) => format!("p50 < {}", ms(a)),
            Target::Under(b) => format!("< {}", ms(b)),
        }
    }

    /// None when there is nothing to check; else whether it is met and, when not, by how much.
    fn check(self, figure: &Figure) -> Option<(bool, String)> {
        let ratio = match (self, figure.kind) {
            (Target::None, _) | (_, Kind::Quoted | Kind::Mib) => return None,
            (_, Kind::Refused) => return Some((false, "refused".into())),
            (_, Kind::Timeout) => return Some((false, "not done within the limit".into())),
            (Target::P50P99(a, b), _) => {
                let (ra, rb) = (figure.p50 / a, figure.p99 / b);
                if ra >= rb { (ra, "p50") } else { (rb, "p99") }
            }
            (Target::P99(b) | Target::Under(b), _) => (figure.p99 / b, "p99"),
            (Target::P50(a), _) => (figure.p50 / a, "p50"),
        };
        let (ratio, which) = ratio;
        let which = if figure.kind == Kind::Once { "the figure" } else { which };
        if ratio < 1.0 {
            Some((true, "yes".into()))
        } else {
            Some((false, format!("**no**: {which} {ratio:.2}× the target")))
        }
    }
}

/// One row of the table.
struct Metric {
    key: &'static str,
    label: &'static str,
    target: Target,
}

/// Every row, in table order.
const METRICS: &[Metric] = &[
    Metric { key: "cold_start", label: "cold start (no .kb/) → index ready", target: Target::None },
    Metric {
        key: "cold_idle",
        label: "cold start → background work done (server idle)",
        target: Target::None,
    },
    Metric { key: "warm_start", label: "warm start → index ready", target: Target::None },
    Metric { key: "warm_idle", label: "warm start → server idle", target: Target::None },
    Metric { key: "first_list", label: "first list after the warm start", target: Target::Under(5.0) },
    Metric { key: "search", label: "search (HTTP)", target: Target::None },
    Metric { key: "capture", label: "capture (HTTP, offline model)", target: Target::P50P99(15.0, 50.0) },
    Metric {
        key: "capture_search",
        label: "capture, then a search that finds it (HTTP)",
        target: Target::None,
    },
    Metric { key: "update", label: "update (HTTP)", target: Target::P50P99(15.0, 50.0) },
    Metric { key: "move", label: "move (HTTP)", target: Target::P50P99(15.0, 50.0) },
    Metric { key: "list", label: "list, no filter (HTTP)", target: Target::P99(5.0) },
    Metric { key: "list_filtered", label: "list, category/status filters (HTTP)", target: Target::P99(5.0) },
    Metric { key: "digest_daily", label: "daily digest (HTTP)", target: Target::Under(50.0) },
    Metric { key: "digest_weekly", label: "weekly digest (HTTP)", target: Target::Under(50.0) },
    Metric { key: "chat_http", label: "chat turn (HTTP, offline model)", target: Target::None },
    Metric {
        key: "chat_overhead",
        label: "chat-turn overhead (in-process, instant model)",
        target: Target::P50(3.0),
    },
    Metric {
        key: "cross_process",
        label: "write in one process → visible in another",
        target: Target::P99(1000.0),
    },
    Metric {
        key: "bulk_edits",
        label: "5,000 outside edits → all searchable",
        target: Target::Under(5000.0),
    },
    Metric { key: "server_rss", label: "kb serve peak RSS", target: Target::None },
];

/// The figures of one vault size.
struct SizeRun {
    size: usize,
    figures: Vec<(&'static str, Figure)>,
    /// The machine's load average (1 minute) when the run began and ended.
    load: (String, String),
}

impl SizeRun {
    fn get(&self, key: &str) -> Option<&Figure> {
        self.figures.iter().find(|(k, _)| *k == key).map(|(_, f)| f)
    }
}

/// Figures measured earlier (the before file): `(size, key) → figure`, and its comments.
struct Before {
    rows: Vec<(usize, String, Figure)>,
    comments: Vec<String>,
}

impl Before {
    fn read() -> Before {
        let text = fs::read_to_string(BEFORE_FILE).unwrap_or_default();
        let mut rows = Vec::new();
        let mut comments = Vec::new();
        for line in text.lines() {
            if let Some(comment) = line.strip_prefix('#') {
                comments.push(comment.trim().to_string());
                continue;
            }
            let cells: Vec<&str> = line.split('\t').collect();
            if cells.len() < 6 || cells[0] == "size" {
                continue;
            }
            let (Ok(size), Some(kind), Ok(p50), Ok(p99), Ok(n)) = (
                cells[0].parse::<usize>(),
                Kind::parse(cells[2]),
                cells[3].parse::<f64>(),
                cells[4].parse::<f64>(),
                cells[5].parse::<usize>(),
            ) else {
                continue;
            };
            let note = cells.get(6).map_or(String::new(), |s| (*s).to_string());
            rows.push((size, cells[1].to_string(), Figure { kind, p50, p99, n, note }));
        }
        Before { rows, comments }
    }

    fn get(&self, size: usize, key: &str) -> Option<&Figure> {
        self.rows.iter().find(|(s, k, _)| *s == size && k == key).map(|(.., f)| f)
    }
}

// ---------------------------------------------------------------------------------------
// HTTP

/// An HTTP answer: status and body.
struct Reply {
    status: u16,
    body: Vec<u8>,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// One request over a fresh connection (`Connection: close`), read to the end.
fn http(
    addr: SocketAddr,
    method: &str,
    target: &str,
    body: Option<&Value>,
    limit: Duration,
) -> io::Result<Reply> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    stream.set_read_timeout(Some(limit))?;
    stream.set_nodelay(true)?;
    let body = body.map(Value::to_string);
    let mut head = format!("{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(body) = &body {
        let _ = write!(head, "Content-Type: application/json\r\nContent-Length: {}\r\n", body.len());
    }
    head.push_str("\r\n");
    if let Some(body) = &body {
        head.push_str(body);
    }
    stream.write_all(head.as_bytes())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(|| bad("no end of head"))?;
    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
    let status =
        head.split_whitespace().nth(1).and_then(|s| s.parse::<u16>().ok()).ok_or_else(|| bad("no status"))?;
    let mut body = raw[end + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = dechunk(&body).ok_or_else(|| bad("bad chunked body"))?;
    }
    Ok(Reply { status, body })
}

fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n")?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

/// Percent-encodes a vault path or query value (keeping `/` when `keep_slash`).
fn encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(byte as char),
            b'/' if keep_slash => out.push('/'),
            _ => {
                let _ = write!(out, "%{byte:02X}");
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// kb serve

/// A running `kb serve` child process (killed when dropped).
struct Server {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
}

/// Why a `kb serve` did not come up.
enum StartError {
    /// It exited; its log.
    Exited(String),
    /// It did not become ready within the limit.
    TooSlow,
}

impl Server {
    /// Starts `bin serve` on `vault` and waits until `/healthz` says the index is ready;
    /// answers the server and the time from spawning it.
    fn start(
        bin: &Path,
        vault: &Path,
        database: &Path,
        log: &Path,
    ) -> Result<(Server, Duration), StartError> {
        let mut last = String::new();
        for _ in 0..3 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
            let log_file = fs::File::create(log).unwrap();
            let mut command = Command::new(bin);
            for var in [
                "OPENAI_API_KEY",
                "OPENAI_BASE_URL",
                "KB_MODEL",
                "KB_DIR",
                "KB_API_TOKEN",
                "KB_ADDR",
                "KB_LLM_TIMEOUT_SECS",
                "KB_CONFIDENCE_THRESHOLD",
                "KB_MAX_TOOL_ROUNDS",
                "KB_HISTORY_WINDOW",
                "RUST_LOG",
            ] {
                command.env_remove(var);
            }
            command
                .env("DATABASE_URL", format!("sqlite://{}", database.display()))
                .env("KB_TIMEZONE", "UTC")
                .args(["serve", "--addr", &addr.to_string(), "--kb-dir"])
                .arg(vault)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log_file);
            let started = Instant::now();
            let child = command.spawn().unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()));
            let mut server = Server { child, addr, log: log.to_path_buf() };
            match server.wait_ready(started) {
                Ok(took) => return Ok((server, took)),
                Err(StartError::Exited(log))
                    if log.contains("address is in use") || log.contains("Address already in use") =>
                {
                    last = log;
                }
                Err(other) => return Err(other),
            }
        }
        Err(StartError::Exited(last))
    }

    fn wait_ready(&mut self, started: Instant) -> Result<Duration, StartError> {
        while started.elapsed() < START_LIMIT {
            if self.child.try_wait().unwrap().is_some() {
                return Err(StartError::Exited(self.log_text()));
            }
            if let Ok(reply) = http(self.addr, "GET", "/healthz", None, Duration::from_secs(2))
                && reply.status == 200
                && reply.json()["indexReady"] == json!(true)
            {
                return Ok(started.elapsed());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err(StartError::TooSlow)
    }

    fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A request that must succeed (2xx); answers its JSON.
    fn call(&self, method: &str, target: &str, body: Option<&Value>) -> Value {
        match http(self.addr, method, target, body, REQUEST_LIMIT) {
            Ok(reply) if (200..300).contains(&reply.status) => reply.json(),
            Ok(reply) => panic!(
                "{method} {target} answered {}: {}\nlog tail:\n{}",
                reply.status,
                String::from_utf8_lossy(&reply.body),
                tail(&self.log_text())
            ),
            Err(error) => panic!("{method} {target} failed: {error}\nlog tail:\n{}", tail(&self.log_text())),
        }
    }

    /// The process's peak resident memory so far, in MiB.
    fn peak_rss_mib(&self) -> Option<f64> {
        let status = fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let kb = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
        kb.trim().trim_end_matches("kB").trim().parse::<f64>().ok().map(|kb| kb / 1024.0)
    }

    /// SIGTERM, then waits for it to end (SIGKILL after a minute).
    fn stop(mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let asked = Instant::now();
        while asked.elapsed() < Duration::from_secs(60) {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        eprintln!("    kb serve did not stop within 60 s of SIGTERM: killed");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

// ---------------------------------------------------------------------------------------
// Measuring

/// Runs `op` up to `rounds` times (fewer once [`OP_BUDGET`] is spent, never fewer than
/// [`MIN_SAMPLES`]); `op` answers the time of its own timed part.
fn sample(rounds: usize, mut op: impl FnMut(usize) -> Duration) -> Figure {
    let began = Instant::now();
    let mut times = Vec::with_capacity(rounds);
    for i in 0..rounds {
        if times.len() >= MIN_SAMPLES && began.elapsed() > OP_BUDGET {
            break;
        }
        times.push(op(i));
    }
    Figure::samples(times)
}

/// Waits until process `pid` is idle (less than [`IDLE_SHARE`] of a core over
/// [`IDLE_WINDOW`]); answers the time from `since` to the start of that quiet window.
fn wait_idle(pid: u32, since: Instant) -> Figure {
    let Some(mut last) = cpu_time(pid) else { return Figure::other(Kind::Timeout, 0.0, "no /proc") };
    let mut window_start = Instant::now();
    loop {
        std::thread::sleep(IDLE_WINDOW);
        let Some(now) = cpu_time(pid) else { return Figure::other(Kind::Timeout, 0.0, "process gone") };
        if now.saturating_sub(last) < IDLE_WINDOW.mul_f64(IDLE_SHARE) {
            return Figure::once(window_start - since);
        }
        if since.elapsed() > IDLE_LIMIT {
            return Figure::other(Kind::Timeout, IDLE_LIMIT.as_secs_f64() * 1000.0, "still busy");
        }
        last = now;
        window_start = Instant::now();
    }
}

/// Times one call.
fn timed(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

/// The generated entries of `category`, in generation order (their paths).
fn generated(size: usize, category: Category, take: usize, from_end: bool) -> Vec<String> {
    let pick = |i: usize| {
        let (path, _) = entry(i, SEED);
        (path.category() == category).then(|| path.to_string())
    };
    if from_end {
        (0..size).rev().filter_map(pick).take(take).collect()
    } else {
        (0..size).filter_map(pick).take(take).collect()
    }
}

/// Capture texts of several kinds (the offline classifier files them in different folders).
fn capture_text(i: usize) -> String {
    let tag = letters(i + 7 * 26 * 26);
    match i % 5 {
        0 => format!("Renew passport {tag} by Dec 15"),
        1 => format!("Met Priya {tag} at the robotics meetup, she designs drones"),
        2 => format!("Idea: a bike-sharing app {tag} for the office"),
        3 => format!("Project: fix the shed roof {tag} before the rains"),
        _ => format!("Something about {tag} and the weekend"),
    }
}

/// Everything measured over one vault size with the binary `bin`.
fn run(size: usize, bin: &Path, in_process: bool, scratch: &Path) -> SizeRun {
    let load_before = load_average();
    let dir = scratch.join(format!("run-{size}"));
    let _ = fs::remove_dir_all(&dir);
    let vault = dir.join("vault");
    fs::create_dir_all(&dir).unwrap();
    let t = Instant::now();
    write_vault(&vault, size, SEED).unwrap();
    eprintln!("  {size}: vault written in {:.1?}", t.elapsed());
    let database = dir.join("kb.sqlite");
    let mut figures: Vec<(&'static str, Figure)> = Vec::new();
    let mut record = |key: &'static str, figure: Figure| {
        eprintln!("  {size}: {key}: {}", figure.show());
        figures.push((key, figure));
    };

    let start = |log: &str| match Server::start(bin, &vault, &database, &dir.join(log)) {
        Ok(started) => started,
        Err(StartError::Exited(log)) => panic!("kb serve exited at start:\n{}", tail(&log)),
        Err(StartError::TooSlow) => panic!("kb serve was not ready within {START_LIMIT:?}"),
    };
    let (server, cold) = start("serve-cold.log");
    let spawned = Instant::now() - cold;
    record("cold_start", Figure::once(cold));
    record("cold_idle", wait_idle(server.child.id(), spawned));
    server.stop();
    let (server, warm) = start("serve.log");
    let spawned = Instant::now() - warm;
    record("warm_start", Figure::once(warm));
    let first = timed(|| {
        server.call("GET", "/api/entries", None);
    });
    record("first_list", Figure::once(first));
    // What follows is timed once the start's background work is done (steady state).
    record("warm_idle", wait_idle(server.child.id(), spawned));

    let queries = [word(4), format!("{} {}", word(28), word(29)), word(2500), word(3), "cafe".to_string()];
    let figure = sample(ROUNDS, |i| {
        let target = format!("/api/search?q={}", encode(&queries[i % queries.len()], false));
        timed(|| {
            server.call("GET", &target, None);
        })
    });
    record("search", figure);

    let figure = sample(ROUNDS, |i| {
        let body = json!({ "text": capture_text(i) });
        timed(|| {
            server.call("POST", "/api/capture", Some(&body));
        })
    });
    record("capture", figure);

    // A capture's index commit happens after it answers; a search right after it waits for
    // that commit. Timed together, the two show what reading one's own write costs.
    let figure = sample(ROUNDS / 2, |i| {
        let word = format!("zq{}q", letters(i));
        let body = json!({ "text": format!("Idea: {word} a reading lamp for the balcony") });
        let target = format!("/api/search?q={word}");
        timed(|| {
            server.call("POST", "/api/capture", Some(&body));
            let found = server.call("GET", &target, None);
            assert_eq!(found["total"], 1, "a capture must be found by the next search: {found}");
        })
    });
    record("capture_search", figure);

    let projects = generated(size, Category::Projects, ROUNDS, false);
    let figure = sample(projects.len(), |i| {
        let status = ["waiting", "active", "blocked"][i % 3];
        let body = json!({ "status": status, "next_action": format!("Bench step {}", letters(i)) });
        let target = format!("/api/entries/{}", encode(&projects[i], true));
        timed(|| {
            server.call("PATCH", &target, Some(&body));
        })
    });
    record("update", figure);

    let ideas = generated(size, Category::Ideas, ROUNDS, false);
    let figure = sample(ideas.len(), |i| {
        let body = json!({ "targetCategory": "projects" });
        let target = format!("/api/entries/{}/move", encode(&ideas[i], true));
        timed(|| {
            server.call("POST", &target, Some(&body));
        })
    });
    record("move", figure);

    let figure = sample(ROUNDS, |_| {
        timed(|| {
            server.call("GET", "/api/entries", None);
        })
    });
    record("list", figure);
    let filters = [
        "?category=projects&status=active",
        "?category=admin&status=pending",
        "?category=people&limit=50",
        "?status=done",
        "?category=ideas&offset=200",
    ];
    let figure = sample(ROUNDS, |i| {
        let target = format!("/api/entries{}", filters[i % filters.len()]);
        timed(|| {
            server.call("GET", &target, None);
        })
    });
    record("list_filtered", figure);

    for (key, kind) in [("digest_daily", "daily"), ("digest_weekly", "weekly")] {
        let body = json!({ "type": kind });
        let figure = sample(DIGEST_ROUNDS, |_| {
            timed(|| {
                server.call("POST", "/api/digest", Some(&body));
            })
        });
        record(key, figure);
    }

    let mut conversation: Option<String> = None;
    let figure = sample(HTTP_CHAT_ROUNDS, |i| {
        if i % TURNS_PER_CONVERSATION == 0 {
            conversation = None;
        }
        let mut body = json!({ "message": chat_message(i) });
        if let Some(id) = &conversation {
            body["conversationId"] = json!(id);
        }
        let mut answer = Value::Null;
        let took = timed(|| answer = server.call("POST", "/api/chat", Some(&body)));
        assert!(
            answer["toolsUsed"].as_array().is_some_and(|t| !t.is_empty()),
            "the chat turn called no tool: {answer}"
        );
        conversation = answer["conversationId"].as_str().map(str::to_string);
        took
    });
    record("chat_http", figure);

    record("cross_process", cross_process(&server, bin, &vault, &database, &dir));

    record("bulk_edits", bulk_edits(&server, size, &vault));

    if let Some(rss) = server.peak_rss_mib() {
        record("server_rss", Figure::other(Kind::Mib, rss, ""));
    }
    server.stop();

    if in_process {
        // The server's database: it holds the vault's history, which a new one would
        // first record in the background.
        record("chat_overhead", chat_overhead(&vault, &database));
    }
    let _ = fs::remove_dir_all(&dir);
    SizeRun { size, figures, load: (load_before, load_average()) }
}

/// The chat messages: each makes the offline model call one tool, then answer.
fn chat_message(i: usize) -> String {
    match i % 3 {
        0 => "list my projects".to_string(),
        1 => format!("search for {}", word(7)),
        _ => "show my pending admin tasks".to_string(),
    }
}

/// A second `kb serve` on the same vault: captures alternate between the two, and each is
/// timed until the other process's search and list show it.
fn cross_process(first: &Server, bin: &Path, vault: &Path, database: &Path, dir: &Path) -> Figure {
    let second = match Server::start(bin, vault, database, &dir.join("serve-second.log")) {
        Ok((server, _)) => server,
        Err(StartError::Exited(log)) => {
            let reason = log
                .lines()
                .rev()
                .find(|l| l.contains("error"))
                .unwrap_or("exited")
                .trim()
                .chars()
                .take(160)
                .collect::<String>();
            eprintln!("    second kb serve refused: {reason}");
            let why = if log.contains("in use by another kb process") {
                "the index is in use by another kb process"
            } else {
                ""
            };
            return Figure::other(Kind::Refused, 0.0, why);
        }
        Err(StartError::TooSlow) => {
            return Figure::other(Kind::Timeout, START_LIMIT.as_secs_f64() * 1000.0, "start");
        }
    };
    let started = Instant::now();
    let idle = wait_idle(second.child.id(), started);
    eprintln!("    second kb serve idle after {}", idle.show());
    wait_idle(first.child.id(), Instant::now());
    let mut late = 0;
    let (mut to_search, mut to_list) = (Vec::new(), Vec::new());
    let figure = sample(CROSS_ROUNDS, |i| {
        let (writer, reader) = if i % 2 == 0 { (first, &second) } else { (&second, first) };
        let tag = format!("crossvis{}", letters(i * 977 + 31));
        let body = json!({ "text": format!("Remember {tag} for the garden"), "hints": "[idea]" });
        // The hint files it in ideas; the other process lists one more there once it sees it
        // (the page itself may not show it: generated entries can be dated later than now).
        let list = "/api/entries?category=ideas&limit=1";
        let listed = |server: &Server| server.call("GET", list, None)["total"].as_u64().unwrap();
        let expected = listed(reader) + 1;
        let began = Instant::now();
        let filed = writer.call("POST", "/api/capture", Some(&body));
        let path = filed["path"].as_str().unwrap().to_string();
        assert!(path.starts_with("ideas/"), "the capture went to {path}");
        let search = format!("/api/search?q={tag}&limit=5");
        let (mut in_search, mut in_list) = (false, false);
        while began.elapsed() < VISIBLE_LIMIT {
            if !in_search {
                let hits = reader.call("GET", &search, None);
                in_search = hits["fuzzy"] != json!(true)
                    && hits["entries"].as_array().is_some_and(|e| e.iter().any(|h| h["path"] == json!(path)));
                if in_search {
                    to_search.push(began.elapsed());
                }
            }
            if !in_list {
                in_list = listed(reader) >= expected;
                if in_list {
                    to_list.push(began.elapsed());
                }
            }
            if in_search && in_list {
                return began.elapsed();
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        late += 1;
        eprintln!(
            "    {path} not visible in the other process within {VISIBLE_LIMIT:?} (search {in_search}, list {in_list})"
        );
        began.elapsed()
    });
    second.stop();
    let part = |times: Vec<Duration>| {
        if times.is_empty() {
            return "none".to_string();
        }
        let f = Figure::samples(times);
        format!("{} / {}", ms(f.p50), ms(f.p99))
    };
    let figure = figure.with_note(format!("in search {}, in list {}", part(to_search), part(to_list)));
    if late > 0 {
        let note = format!(
            "{late} not visible within {}; {}",
            ms(VISIBLE_LIMIT.as_secs_f64() * 1000.0),
            figure.note
        );
        figure.with_note(note)
    } else {
        figure
    }
}

/// Rewrites [`BULK`] entry files on disk (each gains the same new word), then times until
/// a search on the server counts all of them.
fn bulk_edits(server: &Server, size: usize, vault: &Path) -> Figure {
    let count = BULK.min(size / 2);
    let marker = "zebrapulled";
    let mut paths = Vec::with_capacity(count);
    for i in (0..size).rev() {
        if paths.len() == count {
            break;
        }
        let (path, _) = entry(i, SEED);
        // Leave alone what the benchmark changed or moved (the first entries of a category).
        let file = path.under(vault);
        if file.exists() {
            paths.push(file);
        }
    }
    let began = Instant::now();
    for (i, file) in paths.iter().enumerate() {
        let mut text = fs::read_to_string(file).unwrap();
        let _ = write!(text, "\nPulled from the remote: {marker} change {i}.\n");
        fs::write(file, text).unwrap();
    }
    let written = began.elapsed();
    let target = format!("/api/search?q={marker}&limit=1");
    let mut seen = 0;
    while began.elapsed() < BULK_LIMIT {
        let hits = server.call("GET", &target, None);
        seen = hits["total"].as_u64().unwrap_or(0) as usize;
        if seen >= count && hits["fuzzy"] != json!(true) {
            let took = began.elapsed();
            return Figure::once(took)
                .with_note(format!("{count} files, written in {}", ms(written.as_secs_f64() * 1000.0)));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Figure::other(Kind::Timeout, BULK_LIMIT.as_secs_f64() * 1000.0, format!("{seen} of {count} searchable"))
}

/// Chat turns in this process through [`Assistant`] with the offline model (it answers
/// at once: fixed rules, no network). Each turn is two model calls around one tool call,
/// stored in the conversation database.
fn chat_overhead(vault: &Path, database: &Path) -> Figure {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let config = Config {
            database_url: Some(format!("sqlite://{}", database.display())),
            time_zone: Some("UTC".into()),
            watch: true,
            ..Config::offline(vault)
        };
        let opened = Instant::now();
        let kb = Assistant::open(config).await.unwrap();
        let idle = wait_idle(std::process::id(), opened);
        eprintln!("    in-process assistant idle after {}", idle.show());
        let mut times = Vec::with_capacity(CHAT_ROUNDS);
        let mut conversation = None;
        for i in 0..CHAT_WARMUP + CHAT_ROUNDS {
            if i % TURNS_PER_CONVERSATION == 0 {
                conversation = None;
            }
            let message = chat_message(i);
            let t = Instant::now();
            let answer = kb.chat().send(conversation.as_ref(), &message).await.unwrap();
            let took = t.elapsed();
            assert!(!answer.tools_used.is_empty(), "{message:?} called no tool");
            conversation = Some(answer.conversation_id);
            if i >= CHAT_WARMUP {
                times.push(took);
            }
        }
        kb.close().await;
        Figure::samples(times)
    })
}

// ---------------------------------------------------------------------------------------
// Output

fn table(
    runs: &[SizeRun],
    empty_chat: Option<&Figure>,
    before: &Before,
    now_label: &str,
    took: Duration,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# kb vault benchmark\n");
    let _ = writeln!(
        out,
        "Each cell: p50 / p99 (n = samples), or one figure. **now**: {now_label}. **before**: the kb binary at commit 12f149e (before the performance work), from `crates/kb-cli/benches/vault-before.tsv`. Targets are stated for 100,000 entries, checked against **now** at every size. Machine: {}. Whole run: {:.0?}.\n",
        machine(),
        took
    );
    for run in runs {
        let _ = writeln!(out, "## {} entries\n", run.size);
        let _ =
            writeln!(out, "Load average (1 min) {} at the start, {} at the end.\n", run.load.0, run.load.1);
        let _ = writeln!(out, "| measure | before | now | target | met |");
        let _ = writeln!(out, "|---|---:|---:|---|---|");
        for metric in METRICS {
            let now = run.get(metric.key);
            let old = before.get(run.size, metric.key);
            if now.is_none() && old.is_none() {
                continue;
            }
            let met = now.and_then(|f| metric.target.check(f)).map_or("—".to_string(), |(_, text)| text);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                metric.label,
                old.map_or("—".into(), Figure::show),
                now.map_or("—".into(), Figure::show),
                metric.target.show(),
                met
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "## Chat-turn overhead across sizes\n");
    let _ = writeln!(out, "| vault | before | now |");
    let _ = writeln!(out, "|---|---:|---:|");
    let _ = writeln!(
        out,
        "| empty | {} | {} |",
        before.get(0, "chat_overhead").map_or("—".into(), Figure::show),
        empty_chat.map_or("—".into(), Figure::show)
    );
    for run in runs {
        let _ = writeln!(
            out,
            "| {} entries | {} | {} |",
            run.size,
            before.get(run.size, "chat_overhead").map_or("—".into(), Figure::show),
            run.get("chat_overhead").map_or("—".into(), Figure::show)
        );
    }
    let overheads: Vec<(usize, f64)> =
        runs.iter().filter_map(|r| r.get("chat_overhead").map(|f| (r.size, f.p50))).collect();
    if let (Some(small), Some(large)) = (overheads.first(), overheads.last())
        && small.0 < large.0
    {
        let ratio = large.1 / small.1;
        let _ = writeln!(
            out,
            "\np50 at {} ÷ p50 at {}: {ratio:.2}× (target: within 1.5×) — {}",
            large.0,
            small.0,
            if (1.0 / 1.5..=1.5).contains(&ratio) { "met" } else { "**not met**" }
        );
    }
    let _ = writeln!(out, "\n## How each figure is taken\n");
    for line in [
        "Vaults from `kb_search::testgen::write_vault` (seed 20261121: five categories, 150–400 words a body). `kb serve` runs with the offline model, `KB_TIMEZONE=UTC`, its own port and `DATABASE_URL`, default logging; requests are sequential, one connection each (`Connection: close`), from this process.",
        "Cold start: from spawning `kb serve` on a vault without `.kb/` until `GET /healthz` answers `indexReady: true` (polled every 10 ms). Warm start: the same after SIGTERM and a restart. First list: `GET /api/entries` right after the warm start. → idle: from spawning until the server uses less than 10% of a core over 2 s (what it does in the background after answering: recording the vault's files in history on a first start, comparing them on later ones), 120 s at most, then the benchmark goes on; the rows below are timed after that, in the steady state; a second server is likewise left to settle before its figures, and so is the in-process assistant.",
        "Search: five queries in turn (common word, two words, rare word, another, accent-folded). Capture: `POST /api/capture` of five kinds of text in turn (each files a new entry). Capture then search: a capture, then a search for its one unusual word that must find it. Update: `PATCH` of `status` and `next_action` on generated projects. Move: generated ideas moved to projects. List: `GET /api/entries` (page of 10); filtered: five category/status/limit/offset filters in turn. Digests: `POST /api/digest`. Chat (HTTP): `POST /api/chat` with messages that make the offline model call `list_entries` or `search_entries`, then answer; ten turns a conversation.",
        "Write → visible in another process: a second `kb serve` on the same vault and database; captures alternate between the two, each timed from sending it until the other process's search finds it and its list of ideas counts it (both polled every 5 ms). `refused`: the second process would not open the vault.",
        "5,000 outside edits: with `kb serve` running, 5,000 entry files are rewritten in place (each gains the same new word, as a `git pull` would bring it); timed from the first write until `GET /api/search` for that word counts all 5,000 (`total`), polled every 20 ms; not more than 120 s.",
        "Chat-turn overhead: `kb_core::Assistant::chat` in this process on the same vault (after the server stopped; following the vault as `kb serve` does), with the offline model, which answers at once (rules over the last message; its own work is microseconds and is included). Each turn: a model call asking for one tool, the tool, a model call writing the answer, and the conversation stored in SQLite. Ten untimed turns first; ten turns a conversation. The before binary cannot be driven in-process: its figures are quoted from an earlier measurement (22 ms at 100,000 entries, 3 ms on an empty vault, measured beyond a 1 ms model).",
        "An operation samples at most 60 s (never fewer than 5 samples), so slow before-figures may have fewer samples.",
    ] {
        let _ = writeln!(out, "- {line}");
    }
    if !before.comments.is_empty() {
        let _ = writeln!(out, "\nBefore figures: {}", before.comments.join(" "));
    }
    out
}

/// The raw figures, one line each (the before file's format).
fn raw(runs: &[SizeRun], empty_chat: Option<&Figure>) -> String {
    let mut out = String::from("size\tmetric\tkind\tp50_ms\tp99_ms\tn\tnote\n");
    let mut line = |size: usize, key: &str, f: &Figure| {
        let _ = writeln!(
            out,
            "{size}\t{key}\t{}\t{:.3}\t{:.3}\t{}\t{}",
            f.kind.name(),
            f.p50,
            f.p99,
            f.n,
            f.note
        );
    };
    if let Some(f) = empty_chat {
        line(0, "chat_overhead", f);
    }
    for run in runs {
        for (key, f) in &run.figures {
            line(run.size, key, f);
        }
    }
    out
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not used.
    let began = Instant::now();
    let sizes: Vec<usize> = std::env::var("KB_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().replace('_', "").parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| vec![10_000, 100_000]);
    let own = PathBuf::from(env!("CARGO_BIN_EXE_kb"));
    let bin = std::env::var_os("KB_BENCH_BIN").map_or_else(|| own.clone(), PathBuf::from);
    let in_process = bin == own;
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let workspace = workspace.canonicalize().unwrap_or(workspace);
    let now_label =
        std::env::var("KB_BENCH_LABEL").ok().filter(|l| !l.trim().is_empty()).unwrap_or_else(|| {
            if in_process {
                format!("this work tree's kb ({})", source_state(&workspace))
            } else {
                format!("`{}` (in-process rows left out)", bin.display())
            }
        });
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace.join("target"), PathBuf::from);
    let out_dir = target.join("bench");
    fs::create_dir_all(&out_dir).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let empty_chat = in_process.then(|| {
        eprintln!("kb vault bench: chat-turn overhead on an empty vault");
        let dir = scratch.path().join("empty");
        let figure = chat_overhead(&dir.join("vault"), &dir.join("chat.sqlite"));
        eprintln!("  empty: chat_overhead: {}", figure.show());
        figure
    });
    let mut runs = Vec::new();
    for size in sizes {
        eprintln!("kb vault bench: {size} entries, driving {}", bin.display());
        runs.push(run(size, &bin, in_process, scratch.path()));
    }
    let before = Before::read();
    let table = table(&runs, empty_chat.as_ref(), &before, &now_label, began.elapsed());
    println!("{table}");
    let file = out_dir.join("vault.md");
    fs::write(&file, &table).unwrap();
    fs::write(out_dir.join("vault.tsv"), raw(&runs, empty_chat.as_ref())).unwrap();
    eprintln!("saved to {} (raw figures: vault.tsv)", file.display());
}
