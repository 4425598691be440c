//! The offline model: kb's [`ChatModel`] when no `OPENAI_API_KEY` is set, so a fresh
//! machine gets a useful assistant. It is not a language model and never pretends to be
//! one: fixed intent rules over the person's last message pick one tool call (an entry
//! named in words is handed to the tool by that name, which the tool resolves), tool
//! results are described in plain sentences, a "no" to a proposal the chat turn cancelled
//! is acknowledged, and the capture classifier works from keyword tables ([`keywords`]). A
//! request without tools is a writing task (a digest write-up, a summary of older turns):
//! the material is handed back as given. Same request, same answer.
//!
//! Today's date and the category a capture's hint fixed come as data on the request
//! ([`ChatRequest::today`], [`StructuredRequest::today`], [`StructuredRequest::forced_category`]);
//! without a date, the model's clock says what day it is.
//!
//! - [`utterance`] reads a message into words; [`intent`], [`queries`], [`changes`] and
//!   [`facts`] decide what it asks; [`fallback`] says what to do when the entry a message
//!   names is not in the vault;
//!   [`plan`] turns that into a tool call or a sentence.
//! - [`transcript`] finds the last message, the results after it and the entry "that" means;
//!   [`render`] writes the final answer from tool results, and [`answers`] the answer to a
//!   question: the passages found, each with its citation (`[path:line]`).
//! - [`classify`] answers the classifier's structured request, shaped by [`fit`] to the schema
//!   asked for; [`dates`] reads dates.

pub mod answers;
pub mod changes;
pub mod classify;
pub mod dates;
pub mod facts;
pub mod fallback;
pub mod fit;
pub mod intent;
pub mod keywords;
pub mod plan;
pub mod queries;
pub mod render;
pub mod tidy;
pub mod transcript;
pub mod utterance;

use std::sync::Arc;

use chrono::NaiveDate;
use kb_domain::{
    Category, ChatCompletion, ChatMessage, ChatModel, ChatRequest, Clock, LlmError, StructuredCompletion,
    StructuredRequest, SystemClock,
};

use self::transcript::Transcript;

/// The built-in offline model (see the module documentation).
#[derive(Clone)]
pub struct OfflineModel {
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for OfflineModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OfflineModel").finish_non_exhaustive()
    }
}

impl Default for OfflineModel {
    fn default() -> Self {
        OfflineModel::new()
    }
}

impl OfflineModel {
    /// An offline model that takes today's date from the request, or else from the system clock.
    pub fn new() -> OfflineModel {
        OfflineModel { clock: Arc::new(SystemClock) }
    }

    /// An offline model whose fallback for today's date is `clock` (tests, reproducible runs).
    pub fn with_clock(clock: Arc<dyn Clock>) -> OfflineModel {
        OfflineModel { clock }
    }

    /// Today: the date the request carries, else the clock's.
    fn today(&self, stated: Option<NaiveDate>) -> NaiveDate {
        stated.unwrap_or_else(|| self.clock.today())
    }

    /// The next step of a conversation, without the async wrapper.
    pub fn answer(&self, request: &ChatRequest) -> ChatCompletion {
        let transcript = Transcript::read(&request.messages);
        if !transcript.outcomes.is_empty() {
            let today = self.today(request.today);
            if let Some(next) = fallback::after_a_miss(&transcript, today, &request.tools) {
                return next;
            }
            let question = transcript.last_user.as_deref().is_some_and(intent::is_question);
            return plan::say(render::render_for(fallback::worth_telling(&transcript.outcomes), question));
        }
        let Some(message) = transcript.last_user.as_deref() else {
            return plan::say(plan::CAPABILITIES);
        };
        if request.tools.is_empty() {
            return plan::hand_back(message);
        }
        if transcript.cancelled && intent::refuses(message) {
            return plan::say("Okay, I won't: nothing was changed.");
        }
        let intent = intent::understand(message, self.today(request.today));
        let known = plan::Known { recent_path: transcript.recent_path.as_deref() };
        let mut next = plan::plan(intent, known, &request.tools, transcript.calls_so_far);
        if intent::is_question(message) {
            answers::read_lines(&mut next);
        }
        next
    }

    /// The classifier's answer, without the async wrapper. The text is the person's message:
    /// the last user message that does not answer an assistant message (a retry's complaint).
    pub fn classify(&self, request: &StructuredRequest) -> serde_json::Value {
        let messages = &request.messages;
        let text = (0..messages.len())
            .rev()
            .find_map(|i| match &messages[i] {
                ChatMessage::User { content }
                    if i == 0 || !matches!(messages[i - 1], ChatMessage::Assistant { .. }) =>
                {
                    Some(content.as_str())
                }
                _ => None,
            })
            .unwrap_or("");
        let forced = request.forced_category.filter(|c| *c != Category::Inbox);
        let answer = classify::classify(text, self.today(request.today), forced);
        fit::fit_to_schema(answer, &request.schema)
    }
}

#[async_trait::async_trait]
impl ChatModel for OfflineModel {
    async fn complete(&self, request: &ChatRequest) -> Result<ChatCompletion, LlmError> {
        Ok(self.answer(request))
    }

    async fn complete_structured(
        &self,
        request: &StructuredRequest,
    ) -> Result<StructuredCompletion, LlmError> {
        Ok(StructuredCompletion { value: self.classify(request), usage: plan::USAGE })
    }

    fn describe(&self) -> String {
        "offline".to_string()
    }
}
