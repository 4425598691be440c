//! Starting from the saved catalogue: the real `kb` binary on a vault that is edited while no
//! kb runs — files added, rewritten, appended to, deleted and renamed, one of them rewritten
//! within the same second as kb's last save with its size and modification time kept — and
//! the next command sees every change, reading only the files that changed.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

use serde_json::Value;

/// Runs `kb --kb-dir VAULT ARGS… --json` with no model, logging the vault's opening.
fn kb(vault: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
    for var in
        ["OPENAI_API_KEY", "OPENAI_BASE_URL", "KB_MODEL", "KB_DIR", "DATABASE_URL", "KB_API_TOKEN", "KB_ADDR"]
    {
        command.env_remove(var);
    }
    let output = command
        .env("RUST_LOG", "warn,kb_storage::vault=info")
        .arg("--kb-dir")
        .arg(vault)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "kb {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap()
}

/// How many entries the opening took from the saved catalogue and how many files it read.
fn opening(output: &Output) -> (usize, usize) {
    let log = String::from_utf8_lossy(&output.stderr);
    let line =
        log.lines().find(|l| l.contains("vault opened")).unwrap_or_else(|| panic!("no opening: {log}"));
    let number = |key: &str| -> usize {
        let at = line.find(&format!("{key}=")).unwrap_or_else(|| panic!("{key} in {line}")) + key.len() + 1;
        line[at..].split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
    };
    (number("from_saved"), number("read"))
}

/// Every other note, page by page, and the output of the first command (which opened the
/// vault after the changes).
fn list_all(vault: &Path) -> (Output, Vec<Value>) {
    let first = kb(vault, &["list", "--category", "other", "--limit", "100"]);
    let mut entries: Vec<Value> = json(&first)["entries"].as_array().unwrap().clone();
    let total = json(&first)["total"].as_u64().unwrap() as usize;
    while entries.len() < total {
        let page = kb(
            vault,
            &["list", "--category", "other", "--limit", "100", "--offset", &entries.len().to_string()],
        );
        entries.extend(json(&page)["entries"].as_array().unwrap().iter().cloned());
    }
    (first, entries)
}

fn names(entries: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = entries.iter().map(|e| e["name"].as_str().unwrap().to_string()).collect();
    names.sort();
    names
}

fn found(vault: &Path, word: &str) -> Vec<String> {
    let hits = json(&kb(vault, &["search", word]));
    let mut paths: Vec<String> =
        hits["entries"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap().to_string()).collect();
    paths.sort();
    paths
}

fn note(vault: &Path, rel: &str, text: &str) {
    let file = vault.join(rel);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
}

#[test]
fn changes_made_while_no_kb_runs_are_seen_by_the_next_command() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path();
    for i in 0..100 {
        note(vault, &format!("Garden/Bed {i:03}.md"), &format!("Bed {i:03} holds tomatoes.\n"));
    }
    note(vault, "Journal/Monday.md", "Watered the beds.\n");
    note(vault, "Journal/Tuesday.md", "Quiet day.\n");
    // A file whose frontmatter does not parse is skipped, and kept so in the catalogue.
    note(vault, "Journal/Broken.md", "---\nname: [unclosed\n---\nNot an entry.\n");

    // The first command reads every file and saves the catalogue; once the files are older
    // than the racy window, the next takes every entry from it and reads none.
    let first = kb(vault, &["list", "--category", "other", "--limit", "1"]);
    assert_eq!(opening(&first), (0, 103));
    assert!(vault.join(".kb/catalogue.bin").exists());
    std::thread::sleep(Duration::from_millis(2_100));
    // The files were written just before that save: too close for their stamps to tell,
    // so they are read once more, and the catalogue saved again.
    let settled = kb(vault, &["list", "--category", "other", "--limit", "1"]);
    assert_eq!(opening(&settled), (0, 103));
    let warm = kb(vault, &["list", "--category", "other", "--limit", "1"]);
    assert_eq!(opening(&warm), (102, 0), "a warm start reads nothing, the malformed file included");
    assert_eq!(json(&warm)["total"], 102);

    // While no kb runs: a new note, an append (the folder's time is left as it was), a
    // rewrite of another size, a delete, and a rename.
    let journal = vault.join("Journal");
    let folder_time = std::fs::metadata(&journal).unwrap().modified().unwrap();
    note(vault, "Journal/Wednesday.md", "Planted garlic.\n");
    std::fs::OpenOptions::new()
        .append(true)
        .open(journal.join("Monday.md"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"Saw a heron.\n"))
        .unwrap();
    note(vault, "Garden/Bed 001.md", "Bed 001 now holds courgettes, a lot of them.\n");
    std::fs::remove_file(vault.join("Garden/Bed 002.md")).unwrap();
    std::fs::rename(vault.join("Garden/Bed 003.md"), vault.join("Garden/Bed three.md")).unwrap();
    std::fs::File::open(&journal).unwrap().set_modified(folder_time).unwrap();

    let (after, listed) = list_all(vault);
    let listed = names(&listed);
    assert!(listed.contains(&"Wednesday".to_string()) && listed.contains(&"Bed three".to_string()));
    assert!(!listed.contains(&"Bed 002".to_string()) && !listed.contains(&"Bed 003".to_string()));
    assert_eq!(listed.len(), 102);
    assert_eq!(found(vault, "heron"), ["Journal/Monday.md"]);
    assert_eq!(found(vault, "courgettes"), ["Garden/Bed 001.md"]);
    assert_eq!(found(vault, "garlic"), ["Journal/Wednesday.md"]);
    // Only the changed files were read: the new, appended, rewritten and renamed ones.
    let (from_saved, read) = opening(&after);
    assert!(read <= 4 + 4, "read {read} files");
    assert!(from_saved >= 98, "took {from_saved} entries from the catalogue");

    // 70 more new notes make the next command save the catalogue again; within the same
    // second, one of the notes it saved is rewritten with the same size and given back its
    // modification time: its stamp is the saved one, and still the new text is seen.
    for i in 0..70 {
        note(vault, &format!("Orchard/Tree {i:02}.md"), &format!("Tree {i:02} is an apple.\n"));
    }
    let tree = vault.join("Orchard/Tree 07.md");
    let saved = kb(vault, &["list", "--category", "other", "--limit", "1"]);
    assert_eq!(json(&saved)["total"], 172);
    let stamp: SystemTime = std::fs::metadata(&tree).unwrap().modified().unwrap();
    std::fs::write(&tree, "Tree 07 is a quince.\n").unwrap();
    std::fs::File::options().write(true).open(&tree).unwrap().set_modified(stamp).unwrap();
    assert_eq!(std::fs::metadata(&tree).unwrap().len(), "Tree 07 is an apple.\n".len() as u64);
    assert_eq!(found(vault, "quince"), ["Orchard/Tree 07.md"]);
    let shown = json(&kb(vault, &["show", "Orchard/Tree 07.md"]));
    assert!(shown.to_string().contains("quince"), "{shown}");
    let (_, listed) = list_all(vault);
    let tree = listed.iter().find(|e| e["path"] == "Orchard/Tree 07.md").unwrap();
    assert!(tree["summary"].as_str().unwrap().contains("quince"), "{tree}");
}
