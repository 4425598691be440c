//! Sync through git as a person uses it: the real `kb` binary on two vaults and a bare
//! repository on disk — `kb sync`, `kb sync status`, a conflict nudged, resolved with `kb
//! sync resolve` and taken back with `kb undo`, history naming each change's device — and `kb serve` syncing on its own, with
//! `/healthz`, `GET /api/sync` and `POST /api/sync/resolve`.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::KbServer;

/// Runs `kb --kb-dir VAULT ARGS…` as device `device`, syncing with `remote`.
fn kb(vault: &Path, remote: &Path, device: &str, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
    for var in
        ["OPENAI_API_KEY", "OPENAI_BASE_URL", "KB_MODEL", "KB_DIR", "DATABASE_URL", "KB_API_TOKEN", "KB_ADDR"]
    {
        command.env_remove(var);
    }
    command
        .env("RUST_LOG", "warn")
        .env("KB_SYNC_REMOTE", remote)
        .env("KB_DEVICE", device)
        .arg("--no-server")
        .arg("--kb-dir")
        .arg(vault)
        .args(args)
        .output()
        .unwrap()
}

fn ok(vault: &Path, remote: &Path, device: &str, args: &[&str]) -> String {
    let output = kb(vault, remote, device, args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "kb {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn bare(dir: &Path) -> std::path::PathBuf {
    let remote = dir.join("remote.git");
    assert!(Command::new("git").args(["init", "--quiet", "--bare"]).arg(&remote).status().unwrap().success());
    remote
}

const SHED: &str = "---\nid: 01SHED\nname: Shed\nstatus: active\n---\nThe roof leaks.\n";

#[test]
fn a_conflict_is_synced_listed_resolved_and_undone_from_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let (laptop, desktop) = (dir.path().join("laptop"), dir.path().join("desktop"));
    std::fs::create_dir_all(laptop.join("projects")).unwrap();
    std::fs::write(laptop.join("projects/shed.md"), SHED).unwrap();
    assert!(ok(&laptop, &remote, "laptop", &["sync"]).contains("went  projects/shed.md"));
    assert!(ok(&desktop, &remote, "desktop", &["sync"]).contains("came  projects/shed.md"));

    // One field set to two values on two devices.
    std::fs::write(laptop.join("projects/shed.md"), SHED.replace("active", "done")).unwrap();
    std::fs::write(desktop.join("projects/shed.md"), SHED.replace("active", "someday")).unwrap();
    ok(&laptop, &remote, "laptop", &["sync"]);
    let synced = ok(&desktop, &remote, "desktop", &["sync"]);
    assert!(synced.contains("conflict  projects/shed.md"), "{synced}");
    let status: Value =
        serde_json::from_str(&ok(&desktop, &remote, "desktop", &["--json", "sync", "status"])).unwrap();
    let copies = status["conflicts"].as_array().unwrap().clone();
    assert_eq!(copies.len(), 1, "{status}");
    let copy = copies[0].as_str().unwrap().to_string();
    assert!(copy.starts_with("projects/shed.conflict-desktop-"), "{copy}");
    assert_eq!((status["device"].clone(), status["ahead"].clone()), (json!("desktop"), json!(0)), "{status}");
    // The copy came by sync, holding the desktop's version, here and on the laptop.
    ok(&laptop, &remote, "laptop", &["sync"]);
    for (vault, device) in [(&desktop, "desktop"), (&laptop, "laptop")] {
        let history: Value =
            serde_json::from_str(&ok(vault, &remote, device, &["--json", "history", &copy])).unwrap();
        let first = &history["revisions"][0];
        assert_eq!(
            (first["source"].clone(), first["device"].clone()),
            (json!("sync"), json!("desktop")),
            "{history}"
        );
    }
    // The conflict is the first thing kb points out.
    let nudges: Value =
        serde_json::from_str(&ok(&desktop, &remote, "desktop", &["--json", "nudges"])).unwrap();
    let first = &nudges["nudges"][0];
    assert_eq!(
        (first["rule"].clone(), first["path"].clone()),
        (json!("sync_conflict"), json!(copy)),
        "{nudges}"
    );
    // The copy bears the note's name, yet the name means the note, and the two are no
    // duplicates: the conflict is told by its nudge.
    let shown: Value =
        serde_json::from_str(&ok(&desktop, &remote, "desktop", &["--json", "show", "Shed"])).unwrap();
    assert_eq!(shown["entry"]["path"], "projects/shed.md", "{shown}");
    let twins: Value =
        serde_json::from_str(&ok(&desktop, &remote, "desktop", &["--json", "duplicates"])).unwrap();
    assert_eq!(twins["total"], 0, "{twins}");

    // This device's version wins; undo puts the copy and the note back.
    let shed = || std::fs::read_to_string(desktop.join("projects/shed.md")).unwrap();
    assert!(shed().contains("status: done"));
    ok(&desktop, &remote, "desktop", &["sync", "resolve", "projects/shed.md", "--keep", "mine"]);
    assert_eq!(shed(), SHED.replace("active", "someday"), "the copy's version, with the note's id");
    assert!(!desktop.join(&copy).exists());
    ok(&desktop, &remote, "desktop", &["undo"]);
    assert!(shed().contains("status: done"));
    assert!(desktop.join(&copy).exists());

    // Both kept, the copy as a note of its own; the other device gets the same files.
    let both: Value = serde_json::from_str(&ok(
        &desktop,
        &remote,
        "desktop",
        &["--json", "sync", "resolve", &copy, "--keep", "both"],
    ))
    .unwrap();
    assert_eq!(both["keptAs"], "projects/shed-2.md", "{both}");
    assert!(!desktop.join(&copy).exists());
    let kept = std::fs::read_to_string(desktop.join("projects/shed-2.md")).unwrap();
    assert!(!kept.contains("conflict_of") && kept.contains("status: someday"), "{kept}");
    let status: Value =
        serde_json::from_str(&ok(&desktop, &remote, "desktop", &["--json", "sync", "status"])).unwrap();
    assert_eq!(status["conflicts"], json!([]), "{status}");
    ok(&desktop, &remote, "desktop", &["sync"]);
    ok(&laptop, &remote, "laptop", &["sync"]);
    assert_eq!(std::fs::read_to_string(laptop.join("projects/shed-2.md")).unwrap(), kept);
    assert_eq!(std::fs::read_to_string(laptop.join("projects/shed.md")).unwrap(), shed());

    // A removal says so, both where it was made and where it came.
    std::fs::remove_file(laptop.join("projects/shed-2.md")).unwrap();
    let went = ok(&laptop, &remote, "laptop", &["sync"]);
    assert!(went.contains("went  projects/shed-2.md  (removed)"), "{went}");
    let came = ok(&desktop, &remote, "desktop", &["sync"]);
    assert!(came.contains("came  projects/shed-2.md  (removed)"), "{came}");

    // Without a remote, sync says how to turn it on (exit 2).
    let mut off = Command::new(env!("CARGO_BIN_EXE_kb"));
    let off = off.env_remove("KB_SYNC_REMOTE").arg("--no-server").arg("--kb-dir").arg(&laptop).arg("sync");
    let output = off.output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("KB_SYNC_REMOTE"));
}

#[test]
fn a_remote_url_with_a_password_is_refused_at_start_without_showing_it() {
    let dir = tempfile::tempdir().unwrap();
    let output =
        kb(dir.path(), Path::new("https://me:hunter2@example.com/v.git"), "laptop", &["sync", "status"]);
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("must not hold a password") && !err.contains("hunter2"), "{err}");
}

#[tokio::test]
async fn kb_serve_syncs_on_its_own_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let laptop = dir.path().join("laptop");
    std::fs::create_dir_all(laptop.join("projects")).unwrap();
    std::fs::write(laptop.join("projects/shed.md"), SHED).unwrap();
    ok(&laptop, &remote, "laptop", &["sync"]);
    let remote_text = remote.to_string_lossy().into_owned();
    let env = [("KB_SYNC_REMOTE", remote_text.as_str()), ("KB_DEVICE", "desktop"), ("KB_SYNC_INTERVAL", "1")];
    let server = KbServer::start(&env).await;
    let vault = server.vault();
    let began = Instant::now();
    while !vault.join("projects/shed.md").exists() {
        assert!(began.elapsed() < Duration::from_secs(20), "the server did not sync: {}", server.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let health = server.get("/healthz").await.expect(200);
    assert_eq!(health["sync"]["conflicts"], 0, "{health}");
    assert!(health["sync"].get("remote").is_none(), "{health}");
    let sync = server.get("/api/sync").await.expect(200);
    assert_eq!((sync["enabled"].clone(), sync["device"].clone()), (json!(true), json!("desktop")), "{sync}");

    // A capture on the server travels to the laptop.
    server.post("/api/capture", &json!({"text": "idea: a kite for the kids"})).await.expect(200);
    let began = Instant::now();
    loop {
        ok(&laptop, &remote, "laptop", &["sync"]);
        if std::fs::read_dir(laptop.join("ideas")).is_ok_and(|mut d| d.next().is_some()) {
            break;
        }
        assert!(began.elapsed() < Duration::from_secs(20), "the capture did not travel: {}", server.log());
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let refused =
        server.post("/api/sync/resolve", &json!({"path": "projects/shed.md", "keep": "mine"})).await;
    assert_eq!(refused.status, 404, "{}", refused.text());
}

/// Starts `kb sync` on `vault`, waits until `ready` holds, and kills it (SIGKILL).
fn kill_mid_round(vault: &Path, remote: &Path, device: &str, pause: &str, ready: impl Fn() -> bool) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kb"))
        .env("RUST_LOG", "warn")
        .env("KB_SYNC_REMOTE", remote)
        .env("KB_DEVICE", device)
        .env("KB_TEST_SYNC_PAUSE", pause)
        .env_remove("OPENAI_API_KEY")
        .args(["--no-server", "--kb-dir"])
        .arg(vault)
        .arg("sync")
        .spawn()
        .unwrap();
    let began = Instant::now();
    while !ready() {
        assert!(began.elapsed() < Duration::from_secs(30), "the round never reached its pause");
        assert!(child.try_wait().unwrap().is_none(), "the round ended before its pause");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Well inside the pause.
    std::thread::sleep(Duration::from_millis(200));
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_round_killed_mid_merge_or_mid_push_finishes_at_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let (laptop, desktop) = (dir.path().join("laptop"), dir.path().join("desktop"));
    std::fs::create_dir_all(laptop.join("ideas")).unwrap();
    for i in 0..40 {
        std::fs::write(laptop.join(format!("ideas/n{i}.md")), format!("---\nname: N{i}\n---\nfirst {i}\n"))
            .unwrap();
    }
    ok(&laptop, &remote, "laptop", &["sync"]);
    ok(&desktop, &remote, "desktop", &["sync"]);
    for i in 0..40 {
        let file = laptop.join(format!("ideas/n{i}.md"));
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, format!("{text}laptop {i}\n")).unwrap();
    }
    ok(&laptop, &remote, "laptop", &["sync"]);
    for i in 0..40 {
        let file = desktop.join(format!("ideas/n{i}.md"));
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, text.replace("---\nname:", "---\ntag: desk\nname:")).unwrap();
    }
    // Killed half way through writing the merge: the journal is left, some files merged.
    let journal = desktop.join(".kb/sync/applying");
    let merged = || {
        (0..40)
            .filter(|i| {
                std::fs::read_to_string(desktop.join(format!("ideas/n{i}.md"))).unwrap().contains("laptop")
            })
            .count()
    };
    // Paused half way, once it has written something (a loaded machine writes slowly).
    kill_mid_round(&desktop, &remote, "desktop", "apply:5000", || journal.exists() && merged() > 0);
    assert!(journal.exists());
    let merged = merged();
    assert!(merged > 0 && merged < 40, "killed half way: {merged} of 40 merged");
    // The next round writes the rest, then sends the merge.
    ok(&desktop, &remote, "desktop", &["sync"]);
    assert!(!journal.exists());
    for i in 0..40 {
        let text = std::fs::read_to_string(desktop.join(format!("ideas/n{i}.md"))).unwrap();
        assert_eq!(text, format!("---\ntag: desk\nname: N{i}\n---\nfirst {i}\nlaptop {i}\n"));
    }
    // Killed before its push: the next round pushes.
    std::fs::write(desktop.join("ideas/late.md"), "late\n").unwrap();
    let pushed_before = std::fs::read_dir(remote.join("refs/heads")).map(|d| d.count()).unwrap_or(0);
    let head = desktop.join(".git/refs/heads/main");
    let committed = std::fs::read_to_string(&head).unwrap();
    kill_mid_round(&desktop, &remote, "desktop", "push:5000", || {
        std::fs::read_to_string(&head).is_ok_and(|now| now != committed)
    });
    assert_eq!(std::fs::read_dir(remote.join("refs/heads")).map(|d| d.count()).unwrap_or(0), pushed_before);
    assert!(ok(&desktop, &remote, "desktop", &["sync"]).contains("went  ideas/late.md"));
    ok(&laptop, &remote, "laptop", &["sync"]);
    let files = |vault: &Path| -> Vec<(String, String)> {
        let mut all: Vec<(String, String)> = std::fs::read_dir(vault.join("ideas"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| {
                (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap())
            })
            .collect();
        all.sort();
        all
    };
    assert_eq!(files(&laptop), files(&desktop));
}

#[test]
fn history_names_the_device_of_each_change_and_undo_keeps_to_this_one() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let (laptop, desktop) = (dir.path().join("laptop"), dir.path().join("desktop"));
    ok(&laptop, &remote, "laptop", &["capture", "--hints", "[project]", "Paint the shed"]);
    ok(&laptop, &remote, "laptop", &["sync"]);
    ok(&desktop, &remote, "desktop", &["sync"]);
    let listed = ok(&desktop, &remote, "desktop", &["--json", "list", "--category", "projects"]);
    let path =
        serde_json::from_str::<Value>(&listed).unwrap()["entries"][0]["path"].as_str().unwrap().to_string();

    // Made on the laptop: here, a change that sync brought, from the laptop.
    let history = |vault: &Path, device: &str| -> Vec<Value> {
        let out = ok(vault, &remote, device, &["--json", "history", &path]);
        serde_json::from_str::<Value>(&out).unwrap()["revisions"].as_array().unwrap().clone()
    };
    let pulled = history(&desktop, "desktop");
    assert_eq!(
        (pulled[0]["source"].clone(), pulled[0]["device"].clone()),
        (json!("sync"), json!("laptop")),
        "{pulled:?}"
    );
    let made = history(&laptop, "laptop");
    assert_eq!(
        (made[0]["source"].clone(), made[0]["device"].clone()),
        (json!("cli"), json!("laptop")),
        "{made:?}"
    );

    // Undo here never reaches the laptop's change.
    let undo = kb(&desktop, &remote, "desktop", &["undo"]);
    assert!(desktop.join(&path).exists(), "{}", String::from_utf8_lossy(&undo.stdout));
}

#[test]
fn the_chat_resolves_a_conflict_once_the_person_confirms() {
    use kb_llm::testing::{FakeOpenAi, FakeReply};
    use std::io::Write;

    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let (laptop, desktop) = (dir.path().join("laptop"), dir.path().join("desktop"));
    std::fs::create_dir_all(laptop.join("projects")).unwrap();
    std::fs::write(laptop.join("projects/shed.md"), SHED).unwrap();
    ok(&laptop, &remote, "laptop", &["sync"]);
    ok(&desktop, &remote, "desktop", &["sync"]);
    std::fs::write(laptop.join("projects/shed.md"), SHED.replace("active", "done")).unwrap();
    std::fs::write(desktop.join("projects/shed.md"), SHED.replace("active", "someday")).unwrap();
    ok(&laptop, &remote, "laptop", &["sync"]);
    assert!(ok(&desktop, &remote, "desktop", &["sync"]).contains("conflict  projects/shed.md"));

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(FakeOpenAi::start()).unwrap();
    fake.push(FakeReply::tool_calls(&[(
        "call_1",
        "resolve_conflict",
        r#"{"path": "projects/shed.md", "keep": "mine"}"#,
    )]));
    fake.push(FakeReply::text("Replace the shed note with your version? Say yes to do it."));
    fake.push(FakeReply::text("Done: the shed note is your version now."));
    let chat = |input: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
        command
            .env_remove("KB_DIR")
            .env("RUST_LOG", "warn")
            .env("KB_SYNC_REMOTE", &remote)
            .env("KB_DEVICE", "desktop")
            .env("OPENAI_API_KEY", "sk-test")
            .env("OPENAI_BASE_URL", fake.base_url())
            .env("KB_MODEL", "m")
            .args(["--no-server", "--kb-dir"])
            .arg(&desktop)
            .args(["chat", "--new"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn().unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let output = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    // Asked, then the person's yes runs it: the copy's version is the note, the copy gone.
    let out = chat("keep my version of the shed\nyes\n");
    let (asked, done) = (out.find("Say yes"), out.find("your version now"));
    assert!(asked.is_some() && asked < done, "{out}");
    let shed = std::fs::read_to_string(desktop.join("projects/shed.md")).unwrap();
    assert_eq!(shed, SHED.replace("active", "someday"));
    let status: Value =
        serde_json::from_str(&ok(&desktop, &remote, "desktop", &["--json", "sync", "status"])).unwrap();
    assert_eq!(status["conflicts"], json!([]), "{status}");
    // Taken back like any change.
    ok(&desktop, &remote, "desktop", &["undo"]);
    assert!(std::fs::read_to_string(desktop.join("projects/shed.md")).unwrap().contains("status: done"));
}

#[test]
fn a_vault_named_relative_to_the_working_folder_syncs_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let run = |vault: &str, device: &str, args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_kb"))
            .current_dir(dir.path())
            .env_remove("KB_DIR")
            .env("RUST_LOG", "warn")
            .env("KB_SYNC_REMOTE", &remote)
            .env("KB_DEVICE", device)
            .args(["--no-server", "--kb-dir", vault])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    std::fs::create_dir_all(dir.path().join("laptop/projects")).unwrap();
    std::fs::write(dir.path().join("laptop/projects/shed.md"), SHED).unwrap();
    run("laptop", "laptop", &["sync"]);
    run("desktop", "desktop", &["sync"]);
    // A change to a note both have, pulled into a vault named relatively.
    std::fs::write(dir.path().join("laptop/projects/shed.md"), format!("{SHED}Paint it green.\n")).unwrap();
    run("laptop", "laptop", &["sync"]);
    assert!(run("desktop", "desktop", &["sync"]).contains("came  projects/shed.md"));
    let shed = std::fs::read_to_string(dir.path().join("desktop/projects/shed.md")).unwrap();
    assert!(shed.ends_with("Paint it green.\n"), "{shed}");
}

#[test]
fn a_note_saved_while_a_round_writes_it_is_merged_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let remote = bare(dir.path());
    let (laptop, desktop) = (dir.path().join("laptop"), dir.path().join("desktop"));
    std::fs::create_dir_all(laptop.join("ideas")).unwrap();
    let note = |name: &str| format!("---\nid: 01{name}\nname: {name}\n---\nFirst line.\nSecond line.\n");
    for name in ["A", "B", "C"] {
        std::fs::write(laptop.join(format!("ideas/{name}.md")), note(name)).unwrap();
    }
    ok(&laptop, &remote, "laptop", &["sync"]);
    ok(&desktop, &remote, "desktop", &["sync"]);
    for name in ["A", "B"] {
        std::fs::write(laptop.join(format!("ideas/{name}.md")), format!("{}From the laptop.\n", note(name)))
            .unwrap();
    }
    let from_laptop = note("C").replace("Second line.", "Second line, from the laptop.");
    std::fs::write(laptop.join("ideas/C.md"), &from_laptop).unwrap();
    ok(&laptop, &remote, "laptop", &["sync"]);

    // The desktop's round pauses halfway through writing (after A, before B and C); B is
    // saved meanwhile, its first line changed, and C, its second line changed otherwise.
    let child = Command::new(env!("CARGO_BIN_EXE_kb"))
        .env("RUST_LOG", "warn")
        .env("KB_SYNC_REMOTE", &remote)
        .env("KB_DEVICE", "desktop")
        .env("KB_TEST_SYNC_PAUSE", "apply:1500")
        .args(["--no-server", "--kb-dir"])
        .arg(&desktop)
        .arg("sync")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let a = desktop.join("ideas/A.md");
    let began = Instant::now();
    while !std::fs::read_to_string(&a).unwrap().contains("From the laptop.") {
        assert!(began.elapsed() < Duration::from_secs(30), "the round never wrote A");
        std::thread::sleep(Duration::from_millis(20));
    }
    let b = desktop.join("ideas/B.md");
    let edited =
        std::fs::read_to_string(&b).unwrap().replace("First line.", "First line, edited on the desktop.");
    std::fs::write(&b, edited).unwrap();
    let c = desktop.join("ideas/C.md");
    let from_desktop = note("C").replace("Second line.", "Second line, from the desktop.");
    std::fs::write(&c, &from_desktop).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        said.contains("conflict  ideas/C.md stays as saved here; what came is in ideas/C.conflict-laptop-"),
        "{said}"
    );
    // C stays as saved; the laptop's version is beside it as a conflict copy.
    assert_eq!(std::fs::read_to_string(&c).unwrap(), from_desktop);
    let copies: Vec<String> = std::fs::read_dir(desktop.join("ideas"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("C.conflict-laptop-"))
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
    let copy = std::fs::read_to_string(desktop.join("ideas").join(&copies[0])).unwrap();
    assert!(
        copy.contains("Second line, from the laptop.") && copy.contains("conflict_of: ideas/C.md"),
        "{copy}"
    );
    // The copy is the laptop's change, as history tells it.
    let copy_path = format!("ideas/{}", copies[0]);
    let history: Value =
        serde_json::from_str(&ok(&desktop, &remote, "desktop", &["--json", "history", &copy_path])).unwrap();
    let first = &history["revisions"][0];
    assert_eq!(
        (first["source"].clone(), first["device"].clone()),
        (json!("sync"), json!("laptop")),
        "{history}"
    );
    let merged = std::fs::read_to_string(&b).unwrap();
    assert!(
        merged.contains("First line, edited on the desktop.") && merged.contains("From the laptop."),
        "{merged}"
    );
    // The edit travels at the next rounds, with the laptop's line still there.
    ok(&desktop, &remote, "desktop", &["sync"]);
    ok(&laptop, &remote, "laptop", &["sync"]);
    assert_eq!(std::fs::read_to_string(laptop.join("ideas/B.md")).unwrap(), merged);
    assert_eq!(std::fs::read_to_string(laptop.join("ideas/C.md")).unwrap(), from_desktop);
    assert_eq!(std::fs::read_to_string(laptop.join("ideas").join(&copies[0])).unwrap(), copy);
}
