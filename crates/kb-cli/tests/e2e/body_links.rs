//! Links in a note's body, end to end with the real `kb` binary on hand-made vaults: what
//! `kb show` lists as backlinks, and what `kb move` rewrites — exactly the links that led to
//! the moved note, in the form they were written, every other byte as it was. Markdown
//! links are read from the note's folder first; links inside code are text; a table writes
//! `[[Note\|alias]]`; `[[./x]]` and `[[../x]]` are read from the note's folder; a rewritten
//! wikilink names its note alone.

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Writes each (path, text) into `vault`.
fn write(vault: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let file = vault.join(rel);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
    }
}

/// Runs `kb` on `vault` with no model configured; its stdout (it must succeed).
fn kb(vault: &Path, args: &[&str]) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
    for var in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "KB_MODEL", "KB_DIR", "DATABASE_URL", "KB_EXCLUDE"] {
        command.env_remove(var);
    }
    let out = command.arg("--kb-dir").arg(vault).args(args).output().unwrap();
    assert!(out.status.success(), "kb {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The notes `kb show --json` lists as linking to the note at `path`.
fn backlinks(vault: &Path, path: &str) -> Vec<String> {
    let shown: Value = serde_json::from_str(&kb(vault, &["--json", "show", path])).unwrap();
    let listed = shown["backlinks"].as_array().cloned().unwrap_or_default();
    listed.iter().map(|b| b["path"].as_str().unwrap_or_default().to_string()).collect()
}

fn read(vault: &Path, rel: &str) -> String {
    fs::read_to_string(vault.join(rel)).unwrap()
}

#[test]
fn a_relative_markdown_link_is_rewritten_by_the_rule_that_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path();
    let a = "See [b](sub/b.md) and [top](../sub/b.md#Part).\n";
    write(vault, &[("Journal/a.md", a), ("Journal/sub/b.md", "Deep b.\n"), ("sub/b.md", "Root b.\n")]);
    assert_eq!(backlinks(vault, "Journal/sub/b.md"), ["Journal/a.md"]);
    // Moving the note at the root moves only the link that led to it.
    kb(vault, &["move", "sub/b.md", "Old/b.md"]);
    assert_eq!(read(vault, "Journal/a.md"), "See [b](sub/b.md) and [top](../Old/b.md#Part).\n");
    // Moving the note the link leads to rewrites it, still from the note's folder.
    kb(vault, &["move", "Journal/sub/b.md", "Journal/Old/b.md"]);
    assert_eq!(read(vault, "Journal/a.md"), "See [b](Old/b.md) and [top](../Old/b.md#Part).\n");
    assert_eq!(backlinks(vault, "Journal/Old/b.md"), ["Journal/a.md"]);
    assert_eq!(backlinks(vault, "Old/b.md"), ["Journal/a.md"]);
}

#[test]
fn links_inside_code_are_neither_backlinks_nor_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path();
    let code = concat!(
        "> [!example]\n",
        "> ```\n",
        "> [[Target]]\n",
        "> ```\n",
        "\n",
        "    [[Target]] [t](Target.md)\n",
    );
    let home = format!("{code}\nThe real one: [[Target]].\n");
    write(vault, &[("Code.md", code), ("Home.md", &home), ("Target.md", "The target.\n")]);
    assert_eq!(backlinks(vault, "Target.md"), ["Home.md"]);
    kb(vault, &["move", "Target.md", "Archive/Renamed.md"]);
    assert_eq!(read(vault, "Code.md"), code, "code is text");
    assert_eq!(read(vault, "Home.md"), format!("{code}\nThe real one: [[Renamed]].\n"));
    assert_eq!(backlinks(vault, "Archive/Renamed.md"), ["Home.md"]);
}

#[test]
fn a_wikilink_in_a_table_keeps_its_escaped_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path();
    let table = "| Topic | Note |\n| --- | --- |\n| Plans | [[Note\\|the plans]] |\n";
    write(vault, &[("Table.md", table), ("Note.md", "Plans.\n")]);
    assert_eq!(backlinks(vault, "Note.md"), ["Table.md"]);
    kb(vault, &["move", "Note.md", "Folder/Renamed.md"]);
    assert_eq!(read(vault, "Table.md"), table.replace("[[Note\\|", "[[Renamed\\|"));
    assert_eq!(backlinks(vault, "Folder/Renamed.md"), ["Table.md"]);
}

#[test]
fn relative_wikilinks_resolve_and_stay_relative() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path();
    let here = "Up [[../B/Note|n]] and beside [[./Sib]].\n";
    write(
        vault,
        &[
            ("A/Here.md", here),
            ("A/Sib.md", "Sibling.\n"),
            ("B/Note.md", "Note.\n"),
            ("C/Sib.md", "Other.\n"),
        ],
    );
    assert_eq!(backlinks(vault, "B/Note.md"), ["A/Here.md"]);
    assert_eq!(backlinks(vault, "A/Sib.md"), ["A/Here.md"]);
    assert!(backlinks(vault, "C/Sib.md").is_empty());
    kb(vault, &["move", "B/Note.md", "C/D/Note.md"]);
    assert_eq!(read(vault, "A/Here.md"), "Up [[../C/D/Note|n]] and beside [[./Sib]].\n");
    kb(vault, &["move", "A/Sib.md", "A/Sub/Sib.md"]);
    assert_eq!(read(vault, "A/Here.md"), "Up [[../C/D/Note|n]] and beside [[./Sub/Sib]].\n");
    assert_eq!(backlinks(vault, "A/Sub/Sib.md"), ["A/Here.md"]);
}

#[test]
fn a_rewritten_wikilink_names_its_note_alone() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path();
    write(vault, &[("Home.md", "See [[Note]].\n"), ("Old/Note.md", "Note.\n"), ("Y/Dup.md", "Another.\n")]);
    kb(vault, &["move", "Old/Note.md", "X/Dup.md"]);
    assert_eq!(read(vault, "Home.md"), "See [[X/Dup]].\n");
    assert_eq!(backlinks(vault, "X/Dup.md"), ["Home.md"]);
    assert!(backlinks(vault, "Y/Dup.md").is_empty());
}
