//! Tool selection and the tool loop: what is filed, answered, stored and sent back.

use kb_domain::Role;
use kb_llm::testing::FakeReply;
use kb_orchestrator::turn::ROUND_CAP_APOLOGY;
use serde_json::json;

use super::{call, is_structured, kit, kit_with, messages, tool_message, tool_result};

#[tokio::test]
async fn a_capture_is_filed_answered_and_stored_as_the_whole_turn() {
    let k = kit().await;
    let words = "Fix the shed roof before the rains";
    k.fake.push(call("call_1", "classify_and_capture", &json!({"text": words})));
    k.fake.push(FakeReply::classification("projects", 0.9, "Shed roof repair"));
    k.fake.push(FakeReply::text("Filed it under projects: Shed roof repair."));

    let response = k.kb.chat().send(None, words).await.unwrap();

    // On disk, in projects/, with the person's words.
    assert_eq!(k.entry_files(), ["projects/shed-roof-repair.md"]);
    let file = std::fs::read_to_string(k.dir.path().join("projects/shed-roof-repair.md")).unwrap();
    assert!(file.contains(words), "{file}");
    assert!(file.contains("confidence: 0.9"), "{file}");

    // The answer.
    assert_eq!(response.message.content, "Filed it under projects: Shed roof repair.");
    assert_eq!(response.tools_used, ["classify_and_capture"]);
    let entry = response.entry.as_ref().unwrap();
    assert_eq!(entry.path.to_string(), "projects/shed-roof-repair.md");
    assert_eq!(entry.name, "Shed roof repair");
    assert_eq!(entry.confidence, 0.9);
    assert!(!entry.clarification_needed);
    assert_eq!(
        response.message.filed_entry_path.as_ref().map(ToString::to_string),
        Some(entry.path.to_string())
    );
    assert_eq!(response.message.filed_confidence, Some(0.9));
    let wire = serde_json::to_value(kb_server::dto::ChatAnswer::from(&response)).unwrap();
    assert_eq!(wire["message"]["filedEntryPath"], "projects/shed-roof-repair.md");
    assert_eq!(wire["message"]["filedConfidence"], 0.9);
    assert_eq!(wire["toolsUsed"], json!(["classify_and_capture"]));
    assert_eq!(wire["entry"]["path"], "projects/shed-roof-repair.md");

    // What the model was sent: tools offered with tool_choice auto, then the classifier's
    // structured call, then the tool result under its call id.
    let requests: Vec<_> = k.fake.requests().iter().map(|r| r.json()).collect();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0]["tool_choice"], "auto");
    assert_eq!(
        requests[0]["tools"].as_array().unwrap().len(),
        kb_tools::standard_registry().unwrap().names().len()
    );
    assert!(is_structured(&requests[1]));
    assert_eq!(requests[1]["messages"][1]["content"], words);
    let result = tool_result(&requests[2], "call_1");
    assert_eq!(result["success"], true);
    assert_eq!(result["data"]["path"], "projects/shed-roof-repair.md");

    // The stored turn: user, assistant tool call, tool result, final answer.
    let stored = k.stored(&response.conversation_id).await;
    let roles: Vec<Role> = stored.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Assistant]);
    assert_eq!(stored[0].content, words);
    assert_eq!(stored[1].tool_calls.len(), 1);
    assert_eq!(stored[1].tool_calls[0].id, "call_1");
    assert_eq!(stored[1].tool_calls[0].name, "classify_and_capture");
    assert_eq!(stored[2].tool_call_id.as_deref(), Some("call_1"));
    assert!(stored[2].content.contains("projects/shed-roof-repair.md"));
    assert_eq!(stored[3].content, response.message.content);
    assert_eq!(stored[3].id, response.message.id);
    assert_eq!(stored[3].filed_entry_path.as_deref(), Some("projects/shed-roof-repair.md"));
    assert_eq!(stored[3].filed_confidence, Some(0.9));
    let (conversation, _) = k.kb.chat().conversation(&response.conversation_id).await.unwrap();
    assert_eq!(conversation.title, words);
}

#[tokio::test]
async fn a_plain_question_gets_a_plain_answer_and_files_nothing() {
    let k = kit().await;
    k.fake.push(FakeReply::text("Hello! Tell me anything and I will file it."));

    let response = k.kb.chat().send(None, "hi there, what can you do?").await.unwrap();

    assert_eq!(response.message.content, "Hello! Tell me anything and I will file it.");
    assert!(response.tools_used.is_empty());
    assert!(response.entry.is_none());
    assert!(response.message.filed_entry_path.is_none());
    let wire = serde_json::to_value(kb_server::dto::ChatAnswer::from(&response)).unwrap();
    assert!(wire.get("entry").is_none());
    assert!(wire["message"].get("filedEntryPath").is_none());
    assert!(k.entry_files().is_empty());
    let stored = k.stored(&response.conversation_id).await;
    assert_eq!(stored.iter().map(|m| m.role).collect::<Vec<_>>(), [Role::User, Role::Assistant]);
    assert_eq!(stored[1].filed_entry_path, None);
    assert_eq!(k.fake.requests().len(), 1);
}

#[tokio::test]
async fn several_calls_in_one_answer_run_in_order_and_return_with_their_ids() {
    let k = kit().await;
    let capture = json!({"text": "Ask Priya about the garden design"}).to_string();
    let list = json!({"category": "projects"}).to_string();
    k.fake.push(FakeReply::tool_calls(&[
        ("call_cap", "classify_and_capture", capture.as_str()),
        ("call_list", "list_entries", list.as_str()),
    ]));
    k.fake.push(FakeReply::classification("projects", 0.95, "Garden design"));
    k.fake.push(FakeReply::text("Filed, and here are your projects."));

    let response =
        k.kb.chat().send(None, "Ask Priya about the garden design, then list my projects").await.unwrap();

    assert_eq!(response.tools_used, ["classify_and_capture", "list_entries"]);
    let requests: Vec<_> = k.fake.requests().iter().map(|r| r.json()).collect();
    assert_eq!(requests.len(), 3);
    let last = &requests[2];
    let sent = messages(last);
    // system, user, assistant with both calls, then the two results in call order.
    assert_eq!(sent.len(), 5, "{last}");
    assert_eq!(sent[2]["role"], "assistant");
    assert_eq!(sent[2]["tool_calls"][0]["id"], "call_cap");
    assert_eq!(sent[2]["tool_calls"][1]["id"], "call_list");
    assert_eq!(sent[3]["tool_call_id"], "call_cap");
    assert_eq!(sent[4]["tool_call_id"], "call_list");
    // The list ran after the capture: it already sees the new entry.
    let listed = tool_result(last, "call_list");
    assert_eq!(listed["success"], true);
    assert_eq!(listed["data"]["total"], 1);
    assert_eq!(listed["data"]["entries"][0]["path"], "projects/garden-design.md");

    let stored = k.stored(&response.conversation_id).await;
    let ids: Vec<_> = stored.iter().filter_map(|m| m.tool_call_id.as_deref()).collect();
    assert_eq!(ids, ["call_cap", "call_list"]);
}

#[tokio::test]
async fn a_failing_tool_tells_the_model_why_and_the_turn_goes_on() {
    let k = kit().await;
    k.fake.push(call("call_1", "get_entry", &json!({"path": "projects/nope.md"})));
    k.fake.push(FakeReply::text("I could not find that entry."));

    let response = k.kb.chat().send(None, "show me the nope project").await.unwrap();

    assert_eq!(response.message.content, "I could not find that entry.");
    let requests = k.chat_requests();
    let result = tool_result(&requests[1], "call_1");
    assert_eq!(result["success"], false);
    assert!(result["error"].as_str().unwrap().contains("Entry not found: projects/nope.md"), "{result}");
    assert!(result.get("errorCode").is_none(), "internal codes stay out of the LLM's view: {result}");
}

#[tokio::test]
async fn arguments_that_are_not_json_reach_the_model_and_write_nothing() {
    let k = kit().await;
    k.fake.push(FakeReply::tool_calls(&[("call_1", "classify_and_capture", "{text: fix the shed")]));
    k.fake.push(FakeReply::text("Sorry, let me try that again."));

    let response = k.kb.chat().send(None, "fix the shed").await.unwrap();

    assert_eq!(response.message.content, "Sorry, let me try that again.");
    assert!(response.entry.is_none());
    assert!(k.entry_files().is_empty());
    // No classification was asked for: two chat requests, nothing else.
    assert_eq!(k.fake.requests().len(), 2);
    let content = tool_message(&k.chat_requests()[1], "call_1")["content"].as_str().unwrap().to_string();
    assert!(content.contains("not valid JSON"), "{content}");
    // Arguments that are JSON but miss a required field are named too.
    k.fake.push(call("call_2", "classify_and_capture", &json!({"hints": "[project]"})));
    k.fake.push(FakeReply::text("What should I capture?"));
    k.kb.chat().send(Some(&response.conversation_id), "again").await.unwrap();
    let content =
        tool_message(k.chat_requests().last().unwrap(), "call_2")["content"].as_str().unwrap().to_string();
    assert!(content.contains("text"), "{content}");
    assert!(k.entry_files().is_empty());
}

#[tokio::test]
async fn an_unknown_tool_is_named_to_the_model() {
    let k = kit().await;
    k.fake.push(call("call_1", "frobnicate", &json!({"x": 1})));
    k.fake.push(FakeReply::text("I cannot do that."));

    let response = k.kb.chat().send(None, "frobnicate my notes").await.unwrap();

    assert_eq!(response.message.content, "I cannot do that.");
    let result = tool_result(&k.chat_requests()[1], "call_1");
    assert_eq!(result["success"], false);
    assert!(result["error"].as_str().unwrap().contains("Unknown tool: frobnicate"), "{result}");
}

#[tokio::test]
async fn the_round_cap_ends_the_turn_with_an_apology() {
    let k = kit_with(|config, _| config.max_tool_rounds = 3).await;
    for round in 0..4 {
        k.fake.push(call(&format!("call_{round}"), "list_entries", &json!({})));
    }

    let response = k.kb.chat().send(None, "keep listing forever").await.unwrap();

    assert_eq!(response.message.content, ROUND_CAP_APOLOGY);
    assert_eq!(k.fake.requests().len(), 3, "exactly three model calls");
    assert_eq!(k.fake.pending(), 1);
    assert_eq!(response.tools_used, ["list_entries"; 3]);
    assert_eq!(response.usage.llm_calls, 3);
    let stored = k.stored(&response.conversation_id).await;
    // user + 3 × (assistant call + tool result) + the apology, every result under its call.
    assert_eq!(stored.len(), 8);
    assert_eq!(stored.last().unwrap().content, ROUND_CAP_APOLOGY);
    let ids: Vec<_> = stored.iter().filter_map(|m| m.tool_call_id.as_deref()).collect();
    assert_eq!(ids, ["call_0", "call_1", "call_2"]);
}
