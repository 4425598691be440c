//! Files handed to kb: `POST /api/files` and `kb capture --file`, with real PDFs from a
//! public test corpus (py-pdf's sample files), a broken one and a locked one; the limits,
//! the refused content types and `Idempotency-Key`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::{KbServer, url_path};

fn pdfs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pdfs")
}

fn pdf(name: &str) -> Vec<u8> {
    std::fs::read(pdfs().join(name)).unwrap()
}

/// The files under `attachments/` and `.kb/uploads/` of a vault.
fn kept_files(vault: &Path) -> (Vec<String>, usize) {
    let names = |dir: PathBuf| -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|d| d.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default()
    };
    (names(vault.join("attachments")), names(vault.join(".kb/uploads")).len())
}

#[tokio::test]
async fn an_uploaded_pdf_is_kept_and_its_text_filed_and_found() {
    let kb = KbServer::start(&[]).await;
    let bytes = pdf("pdflatex-4-pages.pdf");
    let reply = kb
        .request(
            "POST",
            "/api/files?name=Blind%20text.pdf",
            &[("Content-Type", "application/pdf")],
            Some(&bytes),
        )
        .await;
    assert_eq!(reply.status, 200, "{}\n{}", reply.text(), kb.log());
    let data = reply.json();
    let attachment = data["attachment"].as_str().unwrap().to_string();
    assert!(attachment.starts_with("attachments/") && attachment.ends_with("-blind-text.pdf"), "{data}");
    assert_eq!(std::fs::read(kb.vault().join(&attachment)).unwrap(), bytes, "the file is kept byte for byte");
    let path = data["path"].as_str().unwrap().to_string();
    let note = std::fs::read_to_string(kb.vault().join(&path)).unwrap();
    assert!(note.contains(&format!("![[{attachment}]]")), "the note embeds the file: {note}");
    assert!(note.contains("Huardest gefburn"), "the PDF's text is in the note: {note}");
    assert!(note.contains("source: file") && note.contains(&format!("attachment: {attachment}")), "{note}");
    assert_eq!(data["name"], "Blind text");
    let history = kb.get(&format!("/api/entries/{}/history", url_path(&path))).await.json();
    assert_eq!(history["revisions"][0]["source"], "file", "{history}");
    let found = kb.get("/api/search?q=gefburn").await.json();
    assert_eq!(found["entries"][0]["path"], path.as_str(), "{found}");
    let links = kb.get(&format!("/api/entries/{}", url_path(&path))).await.json();
    let link = links["links"].as_array().unwrap().iter().find(|l| l["file"] == attachment.as_str());
    assert!(link.is_some_and(|l| l["kind"] == "file"), "the embed leads to the kept file: {links}");

    // A Markdown file is kept, and its text filed, but the kept file is never a note.
    let markdown = b"# Shopping\n\n- oat milk\n- rye flour\n";
    let reply = kb
        .request("POST", "/api/files?name=list.md", &[("Content-Type", "text/markdown")], Some(markdown))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let entries = kb.get("/api/entries?limit=100").await.json();
    let listed: Vec<&str> =
        entries["entries"].as_array().unwrap().iter().filter_map(|e| e["path"].as_str()).collect();
    assert_eq!(listed.len(), 2, "two notes, no note for a kept file: {listed:?}");
    assert!(listed.iter().all(|p| !p.starts_with("attachments/")), "{listed:?}");
}

#[tokio::test]
async fn files_kb_cannot_take_are_refused_and_leave_nothing() {
    let kb = KbServer::start(&[("KB_UPLOAD_MAX_BYTES", "20000")]).await;
    let big = pdf("pdflatex-4-pages.pdf");
    let over = kb
        .request("POST", "/api/files?name=big.pdf", &[("Content-Type", "application/pdf")], Some(&big))
        .await;
    assert_eq!(over.status, 413, "{}", over.text());
    assert!(over.text().contains("KB_UPLOAD_MAX_BYTES"), "{}", over.text());
    for (name, bytes, word) in [
        ("truncated-pdflatex.pdf", pdf("truncated-pdflatex.pdf"), "cannot be read"),
        ("libreoffice-writer-password.pdf", pdf("libreoffice-writer-password.pdf"), "password"),
        ("fake.pdf", b"%PDF-1.7\nnot really\n".to_vec(), "cannot be read"),
    ] {
        let reply = kb
            .request(
                "POST",
                &format!("/api/files?name={name}"),
                &[("Content-Type", "application/pdf")],
                Some(&bytes),
            )
            .await;
        assert_eq!(reply.status, 422, "{name}: {}", reply.text());
        assert_eq!(reply.json()["error"]["code"], "unreadable_file", "{name}");
        assert!(
            reply.text().contains(word) && reply.text().contains("nothing was kept"),
            "{name}: {}",
            reply.text()
        );
    }
    for content_type in [
        None,
        Some("multipart/form-data; boundary=x"),
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let headers: Vec<(&str, &str)> = content_type.map(|t| vec![("Content-Type", t)]).unwrap_or_default();
        let reply = if headers.is_empty() {
            crate::common::send(
                kb.addr,
                "POST",
                "/api/files?name=a.bin",
                &[("Content-Type", "")],
                Some(b"abc"),
            )
            .await
            .unwrap()
        } else {
            kb.request("POST", "/api/files?name=a.bin", &headers, Some(b"abc")).await
        };
        assert_eq!(reply.status, 415, "{content_type:?}: {}", reply.text());
    }
    let unnamed = kb.request("POST", "/api/files", &[("Content-Type", "image/png")], Some(b"abc")).await;
    assert_eq!(unnamed.status, 400, "{}", unnamed.text());
    assert!(kb.entry_files().is_empty(), "{:?}", kb.entry_files());
    assert_eq!(kept_files(&kb.vault()), (Vec::new(), 0), "no file is kept, no part left");

    // Refused by its Content-Length before a byte of the body is sent.
    let mut stream = tokio::net::TcpStream::connect(kb.addr).await.unwrap();
    let head = format!(
        "POST /api/files?name=huge.bin HTTP/1.1\r\nHost: {}\r\nContent-Type: application/octet-stream\r\nContent-Length: 999999999\r\n\r\n",
        kb.addr
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let read =
        tokio::time::timeout(Duration::from_secs(10), stream.read(&mut answer)).await.unwrap().unwrap();
    let answer = String::from_utf8_lossy(&answer[..read]);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
}

#[tokio::test]
async fn a_file_sent_again_with_its_key_is_filed_once() {
    let kb = KbServer::start(&[]).await;
    let bytes = pdf("002-trivial-libre-office-writer.pdf");
    let send = |body: Vec<u8>| {
        let kb = &kb;
        async move {
            kb.request(
                "POST",
                "/api/files?name=trivial.pdf",
                &[("Content-Type", "application/pdf"), ("Idempotency-Key", "upload-1")],
                Some(&body),
            )
            .await
        }
    };
    let first = send(bytes.clone()).await;
    assert_eq!(first.status, 200, "{}", first.text());
    let again = send(bytes.clone()).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.json()["path"], first.json()["path"]);
    assert_eq!(kb.entry_files().len(), 1, "{:?}", kb.entry_files());
    let other = send(pdf("pdflatex-4-pages.pdf")).await;
    assert_eq!(other.status, 422, "{}", other.text());
    assert_eq!(other.json()["error"]["code"], "idempotency_key_reused");
}

#[test]
fn kb_capture_file_keeps_the_file_and_files_its_text() {
    let root = tempfile::tempdir().unwrap();
    let vault = root.path().join("vault");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_kb"))
            .env_remove("OPENAI_API_KEY")
            .env_remove("KB_DIR")
            .arg("--kb-dir")
            .arg(&vault)
            .args(args)
            .output()
            .unwrap()
    };
    let file = pdfs().join("pdflatex-4-pages.pdf");
    let output = run(&["capture", "--file", file.to_str().unwrap(), "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let data: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let attachment = data["attachment"].as_str().unwrap();
    assert_eq!(std::fs::read(vault.join(attachment)).unwrap(), std::fs::read(&file).unwrap());
    let note = std::fs::read_to_string(vault.join(data["path"].as_str().unwrap())).unwrap();
    assert!(note.contains("Huardest gefburn"), "{note}");
    let broken = run(&["capture", "--file", pdfs().join("truncated-pdflatex.pdf").to_str().unwrap()]);
    assert_eq!(broken.status.code(), Some(2), "{}", String::from_utf8_lossy(&broken.stderr));
    let missing = run(&["capture", "--file", "/nowhere/x.pdf"]);
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(kept_files(&vault).0.len(), 1, "only the good file is kept");
}

#[tokio::test]
async fn a_kept_file_follows_the_notes_that_link_it() {
    let kb = KbServer::start(&[]).await;
    let bytes = pdf("002-trivial-libre-office-writer.pdf");
    let send = || {
        kb.request(
            "POST",
            "/api/files?name=trivial.pdf",
            &[("Content-Type", "application/pdf")],
            Some(&bytes),
        )
    };
    let first = send().await.json();
    let second = send().await.json();
    let attachment = first["attachment"].as_str().unwrap().to_string();
    assert_eq!(second["attachment"], attachment.as_str(), "the same bytes are one kept file");
    let (one, two) = (first["path"].as_str().unwrap(), second["path"].as_str().unwrap());
    assert_ne!(one, two);
    let kept = kb.vault().join(&attachment);
    let trashed = kb.vault().join(".kb/trash").join(&attachment);

    // Another note still links it: it stays.
    assert_eq!(kb.delete(&format!("/api/entries/{}", url_path(one))).await.status, 200);
    assert!(kept.is_file() && !trashed.exists(), "still linked by {two}");
    // The last note that links it goes: so does the file, to the trash, recoverable.
    assert_eq!(kb.delete(&format!("/api/entries/{}", url_path(two))).await.status, 200);
    assert!(!kept.exists(), "no note links it");
    assert_eq!(std::fs::read(&trashed).unwrap(), bytes, "kept in .kb/trash as it was");
    // Undo brings the note back, and the file with it.
    let undone = kb.post("/api/undo", &serde_json::json!({})).await;
    assert_eq!(undone.status, 200, "{}", undone.text());
    assert!(kb.vault().join(two).is_file());
    assert_eq!(std::fs::read(&kept).unwrap(), bytes, "the file came back with its note");
    assert!(!trashed.exists());
}

#[tokio::test]
async fn a_kept_file_a_note_just_written_elsewhere_links_stays() {
    let kb = KbServer::start(&[]).await;
    let bytes = pdf("002-trivial-libre-office-writer.pdf");
    let filed = kb
        .request("POST", "/api/files?name=plan.pdf", &[("Content-Type", "application/pdf")], Some(&bytes))
        .await
        .json();
    let attachment = filed["attachment"].as_str().unwrap().to_string();
    // Another program writes a note linking the file, and the upload's note is deleted at
    // once, before this kb serve may have seen that note.
    std::fs::create_dir_all(kb.vault().join("ideas")).unwrap();
    std::fs::write(kb.vault().join("ideas/plans.md"), format!("# Plans\n\nSee [the plan]({attachment}).\n"))
        .unwrap();
    let path = filed["path"].as_str().unwrap();
    assert_eq!(kb.delete(&format!("/api/entries/{}", url_path(path))).await.status, 200);
    assert!(kb.vault().join(&attachment).is_file(), "still linked by ideas/plans.md");
}

#[tokio::test]
async fn a_file_named_like_a_person_keeps_names_unambiguous_and_is_never_a_person() {
    let kb = KbServer::start(&[]).await;
    let priya = kb
        .post("/api/capture", &serde_json::json!({"text": "[person:Priya] met at the robotics meetup"}))
        .await;
    assert_eq!(priya.status, 200, "{}", priya.text());
    let bytes = pdf("pdflatex-4-pages.pdf");
    let sent = |target: &'static str| {
        let bytes = bytes.clone();
        let kb = &kb;
        async move { kb.request("POST", target, &[("Content-Type", "application/pdf")], Some(&bytes)).await }
    };
    // Asked to be a person, a file is refused and nothing is kept.
    let refused = sent("/api/files?name=cv.pdf&hints=%5Bperson%3ASam%5D").await;
    assert_eq!(refused.status, 400, "{}", refused.text());
    assert!(refused.text().contains("never as a person"), "{}", refused.text());
    assert_eq!(kept_files(&kb.vault()).0.len(), 0, "nothing kept");
    // Named like the person, the file's note says what it is, and Priya stays one name.
    let filed = sent("/api/files?name=Priya.pdf").await;
    assert_eq!(filed.status, 200, "{}", filed.text());
    assert_eq!(filed.json()["name"], "Priya (file)", "{}", filed.text());
    let again = sent("/api/files?name=priya.pdf&hints=%5Bidea%5D").await.json();
    assert_eq!(again["name"], "priya (file 2)", "{again}");
    let person = kb.get("/api/entries/Priya").await;
    assert_eq!(person.status, 200, "the person's name still leads to her: {}", person.text());
    assert!(person.text().contains("\"people/priya.md\""), "{}", person.text());
}
