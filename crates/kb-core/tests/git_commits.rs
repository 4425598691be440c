#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `KB_GIT=commit` with real git: each change kb makes is one commit of only the paths it
//! changed, and a person's own edits — unstaged or staged — are left exactly as they were.
//! A vault outside any git work tree stops kb at start, naming the folder.

use std::path::Path;
use std::process::Command;

use kb_core::{Assistant, CaptureOptions, Config, EntryEdit, GitMode};
use serde_json::json;

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=Person", "-c", "user.email=person@example.com"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

fn lines(text: &str) -> Vec<String> {
    text.lines().filter(|l| !l.is_empty()).map(str::to_string).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_change_is_one_commit_of_only_its_paths() {
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    git(root, &["init", "--quiet"]);
    std::fs::write(root.join("notes.txt"), "mine\n").unwrap();
    git(root, &["add", "notes.txt"]);
    git(root, &["commit", "--quiet", "-m", "person's first commit"]);
    // The person's work in progress: an unstaged edit and a staged new file.
    std::fs::write(root.join("notes.txt"), "mine, edited\n").unwrap();
    std::fs::write(root.join("staged.txt"), "staged, not committed\n").unwrap();
    git(root, &["add", "staged.txt"]);

    let vault = root.join("kb");
    let config = Config { git: GitMode::Commit, ..Config::offline(&vault) };
    let kb = Assistant::open(config).await.unwrap();

    let hints = CaptureOptions { hints: Some("projects".to_string()), ..CaptureOptions::default() };
    let captured =
        kb.entries().capture("Project: build a zeppelin garden on the roof", &hints).await.unwrap();
    let path = captured.path;
    let notes =
        EntryEdit { body: Some(json!({ "mode": "append", "content": "Seeds ordered." })), updates: None };
    kb.entries().update(&path, &notes).await.unwrap();
    let target = if path.starts_with("ideas/") { "projects" } else { "ideas" };
    let moved = kb.entries().move_to(&path, target).await.unwrap();
    let new_path = moved.new_path;
    assert_ne!(new_path, path);
    kb.entries().delete(&new_path).await.unwrap();
    kb.close().await;

    let subjects = lines(&git(root, &["log", "--format=%s"]));
    assert_eq!(subjects.len(), 5, "one commit per change: {subjects:?}");
    let expected = [
        ("delete_entry", &new_path),
        ("move_entry", &new_path),
        ("update_entry", &path),
        ("classify_and_capture", &path),
    ];
    let commits = lines(&git(root, &["log", "--format=%H"]));
    for ((tool, entry), (subject, commit)) in expected.iter().zip(subjects.iter().zip(&commits)) {
        assert!(subject.starts_with(&format!("{tool}: ")), "{subject:?} names {tool}");
        assert!(subject.contains(entry.as_str()), "{subject:?} names {entry}");
        let files = lines(&git(root, &["show", "--name-only", "--format=", "--no-renames", commit]));
        let allowed = [format!("kb/{path}"), format!("kb/{new_path}")];
        assert!(!files.is_empty() && files.iter().all(|f| allowed.contains(f)), "{subject:?}: {files:?}");
    }
    let move_files = lines(&git(root, &["show", "--name-only", "--format=", "--no-renames", &commits[1]]));
    assert_eq!(move_files.len(), 2, "the move commits the old path gone and the new one: {move_files:?}");
    assert_eq!(subjects[4], "person's first commit");

    // The person's work is as they left it: the edit unstaged, the new file staged only.
    let status = lines(&git(root, &["status", "--porcelain", "--untracked-files=no"]));
    assert_eq!(status, vec![" M notes.txt".to_string(), "A  staged.txt".to_string()]);
    assert_eq!(std::fs::read_to_string(root.join("notes.txt")).unwrap(), "mine, edited\n");
    let head_files = lines(&git(root, &["ls-tree", "-r", "--name-only", "HEAD"]));
    assert_eq!(head_files, vec!["notes.txt".to_string()], "the deleted entry is gone from HEAD too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vault_outside_git_stops_kb_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let inside =
        Command::new("git").current_dir(dir.path()).args(["rev-parse", "--is-inside-work-tree"]).output();
    assert!(
        inside.is_ok_and(|o| !o.status.success()),
        "the test needs a temporary folder outside any git work tree"
    );
    let vault = dir.path().join("vault");
    let error =
        Assistant::open(Config { git: GitMode::Commit, ..Config::offline(&vault) }).await.err().unwrap();
    let message = error.to_string();
    assert!(message.contains("KB_GIT=commit"), "{message}");
    assert!(message.contains(&vault.display().to_string()), "{message}");

    // Off (the default), the same folder opens.
    let kb = Assistant::open(Config::offline(&vault)).await.unwrap();
    kb.close().await;
}
