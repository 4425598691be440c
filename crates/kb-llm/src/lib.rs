//! kb-llm: the language model adapters of kb-domain's [`kb_domain::ChatModel`] and
//! [`kb_domain::Embedder`] ports —
//! [`openai`], any OpenAI-compatible server over async-openai, and [`offline`], the
//! deterministic rules kb answers with when no model is configured. With the `test-util`
//! feature, `testing` holds `FakeOpenAi`, a scripted OpenAI-compatible server for tests.
//!
//! Depends only on kb-domain; kb-core chooses and wires the adapter.

pub mod offline;
pub mod openai;
#[cfg(feature = "test-util")]
pub mod testing;

pub use offline::OfflineModel;
pub use openai::{EmbeddingSettings, OpenAiChatModel, OpenAiEmbedder, OpenAiSettings};
