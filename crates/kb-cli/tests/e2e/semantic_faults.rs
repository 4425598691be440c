//! Search by meaning when the embedding server misbehaves, through the real `kb` binary
//! and the fake OpenAI-compatible server: a server that hangs costs one search its own
//! short deadline and then is left alone for a pause; every process counts embedding
//! coverage alike; another model behind the same name gets vectors of its own; failures
//! are worded as the embedding server's.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use kb_llm::testing::{FakeOpenAi, FakeReply};
use serde_json::Value;

use crate::common::{self, KbServer};

/// The dimension of the fake server's word vectors.
const DIMENSION: usize = 256;
/// How long embedding may take to catch up in a test.
const CATCH_UP: Duration = Duration::from_secs(60);

/// A few entries a person has, written before kb starts.
fn prepare(vault: &Path) {
    for category in common::CATEGORIES {
        std::fs::create_dir_all(vault.join(category)).unwrap();
    }
    let files = [
        (
            "people/anna.md",
            "---\nname: Anna\none_liner: My sister, lives in Lyon\n---\nStarted a new job at the hospital.\n",
        ),
        ("inbox/sam.md", "---\nname: Sam\n---\nSam still hasn't paid me back for the concert tickets.\n"),
        ("admin/passport.md", "---\nname: Renew passport\n---\nBook the appointment at the town hall.\n"),
        ("people/priya.md", "---\nname: Priya\n---\nMet at the robotics meetup; she builds drones.\n"),
        ("ideas/garden.md", "---\nname: Garden\n---\nNative flowers and bees along a fence.\n"),
    ];
    for (path, text) in files {
        std::fs::write(vault.join(path), text).unwrap();
    }
}

/// The environment of a kb process embedding with `server`, and `extra`.
fn env<'a>(server: &'a str, extra: &[(&'static str, &'a str)]) -> Vec<(&'static str, &'a str)> {
    let mut env = vec![("KB_EMBEDDINGS_MODEL", "fake-embed"), ("KB_EMBEDDINGS_BASE_URL", server)];
    env.extend_from_slice(extra);
    env
}

/// Waits until `/healthz` says `embedded` of `total` entries are embedded; its `embeddings`.
async fn coverage_reaches(kb: &KbServer, embedded: u64, total: u64) -> Value {
    let began = Instant::now();
    loop {
        let embeddings = kb.get("/healthz").await.expect(200)["embeddings"].clone();
        if embeddings["embedded"] == embedded && embeddings["total"] == total {
            return embeddings;
        }
        assert!(began.elapsed() < CATCH_UP, "coverage stays {embeddings}\n{}", kb.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn search(kb: &KbServer, query: &str, mode: &str) -> Value {
    kb.get(&format!("/api/search?q={}&mode={mode}", common::query_value(query))).await.expect(200)
}

fn paths(found: &Value) -> Vec<String> {
    found["entries"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap().to_string()).collect()
}

/// Runs `kb --kb-dir VAULT ARGS… --json` in a process of its own, with `env`.
fn run_kb(vault: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
    for var in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "KB_MODEL", "KB_DIR", "DATABASE_URL", "KB_NO_SERVER"] {
        command.env_remove(var);
    }
    command.env("RUST_LOG", "warn").envs(env.iter().copied()).arg("--kb-dir").arg(vault).args(args);
    command.arg("--json").output().unwrap()
}

/// The JSON a successful command printed.
fn printed(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test]
async fn a_hung_embedding_server_costs_one_search_its_deadline_then_searches_skip_it_for_a_pause() {
    let server = FakeOpenAi::start().await.unwrap();
    server.answer_embeddings(DIMENSION);
    let base = server.base_url();
    let settings = [("KB_EMBEDDINGS_QUERY_TIMEOUT_MS", "1000"), ("KB_EMBEDDINGS_COOLDOWN_SECS", "4")];
    let kb = KbServer::start_with_vault(&env(&base, &settings), prepare).await;
    coverage_reaches(&kb, 5, 5).await;
    // The cut's calibrating queries follow the entries: the faults below are for searches.
    crate::semantic::calibrated(&kb).await;

    // The server hangs: the search waits its query's deadline (1 s here, not the 30 s of
    // a request) and answers by words, saying why.
    server.push_embeddings(FakeReply::Hang);
    let asked = server.embedding_requests();
    let began = Instant::now();
    let found = search(&kb, "passport appointment", "hybrid").await;
    assert!(began.elapsed() < Duration::from_secs(10), "the search waited {:?}", began.elapsed());
    assert_eq!(
        (found["mode"].as_str(), paths(&found)),
        (Some("keyword"), vec!["admin/passport.md".to_string()])
    );
    let notice = found["notice"].as_str().unwrap();
    assert!(notice.contains("the embedding server did not answer within 1 s"), "{notice}");
    assert!(
        notice.contains("KB_EMBEDDINGS_QUERY_TIMEOUT_MS") && !notice.contains("language model"),
        "{notice}"
    );

    // During the pause searches do not ask the server: they answer by words at once.
    for query in ["renew passport", "town hall", "concert tickets"] {
        let found = search(&kb, query, "hybrid").await;
        assert_eq!(found["mode"], "keyword", "{found}");
        assert!(found["notice"].as_str().unwrap().contains("KB_EMBEDDINGS_COOLDOWN_SECS"), "{found}");
    }
    let refused = kb.get("/api/search?q=concert+tickets&mode=semantic").await;
    assert_eq!(refused.status, 503, "{}", refused.text());
    let message = refused.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("embedding server") && message.contains("a search by words"), "{message}");
    assert!(!message.contains("these hits") && !message.contains("language model"), "{message}");
    assert_eq!(server.embedding_requests(), asked + 1, "searches in the pause asked the server");

    // After the pause one search asks again, and meaning is back.
    let began = Instant::now();
    let found = loop {
        // Sam's note shares only words search leaves out ("me", "for", "the"): by meaning
        // only (a query not asked before, so not one the embedder keeps).
        let found = search(&kb, "repay me for the", "hybrid").await;
        if found["mode"] == "hybrid" {
            break found;
        }
        assert!(began.elapsed() < Duration::from_secs(30), "meaning never came back: {found}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(paths(&found)[0], "inbox/sam.md", "{found}");
    assert_eq!(found["entries"][0]["matchedBy"], "semantic");
    assert!(found.get("notice").is_none_or(Value::is_null), "{found}");
}

#[tokio::test]
async fn every_process_counts_the_entries_embedded_alike() {
    let server = FakeOpenAi::start().await.unwrap();
    server.answer_embeddings(DIMENSION);
    let base = server.base_url();
    let env = env(&base, &[]);
    let kb = KbServer::start_with_vault(&env, prepare).await;
    coverage_reaches(&kb, 5, 5).await;
    crate::semantic::calibrated(&kb).await;
    // The server fails from now on; two entries change: their vectors are of the old text.
    for _ in 0..100 {
        server.push_embeddings(FakeReply::error(503, "server_error", "overloaded"));
    }
    for (path, text) in [("people/anna.md", "Anna moved to Porto."), ("inbox/sam.md", "Sam paid me back.")] {
        std::fs::write(kb.vault().join(path), format!("---\nname: x\n---\n{text}\n")).unwrap();
    }
    let owner = coverage_reaches(&kb, 3, 5).await;
    assert_eq!(owner["queued"], 2);
    // Another process, reading the vector file itself, counts the same.
    let status = printed(&run_kb(&kb.vault(), &["status"], &env));
    assert_eq!(status["embeddings"], owner, "kb status");
    let reindex = printed(&run_kb(&kb.vault(), &["reindex"], &env));
    assert_eq!(reindex["embeddings"], owner, "kb reindex");
}

#[tokio::test]
async fn another_model_behind_the_same_name_gets_vectors_of_its_own() {
    let first = FakeOpenAi::start().await.unwrap();
    first.answer_embeddings(DIMENSION);
    let first_base = first.base_url();
    let root = tempfile::tempdir().unwrap();
    let vault = root.path().join("vault");
    prepare(&vault);
    let kb = KbServer::start_on(&vault, &env(&first_base, &[])).await;
    coverage_reaches(&kb, 5, 5).await;
    drop(kb);

    // Another server answers vectors of the same size under the same model name.
    let second = FakeOpenAi::start().await.unwrap();
    second.answer_embeddings_as(DIMENSION, 7);
    let second_base = second.base_url();
    let kb = KbServer::start_on(&vault, &env(&second_base, &[])).await;
    let began = Instant::now();
    while second.embedded_texts().iter().filter(|t| t.contains('\n')).count() < 5 {
        assert!(
            began.elapsed() < CATCH_UP,
            "the entries were not embedded by the new server: {:?}\n{}",
            second.embedded_texts(),
            kb.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    coverage_reaches(&kb, 5, 5).await;
    assert!(kb.log().contains("embedding every entry again"), "{}", kb.log());
    let found = search(&kb, "drones robotics", "semantic").await;
    assert_eq!(paths(&found).first().map(String::as_str), Some("people/priya.md"), "{found}");
}

#[test]
fn a_reindex_that_cannot_reach_the_embedding_server_says_so() {
    let base = format!("http://127.0.0.1:{}/v1", common::free_port());
    let root = tempfile::tempdir().unwrap();
    prepare(root.path());
    let output = run_kb(root.path(), &["reindex"], &env(&base, &[]));
    assert_ne!(output.status.code(), Some(0));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("the embedding server is unavailable"), "{said}");
    assert!(said.contains("KB_EMBEDDINGS_BASE_URL") && !said.contains("language model"), "{said}");
}

#[tokio::test]
async fn a_note_captured_while_the_cut_is_measured_is_embedded_without_waiting_for_it() {
    let server = FakeOpenAi::start().await.unwrap();
    server.answer_embeddings(DIMENSION);
    // An empty vault: the probe, then at once the first query that measures the cut, which
    // the server never answers (the document deadline is the default 30 s).
    let probe: Vec<f32> = (0..DIMENSION).map(|i| if i == 0 { 1.0 } else { 0.0 }).collect();
    server.push_embeddings(FakeReply::json(&serde_json::json!({
        "object": "list", "data": [{"object": "embedding", "index": 0, "embedding": probe}],
        "model": "fake-embed", "usage": {"prompt_tokens": 1, "total_tokens": 1},
    })));
    server.push_embeddings(FakeReply::Hang);
    let kb = KbServer::start_with_vault(&env(&server.base_url(), &[]), |vault| {
        for category in common::CATEGORIES {
            std::fs::create_dir_all(vault.join(category)).unwrap();
        }
    })
    .await;
    let began = Instant::now();
    while server.embedding_requests() < 2 {
        assert!(began.elapsed() < CATCH_UP, "the cut was not measured: {:?}", server.embedded_texts());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let hung = server.embedded_texts().last().cloned().unwrap();
    assert!(kb_search::UNRELATED_QUERIES.iter().any(|q| hung.contains(q)), "{hung}");

    kb.post("/api/capture", &serde_json::json!({"text": "idea: a tool library for the street"}))
        .await
        .expect(200);
    let captured = Instant::now();
    coverage_reaches(&kb, 1, 1).await;
    assert!(captured.elapsed() < Duration::from_secs(10), "embedded after {:?}", captured.elapsed());
    // Then the measure is taken all the same.
    crate::semantic::calibrated(&kb).await;
}
