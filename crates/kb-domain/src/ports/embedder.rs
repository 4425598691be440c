//! The embedding port: [`Embedder`] turns texts into vectors, so that search can find
//! entries by what they mean as well as by their words, and [`EmbeddingError`], how it
//! fails: worded as the embedding server's, never as the chat model's, each naming the
//! setting to look at.

use async_trait::async_trait;

use crate::cause::SharedCause;

/// What a text to embed is: models such as e5 and nomic embed a question and a passage
/// differently (each with its own prefix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextRole {
    /// A person's search.
    Query,
    /// A part of an entry.
    Document,
    /// A query kb sends itself to measure the vault (the cut of matches by meaning):
    /// embedded as a search's query is, but given a document's time, and its failure
    /// pauses no search.
    Calibration,
}

/// A model that embeds texts (an OpenAI-compatible `/v1/embeddings` server).
#[async_trait]
pub trait Embedder: Send + Sync {
    /// The model's name, as sent to the server. Vectors of another model are never
    /// compared with its vectors.
    fn model(&self) -> &str;

    /// What sets this embedder's document vectors apart besides the model: its document
    /// prefix. Vectors kept for one identity are not reused under another.
    fn identity(&self) -> String {
        self.model().to_string()
    }

    /// One vector per text, in order, all of one dimension. A server that answers
    /// another number of vectors, vectors of differing lengths, no numbers, numbers that
    /// are not finite or a vector of zeros is an [`EmbeddingError::Malformed`] failure.
    async fn embed(&self, texts: &[String], role: TextRole) -> Result<Vec<Vec<f32>>, EmbeddingError>;
}

/// How embedding failed. Where the failure came from an error underneath (the HTTP
/// client's, the JSON parser's), that error is kept as the `source()`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmbeddingError {
    /// The server could not be reached or answered 5xx.
    #[error("the embedding server is unavailable: {detail} (is it running at KB_EMBEDDINGS_BASE_URL?)")]
    Unavailable {
        /// What went wrong, in a few words.
        detail: String,
        /// The error underneath, when there is one.
        #[source]
        cause: Option<SharedCause>,
    },
    /// Too many requests, after retries (429).
    #[error("the embedding server is rate limited{}", retry_after_secs.map(|s| format!(", retry after {s}s")).unwrap_or_default())]
    RateLimited {
        /// Seconds the server asked to wait, when it said.
        retry_after_secs: Option<u64>,
    },
    /// No answer in time.
    #[error("the embedding server did not answer within {} ({setting})", duration_words(*millis))]
    Timeout {
        /// The time allowed, in milliseconds.
        millis: u64,
        /// The setting that allows it.
        setting: &'static str,
    },
    /// An answer that cannot be used.
    #[error("the embedding server gave an answer that cannot be used: {detail}")]
    Malformed {
        /// What was wrong with it.
        detail: String,
        /// The error underneath, when there is one.
        #[source]
        cause: Option<SharedCause>,
    },
    /// The request was refused: bad key, unknown model, bad request.
    #[error(
        "the embedding server refused the request: {detail} (check KB_EMBEDDINGS_MODEL and KB_EMBEDDINGS_API_KEY)"
    )]
    Refused {
        /// Why, as the server said it.
        detail: String,
        /// The error underneath, when there is one.
        #[source]
        cause: Option<SharedCause>,
    },
    /// Not asked: the server failed a moment ago, and searches do without it for a while.
    #[error(
        "the embedding server failed a moment ago; it is asked again in {retry_in_secs} s (KB_EMBEDDINGS_COOLDOWN_SECS)"
    )]
    Paused {
        /// Seconds until a search asks it again.
        retry_in_secs: u64,
    },
}

impl EmbeddingError {
    /// The server cannot be reached or failed on its side.
    pub fn unavailable(detail: impl Into<String>) -> EmbeddingError {
        EmbeddingError::Unavailable { detail: detail.into(), cause: None }
    }

    /// The server's answer cannot be used.
    pub fn malformed(detail: impl Into<String>) -> EmbeddingError {
        EmbeddingError::Malformed { detail: detail.into(), cause: None }
    }
}

/// `millis` in words: whole seconds as seconds, else milliseconds.
fn duration_words(millis: u64) -> String {
    if millis.is_multiple_of(1000) { format!("{} s", millis / 1000) } else { format!("{millis} ms") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_the_embedding_servers_and_name_a_setting() {
        let failures = [
            EmbeddingError::unavailable("connection refused"),
            EmbeddingError::RateLimited { retry_after_secs: Some(3) },
            EmbeddingError::Timeout { millis: 2000, setting: "KB_EMBEDDINGS_QUERY_TIMEOUT_MS" },
            EmbeddingError::malformed("a vector of zeros"),
            EmbeddingError::Refused { detail: "unknown model".into(), cause: None },
            EmbeddingError::Paused { retry_in_secs: 12 },
        ];
        for failure in failures {
            let text = failure.to_string();
            assert!(text.starts_with("the embedding server "), "{text}");
            assert!(!text.contains("language model"), "{text}");
            let names_a_setting = text.contains("KB_EMBEDDINGS_")
                || matches!(failure, EmbeddingError::RateLimited { .. } | EmbeddingError::Malformed { .. });
            assert!(names_a_setting, "{text}");
        }
        assert_eq!(
            EmbeddingError::Timeout { millis: 2000, setting: "KB_EMBEDDINGS_QUERY_TIMEOUT_MS" }.to_string(),
            "the embedding server did not answer within 2 s (KB_EMBEDDINGS_QUERY_TIMEOUT_MS)"
        );
        assert!(EmbeddingError::Timeout { millis: 1500, setting: "X" }.to_string().contains("1500 ms"));
    }
}
