//! A vault someone already keeps, served by the real `kb serve`: their notes in folders of
//! their own are searched, listed by folder, read and edited by path over HTTP with
//! nothing added, what `.gitignore`, `.kbignore` and `KB_EXCLUDE` leave out stays out,
//! and the CLI moves a note to another folder with the wikilinks to it following.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::common::{KbServer, query_value, url_path};

fn write(vault: &Path, rel: &str, text: &str) {
    let file = vault.join(rel);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
}

/// An Obsidian-style vault: notes in folders, wikilinks, a template folder, an ignored one.
fn obsidian_vault(vault: &Path) {
    write(vault, "Journal/2025/Day one.md", "Walked to the lake with [[Anna]].\n");
    write(vault, "People/Anna.md", "---\naliases: [my sister]\n---\nAnna lives in Lyon.\n");
    write(vault, "Reading.md", "- Dune, recommended by [[Anna|my sister]]\n");
    write(vault, "Templates/Daily.md", "lake template\n");
    write(vault, "Private/diary.md", "lake secrets\n");
    write(vault, "build/out.md", "lake build output\n");
    write(vault, ".obsidian/workspace.md", "lake\n");
    write(vault, ".gitignore", "build/\n");
    write(vault, ".kbignore", "Private/\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vault_of_ones_own_notes_is_searched_listed_read_and_edited_as_it_is() {
    let kb = KbServer::start_with_vault(&[("KB_EXCLUDE", "Templates")], obsidian_vault).await;
    let vault = kb.vault();

    let found = kb.get("/api/search?q=lake").await.expect(200);
    let paths: Vec<&str> =
        found["entries"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["Journal/2025/Day one.md"], "{found}");
    assert_eq!(found["entries"][0]["category"], "other");

    let listed =
        kb.get(&format!("/api/entries?category=other&folder={}", query_value("Journal"))).await.expect(200);
    assert_eq!(listed["total"], 1);
    assert_eq!(listed["entries"][0]["folder"], "Journal/2025");
    assert_eq!(kb.get("/api/entries?category=other").await.expect(200)["total"], 3);

    let anna = kb.get(&format!("/api/entries/{}", url_path("People/Anna.md"))).await.expect(200);
    assert_eq!(anna["entry"]["category"], "other");
    let mut backlinks: Vec<&str> =
        anna["backlinks"].as_array().unwrap().iter().map(|l| l["path"].as_str().unwrap()).collect();
    backlinks.sort();
    assert_eq!(backlinks, ["Journal/2025/Day one.md", "Reading.md"]);

    let day = format!("/api/entries/{}", url_path("Journal/2025/Day one.md"));
    kb.patch(&day, &json!({"body": {"mode": "append", "content": "Rain later."}})).await.expect(200);
    let text = std::fs::read_to_string(vault.join("Journal/2025/Day one.md")).unwrap();
    assert!(
        text.starts_with("Walked to the lake with [[Anna]].\n") && text.contains("Rain later."),
        "{text:?}"
    );
    assert!(!text.contains("---") && !text.contains("updated_at"), "kb added a field: {text:?}");
    assert!(!vault.join("index.md").exists() && !vault.join("people").exists(), "{:?}", kb.entry_files());

    for left_out in ["Templates/Daily.md", "Private/diary.md", "build/out.md", ".obsidian/workspace.md"] {
        let reply = kb.get(&format!("/api/entries/{}", url_path(left_out))).await;
        assert!(reply.status == 404 || reply.status == 400, "{left_out}: {}", reply.status);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kb_move_takes_a_note_to_another_folder_and_its_wikilinks_follow() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path();
    obsidian_vault(vault);
    let kb = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
        for var in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "KB_MODEL", "KB_DIR", "DATABASE_URL", "KB_EXCLUDE"] {
            command.env_remove(var);
        }
        let out = command.arg("--kb-dir").arg(vault).args(args).output().unwrap();
        assert!(out.status.success(), "kb {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let moved = kb(&["move", "People/Anna.md", "Family/Anna.md"]);
    assert!(moved.contains("Family/Anna.md"), "{moved}");
    assert_eq!(
        std::fs::read_to_string(vault.join("Family/Anna.md")).unwrap(),
        "---\naliases: [my sister]\n---\nAnna lives in Lyon.\n"
    );
    // Bare names still lead to Anna: left as they were.
    assert_eq!(
        std::fs::read_to_string(vault.join("Reading.md")).unwrap(),
        "- Dune, recommended by [[Anna|my sister]]\n"
    );
    let shown = kb(&["show", "Family/Anna"]);
    assert!(shown.contains("Journal/2025/Day one.md"), "backlinks listed: {shown}");
    let undone = kb(&["undo"]);
    assert!(undone.contains("Moved"), "{undone}");
    assert!(vault.join("People/Anna.md").is_file() && !vault.join("Family/Anna.md").exists());
}
