//! generate_digest: gathers the facts from the vault's catalogue (in memory), has the digest writer (an LLM) write
//! them up, and renders the same facts as markdown when no writer answers.

use kb_domain::Usage;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blocking::run_blocking;
use crate::context::{ToolContext, ToolServices};
use crate::digest::{DigestKind, gather_facts, render_markdown};
use crate::result::{StateUpdate, ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory, ToolHints};

/// Arguments of generate_digest.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GenerateDigestArgs {
    /// daily: today's actions, people, warnings and a win; weekly: the review of the week.
    #[serde(rename = "type")]
    pub kind: DigestKind,
}

/// What generate_digest answers.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DigestData {
    /// Which digest.
    #[serde(rename = "type")]
    pub kind: DigestKind,
    /// The digest, as markdown.
    pub content: String,
}

/// The generate_digest tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct GenerateDigest;

impl Tool for GenerateDigest {
    const NAME: &'static str = "generate_digest";
    const DESCRIPTION: &'static str = "Generate the daily digest (top actions, people to contact, what to watch \
        out for) or the weekly review (stats, progress, open loops, focus, inbox to review). Use when the user \
        asks for their digest, a summary of their day or week, or a review.";
    const CATEGORY: ToolCategory = ToolCategory::Agentic;
    const HINTS: ToolHints = ToolHints::READ_ONLY;
    type Args = GenerateDigestArgs;
    type Output = DigestData;

    async fn run(
        &self,
        args: GenerateDigestArgs,
        ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<DigestData>, ToolError> {
        let repo = services.repository.clone();
        let (today, now) = (ctx.today, services.clock.now());
        let candidates = run_blocking(move || repo.digest_candidates(today, now)).await??;
        let facts = gather_facts(args.kind, &candidates, today, now);
        let written = match &services.digest_writer {
            Some(writer) => match writer.write(&facts).await {
                Ok(written) => Some(written),
                Err(e) => {
                    tracing::warn!(error = %e, "digest writer failed; rendering the facts instead");
                    None
                }
            },
            None => None,
        };
        let (content, usage) = match written {
            Some(written) => (written.content, written.usage),
            None => (render_markdown(&facts), Usage::default()),
        };
        Ok(ToolOutput::with_updates(
            DigestData { kind: args.kind, content },
            vec![StateUpdate::ModelUsage(usage)],
        ))
    }
}
