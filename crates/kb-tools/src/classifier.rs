//! [`LlmClassifier`]: the [`Classifier`] that asks a [`ChatModel`] for a structured answer
//! (JSON schema: category, confidence, name, the category's fields, tags), retries once on
//! an answer it cannot use, and fails after that.

use std::sync::Arc;

use kb_domain::fields::keys;
use kb_domain::{
    Category, Chain, ChatMessage, ChatModel, Confidence, Frontmatter, LlmError, StructuredRequest, Usage,
};
use serde_json::{Value, json};

use crate::ports::{Classification, Classifier, ClassifyError, ClassifyRequest};

/// How many times the model is asked before giving up.
const ATTEMPTS: usize = 2;

/// Classifies captures with a language model.
#[derive(Clone)]
pub struct LlmClassifier {
    model: Arc<dyn ChatModel>,
}

impl LlmClassifier {
    /// A classifier over `model`.
    pub fn new(model: Arc<dyn ChatModel>) -> LlmClassifier {
        LlmClassifier { model }
    }
}

impl std::fmt::Debug for LlmClassifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClassifier").field("model", &self.model.describe()).finish()
    }
}

/// The JSON schema of the classifier's answer (strict-mode friendly: every property
/// required, absent values as null, no extra keys).
pub fn classification_schema() -> Value {
    let text_or_null = json!({"type": ["string", "null"]});
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["category", "confidence", "name", "tags", "fields"],
        "properties": {
            "category": {"type": "string", "enum": ["people", "projects", "ideas", "admin"]},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "fields": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                    keys::CONTEXT, keys::FOLLOW_UPS, keys::STATUS, keys::NEXT_ACTION, keys::DUE_DATE, keys::ONE_LINER
                ],
                "properties": {
                    keys::CONTEXT: text_or_null,
                    keys::FOLLOW_UPS: {"type": "array", "items": {"type": "string"}},
                    keys::STATUS: text_or_null,
                    keys::NEXT_ACTION: text_or_null,
                    keys::DUE_DATE: text_or_null,
                    keys::ONE_LINER: text_or_null
                }
            }
        }
    })
}

/// The system prompt for one classification.
pub fn classifier_prompt(request: &ClassifyRequest) -> String {
    let mut prompt = format!(
        "You file a person's captured thought into their second brain. Categories:\n\
         - people: about a person (fields: context = how they know them, follow_ups = things to do with them)\n\
         - projects: something with a next step (fields: status = active|waiting|blocked|someday|done, \
         next_action = one concrete doable step, due_date)\n\
         - ideas: a thought worth keeping (fields: one_liner)\n\
         - admin: an errand, bill or paperwork (fields: status = pending|done, due_date)\n\
         Answer with the category, your confidence from 0 to 1 that it is right, a short name (2 to 6 words; \
         for a person, their name), up to 5 lowercase tags, and the fields of that category the text states \
         (null or [] for the rest). Dates are YYYY-MM-DD; today is {}.",
        request.today
    );
    if let Some(category) = request.forced_category {
        prompt.push_str(&format!("\nThe person marked this as {category}: use that category."));
    }
    prompt
}

#[async_trait::async_trait]
impl Classifier for LlmClassifier {
    async fn classify(&self, request: &ClassifyRequest) -> Result<Classification, ClassifyError> {
        let mut messages = vec![
            ChatMessage::System { content: classifier_prompt(request) },
            ChatMessage::User { content: request.text.clone() },
        ];
        let mut last_problem = String::new();
        let mut usage = Usage::default();
        for attempt in 1..=ATTEMPTS {
            let structured = StructuredRequest {
                messages: messages.clone(),
                schema_name: "classification".to_string(),
                schema: classification_schema(),
                today: Some(request.today),
                forced_category: request.forced_category,
            };
            let (answer, problem) = match self.model.complete_structured(&structured).await {
                Ok(completion) => match interpret(&completion.value, request) {
                    Ok(classification) => {
                        usage.add(completion.usage);
                        return Ok(Classification { usage, ..classification });
                    }
                    Err(problem) => {
                        usage.add(completion.usage);
                        (completion.value.to_string(), problem)
                    }
                },
                Err(error @ LlmError::Malformed { .. }) => {
                    (String::new(), format!("the answer was not JSON: {}", Chain(&error)))
                }
                Err(other) => return Err(other.into()),
            };
            tracing::warn!(attempt, problem = %problem, "classifier answer unusable");
            messages.push(ChatMessage::Assistant { content: Some(answer), tool_calls: Vec::new() });
            messages.push(ChatMessage::User {
                content: format!(
                    "That answer could not be used: {problem}. Answer again, following the schema exactly."
                ),
            });
            last_problem = problem;
        }
        Err(ClassifyError::Malformed(last_problem))
    }
}

/// Reads the model's answer into a classification, or says what is wrong with it.
pub fn interpret(value: &Value, request: &ClassifyRequest) -> Result<Classification, String> {
    let Value::Object(answer) = value else { return Err("the answer is not a JSON object".into()) };
    let category = match request.forced_category {
        Some(forced) => forced,
        None => {
            let text = answer.get("category").and_then(Value::as_str).ok_or("category is missing")?;
            Category::parse_loose(text)
                .filter(|c| *c != Category::Inbox)
                .ok_or_else(|| format!("category {text:?} is not one of people, projects, ideas, admin"))?
        }
    };
    let confidence = match request.forced_category {
        Some(_) => Confidence::CERTAIN,
        None => {
            let number = answer.get("confidence").and_then(Value::as_f64).ok_or("confidence is missing")?;
            Confidence::new(number).map_err(|e| e.to_string())?
        }
    };
    let name = answer
        .get("name")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .ok_or("name is missing")?
        .to_string();
    let tags = match answer.get("tags") {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    };
    let fields: Frontmatter = match answer.get("fields") {
        Some(Value::Object(map)) => map
            .iter()
            .filter(|(_, v)| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        _ => Frontmatter::new(),
    };
    Ok(Classification { category, confidence, name, fields, tags, usage: Usage::default() })
}
