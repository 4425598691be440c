//! Shared fixtures: a fixed time, contexts, classifications and services over the fakes.

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use kb_domain::{Category, Confidence, Entry, EntryPath, Frontmatter};
use kb_tools::testing::{MemoryRepository, ScriptedClassifier, memory_services};
use kb_tools::{Classification, Classifier, DigestWriter, ToolContext, ToolResult, ToolServices};

pub fn now() -> DateTime<Utc> {
    "2026-11-21T09:00:00Z".parse().unwrap()
}

pub fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 21).unwrap()
}

pub fn ctx() -> ToolContext {
    ToolContext::new(today())
}

pub fn classification(category: Category, confidence: f64, name: &str) -> Classification {
    Classification {
        category,
        confidence: Confidence::new(confidence).unwrap(),
        name: name.to_string(),
        fields: Frontmatter::new(),
        tags: vec!["Tag".into()],
        usage: kb_domain::Usage::default(),
    }
}

pub fn services_with(
    classifier: Arc<dyn Classifier>,
    writer: Option<Arc<dyn DigestWriter>>,
) -> (ToolServices, Arc<MemoryRepository>) {
    memory_services(classifier, writer, now())
}

pub fn services() -> (ToolServices, Arc<MemoryRepository>) {
    services_with(Arc::new(ScriptedClassifier::new(vec![])), None)
}

pub fn seed(repo: &MemoryRepository, path: &str, text: &str) -> Entry {
    let entry = Entry::from_document(EntryPath::parse(path).unwrap(), text).unwrap();
    repo.insert(entry.clone());
    entry
}

pub async fn call(
    services: &ToolServices,
    ctx: &ToolContext,
    tool: &str,
    args: serde_json::Value,
) -> ToolResult {
    let registry = kb_tools::standard_registry().unwrap();
    registry.execute(tool, &args.to_string(), ctx, services).await
}

pub fn error_of(result: &ToolResult) -> &str {
    assert!(!result.success, "expected a failure, got {result:?}");
    result.error.as_deref().unwrap()
}

pub fn data_of(result: &ToolResult) -> &serde_json::Value {
    assert!(result.success, "expected success, got {result:?}");
    result.data.as_ref().unwrap()
}
