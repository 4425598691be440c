//! kb-orchestrator: the chat turn ([`turn`]: the context window, the tool-call loop with a
//! round cap, confirmations, summaries of older turns), the system prompt with its vault
//! overview ([`prompt`]) and the conversation history as the model sees it
//! ([`transcript`]), over kb-domain's ports; the language model is a
//! [`kb_domain::ChatModel`] (its adapters live in kb-llm).
//!
//! Depends on kb-domain and kb-tools; never on storage, search or model adapters, which it
//! reaches through ports.

pub mod prompt;
#[cfg(feature = "test-util")]
pub mod testing;
pub mod transcript;
pub mod turn;
