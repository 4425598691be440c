//! Start-up benchmark (figures, not a timed test): how long a person, a script or an MCP
//! client waits for one `kb` process to answer on a generated vault of 10,000 / 100,000
//! entries (`KB_BENCH_SIZES=10000` to choose), each figure next to the one measured before
//! the start-up work (read from `benches/startup-before.tsv`) and next to its target.
//! Prints a Markdown table and saves it to `target/bench/startup.md`, and the raw figures
//! to `target/bench/startup.tsv`.
//!
//! Per size, on a fresh vault ([`kb_search::testgen::write_vault`]), after a first
//! `kb serve` built `.kb/` and went idle (with the offline model, its own port and
//! `DATABASE_URL`):
//! - with no server running: `kb search WORD --json`, `kb list --json`, `kb show PATH
//!   --json`, `kb capture TEXT --json`, `kb digest daily --json`, each timed from spawning
//!   the process until it exited; and `kb mcp`: from spawning it until its answer to
//!   `initialize`, and until its answer to the first `tools/call` (`search_entries`);
//! - `kb serve` warm start, from spawning it until `/healthz` says `indexReady: true`;
//! - the same commands beside that running `kb serve` on the same vault.
//!
//! Every command runs once untimed first (warm), and every answer is checked (the JSON
//! parses and holds what was asked for), so an error is never timed as an answer.
//!
//! `KB_BENCH_BIN` names another kb binary to drive (default: this crate's `kb`), for
//! example one built from an older commit; `KB_BENCH_LABEL` names it in the table.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use std::{fs, io};

use kb_search::testgen::{entry, word, write_vault};
use serde_json::{Value, json};

mod common;
use common::{cpu_time, letters, load_average, machine, source_state, tail};

/// The generator's seed (the search and vault benchmarks' one).
const SEED: u64 = 20_261_121;
/// Samples of each row.
const ROUNDS: usize = 20;
/// Warm starts of `kb serve` timed.
const SERVE_ROUNDS: usize = 5;
/// One row stops sampling after this long (with at least [`MIN_SAMPLES`]).
const ROW_BUDGET: Duration = Duration::from_secs(40);
/// The fewest samples of a row.
const MIN_SAMPLES: usize = 5;
/// The longest one command may take before the benchmark gives up on it.
const COMMAND_LIMIT: Duration = Duration::from_secs(300);
/// The longest a `kb serve` start may take.
const START_LIMIT: Duration = Duration::from_secs(20 * 60);
/// A process is idle once it used less than this share of one core over [`IDLE_WINDOW`].
const IDLE_SHARE: f64 = 0.1;
/// The window over which idleness is judged.
const IDLE_WINDOW: Duration = Duration::from_secs(2);
/// The longest the background work after a start may take before the benchmark goes on.
const IDLE_LIMIT: Duration = Duration::from_secs(180);
/// Vault sizes up to this one have the small-vault targets.
const SMALL_VAULT: usize = 10_000;
/// The file of figures measured before the start-up work.
const BEFORE_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/startup-before.tsv");
/// The environment a kb process must not inherit from the one running the benchmark.
const CLEARED_ENV: &[&str] = &[
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
    "KB_EXCLUDE",
    "NO_COLOR",
    "RUST_LOG",
];

// ---------------------------------------------------------------------------------------
// Figures and targets

/// What kind of figure a measurement gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Several samples: p50, p99 and their count.
    Samples,
    /// One duration.
    Once,
    /// Not done within the limit (p50 holds the limit).
    Timeout,
    /// One figure measured earlier, outside this benchmark.
    Quoted,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Samples => "samples",
            Kind::Once => "once",
            Kind::Timeout => "timeout",
            Kind::Quoted => "quoted",
        }
    }

    fn parse(text: &str) -> Option<Kind> {
        [Kind::Samples, Kind::Once, Kind::Timeout, Kind::Quoted].into_iter().find(|k| k.name() == text)
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

    fn timeout(limit: Duration, note: impl Into<String>) -> Figure {
        let ms = limit.as_secs_f64() * 1000.0;
        Figure { kind: Kind::Timeout, p50: ms, p99: ms, n: 0, note: note.into() }
    }

    fn show(&self) -> String {
        let mut text = match self.kind {
            Kind::Samples => format!("{} / {} (n={})", ms(self.p50), ms(self.p99), self.n),
            Kind::Once | Kind::Quoted => ms(self.p50),
            Kind::Timeout => format!("not within {}", ms(self.p50)),
        };
        if !self.note.is_empty() {
            let _ = write!(text, " — {}", self.note);
        }
        text
    }
}

/// A duration in milliseconds, written for reading.
fn ms(ms: f64) -> String {
    if ms >= 1_000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

/// A p50 goal in milliseconds, or none.
#[derive(Debug, Clone, Copy)]
struct Target(Option<f64>);

impl Target {
    fn show(self) -> String {
        self.0.map_or_else(|| "—".into(), |a| format!("p50 < {}", ms(a)))
    }

    /// Whether the figure meets it, and by how much it misses.
    fn check(self, figure: &Figure) -> String {
        let Some(goal) = self.0 else { return "—".into() };
        match figure.kind {
            Kind::Quoted => "—".into(),
            Kind::Timeout => "**no**: not done within the limit".into(),
            Kind::Samples | Kind::Once => {
                let ratio = figure.p50 / goal;
                if ratio < 1.0 { "yes".into() } else { format!("**no**: {ratio:.1}× the target") }
            }
        }
    }
}

/// Where a command runs: with no kb process on the vault, or beside a running `kb serve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Beside {
    Alone,
    Server,
}

impl Beside {
    fn suffix(self) -> &'static str {
        match self {
            Beside::Alone => "alone",
            Beside::Server => "beside",
        }
    }
}

/// One way into kb: a row of the table, measured alone and beside a server.
struct Way {
    /// The key of its figures (`KEY_alone`, `KEY_beside`).
    key: &'static str,
    label: &'static str,
}

/// Every way in, in table order.
const WAYS: &[Way] = &[
    Way { key: "search", label: "`kb search WORD --json`" },
    Way { key: "list", label: "`kb list --json`" },
    Way { key: "show", label: "`kb show PATH --json`" },
    Way { key: "capture", label: "`kb capture TEXT --json`" },
    Way { key: "digest", label: "`kb digest daily --json`" },
    Way { key: "mcp_init", label: "`kb mcp`: spawn → `initialize` answered" },
    Way { key: "mcp_search", label: "`kb mcp`: spawn → first `search_entries` answered" },
];

/// The target of a way in, at a vault size.
fn target(key: &str, beside: Beside, size: usize) -> Target {
    let goal = match (key, beside) {
        ("mcp_init", _) => 100.0,
        ("mcp_search", Beside::Server) => 150.0,
        ("mcp_search", Beside::Alone) => 600.0,
        (_, Beside::Server) => 50.0,
        (_, Beside::Alone) if size <= SMALL_VAULT => 50.0,
        (_, Beside::Alone) => 500.0,
    };
    Target(Some(goal))
}

/// The target of `kb serve`'s warm start (stated for 100,000 entries).
const SERVE_READY_TARGET: Target = Target(Some(1000.0));

/// The figures of one vault size.
struct SizeRun {
    size: usize,
    figures: Vec<(String, Figure)>,
    /// The machine's load average (1 minute) when the run began and ended.
    load: (String, String),
}

impl SizeRun {
    fn get(&self, key: &str) -> Option<&Figure> {
        self.figures.iter().find(|(k, _)| k == key).map(|(_, f)| f)
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
// The kb processes

/// Where the benchmark's kb processes work: the binary, the vault and the database.
struct Setup {
    bin: PathBuf,
    vault: PathBuf,
    database: PathBuf,
    dir: PathBuf,
}

impl Setup {
    /// `kb ARGS` with the benchmark's environment (offline model, own database, UTC).
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.bin);
        for var in CLEARED_ENV {
            command.env_remove(var);
        }
        command
            .env("DATABASE_URL", format!("sqlite://{}", self.database.display()))
            .env("KB_TIMEZONE", "UTC")
            .arg("--kb-dir")
            .arg(&self.vault)
            .args(args);
        command
    }

    /// Runs `kb ARGS` to its end; answers the time from spawning it until it exited and
    /// its stdout as JSON. Panics when it fails or prints something that is not JSON.
    fn run(&self, args: &[&str]) -> (Duration, Value) {
        let mut command = self.command(args);
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let began = Instant::now();
        let child = command.spawn().unwrap_or_else(|e| panic!("cannot run {}: {e}", self.bin.display()));
        let output = wait_output(child, COMMAND_LIMIT)
            .unwrap_or_else(|| panic!("kb {} did not end within {COMMAND_LIMIT:?}", args.join(" ")));
        let took = began.elapsed();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "kb {} failed ({}): {stderr}", args.join(" "), output.status);
        let json = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!(
                "kb {} printed no JSON ({e}): {}\nstderr: {stderr}",
                args.join(" "),
                String::from_utf8_lossy(&output.stdout)
            )
        });
        (took, json)
    }
}

/// Waits for a child's end within `limit`, reading its stdout and stderr meanwhile; kills
/// it and answers `None` past the limit.
fn wait_output(mut child: Child, limit: Duration) -> Option<std::process::Output> {
    let mut stdout = child.stdout.take()?;
    let mut stderr = child.stderr.take()?;
    let out = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        bytes
    });
    let err = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr.read_to_end(&mut bytes);
        bytes
    });
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().ok()? {
            break status;
        }
        if began.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_micros(200));
    };
    Some(std::process::Output { status, stdout: out.join().ok()?, stderr: err.join().ok()? })
}

/// A running `kb mcp` with its stdin and stdout in hand (killed when dropped).
struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Mcp {
    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(message.to_string().as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The answer to request `id` (notifications before it are skipped).
    fn answer(&self, id: u64) -> Value {
        let began = Instant::now();
        loop {
            let left = COMMAND_LIMIT.saturating_sub(began.elapsed());
            let line = self.lines.recv_timeout(left).expect("kb mcp did not answer");
            let message: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("kb mcp wrote no JSON ({e}): {line}"));
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// Closes stdin and waits for the end (kills it after a while).
    fn close(mut self) {
        drop(self.stdin.take());
        let asked = Instant::now();
        while asked.elapsed() < Duration::from_secs(30) {
            if self.child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        eprintln!("    kb mcp did not end within 30 s of its stdin closing: killed");
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One `kb mcp` session: spawn, `initialize`, `notifications/initialized`, a
/// `search_entries` call for `query`. Answers the times from spawning until the
/// `initialize` answer and until the search's answer; checks both answers.
fn mcp_session(setup: &Setup, query: &str) -> (Duration, Duration) {
    let mut command = setup.command(&["mcp"]);
    let log = fs::File::create(setup.dir.join("mcp.log")).unwrap();
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(log);
    let began = Instant::now();
    let mut child = command.spawn().unwrap_or_else(|e| panic!("cannot run {}: {e}", setup.bin.display()));
    let stdout = child.stdout.take().unwrap();
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let mut mcp = Mcp { stdin: child.stdin.take(), child, lines };
    mcp.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "startup-bench", "version": "1"}}}));
    let init = mcp.answer(1);
    let initialized = began.elapsed();
    assert_eq!(init["result"]["serverInfo"]["name"], "kb", "initialize: {init}\n{}", mcp_log(setup));
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    mcp.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "search_entries", "arguments": {"query": query}}}));
    let found = mcp.answer(2);
    let searched = began.elapsed();
    let result = &found["result"];
    assert!(result["isError"] != json!(true), "search_entries failed: {found}\n{}", mcp_log(setup));
    assert!(
        result["structuredContent"]["entries"].as_array().is_some_and(|e| !e.is_empty()),
        "search_entries for {query:?} found nothing: {found}"
    );
    mcp.close();
    (initialized, searched)
}

fn mcp_log(setup: &Setup) -> String {
    tail(&fs::read_to_string(setup.dir.join("mcp.log")).unwrap_or_default())
}

// ---------------------------------------------------------------------------------------
// kb serve

/// An HTTP answer: status and body.
struct Reply {
    status: u16,
    body: Vec<u8>,
}

/// One GET over a fresh connection (`Connection: close`), read to the end.
fn get(addr: SocketAddr, target: &str) -> io::Result<Reply> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_nodelay(true)?;
    let head = format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(|| bad("no end of head"))?;
    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
    let status =
        head.split_whitespace().nth(1).and_then(|s| s.parse::<u16>().ok()).ok_or_else(|| bad("no status"))?;
    if head.contains("transfer-encoding: chunked") {
        return Err(bad("chunked /healthz"));
    }
    Ok(Reply { status, body: raw[end + 4..].to_vec() })
}

/// A running `kb serve` child process (killed when dropped).
struct Server {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
}

impl Server {
    /// Starts `kb serve` and waits until `/healthz` says the index is ready; answers the
    /// server and the time from spawning it.
    fn start(setup: &Setup, log: &str) -> (Server, Duration) {
        let log = setup.dir.join(log);
        let mut last = String::new();
        for _ in 0..3 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
            let mut command = setup.command(&["serve", "--addr", &addr.to_string()]);
            command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(fs::File::create(&log).unwrap());
            let began = Instant::now();
            let child = command.spawn().unwrap_or_else(|e| panic!("cannot run {}: {e}", setup.bin.display()));
            let mut server = Server { child, addr, log: log.clone() };
            match server.wait_ready(began) {
                Ok(took) => return (server, took),
                Err(text)
                    if text.contains("address is in use") || text.contains("Address already in use") =>
                {
                    last = text;
                }
                Err(text) => panic!("kb serve did not come up:\n{}", tail(&text)),
            }
        }
        panic!("kb serve found no free port:\n{}", tail(&last))
    }

    /// Polls `/healthz` every 5 ms until `indexReady`; the log when it exited or took
    /// too long.
    fn wait_ready(&mut self, began: Instant) -> Result<Duration, String> {
        while began.elapsed() < START_LIMIT {
            if self.child.try_wait().unwrap().is_some() {
                return Err(self.log_text());
            }
            if let Ok(reply) = get(self.addr, "/healthz")
                && reply.status == 200
                && serde_json::from_slice::<Value>(&reply.body).is_ok_and(|v| v["indexReady"] == json!(true))
            {
                return Ok(began.elapsed());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Err(format!("not ready within {START_LIMIT:?}\n{}", self.log_text()))
    }

    fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
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

/// Waits until process `pid` is idle (less than [`IDLE_SHARE`] of a core over
/// [`IDLE_WINDOW`]), [`IDLE_LIMIT`] at most; answers the time from `since` to the start
/// of that quiet window.
fn wait_idle(pid: u32, since: Instant) -> Figure {
    let Some(mut last) = cpu_time(pid) else { return Figure::timeout(Duration::ZERO, "no /proc") };
    let mut window_start = Instant::now();
    loop {
        std::thread::sleep(IDLE_WINDOW);
        let Some(now) = cpu_time(pid) else { return Figure::timeout(Duration::ZERO, "process gone") };
        if now.saturating_sub(last) < IDLE_WINDOW.mul_f64(IDLE_SHARE) {
            return Figure::once(window_start - since);
        }
        if since.elapsed() > IDLE_LIMIT {
            return Figure::timeout(IDLE_LIMIT, "still busy");
        }
        last = now;
        window_start = Instant::now();
    }
}

// ---------------------------------------------------------------------------------------
// Measuring

/// Runs `op` once untimed (warm), then up to `rounds` times (fewer once [`ROW_BUDGET`] is
/// spent, never fewer than [`MIN_SAMPLES`]); `op` answers the time of its own timed part.
fn sample(rounds: usize, mut op: impl FnMut(usize) -> Duration) -> Figure {
    op(0);
    let began = Instant::now();
    let mut times = Vec::with_capacity(rounds);
    for i in 1..=rounds {
        if times.len() >= MIN_SAMPLES && began.elapsed() > ROW_BUDGET {
            break;
        }
        times.push(op(i));
    }
    Figure::samples(times)
}

/// Capture texts the offline classifier files as new admin, idea or inbox entries (never
/// a person or project already there, which could be ambiguous).
fn capture_text(beside: Beside, i: usize) -> String {
    let tag = format!("{}{}", letters(i + 26 * 26), if beside == Beside::Server { "srv" } else { "solo" });
    match i % 3 {
        0 => format!("Renew passport {tag} by Dec 15"),
        1 => format!("Idea: a bike-sharing app {tag} for the office"),
        _ => format!("Something about {tag} and the weekend"),
    }
}

/// Search queries that find entries at any size: common words, two words, a rarer one.
fn queries() -> Vec<String> {
    vec![word(4), format!("{} {}", word(28), word(29)), word(300), word(3)]
}

/// Measures every way in, alone or beside a server; records each figure.
fn measure_ways(setup: &Setup, size: usize, beside: Beside, record: &mut dyn FnMut(String, Figure)) {
    let key = |name: &str| format!("{name}_{}", beside.suffix());
    let queries = queries();
    let shown: Vec<String> = (0..size.min(50)).map(|i| entry(i, SEED).0.to_string()).collect();

    let figure = sample(ROUNDS, |i| {
        let query = &queries[i % queries.len()];
        let (took, out) = setup.run(&["search", query, "--json"]);
        assert!(
            out["entries"].as_array().is_some_and(|e| !e.is_empty()) && out["total"].as_u64() > Some(0),
            "kb search {query} found nothing: {out}"
        );
        took
    });
    record(key("search"), figure);

    let figure = sample(ROUNDS, |_| {
        let (took, out) = setup.run(&["list", "--json"]);
        assert!(
            out["entries"].as_array().is_some_and(|e| !e.is_empty())
                && out["total"].as_u64().is_some_and(|t| t as usize >= size),
            "kb list listed too little: {out}"
        );
        took
    });
    record(key("list"), figure);

    let figure = sample(ROUNDS, |i| {
        let path = &shown[i % shown.len()];
        let (took, out) = setup.run(&["show", path, "--json"]);
        assert_eq!(out["entry"]["path"].as_str(), Some(path.as_str()), "kb show {path}: {out}");
        took
    });
    record(key("show"), figure);

    let figure = sample(ROUNDS, |i| {
        let text = capture_text(beside, i);
        let (took, out) = setup.run(&["capture", &text, "--json"]);
        assert!(out["path"].as_str().is_some_and(|p| p.ends_with(".md")), "kb capture {text:?}: {out}");
        took
    });
    record(key("capture"), figure);

    let figure = sample(ROUNDS, |_| {
        let (took, out) = setup.run(&["digest", "daily", "--json"]);
        assert!(
            out["type"] == json!("daily") && out["content"].as_str().is_some_and(|c| !c.trim().is_empty()),
            "kb digest daily: {out}"
        );
        took
    });
    record(key("digest"), figure);

    // Each session is one spawn: its initialize and its first search are timed together.
    let mut searches = Vec::new();
    let figure = sample(ROUNDS, |i| {
        let (initialized, searched) = mcp_session(setup, &queries[i % queries.len()]);
        if i > 0 {
            searches.push(searched);
        }
        initialized
    });
    record(key("mcp_init"), figure);
    record(key("mcp_search"), Figure::samples(searches));
}

/// Everything measured over one vault size.
fn run(size: usize, bin: &Path, scratch: &Path) -> SizeRun {
    let load_before = load_average();
    let dir = scratch.join(format!("run-{size}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let setup =
        Setup { bin: bin.to_path_buf(), vault: dir.join("vault"), database: dir.join("kb.sqlite"), dir };
    let t = Instant::now();
    write_vault(&setup.vault, size, SEED).unwrap();
    eprintln!("  {size}: vault written in {:.1?}", t.elapsed());
    let mut figures: Vec<(String, Figure)> = Vec::new();
    let mut record = |key: String, figure: Figure| {
        eprintln!("  {size}: {key}: {}", figure.show());
        figures.push((key, figure));
    };

    // A first server builds `.kb/` and records the vault in history; the figures are of
    // the warm state after that.
    let (server, cold) = Server::start(&setup, "serve-cold.log");
    let spawned = Instant::now() - cold;
    record("cold_start".into(), Figure::once(cold));
    record("cold_idle".into(), wait_idle(server.child.id(), spawned));
    server.stop();

    measure_ways(&setup, size, Beside::Alone, &mut record);

    let mut server = None;
    let figure = sample(SERVE_ROUNDS, |i| {
        if let Some(old) = server.take() {
            Server::stop(old);
        }
        let (started, took) = Server::start(&setup, &format!("serve-{i}.log"));
        server = Some(started);
        took
    });
    record("serve_ready".into(), figure);
    let server = server.unwrap();
    // The commands beside it are timed once its start's background work is done.
    let spawned = Instant::now();
    record("serve_idle".into(), wait_idle(server.child.id(), spawned));

    measure_ways(&setup, size, Beside::Server, &mut record);
    server.stop();

    SizeRun { size, figures, load: (load_before, load_average()) }
}

// ---------------------------------------------------------------------------------------
// Output

fn table(runs: &[SizeRun], before: &Before, now_label: &str, took: Duration) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# kb start-up benchmark\n");
    let _ = writeln!(
        out,
        "Each cell: p50 / p99 (n = samples), or one figure. **now**: {now_label}. **before**: figures measured before the start-up work, from `crates/kb-cli/benches/startup-before.tsv` (100,000 entries only). Targets are p50. Machine: {}. Whole run: {:.0?}.\n",
        machine(),
        took
    );
    let cell = |f: Option<&Figure>| f.map_or("—".to_string(), Figure::show);
    for run in runs {
        let _ = writeln!(out, "## {} entries\n", run.size);
        let _ =
            writeln!(out, "Load average (1 min) {} at the start, {} at the end.\n", run.load.0, run.load.1);
        let _ = writeln!(
            out,
            "| way in | no server: before | now | target | met | beside `kb serve`: before | now | target | met |"
        );
        let _ = writeln!(out, "|---|---:|---:|---|---|---:|---:|---|---|");
        for way in WAYS {
            let mut line = format!("| {} |", way.label);
            for beside in [Beside::Alone, Beside::Server] {
                let key = format!("{}_{}", way.key, beside.suffix());
                let now = run.get(&key);
                let goal = target(way.key, beside, run.size);
                let _ = write!(
                    line,
                    " {} | {} | {} | {} |",
                    cell(before.get(run.size, &key)),
                    cell(now),
                    goal.show(),
                    now.map_or("—".to_string(), |f| goal.check(f))
                );
            }
            let _ = writeln!(out, "{line}");
        }
        let _ = writeln!(out, "\n| `kb serve` | before | now | target | met |");
        let _ = writeln!(out, "|---|---:|---:|---|---|");
        for (key, label, goal) in [
            ("cold_start", "cold start (no `.kb/`) → index ready", Target(None)),
            ("cold_idle", "cold start → server idle", Target(None)),
            ("serve_ready", "warm start → index ready", SERVE_READY_TARGET),
            ("serve_idle", "warm start → server idle (after it was ready)", Target(None)),
        ] {
            let now = run.get(key);
            let _ = writeln!(
                out,
                "| {label} | {} | {} | {} | {} |",
                cell(before.get(run.size, key)),
                cell(now),
                goal.show(),
                now.map_or("—".to_string(), |f| goal.check(f))
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "## How each figure is taken\n");
    for line in [
        "Vaults from `kb_search::testgen::write_vault` (seed 20261121: five categories, 150–400 words a body). Every kb process runs with the offline model, `KB_TIMEZONE=UTC`, `--kb-dir` the vault and its own `DATABASE_URL`, default logging. A first `kb serve` builds `.kb/` (cold start) and is left until idle (less than 10% of a core over 2 s, 180 s at most), then stopped: the figures are of a warm vault.",
        "A command's figure: from spawning the process until it exited (what a script or a shell waits for, its tear-down included), stdout read through a pipe. Each row runs once untimed first, then up to 20 samples, fewer once 40 s are spent (never fewer than 5). Every answer is checked: the JSON parses, `search` has hits and a `total`, `list` counts the whole vault, `show` answers the entry asked for, `capture` files a path, `digest` has content; a failure stops the benchmark.",
        "Search: four queries in turn (a common word, two words, a rarer word, another common word). Show: the first generated entries in turn, by path. Capture: three kinds of text in turn (a task, an idea, an inbox note), each a new entry. Digest: the daily digest, not sent.",
        "`kb mcp`: spawned, then sent `initialize` (protocol 2025-06-18) at once; timed until its answer. Then `notifications/initialized` and a `tools/call` of `search_entries` (the search queries in turn); timed from the spawn until that answer, which must hold hits. Then stdin is closed.",
        "`kb serve` warm start: from spawning it until `GET /healthz` answers `indexReady: true` (polled every 5 ms), after a SIGTERM of the one before; five starts after an untimed one. The last one stays up and is left until idle, then the same commands run beside it on the same vault and database.",
        "Targets: beside a running server < 50 ms; with no server < 50 ms up to 10,000 entries and < 500 ms above (stated for 100,000); `kb mcp` answers `initialize` in < 100 ms at any size, its first tool call (from the spawn) in < 150 ms beside a server and < 600 ms alone (stated for 100,000); `kb serve` ready in < 1 s (stated for 100,000).",
    ] {
        let _ = writeln!(out, "- {line}");
    }
    if !before.comments.is_empty() {
        let _ = writeln!(out, "\nBefore figures: {}", before.comments.join(" "));
    }
    out
}

/// The raw figures, one line each (the before file's format).
fn raw(runs: &[SizeRun]) -> String {
    let mut out = String::from("size\tmetric\tkind\tp50_ms\tp99_ms\tn\tnote\n");
    for run in runs {
        for (key, f) in &run.figures {
            let _ = writeln!(
                out,
                "{}\t{key}\t{}\t{:.3}\t{:.3}\t{}\t{}",
                run.size,
                f.kind.name(),
                f.p50,
                f.p99,
                f.n,
                f.note
            );
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
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let workspace = workspace.canonicalize().unwrap_or(workspace);
    let now_label =
        std::env::var("KB_BENCH_LABEL").ok().filter(|l| !l.trim().is_empty()).unwrap_or_else(|| {
            if bin == own {
                format!("this work tree's kb ({})", source_state(&workspace))
            } else {
                format!("`{}`", bin.display())
            }
        });
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace.join("target"), PathBuf::from);
    let out_dir = target.join("bench");
    fs::create_dir_all(&out_dir).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for size in sizes {
        eprintln!("kb start-up bench: {size} entries, driving {}", bin.display());
        runs.push(run(size, &bin, scratch.path()));
    }
    let table = table(&runs, &Before::read(), &now_label, began.elapsed());
    println!("{table}");
    let file = out_dir.join("startup.md");
    fs::write(&file, &table).unwrap();
    fs::write(out_dir.join("startup.tsv"), raw(&runs)).unwrap();
    eprintln!("saved to {} (raw figures: startup.tsv)", file.display());
}
