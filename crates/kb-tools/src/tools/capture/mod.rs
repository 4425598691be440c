//! classify_and_capture: classify a thought and file it, into its category when the
//! classifier is sure enough (confidence >= threshold), into the inbox otherwise.
//!
//! A hint fixes the category with confidence 1.0; the classifier is still asked for the
//! name and fields, and if it fails the capture is filed anyway with a name made from the
//! text. Without a hint, a failed classification files nothing.
//!
//! A capture whose whole text is one `http(s)` link is the page it leads to: read (see
//! [`document`]) and filed as a note of its own, like any [`Document`] a capture is given.

pub mod document;

pub use document::Document;

use kb_domain::category::SUGGESTABLE;
use kb_domain::fields::{check_field, keys};
use kb_domain::{
    BodyEdit, BodyEditMode, BodyEditRequest, Category, Confidence, EntryUpdate, Frontmatter, NameRelation,
    NewEntry, Usage,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::args::FilingCategoryArg;
use crate::blocking::{run_blocking, run_change};
use crate::context::{ToolContext, ToolServices};
use crate::hints::{Hint, name_from_text, parse_hints};
use crate::ports::{Classification, ClassifyError, ClassifyRequest};
use crate::resolve::{Candidate, MAX_CANDIDATES, Resolution, Resolved, resolve_entry};
use crate::result::{Clarification, ErrorCode, StateUpdate, ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory, ToolHints};

/// Arguments of classify_and_capture.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CaptureArgs {
    /// The thought or information to capture, in the user's words.
    pub text: String,
    /// A category hint the user gave, like `[project]`, `[idea]`, `[admin]` or `[person:Sarah]`.
    pub hints: Option<String>,
    /// Add the capture to this existing entry (its path or name) instead of filing a new one: a dated
    /// line under its Log section. Use it when the person said the capture is about an entry that
    /// possibleDuplicate listed.
    #[serde(rename = "mergeInto")]
    pub merge_into: Option<String>,
    /// File a new entry even though a person or project of a similar name exists (the person said it is
    /// someone or something new).
    #[serde(rename = "createNew")]
    pub create_new: Option<bool>,
    /// Your own classification of the text, when you have made one: kb then files it as you say and asks
    /// no classifier. Below kb's confidence threshold it still goes to the inbox.
    pub classification: Option<CallerClassification>,
    /// A document to file (a mail, a file's text), given by kb itself, never by a caller:
    /// the classifier reads its beginning, the note keeps all of it.
    #[serde(skip)]
    #[schemars(skip)]
    pub document: Option<Document>,
}

/// A classification made by the caller (an MCP client's own model), taken instead of kb's.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CallerClassification {
    /// Where it belongs.
    pub category: FilingCategoryArg,
    /// How sure you are, from 0 to 1.
    pub confidence: f64,
    /// A short name for the entry (a person's full name, a project's title).
    pub name: String,
    /// The category's own fields you could fill.
    pub fields: Option<CallerFields>,
    /// Tags, lowercase.
    pub tags: Option<Vec<String>>,
}

/// The category fields a caller's classification may fill (those that do not belong to its
/// category are ignored).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct CallerFields {
    /// people: how the person is known.
    pub context: Option<String>,
    /// people: things to follow up with them.
    pub follow_ups: Option<Vec<String>>,
    /// projects (active, waiting, blocked, someday, done) or admin (todo, done).
    pub status: Option<String>,
    /// projects: the next concrete step.
    pub next_action: Option<String>,
    /// admin: when it is due, YYYY-MM-DD.
    pub due_date: Option<String>,
    /// ideas: the idea in one line.
    pub one_liner: Option<String>,
}

impl CallerClassification {
    /// The classification as kb's classifier would answer it, checked the same way.
    fn interpret(&self, request: &ClassifyRequest) -> Result<Classification, ToolError> {
        let category: Category = self.category.into();
        let answer = serde_json::json!({
            "category": category.as_str(),
            "confidence": self.confidence,
            "name": self.name,
            "tags": self.tags.clone().unwrap_or_default(),
            "fields": self.fields.clone().unwrap_or_default(),
        });
        crate::classifier::interpret(&answer, request).map_err(|problem| {
            ToolError::new(ErrorCode::InvalidArguments, format!("classification: {problem}"))
        })
    }
}

/// What classify_and_capture answers.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CaptureData {
    /// Where the entry was filed.
    pub path: String,
    /// The folder it was filed in (`inbox` when unsure).
    #[serde(serialize_with = "crate::output::category")]
    #[schemars(with = "crate::output::CategoryName")]
    pub category: Category,
    /// Its name.
    pub name: String,
    /// The classification's confidence.
    pub confidence: f64,
    /// Whether the assistant should ask the person where it belongs.
    pub clarification_needed: bool,
    /// The category the classifier suggested, for an inbox capture.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::output::optional_category")]
    #[schemars(with = "Option<crate::output::CategoryName>")]
    pub suggested_category: Option<Category>,
    /// Set when the capture was added to an existing entry (the same person or project) rather
    /// than filed as a new one.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub merged: bool,
    /// How a name given for mergeInto was resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Resolution>,
    /// The file kept for this capture in `attachments/` (an upload, a voice note), which
    /// the note links.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attachment: Option<String>,
}

/// The classify_and_capture tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClassifyAndCapture;

impl Tool for ClassifyAndCapture {
    const NAME: &'static str = "classify_and_capture";
    const DESCRIPTION: &'static str = "Classify a new thought and file it as an entry (person, project, idea or \
        admin task). Use when the user shares something new to remember: a fact, a task, an idea, something \
        about a person. A person or project that already exists under the same name (\"Priya\" for Priya Raman) \
        gets the capture added to its Log instead (merged: true). When clarificationNeeded is true, ask the user \
        where it belongs; when it answers possibleDuplicate, nothing was filed: ask whether it is one of those \
        entries (call again with mergeInto) or a new one (call again with createNew: true).";
    const CATEGORY: ToolCategory = ToolCategory::Agentic;
    // A link's page is read from the web.
    const HINTS: ToolHints = ToolHints { open_world: true, ..ToolHints::ADDITIVE };
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
        let mut document = args.document.clone();
        if person.is_some() && document.is_some() {
            return Err(ToolError::new(
                ErrorCode::InvalidArguments,
                "a file or a voice note is filed as a note of its own, never as a person: \
                 give [idea], [project] or [admin] instead of [person:…]",
            ));
        }
        // A link said about a person ("[person:Priya] https://…") is a line of their log.
        if document.is_none()
            && args.merge_into.is_none()
            && person.is_none()
            && let (Some(link), Some(pages)) = (document::single_link(&hinted.text), &services.pages)
        {
            document = Some(document::read_page(link, pages.as_ref(), services.clock.now()).await?);
        }
        if hinted.text.is_empty() && person.is_none() && document.is_none() {
            return Err(ToolError::new(
                ErrorCode::InvalidArguments,
                "text is empty: give the words to capture",
            ));
        }
        // A document's changes are recorded as coming from where it came from.
        let from_document = document.as_ref().map(|d| ctx.clone().with_source(d.source));
        let ctx = from_document.as_ref().unwrap_or(ctx);
        let request = ClassifyRequest {
            text: if let Some(document) = &document {
                document.classified_text()
            } else if hinted.text.is_empty() {
                person.clone().unwrap_or_default()
            } else {
                hinted.text.clone()
            },
            forced_category: hinted.hint.as_ref().map(|h| h.category),
            today: ctx.today,
        };
        let answer = match &args.classification {
            Some(theirs) => Ok(theirs.interpret(&request)?),
            None => services.classifier.classify(&request).await,
        };
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
                    clarification: None,
                });
            }
        };
        let certainty = Certainty::of(&decision, ctx);
        let confident = certainty == Certainty::Sure;
        if args.merge_into.is_some() && args.create_new.unwrap_or(false) {
            return Err(ToolError::new(
                ErrorCode::InvalidArguments,
                "mergeInto and createNew ask for opposite things: give one of them",
            ));
        }
        let (target, resolved) = match &args.merge_into {
            Some(reference) => {
                let Resolved { path, resolution } = resolve_entry(reference, "mergeInto", services).await?;
                (Some(path), resolution)
            }
            None if args.create_new.unwrap_or(false) || document.is_some() => (None, None),
            None if confident => (existing_entry(&decision, certainty, services).await?, None),
            // Unsure what it is, but named like one person or project: it is about them.
            None => (existing_entry(&decision, certainty, services).await.ok().flatten(), None),
        };
        let captured = Captured { text: &request.text, decision: &decision };
        if let Some(target) = target {
            return merge_capture(&target, captured, resolved, ctx, services).await;
        }
        if let Some(document) = document.as_mut() {
            document::distinct_title(document, &services.repository).await?;
        }
        let captured_as = Captured { text: &hinted.text, decision: &decision };
        let new = new_entry(captured_as, &request.text, document.as_ref(), certainty, ctx);
        let repo = services.repository.clone();
        let by = ctx.change(Self::NAME);
        // Kept once: the check for a namesake and the write are one step in the vault, so two
        // captures of one new person at the same moment do not file two entries.
        let unique = confident
            && KEPT_ONCE.contains(&decision.category)
            && !args.create_new.unwrap_or(false)
            && document.is_none();
        let created =
            run_change(
                move || if unique { repo.create_unique_as(new, &by) } else { repo.create_as(new, &by) },
            )
            .await?;
        let entry = match created {
            Ok(entry) => entry,
            Err(kb_domain::RepositoryError::NameTaken(_)) => {
                // Filed a moment ago by another capture: add to it (or ask, as for any namesake).
                return match existing_entry(&decision, Certainty::Sure, services).await? {
                    Some(target) => merge_capture(&target, captured, None, ctx, services).await,
                    None => Err(ToolError::new(
                        ErrorCode::PossibleDuplicate,
                        "an entry of that name was filed at the same moment: try again",
                    )),
                };
            }
            Err(kb_domain::RepositoryError::Field(problem)) => {
                return Err(ToolError::internal(format!("capture built an invalid entry: {problem}")));
            }
            Err(other) => return Err(other.into()),
        };
        let data = CaptureData {
            path: entry.path.to_string(),
            category: entry.category(),
            name: entry.name(),
            confidence: decision.confidence.value(),
            clarification_needed: !confident,
            suggested_category: (!confident && decision.category != Category::Inbox)
                .then_some(decision.category),
            merged: false,
            resolved: None,
            attachment: document
                .as_ref()
                .and_then(|d| d.fields.get(keys::ATTACHMENT))
                .and_then(Value::as_str)
                .map(str::to_string),
        };
        Ok(ToolOutput::with_updates(
            data,
            vec![
                StateUpdate::Filed { path: entry.path.clone(), confidence: decision.confidence },
                StateUpdate::ModelUsage(decision.usage),
            ],
        )
        .touching(entry.path))
    }
}

/// Categories whose entries are one thing each, so that a second capture about the same
/// one is added to it rather than filed again.
const KEPT_ONCE: [Category; 2] = [Category::People, Category::Projects];

/// The entry a capture of a person or project is about, if one already exists: the one
/// entry of that category with the same name or alias, else the one whose name begins or
/// is begun by the captured name ("Priya" and "Priya Raman"). Several such entries: a
/// `POSSIBLE_DUPLICATE` failure listing them, so the person is asked. A capture the
/// classifier was unsure of (filed in the inbox, maybe suggesting a category) is looked up
/// among people and projects alike.
async fn existing_entry(
    decision: &Classification,
    certainty: Certainty,
    services: &ToolServices,
) -> Result<Option<kb_domain::EntryPath>, ToolError> {
    let confident = certainty == Certainty::Sure;
    let categories: &[Category] = if !confident {
        &KEPT_ONCE
    } else if KEPT_ONCE.contains(&decision.category) {
        std::slice::from_ref(&decision.category)
    } else {
        return Ok(None);
    };
    if decision.name.trim().is_empty() {
        return Ok(None);
    }
    let repo = services.repository.clone();
    let name = decision.name.clone();
    let matches = run_blocking(move || repo.find_by_name(&name)).await??;
    let in_category: Vec<_> =
        matches.into_iter().filter(|m| categories.contains(&m.entry.category)).collect();
    let same: Vec<_> = in_category.iter().filter(|m| m.relation == NameRelation::Same).collect();
    // Unsure captures take a first-words match only for a person ("Priya" is Priya Raman;
    // "Shed" is not the project "Shed roof repair").
    let chosen: Vec<_> = if !same.is_empty() {
        same
    } else if confident {
        in_category.iter().collect()
    } else {
        in_category.iter().filter(|m| m.entry.category == Category::People).collect()
    };
    match chosen.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.entry.path.clone())),
        several => {
            let candidates: Vec<Candidate> =
                several.iter().take(MAX_CANDIDATES).map(|m| Candidate::from(m.entry.clone())).collect();
            let listed: Vec<String> = candidates.iter().map(|c| format!("{} ({})", c.name, c.path)).collect();
            Err(ToolError::new(
                ErrorCode::PossibleDuplicate,
                format!(
                    "Nothing was filed yet: “{}” may be one of the entries you already have: {}. Ask the person \
                     which one it is (then call again with mergeInto set to its path) or whether it is a new one \
                     (then call again with createNew: true).",
                    decision.name.trim(),
                    listed.join(", ")
                ),
            )
            .with_clarification(Clarification {
                key: "possibleDuplicate",
                candidates,
                argument: Some("mergeInto"),
                otherwise: Some(("new".to_string(), serde_json::json!({ "createNew": true }))),
            }))
        }
    }
}

/// How sure the classifier was of a capture: sure when it chose a category other than the
/// inbox with at least the confidence asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Certainty {
    /// Filed where the classifier said.
    Sure,
    /// Filed in the inbox, and the person is asked.
    Unsure,
}

impl Certainty {
    fn of(decision: &Classification, ctx: &ToolContext) -> Certainty {
        if decision.category != Category::Inbox && decision.confidence >= ctx.threshold {
            Certainty::Sure
        } else {
            Certainty::Unsure
        }
    }
}

/// What was captured: the person's text and how it was classified.
#[derive(Debug, Clone, Copy)]
struct Captured<'a> {
    text: &'a str,
    decision: &'a Classification,
}

/// Adds a capture to the entry it is about: the text as a dated line under `## Log`, list
/// fields (follow-ups, tags) united with the classification's, fields the entry lacks filled
/// in, and a person's `last_touched` set to today.
async fn merge_capture(
    target: &kb_domain::EntryPath,
    Captured { text, decision }: Captured<'_>,
    resolved: Option<Resolution>,
    ctx: &ToolContext,
    services: &ToolServices,
) -> Result<ToolOutput<CaptureData>, ToolError> {
    let repo = services.repository.clone();
    let at = target.clone();
    let entry = run_blocking(move || repo.get(&at)).await??;
    let category = entry.category();
    let mut fields = serde_json::Map::new();
    for spec in category
        .own_fields()
        .iter()
        .chain(kb_domain::category::COMMON_FIELDS.iter().filter(|f| f.name == keys::TAGS))
    {
        let wanted = if spec.name == keys::TAGS {
            Some(Value::Array(decision.tags.iter().map(|t| Value::String(t.trim().to_lowercase())).collect()))
        } else {
            decision.fields.get(spec.name).cloned()
        };
        let Some(wanted) = wanted.filter(|v| check_field(category, spec.name, v).is_ok()) else { continue };
        let current = entry.frontmatter.get(spec.name);
        match (current, &wanted) {
            (Some(Value::Array(have)), Value::Array(more)) => {
                let mut united = have.clone();
                for item in more {
                    if !united.contains(item) && item.as_str().is_none_or(|t| !t.trim().is_empty()) {
                        united.push(item.clone());
                    }
                }
                if united.len() > have.len() {
                    fields.insert(spec.name.to_string(), Value::Array(united));
                }
            }
            (None | Some(Value::Null), Value::Array(more)) if more.is_empty() => {}
            (None | Some(Value::Null), _) => {
                fields.insert(spec.name.to_string(), wanted);
            }
            _ => {}
        }
    }
    if category.field(keys::LAST_TOUCHED).is_some() {
        fields.insert(keys::LAST_TOUCHED.to_string(), Value::String(ctx.today.to_string()));
    }
    let invalid = |message: String| ToolError::new(ErrorCode::InvalidUpdate, message);
    let mut update = EntryUpdate::from_json_object(fields).map_err(|e| invalid(e.to_string()))?;
    update.body = Some(log_line(text, ctx.today).map_err(|e| invalid(e.to_string()))?);
    let repo = services.repository.clone();
    let by = ctx.change(ClassifyAndCapture::NAME);
    let at = target.clone();
    let outcome = run_change(move || repo.update_as(&at, &update, &by)).await??;
    let path = outcome.entry.path.clone();
    Ok(ToolOutput {
        data: CaptureData {
            path: path.to_string(),
            category,
            name: outcome.entry.name(),
            confidence: decision.confidence.value(),
            clarification_needed: false,
            suggested_category: None,
            merged: true,
            resolved,
            attachment: None,
        },
        state_updates: vec![
            StateUpdate::Filed { path: path.clone(), confidence: decision.confidence },
            StateUpdate::ModelUsage(decision.usage),
        ],
        touched: Some(path),
    })
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

/// The edit that adds `text` (spaces collapsed) as today's dated line under `## Log`.
fn log_line(text: &str, today: chrono::NaiveDate) -> Result<BodyEdit, kb_domain::BodyEditError> {
    let request = BodyEditRequest {
        mode: BodyEditMode::Section,
        content: text.split_whitespace().collect::<Vec<_>>().join(" "),
        section: Some("Log".to_string()),
        find: None,
        expected_replacements: None,
    };
    BodyEdit::from_request(request, today)
}

/// The entry to create: in its category with the person's words as the body (a person's
/// or project's as the first dated line of its `## Log`), or in the inbox with them as
/// `original_text`. A document's text is the body wherever it is filed, with its fields.
fn new_entry(
    Captured { text: said, decision }: Captured<'_>,
    text: &str,
    document: Option<&Document>,
    certainty: Certainty,
    ctx: &ToolContext,
) -> NewEntry {
    let confident = certainty == Certainty::Sure;
    let suggested = decision.category;
    let mut fields = Frontmatter::new();
    // Only the suggested category's own fields, and only values that fit them: the
    // classifier is an LLM and its answer is not trusted.
    for spec in suggested.own_fields() {
        let Some(value) = decision.fields.get(spec.name) else { continue };
        let inbox_only = !confident && spec.name == keys::STATUS;
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
        fields.set(keys::TAGS, Value::Array(tags));
    }
    fields.set(
        keys::CONFIDENCE,
        serde_json::Number::from_f64(decision.confidence.value()).map_or(Value::Null, Value::Number),
    );
    fields.set(keys::SOURCE, Value::String(ctx.source.as_str().to_string()));
    // A document is named by its own title (a page's, a mail's subject), else as any capture.
    let name = if let Some(title) = document.and_then(|d| d.title.clone()).filter(|t| !t.trim().is_empty()) {
        title
    } else if !decision.name.trim().is_empty() {
        decision.name.clone()
    } else {
        name_from_text(text)
    };
    if let Some(document) = document {
        for (key, value) in document.fields.iter() {
            fields.set(key, value.clone());
        }
        let category = if confident { suggested } else { Category::Inbox };
        if !confident {
            let said = if said.is_empty() { document.title.as_deref().unwrap_or_default() } else { said };
            // The note holds the document; its first words say what was sent.
            let said: String = said.chars().take(200).collect();
            fields.set(keys::ORIGINAL_TEXT, Value::String(said));
            if SUGGESTABLE.contains(&suggested.as_str()) {
                fields.set(keys::SUGGESTED_CATEGORY, Value::String(suggested.as_str().to_string()));
            }
        }
        return NewEntry { category, name, fields, body: document.body() };
    }
    if confident {
        // A person or project is a log of what was said about it, from the first capture on.
        let logged =
            KEPT_ONCE.contains(&suggested).then(|| log_line(text, ctx.today).and_then(|e| e.apply("")));
        let body = match logged {
            Some(Ok(log)) => log,
            _ => format!("{text}\n"),
        };
        NewEntry { category: suggested, name, fields, body }
    } else {
        fields.set(keys::ORIGINAL_TEXT, Value::String(text.to_string()));
        if SUGGESTABLE.contains(&suggested.as_str()) {
            fields.set(keys::SUGGESTED_CATEGORY, Value::String(suggested.as_str().to_string()));
        }
        NewEntry { category: Category::Inbox, name, fields, body: String::new() }
    }
}
