//! kb-tools' integration tests: one binary, one module per concern.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
