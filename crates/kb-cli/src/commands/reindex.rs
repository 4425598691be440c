//! `kb reindex`: brings the search index in line with the vault on disk — a rebuild when
//! the index is missing, damaged or from an older kb, else a catch-up on the files whose
//! stamp changed — with a progress bar on stderr, then prints what it did.
//!
//! It opens only the index (not the whole assistant) so it can report what the opening
//! itself found: opening is where the work happens.

use std::time::Duration;

use kb_core::Config;
use kb_search::{OpenOptions, OpenStats};
use serde_json::{Value, json};

use super::progress;
use crate::failure::CliError;
use crate::output::{self, Format};

/// Runs `kb reindex` on the vault of `config`.
pub fn run(config: &Config, format: Format) -> Result<(), CliError> {
    let root = &config.kb_dir;
    if !root.is_dir() {
        return Err(CliError::runtime(format!("no vault at {}: nothing to index", root.display())));
    }
    let bar = progress::bar();
    bar.enable_steady_tick(Duration::from_millis(200));
    let options =
        OpenOptions { progress: Some(progress::report_to(bar.clone())), language: config.search_language };
    let opened = kb_core::open_index(root, &config.exclude, options);
    bar.finish_and_clear();
    let index = opened.map_err(|e| CliError::runtime(e.to_string()))?;
    let stats = index.open_stats();
    if format.is_json() {
        output::print_json(&stats_json(stats))
    } else {
        output::print_text(&stats_text(stats))
    }
}

fn stats_json(stats: &OpenStats) -> Value {
    json!({
        "rebuilt": stats.rebuild_reason.is_some(),
        "rebuildReason": stats.rebuild_reason,
        "added": stats.sync.added,
        "updated": stats.sync.updated,
        "removed": stats.sync.removed,
        "malformed": stats.sync.malformed,
    })
}

fn stats_text(stats: &OpenStats) -> String {
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
    out
}
