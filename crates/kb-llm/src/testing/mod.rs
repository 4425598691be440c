//! Test helpers for this crate's tests and downstream ones (feature `test-util`): a scripted
//! OpenAI-compatible HTTP server, [`FakeOpenAi`], that records what it was sent.

mod fake_openai;

pub use fake_openai::{FakeOpenAi, FakeReply, RecordedRequest, StreamedCall, chunk, streamed_chunks};
