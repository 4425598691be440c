//! classify_and_capture: classify a thought and file it, into its category when the
//! classifier is sure enough (confidence >= threshold), into the inbox otherwise.
//!
//! A hint fixes the category with confidence 1.0; the classifier is still asked for the
//! name and fields, and if it fails the capture is filed anyway with a name made from the
//! text. Without a hint, a failed classification files nothing.

use kb_domain::category::SUGGESTABLE;
use kb_domain::fields::check_field;
use kb_domain::{Category, Confidence, Frontmatter, NewEntry, Usage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::blocking::run_blocking;
use crate::context::{ToolContext, ToolServices};
use crate::hints::{Hint, name_from_text, parse_hints};
use crate::ports::{Classification, ClassifyError, ClassifyRequest};
use crate::result::{ErrorCode, StateUpdate, ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory};

/// Arguments of classify_and_capture.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CaptureArgs {
    /// The thought or information to capture, in the user's words.
    pub text: String,
    /// A category hint the user gave, like [project], [idea], [admin] or [person:Sarah].
    pub hints: Option<String>,
}

/// What classify_and_capture answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaptureData {
    /// Where the entry was filed.
    pub path: String,
    /// The folder it was filed in (`inbox` when unsure).
    pub category: Category,
    /// Its name.
    pub name: String,
    /// The classification's confidence.
    pub confidence: f64,
    /// Whether the assistant should ask the person where it belongs.
    pub clarification_needed: bool,
    /// The category the classifier suggested, for an inbox capture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggested_category: Option<Category>,
}

/// The classify_and_capture tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClassifyAndCapture;

impl Tool for ClassifyAndCapture {
    const NAME: &'static str = "classify_and_capture";
    const DESCRIPTION: &'static str = "Classify a new thought and file it as an entry (person, project, idea or \
        admin task). Use when the user shares something new to remember: a fact, a task, an idea, something \
        about a person. When clarificationNeeded is true, ask the user where it belongs.";
    const CATEGORY: ToolCategory = ToolCategory::Agentic;
    type Args = CaptureArgs;
    type Output = CaptureData;

    async fn run(
        &self,
        args: CaptureArgs,
        ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<CaptureData>, ToolError> {
        let hinted = parse_hints(&args.text, args.hints.as_deref());
        let person = hinted.hint.as_ref().and_then(|h| h.person.clone());
        if hinted.text.is_empty() && person.is_none() {
            return Err(ToolError::new(
                ErrorCode::InvalidArguments,
                "text is empty: give the words to capture",
            ));
        }
        let request = ClassifyRequest {
            text: if hinted.text.is_empty() {
                person.clone().unwrap_or_default()
            } else {
                hinted.text.clone()
            },
            forced_category: hinted.hint.as_ref().map(|h| h.category),
            today: ctx.today,
        };
        let answer = services.classifier.classify(&request).await;
        let decision = match (hinted.hint, answer) {
            (Some(hint), answer) => forced(hint, answer.ok(), &request.text),
            (None, Ok(classification)) => classification,
            (None, Err(e)) => {
                tracing::warn!(error = %e, "classification failed; nothing filed");
                return Err(ToolError {
                    message: "could not classify the text, so nothing was filed: try again, or give a hint \
                              such as [project], [idea], [admin] or [person:Name]"
                        .into(),
                    code: ErrorCode::ClassificationFailed,
                    detail: Some(e.to_string()),
                    model_error: match e {
                        ClassifyError::Llm(cause) => Some(cause),
                        ClassifyError::Malformed(_) => None,
                    },
                });
            }
        };
        let confident = decision.category != Category::Inbox && decision.confidence >= ctx.threshold;
        let new = new_entry(&decision, &request.text, confident, ctx);
        let repo = services.repository.clone();
        let by = ctx.change(Self::NAME);
        let entry = run_blocking(move || repo.create_as(new, &by)).await?.map_err(|e| match e {
            kb_domain::RepositoryError::Field(problem) => {
                ToolError::internal(format!("capture built an invalid entry: {problem}"))
            }
            other => other.into(),
        })?;
        let data = CaptureData {
            path: entry.path.to_string(),
            category: entry.category(),
            name: entry.name(),
            confidence: decision.confidence.value(),
            clarification_needed: !confident,
            suggested_category: (!confident && decision.category != Category::Inbox)
                .then_some(decision.category),
        };
        Ok(ToolOutput {
            data,
            state_updates: vec![
                StateUpdate::Filed { path: entry.path, confidence: decision.confidence },
                StateUpdate::ModelUsage(decision.usage),
            ],
        })
    }
}

/// The decision for a hinted capture: the hint's category at full confidence, the
/// classifier's name, fields and tags when it answered.
fn forced(hint: Hint, answer: Option<Classification>, text: &str) -> Classification {
    let (name, fields, tags, usage) = match answer {
        Some(c) => (c.name, c.fields, c.tags, c.usage),
        None => (String::new(), Frontmatter::new(), Vec::new(), Usage::default()),
    };
    let name =
        hint.person.or(Some(name).filter(|n| !n.trim().is_empty())).unwrap_or_else(|| name_from_text(text));
    Classification { category: hint.category, confidence: Confidence::CERTAIN, name, fields, tags, usage }
}

/// The entry to create: in its category with the person's words as the body, or in the
/// inbox with them as `original_text`.
fn new_entry(decision: &Classification, text: &str, confident: bool, ctx: &ToolContext) -> NewEntry {
    let suggested = decision.category;
    let mut fields = Frontmatter::new();
    // Only the suggested category's own fields, and only values that fit them: the
    // classifier is an LLM and its answer is not trusted.
    for spec in suggested.own_fields() {
        let Some(value) = decision.fields.get(spec.name) else { continue };
        let inbox_only = !confident && spec.name == "status";
        if !inbox_only && check_field(suggested, spec.name, value).is_ok() {
            fields.set(spec.name, value.clone());
        }
    }
    let mut tags: Vec<Value> = Vec::new();
    for tag in &decision.tags {
        let tag = Value::String(tag.trim().to_lowercase());
        if tag.as_str().is_some_and(|t| !t.is_empty()) && !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    if !tags.is_empty() {
        fields.set("tags", Value::Array(tags));
    }
    fields.set(
        "confidence",
        serde_json::Number::from_f64(decision.confidence.value()).map_or(Value::Null, Value::Number),
    );
    fields.set("source", Value::String(ctx.source.as_str().to_string()));
    let name = if decision.name.trim().is_empty() { name_from_text(text) } else { decision.name.clone() };
    if confident {
        NewEntry { category: suggested, name, fields, body: format!("{text}\n") }
    } else {
        fields.set("original_text", Value::String(text.to_string()));
        if SUGGESTABLE.contains(&suggested.as_str()) {
            fields.set("suggested_category", Value::String(suggested.as_str().to_string()));
        }
        NewEntry { category: Category::Inbox, name, fields, body: String::new() }
    }
}
