//! `kb history`, `kb restore`, `kb undo` and `kb delete` run as a person runs them: the
//! real binary on a temporary vault (alone, and beside a running `kb serve` on the same
//! vault), checking the output, exit codes and the files on disk.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::{KbServer, url_path};
use serde_json::{Value, json};

/// Runs `kb --kb-dir VAULT ARGS…` with no model configured.
fn kb(vault: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
    for var in
        ["OPENAI_API_KEY", "OPENAI_BASE_URL", "KB_MODEL", "KB_DIR", "DATABASE_URL", "KB_API_TOKEN", "KB_ADDR"]
    {
        command.env_remove(var);
    }
    command.env("RUST_LOG", "warn").arg("--kb-dir").arg(vault).args(args).output().unwrap()
}

fn out(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn err(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A command that must succeed; its stdout.
fn ok(vault: &Path, args: &[&str]) -> String {
    let output = kb(vault, args);
    assert_eq!(output.status.code(), Some(0), "kb {args:?} failed: {}", err(&output));
    out(&output)
}

/// A `--json` command that must succeed; its output parsed.
fn json_of(vault: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let text = ok(vault, &all);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("kb {args:?} printed no JSON ({e}): {text}"))
}

/// A command that must fail with `code`; its stderr.
fn fails(vault: &Path, args: &[&str], code: i32) -> String {
    let output = kb(vault, args);
    assert_eq!(output.status.code(), Some(code), "kb {args:?}: {}{}", out(&output), err(&output));
    err(&output)
}

fn read(vault: &Path, path: &str) -> Vec<u8> {
    std::fs::read(vault.join(path)).unwrap()
}

fn capture(vault: &Path, text: &str) -> String {
    let filed = json_of(vault, &["capture", text, "--hints", "[projects]"]);
    filed["path"].as_str().unwrap().to_string()
}

#[test]
fn history_restore_delete_and_undo_from_the_command_line() {
    let root = tempfile::tempdir().unwrap();
    let vault: PathBuf = root.path().join("vault");
    let path = capture(&vault, "Fix the shed roof before the rains");
    let captured = read(&vault, &path);
    ok(&vault, &["update", &path, "--set", "status=done"]);
    let updated = read(&vault, &path);

    // The table: a header, then newest first, with the source.
    let table = ok(&vault, &["history", &path]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(lines[0].contains("ID") && lines[0].contains("SOURCE"), "{table}");
    assert!(lines[1].contains(" cli "), "{table}");
    let revisions = json_of(&vault, &["history", &path])["revisions"].as_array().unwrap().clone();
    assert_eq!(revisions.len(), 2);
    assert_eq!(revisions[0]["tool"], "update_entry");
    assert_eq!(revisions[1]["tool"], "classify_and_capture");
    assert!(revisions.iter().all(|r| r["source"] == "cli"), "{revisions:#?}");
    let first = revisions[1]["id"].as_i64().unwrap().to_string();
    assert!(lines[2].trim_start().starts_with(&first), "{table}");

    // Restore to the capture: byte-identical.
    let said = ok(&vault, &["restore", &path, &first]);
    assert!(said.starts_with(&format!("restored {path} to revision {first}")), "{said}");
    assert_eq!(read(&vault, &path), captured);
    let newest = json_of(&vault, &["history", &path])["revisions"][0].clone();
    assert_eq!(newest["source"], "cli");
    fails(&vault, &["restore", &path, "999999"], 1);
    fails(&vault, &["restore", "../outside.md", &first], 2);

    // Delete, then undo brings it back; undo again undoes the restore.
    let deleted = json_of(&vault, &["delete", &path]);
    assert_eq!(deleted["deleted"], true);
    assert!(deleted["revision"].is_i64());
    assert!(!vault.join(&path).exists());
    fails(&vault, &["delete", &path], 1);
    let said = ok(&vault, &["undo"]);
    assert!(said.starts_with("undone: "), "{said}");
    assert_eq!(read(&vault, &path), captured);
    ok(&vault, &["undo"]);
    assert_eq!(read(&vault, &path), updated);

    // An outside edit: undo refuses (exit 1), names the file and changes nothing.
    let mut edited = String::from_utf8(updated.clone()).unwrap();
    edited.push_str("\nWritten by hand.\n");
    std::fs::write(vault.join(&path), &edited).unwrap();
    let message = fails(&vault, &["undo"], 1);
    assert!(message.contains(&path), "{message}");
    assert_eq!(read(&vault, &path), edited.as_bytes());
    // Forced, it goes ahead: the update is undone.
    ok(&vault, &["undo", "--force"]);
    assert_eq!(read(&vault, &path), captured);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_and_undo_from_the_cli_while_kb_serve_runs() {
    let root = tempfile::tempdir().unwrap();
    let vault = root.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    let server = KbServer::start_on(&vault, &[]).await;
    let filed = server
        .post("/api/capture", &json!({"text": "Paint the fence", "hints": "[projects]"}))
        .await
        .expect(200);
    let path = filed["path"].as_str().unwrap().to_string();
    let before = read(&vault, &path);
    let entry = format!("/api/entries/{}", url_path(&path));

    let cli = vault.clone();
    let deleted = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || json_of(&cli, &["delete", &path])).await.unwrap()
    };
    assert_eq!(deleted["deleted"], true);
    assert!(!vault.join(&path).exists());
    // The server sees the delete, and its history names the CLI.
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.get(&entry).await.status != 404 {
        assert!(Instant::now() < deadline, "kb serve still shows the deleted entry");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let history = server.get(&format!("{entry}/history")).await.expect(200);
    assert_eq!(history["revisions"][0]["source"], "cli");
    assert_eq!(history["revisions"][0]["tool"], "delete_entry");
    assert_eq!(history["revisions"][1]["source"], "api");

    // `kb undo` from the CLI: the delete (the latest change anywhere) is undone.
    let cli = vault.clone();
    tokio::task::spawn_blocking(move || ok(&cli, &["undo"])).await.unwrap();
    assert_eq!(read(&vault, &path), before);
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.get(&entry).await.status != 200 {
        assert!(Instant::now() < deadline, "kb serve never saw the entry come back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Undo over HTTP walks further back: the API's capture goes.
    server.post("/api/undo", &json!({})).await.expect(200);
    assert!(!vault.join(&path).exists());
}
