//! `kb reindex`: brings the search index in line with the vault on disk — a rebuild when
//! the index is missing, damaged or from an older kb, else a catch-up on the files whose
//! stamp changed — with a progress bar on stderr, then prints what it did.
//!
//! It opens only the index (not the whole assistant) so it can report what the opening
//! itself found: opening is where the work happens. With an embedding model it then
//! embeds the entries that have no vectors yet, with a second bar; stopping it (Ctrl-C)
//! keeps what was embedded and leaves the rest to the next kb process.

use std::sync::Arc;
use std::time::Duration;

use kb_core::{Config, embedding};
use kb_domain::{Embedder, EmbeddingCoverage};
use kb_search::{OpenOptions, OpenStats, TantivyIndex};
use serde_json::{Value, json};

use super::progress;
use crate::failure::CliError;
use crate::output::{self, Format};

/// Runs `kb reindex` on the vault of `config`.
pub async fn run(config: &Config, format: Format) -> Result<(), CliError> {
    // A folder that does not exist was refused before (see `makes_a_vault`).
    let root = config.kb_dir.clone();
    let embedding = match &config.embeddings {
        Some(settings) => Some((embedding::embedder(settings).map_err(CliError::from)?, settings.batch)),
        None => None,
    };
    let bar = progress::bar();
    bar.enable_steady_tick(Duration::from_millis(200));
    let options = OpenOptions {
        progress: Some(progress::report_to(bar.clone())),
        language: config.search_language,
        embeddings: embedding.as_ref().map(|((_, model), _)| model.clone()),
    };
    let exclude = config.exclude.clone();
    let opened = tokio::task::spawn_blocking(move || kb_core::open_index(&root, &exclude, options))
        .await
        .map_err(|e| CliError::runtime(e.to_string()))?;
    bar.finish_and_clear();
    let index = Arc::new(opened.map_err(|e| CliError::runtime(e.to_string()))?);
    let embedded = match embedding {
        Some(((embedder, _), batch)) => Some(embed(&index, embedder.as_ref(), batch).await?),
        None => None,
    };
    let stats = index.open_stats();
    if format.is_json() {
        output::print_json(&stats_json(stats, embedded.as_ref()))
    } else {
        output::print_text(&stats_text(stats, embedded.as_ref()))
    }
}

/// Embeds what has no vectors yet, with a bar; how far embedding got after.
async fn embed(
    index: &Arc<TantivyIndex>,
    embedder: &dyn Embedder,
    batch: usize,
) -> Result<Option<EmbeddingCoverage>, CliError> {
    if !index.is_owner() {
        // The running kb process that owns the index embeds in the background.
        return Ok(index.coverage().ok().flatten());
    }
    let bar = progress::embedding_bar();
    let result = embedding::embed_missing(index, embedder, batch, |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })
    .await;
    bar.finish_and_clear();
    result.map_err(CliError::from)?;
    Ok(index.coverage().ok().flatten())
}

fn stats_json(stats: &OpenStats, embedded: Option<&Option<EmbeddingCoverage>>) -> Value {
    let mut json = json!({
        "rebuilt": stats.rebuild_reason.is_some(),
        "rebuildReason": stats.rebuild_reason,
        "added": stats.sync.added,
        "updated": stats.sync.updated,
        "removed": stats.sync.removed,
        "malformed": stats.sync.malformed,
    });
    if let Some(Some(coverage)) = embedded {
        json["embeddings"] = json!({
            "model": coverage.model,
            "embedded": coverage.embedded,
            "total": coverage.total,
            "queued": coverage.queued,
            "calibrated": coverage.calibrated,
        });
    }
    json
}

fn stats_text(stats: &OpenStats, embedded: Option<&Option<EmbeddingCoverage>>) -> String {
    let sync = &stats.sync;
    let mut out = match &stats.rebuild_reason {
        Some(reason) => format!("rebuilt the search index ({reason}): {} entries indexed\n", sync.added),
        None => format!(
            "search index up to date: {} added, {} updated, {} removed\n",
            sync.added, sync.updated, sync.removed
        ),
    };
    if sync.malformed > 0 {
        out.push_str(&format!(
            "{} file(s) could not be read as entries and were skipped (`kb serve` reports them at /healthz)\n",
            sync.malformed
        ));
    }
    if let Some(Some(coverage)) = embedded {
        out.push_str(&format!(
            "{} of {} entries embedded with {}{}\n",
            coverage.embedded,
            coverage.total,
            coverage.model,
            if coverage.queued > 0 { " (the rest is embedded by the next kb process)" } else { "" }
        ));
    }
    out
}
