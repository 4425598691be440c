//! The vectors kept beside the search index: entries cut into parts ([`chunk`]), the
//! parts' embeddings in an append-only file per model ([`store`]).

pub mod chunk;
pub mod store;
