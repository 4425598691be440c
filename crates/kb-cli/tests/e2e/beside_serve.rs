//! Commands beside a running `kb serve`: the real binaries, one `kb serve` on a vault and
//! `kb` commands and `kb mcp` on the same vault. They are answered by the server on its
//! local socket, with exactly the answer they give alone (`--no-server`), edits made the
//! instant before included; a command for another database, or with the server gone,
//! opens the vault itself.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::KbServer;

/// Runs `kb --kb-dir VAULT ARGS… --json` with no model, logging whether kb serve answered.
fn kb(vault: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
    for var in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "KB_MODEL", "KB_DIR", "DATABASE_URL", "KB_NO_SERVER"] {
        command.env_remove(var);
    }
    command
        .env("RUST_LOG", "warn,kb::commands::forward=debug,kb_server::mcp=debug")
        .env("KB_TIMEZONE", "UTC")
        .envs(env.iter().copied())
        .arg("--kb-dir")
        .arg(vault)
        .args(args)
        .arg("--json")
        .output()
        .unwrap()
}

/// Whether kb serve answered the command that wrote `output`.
fn answered_by_server(output: &Output) -> bool {
    String::from_utf8_lossy(&output.stderr).contains("answered by kb serve")
}

/// The JSON a successful command printed, checking that kb serve answered it.
fn served(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        answered_by_server(output),
        "not answered by kb serve: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The JSON of the same command run with the vault opened by the command itself.
fn alone(vault: &Path, args: &[&str]) -> Value {
    let mut with_flag = args.to_vec();
    with_flag.push("--no-server");
    let output = kb(vault, &with_flag, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(!answered_by_server(&output), "--no-server was asked of kb serve");
    serde_json::from_slice(&output.stdout).unwrap()
}

fn paths(list: &Value) -> Vec<String> {
    list["entries"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap().to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_beside_kb_serve_are_answered_by_it_as_they_would_be_alone() {
    let server = KbServer::start(&[("KB_TIMEZONE", "UTC")]).await;
    let vault = server.vault();

    // A capture is filed by the server, recorded as the command line's.
    let captured = served(&kb(&vault, &["capture", "met Priya at the robotics meetup"], &[]));
    let priya = captured["path"].as_str().unwrap().to_string();
    let text = std::fs::read_to_string(vault.join(&priya)).unwrap();
    assert!(text.contains("source: cli"), "{text}");
    served(&kb(&vault, &["capture", "renew passport by Dec 15"], &[]));

    // Each outside edit is in the very next answer: no waiting for the watcher.
    std::fs::create_dir_all(vault.join("ideas")).unwrap();
    for round in 0..8 {
        let word = format!("quokka{round}x");
        let note = format!("ideas/round-{round}.md");
        std::fs::write(vault.join(&note), format!("---\nname: Round {round}\n---\nSeen a {word} today.\n"))
            .unwrap();
        let found = served(&kb(&vault, &["search", &word], &[]));
        assert_eq!(paths(&found), std::slice::from_ref(&note), "round {round}: {found}");
        // Appended to, then shown.
        let mut file = std::fs::OpenOptions::new().append(true).open(vault.join(&note)).unwrap();
        writeln!(file, "Also a wombat{round}.").unwrap();
        drop(file);
        let shown = served(&kb(&vault, &["show", &note], &[]));
        assert!(shown.to_string().contains(&format!("wombat{round}")), "round {round}: {shown}");
        // Renamed, then listed; the old path is gone.
        let renamed = format!("ideas/renamed-{round}.md");
        std::fs::rename(vault.join(&note), vault.join(&renamed)).unwrap();
        let listed = paths(&served(&kb(&vault, &["list", "--category", "ideas"], &[])));
        assert!(listed.contains(&renamed) && !listed.contains(&note), "round {round}: {listed:?}");
        if round % 2 == 1 {
            std::fs::remove_file(vault.join(&renamed)).unwrap();
            let listed = paths(&served(&kb(&vault, &["list", "--category", "ideas"], &[])));
            assert!(!listed.contains(&renamed), "round {round}: a deleted note is listed: {listed:?}");
        }
    }

    // The same answers as the commands give alone.
    for args in [
        &["list"][..],
        &["list", "--category", "ideas", "--limit", "2", "--offset", "1"],
        &["search", "priya"],
        &["search", "passport", "--category", "admin"],
        &["show", &priya],
        &["show", "Priya"],
        &["digest", "daily"],
    ] {
        let answer = served(&kb(&vault, args, &[]));
        assert_eq!(answer, alone(&vault, args), "kb {args:?}");
    }

    // `KB_NO_SERVER=1`, as the docs spell it, opts out as `--no-server` does.
    for value in ["1", "true"] {
        let own = kb(&vault, &["list"], &[("KB_NO_SERVER", value)]);
        assert_eq!(own.status.code(), Some(0), "{}", String::from_utf8_lossy(&own.stderr));
        assert!(!answered_by_server(&own), "KB_NO_SERVER={value} was asked of kb serve");
    }

    // Failures are the same too: an unknown entry is exit 1 with the same message.
    let missing = kb(&vault, &["show", "nobody-here"], &[]);
    let missing_alone = kb(&vault, &["show", "nobody-here", "--no-server"], &[]);
    assert!(answered_by_server(&missing));
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(missing.status.code(), missing_alone.status.code());
    assert_eq!(
        missing.stderr.split(|b| *b == b'\n').find(|l| l.starts_with(b"error")),
        missing_alone.stderr.split(|b| *b == b'\n').find(|l| l.starts_with(b"error"))
    );

    // Another database: the command opens the vault itself, and files there.
    let other = server.root.path().join("other.sqlite");
    let other_url = format!("sqlite://{}", other.display());
    let own = kb(&vault, &["list"], &[("DATABASE_URL", &other_url)]);
    assert_eq!(own.status.code(), Some(0));
    assert!(!answered_by_server(&own), "a command for another database was answered by kb serve");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kb_mcp_beside_kb_serve_has_its_tool_calls_answered_by_it() {
    let server = KbServer::start(&[("KB_TIMEZONE", "UTC")]).await;
    let vault = server.vault();
    std::fs::create_dir_all(vault.join("ideas")).unwrap();
    std::fs::write(
        vault.join("ideas/podcast.md"),
        "---\nname: Podcast\n---\nA show about local-first software.\n",
    )
    .unwrap();

    let mut mcp = Command::new(env!("CARGO_BIN_EXE_kb"));
    for var in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "KB_MODEL", "KB_DIR", "DATABASE_URL", "KB_NO_SERVER"] {
        mcp.env_remove(var);
    }
    let mut child = mcp
        .env("RUST_LOG", "warn,kb_server::mcp=debug")
        .arg("--kb-dir")
        .arg(&vault)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| writeln!(stdin, "{message}").unwrap();
    let mut read = || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap()
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}));
    assert_eq!(read()["id"], 1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "search_entries", "arguments": {"query": "local-first"}}}));
    let found = read();
    assert_eq!(found["id"], 2, "{found}");
    assert_eq!(found["result"]["structuredContent"]["entries"][0]["path"], "ideas/podcast.md", "{found}");
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "classify_and_capture", "arguments": {"text": "idea: a podcast about sourdough"}}}));
    let filed = read();
    let path = filed["result"]["structuredContent"]["path"]
        .as_str()
        .unwrap_or_else(|| panic!("{filed}"))
        .to_string();
    assert!(std::fs::read_to_string(vault.join(&path)).unwrap().contains("source: mcp"));
    send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "no_such_tool", "arguments": {}}}));
    let unknown = read();
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert_eq!(log.matches("answered by kb serve").count(), 3, "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_kb_serve_killed_commands_open_the_vault_themselves() {
    let mut server = KbServer::start(&[("KB_TIMEZONE", "UTC")]).await;
    let vault = server.vault();
    served(&kb(&vault, &["capture", "renew passport by Dec 15"], &[]));
    // Killed: its socket file is left behind, and no one answers there.
    server.kill();
    let listed = kb(&vault, &["list"], &[]);
    assert_eq!(listed.status.code(), Some(0), "{}", String::from_utf8_lossy(&listed.stderr));
    assert!(!answered_by_server(&listed));
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed["total"], 1);
    // A new server takes the socket over.
    let again = KbServer::start_on(&vault, &[("KB_TIMEZONE", "UTC")]).await;
    assert_eq!(served(&kb(&again.vault(), &["list"], &[]))["total"], 1);
}
