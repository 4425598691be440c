//! The registry's tools as MCP tools: the same argument schemas, the output schema of each
//! tool's data, and hints from what each tool promises.

use std::sync::Arc;

use kb_core::{Assistant, ToolResult, ToolSpec};
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::Value;

/// Every tool of the registry, as `tools/list` answers.
pub fn listed(assistant: &Assistant) -> Vec<Tool> {
    assistant.tools().specs().into_iter().map(to_mcp).collect()
}

fn to_mcp(spec: ToolSpec) -> Tool {
    let annotations = ToolAnnotations::new()
        .read_only(spec.hints.read_only)
        .destructive(spec.hints.destructive)
        .idempotent(spec.hints.idempotent)
        // The tools reach the vault and nothing else.
        .open_world(false);
    let mut tool = Tool::new(
        spec.definition.name,
        spec.definition.description,
        Arc::new(object(spec.definition.parameters)),
    )
    .with_annotations(annotations);
    if let Value::Object(schema) = spec.output_schema {
        tool = tool.with_raw_output_schema(Arc::new(schema));
    }
    tool
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// Runs one `tools/call`. An unknown tool is a protocol error (invalid params, as MCP asks);
/// every other failure — arguments that do not fit, an entry not found, a name that means
/// several — is a result with `isError: true` and the message the chat model would read.
/// The call runs in MCP session `session` (see [`kb_core::domain::ChangeContext::session`]).
pub async fn call(
    assistant: &Assistant,
    request: CallToolRequestParams,
    session: &str,
) -> Result<CallToolResult, McpError> {
    let tools = assistant.tools().in_session(session);
    if !tools.has(&request.name) {
        return Err(McpError::invalid_params(format!("Unknown tool: {}", request.name), None));
    }
    let arguments = Value::Object(request.arguments.unwrap_or_default());
    let result = tools.call(&request.name, &arguments).await;
    Ok(to_call_result(result))
}

fn to_call_result(result: ToolResult) -> CallToolResult {
    if result.success {
        let data = result.data.unwrap_or(Value::Null);
        return CallToolResult::structured(data);
    }
    let message = result.error.clone().unwrap_or_else(|| "the tool failed".to_string());
    let mut content = vec![ContentBlock::text(message)];
    // The entries a name could mean, or a capture may duplicate, as the chat model sees them.
    if result.candidates.is_some() || result.possible_duplicate.is_some() {
        content.push(ContentBlock::text(result.to_llm_json()));
    }
    CallToolResult::error(content)
}
