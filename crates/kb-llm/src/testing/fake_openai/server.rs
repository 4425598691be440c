//! [`FakeOpenAi`], the scripted server, and the [`RecordedRequest`]s it keeps.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use kb_domain::sync::lock;
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

use super::http::{as_stream, read_request, write_reply};
use super::reply::FakeReply;

/// A request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `POST`, …
    pub method: String,
    /// The path, such as `/v1/chat/completions`.
    pub path: String,
    /// The headers, names in lowercase.
    pub headers: Vec<(String, String)>,
    /// The body as text.
    pub body: String,
    /// When it arrived in full.
    pub received_at: Instant,
}

impl RecordedRequest {
    /// The body parsed as JSON (`Value::Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    /// A header's value, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }
}

/// Picks requests out by their JSON body.
type RequestTest = fn(&Value) -> bool;

/// The replies still to give, and the requests received.
#[derive(Debug, Default)]
struct Script {
    replies: VecDeque<FakeReply>,
    standing: Vec<(RequestTest, FakeReply)>,
    requests: Vec<RecordedRequest>,
    /// The dimension of the word vectors `/v1/embeddings` answers, once asked to.
    embedding_dimension: Option<usize>,
    /// The seed of their model (see [`super::embeddings`]).
    embedding_seed: u64,
    /// Replies for embeddings requests, before word vectors.
    embedding_replies: VecDeque<FakeReply>,
    /// What `/v1/audio/transcriptions` answers, once asked to.
    transcript: Option<FakeReply>,
}

impl Script {
    /// The answer to `request`: a standing reply whose test its body passes, else the next queued.
    fn reply_to(&mut self, request: &RecordedRequest) -> Option<FakeReply> {
        if let Some(reply) = &self.transcript
            && request.path.ends_with("/audio/transcriptions")
        {
            return Some(reply.clone());
        }
        if let Some(dimension) = self.embedding_dimension
            && request.path.ends_with("/embeddings")
        {
            return Some(self.embedding_replies.pop_front().unwrap_or_else(|| {
                super::embeddings::answer(&request.json(), dimension, self.embedding_seed)
            }));
        }
        if !self.standing.is_empty() {
            let body = request.json();
            if let Some((_, reply)) = self.standing.iter().find(|(matches, _)| matches(&body)) {
                return Some(reply.clone());
            }
        }
        self.replies.pop_front()
    }
}

/// The scripted server; it stops when dropped.
#[derive(Debug)]
pub struct FakeOpenAi {
    addr: SocketAddr,
    script: Arc<Mutex<Script>>,
    task: JoinHandle<()>,
}

impl FakeOpenAi {
    /// Starts a server on a free port of 127.0.0.1.
    pub async fn start() -> std::io::Result<FakeOpenAi> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let script = Arc::new(Mutex::new(Script::default()));
        let task = tokio::spawn(serve(listener, Arc::clone(&script)));
        Ok(FakeOpenAi { addr, script, task })
    }

    /// The API root to configure the adapter with (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Queues the answer to a coming request. With nothing queued the server answers 500.
    pub fn push(&self, reply: FakeReply) {
        lock(&self.script).replies.push_back(reply);
    }

    /// Answers every coming request whose JSON body passes `matches` with `reply`, however
    /// often, without taking from the queue (summary calls whose timing a test leaves open).
    pub fn always_answer(&self, matches: RequestTest, reply: FakeReply) {
        lock(&self.script).standing.push((matches, reply));
    }

    /// From now on answers `/v1/embeddings` apart from chat: with the replies
    /// [`FakeOpenAi::push_embeddings`] queued, else with word vectors of `dimension`
    /// numbers (see [`super::embeddings`]).
    pub fn answer_embeddings(&self, dimension: usize) {
        lock(&self.script).embedding_dimension = Some(dimension);
    }

    /// [`FakeOpenAi::answer_embeddings`] as another model of the same size would: the same
    /// texts get other vectors (another `seed`; 0 is the model of `answer_embeddings`).
    pub fn answer_embeddings_as(&self, dimension: usize, seed: u64) {
        let mut script = lock(&self.script);
        script.embedding_dimension = Some(dimension);
        script.embedding_seed = seed;
    }

    /// From now on answers `/v1/audio/transcriptions` (a multipart upload of the audio and
    /// the model) with `text` as the transcript, whatever the audio.
    pub fn answer_transcriptions(&self, text: &str) {
        let reply = FakeReply::json(&serde_json::json!({ "text": text }));
        lock(&self.script).transcript = Some(reply);
    }

    /// From now on answers `/v1/audio/transcriptions` with `reply` (a fault, say).
    pub fn answer_transcriptions_with(&self, reply: FakeReply) {
        lock(&self.script).transcript = Some(reply);
    }

    /// The `/v1/audio/transcriptions` requests received so far (their bodies as text).
    pub fn transcription_requests(&self) -> Vec<RecordedRequest> {
        lock(&self.script)
            .requests
            .iter()
            .filter(|r| r.path.ends_with("/audio/transcriptions"))
            .cloned()
            .collect()
    }

    /// How many `/v1/embeddings` requests arrived so far.
    pub fn embedding_requests(&self) -> usize {
        lock(&self.script).requests.iter().filter(|r| r.path.ends_with("/embeddings")).count()
    }

    /// Queues the answer to a coming embeddings request (a fault, say).
    pub fn push_embeddings(&self, reply: FakeReply) {
        lock(&self.script).embedding_replies.push_back(reply);
    }

    /// The texts sent to `/v1/embeddings` so far, in order.
    pub fn embedded_texts(&self) -> Vec<String> {
        lock(&self.script)
            .requests
            .iter()
            .filter(|r| r.path.ends_with("/embeddings"))
            .flat_map(|r| match r.json()["input"].clone() {
                Value::String(text) => vec![text],
                Value::Array(items) => {
                    items.into_iter().filter_map(|v| v.as_str().map(str::to_string)).collect()
                }
                _ => Vec::new(),
            })
            .collect()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.script).requests.clone()
    }

    /// Drops the scripted replies still unused (a property test's next case starts clean).
    pub fn clear(&self) {
        lock(&self.script).replies.clear();
    }

    /// How many scripted replies are still unused.
    pub fn pending(&self) -> usize {
        lock(&self.script).replies.len()
    }
}

impl Drop for FakeOpenAi {
    fn drop(&mut self) {
        // Dropping the accept loop drops its JoinSet, which aborts every open connection.
        self.task.abort();
    }
}

/// Accepts connections until the server is dropped, answering each on a task of its own.
async fn serve(listener: TcpListener, script: Arc<Mutex<Script>>) {
    let mut connections = JoinSet::new();
    while let Ok((stream, _)) = listener.accept().await {
        connections.spawn(answer(stream, Arc::clone(&script)));
        // Reap finished connections so the set does not grow without bound.
        while connections.try_join_next().is_some() {}
    }
}

/// Answers one connection with the reply its request is scripted to get.
async fn answer(mut stream: TcpStream, script: Arc<Mutex<Script>>) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    let asks_to_stream = request.json()["stream"] == true;
    let reply = {
        let mut script = lock(&script);
        let reply = script.reply_to(&request);
        script.requests.push(request);
        reply
    };
    let reply =
        reply.unwrap_or_else(|| FakeReply::error(500, "server_error", "fake server: no scripted reply"));
    let reply = if asks_to_stream { as_stream(reply) } else { reply };
    write_reply(&mut stream, reply).await;
}
