//! Digests: the facts gathered from the vault ([`facts`]), their deterministic markdown
//! rendering ([`render`]) and the LLM writer that turns them into prose ([`writer`]).

pub mod facts;
pub mod render;
pub mod writer;

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use facts::gather_facts;
pub use render::render_markdown;
pub use writer::LlmDigestWriter;

/// Which digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DigestKind {
    /// The daily digest (under 150 words).
    Daily,
    /// The weekly review (under 250 words).
    Weekly,
}

impl std::str::FromStr for DigestKind {
    type Err = String;

    /// The digest named `text` (`daily` or `weekly`).
    fn from_str(text: &str) -> Result<DigestKind, String> {
        crate::args::one_of(&[("daily", DigestKind::Daily), ("weekly", DigestKind::Weekly)], text)
    }
}

impl DigestKind {
    /// The headings of this digest, in order.
    pub fn headings(self) -> &'static [&'static str] {
        match self {
            DigestKind::Daily => {
                &["Top 3 actions", "People to connect with", "Watch out for", "One small win"]
            }
            DigestKind::Weekly => &[
                "Quick stats",
                "What moved forward",
                "Open loops",
                "Patterns noticed",
                "Suggested focus",
                "Needs review",
            ],
        }
    }

    /// The digest must stay under this many words.
    pub fn word_limit(self) -> usize {
        match self {
            DigestKind::Daily => 150,
            DigestKind::Weekly => 250,
        }
    }

    /// `daily` or `weekly`.
    pub fn as_str(self) -> &'static str {
        match self {
            DigestKind::Daily => "daily",
            DigestKind::Weekly => "weekly",
        }
    }

    /// The title line of the digest.
    pub fn title(self, today: NaiveDate) -> String {
        match self {
            DigestKind::Daily => format!("Daily digest for {today}"),
            DigestKind::Weekly => format!("Weekly review for the week to {today}"),
        }
    }
}

/// One heading of a digest and the facts under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigestSection {
    /// The heading.
    pub heading: &'static str,
    /// One line per fact.
    pub items: Vec<String>,
}

/// Everything a digest says, gathered before any LLM writes it up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigestFacts {
    /// Which digest.
    pub kind: DigestKind,
    /// The day it is for.
    pub today: NaiveDate,
    /// The sections, in the order of [`DigestKind::headings`].
    pub sections: Vec<DigestSection>,
}
