//! The typed [`Tool`] trait each tool implements, and the object-safe [`ErasedTool`] the
//! registry holds. A blanket impl turns every `Tool` into an `ErasedTool`, so argument
//! decoding, output encoding and error mapping happen once, here.
//!
//! One Rust struct per tool (`Tool::Args`, serde `Deserialize` + schemars `JsonSchema`) is
//! the single source of both the JSON schema the LLM sees and the parser of its
//! arguments: they cannot drift.

use std::future::Future;

use kb_domain::ToolDefinition;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::{ToolContext, ToolServices};
use crate::result::{Clarification, ErrorCode, StateUpdate, ToolError, ToolOutput, ToolResult};
use crate::schema::{output_schema, parameters_schema};
use kb_domain::{PendingCall, PendingChoice};

/// What a tool does, for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolCategory {
    /// Reads only.
    Query,
    /// Changes the vault.
    Action,
    /// Asks a language model.
    Agentic,
}

impl ToolCategory {
    /// The category as logged.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolCategory::Query => "query",
            ToolCategory::Action => "action",
            ToolCategory::Agentic => "agentic",
        }
    }
}

/// What a tool promises about its effects, for clients that decide how carefully to call
/// it (MCP's tool annotations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolHints {
    /// It changes nothing.
    pub read_only: bool,
    /// It may remove or overwrite what the person wrote (asks for confirmation in chat).
    pub destructive: bool,
    /// Calling it again with the same arguments has no further effect.
    pub idempotent: bool,
    /// It may reach beyond the vault (a capture of a link reads the page on the web).
    pub open_world: bool,
}

impl ToolHints {
    /// A tool that only reads.
    pub const READ_ONLY: ToolHints =
        ToolHints { read_only: true, destructive: false, idempotent: true, open_world: false };
    /// A tool that adds or changes, never removing what the person wrote.
    pub const ADDITIVE: ToolHints =
        ToolHints { read_only: false, destructive: false, idempotent: false, open_world: false };
}

/// A tool with typed arguments and output.
pub trait Tool: Send + Sync + 'static {
    /// The function name the LLM calls.
    const NAME: &'static str;
    /// When to use it (the LLM reads this).
    const DESCRIPTION: &'static str;
    /// What kind of tool it is, for metrics.
    const CATEGORY: ToolCategory;
    /// What it promises about its effects.
    const HINTS: ToolHints;
    /// Its arguments: the schema and the parser.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// Its data on success (serialised camelCase); its schema is the tool's output schema.
    type Output: Serialize + JsonSchema + Send;

    /// Runs the tool. It must not mutate shared state other than through the services;
    /// conversation state changes are returned as state updates.
    fn run(
        &self,
        args: Self::Args,
        ctx: &ToolContext,
        services: &ToolServices,
    ) -> impl Future<Output = Result<ToolOutput<Self::Output>, ToolError>> + Send;
}

/// A tool as the registry holds it: object safe, arguments as JSON.
#[async_trait::async_trait]
pub trait ErasedTool: Send + Sync {
    /// The function name.
    fn name(&self) -> &'static str;
    /// Its category, for metrics.
    fn category(&self) -> ToolCategory;
    /// Its definition in OpenAI function-calling form.
    fn definition(&self) -> ToolDefinition;
    /// The JSON schema of its data on success.
    fn output_schema(&self) -> Value;
    /// What it promises about its effects.
    fn hints(&self) -> ToolHints;
    /// Decodes the arguments and runs the tool. Never fails: failures are results.
    async fn call(&self, arguments: Value, ctx: &ToolContext, services: &ToolServices) -> ToolResult;
}

#[async_trait::async_trait]
impl<T: Tool> ErasedTool for T {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn category(&self) -> ToolCategory {
        T::CATEGORY
    }

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: T::NAME.to_string(),
            description: T::DESCRIPTION.to_string(),
            parameters: parameters_schema::<T::Args>(),
        }
    }

    fn output_schema(&self) -> Value {
        output_schema::<T::Output>()
    }

    fn hints(&self) -> ToolHints {
        T::HINTS
    }

    async fn call(&self, arguments: Value, ctx: &ToolContext, services: &ToolServices) -> ToolResult {
        // Kept for a failure that asks the person to pick an entry: the call is run again.
        let raw = arguments.clone();
        let args = match crate::registry::decode_arguments::<T>(arguments) {
            Ok(args) => args,
            Err(failure) => return *failure,
        };
        match self.run(args, ctx, services).await {
            Ok(output) => match serde_json::to_value(&output.data) {
                Ok(data) => {
                    ToolResult { touched: output.touched, ..ToolResult::ok(data, output.state_updates) }
                }
                Err(e) => internal_failure(T::NAME, &ToolError::internal(format!("output encoding: {e}"))),
            },
            Err(error) => failure_result(T::NAME, error, Some(raw)),
        }
    }
}

/// The result a tool's failure gives: its code and message, with the entries to choose
/// from when it asks. Given the `arguments` it was called with, it also asks the
/// orchestrator to keep the call pending until the person picks one.
pub(crate) fn failure_result(tool: &str, error: ToolError, arguments: Option<Value>) -> ToolResult {
    if error.code == ErrorCode::Internal {
        return internal_failure(tool, &error);
    }
    if let Some(detail) = &error.detail {
        if error.code == ErrorCode::DiskError {
            tracing::error!(tool, detail = %detail, "the disk refused a tool");
        } else {
            tracing::debug!(tool, detail = %detail, "tool failure detail");
        }
    }
    let clarification = error.clarification.map(|c| *c);
    let mut result = ToolResult {
        model_error: error.model_error,
        ..ToolResult::failure(error.code, error.message.clone())
    };
    if let Some(clarification) = clarification {
        clarify(&mut result, tool, arguments, &error.message, clarification);
    }
    result
}

/// Gives a failure its candidates, and asks the orchestrator to keep the call pending until
/// the person picks one (when a picked candidate can fill an argument of the `arguments`
/// the call was made with).
fn clarify(result: &mut ToolResult, tool: &str, arguments: Option<Value>, message: &str, c: Clarification) {
    let listed = serde_json::to_value(&c.candidates).ok();
    match c.key {
        "possibleDuplicate" => result.possible_duplicate = listed,
        _ => result.candidates = listed,
    }
    let (Some(argument), Some(arguments)) = (c.argument, arguments) else { return };
    let mut choices: Vec<PendingChoice> = c
        .candidates
        .iter()
        .map(|candidate| {
            let mut picked = arguments.clone();
            picked[argument] = Value::String(candidate.path.clone());
            PendingChoice {
                label: candidate.name.clone(),
                path: Some(candidate.path.clone()),
                arguments: picked,
            }
        })
        .collect();
    if let Some((label, extra)) = c.otherwise {
        let mut picked = arguments.clone();
        if let (Some(target), Value::Object(extra)) = (picked.as_object_mut(), extra) {
            target.extend(extra);
        }
        choices.push(PendingChoice { label, path: None, arguments: picked });
    }
    result.state_updates.push(StateUpdate::ChoiceRequested(PendingCall {
        tool: tool.to_string(),
        arguments,
        proposal: message.to_string(),
        choices,
    }));
}

/// Logs an internal failure's detail and answers the LLM with "Internal error".
fn internal_failure(tool: &str, error: &ToolError) -> ToolResult {
    tracing::error!(tool, detail = error.detail.as_deref().unwrap_or("-"), "tool failed internally");
    ToolResult::failure(ErrorCode::Internal, crate::result::INTERNAL_ERROR)
}
