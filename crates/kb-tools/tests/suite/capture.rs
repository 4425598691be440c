//! classify_and_capture with scripted classifiers and chat models.

use std::sync::Arc;

use kb_domain::{Category, Confidence, EntryPath, EntryReader, EntryRepository, LlmError};
use kb_tools::testing::{ScriptedChatModel, ScriptedClassifier};
use kb_tools::{ClassifyError, ErrorCode, LlmClassifier, StateUpdate};
use serde_json::json;

use super::support::*;

fn get(repo: &dyn EntryRepository, path: &str) -> kb_domain::Entry {
    repo.get(&EntryPath::parse(path).unwrap()).unwrap()
}

#[tokio::test]
async fn a_confident_capture_is_filed_in_its_category() {
    let classifier =
        ScriptedClassifier::new(vec![Ok(classification(Category::Projects, 0.87, "ClientCo integration"))]);
    let (services, repo) = services_with(Arc::new(classifier), None);
    let text = "Email Sarah the API spec for ClientCo";
    let result = call(&services, &ctx(), "classify_and_capture", json!({"text": text})).await;
    assert_eq!(
        data_of(&result),
        &json!({"path": "projects/clientco-integration.md", "category": "projects", "name": "ClientCo integration",
                "confidence": 0.87, "clarificationNeeded": false})
    );
    let entry = get(repo.as_ref(), "projects/clientco-integration.md");
    // A project gathers what is said about it: the capture is the first line of its Log.
    assert_eq!(entry.body, format!("## Log\n\n- {}: {text}\n", today().format("%Y-%m-%d")));
    assert_eq!(entry.summary_line(), text);
    assert_eq!(entry.frontmatter.get_str("source"), Some("chat"));
    assert_eq!(entry.frontmatter.get_str("status"), Some("active"));
    assert_eq!(entry.tags(), ["tag"]);
    assert_eq!(entry.confidence(), Some(Confidence::new(0.87).unwrap()));
    assert_eq!(
        result.state_updates,
        [
            StateUpdate::Filed { path: entry.path.clone(), confidence: Confidence::new(0.87).unwrap() },
            StateUpdate::ModelUsage(kb_domain::Usage::default()),
        ]
    );
    assert_eq!(result.filed().map(|(p, c)| (p.to_string(), c.value())), Some((entry.path.to_string(), 0.87)));
}

#[tokio::test]
async fn an_unsure_capture_goes_to_the_inbox_and_asks() {
    let mut answer = classification(Category::Projects, 0.4, "Garden shed");
    answer.fields.set("status", json!("active"));
    answer.fields.set("next_action", json!("Measure the garden"));
    let (services, repo) = services_with(Arc::new(ScriptedClassifier::new(vec![Ok(answer)])), None);
    let text = "maybe build a shed this spring";
    let result = call(&services, &ctx(), "classify_and_capture", json!({"text": text})).await;
    let data = data_of(&result);
    assert_eq!(data["path"], "inbox/garden-shed.md");
    assert_eq!(data["category"], "inbox");
    assert_eq!(data["clarificationNeeded"], true);
    assert_eq!(data["suggestedCategory"], "projects");
    let entry = get(repo.as_ref(), "inbox/garden-shed.md");
    assert_eq!(entry.frontmatter.get_str("original_text"), Some(text));
    assert_eq!(entry.frontmatter.get_str("suggested_category"), Some("projects"));
    assert_eq!(entry.frontmatter.get("confidence"), Some(&json!(0.4)));
    assert_eq!(entry.frontmatter.get_str("next_action"), Some("Measure the garden"));
    assert!(entry.status().is_none(), "an inbox entry has no status");
}

#[tokio::test]
async fn a_hint_fixes_the_category_with_full_confidence() {
    let classifier = Arc::new(ScriptedClassifier::new(vec![
        Ok(classification(Category::Projects, 0.2, "Shed thoughts")),
        Err(ClassifyError::Llm(LlmError::unavailable("down"))),
        Err(ClassifyError::Malformed("junk".into())),
    ]));
    let (services, repo) = services_with(classifier.clone(), None);
    let strict = ctx().with_threshold(Confidence::CERTAIN);

    let r = call(&services, &strict, "classify_and_capture", json!({"text": "[Idea] a shed made of glass"}))
        .await;
    assert_eq!(data_of(&r)["path"], "ideas/shed-thoughts.md");
    assert_eq!(data_of(&r)["confidence"], 1.0);
    assert_eq!(data_of(&r)["clarificationNeeded"], false);
    assert_eq!(classifier.requests()[0].forced_category, Some(Category::Ideas));
    assert_eq!(classifier.requests()[0].text, "a shed made of glass");
    // An idea's notes are the words as given (only people and projects keep a Log).
    assert_eq!(get(repo.as_ref(), "ideas/shed-thoughts.md").body, "a shed made of glass\n");

    // The classifier is down: a hinted capture still files, named from the text.
    let r = call(
        &services,
        &strict,
        "classify_and_capture",
        json!({"text": "Renew passport by Dec 15", "hints": "admin"}),
    )
    .await;
    assert_eq!(data_of(&r)["path"], "admin/renew-passport-by-dec-15.md");
    assert_eq!(get(repo.as_ref(), "admin/renew-passport-by-dec-15.md").status(), Some("pending"));

    let r = call(
        &services,
        &strict,
        "classify_and_capture",
        json!({"text": "met at the conference [person:Sarah Lee]"}),
    )
    .await;
    assert_eq!(data_of(&r)["path"], "people/sarah-lee.md");
    assert_eq!(get(repo.as_ref(), "people/sarah-lee.md").name(), "Sarah Lee");
    assert_eq!(repo.len(), 3);
}

#[tokio::test]
async fn a_failed_classification_files_nothing() {
    let classifier = ScriptedClassifier::new(vec![Err(ClassifyError::Malformed("junk".into()))]);
    let (services, repo) = services_with(Arc::new(classifier), None);
    let r = call(&services, &ctx(), "classify_and_capture", json!({"text": "something"})).await;
    assert_eq!(r.error_code, Some(ErrorCode::ClassificationFailed));
    assert!(error_of(&r).contains("nothing was filed"));
    assert!(r.state_updates.is_empty());
    assert!(repo.is_empty());
    let r = call(&services, &ctx(), "classify_and_capture", json!({"text": "  [project] "})).await;
    assert!(error_of(&r).contains("text is empty"));
    assert!(repo.is_empty());
}

fn good_answer() -> serde_json::Value {
    json!({"category": "admin", "confidence": 0.9, "name": "Renew passport", "tags": ["travel"],
           "fields": {"context": null, "follow_ups": [], "status": "pending", "next_action": null,
                      "due_date": "2026-12-15", "one_liner": null}})
}

#[tokio::test]
async fn the_llm_classifier_retries_once_on_a_malformed_answer() {
    let model = Arc::new(ScriptedChatModel::new());
    model.push_structured(Ok(json!({"category": "errands", "confidence": 0.9, "name": "x"})));
    model.push_structured(Ok(good_answer()));
    let (services, repo) = services_with(Arc::new(LlmClassifier::new(model.clone())), None);
    let r =
        call(&services, &ctx(), "classify_and_capture", json!({"text": "renew my passport by Dec 15"})).await;
    assert_eq!(data_of(&r)["path"], "admin/renew-passport.md");
    let entry = get(repo.as_ref(), "admin/renew-passport.md");
    assert_eq!(entry.frontmatter.get_str("due_date"), Some("2026-12-15"));
    assert_eq!(entry.tags(), ["travel"]);
    let requests = model.structured_requests();
    assert_eq!(requests.len(), 2);
    let retry = format!("{:?}", requests[1].messages.last().unwrap());
    assert!(retry.contains("could not be used") && retry.contains("errands"), "{retry}");
    assert_eq!(
        requests[0].schema["properties"]["category"]["enum"],
        json!(["people", "projects", "ideas", "admin"])
    );
    assert!(format!("{:?}", requests[0].messages[0]).contains("2026-11-21"));
    // The date the prompt states is also data on every attempt, for models that read data.
    assert!(requests.iter().all(|r| r.today == Some(today()) && r.forced_category.is_none()));
}

#[tokio::test]
async fn the_llm_classifier_sends_the_hint_as_data_too() {
    let model = Arc::new(ScriptedChatModel::new());
    model.push_structured(Ok(json!({"category": "projects", "confidence": 1, "name": "Website redesign",
        "tags": [], "fields": {"context": null, "follow_ups": [], "status": "active", "next_action": null,
        "due_date": null, "one_liner": null}})));
    let (services, _repo) = services_with(Arc::new(LlmClassifier::new(model.clone())), None);
    let r =
        call(&services, &ctx(), "classify_and_capture", json!({"text": "[project] Website redesign"})).await;
    assert_eq!(data_of(&r)["category"], "projects", "{r:?}");
    let request = &model.structured_requests()[0];
    assert!(format!("{:?}", request.messages[0]).contains("marked this as projects"));
    assert_eq!((request.today, request.forced_category), (Some(today()), Some(Category::Projects)));
}

#[tokio::test]
async fn the_llm_classifier_gives_up_after_two_malformed_answers() {
    let model = Arc::new(ScriptedChatModel::new());
    model.push_structured(Ok(json!("not an object")));
    model.push_structured(Err(LlmError::malformed("truncated json")));
    model.push_structured(Ok(good_answer()));
    let (services, repo) = services_with(Arc::new(LlmClassifier::new(model.clone())), None);
    let r = call(&services, &ctx(), "classify_and_capture", json!({"text": "renew my passport"})).await;
    assert_eq!(r.error_code, Some(ErrorCode::ClassificationFailed));
    assert_eq!(model.structured_requests().len(), 2);
    assert!(repo.is_empty());

    // An unreachable model is not retried here (the adapter retries its own transport).
    let model = Arc::new(ScriptedChatModel::new());
    model.push_structured(Err(LlmError::unavailable("connection refused")));
    let (services, repo) = services_with(Arc::new(LlmClassifier::new(model.clone())), None);
    let r = call(&services, &ctx(), "classify_and_capture", json!({"text": "renew my passport"})).await;
    assert_eq!(r.error_code, Some(ErrorCode::ClassificationFailed));
    assert_eq!(model.structured_requests().len(), 1);
    assert!(repo.is_empty());
}

#[tokio::test]
async fn untrusted_fields_from_the_classifier_are_dropped_not_fatal() {
    let mut answer = classification(Category::Projects, 0.95, "Launch");
    answer.fields.set("status", json!("pending"));
    answer.fields.set("due_date", json!("next tuesday"));
    answer.fields.set("next_action", json!("Write the post"));
    answer.fields.set("related_people", json!(["../../etc/passwd"]));
    let (services, repo) = services_with(Arc::new(ScriptedClassifier::new(vec![Ok(answer)])), None);
    let r = call(&services, &ctx(), "classify_and_capture", json!({"text": "launch the blog"})).await;
    let entry = get(repo.as_ref(), data_of(&r)["path"].as_str().unwrap());
    assert_eq!(entry.status(), Some("active"));
    assert_eq!(entry.frontmatter.get_str("next_action"), Some("Write the post"));
    assert!(!entry.frontmatter.contains("due_date") && !entry.frontmatter.contains("related_people"));
}

#[tokio::test]
async fn a_callers_classification_is_filed_as_given_without_asking_the_classifier() {
    let classifier = Arc::new(ScriptedClassifier::new(vec![]));
    let (services, repo) = services_with(classifier.clone(), None);
    let mcp = ctx().with_source(kb_tools::CaptureSource::Mcp);
    let theirs = json!({"text": "Renew the passport before the trip", "classification": {
        "category": "admin", "confidence": 0.9, "name": "Renew passport",
        "fields": {"due_date": "2026-12-15", "context": "ignored: not an admin field"}, "tags": ["travel"]}});
    let result = call(&services, &mcp, "classify_and_capture", theirs).await;
    assert_eq!(data_of(&result)["path"], "admin/renew-passport.md");
    assert_eq!(data_of(&result)["confidence"], 0.9);
    assert!(classifier.requests().is_empty(), "no classifier was asked");
    let entry = get(repo.as_ref(), "admin/renew-passport.md");
    assert_eq!(entry.frontmatter.get_str("due_date"), Some("2026-12-15"));
    assert_eq!(entry.frontmatter.get_str("source"), Some("mcp"));
    assert_eq!(entry.tags(), ["travel"]);

    // Unsure: the inbox, as for kb's own classifier.
    let unsure = json!({"text": "a shed, maybe", "classification": {
        "category": "projects", "confidence": 0.3, "name": "Garden shed"}});
    let result = call(&services, &mcp, "classify_and_capture", unsure).await;
    assert_eq!(data_of(&result)["path"], "inbox/garden-shed.md");
    assert_eq!(data_of(&result)["suggestedCategory"], "projects");

    // A confidence out of range, an unknown category: refused, nothing filed.
    for bad in [
        json!({"category": "ideas", "confidence": 1.5, "name": "Glass shed"}),
        json!({"category": "recipes", "confidence": 0.9, "name": "Glass shed"}),
        json!({"category": "ideas", "confidence": 0.9, "name": "  "}),
    ] {
        let result = call(
            &services,
            &mcp,
            "classify_and_capture",
            json!({"text": "a glass shed", "classification": bad}),
        )
        .await;
        assert_eq!(result.error_code, Some(ErrorCode::InvalidArguments), "{bad}");
    }
    assert!(repo.get(&EntryPath::parse("ideas/glass-shed.md").unwrap()).is_err());
    assert!(classifier.requests().is_empty());
}
