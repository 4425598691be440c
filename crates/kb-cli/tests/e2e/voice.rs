//! Voice notes: `POST /api/voice` and `kb capture --audio`, transcribed by the fake
//! OpenAI-compatible server's `/v1/audio/transcriptions`; without a transcription server,
//! or when it fails, the recording is kept all the same.

use std::process::Command;

use kb_llm::testing::{FakeOpenAi, FakeReply};

use crate::common::{KbServer, url_path};

const SAID: &str = "Remember to call the plumber about the leaking kitchen tap on Friday morning";

/// A second of silence as a WAV file: real audio bytes, whatever the server makes of them.
fn recording() -> Vec<u8> {
    let samples = 16_000u32;
    let mut wav = Vec::new();
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples * 2).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes());
    wav.extend_from_slice(&16_000u32.to_le_bytes());
    wav.extend_from_slice(&32_000u32.to_le_bytes());
    wav.extend_from_slice(&2u16.to_le_bytes());
    wav.extend_from_slice(&16u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(samples * 2).to_le_bytes());
    wav.extend(std::iter::repeat_n(0u8, samples as usize * 2));
    wav
}

#[tokio::test]
async fn a_voice_note_is_kept_and_its_transcript_filed() {
    let server = FakeOpenAi::start().await.unwrap();
    server.answer_transcriptions(SAID);
    let base = server.base_url();
    let kb = KbServer::start(&[
        ("KB_TRANSCRIBE_MODEL", "whisper-1"),
        ("KB_TRANSCRIBE_BASE_URL", &base),
        ("KB_TRANSCRIBE_API_KEY", "voice-key"),
    ])
    .await;
    let audio = recording();
    let reply =
        kb.request("POST", "/api/voice?name=tap.wav", &[("Content-Type", "audio/wav")], Some(&audio)).await;
    assert_eq!(reply.status, 200, "{}\n{}", reply.text(), kb.log());
    let data = reply.json();
    assert_eq!(data["transcribed"], true, "{data}");
    let attachment = data["attachment"].as_str().unwrap();
    assert_eq!(
        std::fs::read(kb.vault().join(attachment)).unwrap(),
        audio,
        "the recording is kept as it came"
    );
    let path = data["path"].as_str().unwrap();
    let note = std::fs::read_to_string(kb.vault().join(path)).unwrap();
    assert!(note.contains(SAID) && note.contains(&format!("![[{attachment}]]")), "{note}");
    assert!(note.contains("source: voice"), "{note}");
    let history = kb.get(&format!("/api/entries/{}/history", url_path(path))).await.json();
    assert_eq!(history["revisions"][0]["source"], "voice", "{history}");
    let sent = server.transcription_requests();
    assert_eq!(sent.len(), 1);
    assert!(
        sent[0].body.contains("whisper-1") && sent[0].body.contains("tap.wav"),
        "{}",
        &sent[0].body[..300]
    );
    assert!(sent[0].body.contains("RIFF"), "the audio itself was sent");
    assert_eq!(sent[0].header("authorization"), Some("Bearer voice-key"));
    let found = kb.get("/api/search?q=plumber").await.json();
    assert_eq!(found["entries"][0]["path"], path, "{found}");
}

#[tokio::test]
async fn without_a_transcription_the_recording_is_kept_and_the_answer_says_why() {
    let kb = KbServer::start(&[]).await;
    let reply = kb
        .request(
            "POST",
            "/api/voice?name=memo",
            &[("Content-Type", "audio/webm;codecs=opus")],
            Some(&recording()),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let data = reply.json();
    assert_eq!(data["transcribed"], false);
    assert!(data["problem"].as_str().unwrap().contains("KB_TRANSCRIBE_MODEL"), "{data}");
    assert_eq!(data["category"], "inbox", "unheard, it waits in the inbox: {data}");
    let attachment = data["attachment"].as_str().unwrap();
    assert!(attachment.ends_with("-memo.webm"), "{attachment}");
    assert!(kb.vault().join(attachment).is_file());

    let server = FakeOpenAi::start().await.unwrap();
    server.answer_transcriptions_with(FakeReply::error(503, "server_error", "overloaded"));
    let base = server.base_url();
    let failing =
        KbServer::start(&[("KB_TRANSCRIBE_MODEL", "whisper-1"), ("KB_TRANSCRIBE_BASE_URL", &base)]).await;
    let reply = failing
        .request("POST", "/api/voice?name=memo.wav", &[("Content-Type", "audio/wav")], Some(&recording()))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json()["transcribed"], false);
    assert!(reply.json()["problem"].as_str().unwrap().contains("transcription server"), "{}", reply.text());
    assert!(failing.vault().join(reply.json()["attachment"].as_str().unwrap()).is_file());
}

// The fake server answers on the runtime's other thread while the command runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kb_capture_audio_files_the_transcript() {
    let server = FakeOpenAi::start().await.unwrap();
    server.answer_transcriptions(SAID);
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("tap.wav");
    std::fs::write(&file, recording()).unwrap();
    let vault = root.path().join("vault");
    let output = Command::new(env!("CARGO_BIN_EXE_kb"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("KB_DIR")
        .env("KB_TRANSCRIBE_MODEL", "whisper-1")
        .env("KB_TRANSCRIBE_BASE_URL", server.base_url())
        .arg("--kb-dir")
        .arg(&vault)
        .args(["capture", "--audio"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(printed.contains("the file is kept as attachments/"), "{printed}");
    let notes: Vec<_> =
        walk(&vault).into_iter().filter(|p| p.ends_with(".md") && !p.ends_with("index.md")).collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(std::fs::read_to_string(&notes[0]).unwrap().contains(SAID));
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "attachments" {
            continue;
        }
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path.to_string_lossy().into_owned());
        }
    }
    found
}
