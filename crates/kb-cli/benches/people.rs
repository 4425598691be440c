//! Several people benchmark (figures, not a timed test): one `kb serve` with 50 people, each
//! an editor of one of five shared vaults of 10,000 entries (`KB_BENCH_VAULT_ENTRIES` and
//! `KB_BENCH_VAULTS` to choose), under 16 requests in flight from 16 clients, each sending
//! its person's token and `Kb-Vault`. Prints a Markdown table with each figure next to its
//! target and saves it to `target/bench/people.md`.
//!
//! - search over HTTP with nothing else to do, p50 and p99: the floor this machine gives a
//!   search with 16 in flight, before any capture (no target of its own);
//! - search and capture over HTTP, p50 and p99, while the other clients keep the server
//!   busy (each client alternates its person's searches and captures);
//! - the token check itself (`SqliteAccounts::check`), in-process, p50 and p99: what
//!   accounts add to every request. A token already checked is answered from memory (one
//!   SHA-256, one read of the accounts' change mark, one lookup); its first check, one
//!   indexed query, is shown apart.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kb_domain::{PersonName, VaultName, VaultRole};
use kb_storage::accounts::vaults::NewVault;
use kb_storage::accounts::{Person, SqliteAccounts, TokenRequest};

mod common;
use common::{cpu_time, letters, load_average, machine, source_state, tail};

/// The people.
const PEOPLE: usize = 50;
/// Requests in flight.
const CLIENTS: usize = 16;
/// Requests each client sends (half searches, half captures), unless
/// `KB_BENCH_PER_CLIENT` says otherwise: enough for about five seconds of load on two
/// cores, so that the p99 is of a server at work (7,680 requests, 38 of each kind past the
/// p99), not of its first second.
const PER_CLIENT: usize = 480;
/// Token checks timed in-process.
const CHECKS: usize = 5_000;

/// p50 and p99 of `samples`, in milliseconds.
fn percentiles(samples: &mut [f64]) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    (at(0.50), at(0.99))
}

/// One request over a fresh connection, read to the end: its status.
fn send(addr: SocketAddr, method: &str, target: &str, headers: &[(&str, &str)], body: Option<&str>) -> u16 {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_nodelay(true).unwrap();
    let mut head = format!("{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(body) = body {
        head.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    head.push_str(body.unwrap_or_default());
    stream.write_all(head.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    String::from_utf8_lossy(&raw).split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// `CLIENTS` clients sending `per_client` requests each, as the people of `tokens` in
/// turn, with their token and vault: searches and captures alternately, or searches alone
/// when not `with_captures`. The milliseconds each search and each capture took.
fn load(
    addr: SocketAddr,
    tokens: &[(String, String)],
    per_client: usize,
    with_captures: bool,
) -> (Vec<f64>, Vec<f64>) {
    let searches = Arc::new(Mutex::new(Vec::new()));
    let captures = Arc::new(Mutex::new(Vec::new()));
    let threads: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (searches, captures) = (Arc::clone(&searches), Arc::clone(&captures));
            let people = tokens.to_vec();
            std::thread::spawn(move || {
                for i in 0..per_client {
                    let (secret, vault) = &people[(c + i * CLIENTS) % PEOPLE];
                    let headers =
                        [("Authorization", format!("Bearer {secret}")), ("Kb-Vault", vault.clone())];
                    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
                    let started = Instant::now();
                    if i % 2 == 0 || !with_captures {
                        let word = ["plan", "garden", "budget", "meeting", "trip"][i % 5];
                        let status =
                            send(addr, "GET", &format!("/api/search?q={word}&limit=10"), &headers, None);
                        assert_eq!(status, 200);
                        searches.lock().unwrap().push(started.elapsed().as_secs_f64() * 1000.0);
                    } else {
                        let text = format!(
                            "{{\"text\": \"Idea: a shared list {} for client {c}\"}}",
                            letters(i * CLIENTS + c)
                        );
                        let status = send(addr, "POST", "/api/capture", &headers, Some(&text));
                        assert_eq!(status, 200);
                        captures.lock().unwrap().push(started.elapsed().as_secs_f64() * 1000.0);
                    }
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let taken = |samples: Arc<Mutex<Vec<f64>>>| std::mem::take(&mut *samples.lock().unwrap());
    (taken(searches), taken(captures))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).filter(|n| *n > 0).unwrap_or(default)
}

fn main() {
    let entries = count("KB_BENCH_VAULT_ENTRIES", 10_000);
    let vaults = count("KB_BENCH_VAULTS", 5);
    let per_client = count("KB_BENCH_PER_CLIENT", PER_CLIENT);
    let scratch = tempfile::tempdir().unwrap();
    let data = scratch.path().join("data");
    let runtime = tokio::runtime::Runtime::new().unwrap();

    // The people, their vaults and tokens, as `kb users`, `kb vaults` and `kb tokens` make them.
    let (accounts, tokens) = runtime.block_on(async {
        let accounts = SqliteAccounts::open(&data).await.unwrap();
        let now = chrono::Utc::now();
        for v in 0..vaults {
            let folder = scratch.path().join(format!("v{v}"));
            kb_search::testgen::write_vault(&folder, entries, 20_261_129 + v as u64).unwrap();
            // Each file's first history, which a server that has run before recorded long
            // ago (a first open records it in the background, for minutes at this size).
            let clock = Arc::new(kb_core::clock::ZonedClock::new(None));
            std::fs::create_dir_all(folder.join(".kb")).unwrap();
            let database = format!("sqlite://{}", folder.join(".kb").join("kb.sqlite").display());
            let history = Arc::new(kb_storage::history::HistoryLog::connect(&database).unwrap());
            let vault = kb_storage::vault::Vault::open_with_history(&folder, clock, history).unwrap();
            vault.check_history().unwrap();
            drop(vault);
            let name = VaultName::parse(&format!("v{v}")).unwrap();
            let vault = NewVault { name: &name, path: &folder, owner: None, sync_remote: None };
            accounts.add_vault(&vault, now).await.unwrap();
        }
        let mut tokens = Vec::new();
        for p in 0..PEOPLE {
            let name = PersonName::parse(&format!("p{p:02}")).unwrap();
            let person = Person { name: name.clone(), email: None, webhook: None, admin: false };
            accounts.add(&person, now).await.unwrap();
            accounts.grant(&format!("v{}", p % vaults), name.as_str(), VaultRole::Editor).await.unwrap();
            let token = accounts.issue(&name, &TokenRequest::default(), now).await.unwrap().unwrap();
            tokens.push((token.secret, format!("v{}", p % vaults)));
        }
        (accounts, tokens)
    });

    // The token check alone: each token's first check asks the database, the ones after
    // it are answered from memory while the accounts stay as they were.
    let mut first_checks = Vec::with_capacity(PEOPLE);
    let mut checks = Vec::with_capacity(CHECKS);
    runtime.block_on(async {
        let now = chrono::Utc::now();
        for (secret, _) in &tokens {
            let started = Instant::now();
            let bearer = accounts.check(secret, now).await.unwrap();
            first_checks.push(started.elapsed().as_secs_f64() * 1000.0);
            assert!(bearer.is_some());
        }
        for i in 0..CHECKS {
            let (secret, _) = &tokens[i % PEOPLE];
            let started = Instant::now();
            let bearer = accounts.check(secret, now).await.unwrap();
            checks.push(started.elapsed().as_secs_f64() * 1000.0);
            assert!(bearer.is_some());
        }
    });

    // kb serve, with every vault opened and its index built before the clock starts.
    let served = scratch.path().join("served");
    std::fs::create_dir_all(&served).unwrap();
    let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let log = std::fs::File::create(scratch.path().join("kb.log")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kb"))
        .args(["serve", "--addr", &addr.to_string(), "--kb-dir"])
        .arg(&served)
        .env("KB_DATA_DIR", &data)
        .env_remove("OPENAI_API_KEY")
        .env_remove("KB_API_TOKEN")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let opened = Instant::now();
    for (secret, vault) in tokens.iter().take(vaults) {
        let bearer = format!("Bearer {secret}");
        loop {
            let status = if TcpStream::connect(addr).is_ok() {
                send(
                    addr,
                    "GET",
                    "/api/search?q=plan",
                    &[("Authorization", &bearer), ("Kb-Vault", vault)],
                    None,
                )
            } else {
                0
            };
            if status == 200 {
                break;
            }
            if opened.elapsed() > Duration::from_secs(900) {
                let log = std::fs::read_to_string(scratch.path().join("kb.log")).unwrap_or_default();
                panic!("the vaults did not open in 15 minutes; kb.log ends:\n{}", tail(&log));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let open_secs = opened.elapsed().as_secs_f64();
    // What opening leaves to the background (each vault's first history check, its entry
    // list) runs out before the clock starts: the figures are of a server at work, not
    // one still starting.
    let settled = Instant::now();
    let mut last = cpu_time(child.id()).unwrap_or_default();
    while settled.elapsed() < Duration::from_secs(300) {
        std::thread::sleep(Duration::from_secs(1));
        let now = cpu_time(child.id()).unwrap_or_default();
        let busy = now.saturating_sub(last);
        last = now;
        // Idle but for its upkeep: a sweep of each vault now and then.
        if busy < Duration::from_millis(100) {
            break;
        }
    }
    let settle_secs = settled.elapsed().as_secs_f64();
    eprintln!("kb serve (pid {}) is idle: {CLIENTS} clients start", child.id());
    let cpu_before = last;

    // Searches alone first: what the machine gives a search with 16 in flight and nothing
    // else to do, the floor under the figure with captures.
    let (mut alone, _) = load(addr, &tokens, per_client / 2, false);
    let cpu_before = cpu_time(child.id()).unwrap_or(cpu_before);

    // 16 clients, each a person, alternating searches and captures.
    let load_before = load_average();
    let load_started = Instant::now();
    let (mut searches, mut captures) = load(addr, &tokens, per_client, true);
    let load_after = load_average();
    let load_secs = load_started.elapsed().as_secs_f64();
    let server_cpu = cpu_time(child.id())
        .map_or_else(|| "?".to_string(), |t| format!("{:.1}", t.saturating_sub(cpu_before).as_secs_f64()));
    let _ = child.kill();
    let _ = child.wait();

    let (check50, check99) = percentiles(&mut checks);
    let (first50, first99) = percentiles(&mut first_checks);
    let (alone50, alone99) = percentiles(&mut alone);
    let (search50, search99) = percentiles(&mut searches);
    let (capture50, capture99) = percentiles(&mut captures);
    let verdict = |value: f64, target: f64| if value < target { "met" } else { "MISSED" };
    let mut table = String::new();
    table.push_str(&format!(
        "# Several people\n\n{PEOPLE} people, {vaults} shared vaults of {entries} entries, {CLIENTS} requests in \
         flight; {} machine, load {load_before} → {load_after}; {}. Vaults opened and indexed in {open_secs:.1} s, \
         the server idle {settle_secs:.1} s later; then {requests} requests in {load_secs:.1} s, for which kb serve \
         used {server_cpu} s of CPU.\n\n",
        machine(),
        source_state(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")),
        requests = CLIENTS * per_client,
    ));
    table.push_str("| operation | p50 | p99 | target (p99) | |\n|---|---|---|---|---|\n");
    table.push_str(&format!(
        "| token check (in-process, {CHECKS}) | {check50:.3} ms | {check99:.3} ms | < 0.1 ms | {} |\n",
        verdict(check99, 0.1)
    ));
    table.push_str(&format!(
        "| a token's first check (in-process, database, {PEOPLE}) | {first50:.3} ms | {first99:.3} ms | | |\n"
    ));
    table.push_str(&format!(
        "| search over HTTP, 16 in flight | {search50:.1} ms | {search99:.1} ms | < 10 ms | {} |\n",
        verdict(search99, 10.0)
    ));
    table.push_str(&format!(
        "| search over HTTP, 16 in flight, no captures | {alone50:.1} ms | {alone99:.1} ms | | |\n"
    ));
    table.push_str(&format!(
        "| capture over HTTP, 16 in flight | {capture50:.1} ms | {capture99:.1} ms | < 50 ms | {} |\n",
        verdict(capture99, 50.0)
    ));
    println!("{table}");
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("people.md"), table).unwrap();
}
