//! [`FakeOpenAi`]: a small HTTP/1.1 server on 127.0.0.1 that answers each request with the
//! next scripted [`FakeReply`] (or a standing one, for requests a test picks out by their
//! body) and records the request. A request asking for a stream (`"stream": true`) gets a
//! scripted chat completion streamed ([`FakeReply::stream`] scripts the chunks themselves).
//! Once [`FakeOpenAi::answer_embeddings`] is called, `/v1/embeddings` requests take their
//! own queue ([`FakeOpenAi::push_embeddings`]) and, when it is empty, get word vectors
//! (see [`embeddings`]). It speaks just enough HTTP for
//! reqwest (one request per connection, `Content-Length` bodies, `Connection: close`).
//!
//! ```ignore
//! let server = FakeOpenAi::start().await?;
//! server.push(FakeReply::tool_calls(&[("call_1", "search", r#"{"query":"priya"}"#)]));
//! server.push(FakeReply::text("Priya is a designer."));
//! let settings = OpenAiSettings { base_url: Some(server.base_url()), ..OpenAiSettings::new("k", "m") };
//! ```

pub mod chunk;
pub mod embeddings;
mod http;
mod reply;
mod server;

pub use reply::{FakeReply, StreamedCall, streamed_chunks};
pub use server::{FakeOpenAi, RecordedRequest};
