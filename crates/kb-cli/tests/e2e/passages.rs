//! Search hits name their passage, and an entry's lines are answered, through the real
//! `kb` binary: `/api/search` gives each hit `passage: {text, startLine, endLine}` whose
//! lines of the file hold it (a CRLF file, a file without frontmatter, a note kb just
//! changed); `GET /api/entries/{path}?lines=` answers those lines, and refuses bad ranges;
//! `kb search` prints `path:START-END` and `kb show --lines` the numbered lines, alone and
//! beside `kb serve`.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::common::{self, KbServer};

/// A person's notes: a project with a long frontmatter, a CRLF note, a journal page without
/// frontmatter.
fn prepare(vault: &Path) {
    for category in common::CATEGORIES {
        std::fs::create_dir_all(vault.join(category)).unwrap();
    }
    std::fs::create_dir_all(vault.join("Journal")).unwrap();
    let files = [
        (
            "projects/shed.md",
            "---\nname: Garden shed\nstatus: active\nnext_action: >\n  Buy roofing felt\n  at the builders' yard\n---\n\
             # Shed\n\nMeasured the base.\n\nThe felt needs battens every forty centimetres,\nnailed with galvanised clouts.\n",
        ),
        (
            "admin/lease.md",
            "---\r\nname: Lease\r\n---\r\nRent is due on the first.\r\n\r\nThe landlord keeps the deposit\r\nuntil the inspection.\r\n",
        ),
        ("Journal/Sunday.md", "# Sunday\n\nWalked along the canal.\n\nSaw a heron near the lock gates.\n"),
    ];
    for (path, text) in files {
        std::fs::write(vault.join(path), text).unwrap();
    }
}

/// The lines `passage` names of the file at `path`, as `sed -n START,ENDp` prints them.
fn sed(vault: &Path, path: &str, start: u64, end: u64) -> String {
    let text = std::fs::read_to_string(vault.join(path)).unwrap();
    text.split('\n')
        .skip(start as usize - 1)
        .take((end - start + 1) as usize)
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The one hit of `query` over HTTP: its path and passage.
async fn only_hit(kb: &KbServer, query: &str) -> (String, Value) {
    let found = kb.get(&format!("/api/search?q={}", common::query_value(query))).await.expect(200);
    let hits = found["entries"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{query}: {found}");
    (hits[0]["path"].as_str().unwrap().to_string(), hits[0]["passage"].clone())
}

/// `(startLine, endLine)` of a passage.
fn lines_of(passage: &Value) -> (u64, u64) {
    (passage["startLine"].as_u64().unwrap(), passage["endLine"].as_u64().unwrap())
}

#[tokio::test]
async fn search_hits_over_http_name_the_lines_get_entry_answers() {
    let kb = KbServer::start_with_vault(&[], prepare).await;
    let vault = kb.vault();

    let cases = [
        ("galvanised battens", "projects/shed.md", (12, 13)),
        ("deposit inspection", "admin/lease.md", (6, 7)),
        ("heron", "Journal/Sunday.md", (5, 5)),
    ];
    for (query, path, lines) in cases {
        let (found, passage) = only_hit(&kb, query).await;
        assert_eq!((found.as_str(), lines_of(&passage)), (path, lines), "{query}: {passage}");
        let text = passage["text"].as_str().unwrap();
        assert_eq!(sed(&vault, path, lines.0, lines.1), text, "{query}");
        assert!(!text.contains("**"), "{text}");
        // The entry's lines are what the passage names.
        let range = format!("{}-{}", lines.0, lines.1);
        let answer =
            kb.get(&format!("/api/entries/{}?lines={range}", common::url_path(path))).await.expect(200);
        assert_eq!(answer["lines"]["text"], text, "{answer}");
        assert_eq!(
            (answer["lines"]["start"].as_u64(), answer["lines"]["end"].as_u64()),
            (Some(lines.0), Some(lines.1))
        );
        assert!(answer["entry"].get("content").is_none() && answer.get("links").is_none(), "{answer}");
    }
    // A frontmatter value: its key's lines.
    let (_, passage) = only_hit(&kb, "builders yard").await;
    assert_eq!(lines_of(&passage), (4, 6), "{passage}");
    assert!(sed(&vault, "projects/shed.md", 4, 6).starts_with("next_action: >"));

    // One line; a range past the end stops there; the whole entry still answers without lines.
    let shed = format!("/api/entries/{}", common::url_path("projects/shed.md"));
    let one = kb.get(&format!("{shed}?lines=2")).await.expect(200);
    assert_eq!(one["lines"], json!({"start": 2, "end": 2, "total": 13, "text": "name: Garden shed"}));
    let cut = kb.get(&format!("{shed}?lines=13-40")).await.expect(200);
    assert_eq!(
        (cut["lines"]["end"].as_u64(), cut["lines"]["text"].as_str()),
        (Some(13), Some("nailed with galvanised clouts."))
    );
    let whole = kb.get(&shed).await.expect(200);
    assert!(
        whole["entry"]["content"].as_str().unwrap().contains("galvanised") && whole["links"].is_array(),
        "{whole}"
    );
    for bad in ["0-3", "5-2", "a-b", "14", "99-100", ""] {
        let reply = kb.get(&format!("{shed}?lines={}", common::query_value(bad))).await;
        assert_eq!(reply.expect_error(400), "invalid_arguments", "{bad:?}: {}", reply.text());
    }
    assert_eq!(
        std::fs::read_to_string(vault.join("projects/shed.md")).unwrap().lines().count(),
        13,
        "nothing changed"
    );

    // A note kb just changed is found at its new lines.
    let edit = json!({"body": {"mode": "append", "content": "Ask Priya about the skylight."}});
    kb.patch(&shed, &edit).await.expect(200);
    let (_, passage) = only_hit(&kb, "skylight").await;
    let (start, end) = lines_of(&passage);
    assert_eq!(sed(&vault, "projects/shed.md", start, end), passage["text"].as_str().unwrap(), "{passage}");
    assert!(passage["text"].as_str().unwrap().contains("skylight"));
}

/// Runs `kb` on `vault` with no model configured.
fn kb(vault: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
    for var in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "KB_MODEL", "KB_DIR", "DATABASE_URL", "KB_EXCLUDE"] {
        command.env_remove(var);
    }
    command.arg("--kb-dir").arg(vault).args(args).output().unwrap()
}

/// Its stdout; it must succeed.
fn stdout(output: Output) -> String {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// `kb search` names each hit's lines, `kb show --lines` prints them numbered and refuses a
/// bad range.
fn the_command_line_names_and_shows_lines(vault: &Path) {
    let text = stdout(kb(vault, &["search", "galvanised"]));
    assert!(text.starts_with("projects/shed.md:12-13  Garden shed  ("), "{text}");
    let found: Value = serde_json::from_str(&stdout(kb(vault, &["search", "heron", "--json"]))).unwrap();
    assert_eq!(
        found["entries"][0]["passage"],
        json!({"text": "Saw a heron near the lock gates.", "startLine": 5, "endLine": 5})
    );
    let shown = stdout(kb(vault, &["show", "projects/shed.md", "--lines", "11-13"]));
    assert_eq!(
        shown,
        "Garden shed\nprojects/shed.md:11-13 (of 13 lines)\n\n11\n12  The felt needs battens every forty centimetres,\n\
         13  nailed with galvanised clouts.\n"
    );
    let json: Value =
        serde_json::from_str(&stdout(kb(vault, &["show", "admin/lease.md", "--lines", "4", "--json"])))
            .unwrap();
    assert_eq!(json["lines"], json!({"start": 4, "end": 4, "total": 7, "text": "Rent is due on the first."}));
    let refused = kb(vault, &["show", "projects/shed.md", "--lines", "5-2"]);
    assert_eq!(refused.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("ends before it starts"));
    let past = kb(vault, &["show", "projects/shed.md", "--lines", "40"]);
    assert!(!past.status.success());
    assert!(String::from_utf8_lossy(&past.stderr).contains("the file has 13 lines"), "{past:?}");
}

#[test]
fn the_command_line_alone_names_and_shows_lines() {
    let dir = tempfile::tempdir().unwrap();
    prepare(dir.path());
    the_command_line_names_and_shows_lines(dir.path());
}

#[tokio::test]
async fn the_command_line_beside_kb_serve_names_and_shows_lines() {
    let server = KbServer::start_with_vault(&[], prepare).await;
    let vault = server.vault();
    tokio::task::spawn_blocking(move || the_command_line_names_and_shows_lines(&vault)).await.unwrap();
    drop(server);
}
