//! The two ports the tools add to kb-domain's: the [`Classifier`] that decides where a
//! capture belongs, and the [`DigestWriter`] that writes gathered facts up as prose.
//!
//! They live here, not in kb-domain, because only the tools use them; their LLM-backed
//! implementations ([`crate::LlmClassifier`], [`crate::LlmDigestWriter`]) sit over
//! kb-domain's `ChatModel` port.

use chrono::NaiveDate;
use kb_domain::{Category, Confidence, Frontmatter, LlmError, Usage};

use crate::digest::DigestFacts;

/// What the classifier is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifyRequest {
    /// The person's words (hints removed).
    pub text: String,
    /// The category a hint fixed, when there is one: the classifier fills in the name and
    /// that category's fields.
    pub forced_category: Option<Category>,
    /// Today, so relative dates ("by Friday") can become dates.
    pub today: NaiveDate,
}

/// The classifier's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    /// Where it belongs (never the inbox: routing there is the tool's decision).
    pub category: Category,
    /// How sure the classifier is.
    pub confidence: Confidence,
    /// A short name for the entry.
    pub name: String,
    /// The category's own fields it could fill (`next_action`, `context`, …).
    pub fields: Frontmatter,
    /// Tags.
    pub tags: Vec<String>,
    /// What asking the model cost (zero when no model was asked).
    pub usage: Usage,
}

/// Why a classification failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClassifyError {
    /// The model could not be asked.
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// The model's answers could not be used, even after a retry.
    #[error("the classifier gave no usable answer: {0}")]
    Malformed(String),
}

/// Decides the category, confidence, name, fields and tags of a capture.
#[async_trait::async_trait]
pub trait Classifier: Send + Sync {
    /// Classifies one capture.
    async fn classify(&self, request: &ClassifyRequest) -> Result<Classification, ClassifyError>;
}

/// Why a digest could not be written (the tool then renders the facts itself).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DigestError {
    /// The model could not be asked.
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// The model answered with nothing usable.
    #[error("the digest writer gave an empty answer")]
    Empty,
}

/// A digest as written, with what writing it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenDigest {
    /// The markdown.
    pub content: String,
    /// What asking the model cost.
    pub usage: Usage,
}

/// Writes a digest from its facts.
#[async_trait::async_trait]
pub trait DigestWriter: Send + Sync {
    /// The digest as markdown, under the facts' headings.
    async fn write(&self, facts: &DigestFacts) -> Result<WrittenDigest, DigestError>;
}
