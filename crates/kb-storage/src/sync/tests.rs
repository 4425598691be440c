//! Sync with real git: a bare repository on disk as the remote and vault folders as the
//! devices, each round run as a long-running kb process runs it.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{GitSync, SyncError, SyncSettings};

/// A bare remote in a folder of its own.
pub(super) fn bare_remote() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vault.git");
    let status = Command::new("git").args(["init", "--quiet", "--bare"]).arg(&path).status().unwrap();
    assert!(status.success());
    (dir, path.to_string_lossy().into_owned())
}

/// A device: a vault folder synced with `remote`.
pub(super) struct Device {
    _dir: tempfile::TempDir,
    pub(super) root: PathBuf,
    pub(super) sync: GitSync,
}

impl Device {
    pub(super) fn new(remote: &str, name: &str) -> Device {
        Device::with_files(remote, name, &[])
    }

    pub(super) fn with_files(remote: &str, name: &str, files: &[(&str, &str)]) -> Device {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("vault");
        std::fs::create_dir_all(&root).unwrap();
        for (path, text) in files {
            write(&root, path, text);
        }
        let settings = SyncSettings::new(remote.to_string(), name.to_string());
        let sync = GitSync::open(&root, settings).unwrap();
        Device { _dir: dir, root, sync }
    }

    pub(super) fn write(&self, path: &str, text: &str) {
        write(&self.root, path, text);
    }

    pub(super) fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(path)).ok()
    }

    /// A round, waiting while the lock is held. In a test process many threads start git
    /// at once, and a child started between the lock file's opening and its exec holds the
    /// lock's open file for a moment: the next round may find it busy.
    pub(super) fn round(&self) -> super::RoundReport {
        round(&self.sync).unwrap()
    }

    /// Every file of the vault but `.git` and `.kb`, with its text.
    pub(super) fn files(&self) -> Vec<(String, String)> {
        let mut files: Vec<(String, String)> = walkdir::WalkDir::new(&self.root)
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || (e.file_name() != ".git" && e.file_name() != ".kb"))
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let path = e.path().strip_prefix(&self.root).unwrap().to_string_lossy().into_owned();
                (path, std::fs::read_to_string(e.path()).unwrap_or_default())
            })
            .collect();
        files.sort();
        files
    }
}

/// A round of `sync`, tried again while its lock is busy (see [`Device::round`]).
pub(super) fn round(sync: &GitSync) -> Result<super::RoundReport, SyncError> {
    let began = std::time::Instant::now();
    loop {
        match sync.round() {
            Err(SyncError::Busy) if began.elapsed() < std::time::Duration::from_secs(10) => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

fn write(root: &Path, path: &str, text: &str) {
    let file = root.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
}

/// Two devices that agree on `files`.
fn two_devices(files: &[(&str, &str)]) -> (tempfile::TempDir, Device, Device) {
    let (remote_dir, remote) = bare_remote();
    let a = Device::with_files(&remote, "laptop", files);
    a.round();
    let b = Device::new(&remote, "desktop");
    b.round();
    assert_eq!(a.files(), b.files());
    (remote_dir, a, b)
}

const SHED: &str = "---\nid: 01SHED\nname: Shed\nstatus: active\n---\n## Log\n\n- 2026-11-01: started\n";

#[test]
fn an_empty_remote_receives_the_vault_and_another_device_gets_it() {
    let (_remote_dir, remote) = bare_remote();
    let a = Device::with_files(&remote, "laptop", &[("projects/shed.md", SHED), ("people/sam.md", "Sam\n")]);
    let first = a.round();
    assert_eq!(first.went, vec!["people/sam.md".to_string(), "projects/shed.md".to_string()]);
    let b = Device::new(&remote, "desktop");
    let got = b.round();
    assert_eq!(got.came.len(), 2, "{got:?}");
    assert_eq!(a.files(), b.files());
}

#[test]
fn different_fields_changed_on_two_devices_are_both_kept() {
    let (_r, a, b) = two_devices(&[("projects/shed.md", SHED)]);
    a.write("projects/shed.md", &SHED.replace("status: active", "status: done"));
    b.write("projects/shed.md", &SHED.replace("status: active\n", "status: active\nnext_action: Buy felt\n"));
    a.round();
    let merged = b.round();
    assert!(merged.conflicts.is_empty(), "{merged:?}");
    a.round();
    let text = a.read("projects/shed.md").unwrap();
    assert!(text.contains("status: done\nnext_action: Buy felt\n"), "{text}");
    assert_eq!(a.files(), b.files());
}

#[test]
fn two_log_lines_added_on_two_devices_are_both_kept_in_date_order() {
    let (_r, a, b) = two_devices(&[("projects/shed.md", SHED)]);
    a.write("projects/shed.md", &format!("{SHED}- 2026-11-20: bought felt\n"));
    b.write("projects/shed.md", &format!("{SHED}- 2026-11-10: measured\n"));
    a.round();
    b.round();
    a.round();
    assert_eq!(
        a.read("projects/shed.md").unwrap(),
        format!("{SHED}- 2026-11-10: measured\n- 2026-11-20: bought felt\n")
    );
    assert_eq!(a.files(), b.files());
}

#[test]
fn one_field_set_to_two_values_keeps_the_remote_version_and_a_copy() {
    let (_r, a, b) = two_devices(&[("projects/shed.md", SHED)]);
    let remote_first = SHED.replace("status: active", "status: done");
    a.write("projects/shed.md", &remote_first);
    b.write("projects/shed.md", &SHED.replace("status: active", "status: someday"));
    a.round();
    let report = b.round();
    assert_eq!(report.conflicts.len(), 1, "{report:?}");
    let conflict = &report.conflicts[0];
    assert_eq!(conflict.path, "projects/shed.md");
    assert!(conflict.copy.starts_with("projects/shed.conflict-desktop-"), "{}", conflict.copy);
    assert_eq!(b.read("projects/shed.md").unwrap(), remote_first);
    let copy = b.read(&conflict.copy).unwrap();
    assert!(copy.contains("status: someday"), "{copy}");
    assert!(copy.contains("conflict_of: projects/shed.md"), "{copy}");
    assert!(!copy.contains("id: 01SHED"), "the copy has its own id: {copy}");
    a.round();
    assert_eq!(a.files(), b.files(), "every device sees the same copy");
    assert_eq!(b.sync.status().unwrap().conflicts, vec![conflict.copy.clone()]);
}

#[test]
fn an_edit_against_a_delete_keeps_the_edited_file() {
    let (_r, a, b) = two_devices(&[("ideas/kites.md", "Kites\n"), ("ideas/boats.md", "Boats\n")]);
    std::fs::remove_file(a.root.join("ideas/kites.md")).unwrap();
    b.write("ideas/kites.md", "Kites\nBuy string\n");
    std::fs::remove_file(b.root.join("ideas/boats.md")).unwrap();
    a.write("ideas/boats.md", "Boats\nA canoe\n");
    a.round();
    b.round();
    a.round();
    assert_eq!(a.read("ideas/kites.md").as_deref(), Some("Kites\nBuy string\n"));
    assert_eq!(a.read("ideas/boats.md").as_deref(), Some("Boats\nA canoe\n"));
    assert_eq!(a.files(), b.files());
}

#[test]
fn a_move_on_one_device_and_an_edit_on_the_other_end_as_the_moved_file_with_the_edit() {
    let text = "---\nid: 01KITE\nname: Kite\n---\nA kite to build with the kids.\nNeeds a frame.\n";
    let (_r, a, b) = two_devices(&[("ideas/kite.md", text)]);
    std::fs::create_dir_all(a.root.join("projects")).unwrap();
    std::fs::rename(a.root.join("ideas/kite.md"), a.root.join("projects/kite.md")).unwrap();
    b.write("ideas/kite.md", &format!("{text}Buy string.\n"));
    a.round();
    b.round();
    a.round();
    assert_eq!(b.read("ideas/kite.md"), None);
    assert_eq!(b.read("projects/kite.md").unwrap(), format!("{text}Buy string.\n"));
    assert_eq!(a.files(), b.files());
}

#[test]
fn a_note_moved_and_rewritten_past_likeness_is_still_one_note_moved() {
    let text = "---\nid: 01KITE\nname: Kite\n---\nA kite.\n";
    let (_r, a, b) = two_devices(&[("ideas/kite.md", text)]);
    // Moved on both devices to different folders; on the laptop also grown far past what
    // git takes for a rename.
    let grown: String = (1..=12).map(|n| format!("Step {n}: cut, glue and tie the frame.\n")).collect();
    std::fs::create_dir_all(a.root.join("projects")).unwrap();
    std::fs::remove_file(a.root.join("ideas/kite.md")).unwrap();
    a.write("projects/kite.md", &format!("{text}{grown}"));
    std::fs::create_dir_all(b.root.join("admin")).unwrap();
    std::fs::remove_file(b.root.join("ideas/kite.md")).unwrap();
    b.write("admin/kite.md", &format!("{text}Buy string.\n"));
    a.round();
    b.round();
    a.round();
    // One note, where the device that merged first put it, with both sides' lines.
    let notes: Vec<String> = b.files().into_iter().map(|(path, _)| path).collect();
    assert_eq!(notes, vec!["projects/kite.md".to_string()], "one note, not a copy per device");
    let merged = b.read("projects/kite.md").unwrap();
    assert!(merged.contains("Step 12: cut") && merged.contains("Buy string."), "{merged}");
    assert_eq!(a.files(), b.files());
}

#[test]
fn two_notes_made_at_one_path_both_stay() {
    let (_r, a, b) = two_devices(&[]);
    a.write("people/priya.md", "---\nid: 01A\nname: Priya\n---\nRobotics meetup\n");
    b.write("people/priya.md", "---\nid: 01B\nname: Priya\n---\nDentist's receptionist\n");
    a.round();
    b.round();
    a.round();
    assert!(a.read("people/priya.md").unwrap().contains("Robotics"));
    assert!(a.read("people/priya-2.md").unwrap().contains("Dentist"));
    assert_eq!(a.files(), b.files());
}

#[test]
fn one_note_made_twice_with_different_text_is_a_conflict_not_two_frontmatters() {
    let (_r, a, b) = two_devices(&[]);
    a.write("people/priya.md", "---\nid: 01P\nname: Priya\n---\nRobotics meetup\n");
    b.write("people/priya.md", "---\nid: 01P\nname: Priya\n---\nLikes tea\n");
    a.round();
    let report = b.round();
    assert_eq!(report.conflicts.len(), 1, "{report:?}");
    assert_eq!(b.read("people/priya.md").unwrap(), "---\nid: 01P\nname: Priya\n---\nRobotics meetup\n");
    assert!(b.read(&report.conflicts[0].copy).unwrap().contains("Likes tea"));
}

#[test]
fn a_vault_and_a_remote_that_both_have_notes_are_joined() {
    let (_remote_dir, remote) = bare_remote();
    let a = Device::with_files(&remote, "laptop", &[("people/sam.md", "Sam\n"), ("ideas/x.md", "X one\n")]);
    a.round();
    let b = Device::with_files(&remote, "desktop", &[("people/ana.md", "Ana\n"), ("ideas/x.md", "X two\n")]);
    b.round();
    a.round();
    assert_eq!(a.read("people/ana.md").as_deref(), Some("Ana\n"));
    assert_eq!(b.read("people/sam.md").as_deref(), Some("Sam\n"));
    assert_eq!(a.read("ideas/x.md").as_deref(), Some("X one\n"));
    assert_eq!(a.read("ideas/x-2.md").as_deref(), Some("X two\n"));
    assert_eq!(a.files(), b.files());
}

#[test]
fn what_does_not_travel_stays_on_its_device() {
    let (_remote_dir, remote) = bare_remote();
    let a = Device::with_files(
        &remote,
        "laptop",
        &[
            ("people/sam.md", "Sam\n"),
            (".kb/state", "local\n"),
            (".kbignore", "private/\n"),
            ("private/diary.md", "secret\n"),
            (".obsidian/workspace.json", "{}\n"),
            (".obsidian/app.json", "{}\n"),
        ],
    );
    a.round();
    let b = Device::new(&remote, "desktop");
    b.round();
    let paths: Vec<String> = b.files().into_iter().map(|(p, _)| p).collect();
    assert_eq!(paths, vec![".kbignore", ".obsidian/app.json", "people/sam.md"]);
}

#[test]
fn a_remote_url_with_a_password_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let settings = SyncSettings::new("https://me:hunter2@example.com/v.git", "laptop");
    let error = GitSync::open(dir.path(), settings).unwrap_err();
    assert!(matches!(error, SyncError::PasswordInUrl(_)));
    assert!(!error.to_string().contains("hunter2"), "{error}");
    assert!(!dir.path().join(".git").exists(), "nothing was set up");
    for remote in [
        "https://me:hun ter2@example.com/v.git",
        "https://me:hun/ter2@example.com/v.git",
        "ssh://me:'x\"@h/v",
        "https://ghp_tok3nABCter2@github.com/me/v.git",
        "HTTP://tok3nter2@example.com/v.git",
        "git+https://tok3nter2@example.com/v.git",
        "https://example.com/v.git?access_token=ter2",
        "https:/tok3nter2@example.com/v.git",
    ] {
        let error = super::check_remote(remote).unwrap_err();
        assert!(!error.to_string().contains("ter2") && !error.to_string().contains("'x"), "{error}");
    }
    // A user name over ssh is no secret, nor an `@` in a path.
    assert!(super::check_remote("https://example.com/people/me@home/v.git").is_ok());
    assert!(super::check_remote("ssh://git@example.com/v.git").is_ok());
    assert!(super::check_remote("git@github.com:me/v.git").is_ok());
}

#[test]
fn a_vault_inside_another_repository_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    Command::new("git").args(["init", "--quiet"]).current_dir(dir.path()).status().unwrap();
    let vault = dir.path().join("kb");
    std::fs::create_dir_all(&vault).unwrap();
    let settings = SyncSettings::new("/nowhere.git", "laptop");
    let error = GitSync::open(&vault, settings).unwrap_err();
    assert!(matches!(error, SyncError::InsideAnotherRepository { .. }), "{error}");
}

/// Pushes `files` to the remote as a commit of another tool, on top of what it has.
pub(super) fn push_from_elsewhere(remote: &str, files: &[(&str, &str)], link: Option<(&str, &str)>) {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new("git").args(args).current_dir(dir.path()).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    run(&["clone", "--quiet", remote, "."]);
    // The remote's branch, when it has one (a bare remote's HEAD may name another).
    let _ = Command::new("git")
        .args(["checkout", "--quiet", "-B", "main", "origin/main"])
        .current_dir(dir.path())
        .output();
    for (path, text) in files {
        write(dir.path(), path, text);
    }
    if let Some((path, target)) = link {
        std::os::unix::fs::symlink(target, dir.path().join(path)).unwrap();
    }
    run(&["add", "--all", "--force"]);
    run(&["-c", "user.name=x", "-c", "user.email=x@x", "commit", "--quiet", "-m", "elsewhere"]);
    run(&["push", "--quiet", "origin", "HEAD:main"]);
}

#[test]
fn a_pulled_tree_tracking_kb_state_or_links_out_of_the_vault_is_not_merged() {
    let (remote_dir, remote) = bare_remote();
    let a = Device::with_files(&remote, "laptop", &[("people/sam.md", "Sam\n")]);
    a.round();
    push_from_elsewhere(&remote, &[(".kb/history.sqlite", "evil"), ("people/x.md", "x\n")], None);
    let error = round(&a.sync).unwrap_err();
    assert!(matches!(error, SyncError::Refused(_)), "{error}");
    assert_eq!(a.read("people/x.md"), None, "nothing merged");
    drop(remote_dir);

    let (_remote_dir, remote) = bare_remote();
    let b = Device::with_files(&remote, "laptop", &[("people/sam.md", "Sam\n")]);
    b.round();
    push_from_elsewhere(&remote, &[], Some(("people/passwd.md", "../../../../etc/passwd")));
    let error = round(&b.sync).unwrap_err();
    assert!(error.to_string().contains("outside the vault"), "{error}");
    assert!(b.root.join("people/passwd.md").symlink_metadata().is_err());
}

#[test]
fn a_rewritten_remote_is_refused() {
    let (_r, a, _b) = two_devices(&[("people/sam.md", "Sam\n")]);
    let (_other_dir, other) = bare_remote();
    push_from_elsewhere(&other, &[("people/eve.md", "Eve\n")], None);
    // The remote's history replaced by another.
    let remote_path = a.sync.git.run(&["remote", "get-url", super::REMOTE_NAME]).unwrap();
    let out = Command::new("git")
        .args(["push", "--quiet", "--force", remote_path.trim(), "main:main"])
        .current_dir(Path::new(&other))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let error = round(&a.sync).unwrap_err();
    assert!(matches!(error, SyncError::RewrittenRemote { .. }), "{error}");
    assert_eq!(a.read("people/eve.md"), None);
}

#[test]
fn an_unreachable_remote_fails_the_round_and_says_so_in_the_status() {
    let dir = tempfile::tempdir().unwrap();
    let settings = SyncSettings::new(dir.path().join("gone.git").to_string_lossy().into_owned(), "laptop");
    let root = dir.path().join("vault");
    std::fs::create_dir_all(&root).unwrap();
    write(&root, "people/sam.md", "Sam\n");
    let sync = GitSync::open(&root, settings).unwrap();
    let error = round(&sync).unwrap_err();
    assert!(matches!(error, SyncError::Unreachable(_)), "{error}");
    let status = sync.status().unwrap();
    assert!(status.last_error.is_some());
    assert_eq!(status.ahead, 1, "the outside edits were committed: {status:?}");
}

#[test]
fn a_second_round_at_once_is_busy() {
    let (_r, a, _b) = two_devices(&[]);
    let _held = a.sync.try_lock().unwrap();
    assert!(matches!(a.sync.round(), Err(SyncError::Busy)));
}

#[test]
fn a_note_deleted_and_a_like_one_made_is_no_move() {
    let template = |id: &str, name: &str| {
        format!(
            "---\nid: {id}\nname: {name}\nstatus: active\ntags: [meeting]\n---\n## Agenda\n\n- item\n\n## Notes\n\n## Log\n"
        )
    };
    let (_r, a, b) = two_devices(&[("inbox/monday.md", &template("01MON", "Monday"))]);
    std::fs::remove_file(a.root.join("inbox/monday.md")).unwrap();
    a.write("inbox/tuesday.md", &template("01TUE", "Tuesday"));
    b.write("inbox/monday.md", &format!("{}- 2026-11-29: decided the budget\n", template("01MON", "Monday")));
    a.round();
    b.round();
    a.round();
    assert!(
        a.read("inbox/monday.md").unwrap().contains("decided the budget"),
        "the edit wins over the delete"
    );
    assert_eq!(a.read("inbox/tuesday.md").unwrap(), template("01TUE", "Tuesday"));
    assert_eq!(a.files(), b.files());
}

#[test]
fn a_file_edited_after_a_stopped_round_is_merged_and_sync_goes_on() {
    let (_r, a, b) = two_devices(&[("ideas/x.md", "x\n"), ("ideas/y.md", "y\n")]);
    a.write("ideas/x.md", "x\nfrom a\n");
    a.round();
    // A round stopped after its journal: the merge is the remote's commit.
    let local = b.sync.git.commit_of("HEAD").unwrap().unwrap();
    b.sync.fetch().unwrap();
    let remote = b.sync.git.commit_of(&format!("refs/remotes/{}/main", super::REMOTE_NAME)).unwrap().unwrap();
    std::fs::create_dir_all(b.root.join(".kb/sync")).unwrap();
    std::fs::write(b.root.join(".kb/sync/applying"), format!("{local} {remote}\n")).unwrap();
    // The person edits the file before the next round.
    b.write("ideas/x.md", "x\nfrom the person\n");
    b.round();
    assert!(!b.root.join(".kb/sync/applying").exists());
    // Their edit was made on the version before the merge: merged with what came, so the
    // other device's line is not taken back by it.
    assert_eq!(b.read("ideas/x.md").as_deref(), Some("x\nfrom a\nfrom the person\n"));
    a.round();
    assert_eq!(a.files(), b.files());
}

#[test]
fn links_through_links_and_a_repository_inside_the_vault_do_not_travel() {
    let (_remote_dir, remote) = bare_remote();
    let a = Device::with_files(&remote, "laptop", &[("people/sam.md", "Sam\n")]);
    std::os::unix::fs::symlink(".", a.root.join("m")).unwrap();
    std::os::unix::fs::symlink("m/m/../../etc/passwd", a.root.join("passwd.md")).unwrap();
    std::os::unix::fs::symlink("sam.md", a.root.join("people/samuel.md")).unwrap();
    let nested = a.root.join("code");
    std::fs::create_dir_all(&nested).unwrap();
    assert!(Command::new("git").args(["init", "--quiet"]).current_dir(&nested).status().unwrap().success());
    std::fs::write(nested.join("x.txt"), "x").unwrap();
    a.round();
    // Another device gets the note and the link inside the vault, nothing else, and syncs on.
    let b = Device::new(&remote, "desktop");
    b.round();
    assert!(b.root.join("people/samuel.md").symlink_metadata().unwrap().file_type().is_symlink());
    assert!(b.root.join("passwd.md").symlink_metadata().is_err());
    assert!(b.root.join("code").symlink_metadata().is_err());
    a.write("people/sam.md", "Sam\nagain\n");
    a.round();
    b.round();
    assert_eq!(b.read("people/sam.md").as_deref(), Some("Sam\nagain\n"));
}

#[test]
fn a_pulled_link_through_another_link_is_refused() {
    let (_remote_dir, remote) = bare_remote();
    let a = Device::with_files(&remote, "laptop", &[("people/sam.md", "Sam\n")]);
    a.round();
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new("git").args(args).current_dir(dir.path()).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    run(&["clone", "--quiet", &remote, "."]);
    let _ = Command::new("git")
        .args(["checkout", "--quiet", "-B", "main", "origin/main"])
        .current_dir(dir.path())
        .output();
    std::os::unix::fs::symlink(".", dir.path().join("m")).unwrap();
    std::os::unix::fs::symlink("m/m/../../etc/passwd", dir.path().join("passwd.md")).unwrap();
    run(&["add", "--all"]);
    run(&["-c", "user.name=x", "-c", "user.email=x@x", "commit", "--quiet", "-m", "links"]);
    run(&["push", "--quiet", "origin", "HEAD:main"]);
    let error = round(&a.sync).unwrap_err();
    assert!(
        error.to_string().contains("passwd.md is a link to m/m/../../etc/passwd, through another link (m)"),
        "{error}"
    );
    assert!(a.root.join("passwd.md").symlink_metadata().is_err());
}

#[test]
fn a_remote_that_never_answers_fails_the_round_within_the_timeout() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Takes every connection and says nothing.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("vault");
    std::fs::create_dir_all(&root).unwrap();
    write(&root, "people/sam.md", "Sam\n");
    let settings = SyncSettings {
        timeout: std::time::Duration::from_secs(2),
        ..SyncSettings::new(format!("git://127.0.0.1:{port}/vault.git"), "laptop")
    };
    let sync = GitSync::open(&root, settings).unwrap();
    let began = std::time::Instant::now();
    let error = round(&sync).unwrap_err();
    assert!(matches!(error, SyncError::Unreachable(_)), "{error}");
    assert!(error.to_string().contains("git fetch gave no answer within 2 s"), "{error}");
    assert!(began.elapsed() < std::time::Duration::from_secs(10), "{:?}", began.elapsed());
    // The lock is free again: the next round runs (and fails the same way).
    assert!(matches!(round(&sync), Err(SyncError::Unreachable(_))));
}

#[test]
fn a_vault_on_master_joins_a_remote_on_main() {
    let (_remote_dir, remote) = bare_remote();
    let a = Device::with_files(&remote, "laptop", &[("people/sam.md", "Sam\n")]);
    a.round();
    // A vault that was already a repository, on master.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("vault");
    std::fs::create_dir_all(&root).unwrap();
    assert!(
        Command::new("git")
            .args(["init", "--quiet", "-b", "master"])
            .current_dir(&root)
            .status()
            .unwrap()
            .success()
    );
    write(&root, "people/ana.md", "Ana\n");
    let b = GitSync::open(&root, SyncSettings::new(remote.clone(), "desktop")).unwrap();
    round(&b).unwrap();
    a.round();
    assert_eq!(a.read("people/ana.md").as_deref(), Some("Ana\n"));
    assert_eq!(std::fs::read_to_string(root.join("people/sam.md")).unwrap(), "Sam\n");
    assert_eq!(b.status().unwrap().ahead, 0);
}

#[test]
fn a_new_device_pulls_thousands_of_notes_whose_text_fills_a_pipe() {
    // Thousands of blobs read in one `cat-file --batch` answer far more than a pipe holds.
    let files: Vec<(String, String)> = (0..3_000)
        .map(|i| (format!("ideas/n{i}.md"), format!("note {i}\n{}\n", "text ".repeat(20))))
        .collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let (_remote_dir, remote) = bare_remote();
    let a = Device::with_files(&remote, "laptop", &refs);
    a.round();
    let b = Device::new(&remote, "desktop");
    let got = b.round();
    assert_eq!(got.came.len(), 3_000);
    assert_eq!(b.read("ideas/n2999.md"), a.read("ideas/n2999.md"));
}

#[test]
fn a_folder_emptied_by_a_pull_goes_and_the_round_ends() {
    let (_r, a, b) =
        two_devices(&[("trips/rome.md", "Rome\n"), ("trips/oslo.md", "Oslo\n"), ("people/sam.md", "Sam\n")]);
    std::fs::remove_dir_all(a.root.join("trips")).unwrap();
    a.round();
    b.round();
    assert!(!b.root.join("trips").exists(), "the emptied folder went too");
    assert_eq!(a.files(), b.files());
}
