//! [`ScriptedClassifier`] and [`ScriptedChatModel`]: answers given in advance, requests
//! recorded for inspection.

use std::collections::VecDeque;
use std::sync::Mutex;

use kb_domain::{
    ChatCompletion, ChatModel, ChatRequest, LlmError, StructuredCompletion, StructuredRequest, Usage,
};
use serde_json::Value;

use crate::ports::{Classification, Classifier, ClassifyError, ClassifyRequest};

use kb_domain::sync::lock;

/// A classifier that answers from a script, then repeats its fallback (if any).
pub struct ScriptedClassifier {
    answers: Mutex<VecDeque<Result<Classification, ClassifyError>>>,
    fallback: Option<Result<Classification, ClassifyError>>,
    requests: Mutex<Vec<ClassifyRequest>>,
}

impl ScriptedClassifier {
    /// Answers these in order, then fails.
    pub fn new(answers: Vec<Result<Classification, ClassifyError>>) -> ScriptedClassifier {
        ScriptedClassifier {
            answers: Mutex::new(answers.into()),
            fallback: None,
            requests: Mutex::new(Vec::new()),
        }
    }

    /// Always answers `answer`.
    pub fn always(answer: Result<Classification, ClassifyError>) -> ScriptedClassifier {
        ScriptedClassifier {
            answers: Mutex::new(VecDeque::new()),
            fallback: Some(answer),
            requests: Mutex::new(Vec::new()),
        }
    }

    /// The requests received, in order.
    pub fn requests(&self) -> Vec<ClassifyRequest> {
        lock(&self.requests).clone()
    }
}

#[async_trait::async_trait]
impl Classifier for ScriptedClassifier {
    async fn classify(&self, request: &ClassifyRequest) -> Result<Classification, ClassifyError> {
        lock(&self.requests).push(request.clone());
        let next = lock(&self.answers).pop_front();
        next.or_else(|| self.fallback.clone())
            .unwrap_or_else(|| Err(ClassifyError::Malformed("the script has no more answers".into())))
    }
}

/// A chat model that answers from two scripts (plain and structured), then fails with
/// `Unavailable`.
#[derive(Default)]
pub struct ScriptedChatModel {
    completions: Mutex<VecDeque<Result<ChatCompletion, LlmError>>>,
    structured: Mutex<VecDeque<Result<Value, LlmError>>>,
    chat_requests: Mutex<Vec<ChatRequest>>,
    structured_requests: Mutex<Vec<StructuredRequest>>,
}

impl ScriptedChatModel {
    /// A model with empty scripts.
    pub fn new() -> ScriptedChatModel {
        ScriptedChatModel::default()
    }

    /// Adds a plain answer.
    pub fn push_completion(&self, answer: Result<ChatCompletion, LlmError>) -> &ScriptedChatModel {
        lock(&self.completions).push_back(answer);
        self
    }

    /// Adds a plain text answer.
    pub fn push_text(&self, text: &str) -> &ScriptedChatModel {
        self.push_completion(Ok(ChatCompletion {
            content: Some(text.to_string()),
            ..ChatCompletion::default()
        }))
    }

    /// Adds a structured answer.
    pub fn push_structured(&self, answer: Result<Value, LlmError>) -> &ScriptedChatModel {
        lock(&self.structured).push_back(answer);
        self
    }

    /// The plain requests received.
    pub fn chat_requests(&self) -> Vec<ChatRequest> {
        lock(&self.chat_requests).clone()
    }

    /// The structured requests received.
    pub fn structured_requests(&self) -> Vec<StructuredRequest> {
        lock(&self.structured_requests).clone()
    }
}

fn exhausted() -> LlmError {
    LlmError::unavailable("the scripted model has no more answers")
}

#[async_trait::async_trait]
impl ChatModel for ScriptedChatModel {
    async fn complete(&self, request: &ChatRequest) -> Result<ChatCompletion, LlmError> {
        lock(&self.chat_requests).push(request.clone());
        let next = lock(&self.completions).pop_front();
        next.unwrap_or_else(|| Err(exhausted()))
    }

    async fn complete_structured(
        &self,
        request: &StructuredRequest,
    ) -> Result<StructuredCompletion, LlmError> {
        lock(&self.structured_requests).push(request.clone());
        let next = lock(&self.structured).pop_front();
        next.unwrap_or_else(|| Err(exhausted()))
            .map(|value| StructuredCompletion { value, usage: Usage { llm_calls: 1, ..Usage::default() } })
    }

    fn describe(&self) -> String {
        "scripted".to_string()
    }
}
