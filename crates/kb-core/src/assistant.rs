//! [`Assistant`]: kb assembled from its default adapters.

mod outreach;

pub use self::outreach::OutreachStatus;

use std::path::Path;
use std::sync::Arc;

use kb_domain::{
    ChatModel, Clock, Confidence, Conversation, ConversationId, ConversationStore, EntryCatalogue, EntryRepository, Message,
    RevisionHistory, StoreError,
};
use kb_llm::offline::OfflineModel;
use kb_llm::openai::OpenAiChatModel;
use kb_orchestrator::turn::{ChatResponse, Orchestrator, TurnError, TurnSettings};
use kb_search::{OnChange, OpenOptions, TantivyIndex, VaultWatcher};
use kb_storage::conversations::SqliteConversationStore;
use kb_storage::vault::Vault;
use kb_tools::{
    CaptureSource, ErrorCode, LlmClassifier, LlmDigestWriter, ToolContext, ToolHints, ToolRegistry,
    ToolResult, ToolServices,
};
use serde::Serialize;
use serde_json::{Value, json};

use crate::changes::{ChangeFeed, ChangedPaths};
use crate::clock::ZonedClock;
use crate::config::{Config, ModelChoice};
use crate::error::{CoreError, ToolFailure};

/// kb: the vault, its search index, the conversations and the model, behind one object.
pub struct Assistant {
    vault: Arc<Vault>,
    index: Arc<TantivyIndex>,
    _watcher: Option<VaultWatcher>,
    store: Arc<SqliteConversationStore>,
    registry: Arc<ToolRegistry>,
    services: ToolServices,
    orchestrator: Orchestrator,
    model: Arc<dyn ChatModel>,
    threshold: Confidence,
    /// Where the changes of [`Assistant::update_entry`] and [`Assistant::move_entry`]
    /// come from: `api` unless [`Assistant::with_source`] says otherwise.
    source: CaptureSource,
    changes: ChangeFeed,
    outreach: crate::outreach::Outreach,
}

/// One tool as a client outside the chat sees it (the MCP server's `tools/list`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Its name, description and argument schema.
    pub definition: kb_domain::ToolDefinition,
    /// The schema of its data on success.
    pub output_schema: Value,
    /// What it promises about its effects.
    pub hints: ToolHints,
}

impl std::fmt::Debug for Assistant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assistant")
            .field("vault", &self.vault.root())
            .field("model", &self.model.describe())
            .finish()
    }
}

/// How a capture treats entries that may be the one it is about.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaptureOptions {
    /// Add the capture to this entry (a path or a name) instead of filing a new one.
    pub merge_into: Option<String>,
    /// File a new entry even when a person or project of a like name exists.
    pub create_new: bool,
}

/// What `/healthz` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_problem: Option<String>,
    /// The entry list file (vault-relative): `index.md`, or `kb-index.md` when `index.md`
    /// is the person's own; `null` when both are.
    #[serde(rename = "indexFile")]
    pub entry_list_file: Option<String>,
    /// Files that look like entries but cannot be read.
    pub malformed_files: usize,
    /// Things the person should know about the vault (for example that kb leaves their
    /// own `index.md` alone).
    pub notices: Vec<String>,
}

impl Assistant {
    /// Opens (creating on first use) the vault, index and database of `config`, and starts
    /// following outside edits when `config.watch` is set.
    pub async fn open(config: Config) -> Result<Assistant, CoreError> {
        Assistant::open_with_progress(config, OpenOptions::default()).await
    }

    /// [`Assistant::open`], reporting index build progress through `options`.
    pub async fn open_with_progress(config: Config, options: OpenOptions) -> Result<Assistant, CoreError> {
        let options = OpenOptions { language: config.search_language, ..options };
        let zone = config.time_zone.as_deref().and_then(crate::clock::parse_zone);
        let clock: Arc<dyn Clock> = Arc::new(ZonedClock::new(zone));
        let dir = config.kb_dir.clone();
        let vault_clock = Arc::clone(&clock);
        let database = config.database_url();
        let git = config.git;
        let changes = ChangeFeed::default();
        let feed = changes.clone();
        let (vault, index) = tokio::task::spawn_blocking(move || {
            open_vault_and_index(&dir, &database, git, vault_clock, options, feed)
        })
        .await
        .map_err(|e| CoreError::Task(e.to_string()))??;
        let watcher = if config.watch {
            // A process that lives long keeps its entry list file current and commits its
            // search index off the request path.
            vault.write_entry_list_in_background();
            index.commit_in_background();
            check_history_in_background(&vault);
            start_watcher(&vault, &index, &changes)
        } else {
            None
        };
        let store = Arc::new(SqliteConversationStore::connect(&config.database_url()).await?);
        let outreach_store =
            kb_storage::outreach::SqliteOutreachStore::connect(&config.database_url()).await?;
        let outreach = crate::outreach::Outreach::new(
            Arc::new(outreach_store),
            crate::outreach::channels(&config.outreach)?,
            config.outreach.clone(),
            zone,
        );
        let model: Arc<dyn ChatModel> = match &config.model {
            ModelChoice::Offline => Arc::new(OfflineModel::with_clock(Arc::clone(&clock))),
            ModelChoice::OpenAi(settings) => {
                Arc::new(OpenAiChatModel::new(settings.clone()).map_err(|e| CoreError::Model(e.to_string()))?)
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
            classifier: Arc::new(LlmClassifier::new(Arc::clone(&model))),
            digest_writer,
            clock,
        };
        let registry = Arc::new(kb_tools::standard_registry().map_err(|e| CoreError::Task(e.to_string()))?);
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
            store,
            registry,
            services,
            orchestrator,
            model,
            threshold,
            source: CaptureSource::Api,
            changes,
            outreach,
        })
    }

    /// The same kb, recording the changes its entry methods make (update, move) as coming
    /// from `source` (`cli` for the command line) instead of `api`.
    pub fn with_source(mut self, source: CaptureSource) -> Assistant {
        self.source = source;
        self
    }

    /// The vault folder.
    pub fn vault_root(&self) -> &Path {
        self.vault.root()
    }

    /// `offline`, or the model's name.
    pub fn model_name(&self) -> String {
        self.model.describe()
    }

    /// One chat turn: the answer to `message` in `conversation` (a new one when `None`).
    pub async fn chat(
        &self,
        conversation: Option<&ConversationId>,
        message: &str,
    ) -> Result<ChatResponse, TurnError> {
        self.orchestrator.chat(conversation, message).await
    }

    /// One chat turn, sending `events` of what happens while it runs (the turn began, each
    /// tool call, the answer in pieces); the answer is also returned whole. Events nobody
    /// receives any more (the receiver gone) are dropped; the turn goes on.
    pub async fn chat_with_events(
        &self,
        conversation: Option<&ConversationId>,
        message: &str,
        events: tokio::sync::mpsc::UnboundedSender<kb_domain::turn_events::TurnEvent>,
    ) -> Result<ChatResponse, TurnError> {
        self.orchestrator.chat_with_events(conversation, message, Some(events)).await
    }

    /// Runs one tool directly (as the REST API and CLI do), with `source` as the origin of
    /// captures. Answers the tool's `data`, or its failure.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        source: CaptureSource,
    ) -> Result<Value, ToolFailure> {
        let result = self.run_tool(name, &arguments, source).await;
        if result.success {
            Ok(result.data.unwrap_or(Value::Null))
        } else {
            Err(ToolFailure::from_result(&result))
        }
    }

    /// Runs one tool directly, answering its whole result (data, or the message the chat
    /// model would read with any candidates), as the MCP server shows it.
    pub async fn run_tool(&self, name: &str, arguments: &Value, source: CaptureSource) -> ToolResult {
        self.run_tool_in(name, arguments, source, None, None).await
    }

    /// [`Assistant::run_tool`] for an MCP client in session `session` (see
    /// [`kb_domain::ChangeContext::session`]): its changes are recorded with the session,
    /// and its undo reaches only them.
    pub async fn run_session_tool(&self, name: &str, arguments: &Value, session: &str) -> ToolResult {
        self.run_tool_in(name, arguments, CaptureSource::Mcp, None, Some(session.to_string())).await
    }

    /// Every tool, in the order the chat model sees them, with its schemas and hints.
    pub fn tools(&self) -> Vec<ToolSpec> {
        self.registry
            .definitions()
            .into_iter()
            .map(|definition| ToolSpec {
                output_schema: self.registry.output_schema(&definition.name).cloned().unwrap_or(Value::Null),
                hints: self.registry.hints(&definition.name).unwrap_or(ToolHints::ADDITIVE),
                definition,
            })
            .collect()
    }

    /// Whether a tool of that name exists.
    pub fn has_tool(&self, name: &str) -> bool {
        self.registry.get(name).is_some()
    }

    /// Receives every change to the vault from now on: this process's, other kb
    /// processes' and outside edits (those only while the vault is watched).
    pub fn changes(&self) -> tokio::sync::broadcast::Receiver<ChangedPaths> {
        self.changes.subscribe()
    }

    /// The markdown file of the entry at `path`, as it is on disk.
    pub async fn entry_markdown(&self, path: &kb_domain::EntryPath) -> Result<String, ToolFailure> {
        let vault = Arc::clone(&self.vault);
        let path = path.clone();
        in_vault(move || vault.read_text(&path)).await
    }

    async fn run_tool_in(
        &self,
        name: &str,
        arguments: &Value,
        source: CaptureSource,
        conversation_id: Option<ConversationId>,
        session: Option<String>,
    ) -> ToolResult {
        let ctx = ToolContext {
            conversation_id,
            last_filed: None,
            today: self.services.clock.today(),
            threshold: self.threshold,
            source,
            // A call through the API or the CLI is the person's explicit request.
            confirmation: kb_tools::Confirmation::NotNeeded,
            session,
        };
        self.registry.execute(name, &arguments.to_string(), &ctx, &self.services).await
    }

    /// Groups of entries that are likely duplicates (find_duplicates), all or those named
    /// like `name`: `{groups: [{reason, entries}], total}`.
    pub async fn duplicates(&self, name: Option<&str>) -> Result<Value, ToolFailure> {
        let args = name.map_or_else(|| json!({}), |name| json!({ "name": name }));
        self.call_tool("find_duplicates", args, CaptureSource::Api).await
    }

    /// Merges `sources` into `target` at once (merge_entries, asked from `source`), each a
    /// path or a name: `{path, merged, referencesUpdated}`.
    pub async fn merge(
        &self,
        target: &str,
        sources: &[String],
        source: CaptureSource,
    ) -> Result<Value, ToolFailure> {
        self.call_tool("merge_entries", json!({ "targetPath": target, "sourcePaths": sources }), source).await
    }

    /// Files a capture (classify_and_capture).
    pub async fn capture(
        &self,
        text: &str,
        hints: Option<&str>,
        source: CaptureSource,
    ) -> Result<Value, ToolFailure> {
        self.capture_with(text, hints, &CaptureOptions::default(), source).await
    }

    /// Files a capture (classify_and_capture), added to a given entry or filed as a new one
    /// whatever namesakes exist, as `options` say.
    pub async fn capture_with(
        &self,
        text: &str,
        hints: Option<&str>,
        options: &CaptureOptions,
        source: CaptureSource,
    ) -> Result<Value, ToolFailure> {
        let mut args = json!({ "text": text });
        if let Some(hints) = hints {
            args["hints"] = Value::String(hints.to_string());
        }
        if let Some(target) = &options.merge_into {
            args["mergeInto"] = Value::String(target.clone());
        }
        if options.create_new {
            args["createNew"] = Value::Bool(true);
        }
        self.call_tool("classify_and_capture", args, source).await
    }

    /// Lists entries, newest first: `{entries, total}` as list_entries answers, with an
    /// offset for paging (the REST API's `GET /api/entries`).
    pub async fn list(
        &self,
        category: Option<&str>,
        status: Option<&str>,
        limit: Option<u64>,
        offset: Option<u64>,
    ) -> Result<Value, ToolFailure> {
        let invalid = |message: String| ToolFailure::new(ErrorCode::InvalidArguments, message);
        let category = category
            .map(|c| c.parse::<kb_domain::Category>().map_err(|e| invalid(e.to_string())))
            .transpose()?;
        if limit == Some(0) {
            return Err(invalid("limit must be at least 1, got 0".to_string()));
        }
        // Larger pages are capped, as list_entries caps them.
        let filter = kb_domain::ListFilter {
            category,
            status: status.map(str::to_string),
            limit: kb_domain::paging::page_size(limit),
            offset: offset.map_or(0, |o| usize::try_from(o).unwrap_or(usize::MAX)),
        };
        let page =
            self.vault.list(&filter).map_err(|e| ToolFailure::new(ErrorCode::Internal, e.to_string()))?;
        Ok(json!({ "entries": page.entries, "total": page.total }))
    }

    /// One entry (get_entry).
    pub async fn get(&self, path: &str) -> Result<Value, ToolFailure> {
        self.call_tool("get_entry", json!({ "path": path }), CaptureSource::Api).await
    }

    /// Sets fields of an entry (update_entry with `updates` only).
    pub async fn update(&self, path: &str, updates: Value) -> Result<Value, ToolFailure> {
        self.update_entry(path, Some(updates), None).await
    }

    /// Updates an entry (update_entry): sets the `updates` fields and makes the `body` edit
    /// (`{mode, content, section?, find?, expectedReplacements?}`), either or both.
    pub async fn update_entry(
        &self,
        path: &str,
        updates: Option<Value>,
        body: Option<Value>,
    ) -> Result<Value, ToolFailure> {
        let mut args = json!({ "path": path });
        set(&mut args, "updates", updates);
        set(&mut args, "body", body);
        self.call_tool("update_entry", args, self.source).await
    }

    /// Moves an entry (move_entry).
    pub async fn move_entry(&self, path: &str, target_category: &str) -> Result<Value, ToolFailure> {
        self.call_tool("move_entry", json!({ "path": path, "targetCategory": target_category }), self.source)
            .await
    }

    /// Searches (search_entries).
    pub async fn search(
        &self,
        query: &str,
        category: Option<&str>,
        limit: Option<u64>,
    ) -> Result<Value, ToolFailure> {
        self.search_with(query, category, limit, false).await
    }

    /// Searches (search_entries); with `prefix`, as the person types: the last word may be
    /// unfinished.
    pub async fn search_with(
        &self,
        query: &str,
        category: Option<&str>,
        limit: Option<u64>,
        prefix: bool,
    ) -> Result<Value, ToolFailure> {
        let mut args = json!({ "query": query });
        set(&mut args, "category", category.map(Value::from));
        set(&mut args, "limit", limit.map(Value::from));
        if prefix {
            args["prefix"] = Value::Bool(true);
        }
        self.call_tool("search_entries", args, CaptureSource::Api).await
    }

    /// A daily or weekly digest (generate_digest).
    pub async fn digest(&self, kind: &str) -> Result<Value, ToolFailure> {
        self.call_tool("generate_digest", json!({ "type": kind }), CaptureSource::Api).await
    }

    /// The entry list (`index.md`) as it is now.
    pub fn entry_list_markdown(&self) -> String {
        self.vault.entry_list_markdown()
    }

    /// The revisions of the entry at (or last at) `path`, newest first: `{revisions}`
    /// (`GET /api/entries/{path}/history`, `kb history`).
    pub async fn history(&self, path: &str) -> Result<Value, ToolFailure> {
        let path = self.entry_path(path).await?;
        let vault = Arc::clone(&self.vault);
        let revisions = in_vault(move || vault.history(&path)).await?;
        Ok(json!({ "revisions": revisions }))
    }

    /// One revision of the entry at (or last at) `path`, with the file's text `before` and
    /// `after` it (`null` where there was no file), for showing its diff.
    pub async fn revision(&self, path: &str, revision: i64) -> Result<Value, ToolFailure> {
        let path = parse_path(path)?;
        let vault = Arc::clone(&self.vault);
        let text = in_vault(move || vault.revision(&path, revision)).await?;
        let mut answer = serde_json::to_value(&text.revision)
            .map_err(|e| ToolFailure::new(ErrorCode::Internal, e.to_string()))?;
        answer["before"] = text.before.map_or(Value::Null, Value::String);
        answer["after"] = text.after.map_or(Value::Null, Value::String);
        Ok(answer)
    }

    /// Brings the entry at (or last at) `path` back to `revision`'s bytes, as asked from
    /// `source`: `{path, revision?, note?}` (no `revision` when the file already had those
    /// bytes; a `note` when the entry had moved since and was restored where it is now).
    pub async fn restore(
        &self,
        path: &str,
        revision: i64,
        source: CaptureSource,
    ) -> Result<Value, ToolFailure> {
        let path = self.entry_path(path).await?;
        let vault = Arc::clone(&self.vault);
        let by = kb_domain::ChangeContext::from_source(source);
        let asked = path.clone();
        let outcome = in_vault(move || vault.restore_as(&path, revision, &by)).await?;
        let mut answer = json!({ "path": outcome.path.to_string() });
        if outcome.moved_since {
            answer["note"] = json!(format!(
                "the entry has moved from {asked} to {} since; it was restored where it is now",
                outcome.path
            ));
        }
        if let Some(recorded) = outcome.revision {
            answer["revision"] = json!(recorded.id);
        }
        Ok(answer)
    }

    /// Undoes the most recent change kb made in `conversation` (or, without one, anyone's
    /// newest) (undo_last_change, asked from `source`): `{undone, by, files}`, `by` saying
    /// where the undone change came from.
    pub async fn undo(
        &self,
        conversation: Option<ConversationId>,
        force: bool,
        source: CaptureSource,
    ) -> Result<Value, ToolFailure> {
        let arguments = json!({ "force": force });
        let result = self.run_tool_in("undo_last_change", &arguments, source, conversation, None).await;
        if result.success {
            Ok(result.data.unwrap_or(Value::Null))
        } else {
            Err(ToolFailure::from_result(&result))
        }
    }

    /// Deletes an entry (delete_entry, asked from `source`, so at once):
    /// `{path, deleted: true, revision}`.
    pub async fn delete(&self, path: &str, source: CaptureSource) -> Result<Value, ToolFailure> {
        self.call_tool("delete_entry", json!({ "path": path }), source).await
    }

    /// Every conversation, most recent first.
    pub async fn conversations(&self) -> Result<Vec<Conversation>, StoreError> {
        self.store.list().await
    }

    /// A conversation with its messages.
    pub async fn conversation(
        &self,
        id: &ConversationId,
    ) -> Result<(Conversation, Vec<Message>), StoreError> {
        let conversation = self.store.get(id).await?.ok_or_else(|| StoreError::NotFound(id.clone()))?;
        let messages = self.store.messages(id).await?;
        Ok((conversation, messages))
    }

    /// Renames a conversation.
    pub async fn rename_conversation(&self, id: &ConversationId, title: &str) -> Result<(), StoreError> {
        self.store.rename(id, title).await
    }

    /// Deletes a conversation and its messages.
    pub async fn delete_conversation(&self, id: &ConversationId) -> Result<(), StoreError> {
        self.store.delete(id).await
    }

    /// What `/healthz` reports.
    pub fn health(&self) -> Health {
        let entries = self
            .vault
            .list(&kb_domain::ListFilter { limit: 1, ..kb_domain::ListFilter::default() })
            .map(|page| page.total)
            .unwrap_or(0);
        let index_problem = self.index.health().err();
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
            malformed_files: self.vault.malformed().len(),
            notices: self.vault.entry_list_notice().into_iter().collect(),
        }
    }

    /// Brings the index in line with the vault on disk (the `kb reindex` command).
    pub fn reindex(&self) -> Result<kb_search::SyncStats, kb_domain::SearchError> {
        self.index.reconcile()
    }

    /// Closes the database cleanly (the vault and index need nothing).
    pub async fn close(&self) {
        self.store.close().await;
    }
}

fn set(args: &mut Value, key: &str, value: Option<Value>) {
    if let Some(value) = value {
        args[key] = value;
    }
}

fn open_vault_and_index(
    dir: &Path,
    database: &str,
    git: crate::config::GitMode,
    clock: Arc<dyn Clock>,
    options: OpenOptions,
    changes: ChangeFeed,
) -> Result<(Arc<Vault>, Arc<TantivyIndex>), CoreError> {
    if git == crate::config::GitMode::Commit {
        // Checked before anything is opened. The vault's folder is made on first use anyway;
        // when it cannot be, the check names it.
        let _ = std::fs::create_dir_all(dir);
        kb_storage::history::GitCommits::check(dir)?;
    }
    let mut history: Arc<dyn kb_domain::RevisionLog> =
        Arc::new(kb_storage::history::HistoryLog::connect(database)?);
    if git == crate::config::GitMode::Commit {
        history = Arc::new(kb_storage::history::GitCommits::new(history, dir)?);
    }
    let vault = Arc::new(Vault::open_with_history(dir, clock, history)?);
    let index = Arc::new(crate::index::open_index_of(vault.files(), vault.root(), options)?);
    vault.add_observer(Arc::clone(&index) as Arc<dyn kb_domain::ChangeObserver>);
    vault.add_observer(Arc::new(changes.clone()));
    // Other kb processes on this vault send their changes to the one that owns the index;
    // once indexed, this process's view of the vault follows them too.
    let follower = Arc::downgrade(&vault);
    index.share_writes(Some(Arc::new(move |changed: &[kb_domain::EntryPath]| {
        let Some(vault) = follower.upgrade() else { return };
        vault.follow_all(changed);
        changes.publish(changed);
    })));
    Ok((vault, index))
}

/// Records in history, off the request path, what changed in the vault while kb was not
/// running (or was killed between writing a file and recording it).
fn check_history_in_background(vault: &Arc<Vault>) {
    let vault = Arc::downgrade(vault);
    let started = std::thread::Builder::new().name("kb-history-check".into()).spawn(move || {
        kb_storage::background::yield_to_requests();
        let Some(vault) = vault.upgrade() else { return };
        match vault.check_history() {
            Ok(0) => {}
            Ok(changed) => tracing::info!(changed, "history caught up with files changed outside kb"),
            Err(error) => tracing::warn!(%error, "could not compare the vault with its history"),
        }
    });
    if let Err(error) = started {
        tracing::warn!(%error, "could not start comparing the vault with its history");
    }
}

/// How often a watching process checks the vault's folders against its view of them.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_millis(500);
/// The folders are swept this often even when nothing seemed to change.
const FULL_SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(5);
/// A sweep lists every folder, so its cost grows with the vault: the pause after one is
/// at least this many times what it took, keeping sweeps to a small share of the time.
const SWEEP_SHARE: u32 = 20;

/// Checks the vault every [`SWEEP_EVERY`] while it is open (see [`Vault::sweep_if_due`]):
/// a change a file event did not bring shows within a second while the vault is busy,
/// and within a few seconds when it is quiet. In a vault so large that a sweep takes long,
/// sweeps are spaced out ([`SWEEP_SHARE`]).
fn start_sweeps(vault: &Arc<Vault>) {
    let vault = Arc::downgrade(vault);
    let started = std::thread::Builder::new().name("kb-vault-sweep".into()).spawn(move || {
        kb_storage::background::yield_to_requests();
        let mut pause = SWEEP_EVERY;
        let mut last_full = std::time::Instant::now();
        loop {
            std::thread::sleep(pause);
            let Some(vault) = vault.upgrade() else { return };
            let began = std::time::Instant::now();
            let full = began.duration_since(last_full) >= FULL_SWEEP_EVERY.max(pause);
            vault.sweep_if_due(full);
            if full {
                last_full = began;
            }
            pause = SWEEP_EVERY.max(began.elapsed() * SWEEP_SHARE);
        }
    });
    if let Err(error) = started {
        tracing::warn!(%error, "could not start checking the vault's folders");
    }
}

fn start_watcher(
    vault: &Arc<Vault>,
    index: &Arc<TantivyIndex>,
    changes: &ChangeFeed,
) -> Option<VaultWatcher> {
    start_sweeps(vault);
    // The index followed the files already: the vault need not notify it again.
    let on_change: OnChange = crate::follow::follow_in_background(vault, changes.clone());
    match VaultWatcher::start(Arc::clone(index), Some(on_change)) {
        Ok(watcher) => Some(watcher),
        Err(error) => {
            tracing::warn!(%error, "not following outside edits: the vault cannot be watched");
            None
        }
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
