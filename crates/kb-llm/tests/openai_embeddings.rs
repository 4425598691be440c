#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The embeddings adapter against the scripted server over real HTTP: what it sends (the
//! model, the prefixes, batches, the key only where it belongs), and which typed error
//! each fault becomes (429, a hang, the wrong number of vectors, a cut or garbled body).

use std::time::{Duration, Instant};

use kb_domain::{Embedder, EmbeddingError, TextRole};
use kb_llm::openai::{EmbeddingSettings, OpenAiEmbedder};
use kb_llm::testing::{FakeOpenAi, FakeReply};
use serde_json::json;

const DIMENSION: usize = 16;

fn settings(server: &FakeOpenAi) -> EmbeddingSettings {
    EmbeddingSettings {
        timeout: Duration::from_secs(5),
        retry_base_delay: Duration::from_millis(20),
        max_retry_delay: Duration::from_secs(1),
        ..EmbeddingSettings::new("test-embed", server.base_url())
    }
}

async fn start() -> (FakeOpenAi, EmbeddingSettings) {
    let server = FakeOpenAi::start().await.unwrap();
    server.answer_embeddings(DIMENSION);
    let settings = settings(&server);
    (server, settings)
}

fn texts(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

#[tokio::test]
async fn sends_the_model_prefixes_and_batches_and_answers_in_order() {
    let (server, settings) = start().await;
    let embedder = OpenAiEmbedder::new(EmbeddingSettings {
        batch: 2,
        query_prefix: "query: ".into(),
        document_prefix: "passage: ".into(),
        ..settings
    })
    .unwrap();
    let vectors =
        embedder.embed(&texts(&["apple pie", "bank loan", "apple tart"]), TextRole::Document).await.unwrap();
    assert_eq!(vectors.len(), 3);
    assert!(vectors.iter().all(|v| v.len() == DIMENSION));
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    assert!(dot(&vectors[0], &vectors[2]) > dot(&vectors[0], &vectors[1]), "the answer's order is kept");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "three texts in batches of two");
    assert_eq!(requests[0].path, "/v1/embeddings");
    assert_eq!(requests[0].json()["model"], "test-embed");
    assert_eq!(server.embedded_texts(), ["passage: apple pie", "passage: bank loan", "passage: apple tart"]);
    assert_eq!(
        requests[0].header("authorization").map(|h| h.trim() == "Bearer"),
        Some(true),
        "no key is sent"
    );

    embedder.embed(&texts(&["pie"]), TextRole::Query).await.unwrap();
    assert_eq!(server.embedded_texts().last().unwrap(), "query: pie");
    embedder.embed(&texts(&["pie"]), TextRole::Query).await.unwrap();
    assert_eq!(server.requests().len(), 3, "a repeated query reuses its vector");
}

#[tokio::test]
async fn a_key_is_sent_when_configured() {
    let (server, settings) = start().await;
    let embedder =
        OpenAiEmbedder::new(EmbeddingSettings { api_key: Some("sk-embed".into()), ..settings }).unwrap();
    embedder.embed(&texts(&["x"]), TextRole::Document).await.unwrap();
    assert_eq!(server.requests()[0].header("authorization"), Some("Bearer sk-embed"));
}

#[tokio::test]
async fn a_rate_limit_is_retried_then_reported() {
    let (server, settings) = start().await;
    let embedder = OpenAiEmbedder::new(settings).unwrap();
    server.push_embeddings(FakeReply::rate_limited(None));
    assert_eq!(embedder.embed(&texts(&["x"]), TextRole::Document).await.unwrap().len(), 1);
    for _ in 0..3 {
        server.push_embeddings(FakeReply::rate_limited(Some(0)));
    }
    let error = embedder.embed(&texts(&["y"]), TextRole::Document).await.unwrap_err();
    assert!(matches!(error, EmbeddingError::RateLimited { .. }), "{error:?}");
}

#[tokio::test]
async fn a_hung_server_times_out() {
    let (server, settings) = start().await;
    let embedder =
        OpenAiEmbedder::new(EmbeddingSettings { timeout: Duration::from_secs(1), ..settings }).unwrap();
    server.push_embeddings(FakeReply::Hang);
    let started = Instant::now();
    let error = embedder.embed(&texts(&["x"]), TextRole::Document).await.unwrap_err();
    assert_eq!(error, EmbeddingError::Timeout { millis: 1000, setting: "KB_EMBEDDINGS_TIMEOUT_SECS" });
    assert_eq!(
        error.to_string(),
        "the embedding server did not answer within 1 s (KB_EMBEDDINGS_TIMEOUT_SECS)"
    );
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
}

#[tokio::test]
async fn wrong_shapes_and_garbage_are_malformed() {
    let (server, settings) = start().await;
    let embedder = OpenAiEmbedder::new(settings).unwrap();
    let vector =
        |index: u32, n: usize| json!({"object": "embedding", "index": index, "embedding": vec![0.5; n]});
    let list = |data: Vec<serde_json::Value>| json!({"object": "list", "data": data, "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1}});
    server.push_embeddings(FakeReply::json(&list(vec![vector(0, 4)])));
    server.push_embeddings(FakeReply::json(&list(vec![vector(0, 4), vector(1, 5)])));
    server.push_embeddings(FakeReply::raw(
        200,
        r#"{"object":"list","data":[{"object":"embedding","index":0,"embed"#,
    ));
    server.push_embeddings(FakeReply::raw(200, "<html>gateway</html>"));
    for case in ["one vector for two texts", "two lengths", "a cut body", "garbage"] {
        let error = embedder.embed(&texts(&["a", "b"]), TextRole::Document).await.unwrap_err();
        assert!(matches!(error, EmbeddingError::Malformed { .. }), "{case}: {error:?}");
    }
    server.push_embeddings(FakeReply::error(503, "server_error", "overloaded"));
    let error = embedder.embed(&texts(&["a"]), TextRole::Document).await.unwrap_err();
    assert!(matches!(error, EmbeddingError::Unavailable { .. }), "{error:?}");
}

#[tokio::test]
async fn an_unreachable_server_is_unavailable() {
    let server = FakeOpenAi::start().await.unwrap();
    let settings = settings(&server);
    drop(server);
    let embedder = OpenAiEmbedder::new(settings).unwrap();
    let error = embedder.embed(&texts(&["x"]), TextRole::Query).await.unwrap_err();
    assert!(matches!(error, EmbeddingError::Unavailable { .. }), "{error:?}");
}

#[tokio::test]
async fn zeros_infinities_and_nans_are_refused() {
    let (server, settings) = start().await;
    let embedder = OpenAiEmbedder::new(settings).unwrap();
    let list = |embedding: serde_json::Value| json!({"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": embedding}], "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1}});
    server.push_embeddings(FakeReply::json(&list(json!([0.0, 0.0, 0.0, 0.0]))));
    // JSON has no NaN or infinity: servers that send them write numbers too large for f32.
    server.push_embeddings(FakeReply::json(&list(json!([1e39, 0.5, 0.5, 0.5]))));
    server.push_embeddings(FakeReply::raw(
        200,
        list(json!([0.5, 0.5, 0.5, 0.5])).to_string().replace("0.5,", "NaN,"),
    ));
    for case in ["zeros", "infinite", "NaN"] {
        let error = embedder.embed(&texts(&["a"]), TextRole::Document).await.unwrap_err();
        assert!(matches!(error, EmbeddingError::Malformed { .. }), "{case}: {error:?}");
        assert!(error.to_string().starts_with("the embedding server"), "{case}: {error}");
    }
}

#[tokio::test]
async fn a_hung_server_costs_one_search_its_deadline_then_searches_skip_it_until_the_pause_ends() {
    let (server, settings) = start().await;
    let embedder = OpenAiEmbedder::new(EmbeddingSettings {
        timeout: Duration::from_secs(30),
        query_timeout: Duration::from_millis(300),
        cooldown: Duration::from_secs(2),
        ..settings
    })
    .unwrap();
    server.push_embeddings(FakeReply::Hang);
    let started = Instant::now();
    let error = embedder.embed(&texts(&["first"]), TextRole::Query).await.unwrap_err();
    assert_eq!(error, EmbeddingError::Timeout { millis: 300, setting: "KB_EMBEDDINGS_QUERY_TIMEOUT_MS" });
    assert!(started.elapsed() < Duration::from_secs(10), "the query's own deadline: {:?}", started.elapsed());
    for query in ["second", "third"] {
        let error = embedder.embed(&texts(&[query]), TextRole::Query).await.unwrap_err();
        assert!(matches!(error, EmbeddingError::Paused { .. }), "{error:?}");
        assert!(error.to_string().contains("KB_EMBEDDINGS_COOLDOWN_SECS"), "{error}");
    }
    assert_eq!(server.requests().len(), 1, "searches in the pause do not ask the server");
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let vectors = embedder.embed(&texts(&["fourth"]), TextRole::Query).await.unwrap();
    assert_eq!(vectors.len(), 1);
    assert_eq!(server.requests().len(), 2);
    embedder.embed(&texts(&["fifth"]), TextRole::Query).await.unwrap();
    assert_eq!(server.requests().len(), 3, "the server answers again: every search asks it");
}

#[tokio::test]
async fn a_calibrating_query_has_a_documents_time_and_its_failure_pauses_no_search() {
    let (server, settings) = start().await;
    let embedder = OpenAiEmbedder::new(EmbeddingSettings {
        timeout: Duration::from_secs(1),
        query_timeout: Duration::from_millis(100),
        cooldown: Duration::from_secs(30),
        ..settings
    })
    .unwrap();
    // Hung past a document's time: it fails, and the next search still asks the server.
    server.push_embeddings(FakeReply::Hang);
    let error = embedder.embed(&texts(&["origami"]), TextRole::Calibration).await.unwrap_err();
    assert!(
        matches!(error, EmbeddingError::Timeout { setting: "KB_EMBEDDINGS_TIMEOUT_SECS", .. }),
        "{error:?}"
    );
    embedder.embed(&texts(&["my passport"]), TextRole::Query).await.unwrap();
    assert_eq!(server.requests().len(), 2, "the search asked the server: nothing paused it");
}

#[tokio::test]
async fn calibrating_queries_are_kept_like_searches_and_a_long_query_is_cut() {
    let (server, settings) = start().await;
    let embedder = OpenAiEmbedder::new(settings).unwrap();
    // A calibrating query answered once is not asked again, nor is the same search.
    let first = embedder.embed(&texts(&["rules of cricket"]), TextRole::Calibration).await.unwrap();
    let again = embedder.embed(&texts(&["rules of cricket"]), TextRole::Calibration).await.unwrap();
    let search = embedder.embed(&texts(&["rules of cricket"]), TextRole::Query).await.unwrap();
    assert_eq!((&first, &again), (&search, &search));
    assert_eq!(server.embedding_requests(), 1);
    // A pasted page is searched by meaning from its first 1,000 characters.
    let page = "ä".repeat(50_000);
    embedder.embed(std::slice::from_ref(&page), TextRole::Query).await.unwrap();
    let sent = server.embedded_texts().last().cloned().unwrap();
    assert_eq!(sent.chars().count(), 1_000, "{}", sent.len());
    // Documents are sent whole (kb cuts them into parts itself).
    embedder.embed(std::slice::from_ref(&page), TextRole::Document).await.unwrap();
    assert_eq!(server.embedded_texts().last().map(|t| t.chars().count()), Some(50_000));
}
