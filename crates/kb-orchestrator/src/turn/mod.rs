//! The chat turn: load or start the conversation, build the context, let the
//! model call tools until it answers in text or the round cap is reached, check the
//! answer's citations against what the tools returned ([`cited`]), store the whole turn in
//! one transaction, and answer. A call left waiting for the person's yes ([`confirm`]) is
//! stored with the turn and decided by the next message.

pub mod cited;
#[cfg(test)]
mod cited_tests;
pub mod confirm;
mod error;
mod response;
mod summary;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Instant;

use chrono::{NaiveDate, Utc};
use kb_domain::turn_events::TurnEvent;
use kb_domain::{
    Actor, ChatMessage, ChatModel, ChatRequest, Confidence, Conversation, ConversationId, ConversationStore,
    ListFilter, NewMessage, PendingCall, ToolCall, Usage,
};
use kb_tools::{
    CaptureSource, Confirmation, StateUpdate, ToolCategory, ToolContext, ToolRegistry, ToolResult,
    ToolServices,
};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tracing::Instrument;

pub use error::{MAX_MESSAGE_BYTES, TurnError};
pub use response::{AnswerMessage, ChatResponse, FiledEntry};
pub use summary::{BATCH as SUMMARY_BATCH, SUMMARY_UNAVAILABLE};

use crate::prompt::{PromptInputs, system_prompt};
use crate::transcript;

/// What the final message says when the round cap is reached.
pub const ROUND_CAP_APOLOGY: &str = "Sorry, I could not finish that: it took more steps than I am allowed. \
Could you ask again, perhaps in smaller steps?";

/// How many entries the vault overview in the prompt lists at most (most recent first).
const OVERVIEW_ENTRIES: usize = 500;

/// Settings of the chat turn.
#[derive(Debug, Clone)]
pub struct TurnSettings {
    /// Tool rounds per turn (`KB_MAX_TOOL_ROUNDS`, 5).
    pub max_tool_rounds: usize,
    /// Recent messages sent with each turn (20); fewer than [`SUMMARY_BATCH`] older ones not
    /// yet summarised come with them.
    pub conversation_window: usize,
    /// Tokens the vault overview may take in the system prompt.
    pub overview_token_budget: usize,
    /// The capture threshold (`KB_CONFIDENCE_THRESHOLD`, 0.6).
    pub threshold: Confidence,
    /// The person's time zone, if configured.
    pub time_zone: Option<String>,
    /// Where captures come from.
    pub source: CaptureSource,
}

impl Default for TurnSettings {
    fn default() -> Self {
        TurnSettings {
            max_tool_rounds: 5,
            conversation_window: 20,
            overview_token_budget: 1500,
            threshold: Confidence::new(kb_tools::DEFAULT_THRESHOLD).unwrap_or(Confidence::CERTAIN),
            time_zone: None,
            source: CaptureSource::Chat,
        }
    }
}

/// Runs chat turns over a model, the tools and the conversation store.
pub struct Orchestrator {
    model: Arc<dyn ChatModel>,
    registry: Arc<ToolRegistry>,
    services: ToolServices,
    store: Arc<dyn ConversationStore>,
    settings: TurnSettings,
}

/// What the tool loop produced.
#[derive(Default)]
struct LoopOutcome {
    answer: String,
    turn_messages: Vec<NewMessage>,
    tools_used: Vec<String>,
    /// The tools that may have changed the vault (not those that only proposed).
    changing_tools: Vec<String>,
    filed: Option<FiledEntry>,
    /// The call the turn leaves waiting for the person's yes (the last one proposed).
    pending: Option<PendingCall>,
    /// Whether the answer was already sent in deltas as the model wrote it.
    answer_streamed: bool,
    /// What the model was asked for and answered over the turn (summaries included).
    usage: Usage,
}

impl Orchestrator {
    /// An orchestrator over these parts.
    pub fn new(
        model: Arc<dyn ChatModel>,
        registry: Arc<ToolRegistry>,
        services: ToolServices,
        store: Arc<dyn ConversationStore>,
        settings: TurnSettings,
    ) -> Orchestrator {
        Orchestrator { model, registry, services, store, settings }
    }

    /// The conversation store (for listing, renaming and deleting conversations).
    pub fn store(&self) -> &Arc<dyn ConversationStore> {
        &self.store
    }

    /// The model in use.
    pub fn model(&self) -> &Arc<dyn ChatModel> {
        &self.model
    }

    /// Answers one message. An absent or unknown conversation id starts a new conversation.
    pub async fn chat(
        &self,
        conversation_id: Option<&ConversationId>,
        message: &str,
    ) -> Result<ChatResponse, TurnError> {
        self.chat_with_events(conversation_id, message, None).await
    }

    /// [`Orchestrator::chat`], sending `events` of what happens while the turn runs: the turn
    /// began, each tool call started and finished, the answer in pieces (see
    /// [`kb_domain::turn_events`]). A receiver that went away is no reason to stop.
    pub async fn chat_with_events(
        &self,
        conversation_id: Option<&ConversationId>,
        message: &str,
        events: Option<UnboundedSender<TurnEvent>>,
    ) -> Result<ChatResponse, TurnError> {
        self.chat_as(&Actor::local(), conversation_id, message, events).await
    }

    /// [`Orchestrator::chat_with_events`] for `actor`: the conversation is theirs (another
    /// person's id starts a new one, as an unknown id does), their changes name them, and
    /// a reader's turn offers the model only the tools that read.
    pub async fn chat_as(
        &self,
        actor: &Actor,
        conversation_id: Option<&ConversationId>,
        message: &str,
        events: Option<UnboundedSender<TurnEvent>>,
    ) -> Result<ChatResponse, TurnError> {
        let span =
            tracing::info_span!("chat_turn", conversation = tracing::field::Empty, person = actor.name());
        let events = EventSender(events);
        self.chat_inner(actor, conversation_id, message, &events).instrument(span).await
    }

    async fn chat_inner(
        &self,
        actor: &Actor,
        conversation_id: Option<&ConversationId>,
        message: &str,
        events: &EventSender,
    ) -> Result<ChatResponse, TurnError> {
        let started = Instant::now();
        if message.trim().is_empty() {
            return Err(TurnError::EmptyMessage);
        }
        if message.len() > MAX_MESSAGE_BYTES {
            return Err(TurnError::MessageTooLong(message.len()));
        }
        let (conversation, created) = self.open_conversation(actor, conversation_id, message).await?;
        // The turn runs in its span (see `chat_as`): it names the conversation once known.
        tracing::Span::current().record("conversation", conversation.id.as_str());
        events.send(TurnEvent::Started { conversation_id: conversation.id.to_string() });
        // A call waiting for the person's yes is taken away now, whatever this message says.
        let pending = match conversation.pending {
            Some(_) => self.store.take_pending(&conversation.id).await?,
            None => None,
        };
        let window = self.settings.conversation_window;
        let past = summary::load(self.store.as_ref(), &conversation, window).await?;
        let mut usage = Usage::default();
        let context =
            summary::catch_up(self.model.as_ref(), self.store.as_ref(), past, window, &mut usage).await;
        let mut seen = cited::SeenPaths::from_messages(&context.recent);

        // One date for the whole turn: the prompt states it, each request carries it, the tools use it.
        let today = self.services.clock.today();
        let mut messages =
            vec![ChatMessage::System { content: self.prompt(context.summary.as_deref(), today).await }];
        messages.extend(transcript::to_chat_messages(&context.recent));
        let (to_run, cancelled) = match confirm::decide(pending, message) {
            confirm::Decision::Run { call, confirmed } => (Some((call, confirmed)), None),
            confirm::Decision::Cancel(call) => (None, Some(call)),
            confirm::Decision::Nothing => (None, None),
        };
        if let Some(call) = &cancelled {
            tracing::info!(tool = %call.tool, "the pending call was cancelled by the next message");
            messages.push(ChatMessage::System { content: confirm::cancelled_note(call) });
        }
        messages.push(ChatMessage::User { content: message.to_string() });
        let mut ctx = ToolContext {
            conversation_id: Some(conversation.id.clone()),
            last_filed: context.last_filed,
            today,
            threshold: self.settings.threshold,
            source: self.settings.source,
            // In a chat, a destructive tool proposes first and waits for the person's yes.
            confirmation: kb_tools::Confirmation::Ask,
            session: None,
            claim: None,
            person: actor.name().map(str::to_string),
            role: actor.role(),
        };
        let mut outcome = LoopOutcome { usage, ..LoopOutcome::default() };
        if let Some((call, confirmed)) = to_run {
            tracing::info!(tool = %call.tool, confirmed, "the person's answer runs the pending call");
            if confirmed {
                ctx.confirmation = Confirmation::Given;
            }
            messages.extend(self.run_pending(&call, &mut ctx, &mut outcome, events).await);
        }
        let mut outcome = match self.tool_loop(messages, ctx, outcome, events).await {
            Ok(outcome) => outcome,
            Err(error) => {
                // Nothing of a failed turn is stored; a conversation it started would be an
                // empty one the person never got the id of.
                if created && let Err(e) = self.store.delete(&conversation.id).await {
                    tracing::warn!(error = %e, "the empty conversation of a failed turn could not be removed");
                }
                return Err(error);
            }
        };

        // The answer kept and answered cites only paths the conversation's tools returned.
        let results = outcome.turn_messages.iter().filter(|m| m.role == Some(kb_domain::Role::Tool));
        results.for_each(|result| seen.add_result(&result.content));
        let checked = cited::check(&outcome.answer, &mut seen, self.store.as_ref(), &conversation.id).await;
        outcome.answer = checked.text;
        if !outcome.answer_streamed {
            // An answer kb wrote itself ("Done.", the round cap, a partial answer) is sent
            // in word pieces now.
            for piece in kb_domain::turn_events::deltas(&outcome.answer) {
                events.send(TurnEvent::MessageDelta { text: piece });
            }
        }
        let mut answer = NewMessage::assistant(outcome.answer.clone());
        answer.filed_entry_path = outcome.filed.as_ref().map(|f| f.path.to_string());
        answer.filed_confidence = outcome.filed.as_ref().map(|f| f.confidence);
        let mut turn = vec![NewMessage::user(message)];
        turn.extend(outcome.turn_messages);
        turn.push(answer);
        let stored =
            self.store.append_turn_with_pending(&conversation.id, turn, outcome.pending.as_ref()).await;
        let (id, created_at) = match stored {
            Ok(stored) => stored.last().map(|m| (m.id.clone(), m.created_at)).unwrap_or_else(local_id),
            Err(error) => {
                tracing::warn!(%error, "the turn could not be stored; answering anyway");
                local_id()
            }
        };
        let usage = outcome.usage;
        tracing::info!(
            duration_ms = started.elapsed().as_secs_f64() * 1000.0,
            llm_calls = usage.llm_calls,
            prompt_tokens = usage.prompt_tokens,
            completion_tokens = usage.completion_tokens,
            tools = outcome.tools_used.len(),
            "chat turn finished"
        );
        Ok(ChatResponse {
            conversation_id: conversation.id,
            message: AnswerMessage {
                id,
                role: kb_domain::Role::Assistant,
                content: outcome.answer,
                filed_entry_path: outcome.filed.as_ref().map(|f| f.path.clone()),
                filed_confidence: outcome.filed.as_ref().map(|f| f.confidence),
                created_at,
            },
            entry: outcome.filed,
            tools_used: outcome.tools_used,
            dropped_citations: checked.dropped,
            usage,
        })
    }

    async fn open_conversation(
        &self,
        actor: &Actor,
        id: Option<&ConversationId>,
        message: &str,
    ) -> Result<(Conversation, bool), TurnError> {
        if let Some(id) = id
            && let Some(existing) = self.store.get(id).await?
            && actor.sees(existing.person.as_deref())
        {
            return Ok((existing, false));
        }
        let title = kb_domain::conversation::title_from_message(message);
        Ok((self.store.create_for(&title, actor.name()).await?, true))
    }

    async fn prompt(&self, summary: Option<&str>, today: NaiveDate) -> String {
        let repository = Arc::clone(&self.services.repository);
        let filter = ListFilter { limit: OVERVIEW_ENTRIES, ..ListFilter::default() };
        let listed = tokio::task::spawn_blocking(move || {
            let page = repository.list(&filter)?;
            Ok::<_, kb_domain::RepositoryError>((page, repository.other_note_folders()?))
        })
        .await;
        let (entries, folders) = match listed {
            Ok(Ok((page, folders))) => (page.entries, folders),
            Ok(Err(error)) => {
                tracing::warn!(%error, "the entries could not be listed for the vault overview");
                (Vec::new(), Vec::new())
            }
            Err(error) => {
                tracing::warn!(%error, "listing the entries for the vault overview failed");
                (Vec::new(), Vec::new())
            }
        };
        system_prompt(&PromptInputs {
            today,
            time_zone: self.settings.time_zone.as_deref(),
            entries: &entries,
            folders: &folders,
            overview_token_budget: self.settings.overview_token_budget,
            summary,
        })
    }

    /// Runs the call the person just confirmed (or picked an entry for), as a call of kb's
    /// own in this turn: the model's next round reads its result like any other (the
    /// messages returned: the call, and its result). `ctx` says whether the person
    /// confirmed it; later calls ask again.
    async fn run_pending(
        &self,
        pending: &PendingCall,
        ctx: &mut ToolContext,
        outcome: &mut LoopOutcome,
        events: &EventSender,
    ) -> [ChatMessage; 2] {
        let call = confirm::confirmed_call(pending);
        let asked = ChatMessage::Assistant { content: None, tool_calls: vec![call.clone()] };
        outcome.turn_messages.push(NewMessage::assistant_tool_calls("", vec![call.clone()]));
        let result = self.run_call(call, ctx, outcome, events).await;
        ctx.confirmation = Confirmation::Ask;
        [asked, result]
    }

    /// Runs one tool call: its state updates the context, and its result is returned as
    /// the message the model reads next.
    async fn run_call(
        &self,
        call: ToolCall,
        ctx: &mut ToolContext,
        outcome: &mut LoopOutcome,
        events: &EventSender,
    ) -> ChatMessage {
        let arguments = serde_json::from_str(&call.arguments)
            .unwrap_or_else(|_| serde_json::Value::String(call.arguments.clone()));
        events.send(TurnEvent::ToolStarted { name: call.name.clone(), arguments });
        let result = self.registry.execute(&call.name, &call.arguments, ctx, &self.services).await;
        events.send(finished(&call.name, &result));
        let mut proposed = false;
        for update in &result.state_updates {
            if let StateUpdate::ModelUsage(spent) = update {
                outcome.usage.add(*spent);
            }
            if let Some(pending) = confirm::requested(update) {
                outcome.pending = Some(pending);
                proposed = true;
            }
            ctx.apply(update);
        }
        if let Some(filed) = filed_entry(&result) {
            outcome.filed = Some(filed);
        }
        let content = result.to_llm_json();
        outcome.tools_used.push(call.name.clone());
        if !proposed {
            outcome.changing_tools.push(call.name.clone());
        }
        let message = ChatMessage::Tool { tool_call_id: call.id.clone(), content: content.clone() };
        outcome.turn_messages.push(NewMessage::tool_result(call.id, content));
        message
    }

    async fn tool_loop(
        &self,
        mut messages: Vec<ChatMessage>,
        mut ctx: ToolContext,
        mut outcome: LoopOutcome,
        events: &EventSender,
    ) -> Result<LoopOutcome, TurnError> {
        let tools = self.registry.definitions_for(ctx.role);
        for _round in 0..self.settings.max_tool_rounds {
            let request =
                ChatRequest { messages: messages.clone(), tools: tools.clone(), today: Some(ctx.today) };
            // Someone listens: the model's text is sent as it is written.
            let answer = if events.listening() {
                let on_delta = |text: &str| events.send(TurnEvent::MessageDelta { text: text.to_string() });
                self.model.complete_streaming(&request, &on_delta).await
            } else {
                self.model.complete(&request).await
            };
            let completion = match answer {
                Ok(completion) => completion,
                Err(error) if self.changed_the_vault(&outcome.changing_tools) => {
                    // What the tools changed is on disk: the person must learn of it, and
                    // the turn is kept, rather than an error that invites a duplicate retry.
                    tracing::warn!(%error, "the model failed after tools changed the vault; keeping the turn");
                    outcome.answer = partial_answer(&outcome.tools_used, &error);
                    return Ok(outcome);
                }
                Err(error) => return Err(error.into()),
            };
            outcome.usage.add(completion.usage);
            if completion.tool_calls.is_empty() {
                match completion.content.filter(|c| !c.trim().is_empty()) {
                    Some(text) => {
                        outcome.answer = text;
                        outcome.answer_streamed = events.listening();
                    }
                    None => outcome.answer = "Done.".to_string(),
                }
                return Ok(outcome);
            }
            let text = completion.content.unwrap_or_default();
            messages.push(ChatMessage::Assistant {
                content: (!text.is_empty()).then(|| text.clone()),
                tool_calls: completion.tool_calls.clone(),
            });
            outcome.turn_messages.push(NewMessage::assistant_tool_calls(text, completion.tool_calls.clone()));
            for call in completion.tool_calls {
                messages.push(self.run_call(call, &mut ctx, &mut outcome, events).await);
            }
        }
        tracing::warn!(rounds = self.settings.max_tool_rounds, "tool round cap reached");
        outcome.answer = ROUND_CAP_APOLOGY.to_string();
        Ok(outcome)
    }
}

impl Orchestrator {
    /// Whether any of these tools changes the vault (or asks a model on its behalf).
    fn changed_the_vault(&self, tools_used: &[String]) -> bool {
        tools_used.iter().any(|name| self.registry.category(name).is_some_and(|c| c != ToolCategory::Query))
    }
}

/// The answer of a turn whose model failed after tools had changed the vault.
fn partial_answer(tools_used: &[String], error: &kb_domain::LlmError) -> String {
    format!(
        "I did part of that ({}), but then the language model failed: {error}. \
         Please check the result before asking again.",
        tools_used.join(", ")
    )
}

/// The entry a capture filed, read from its result.
fn filed_entry(result: &ToolResult) -> Option<FiledEntry> {
    let (path, confidence) = result.filed()?;
    let data = result.data.as_ref();
    let text = |key: &str| data.and_then(|d| d.get(key)).and_then(Value::as_str).map(str::to_string);
    Some(FiledEntry {
        path: path.clone(),
        category: path.category(),
        name: text("name").unwrap_or_else(|| path.stem().to_string()),
        confidence: confidence.value(),
        clarification_needed: data
            .and_then(|d| d.get("clarificationNeeded"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

fn local_id() -> (String, chrono::DateTime<Utc>) {
    (ConversationId::generate().to_string(), Utc::now())
}

/// Sends a turn's events to whoever listens, if anyone does.
struct EventSender(Option<UnboundedSender<TurnEvent>>);

impl EventSender {
    /// Whether anyone listens.
    fn listening(&self) -> bool {
        self.0.is_some()
    }

    /// Sends `event` to the listener, if there is one.
    fn send(&self, event: TurnEvent) {
        if let Some(sender) = &self.0 {
            // A listener that went away (the client hung up) does not stop the turn.
            let _ = sender.send(event);
        }
    }
}

/// The `tool.finished` event of a call: success, a line about it, the entry it touched.
fn finished(name: &str, result: &kb_tools::ToolResult) -> TurnEvent {
    let data = result.data.as_ref();
    let path = result.touched.as_ref().map(ToString::to_string);
    let summary = match (&result.error, &path) {
        (Some(error), _) => error.clone(),
        (None, Some(path)) => format!("{name}: {path}"),
        (None, None) => match data.and_then(|d| d.get("total")) {
            Some(total) => format!("{name}: {total} found"),
            None => format!("{name}: done"),
        },
    };
    TurnEvent::ToolFinished { name: name.to_string(), success: result.success, summary, path }
}
