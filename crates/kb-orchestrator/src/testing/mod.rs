//! Test helpers for this crate's tests and downstream ones (feature `test-util`): an
//! in-memory conversation store, [`MemoryConversations`].

mod memory_store;

pub use memory_store::MemoryConversations;
