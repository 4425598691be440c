//! kb-orchestrator: the chat turn (context, prompt, the tool-call loop) and the language
//! model adapters (OpenAI-compatible and offline).
//!
//! Depends on kb-domain and kb-tools; never on storage or search adapters, which it
//! reaches through ports.

pub mod history;
pub mod llm;
pub mod offline;
pub mod prompt;
#[cfg(feature = "test-util")]
pub mod testing;
pub mod turn;
