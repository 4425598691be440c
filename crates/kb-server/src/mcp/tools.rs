//! The registry's tools as MCP tools: the same argument schemas, the output schema of each
//! tool's data, and hints from what each tool promises.

use std::sync::Arc;

use kb_core::assistant::Tools;
use kb_core::{Assistant, ToolResult, ToolSpec};
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::Value;

use crate::local::{LocalClient, LocalError, Method, StatusCode};

/// Every tool of the registry, as `tools/list` answers.
pub fn listed(specs: Vec<ToolSpec>) -> Vec<Tool> {
    specs.into_iter().map(to_mcp).collect()
}

fn to_mcp(spec: ToolSpec) -> Tool {
    let annotations = ToolAnnotations::new()
        .read_only(spec.hints.read_only)
        .destructive(spec.hints.destructive)
        .idempotent(spec.hints.idempotent)
        // The tools reach the vault and nothing else, but for a capture reading a link's page.
        .open_world(spec.hints.open_world);
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
    actor: &kb_core::domain::Actor,
) -> Result<CallToolResult, McpError> {
    let tools = assistant.tools().in_session(session).as_actor(actor);
    if !tools.has(&request.name) {
        return Err(McpError::invalid_params(format!("Unknown tool: {}", request.name), None));
    }
    Ok(call_in(tools, &request.name, request.arguments.unwrap_or_default()).await)
}

/// Runs the tool `name` (which `tools` has) with `arguments`, as [`call`] does.
pub async fn call_in(tools: Tools<'_>, name: &str, arguments: JsonObject) -> CallToolResult {
    to_call_result(tools.call(name, &Value::Object(arguments)).await)
}

/// Asks the vault's `kb serve` to run the call (in session `session`): its answer, or
/// `None` when no server answers or it declines, and the call is to run here.
pub async fn ask_server(
    local: &LocalClient,
    request: &CallToolRequestParams,
    session: &str,
) -> Option<Result<CallToolResult, McpError>> {
    let name = percent_encoding::utf8_percent_encode(&request.name, percent_encoding::NON_ALPHANUMERIC);
    let body =
        serde_json::json!({ "arguments": request.arguments.clone().unwrap_or_default(), "session": session });
    let answer = match local.send(Method::POST, &format!("/mcp-tool/{name}"), Some(&body)).await {
        Ok(answer) if answer.declined() => return None,
        Ok(answer) => answer,
        Err(LocalError::NoServer | LocalError::Request(_)) => return None,
        Err(broken) => {
            return Some(Err(McpError::internal_error(
                format!("{broken}: whether the call was done is unknown"),
                None,
            )));
        }
    };
    tracing::debug!(tool = %request.name, "answered by kb serve");
    let message = || answer.body.pointer("/error/message").and_then(Value::as_str).unwrap_or("").to_string();
    Some(match answer.status {
        StatusCode::OK => serde_json::from_value(answer.body.clone())
            .map_err(|e| McpError::internal_error(format!("kb serve's answer cannot be read: {e}"), None)),
        StatusCode::NOT_FOUND => Err(McpError::invalid_params(message(), None)),
        status => Err(McpError::internal_error(format!("kb serve answered {status}: {}", message()), None)),
    })
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
