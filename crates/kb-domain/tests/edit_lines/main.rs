#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Property: an update rewrites only the frontmatter lines of the fields it sets, over
//! generated blocks and over the real markdown of the shared corpora.

mod corpora;
mod generated;
mod oracle;
