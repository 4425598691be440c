//! Embedding in the background: in the process that owns the search index, a task hands
//! the embedder the parts of entries that have no vectors yet, a batch at a time, and the
//! index keeps what comes back (see `kb_search`'s vectors). A capture never waits for it;
//! until an entry is embedded, search finds it by its words. When the server fails the
//! task waits longer and longer (up to a minute) before it tries again; the other
//! processes on the vault embed nothing (the owner does it for all), and one that takes
//! the index over picks the work up where the file says it stopped.
//!
//! Before its first round, and again after a failure (the server may come back as
//! another), the owner embeds a fixed text, the probe, and the index compares its vector
//! with the one the vectors were made with: another model behind the same name (another
//! server, another version) starts the vectors again rather than mix two models'. Once
//! every entry is embedded, it also embeds (once per set of vectors, one at a time) the
//! queries on nothing in particular that calibrate the cut of matches by meaning; a note
//! captured meanwhile goes first.

use std::sync::{Arc, Weak};
use std::time::Duration;

use kb_domain::{Embedder, EmbeddingError, TextRole};
use kb_search::{ProbeCheck, TantivyIndex};

use crate::error::CoreError;

/// How often an idle task looks whether the index changed or became this process's.
const IDLE: Duration = Duration::from_millis(500);
/// How often a calibration looks whether the index changed (a note to embed first).
const CHANGE_LOOK: Duration = Duration::from_millis(100);
/// The first wait after a failure; doubled after each further one.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait after failures.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// How often an idle task looks for work even when nothing seems to have changed (an
/// entry embedded by an earlier owner then edited, say).
const FULL_LOOK: Duration = Duration::from_secs(60);

/// The text whose vector tells one model from another (any fixed text would do).
const PROBE_TEXT: &str = "kb probe: a fixed sentence whose vector tells one embedding model from another";

/// Starts the background task for `index` (it ends when the index is dropped).
pub(crate) fn start(index: &Arc<TantivyIndex>, embedder: Arc<dyn Embedder>, batch: usize) {
    let index = Arc::downgrade(index);
    tokio::spawn(async move { run(index, embedder, batch).await });
}

/// The task's loop.
async fn run(index: Weak<TantivyIndex>, embedder: Arc<dyn Embedder>, batch: usize) {
    let mut backoff = FIRST_BACKOFF;
    let mut seen: Option<(bool, u64)> = None;
    let mut last_look = tokio::time::Instant::now();
    // Whether the probe was checked since this process became the owner or the server
    // last failed.
    let mut probed = false;
    loop {
        let Some(strong) = index.upgrade() else { return };
        let now = (strong.is_owner(), strong.commit_count());
        let due = seen != Some(now) || last_look.elapsed() >= FULL_LOOK;
        drop(strong);
        if !now.0 {
            probed = false;
        }
        if !due {
            tokio::time::sleep(IDLE).await;
            continue;
        }
        last_look = tokio::time::Instant::now();
        let outcome = if now.0 && !probed {
            check_probe(&index, embedder.as_ref()).await.map(|()| true)
        } else {
            round(&index, embedder.as_ref(), batch).await
        };
        match outcome {
            Ok(true) => {
                probed |= now.0;
                backoff = FIRST_BACKOFF;
            }
            Ok(false) => {
                seen = Some(now);
                backoff = FIRST_BACKOFF;
            }
            Err(error) => {
                probed = false;
                tracing::warn!(error = %kb_domain::Chain(&error), retry_secs = backoff.as_secs(), "entries could not be embedded; search finds them by their words meanwhile");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Embeds the probe text and has the index check its vector (in the index's owner).
async fn check_probe(index: &Weak<TantivyIndex>, embedder: &dyn Embedder) -> Result<(), CoreError> {
    let mut vectors =
        embedder.embed(&[PROBE_TEXT.to_string()], TextRole::Document).await.map_err(CoreError::Embedding)?;
    let probe = vectors.pop().ok_or_else(|| CoreError::Embedding(EmbeddingError::malformed("no vector")))?;
    let Some(strong) = index.upgrade() else { return Ok(()) };
    let checked = tokio::task::spawn_blocking(move || strong.check_vector_probe(&probe))
        .await
        .map_err(CoreError::Task)??;
    if checked == Some(ProbeCheck::StartedAgain) {
        tracing::warn!(
            model = embedder.model(),
            "the embedding server gives other vectors than those kept for this model (another server or \
             another version of the model): embedding every entry again"
        );
    }
    Ok(())
}

/// Embeds the queries on nothing in particular that calibrate the cut of matches by
/// meaning, when the index has not kept them yet (in the index's owner), once every entry
/// is embedded: until then the default cut holds. Each is sent on its own, as a search's
/// query is, but with a document's deadline, and a failure pauses no search.
///
/// A change to the index stops it, even mid-query (`Ok(false)`): a note captured meanwhile
/// is embedded first, and the next calibration sends only the queries not
/// answered yet (the embedder keeps query vectors). `Ok(true)` once they are kept or
/// when none is needed.
async fn calibrate(index: &Weak<TantivyIndex>, embedder: &dyn Embedder) -> Result<bool, CoreError> {
    let Some(strong) = index.upgrade() else { return Ok(true) };
    let commits = strong.commit_count();
    let needed = tokio::task::spawn_blocking(move || strong.unrelated_queries_needed())
        .await
        .map_err(CoreError::Task)??;
    let Some(queries) = needed else { return Ok(true) };
    let mut vectors = Vec::with_capacity(queries.len());
    for query in queries {
        let query = [query.to_string()];
        let mut vector = tokio::select! {
            embedded = embedder.embed(&query, TextRole::Calibration) => embedded.map_err(CoreError::Embedding)?,
            () = changed(index, commits) => return Ok(false),
        };
        vectors
            .push(vector.pop().ok_or_else(|| CoreError::Embedding(EmbeddingError::malformed("no vector")))?);
    }
    let Some(strong) = index.upgrade() else { return Ok(true) };
    tokio::task::spawn_blocking(move || strong.keep_unrelated(vectors)).await.map_err(CoreError::Task)??;
    Ok(true)
}

/// Returns once `index` committed since it had made `commits` commits, or is gone.
async fn changed(index: &Weak<TantivyIndex>, commits: u64) {
    while index.upgrade().is_some_and(|strong| strong.commit_count() == commits) {
        tokio::time::sleep(CHANGE_LOOK).await;
    }
}

/// One round of work; `Ok(true)` when something was embedded or recorded, or when a
/// calibration gave way to a change (there may be work again).
async fn round(index: &Weak<TantivyIndex>, embedder: &dyn Embedder, batch: usize) -> Result<bool, CoreError> {
    let Some(strong) = index.upgrade() else { return Ok(false) };
    let work = tokio::task::spawn_blocking(move || strong.embedding_work(batch))
        .await
        .map_err(CoreError::Task)??;
    let Some(work) = work.filter(|work| !work.is_empty()) else {
        // Nothing left to embed: the cut's calibration, when it is missing. Its failure
        // is not the entries': they stay embedded, and the default cut holds meanwhile.
        return match calibrate(index, embedder).await {
            Ok(done) => Ok(!done),
            Err(error) => {
                tracing::warn!(error = %kb_domain::Chain(&error), "the cut of matches by meaning could not be measured on this vault yet; the default holds");
                Ok(false)
            }
        };
    };
    save(index, embedder, work).await.map(|()| true)
}

/// Embeds a round's texts and keeps them.
async fn save(
    index: &Weak<TantivyIndex>,
    embedder: &dyn Embedder,
    work: kb_search::EmbeddingWork,
) -> Result<(), CoreError> {
    let span = tracing::debug_span!("embed", texts = work.texts().len(), entries = work.entries());
    let vectors = if work.texts().is_empty() {
        Vec::new()
    } else {
        tracing::Instrument::instrument(embedder.embed(work.texts(), TextRole::Document), span)
            .await
            .map_err(CoreError::Embedding)?
    };
    let Some(strong) = index.upgrade() else { return Ok(()) };
    tokio::task::spawn_blocking(move || strong.save_embeddings(work, vectors))
        .await
        .map_err(CoreError::Task)??;
    Ok(())
}

/// Embeds every entry of `index` that has no vectors yet, now (`kb reindex`): calls
/// `progress` with the entries embedded and the total after each batch. Stopping
/// half-way keeps what was embedded.
pub async fn embed_missing(
    index: &Arc<TantivyIndex>,
    embedder: &dyn Embedder,
    batch: usize,
    mut progress: impl FnMut(usize, usize),
) -> Result<usize, CoreError> {
    let weak = Arc::downgrade(index);
    check_probe(&weak, embedder).await?;
    let mut rounds = 0;
    loop {
        if let Ok(Some(coverage)) = index.coverage() {
            progress(coverage.embedded, coverage.total);
        }
        if !round(&weak, embedder, batch).await? {
            return Ok(rounds);
        }
        rounds += 1;
    }
}

/// The embedder `settings` describe, and the model the index keeps vectors of for it.
pub fn embedder(
    settings: &kb_llm::openai::EmbeddingSettings,
) -> Result<(Arc<dyn Embedder>, kb_search::VectorModel), CoreError> {
    let embedder =
        kb_llm::openai::OpenAiEmbedder::new(settings.clone()).map_err(CoreError::EmbeddingSetup)?;
    let model = kb_search::VectorModel { model: embedder.model().to_string(), identity: embedder.identity() };
    Ok((Arc::new(embedder), model))
}
