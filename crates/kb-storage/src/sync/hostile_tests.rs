//! Sync against a remote that sends what it should not (trees that try to reach past the
//! vault's files through links on this device's disk, a branch locked by another push), and
//! names that are not plain ASCII.

use std::process::Command;

use super::tests::{Device, bare_remote, push_from_elsewhere, round};

#[test]
fn a_link_replaced_by_a_folder_of_its_name_is_not_written_through() {
    let (_remote_dir, remote) = bare_remote();
    let a = Device::with_files(&remote, "laptop", &[("people/sam.md", "Sam\n")]);
    a.round();
    // Another tool sends a link that stays in the vault (`root` -> the vault itself)...
    push_from_elsewhere(&remote, &[], Some(("root", ".")));
    a.round();
    assert!(a.root.join("root").symlink_metadata().unwrap().file_type().is_symlink());
    // ...then replaces it with a folder of that name holding `.kb/planted`.
    let clone = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git").args(args).current_dir(clone.path()).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["clone", "--quiet", &remote, "."]);
    git(&["checkout", "--quiet", "-B", "main", "origin/main"]);
    git(&["rm", "--quiet", "root"]);
    std::fs::create_dir_all(clone.path().join("root/.kb")).unwrap();
    std::fs::write(clone.path().join("root/.kb/planted"), "evil").unwrap();
    git(&["add", "--force", "root/.kb/planted"]);
    git(&["-c", "user.name=x", "-c", "user.email=x@x", "commit", "--quiet", "-m", "swap"]);
    git(&["push", "--quiet", "origin", "HEAD:main"]);
    let result = round(&a.sync);
    assert!(result.is_ok(), "{result:?}");
    assert!(!a.root.join(".kb/planted").exists(), "written through the old link into kb's own folder");
    assert!(!a.root.join("root").symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(a.read("root/.kb/planted").as_deref(), Some("evil"), "a note folder's file like any other");
}

#[test]
fn a_device_named_in_any_script_keeps_its_letters_in_a_copy_name() {
    let (_remote_dir, remote) = bare_remote();
    let a = Device::with_files(
        &remote,
        "laptop",
        &[("projects/shed.md", "---\nid: 01SHED\nstatus: active\n---\n")],
    );
    a.round();
    let b = Device::new(&remote, "Žofie's Mac");
    round(&b.sync).unwrap();
    a.write("projects/shed.md", "---\nid: 01SHED\nstatus: done\n---\n");
    b.write("projects/shed.md", "---\nid: 01SHED\nstatus: someday\n---\n");
    a.round();
    let report = round(&b.sync).unwrap();
    assert!(
        report.conflicts[0].copy.starts_with("projects/shed.conflict-Žofie-s-Mac-"),
        "{:?}",
        report.conflicts
    );
}

#[test]
fn a_push_meeting_another_devices_push_is_tried_again_not_called_unreachable() {
    let (_remote_dir, remote) = bare_remote();
    let a = Device::with_files(&remote, "laptop", &[("people/sam.md", "Sam\n")]);
    a.round();
    a.write("people/sam.md", "Sam\nOwes me lunch.\n");
    // Another push holds the remote's branch lock the whole round long.
    let lock = std::path::Path::new(&remote).join("refs/heads/main.lock");
    std::fs::write(&lock, "").unwrap();
    let error = round(&a.sync).unwrap_err();
    assert!(error.to_string().contains("the remote kept moving"), "{error}");
    assert!(error.to_string().contains("cannot lock ref"), "{error}");
    // Once it is done, the next round pushes.
    std::fs::remove_file(&lock).unwrap();
    a.round();
    let b = Device::new(&remote, "desktop");
    b.round();
    assert_eq!(b.read("people/sam.md").as_deref(), Some("Sam\nOwes me lunch.\n"));
}

#[test]
fn files_sent_under_a_local_link_stay_in_the_vault_for_the_others() {
    let (_remote_dir, remote) = bare_remote();
    let outside = tempfile::tempdir().unwrap();
    let a = Device::with_files(&remote, "laptop", &[("people/sam.md", "Sam\n")]);
    a.round();
    // The desktop keeps a link to a folder outside the vault, which never travels.
    let b = Device::new(&remote, "desktop");
    b.round();
    std::os::unix::fs::symlink(outside.path(), b.root.join("ext")).unwrap();
    b.round();
    // Another device puts a note where the desktop has its link.
    push_from_elsewhere(&remote, &[("ext/plan.md", "The plan\n")], None);
    b.round();
    assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none(), "written through the link");
    // Later rounds do not send its removal: the laptop keeps it.
    let report = b.round();
    assert!(report.went.is_empty(), "{:?}", report.went);
    a.round();
    assert_eq!(a.read("ext/plan.md").as_deref(), Some("The plan\n"));
    // The laptop edits it: the desktop goes on syncing, its own notes both ways.
    a.write("ext/plan.md", "The plan, revised\n");
    a.round();
    b.write("people/sam.md", "Sam\nFrom the desktop.\n");
    let report = b.round();
    assert_eq!(report.went, ["people/sam.md"], "{report:?}");
    assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none(), "written through the link");
    a.round();
    assert_eq!(a.read("people/sam.md").as_deref(), Some("Sam\nFrom the desktop.\n"));
    assert_eq!(a.read("ext/plan.md").as_deref(), Some("The plan, revised\n"));
}
