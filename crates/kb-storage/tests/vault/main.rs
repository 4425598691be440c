#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The markdown vault against real folders: round trips, slugs under concurrency, updates
//! and moves that lose nothing, real-world corpora, symlinks, and crash safety.

mod common;
mod concurrency;
mod conflicts;
mod corpora;
mod crash;
mod history;
mod moves;
mod notes;
mod refused;
mod roundtrip;
mod safety;
mod symlinks;
mod updates;
