#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The offline model as the chat loop sees it: plain-English messages routed to the right
//! tool with the right arguments, tool results described in sentences, and the capture
//! classifier's structured answers.

use std::sync::Arc;

use chrono::{NaiveDate, TimeZone, Utc};
use kb_domain::{
    Category, ChatCompletion, ChatMessage, ChatModel, ChatRequest, FixedClock, StructuredRequest, ToolCall,
    ToolDefinition,
};
use kb_llm::offline::OfflineModel;
use serde_json::{Value, json};

const TOOLS: [&str; 7] = [
    "classify_and_capture",
    "list_entries",
    "get_entry",
    "generate_digest",
    "update_entry",
    "move_entry",
    "search_entries",
];
const SYSTEM: &str = "You are a personal knowledge management assistant. Today is Saturday, 2026-11-21.";

/// The date the requests carry (the prompt says it too; the model's clock says 2030).
fn today() -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(2026, 11, 21)
}

/// The real tool definitions of kb-tools, only those named.
fn tools(names: &[&str]) -> Vec<ToolDefinition> {
    let all = kb_tools::standard_registry().unwrap().definitions();
    names.iter().map(|n| all.iter().find(|d| d.name == *n).unwrap().clone()).collect()
}

/// The argument errors kb-tools would report for a call.
fn argument_errors(call: &ToolCall) -> Vec<String> {
    let args: Value = serde_json::from_str(&call.arguments).unwrap();
    kb_tools::validate::check_arguments(&tools(&[call.name.as_str()])[0].parameters, &args)
}

/// A conversation in which `inbox/x.md` was just captured, then `message`.
fn after_capture(message: &str) -> Vec<ChatMessage> {
    let call =
        ToolCall { id: "offline-1".into(), name: "classify_and_capture".into(), arguments: "{}".into() };
    let result = json!({"success": true, "data": {"path": "inbox/x.md", "category": "inbox", "name": "X",
        "confidence": 0.3, "clarificationNeeded": true}});
    vec![
        ChatMessage::System { content: SYSTEM.into() },
        ChatMessage::User { content: "something vague".into() },
        ChatMessage::Assistant { content: None, tool_calls: vec![call] },
        ChatMessage::Tool { tool_call_id: "offline-1".into(), content: result.to_string() },
        ChatMessage::Assistant { content: Some("I put “X” in the inbox.".into()), tool_calls: vec![] },
        ChatMessage::User { content: message.into() },
    ]
}

fn fresh(message: &str) -> Vec<ChatMessage> {
    vec![ChatMessage::System { content: SYSTEM.into() }, ChatMessage::User { content: message.into() }]
}

fn model() -> OfflineModel {
    OfflineModel::with_clock(Arc::new(FixedClock(Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0).unwrap())))
}

async fn complete(messages: Vec<ChatMessage>, offered: &[&str]) -> ChatCompletion {
    model().complete(&ChatRequest { messages, tools: tools(offered), today: today() }).await.unwrap()
}

async fn route(message: &str) -> (String, Value) {
    let answer = complete(after_capture(message), &TOOLS).await;
    assert_eq!(answer.tool_calls.len(), 1, "{message:?} gave no single tool call: {answer:?}");
    let call = &answer.tool_calls[0];
    assert_eq!(call.id, "offline-2", "{message:?}");
    assert_eq!(argument_errors(call), Vec::<String>::new(), "{message:?}: {}", call.arguments);
    let args: Value = serde_json::from_str(&call.arguments).unwrap();
    (call.name.clone(), args)
}

#[tokio::test]
async fn plain_english_reaches_the_right_tool_with_the_right_arguments() {
    let table: Vec<(&str, &str, Value)> = vec![
        // captures
        (
            "met Priya at the robotics meetup",
            "classify_and_capture",
            json!({"text": "met Priya at the robotics meetup"}),
        ),
        ("renew passport by Dec 15", "classify_and_capture", json!({"text": "renew passport by Dec 15"})),
        ("idea: a podcast about urban gardening", "classify_and_capture", json!({"hints": "[idea]"})),
        ("Remind me to call the dentist tomorrow", "classify_and_capture", json!({})),
        (
            "[project] Website redesign",
            "classify_and_capture",
            json!({"text": "Website redesign", "hints": "[project]"}),
        ),
        ("Sarah from ClientCo prefers email over calls", "classify_and_capture", json!({})),
        ("what if we built a tiny app for sharing tools with neighbours", "classify_and_capture", json!({})),
        ("hi, had coffee with Marcus, he wants an intro to Dana", "classify_and_capture", json!({})),
        // lists
        ("list my projects", "list_entries", json!({"category": "projects"})),
        ("show people", "list_entries", json!({"category": "people"})),
        ("what's in the inbox?", "list_entries", json!({"category": "inbox"})),
        ("open admin items", "list_entries", json!({"category": "admin", "status": "pending"})),
        ("show me my ideas", "list_entries", json!({"category": "ideas"})),
        ("Which projects are blocked?", "list_entries", json!({"category": "projects", "status": "blocked"})),
        ("how many people do I have", "list_entries", json!({"category": "people"})),
        ("show my 5 latest ideas", "list_entries", json!({"category": "ideas", "limit": 5})),
        ("find my projects", "list_entries", json!({"category": "projects"})),
        // one entry
        ("show projects/clientco.md", "get_entry", json!({"path": "projects/clientco.md"})),
        ("open ideas/x.md", "get_entry", json!({"path": "ideas/x.md"})),
        (
            "projects/clientco-integration.md",
            "get_entry",
            json!({"path": "projects/clientco-integration.md"}),
        ),
        ("Can you show me `people/priya.md`?", "get_entry", json!({"path": "people/priya.md"})),
        ("show me that", "get_entry", json!({"path": "inbox/x.md"})),
        // searches
        ("find Priya", "search_entries", json!({"query": "Priya"})),
        ("search for passport renewal", "search_entries", json!({"query": "passport renewal"})),
        ("anything about the robotics meetup?", "get_entry", json!({"path": "the robotics meetup"})),
        // A question about someone shows their entry whole (the tool resolves the name).
        ("what do I know about Priya", "get_entry", json!({"path": "Priya"})),
        ("look up ClientCo", "search_entries", json!({"query": "ClientCo"})),
        ("who is Dana?", "get_entry", json!({"path": "Dana"})),
        ("search ideas for gardening", "search_entries", json!({"query": "gardening", "category": "ideas"})),
        ("find drones in my ideas", "search_entries", json!({"query": "drones", "category": "ideas"})),
        // digests
        ("daily digest", "generate_digest", json!({"type": "daily"})),
        ("what's on my plate", "generate_digest", json!({"type": "daily"})),
        ("What should I focus on today?", "generate_digest", json!({"type": "daily"})),
        ("weekly review", "generate_digest", json!({"type": "weekly"})),
        ("give me my weekly summary", "generate_digest", json!({"type": "weekly"})),
        ("how was my week?", "generate_digest", json!({"type": "weekly"})),
        // moves
        (
            "actually that's a project",
            "move_entry",
            json!({"path": "inbox/x.md", "targetCategory": "projects"}),
        ),
        ("move it to ideas", "move_entry", json!({"path": "inbox/x.md", "targetCategory": "ideas"})),
        (
            "move inbox/y.md to people",
            "move_entry",
            json!({"path": "inbox/y.md", "targetCategory": "people"}),
        ),
        ("no, that should be an admin task", "move_entry", json!({"targetCategory": "admin"})),
        ("this is a person, not an idea", "move_entry", json!({"targetCategory": "people"})),
        ("file that under ideas", "move_entry", json!({"targetCategory": "ideas"})),
        ("make it a project", "move_entry", json!({"targetCategory": "projects"})),
        // updates
        (
            "mark projects/x.md done",
            "update_entry",
            json!({"path": "projects/x.md", "updates": {"status": "done"}}),
        ),
        ("mark that done", "update_entry", json!({"path": "inbox/x.md", "updates": {"status": "done"}})),
        (
            "set the due date of that to 2026-12-15",
            "update_entry",
            json!({"updates": {"due_date": "2026-12-15"}}),
        ),
        ("rename that to Garden plan", "update_entry", json!({"updates": {"name": "Garden plan"}})),
        ("that's blocked", "update_entry", json!({"updates": {"status": "blocked"}})),
        (
            "set the next action of projects/x.md to Email Sarah the spec",
            "update_entry",
            json!({"path": "projects/x.md", "updates": {"next_action": "Email Sarah the spec"}}),
        ),
        ("it's due Friday", "update_entry", json!({"updates": {"due_date": "2026-11-27"}})),
        ("mark it as waiting", "update_entry", json!({"updates": {"status": "waiting"}})),
        ("I finished that", "update_entry", json!({"updates": {"status": "done"}})),
    ];
    assert!(table.len() >= 40);
    for (message, tool, expected) in table {
        let (name, args) = route(message).await;
        assert_eq!(name, tool, "{message:?} -> {args}");
        for (key, value) in expected.as_object().unwrap() {
            assert_eq!(args.get(key), Some(value), "{message:?}: {key} in {args}");
        }
    }
}

#[tokio::test]
async fn small_talk_and_questions_it_cannot_route_get_plain_answers() {
    for message in ["hello", "thanks!", "good morning", "ok"] {
        let answer = complete(fresh(message), &TOOLS).await;
        assert!(answer.tool_calls.is_empty(), "{message}");
        assert!(!answer.content.unwrap().is_empty());
    }
    // A question with nothing to search for.
    let answer = complete(fresh("what is it?"), &TOOLS).await;
    assert!(answer.tool_calls.is_empty());
    let text = answer.content.unwrap();
    assert!(text.contains("list") && text.contains("search") && text.contains("digest"), "{text}");
}

/// The final answer to `question` when search_entries answered `result`.
async fn answer_to(question: &str, result: Value) -> String {
    let asked = complete(fresh(question), &TOOLS).await;
    assert_eq!(asked.tool_calls.len(), 1, "{question}: {asked:?}");
    let call = asked.tool_calls[0].clone();
    assert_eq!(call.name, "search_entries", "{question}");
    let args: Value = serde_json::from_str(&call.arguments).unwrap();
    assert_eq!(args["query"], question, "searched as asked");
    let mut messages = fresh(question);
    messages.push(ChatMessage::Assistant { content: None, tool_calls: vec![call.clone()] });
    messages.push(ChatMessage::Tool { tool_call_id: call.id, content: result.to_string() });
    let answer = complete(messages, &TOOLS).await;
    assert!(answer.tool_calls.is_empty());
    answer.content.unwrap()
}

#[tokio::test]
async fn questions_of_the_notes_are_answered_with_passages_and_citations() {
    let hits = json!({"success": true, "data": {"total": 0, "partialTotal": 2, "mode": "keyword", "entries": [
        {"path": "people/priya.md", "name": "Priya", "category": "people", "matchedField": "content",
         "snippet": "said the **API** **spec** needs", "score": 3.2, "matchedBy": "partial",
         "passage": {"text": "Priya said the API spec needs\na review before launch.", "startLine": 9, "endLine": 10}},
        {"path": "projects/api.md", "name": "API", "category": "projects", "matchedField": "name",
         "snippet": "**API**", "score": 1.1, "matchedBy": "partial",
         "passage": {"text": "name: API", "startLine": 2, "endLine": 2}}]}});
    let text = answer_to("what did Priya say about the API spec?", hits).await;
    assert_eq!(
        text,
        "No note holds all of that; the nearest:\n\
         - Priya: “Priya said the API spec needs a review before launch.” [people/priya.md:9-10]\n\
         - API: “name: API” [projects/api.md:2]"
    );
    // A question about one entry reads its lines, and quotes them.
    let asked = complete(fresh("when is the passport due?"), &TOOLS).await;
    let call = asked.tool_calls[0].clone();
    assert_eq!(call.name, "get_entry");
    assert_eq!(argument_errors(&call), Vec::<String>::new());
    let args: Value = serde_json::from_str(&call.arguments).unwrap();
    assert_eq!(
        (args["path"].as_str(), args["lines"].as_str()),
        (Some("the passport"), Some("1-200")),
        "{args}"
    );
    let read = json!({"success": true, "data": {
        "entry": {"path": "admin/passport.md", "category": "admin", "folder": "admin", "name": "Renew passport",
                  "frontmatter": {"name": "Renew passport", "due_date": "2026-12-15"}},
        "lines": {"start": 1, "end": 5, "total": 5,
                  "text": "---\nname: Renew passport\ndue_date: 2026-12-15\n---\nBook the appointment.\n"}}});
    let mut messages = fresh("when is the passport due?");
    messages.push(ChatMessage::Assistant { content: None, tool_calls: vec![call.clone()] });
    messages.push(ChatMessage::Tool { tool_call_id: call.id, content: read.to_string() });
    let text = complete(messages, &TOOLS).await.content.unwrap();
    assert_eq!(
        text,
        "Renew passport (admin/passport.md)\ndue_date: 2026-12-15\n\nBook the appointment.\n\nFrom [admin/passport.md:1-5]"
    );
    let none =
        json!({"success": true, "data": {"total": 0, "partialTotal": 0, "mode": "keyword", "entries": []}});
    assert_eq!(answer_to("why is the sky blue?", none).await, "Nothing in your notes answers that.");
}

#[tokio::test]
async fn that_without_an_earlier_entry_asks_which_one() {
    for message in ["mark that done", "actually that's a project", "move it to ideas"] {
        let answer = complete(fresh(message), &TOOLS).await;
        assert!(answer.tool_calls.is_empty(), "{message}");
        assert!(answer.content.unwrap().contains("Which entry"), "{message}");
    }
}

#[tokio::test]
async fn only_offered_tools_are_called() {
    let only_capture = ["classify_and_capture"];
    for message in ["list my projects", "find Priya", "daily digest", "mark that done", "show projects/x.md"]
    {
        let answer = complete(after_capture(message), &only_capture).await;
        assert!(answer.tool_calls.is_empty(), "{message}");
        assert!(answer.content.unwrap().contains("not available"));
    }
    let answer = complete(fresh("met Priya at the meetup"), &only_capture).await;
    assert_eq!(answer.tool_calls[0].name, "classify_and_capture");
}

#[tokio::test]
async fn writing_tasks_without_tools_get_their_material_back() {
    let digest = vec![
        ChatMessage::System { content: "You write a daily digest for a person's second brain.".into() },
        ChatMessage::User {
            content: "The facts:\n\n## Top 3 actions\n- Renew passport (due 2026-12-15)".into(),
        },
    ];
    let answer = complete(digest, &[]).await;
    assert!(answer.tool_calls.is_empty());
    assert_eq!(answer.content.unwrap(), "## Top 3 actions\n- Renew passport (due 2026-12-15)");
    let summary = complete(fresh("user: met Priya\nkb called classify_and_capture"), &[]).await;
    assert_eq!(summary.content.unwrap(), "user: met Priya\nkb called classify_and_capture");
}

async fn final_answer(tool: &str, result: Value) -> String {
    let call = ToolCall { id: "offline-1".into(), name: tool.into(), arguments: "{}".into() };
    let messages = vec![
        ChatMessage::System { content: SYSTEM.into() },
        ChatMessage::User { content: "anything".into() },
        ChatMessage::Assistant { content: None, tool_calls: vec![call] },
        ChatMessage::Tool { tool_call_id: "offline-1".into(), content: result.to_string() },
    ];
    let answer = complete(messages, &TOOLS).await;
    assert!(answer.tool_calls.is_empty());
    answer.content.unwrap()
}

#[tokio::test]
async fn tool_results_are_described_in_plain_sentences() {
    let filed = json!({"success": true, "data": {"path": "projects/clientco-integration.md", "category": "projects",
        "name": "ClientCo integration", "confidence": 0.82, "clarificationNeeded": false}});
    assert_eq!(
        final_answer("classify_and_capture", filed).await,
        "Filed “ClientCo integration” under projects (confidence 0.82)."
    );
    let unsure = json!({"success": true, "data": {"path": "inbox/something-vague.md", "category": "inbox",
        "name": "Something vague", "confidence": 0.3, "clarificationNeeded": true}});
    assert_eq!(
        final_answer("classify_and_capture", unsure).await,
        "I put “Something vague” in the inbox — is it a person, project, idea or admin task?"
    );
    let listed = json!({"success": true, "data": {"total": 2, "entries": [
        {"path": "projects/a.md", "category": "projects", "name": "Alpha", "status": "active",
         "updatedAt": "2026-11-20T10:00:00Z", "summary": "Ship the beta"},
        {"path": "projects/b.md", "category": "projects", "name": "Beta",
         "updatedAt": "2026-11-19T10:00:00Z", "summary": ""}]}});
    assert_eq!(
        final_answer("list_entries", listed).await,
        "Here are the 2 entries:\n- Alpha [active] — Ship the beta (projects/a.md)\n- Beta (projects/b.md)"
    );
    let failed = json!({"success": false, "error": "Entry not found: projects/x.md"});
    assert_eq!(final_answer("get_entry", failed).await, "That didn't work: Entry not found: projects/x.md");
}

async fn classify(text: &str) -> Value {
    let request = StructuredRequest {
        messages: vec![
            ChatMessage::System { content: SYSTEM.into() },
            ChatMessage::User { content: text.into() },
        ],
        schema_name: "classification".into(),
        schema: json!({"type": "object"}),
        today: today(),
        forced_category: None,
    };
    let answer = model().complete_structured(&request).await.unwrap();
    assert_eq!(answer.usage.llm_calls, 1);
    assert_eq!(answer.usage.prompt_tokens + answer.usage.completion_tokens, 0);
    answer.value
}

fn confidence(v: &Value) -> f64 {
    v["confidence"].as_f64().unwrap()
}

#[tokio::test]
async fn the_classifier_files_clear_text_confidently_and_vague_text_low() {
    let person = classify("Met Priya at the robotics meetup, send her the paper on swarms").await;
    assert_eq!(person["category"], "people");
    assert_eq!(person["name"], "Priya");
    assert!(confidence(&person) >= 0.75, "{person}");
    assert_eq!(person["follow_ups"], json!(["Send her the paper on swarms"]));
    assert!(person["context"].as_str().unwrap().contains("robotics meetup"));

    let project = classify("Finish the ClientCo integration — email Sarah the API spec").await;
    assert_eq!(project["category"], "projects", "{project}");
    assert_eq!(project["status"], "active");
    assert_eq!(project["next_action"], "Email Sarah the API spec");
    assert!(confidence(&project) >= 0.6, "{project}");

    let idea = classify("Idea: an app that matches neighbours who want to share tools").await;
    assert_eq!(idea["category"], "ideas");
    assert!(idea["one_liner"].as_str().unwrap().starts_with("An app that"));
    assert!(confidence(&idea) >= 0.75);

    let admin = classify("Renew passport by Dec 15").await;
    assert_eq!(admin["category"], "admin");
    assert_eq!(admin["status"], "pending");
    assert_eq!(admin["due_date"], "2026-12-15");
    assert_eq!(admin["name"], "Renew passport");
    assert!(confidence(&admin) >= 0.75);
    assert_eq!(classify("pay the water bill tomorrow").await["due_date"], "2026-11-22");
    assert!(classify("call the bank").await.get("due_date").is_none());

    for vague in ["hmm, that thing from earlier", "interesting", "blue"] {
        let v = classify(vague).await;
        assert!(confidence(&v) < 0.6, "{vague}: {v}");
        assert!(v["tags"].is_array());
    }
}

#[tokio::test]
async fn the_capture_tool_classifier_reads_the_offline_answers() {
    use kb_tools::{Classifier, ClassifyRequest, LlmClassifier};
    let classifier = LlmClassifier::new(Arc::new(model()));
    let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
    let ask = |text: &str, forced| ClassifyRequest { text: text.into(), forced_category: forced, today };
    let admin = classifier.classify(&ask("renew passport by Dec 15", None)).await.unwrap();
    assert_eq!(admin.category, Category::Admin);
    assert!(admin.confidence.value() >= 0.75);
    assert_eq!(admin.name, "Renew passport");
    assert_eq!(admin.fields.get("due_date"), Some(&json!("2026-12-15")));
    assert_eq!(admin.fields.get("status"), Some(&json!("pending")));
    let vague = classifier.classify(&ask("hmm, that thing", None)).await.unwrap();
    assert!(vague.confidence.value() < 0.6);
    // a hint fixes the category: the fields are that category's
    let forced = classifier.classify(&ask("website redesign", Some(Category::Projects))).await.unwrap();
    assert_eq!(forced.category, Category::Projects);
    assert_eq!(forced.fields.get("status"), Some(&json!("active")));
    assert_eq!(forced.fields.get("next_action"), Some(&json!("Website redesign")));
}

#[tokio::test]
async fn today_and_the_hint_are_read_from_the_request_never_from_the_prompt() {
    let structured = |system: &str, today, forced_category| StructuredRequest {
        messages: vec![
            ChatMessage::System { content: system.into() },
            ChatMessage::User { content: "renew passport by Dec 15".into() },
        ],
        schema_name: "classification".into(),
        schema: json!({"type": "object"}),
        today,
        forced_category,
    };
    // The request's date, whatever the prompt says; without one, the model's clock (2030).
    let dated = model().classify(&structured("Today is 2026-11-21.", today(), None));
    assert_eq!(dated["due_date"], "2026-12-15");
    let undated = model().classify(&structured("Today is 2026-11-21.", None, None));
    assert_eq!(undated["due_date"], "2030-12-15");
    // The hint's category from the request; the prompt's words alone fix nothing.
    let hinted = model().classify(&structured("You file thoughts.", today(), Some(Category::Projects)));
    assert_eq!(hinted["category"], "projects", "{hinted}");
    let worded = model().classify(&structured("The person marked this as projects.", today(), None));
    assert_eq!(worded["category"], "admin", "{worded}");

    // A chat request: "tomorrow" is the day after the request's date.
    let ask = |today| ChatRequest {
        messages: after_capture("set the due date of that to tomorrow"),
        tools: tools(&TOOLS),
        today,
    };
    let due = |answer: ChatCompletion| {
        let args: Value = serde_json::from_str(&answer.tool_calls[0].arguments).unwrap();
        args["updates"]["due_date"].clone()
    };
    assert_eq!(due(model().answer(&ask(today()))), "2026-11-22");
    assert_eq!(due(model().answer(&ask(None))), "2030-01-02");
}

#[tokio::test]
async fn the_same_request_gets_the_same_answer() {
    for text in ["met Priya at the robotics meetup", "renew passport by Dec 15", "list my projects", "hmm"] {
        let first = classify(text).await;
        assert_eq!(first, classify(text).await);
        let a = complete(after_capture(text), &TOOLS).await;
        let b = OfflineModel::new()
            .complete(&ChatRequest { messages: after_capture(text), tools: tools(&TOOLS), today: today() })
            .await;
        assert_eq!(a, b.unwrap());
    }
}

#[tokio::test]
async fn it_says_what_it_is_and_what_it_costs() {
    assert_eq!(model().describe(), "offline");
    let answer = complete(fresh("list my projects"), &TOOLS).await;
    assert_eq!(answer.usage.llm_calls, 1);
    assert_eq!(answer.usage.prompt_tokens, 0);
    assert_eq!(answer.usage.completion_tokens, 0);
}

mod any_message {
    use super::*;
    use proptest::prelude::*;

    const VOCABULARY: &[&str] = &[
        "that",
        "it",
        "is",
        "a",
        "project",
        "idea",
        "person",
        "admin",
        "inbox",
        "move",
        "mark",
        "done",
        "set",
        "the",
        "due",
        "date",
        "of",
        "to",
        "find",
        "search",
        "list",
        "show",
        "my",
        "projects/x.md",
        "inbox/é.md",
        "Dec",
        "15",
        "tomorrow",
        "friday",
        "rename",
        "weekly",
        "review",
        "digest",
        "not",
        "?",
        "Priya",
        "’s",
        "“quoted”",
        "[idea]",
        "idea:",
        "anything",
        "about",
        "in",
        "ideas",
        "people",
        "next",
        "action",
        "tag",
        "with",
        ",",
        "K",
        "İstanbul",
        "🙂",
        "by",
        "push",
        "what",
        "on",
        "plate",
        "call",
        "met",
    ];

    fn sentence() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::collection::vec(prop::sample::select(VOCABULARY), 0..12).prop_map(|w| w.join(" ")),
            "\\PC{0,80}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Whatever the person types, the answer is text or one call to an offered tool whose
        /// arguments are a JSON object, and the same message gets the same answer.
        #[test]
        fn every_message_gets_a_well_formed_answer(message in sentence(), offered in 0usize..=7) {
            let offered = &TOOLS[..offered];
            let request = ChatRequest { messages: after_capture(&message), tools: tools(offered), today: today() };
            let answer = model().answer(&request);
            prop_assert!(answer.tool_calls.len() <= 1);
            prop_assert_eq!(answer.tool_calls.is_empty(), answer.content.is_some());
            for call in &answer.tool_calls {
                prop_assert!(offered.contains(&call.name.as_str()), "{} not offered", call.name);
                let args: Value = serde_json::from_str(&call.arguments).unwrap();
                prop_assert!(args.is_object());
                prop_assert!(argument_errors(call).is_empty(), "{}: {:?}", call.arguments, argument_errors(call));
            }
            prop_assert_eq!(answer, model().answer(&request));
        }

        /// The classifier always answers with a filing category, a confidence in 0..1 and a name.
        #[test]
        fn every_text_gets_a_classification(text in sentence()) {
            let request = StructuredRequest {
                messages: fresh(&text),
                schema_name: "classification".into(),
                schema: json!({"type": "object"}),
                today: today(),
                forced_category: None,
            };
            let v = model().classify(&request);
            prop_assert!(["people", "projects", "ideas", "admin"].contains(&v["category"].as_str().unwrap()));
            let c = v["confidence"].as_f64().unwrap();
            prop_assert!((0.0..=1.0).contains(&c));
            prop_assert!(!v["name"].as_str().unwrap().is_empty());
            prop_assert_eq!(v, model().classify(&request));
        }
    }
}

#[tokio::test]
async fn deletes_and_undo_reach_their_tools_and_a_named_entry_goes_to_the_tool_as_said() {
    let all = ["delete_entry", "undo_last_change", "classify_and_capture", "get_entry"];
    let call = |answer: &ChatCompletion| {
        let call = &answer.tool_calls[0];
        (call.name.clone(), serde_json::from_str::<Value>(&call.arguments).unwrap())
    };
    let answer = complete(fresh("delete projects/old-site.md"), &all).await;
    assert_eq!(call(&answer), ("delete_entry".into(), json!({"path": "projects/old-site.md"})));
    let answer = complete(after_capture("delete that"), &all).await;
    assert_eq!(call(&answer), ("delete_entry".into(), json!({"path": "inbox/x.md"})));
    for undo in ["undo", "undo that", "take that back", "revert that"] {
        let answer = complete(after_capture(undo), &all).await;
        assert_eq!(call(&answer), ("undo_last_change".into(), json!({})), "{undo}");
    }

    // An entry named in words goes to the tool as said: the tools resolve names.
    let answer = complete(fresh("remove the old-site entry"), &all).await;
    assert_eq!(call(&answer), ("delete_entry".into(), json!({"path": "old-site"})));
    let answer = complete(fresh("mark the old site done"), &["update_entry"]).await;
    assert_eq!(
        call(&answer),
        ("update_entry".into(), json!({"path": "the old site", "updates": {"status": "done"}}))
    );
    // Not offered: said so.
    let answer = complete(fresh("undo"), &["classify_and_capture"]).await;
    assert!(answer.content.unwrap().contains("not available"));
}

#[tokio::test]
async fn a_no_to_a_cancelled_proposal_is_acknowledged_and_anything_else_answered_as_new() {
    let cancelled = |message: &str| {
        vec![
            ChatMessage::System { content: SYSTEM.into() },
            ChatMessage::System {
                content: format!(
                    "{} the person did not confirm \"Delete x?\"",
                    kb_domain::llm::CANCELLED_PREFIX
                ),
            },
            ChatMessage::User { content: message.into() },
        ]
    };
    let answer = complete(cancelled("No."), &TOOLS).await;
    assert_eq!(answer.content.as_deref(), Some("Okay, I won't: nothing was changed."));
    let answer = complete(cancelled("list my projects"), &TOOLS).await;
    assert_eq!(answer.tool_calls[0].name, "list_entries");
    // Without the note, "no" is just an acknowledgement.
    let answer = complete(fresh("no"), &TOOLS).await;
    assert_ne!(answer.content.as_deref(), Some("Okay, I won't: nothing was changed."));
}

#[tokio::test]
async fn delete_and_undo_results_are_described() {
    let asked = json!({"success": true, "data": {"path": "projects/old-site.md", "deleted": false,
        "confirmationRequired": true, "proposal": "Delete projects/old-site.md?"}});
    assert_eq!(
        final_answer("delete_entry", asked).await,
        "Delete projects/old-site.md? Say “yes” to delete it; anything else keeps it."
    );
    let deleted =
        json!({"success": true, "data": {"path": "projects/old-site.md", "deleted": true, "revision": 3}});
    assert_eq!(
        final_answer("delete_entry", deleted).await,
        "Deleted projects/old-site.md. Say “undo” to bring it back."
    );
    let refused = json!({"success": false, "error": "there is no change to undo in this conversation"});
    assert_eq!(
        final_answer("undo_last_change", refused).await,
        "That didn't work: there is no change to undo in this conversation"
    );
}

#[tokio::test]
async fn the_offline_answer_streams_in_word_pieces_that_join_to_the_unstreamed_answer() {
    let model = model();
    let request = ChatRequest { messages: after_capture("thanks"), tools: tools(&TOOLS), today: today() };
    let whole = model.complete(&request).await.unwrap();
    let deltas = std::sync::Mutex::new(Vec::new());
    let on_delta = |text: &str| deltas.lock().unwrap().push(text.to_string());
    let streamed = model.complete_streaming(&request, &on_delta).await.unwrap();
    assert_eq!(streamed, whole);
    let deltas = deltas.into_inner().unwrap();
    let text = whole.content.unwrap_or_default();
    assert_eq!(deltas.concat(), text);
    assert!(deltas.len() > 1, "{deltas:?}");
}
