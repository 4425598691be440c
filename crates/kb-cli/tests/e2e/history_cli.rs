//! `kb history`, `kb restore`, `kb undo` and `kb delete` run as a person runs them: the
//! real binary on a temporary vault (alone, and beside a running `kb serve` on the same
//! vault), checking the output, exit codes and the files on disk.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::{KbServer, entry_files, url_path};
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

#[test]
fn a_forced_undo_over_a_persons_own_file_keeps_their_text() {
    let root = tempfile::tempdir().unwrap();
    let vault: PathBuf = root.path().join("vault");
    let path = capture(&vault, "Paint the fence");
    assert_eq!(path, "projects/paint-the-fence.md");
    let captured = read(&vault, &path);
    ok(&vault, &["delete", &path]);
    // The person writes their own entry at that path, by hand; no kb runs meanwhile.
    let mine = "---\nname: Paint the fence\n---\nMy own plan: sand it first, then two coats of white.\n";
    std::fs::write(vault.join(&path), mine).unwrap();

    // Without --force the undo refuses, names the file and leaves it alone.
    let message = fails(&vault, &["undo"], 1);
    assert!(message.contains(&path), "{message}");
    assert_eq!(read(&vault, &path), mine.as_bytes());
    // Forced, the deleted entry comes back over it...
    let said = ok(&vault, &["undo", "--force"]);
    assert!(said.starts_with(&format!("undone: Deleted {path}")), "{said}");
    assert!(said.contains("a change made by cli"), "{said}");
    assert_eq!(read(&vault, &path), captured);
    // ...and the person's text is in the entry's history, as the table shows it.
    let table = ok(&vault, &["history", &path]);
    assert!(table.contains(&format!("Replaced {path}, written since")), "{table}");
    let revisions = json_of(&vault, &["history", &path])["revisions"].as_array().unwrap().clone();
    let replaced = revisions
        .iter()
        .find(|r| r["description"].as_str().unwrap().starts_with("Replaced"))
        .unwrap_or_else(|| panic!("no revision keeps the person's file: {revisions:#?}"));
    let id = replaced["id"].as_i64().unwrap().to_string();
    // Restoring that revision gives the person's text back, exactly, in the one file.
    let said = ok(&vault, &["restore", &path, &id]);
    assert!(said.starts_with(&format!("restored {path} to revision {id}")), "{said}");
    assert_eq!(read(&vault, &path), mine.as_bytes());
    assert_eq!(entry_files(&vault), [path.as_str()]);
}

#[test]
fn restore_by_a_former_path_restores_where_the_entry_is_now_and_says_so() {
    let root = tempfile::tempdir().unwrap();
    let vault: PathBuf = root.path().join("vault");
    let filed = json_of(&vault, &["capture", "Glass shed", "--hints", "[ideas]"]);
    assert_eq!(filed["path"], "ideas/glass-shed.md");
    let captured = read(&vault, "ideas/glass-shed.md");
    let first = json_of(&vault, &["history", "ideas/glass-shed.md"])["revisions"][0]["id"].as_i64().unwrap();
    ok(&vault, &["move", "ideas/glass-shed.md", "projects"]);
    ok(&vault, &["update", "projects/glass-shed.md", "--set", "status=someday"]);

    let said = ok(&vault, &["restore", "ideas/glass-shed.md", &first.to_string()]);
    let lines: Vec<&str> = said.lines().collect();
    assert!(lines[0].starts_with(&format!("restored projects/glass-shed.md to revision {first}")), "{said}");
    assert_eq!(
        lines.get(1).copied(),
        Some(
            "the entry has moved from ideas/glass-shed.md to projects/glass-shed.md since; \
             it was restored where it is now"
        ),
        "{said}"
    );
    assert_eq!(read(&vault, "projects/glass-shed.md"), captured);
    // One file, one entry: no second "Glass shed" at the old path.
    assert_eq!(entry_files(&vault), ["projects/glass-shed.md"]);
    let listed = json_of(&vault, &["list"]);
    assert_eq!(listed["total"], 1, "{listed}");
    assert_eq!(listed["entries"][0]["path"], "projects/glass-shed.md");
    // --json carries the same note.
    let again = json_of(&vault, &["restore", "ideas/glass-shed.md", &first.to_string()]);
    assert_eq!(again["path"], "projects/glass-shed.md");
    assert!(again["note"].as_str().unwrap().contains("restored where it is now"), "{again}");
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
