//! The registry: unknown tools, duplicates, every kind of bad argument, panics.

use kb_domain::EntryReader;
use kb_tools::tool::{Tool, ToolCategory, ToolHints};
use kb_tools::{ErrorCode, RegistryError, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolServices};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::support::*;

const TOOLS: [&str; 13] = [
    "classify_and_capture",
    "list_entries",
    "get_entry",
    "generate_digest",
    "update_entry",
    "move_entry",
    "search_entries",
    "delete_entry",
    "undo_last_change",
    "find_duplicates",
    "merge_entries",
    "build_context",
    "resolve_conflict",
];

#[test]
fn the_standard_registry_has_every_tool() {
    let registry = kb_tools::standard_registry().unwrap();
    assert_eq!(registry.names(), TOOLS);
    assert_eq!(registry.definitions().len(), TOOLS.len());
    assert_eq!(registry.get("get_entry").unwrap().parameters["required"], json!(["path"]));
    assert_eq!(
        registry.get("move_entry").unwrap().parameters["properties"]["targetCategory"]["enum"],
        json!(["people", "projects", "ideas", "admin"])
    );
    assert_eq!(
        registry.get("list_entries").unwrap().parameters["properties"]["category"]["enum"],
        json!(["people", "projects", "ideas", "admin", "inbox", "other"])
    );
    assert_eq!(registry.get("generate_digest").unwrap().parameters["required"], json!(["type"]));
    assert_eq!(registry.get("update_entry").unwrap().parameters["properties"]["updates"]["type"], "object");
    assert!(registry.get("nope").is_none());
}

#[test]
fn update_entry_takes_fields_and_a_body_edit() {
    let registry = kb_tools::standard_registry().unwrap();
    let update = &registry.get("update_entry").unwrap().parameters;
    assert_eq!(update["properties"]["updates"]["type"], "object");
    assert_eq!(update["required"], json!(["path"]));
    let body = &update["properties"]["body"];
    assert_eq!(body["type"], "object");
    assert_eq!(body["required"], json!(["mode", "content"]));
    assert_eq!(
        body["properties"]["mode"]["enum"],
        json!(["append", "prepend", "replace", "section", "find_replace"])
    );
    assert_eq!(
        body["properties"]["expectedReplacements"],
        json!({"type": "integer", "minimum": 1,
        "description": body["properties"]["expectedReplacements"]["description"]})
    );
    assert_eq!(body["properties"]["section"]["type"], "string");
}

#[test]
fn a_duplicate_name_is_refused_when_the_registry_is_built() {
    let built = ToolRegistry::builder()
        .register(kb_tools::tools::GetEntry)
        .register(kb_tools::tools::ListEntries)
        .register(kb_tools::tools::GetEntry)
        .build();
    assert_eq!(built.unwrap_err(), RegistryError::Duplicate("get_entry".into()));
}

#[tokio::test]
async fn an_unknown_tool_is_named() {
    let (services, _) = services();
    let result = call(&services, &ctx(), "delete_everything", json!({})).await;
    assert_eq!(error_of(&result), "Unknown tool: delete_everything");
    assert_eq!(result.error_code, Some(ErrorCode::UnknownTool));
}

#[tokio::test]
async fn each_kind_of_bad_argument_is_explained() {
    let (services, repo) = services();
    let registry = kb_tools::standard_registry().unwrap();
    let run = |tool: &'static str, raw: &'static str| {
        let (registry, services) = (&registry, &services);
        async move { registry.execute(tool, raw, &ctx(), services).await }
    };
    let cases = [
        ("get_entry", "{\"path\": ", "arguments are not valid JSON"),
        ("get_entry", "[1, 2]", "arguments must be a JSON object"),
        ("get_entry", "{}", "missing required field \"path\""),
        ("get_entry", "{\"path\": 7}", "field \"path\": expected text, got 7"),
        ("list_entries", "{\"limit\": \"5\"}", "field \"limit\": expected a whole number, got \"5\""),
        ("list_entries", "{\"limit\": 0}", "field \"limit\": must be at least 1, got 0"),
        ("search_entries", "{\"query\": \"x\", \"limit\": -4}", "must be at least 1, got -4"),
        (
            "list_entries",
            "{\"category\": \"work\"}",
            "expected one of people, projects, ideas, admin, inbox, other, got \"work\"",
        ),
        (
            "move_entry",
            "{\"path\": \"ideas/x.md\", \"targetCategory\": \"inbox\"}",
            "expected one of people, projects, ideas, admin, got \"inbox\"",
        ),
        ("generate_digest", "{\"type\": \"monthly\"}", "expected one of daily, weekly, got \"monthly\""),
        (
            "update_entry",
            "{\"path\": \"ideas/x.md\", \"updates\": \"done\"}",
            "field \"updates\": expected an object",
        ),
    ];
    for (tool, raw, expected) in cases {
        let result = run(tool, raw).await;
        assert_eq!(result.error_code, Some(ErrorCode::InvalidArguments), "{tool} {raw}: {result:?}");
        assert!(error_of(&result).contains(expected), "{tool} {raw}: {:?}", result.error);
    }
    // Every problem at once.
    let result = run("search_entries", "{\"category\": \"work\", \"limit\": 0}").await;
    let error = error_of(&result);
    for part in ["missing required field \"query\"", "\"category\"", "\"limit\""] {
        assert!(error.contains(part), "{error}");
    }
    assert!(repo.is_empty());
}

#[tokio::test]
async fn paths_outside_the_vault_are_refused_and_nothing_is_written() {
    let (services, repo) = services();
    seed(&repo, "ideas/x.md", "---\nname: X\n---\nbody");
    for bad in ["../x.md", "/etc/passwd", "ideas/../../x.md", ".obsidian/x.md", "ideas/x.txt", "ideas\\x.md"]
    {
        for (tool, args) in [
            ("get_entry", json!({"path": bad})),
            ("update_entry", json!({"path": bad, "updates": {"status": "done"}})),
            ("move_entry", json!({"path": bad, "targetCategory": "projects"})),
        ] {
            let result = call(&services, &ctx(), tool, args).await;
            assert_eq!(result.error_code, Some(ErrorCode::InvalidPath), "{tool} {bad}");
            assert!(error_of(&result).starts_with("invalid path: path"), "{:?}", result.error);
        }
    }
    assert_eq!(repo.len(), 1);
    let paths: Vec<String> = repo.all_entries().unwrap().iter().map(|e| e.path.to_string()).collect();
    assert_eq!(paths, ["ideas/x.md"]);
}

/// Arguments of the test tools.
#[derive(Deserialize, JsonSchema)]
struct Nothing {}

struct Panics;
impl Tool for Panics {
    const NAME: &'static str = "panics";
    const DESCRIPTION: &'static str = "A tool that panics, to test the registry.";
    const CATEGORY: ToolCategory = ToolCategory::Query;
    const HINTS: ToolHints = ToolHints::READ_ONLY;
    type Args = Nothing;
    type Output = ();
    async fn run(&self, _: Nothing, _: &ToolContext, _: &ToolServices) -> Result<ToolOutput<()>, ToolError> {
        panic!("secret detail of the panic")
    }
}

struct FailsInside;
impl Tool for FailsInside {
    const NAME: &'static str = "fails_inside";
    const DESCRIPTION: &'static str = "A tool that fails internally, to test the registry.";
    const CATEGORY: ToolCategory = ToolCategory::Action;
    const HINTS: ToolHints = ToolHints::ADDITIVE;
    type Args = Nothing;
    type Output = ();
    async fn run(&self, _: Nothing, _: &ToolContext, _: &ToolServices) -> Result<ToolOutput<()>, ToolError> {
        Err(ToolError::internal("disk on fire at /secret/path"))
    }
}

#[tokio::test]
async fn a_panic_or_internal_error_inside_a_tool_is_an_internal_error_for_the_llm() {
    let (services, _) = services();
    let registry = ToolRegistry::builder().register(Panics).register(FailsInside).build().unwrap();
    for tool in ["panics", "fails_inside"] {
        let result = registry.execute(tool, "{}", &ctx(), &services).await;
        assert_eq!(error_of(&result), "Internal error");
        assert_eq!(result.error_code, Some(ErrorCode::Internal));
        let sent = result.to_llm_json();
        assert!(!sent.contains("secret") && !sent.contains("INTERNAL"), "{sent}");
    }
    // The registry still works afterwards.
    assert!(registry.execute("panics", "", &ctx(), &services).await.error.is_some());
}
