//! The markdown vault adapter.
