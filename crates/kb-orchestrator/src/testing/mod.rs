//! Test helpers for this crate's tests and downstream ones (feature `test-util`): a scripted
//! OpenAI-compatible HTTP server, [`FakeOpenAi`], that records what it was sent, and an
//! in-memory conversation store, [`MemoryConversations`].

mod fake_openai;
mod memory_store;

pub use fake_openai::{FakeOpenAi, FakeReply, RecordedRequest};
pub use memory_store::MemoryConversations;
