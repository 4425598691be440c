#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Integration tests of kb-search against real temp vaults on disk.

mod background;
mod behaviour;
mod bulk;
mod corpora;
mod cut;
mod freshness;
mod meaning;
mod passages;
mod processes;
mod property;
mod questions;
mod sharing;
mod support;
