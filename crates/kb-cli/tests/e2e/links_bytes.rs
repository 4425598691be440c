//! Links and the bytes of a person's notes, with the real `kb` binary: a move or a merge
//! changes nothing in a referring note but the bytes of the values that named the moved
//! note (CRLF, comments and `1.10` kept); links in properties are links (backlinks,
//! rewritten on a move); links to files that are not notes say `kind: file`, broken ones
//! `missing` (`kb show`, `GET …/links`; MCP's outputSchema in `mcp_rmcp`); a symlink to a left-out note is
//! left out; `--set` on a CRLF note without frontmatter writes its block in CRLF.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::{KbServer, url_path};

fn write(vault: &Path, rel: &str, text: &str) {
    let file = vault.join(rel);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
}

fn read(vault: &Path, rel: &str) -> String {
    std::fs::read_to_string(vault.join(rel)).unwrap()
}

/// `kb --kb-dir VAULT ARGS…` with the offline model and no outside settings.
fn run(vault: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
    let unset = [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "KB_MODEL",
        "KB_DIR",
        "DATABASE_URL",
        "KB_EXCLUDE",
        "KB_API_TOKEN",
        "KB_ADDR",
    ];
    for var in unset {
        command.env_remove(var);
    }
    command.arg("--kb-dir").arg(vault).args(args).output().unwrap()
}

/// [`run`], which must succeed; its standard output.
fn kb(vault: &Path, args: &[&str]) -> String {
    let out = run(vault, args);
    assert!(out.status.success(), "kb {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The frontmatter of the issue a person met: CRLF, a comment, a number written `1.10`.
const REFERRING: &str = "---\r\n# keep\r\nref: N/T.md\r\nversion: 1.10\r\n---\r\nSee the note.\r\n";

#[test]
fn a_move_changes_only_the_bytes_of_the_referring_value() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path();
    write(vault, "N/T.md", "The note.\n");
    write(vault, "N/other.md", REFERRING);
    write(
        vault,
        "Lists.md",
        "---\r\nall: [N/T.md, \"N/T.md\"]  # both\r\nblock:\r\n  # first\r\n  - 'N/T.md'\r\n---\r\n",
    );
    kb(vault, &["move", "N/T.md", "N/Re: T.md"]);
    assert!(vault.join("N/Re: T.md").is_file());
    assert_eq!(
        read(vault, "N/other.md"),
        "---\r\n# keep\r\nref: 'N/Re: T.md'\r\nversion: 1.10\r\n---\r\nSee the note.\r\n"
    );
    assert_eq!(
        read(vault, "Lists.md"),
        "---\r\nall: ['N/Re: T.md', \"N/Re: T.md\"]  # both\r\nblock:\r\n  # first\r\n  - 'N/Re: T.md'\r\n---\r\n"
    );
    // And back: the value keeps the quotes it has now, every other byte stays.
    kb(vault, &["move", "N/Re: T.md", "N/T.md"]);
    assert_eq!(read(vault, "N/other.md"), REFERRING.replace("ref: N/T.md", "ref: 'N/T.md'"));
}

#[test]
fn a_merge_changes_only_the_bytes_of_the_referring_value() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path();
    write(vault, "people/Re: Priya.md", "---\nname: Priya Raman\n---\nMet at the meetup.\n");
    write(vault, "inbox/priya.md", "---\nname: Priya\n---\nMoving to MIT.\n");
    let kiln = "---\r\nname: Kiln\r\n# who helps\r\nrelated_people: [inbox/priya.md]  # mine\r\nversion: 1.10\r\n---\r\nBody\r\n";
    write(vault, "projects/kiln.md", kiln);
    kb(vault, &["merge", "people/Re: Priya.md", "inbox/priya.md"]);
    assert_eq!(
        read(vault, "projects/kiln.md"),
        kiln.replace("[inbox/priya.md]", "['people/Re: Priya.md']"),
        "only the value changed, quoted as YAML needs"
    );
}

#[test]
fn links_in_properties_are_backlinks_and_follow_a_move() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path();
    write(vault, "Topics/Target.md", "The target.\n");
    write(
        vault,
        "Home.md",
        "---\r\nup: \"[[Target]]\"   # parent\r\nrelated: ['[[Target|it''s]]']\r\nv: 1.10\r\n---\r\nHome.\r\n",
    );
    let shown: Value = serde_json::from_str(&kb(vault, &["show", "Topics/Target.md", "--json"])).unwrap();
    let backlinks: Vec<(&str, &str)> = shown["backlinks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["path"].as_str().unwrap(), b["line"].as_str().unwrap()))
        .collect();
    assert_eq!(
        backlinks,
        [("Home.md", "up: [[Target]]"), ("Home.md", "related: [[Target|it's]]")],
        "{shown}"
    );
    kb(vault, &["move", "Topics/Target.md", "Topics/Re: it's.md"]);
    assert_eq!(
        read(vault, "Home.md"),
        "---\r\nup: \"[[Re: it's]]\"   # parent\r\nrelated: ['[[Re: it''s|it''s]]']\r\nv: 1.10\r\n---\r\nHome.\r\n"
    );
    let shown: Value = serde_json::from_str(&kb(vault, &["show", "Topics/Re: it's.md", "--json"])).unwrap();
    assert_eq!(shown["backlinks"].as_array().unwrap().len(), 2, "{shown}");
}

/// A vault with attachments: an SVG, a PNG in a folder, a PDF, one left out.
fn attachments(vault: &Path) {
    write(vault, "icon.svg", "<svg/>");
    write(vault, "assets/photo.png", "png");
    write(vault, "docs/Some.pdf", "pdf");
    write(vault, "Private/hidden.png", "png");
    write(vault, ".kbignore", "Private/\n");
    write(vault, "Note.md", "A note.\n");
    write(
        vault,
        "Journal/Day.md",
        "![[icon.svg#x]] and ![[photo.png]], [doc](../docs/Some.pdf), ![[Some.pdf]],\n\
         [[Note]], ![[gone.png]], [[No such note]] and ![[hidden.png]].\n",
    );
}

/// The `(name, kind, path or file)` of each link of a get_entry answer.
fn kinds(answer: &Value) -> Vec<(String, String, String)> {
    answer["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let at = l["path"].as_str().or(l["file"].as_str()).unwrap_or("-");
            (l["name"].as_str().unwrap().to_string(), l["kind"].as_str().unwrap().to_string(), at.to_string())
        })
        .collect()
}

fn expected_kinds() -> Vec<(String, String, String)> {
    [
        ("icon.svg", "file", "icon.svg"),
        ("photo.png", "file", "assets/photo.png"),
        ("../docs/Some.pdf", "file", "docs/Some.pdf"),
        ("Some.pdf", "file", "docs/Some.pdf"),
        ("Note", "note", "Note.md"),
        ("gone.png", "missing", "-"),
        ("No such note", "missing", "-"),
        ("hidden.png", "missing", "-"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect()
}

#[test]
fn links_to_files_say_file_and_broken_ones_missing_in_kb_show() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path();
    attachments(vault);
    let shown: Value = serde_json::from_str(&kb(vault, &["show", "Journal/Day.md", "--json"])).unwrap();
    assert_eq!(kinds(&shown), expected_kinds(), "{shown}");
    let human = kb(vault, &["show", "Journal/Day.md"]);
    assert!(human.contains("assets/photo.png (file)  photo.png"), "{human}");
    // A file added later is found too.
    write(vault, "assets/later.png", "png");
    write(vault, "Later.md", "![[later.png]]\n");
    let later: Value = serde_json::from_str(&kb(vault, &["show", "Later.md", "--json"])).unwrap();
    assert_eq!(later["links"][0]["kind"], "file", "{later}");
    // Only `.md` files are notes: none of the attachments is listed.
    let listed: Value = serde_json::from_str(&kb(vault, &["list", "--category", "other", "--json"])).unwrap();
    let paths: Vec<&str> =
        listed["entries"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert_eq!(paths.len(), 3, "{listed}");
    assert!(paths.iter().all(|p| p.ends_with(".md")), "{paths:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_to_files_say_their_kind_over_http() {
    let kb = KbServer::start_with_vault(&[], attachments).await;
    let answer = kb.get(&format!("/api/entries/{}/links", url_path("Journal/Day.md"))).await.expect(200);
    assert_eq!(kinds(&answer), expected_kinds(), "{answer}");
    let entry = kb.get(&format!("/api/entries/{}", url_path("Journal/Day.md"))).await.expect(200);
    assert_eq!(entry["links"][0]["kind"], "file", "{entry}");
}

#[test]
fn a_symlink_to_a_left_out_note_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path();
    write(vault, "Private/secret.md", "---\nname: Secret\n---\nthe secret word is walrus\n");
    write(vault, "Drafts/draft.md", "---\nname: Draft\n---\nthe draft word is walrus\n");
    write(vault, "Open/open.md", "---\nname: Open\n---\nthe open word is walrus\n");
    write(vault, ".kbignore", "Private/\n");
    write(vault, ".gitignore", "Drafts/\n");
    std::fs::create_dir_all(vault.join("notes")).unwrap();
    std::os::unix::fs::symlink("../Private/secret.md", vault.join("notes/secret.md")).unwrap();
    std::os::unix::fs::symlink("../Drafts/draft.md", vault.join("notes/draft.md")).unwrap();
    std::os::unix::fs::symlink("../Open/open.md", vault.join("notes/open.md")).unwrap();
    let listed = kb(vault, &["list", "--json"]);
    assert!(listed.contains("notes/open.md"), "{listed}");
    assert!(!listed.contains("secret") && !listed.contains("draft"), "{listed}");
    let found = kb(vault, &["search", "walrus", "--json"]);
    assert!(!found.contains("secret") && !found.contains("draft"), "{found}");
    assert!(!run(vault, &["show", "notes/secret.md"]).status.success());
}

#[test]
fn set_on_a_crlf_note_without_frontmatter_writes_the_block_in_crlf() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path();
    write(vault, "Journal/day.md", "# Day\r\n\r\nRain.\r\n");
    kb(vault, &["update", "Journal/day.md", "--set", "mood=calm"]);
    assert_eq!(read(vault, "Journal/day.md"), "---\r\nmood: calm\r\n---\r\n# Day\r\n\r\nRain.\r\n");
}
