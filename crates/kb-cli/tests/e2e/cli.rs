//! The `kb` binary run as a person runs it: against temporary vaults, with no
//! OPENAI_API_KEY (kb's offline model answers), checking what is printed, the JSON of
//! `--json`, the exit codes and what ends up on disk.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use tempfile::TempDir;

/// A temporary folder holding a vault in `vault/` (created by kb on first use).
struct Sandbox {
    root: TempDir,
}

impl Sandbox {
    /// A sandbox whose vault folder is there, empty.
    fn new() -> Sandbox {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("vault")).unwrap();
        Sandbox { root }
    }

    fn vault(&self) -> PathBuf {
        self.root.path().join("vault")
    }

    /// Runs `kb --kb-dir VAULT ARGS…` with `stdin` as its input.
    fn run_with_input(&self, args: &[&str], stdin: &str) -> Output {
        let mut child = base_command()
            .arg("--kb-dir")
            .arg(self.vault())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_with_input(args, "")
    }

    /// Runs a command that must succeed; answers its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert_eq!(output.status.code(), Some(0), "kb {args:?} failed: {}", stderr(&output));
        stdout(&output)
    }

    /// Runs a `--json` command that must succeed; answers its parsed output.
    fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let text = self.ok(&all);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("kb {args:?} printed no JSON ({e}): {text}"))
    }

    /// The entry files of the vault, as relative paths.
    fn entry_files(&self) -> Vec<String> {
        let mut files = Vec::new();
        for category in ["people", "projects", "ideas", "admin", "inbox"] {
            let Ok(read) = std::fs::read_dir(self.vault().join(category)) else { continue };
            for file in read {
                files.push(format!("{category}/{}", file.unwrap().file_name().to_string_lossy()));
            }
        }
        files.sort();
        files
    }
}

/// The kb binary with an environment that cannot reach a real model or another vault.
fn base_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
    for var in
        ["OPENAI_API_KEY", "OPENAI_BASE_URL", "KB_MODEL", "KB_DIR", "DATABASE_URL", "KB_API_TOKEN", "KB_ADDR"]
    {
        command.env_remove(var);
    }
    command.env("RUST_LOG", "warn");
    command
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn capture_then_list_show_search_and_digest() {
    let kb = Sandbox::new();
    let human = kb.ok(&["capture", "Renew", "passport", "by", "Dec", "15"]);
    assert!(human.starts_with("filed admin/"), "{human}");

    let filed = kb.json(&["capture", "met Priya at the robotics meetup", "--hints", "[person:Priya]"]);
    assert_eq!(filed["category"], "people");
    assert_eq!(filed["name"], "Priya");
    assert_eq!(filed["clarificationNeeded"], false);
    let priya = filed["path"].as_str().unwrap().to_string();
    assert!(kb.vault().join(&priya).is_file());

    let list = kb.ok(&["list"]);
    let line = list.lines().find(|l| l.starts_with(&priya)).unwrap_or_else(|| panic!("{list}"));
    assert!(line.ends_with("  Priya — met Priya at the robotics meetup"), "{list}");
    assert!(list.contains("Renew passport"), "{list}");
    assert!(list.trim_end().ends_with("2 entries"), "{list}");
    let listed = kb.json(&["list", "--category", "people"]);
    assert_eq!(listed["total"], 1);
    assert_eq!(listed["entries"][0]["path"], priya.as_str());
    assert_eq!(listed["entries"][0]["category"], "people");
    assert_eq!(kb.json(&["list", "--limit", "1"])["entries"].as_array().unwrap().len(), 1);
    assert_eq!(kb.json(&["list", "--status", "done"])["total"], 0);

    let shown = kb.ok(&["show", &priya]);
    assert!(shown.starts_with(&format!("Priya\n{priya}\n")), "{shown}");
    assert!(shown.contains("source:") && shown.contains("cli"), "{shown}");
    let entry = kb.json(&["show", &priya]);
    assert_eq!(entry["entry"]["path"], priya.as_str());
    assert_eq!(entry["entry"]["category"], "people");
    assert_eq!(entry["entry"]["frontmatter"]["source"], "cli");

    let hits = kb.ok(&["search", "passport"]);
    assert!(hits.contains("Renew passport") && hits.contains("**passport**"), "{hits}");
    let found = kb.json(&["search", "robotics", "--category", "people"]);
    assert_eq!(found["total"], 1);
    assert_eq!(found["entries"][0]["path"], priya.as_str());
    assert!(found["entries"][0]["score"].as_f64().unwrap() > 0.0);
    assert_eq!(kb.json(&["search", "robotics", "--category", "ideas"])["total"], 0);
    assert!(kb.ok(&["search", "zeppelin"]).contains("no matches"));

    let daily = kb.ok(&["digest", "daily"]);
    assert!(daily.contains("Top 3 actions") && daily.contains("Renew passport"), "{daily}");
    let weekly = kb.json(&["digest", "weekly"]);
    assert_eq!(weekly["type"], "weekly");
    assert!(weekly["content"].as_str().unwrap().contains("Quick stats"));
}

#[test]
fn a_capture_leaves_the_search_index_to_the_next_command_that_searches() {
    let kb = Sandbox::new();
    kb.ok(&["search", "kettle"]); // creates the vault and its index
    let meta = kb.vault().join(".kb/index/meta.json");
    let before = std::fs::read_to_string(&meta).unwrap();
    let filed = kb.json(&["capture", "idea: a solar kettle with a parabolic mirror"]);
    let path = filed["path"].as_str().unwrap().to_string();
    assert_eq!(std::fs::read_to_string(&meta).unwrap(), before, "a capture commits nothing to the index");
    // The next search catches up with the new file by its stamp, as with any edit made
    // while no kb ran.
    let hits = kb.json(&["search", "parabolic"]);
    assert_eq!(hits["total"], 1, "{hits}");
    assert_eq!(hits["entries"][0]["path"], path.as_str());
    assert_ne!(std::fs::read_to_string(&meta).unwrap(), before, "the search took it into the index");
}

#[test]
fn reindex_takes_in_a_file_written_by_hand() {
    let kb = Sandbox::new();
    kb.ok(&["search", "kettle"]); // creates the vault and its index (a list opens no index)
    write(
        &kb.vault().join("ideas/solar-kettle.md"),
        "---\nname: Solar kettle\none_liner: boil water with sunlight\n---\nA parabolic mirror.\n",
    );
    let stats = kb.json(&["reindex"]);
    assert_eq!(stats["rebuilt"], false);
    assert_eq!(stats["added"], 1);
    assert_eq!(kb.json(&["reindex"])["added"], 0, "a second reindex finds nothing new");
    let hits = kb.json(&["search", "parabolic"]);
    assert_eq!(hits["entries"][0]["path"], "ideas/solar-kettle.md");

    std::fs::remove_dir_all(kb.vault().join(".kb/index")).unwrap();
    let rebuilt = kb.ok(&["reindex"]);
    assert!(
        rebuilt.contains("rebuilt the search index") && rebuilt.contains("1 entries indexed"),
        "{rebuilt}"
    );
    assert!(kb.ok(&["search", "sunlight"]).contains("ideas/solar-kettle.md"));
}

#[test]
fn a_chat_session_is_stored_and_conversations_can_be_renamed_and_deleted() {
    let kb = Sandbox::new();
    let output = kb.run_with_input(&["chat", "--new"], "met Priya at the robotics meetup\nquit\n");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let transcript = stdout(&output);
    assert!(transcript.contains("you> met Priya at the robotics meetup"), "{transcript}");
    assert!(transcript.contains("kb> "), "{transcript}");
    assert!(!transcript.contains("[tool call]"), "tool calls only with --verbose: {transcript}");
    assert_eq!(kb.entry_files().len(), 1, "the chat filed Priya");

    let conversations = kb.json(&["conversations", "list"]);
    let list = conversations["conversations"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["title"], "met Priya at the robotics meetup");
    let id = list[0]["id"].as_str().unwrap().to_string();
    assert!(kb.ok(&["conversations", "list"]).contains(&id));

    let renamed = kb.json(&["conversations", "rename", &id, "Robotics", "people"]);
    assert_eq!(renamed["title"], "Robotics people");
    assert!(kb.ok(&["conversations", "list"]).contains("Robotics people"));

    // Going on with it: the picker offers it as number 1, and the turn lands in it.
    let resumed = kb.run_with_input(&["chat"], "1\nwhat do I know about Priya\nexit\n");
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert!(stdout(&resumed).contains("Going on with \"Robotics people\""), "{}", stdout(&resumed));
    assert_eq!(kb.json(&["conversations", "list"])["conversations"].as_array().unwrap().len(), 1);

    assert!(kb.ok(&["conversations", "delete", &id]).contains("deleted"));
    assert_eq!(kb.json(&["conversations", "list"])["conversations"], Value::Array(vec![]));
    let again = kb.run(&["conversations", "delete", &id]);
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).starts_with("error: conversation not found"), "{}", stderr(&again));
    assert_eq!(kb.run(&["conversations", "rename", &id, "x"]).status.code(), Some(1));
}

#[test]
fn verbose_chat_prints_each_tool_call_and_its_result() {
    let kb = Sandbox::new();
    let output = kb.run_with_input(
        &["chat", "--new", "--verbose"],
        "met Priya at the robotics meetup\nsearch for Priya\n",
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let transcript = stdout(&output);
    assert!(transcript.contains("[tool call] classify_and_capture"), "{transcript}");
    assert!(transcript.contains("[tool call] search_entries"), "{transcript}");
    assert!(transcript.contains("[tool result] {\"success\":true"), "{transcript}");
    let capture = transcript.find("[tool call] classify_and_capture").unwrap();
    let search = transcript.find("[tool call] search_entries").unwrap();
    assert!(capture < search, "each turn shows only its own calls: {transcript}");
    assert_eq!(transcript.matches("[tool call] classify_and_capture").count(), 1, "{transcript}");
}

#[test]
fn json_chat_prints_one_answer_per_line() {
    let kb = Sandbox::new();
    let output = kb.run_with_input(&["chat", "--new", "--json"], "remind me to call mom [admin]\n");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    let turn: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(turn["toolsUsed"][0], "classify_and_capture");
    assert_eq!(turn["entry"]["category"], "admin");
    assert_eq!(turn["message"]["filedEntryPath"], turn["entry"]["path"]);
}

#[test]
fn paths_outside_the_vault_are_refused_with_exit_code_2() {
    let kb = Sandbox::new();
    for path in ["../../etc/passwd", "/etc/passwd", "people/../../secret.md"] {
        let output = kb.run(&["show", path]);
        assert_eq!(output.status.code(), Some(2), "kb show {path}: {}", stderr(&output));
        let message = stderr(&output);
        assert!(message.starts_with("error: invalid path"), "{message}");
        assert!(stdout(&output).is_empty());
    }
    assert!(kb.entry_files().is_empty());
    let outside: Vec<_> =
        std::fs::read_dir(kb.root.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(outside, vec![std::ffi::OsString::from("vault")], "nothing was created outside the vault");
}

#[test]
fn unknown_entries_and_conversations_are_runtime_failures() {
    let kb = Sandbox::new();
    let output = kb.run(&["show", "projects/nothing-here.md"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stderr(&output).trim(), "error: Entry not found: projects/nothing-here.md");

    let output = kb.run_with_input(&["chat", "--conversation", "01NOSUCHCONVERSATION"], "hello\n");
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("conversation not found"), "{}", stderr(&output));
    assert!(stdout(&output).is_empty(), "nothing is said before the id is checked");

    let output =
        base_command().arg("--kb-dir").arg(kb.root.path().join("missing")).arg("reindex").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("no vault at"), "{}", stderr(&output));
}

#[test]
fn commands_that_read_a_mistyped_vault_fail_and_leave_nothing_behind() {
    let kb = Sandbox::new();
    let missing = kb.root.path().join("mistyped");
    let run = |args: &[&str]| {
        let output =
            base_command().current_dir(kb.root.path()).arg("--kb-dir").arg(&missing).args(args).output();
        output.unwrap()
    };
    for args in [
        &["list"][..],
        &["search", "passport"],
        &["show", "admin/passport.md"],
        &["history", "admin/passport.md"],
        &["digest", "daily"],
        &["duplicates"],
        &["status"],
        &["delete", "admin/passport.md"],
        &["undo"],
        &["conversations", "list"],
        &["reindex"],
        &["sync", "status"],
    ] {
        let output = run(args);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains("no vault at"), "{args:?}: {}", stderr(&output));
        assert!(!missing.exists(), "{args:?} made the folder");
    }
    // Nothing was written beside it either (the default `./kb` included).
    assert!(!kb.root.path().join("kb").exists());
    // A file where the vault should be is named as one.
    std::fs::write(kb.root.path().join("a-file"), "not a vault").unwrap();
    let output =
        base_command().arg("--kb-dir").arg(kb.root.path().join("a-file")).arg("list").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("that is a file, not a folder"), "{}", stderr(&output));
    // A capture makes the vault at first use, as before.
    let output = run(&["capture", "Renew passport by Dec 15"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(missing.is_dir());
    assert_eq!(run(&["list"]).status.code(), Some(0));
}

#[test]
fn bad_usage_exits_with_code_2() {
    let kb = Sandbox::new();
    let cases: &[&[&str]] = &[
        &[],
        &["frobnicate"],
        &["show"],
        &["capture"],
        &["digest", "monthly"],
        &["list", "--limit", "0"],
        &["list", "--limit", "many"],
        &["list", "--category", "recipes"],
        &["search", "x", "--limit", "-3"],
        &["chat", "--new", "--conversation", "X"],
        &["conversations", "rename", "X"],
        &["serve", "--addr", "not-an-address"],
    ];
    for args in cases {
        let output = kb.run(args);
        assert_eq!(output.status.code(), Some(2), "kb {args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains("error"), "kb {args:?}: {}", stderr(&output));
    }
    let blank = kb.run(&["capture", "   "]);
    assert_eq!(blank.status.code(), Some(2));
    assert_eq!(stderr(&blank).trim(), "error: nothing to capture: TEXT is empty");
    assert!(kb.entry_files().is_empty(), "nothing was filed by a failed command");
}

#[test]
fn serving_beyond_loopback_without_a_token_is_refused() {
    let kb = Sandbox::new();
    let output = kb.run(&["serve", "--addr", "0.0.0.0:0"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("KB_API_TOKEN"), "{}", stderr(&output));
}

#[test]
fn the_vault_can_come_from_kb_dir_in_the_environment() {
    let kb = Sandbox::new();
    let run = |args: &[&str]| base_command().env("KB_DIR", kb.vault()).args(args).output().unwrap();
    let filed = run(&["capture", "idea: a bike-powered blender", "--json"]);
    assert_eq!(filed.status.code(), Some(0), "{}", stderr(&filed));
    assert_eq!(kb.entry_files().len(), 1);
    let listed: Value = serde_json::from_slice(&run(&["list", "--json"]).stdout).unwrap();
    assert_eq!(listed["total"], 1);
}

/// A hand-written project entry with a key of the person's own.
const SHED: &str = "---\nid: 01SHEDROOFREPAIR0000000000\nname: Shed roof repair\nstatus: active\n\
    next_action: Buy felt\nmood: hopeful\n---\nThe north side leaks.\n";

#[test]
fn update_sets_fields_on_disk_and_keeps_hand_written_keys() {
    let kb = Sandbox::new();
    let file = kb.vault().join("projects/shed-roof-repair.md");
    write(&file, SHED);

    let changed = kb.json(&[
        "update",
        "projects/shed-roof-repair.md",
        "--set",
        "status=done",
        "--set",
        r#"tags=["home","roof"]"#,
        "--set",
        "next_action=Call the roofer",
    ]);
    assert_eq!(changed["path"], "projects/shed-roof-repair.md");
    assert_eq!(changed["updatedFields"], serde_json::json!(["status", "tags", "next_action"]));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("status: done\n"), "{text}");
    assert!(text.contains("next_action: Call the roofer\n"), "{text}");
    assert!(text.contains("- home\n") && text.contains("- roof\n"), "{text}");
    assert!(text.contains("mood: hopeful\n"), "the person's own key stays: {text}");
    assert!(text.contains("id: 01SHEDROOFREPAIR0000000000\n"), "{text}");
    assert!(text.contains("The north side leaks."), "{text}");

    let human = kb.ok(&["update", "projects/shed-roof-repair.md", "--append", "Felt bought."]);
    assert_eq!(human, "updated projects/shed-roof-repair.md: content\n");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.ends_with("The north side leaks.\n\nFelt bought.\n"), "{text}");

    let replaced =
        kb.json(&["update", "projects/shed-roof-repair.md", "--body", "All fixed.", "--set", "mood=null"]);
    assert_eq!(replaced["updatedFields"], serde_json::json!(["mood", "content"]));
    let shown = kb.json(&["show", "projects/shed-roof-repair.md"]);
    assert_eq!(shown["entry"]["content"].as_str().unwrap().trim(), "All fixed.");
    assert!(shown["entry"]["frontmatter"].get("mood").is_none(), "null removes a field: {shown}");
}

#[test]
fn update_edits_the_notes_in_every_mode_and_keeps_every_other_byte() {
    let kb = Sandbox::new();
    let file = kb.vault().join("projects/shed-roof-repair.md");
    let hand = "---\n# written by hand\nname: 'Shed roof repair'\nversion: 1.10\n\nstatus: active  # for now\n---\nThe north side leaks.\n";
    write(&file, hand);
    let path = "projects/shed-roof-repair.md";

    kb.ok(&["update", path, "--set", "status=done"]);
    let text = std::fs::read_to_string(&file).unwrap();
    let (head, stamp) = text.split_once("updated_at: ").unwrap();
    assert_eq!(head, "---\n# written by hand\nname: 'Shed roof repair'\nversion: 1.10\n\nstatus: done\n");
    let stamp = stamp.split_once('\n').unwrap().0;
    assert_eq!(
        text,
        hand.replace("status: active  # for now\n", &format!("status: done\nupdated_at: {stamp}\n"))
    );

    let notes = || kb.json(&["show", path])["entry"]["content"].as_str().unwrap().to_string();
    kb.ok(&["update", path, "--prepend", "Urgent."]);
    assert_eq!(notes(), "Urgent.\n\nThe north side leaks.\n");
    kb.ok(&["update", path, "--append", "Felt bought."]);
    assert_eq!(notes(), "Urgent.\n\nThe north side leaks.\n\nFelt bought.\n");
    let logged = kb.json(&["update", path, "--section", "Log", "--add", "Called the roofer"]);
    assert_eq!(logged["updatedFields"], serde_json::json!(["content"]));
    let log_line = notes().lines().last().unwrap().to_string();
    assert!(notes().contains("Felt bought.\n\n## Log\n\n- 20"), "{}", notes());
    assert!(log_line.starts_with("- 20") && log_line.ends_with(": Called the roofer"), "{log_line}");
    kb.ok(&["update", path, "--find", "north", "--replace", "south"]);
    assert!(notes().contains("The south side leaks."), "{}", notes());

    // A count that does not match exits 2, says how many were found, and changes nothing.
    let before = std::fs::read_to_string(&file).unwrap();
    let output =
        kb.run(&["update", path, "--find", "e", "--replace", "E", "--count", "2", "--set", "status=active"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("times, not 2 as expected"), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    let output = kb.run(&["update", path, "--section", "Log"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    kb.ok(&["update", path, "--find", "Urgent.\n\n", "--replace", ""]);
    assert!(notes().starts_with("The south side leaks.\n"), "{}", notes());
}

#[test]
fn update_with_nothing_to_change_or_a_bad_path_exits_2_and_changes_nothing() {
    let kb = Sandbox::new();
    let file = kb.vault().join("projects/shed-roof-repair.md");
    write(&file, SHED);
    let cases: &[&[&str]] = &[
        &["update", "projects/shed-roof-repair.md"],
        &["update", "projects/shed-roof-repair.md", "--set", "status"],
        &["update", "projects/shed-roof-repair.md", "--set", "=done"],
        &["update", "projects/shed-roof-repair.md", "--body", "a", "--append", "b"],
        &["update", "projects/shed-roof-repair.md", "--set", "status=done", "--set", "status=active"],
        &["update", "projects/shed-roof-repair.md", "--set", "status=pending"],
        &["update", "projects/shed-roof-repair.md", "--set", "id=X"],
        &["update", "projects/shed-roof-repair.md", "--append", "  "],
        &["update", "../shed-roof-repair.md", "--set", "status=done"],
        &["update", "/etc/passwd", "--set", "status=done"],
        &["update", "../x.md", "--append", "more"],
    ];
    for args in cases {
        let output = kb.run(args);
        assert_eq!(output.status.code(), Some(2), "kb {args:?}: {}", stderr(&output));
        assert!(stderr(&output).starts_with("error"), "kb {args:?}: {}", stderr(&output));
        assert!(stdout(&output).is_empty(), "kb {args:?}");
    }
    let nothing = kb.run(&["update", "projects/shed-roof-repair.md"]);
    assert!(stderr(&nothing).starts_with("error: nothing to update"), "{}", stderr(&nothing));
    let outside = kb.run(&["update", "../x.md", "--set", "status=done"]);
    assert!(stderr(&outside).starts_with("error: invalid path"), "{}", stderr(&outside));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), SHED, "the entry is untouched");
    assert_eq!(kb.entry_files(), ["projects/shed-roof-repair.md"]);
    assert!(!kb.root.path().join("x.md").exists());

    let missing = kb.run(&["update", "projects/nothing-here.md", "--set", "status=done"]);
    assert_eq!(missing.status.code(), Some(1), "{}", stderr(&missing));
}

#[test]
fn move_puts_the_entry_in_the_new_folder_with_the_same_id() {
    let kb = Sandbox::new();
    write(&kb.vault().join("projects/shed-roof-repair.md"), SHED);

    let moved = kb.json(&["move", "projects/shed-roof-repair.md", "admin"]);
    assert_eq!(moved["oldPath"], "projects/shed-roof-repair.md");
    assert_eq!(moved["category"], "admin");
    let new_path = moved["newPath"].as_str().unwrap().to_string();
    assert!(new_path.starts_with("admin/"), "{moved}");
    assert_eq!(kb.entry_files(), std::slice::from_ref(&new_path), "the old file is gone");
    let entry = kb.json(&["show", &new_path]);
    assert_eq!(entry["entry"]["frontmatter"]["id"], "01SHEDROOFREPAIR0000000000");
    assert_eq!(entry["entry"]["category"], "admin");
    assert_eq!(kb.json(&["search", "leaks"])["entries"][0]["path"], new_path.as_str(), "the index follows");

    let human = kb.ok(&["move", &new_path, "ideas"]);
    let (_, back) = human.trim_end().split_once(" to ").unwrap_or_else(|| panic!("{human}"));
    assert!(human.starts_with(&format!("moved {new_path} to ideas/")), "{human}");
    assert!(back.ends_with(" (ideas)"), "{human}");
    assert_eq!(kb.entry_files().len(), 1);
}

#[test]
fn move_to_the_inbox_or_outside_the_vault_exits_2_and_changes_nothing() {
    let kb = Sandbox::new();
    let file = kb.vault().join("projects/shed-roof-repair.md");
    write(&file, SHED);
    let inbox = kb.run(&["move", "projects/shed-roof-repair.md", "inbox"]);
    assert_eq!(inbox.status.code(), Some(2), "{}", stderr(&inbox));
    assert!(stderr(&inbox).contains("inbox"), "{}", stderr(&inbox));
    let cases: &[&[&str]] = &[
        &["move", "projects/shed-roof-repair.md", "recipes"],
        &["move", "projects/shed-roof-repair.md", "projects"],
        &["move", "../x.md", "ideas"],
        &["move", "/etc/passwd", "ideas"],
        &["move", "projects/shed-roof-repair.md"],
    ];
    for args in cases {
        let output = kb.run(args);
        assert_eq!(output.status.code(), Some(2), "kb {args:?}: {}", stderr(&output));
        assert!(stdout(&output).is_empty(), "kb {args:?}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), SHED);
    assert_eq!(kb.entry_files(), ["projects/shed-roof-repair.md"]);
    let missing = kb.run(&["move", "projects/nothing-here.md", "ideas"]);
    assert_eq!(missing.status.code(), Some(1), "{}", stderr(&missing));
}

#[test]
fn names_stand_for_paths_and_duplicates_can_be_found_and_merged_then_undone() {
    let kb = Sandbox::new();
    write(
        &kb.vault().join("people/priya-raman.md"),
        "---\nname: Priya Raman\ntags: [robotics]\n---\nMet at the meetup.\n",
    );
    write(&kb.vault().join("inbox/priya.md"), "---\nname: Priya\ntags: [mit]\n---\nMoving to MIT.\n");
    write(&kb.vault().join("admin/renew-passport.md"), "---\nname: Renew passport\nstatus: pending\n---\n");
    let before_target = std::fs::read(kb.vault().join("people/priya-raman.md")).unwrap();

    // A name wherever a path goes: show, update, history.
    assert!(kb.ok(&["show", "priya raman"]).contains("people/priya-raman.md"));
    kb.ok(&["update", "the passport thing", "--set", "status=done"]);
    let passport = std::fs::read_to_string(kb.vault().join("admin/renew-passport.md")).unwrap();
    assert!(passport.contains("status: done"), "{passport}");
    assert!(kb.ok(&["history", "Renew Passport"]).contains("status"));
    // A name that fits no entry: a clear failure, nothing changed.
    let missing = kb.run(&["update", "the zeppelin", "--set", "status=done"]);
    assert_ne!(missing.status.code(), Some(0));
    assert!(stderr(&missing).contains("Entry not found"), "{}", stderr(&missing));

    let found = kb.json(&["duplicates", "Priya"]);
    assert_eq!(found["total"], 1, "{found}");
    let paths: Vec<&str> = found["groups"][0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["inbox/priya.md", "people/priya-raman.md"]);

    let merged = kb.json(&["merge", "Priya Raman", "inbox/priya.md"]);
    assert_eq!(merged["path"], "people/priya-raman.md", "{merged}");
    assert_eq!(kb.entry_files(), ["admin/renew-passport.md", "people/priya-raman.md"]);
    let target = std::fs::read_to_string(kb.vault().join("people/priya-raman.md")).unwrap();
    assert!(
        target.contains("Moving to MIT.") && target.contains("mit") && target.contains("robotics"),
        "{target}"
    );
    assert_eq!(kb.json(&["duplicates"])["total"], 0);

    // One undo takes the whole merge back, to the very bytes.
    kb.ok(&["undo"]);
    assert_eq!(kb.entry_files(), ["admin/renew-passport.md", "inbox/priya.md", "people/priya-raman.md"]);
    assert_eq!(std::fs::read(kb.vault().join("people/priya-raman.md")).unwrap(), before_target);
}
