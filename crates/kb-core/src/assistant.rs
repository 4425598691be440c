//! [`Assistant`]: kb assembled from its default adapters, and the typed handles its
//! operations are reached through — [`Entries`], [`Chat`], [`History`], [`Outreach`] and
//! [`Tools`] — each a small view of one concern.

mod chat;
mod entries;
mod history;
mod intake;
mod mail;
mod opening;
mod outreach;
mod tools;

pub use self::chat::Chat;
pub use self::entries::{CaptureOptions, Entries, EntryEdit, ListQuery, SearchRequest};
pub use self::history::{History, Restored, UndoOf};
pub use self::intake::{Intake, VoiceNote};
pub use self::outreach::{Outreach, OutreachStatus, Snoozed};
pub use self::tools::{ToolSpec, Tools, standard_specs};

use std::path::Path;
use std::sync::Arc;

use kb_domain::{ChatModel, Clock, Confidence, ConversationStore, EntryRepository};
use kb_llm::offline::OfflineModel;
use kb_llm::openai::OpenAiChatModel;
use kb_orchestrator::turn::{Orchestrator, TurnSettings};
use kb_search::{OpenOptions, VaultWatcher};
use kb_storage::conversations::SqliteConversationStore;
use kb_storage::vault::Vault;
use kb_tools::{
    CaptureSource, ErrorCode, LlmClassifier, LlmDigestWriter, Tool, ToolContext, ToolRegistry, ToolServices,
};

use crate::changes::{ChangeFeed, ChangedPaths};
use crate::clock::ZonedClock;
use crate::config::{Config, ModelChoice};
use crate::error::{CoreError, ToolFailure};
use crate::index::SearchHandle;

use self::opening::{
    Opening, SAVE_CATALOGUE_EVERY, Settler, Storage, check_history_in_background, open_vault_and_index,
    start_watcher,
};

/// kb: the vault, its search index, the conversations and the model, behind one object.
pub struct Assistant {
    vault: Arc<Vault>,
    index: Arc<SearchHandle>,
    _watcher: Option<VaultWatcher>,
    /// Settles the watcher's outside edits on request (see [`Assistant::settle`]).
    settler: Option<Settler>,
    /// Whether this process lives long (watches the vault): it saves the catalogue.
    watching: bool,
    store: Arc<SqliteConversationStore>,
    registry: Arc<ToolRegistry>,
    services: ToolServices,
    orchestrator: Orchestrator,
    model: Arc<dyn ChatModel>,
    threshold: Confidence,
    /// Where the changes made through the handles come from unless a handle says
    /// otherwise: `api`, or what [`Assistant::with_source`] set.
    source: CaptureSource,
    changes: ChangeFeed,
    outbox: crate::outreach::Outbox,
    idempotency: crate::idempotency::IdempotencyKeys,
    /// Texts per request to the embedding server.
    embedding_batch: usize,
    /// Sync through git, when set up.
    sync: Option<crate::sync::Syncer>,
    /// Why this process sends no scheduled digests, when it does not (see
    /// [`Config::outreach_held_back`]).
    outreach_held_back: Option<String>,
    /// What kb takes in besides typed words: its limits.
    intake: crate::config::IntakeConfig,
    /// Who transcribes voice notes, when a server is set.
    transcriber: Option<Arc<dyn kb_domain::Transcriber>>,
}

impl std::fmt::Debug for Assistant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assistant")
            .field("vault", &self.vault.root())
            .field("model", &self.model.describe())
            .finish()
    }
}

/// How kb is: what `/healthz` reports (kb-server writes its JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct Health {
    /// kb's version.
    pub version: &'static str,
    /// `offline`, or the model's name.
    pub model: String,
    /// Entries in the vault.
    pub entries: usize,
    /// Whether search answers for the vault as it is (false while the last change could
    /// not be committed to the index).
    pub index_ready: bool,
    /// Why search is not ready, when it is not.
    pub index_problem: Option<String>,
    /// The entry list file (vault-relative): `index.md`, or `kb-index.md` when `index.md`
    /// is the person's own; `null` when both are.
    pub entry_list_file: Option<String>,
    /// Files that look like entries but cannot be read (0 until `vault_ready`).
    pub malformed_files: usize,
    /// Whether the view of the vault is built: at start, a large vault's takes a second or
    /// two, while search already answers; until then `entries` is the index's count.
    pub vault_ready: bool,
    /// Things the person should know about the vault (for example that kb leaves their
    /// own `index.md` alone).
    pub notices: Vec<String>,
    /// How far embedding got, with an embedding model (`None` without one, or while the
    /// index is not open).
    pub embeddings: Option<kb_domain::EmbeddingCoverage>,
    /// Where sync stands (`None` without sync).
    pub sync: Option<crate::sync::SyncSummary>,
}

impl Assistant {
    /// Opens (creating on first use) the vault, index and database of `config`, and starts
    /// following outside edits when `config.watch` is set.
    pub async fn open(config: Config) -> Result<Assistant, CoreError> {
        Assistant::open_with_progress(config, OpenOptions::default()).await
    }

    /// [`Assistant::open`], reporting index build progress through `options`.
    pub async fn open_with_progress(config: Config, options: OpenOptions) -> Result<Assistant, CoreError> {
        let (embedder, embeddings) = match &config.embeddings {
            Some(settings) => {
                let (embedder, model) = crate::embedding::embedder(settings)?;
                (Some(embedder), Some(model))
            }
            None => (None, None),
        };
        let options = OpenOptions { language: config.search_language, embeddings, ..options };
        let zone = config.time_zone.as_deref().and_then(crate::clock::parse_zone);
        let clock: Arc<dyn Clock> = Arc::new(ZonedClock::new(zone));
        let storage = Storage {
            dir: config.kb_dir.clone(),
            database: config.database_url(),
            git: config.git,
            exclude: config.exclude.clone(),
            device: config.sync.as_ref().map(|sync| sync.device.clone()),
        };
        // Sync makes the vault a repository before commits are checked for.
        let mut sync = match &config.sync {
            Some(settings) => {
                let (dir, settings, exclude) =
                    (config.kb_dir.clone(), settings.clone(), config.exclude.clone());
                let opened =
                    tokio::task::spawn_blocking(move || crate::sync::Syncer::open(&dir, &settings, &exclude));
                Some(opened.await.map_err(CoreError::Task)??)
            }
            None => None,
        };
        let vault_clock = Arc::clone(&clock);
        let watch = config.watch;
        let preload = config.watch || config.entries_needed;
        // A process that follows the vault keeps its index in step from the start.
        let search_at_start = config.watch || config.search_needed;
        let changes = ChangeFeed::default();
        let feed = changes.clone();
        let opening = tokio::task::spawn_blocking(move || {
            open_vault_and_index(
                &storage,
                vault_clock,
                options,
                feed,
                Opening { watch, preload, search_at_start },
            )
        });
        // The database's other stores connect while the vault and its index open.
        let store = Arc::new(SqliteConversationStore::connect(&config.database_url()).await?);
        let outreach_store =
            kb_storage::outreach::SqliteOutreachStore::connect(&config.database_url()).await?;
        let (vault, index) = opening.await.map_err(CoreError::Task)??;
        if let Some(sync) = &sync {
            sync.follow(&vault);
        }
        let (watcher, settler) = match index.if_opened().filter(|_| config.watch) {
            // A process that lives long keeps its entry list file current and commits its
            // search index off the request path.
            Some(opened) => {
                vault.write_entry_list_in_background();
                vault.save_catalogue_in_background(SAVE_CATALOGUE_EVERY);
                opened.commit_in_background();
                if let (Some(embedder), Some(settings)) = (&embedder, &config.embeddings) {
                    crate::embedding::start(opened, Arc::clone(embedder), settings.batch);
                }
                check_history_in_background(&vault);
                if let (Some(sync), Some(settings)) = (sync.as_mut(), &config.sync) {
                    sync.start_loop(settings.interval);
                }
                start_watcher(&vault, opened, &changes).map_or((None, None), |(w, s)| (Some(w), s))
            }
            None => (None, None),
        };
        let idempotency = crate::idempotency::IdempotencyKeys::new(Arc::new(
            kb_storage::idempotency::SqliteIdempotencyStore::beside(&store),
        ));
        let outbox = crate::outreach::Outbox::new(
            Arc::new(outreach_store),
            crate::outreach::channels(&config.outreach)?,
            config.outreach.clone(),
            zone,
        );
        let model: Arc<dyn ChatModel> = match &config.model {
            ModelChoice::Offline => Arc::new(OfflineModel::with_clock(Arc::clone(&clock))),
            ModelChoice::OpenAi(settings) => {
                Arc::new(OpenAiChatModel::new(settings.clone()).map_err(CoreError::Model)?)
            }
        };
        let digest_writer: Option<Arc<dyn kb_tools::DigestWriter>> = match config.model {
            // The offline model cannot write prose: digests are rendered from their facts.
            ModelChoice::Offline => None,
            ModelChoice::OpenAi(_) => Some(Arc::new(LlmDigestWriter::new(Arc::clone(&model)))),
        };
        let services = ToolServices {
            repository: Arc::clone(&vault) as Arc<dyn EntryRepository>,
            search: Arc::clone(&index) as Arc<dyn kb_domain::SearchIndex>,
            embedder,
            classifier: Arc::new(LlmClassifier::new(Arc::clone(&model))),
            digest_writer,
            clock,
            pages: Some(Arc::new(kb_intake::WebReader::new(config.intake.fetch))),
        };
        let registry = Arc::new(kb_tools::standard_registry().map_err(CoreError::Tools)?);
        let threshold = Confidence::new(config.threshold)
            .map_err(|e| CoreError::Config(crate::config::ConfigError::Model(e.to_string())))?;
        let settings = TurnSettings {
            max_tool_rounds: config.max_tool_rounds,
            conversation_window: config.conversation_window,
            threshold,
            time_zone: config.time_zone.clone(),
            ..TurnSettings::default()
        };
        let orchestrator = Orchestrator::new(
            Arc::clone(&model),
            Arc::clone(&registry),
            services.clone(),
            Arc::clone(&store) as Arc<dyn ConversationStore>,
            settings,
        );
        tracing::info!(vault = %vault.root().display(), model = %model.describe(), "kb is ready");
        Ok(Assistant {
            vault,
            index,
            _watcher: watcher,
            settler,
            watching: config.watch,
            store,
            registry,
            services,
            orchestrator,
            model,
            threshold,
            source: CaptureSource::Api,
            changes,
            outbox,
            idempotency,
            embedding_batch: config.embeddings.as_ref().map_or(1, |settings| settings.batch),
            sync,
            outreach_held_back: config.outreach_held_back(),
            intake: config.intake.clone(),
            transcriber: config.intake.transcription.clone().map(|settings| {
                Arc::new(kb_llm::openai::OpenAiTranscriber::new(settings)) as Arc<dyn kb_domain::Transcriber>
            }),
        })
    }

    /// Waits until every outside edit made before the call (an editor's save, another kb
    /// process's change) is in this process's view and search index, as a command that
    /// opened the vault just now would find them; whether that held within `within`.
    /// `false` when this process does not follow outside edits, or could not settle (the
    /// system lost events, or following them takes longer): then its answers may lag the
    /// files by up to about a second.
    pub async fn settle(&self, within: std::time::Duration) -> bool {
        let Some(settler) = self.settler.clone() else { return false };
        let began = std::time::Instant::now();
        let settled = tokio::task::spawn_blocking(move || {
            settler.watcher.settle(within)
                && settler.following.caught_up(within.saturating_sub(began.elapsed()))
        })
        .await;
        settled.unwrap_or(false)
    }

    /// The same kb, recording the changes made through its handles as coming from
    /// `source` (`cli` for the command line) instead of `api`.
    pub fn with_source(mut self, source: CaptureSource) -> Assistant {
        self.source = source;
        self
    }

    /// The entry operations: capture, list, get, update, move, delete, search, digests,
    /// duplicates and merges.
    pub fn entries(&self) -> Entries<'_> {
        Entries::new(self, self.source)
    }

    /// Files handed to kb: kept in `attachments/` and filed with the text they hold.
    pub fn intake(&self) -> Intake<'_> {
        Intake::new(self, self.source)
    }

    /// Chat turns and the conversations they are kept in.
    pub fn chat(&self) -> Chat<'_> {
        Chat::new(self)
    }

    /// Revision history: an entry's revisions, restoring one, undoing the last change.
    pub fn history(&self) -> History<'_> {
        History::new(self, self.source)
    }

    /// Nudges, digests and their delivery.
    pub fn outreach(&self) -> Outreach<'_> {
        Outreach::new(self, self.source)
    }

    /// The answers kept for requests sent with an `Idempotency-Key`.
    pub fn idempotency_keys(&self) -> &crate::idempotency::IdempotencyKeys {
        &self.idempotency
    }

    /// The tools by name, as an MCP client calls them.
    pub fn tools(&self) -> Tools<'_> {
        Tools::new(self, self.source)
    }

    /// Runs tool `T` with typed arguments, its changes recorded as asked from `source`:
    /// its typed data, or its failure (with any entries to choose from).
    pub async fn run<T: Tool + Default>(
        &self,
        args: T::Args,
        source: CaptureSource,
    ) -> Result<T::Output, ToolFailure>
    where
        T::Output: 'static,
    {
        self.run_as::<T>(args, source, &kb_domain::Actor::local()).await
    }

    /// [`Assistant::run`] asked by `actor`: the changes name them, and a reader's changes
    /// are refused.
    pub async fn run_as<T: Tool + Default>(
        &self,
        args: T::Args,
        source: CaptureSource,
        actor: &kb_domain::Actor,
    ) -> Result<T::Output, ToolFailure>
    where
        T::Output: 'static,
    {
        self.run_in::<T>(args, &self.direct_context(source, actor)).await
    }

    /// [`Assistant::run`] in `ctx`.
    async fn run_in<T: Tool + Default>(
        &self,
        args: T::Args,
        ctx: &ToolContext,
    ) -> Result<T::Output, ToolFailure>
    where
        T::Output: 'static,
    {
        match self.registry.run_typed::<T>(args, ctx, &self.services).await {
            Ok(output) => Ok(output.data),
            Err(failure) => Err(ToolFailure::from_result(&failure)),
        }
    }

    /// The context of a call made directly (through the API, the CLI or MCP), not in a
    /// chat turn: it is the person's explicit request, so nothing waits for confirmation.
    fn direct_context(&self, source: CaptureSource, actor: &kb_domain::Actor) -> ToolContext {
        ToolContext {
            conversation_id: None,
            last_filed: None,
            today: self.services.clock.today(),
            threshold: self.threshold,
            source,
            confirmation: kb_tools::Confirmation::NotNeeded,
            session: None,
            claim: None,
            person: actor.name().map(str::to_string),
            role: actor.role(),
        }
    }

    /// The vault folder.
    pub fn vault_root(&self) -> &Path {
        self.vault.root()
    }

    /// `offline`, or the model's name.
    pub fn model_name(&self) -> String {
        self.model.describe()
    }

    /// Sync through git: `None` unless `KB_SYNC_REMOTE` set it up.
    pub fn sync(&self) -> Option<&crate::sync::Syncer> {
        self.sync.as_ref()
    }

    /// Receives every change to the vault from now on: this process's, other kb
    /// processes' and outside edits (those only while the vault is watched).
    pub fn changes(&self) -> tokio::sync::broadcast::Receiver<ChangedPaths> {
        self.changes.subscribe()
    }

    /// What `/healthz` reports.
    pub fn health(&self) -> Health {
        // Health never waits for the vault's view: while it is built (a second or two at
        // start in a large vault) the index counts the same notes, and the files that
        // cannot be read are counted once it is.
        let built = self.vault.counts_if_built();
        let index = self.index.get();
        let (entries, malformed_files) =
            built.unwrap_or_else(|| (index.as_ref().map_or(0, |index| index.len()), 0));
        let index_problem = match index {
            Ok(index) => index.health().err(),
            Err(error) => Some(kb_domain::Chain(&error).to_string()),
        };
        let entry_list_file = self
            .vault
            .entry_list_file()
            .map(|file| file.strip_prefix(self.vault.root()).unwrap_or(&file).to_string_lossy().into_owned());
        Health {
            version: env!("CARGO_PKG_VERSION"),
            model: self.model.describe(),
            entries,
            index_ready: index_problem.is_none(),
            index_problem,
            entry_list_file,
            malformed_files,
            vault_ready: built.is_some(),
            notices: self
                .vault
                .entry_list_notice()
                .into_iter()
                .chain(self.outreach_held_back.clone())
                .collect(),
            embeddings: self.embedding_coverage(),
            sync: self.sync.as_ref().map(crate::sync::Syncer::summary),
        }
    }

    /// How far embedding got: `None` without an embedding model or an open index.
    fn embedding_coverage(&self) -> Option<kb_domain::EmbeddingCoverage> {
        self.index.if_opened().and_then(|index| kb_domain::SearchIndex::embedding_coverage(index.as_ref()))
    }

    /// Embeds now every entry that has no vectors yet (`kb reindex`), calling `progress`
    /// with the entries embedded and the total as it goes; the number of rounds sent.
    /// Nothing to do without an embedding model, or in a process that does not own the
    /// index (its owner embeds in the background).
    pub async fn embed_missing(&self, progress: impl FnMut(usize, usize)) -> Result<usize, CoreError> {
        let (Some(embedder), Some(index)) = (self.services.embedder.as_ref(), self.index.if_opened()) else {
            return Ok(0);
        };
        let batch = self.embedding_batch;
        crate::embedding::embed_missing(index, embedder.as_ref(), batch, progress).await
    }

    /// [`Assistant::close`] for a process about to exit: what dropping would do (the
    /// entry list file written, the search index put on disk) is done, but the memory is
    /// left for the system to take back at exit, which costs nothing, where freeing a large
    /// vault's catalogue and index takes a noticeable time after the answer is printed.
    pub async fn close_before_exit(self) {
        self.close().await;
        self.vault.flush();
        if let Some(index) = self.index.if_opened() {
            index.close();
        }
        std::mem::forget(self);
    }

    /// Brings the index in line with the vault on disk (the `kb reindex` command).
    pub fn reindex(&self) -> Result<kb_search::SyncStats, kb_domain::SearchError> {
        let index = self
            .index
            .get()
            .map_err(|error| kb_domain::SearchError::index("cannot open the search index", error))?;
        index.reconcile()
    }

    /// Closes the database cleanly; a process that watched the vault also saves its
    /// catalogue, so that the next start reads only what changes after.
    pub async fn close(&self) {
        if self.watching {
            let vault = Arc::clone(&self.vault);
            let _ = tokio::task::spawn_blocking(move || vault.save_catalogue()).await;
        }
        self.store.close().await;
    }
}

impl Assistant {
    /// The path `reference` names: a path as given, or an entry's name resolved as the
    /// tools resolve names (several matches: `AMBIGUOUS` with the candidates). A deleted
    /// entry has no name any more: give its last path.
    async fn entry_path(&self, reference: &str) -> Result<kb_domain::EntryPath, ToolFailure> {
        if kb_tools::resolve::is_path_like(reference) {
            return parse_path(reference.trim());
        }
        kb_tools::resolve::resolve_entry(reference, "path", &self.services).await.map(|r| r.path).map_err(
            |e| {
                let candidates = e
                    .clarification
                    .as_ref()
                    .and_then(|c| serde_json::to_value(&c.candidates).ok())
                    .map(Box::new);
                ToolFailure { candidates, ..ToolFailure::new(e.code, e.message) }
            },
        )
    }
}

/// A vault path from the caller's text, or an `invalid_path` failure.
fn parse_path(path: &str) -> Result<kb_domain::EntryPath, ToolFailure> {
    kb_domain::EntryPath::parse(path)
        .map_err(|e| ToolFailure::new(ErrorCode::InvalidPath, format!("invalid path: {e}")))
}

/// Runs a blocking vault call off the async threads, its error as a tool's would be.
async fn in_vault<T, F>(work: F) -> Result<T, ToolFailure>
where
    F: FnOnce() -> Result<T, kb_domain::RepositoryError> + Send + 'static,
    T: Send + 'static,
{
    let failed = |error: kb_tools::ToolError| ToolFailure::new(error.code, error.message);
    kb_tools::blocking::run_blocking(work).await.map_err(failed)?.map_err(|e| failed(e.into()))
}
