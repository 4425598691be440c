//! The embedding port: [`Embedder`] turns texts into vectors, so that search can find
//! entries by what they mean as well as by their words.

use async_trait::async_trait;

use crate::llm::LlmError;

/// What a text to embed is: models such as e5 and nomic embed a question and a passage
/// differently (each with its own prefix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextRole {
    /// A person's search.
    Query,
    /// A part of an entry.
    Document,
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
    /// another number of vectors, vectors of differing lengths or no numbers is a
    /// [`LlmError::Malformed`] failure.
    async fn embed(&self, texts: &[String], role: TextRole) -> Result<Vec<Vec<f32>>, LlmError>;
}
