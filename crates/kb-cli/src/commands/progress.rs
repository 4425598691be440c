//! The progress bar of a search index being built or brought up to date, on stderr (drawn
//! only on a terminal): `kb reindex` shows it from the start, every other command only
//! once the index reports work (a first start on a vault of thousands of notes).

use std::sync::Arc;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kb_search::{IndexProgress, ProgressFn};

/// A progress bar on stderr, not drawn until it is moved or ticks.
pub fn bar() -> ProgressBar {
    bar_of("{spinner} {msg} [{bar:30}] {pos}/{len} files ({eta})")
}

/// A progress bar on stderr for entries being embedded.
pub fn embedding_bar() -> ProgressBar {
    bar_of("{spinner} embedding entries [{bar:30}] {pos}/{len} ({eta})")
}

/// A progress bar on stderr drawn as `template` says.
fn bar_of(template: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(template)
        .map(|style| style.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

/// The index's progress, shown on `bar`.
pub fn report_to(bar: ProgressBar) -> ProgressFn {
    Arc::new(move |progress: IndexProgress| {
        bar.set_message(if progress.rebuilding {
            "building the search index"
        } else {
            "reading changed files"
        });
        bar.set_length(progress.total as u64);
        bar.set_position(progress.done as u64);
    })
}
