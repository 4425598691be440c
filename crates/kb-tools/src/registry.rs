//! The [`ToolRegistry`]: the tools offered to the LLM, their definitions, and the one
//! entry point that executes a call.
//!
//! `execute` never panics and never returns an error: an unknown tool, arguments that are
//! not JSON or do not fit the schema (every problem listed), a tool's own failure, and a
//! panic inside a tool all come back as a [`ToolResult`] the LLM can read. Each call is
//! traced with its tool, category, duration, success and error code.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use kb_domain::ToolDefinition;
use serde_json::Value;
use tracing::Instrument;

use crate::context::{ToolContext, ToolServices};
use crate::result::{ErrorCode, INTERNAL_ERROR, ToolOutput, ToolResult};
use crate::tool::{ErasedTool, Tool, ToolCategory, ToolHints, failure_result};
use crate::validate::check_arguments;

/// Why a registry could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Two tools share a name.
    #[error("duplicate tool name: {0}")]
    Duplicate(String),
}

struct Registered {
    tool: Arc<dyn ErasedTool>,
    definition: ToolDefinition,
    output_schema: Value,
}

/// Collects tools; [`RegistryBuilder::build`] refuses duplicate names.
#[derive(Default)]
pub struct RegistryBuilder {
    tools: Vec<Arc<dyn ErasedTool>>,
}

impl RegistryBuilder {
    /// Adds a tool.
    pub fn register(mut self, tool: impl ErasedTool + 'static) -> RegistryBuilder {
        self.tools.push(Arc::new(tool));
        self
    }

    /// The registry, or the first duplicate name.
    pub fn build(self) -> Result<ToolRegistry, RegistryError> {
        let mut by_name = HashMap::new();
        let mut tools = Vec::with_capacity(self.tools.len());
        for tool in self.tools {
            let name = tool.name();
            if by_name.insert(name, tools.len()).is_some() {
                return Err(RegistryError::Duplicate(name.to_string()));
            }
            let definition = tool.definition();
            let output_schema = tool.output_schema();
            tools.push(Registered { tool, definition, output_schema });
        }
        Ok(ToolRegistry { tools, by_name })
    }
}

/// The tools kb offers the LLM.
pub struct ToolRegistry {
    tools: Vec<Registered>,
    by_name: HashMap<&'static str, usize>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.iter().map(|t| t.definition.name.as_str())).finish()
    }
}

impl ToolRegistry {
    /// Starts a registry.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// Every tool's definition, in registration order (OpenAI function-calling form).
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools.iter().map(|t| t.definition.clone()).collect()
    }

    /// The definition of one tool.
    pub fn get(&self, name: &str) -> Option<&ToolDefinition> {
        self.by_name.get(name).map(|&i| &self.tools[i].definition)
    }

    /// The JSON schema of one tool's data on success.
    pub fn output_schema(&self, name: &str) -> Option<&Value> {
        self.by_name.get(name).map(|&i| &self.tools[i].output_schema)
    }

    /// What one tool promises about its effects.
    pub fn hints(&self, name: &str) -> Option<ToolHints> {
        self.by_name.get(name).map(|&i| self.tools[i].tool.hints())
    }

    /// The definitions of the tools someone with `role` may call, in registration order
    /// (a reader's chat offers the model only these).
    pub fn definitions_for(&self, role: kb_domain::VaultRole) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .filter(|t| role >= kb_domain::VaultRole::Editor || t.tool.hints().read_only)
            .map(|t| t.definition.clone())
            .collect()
    }

    /// The names of the tools, in registration order.
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.tool.name()).collect()
    }

    /// The category of one tool.
    pub fn category(&self, name: &str) -> Option<ToolCategory> {
        self.by_name.get(name).map(|&i| self.tools[i].tool.category())
    }

    /// Executes one call: `raw_arguments` is the JSON text the LLM sent (empty means `{}`).
    ///
    /// Must run inside a tokio runtime: the tool runs as a spawned task so a panic is
    /// caught. If the caller stops waiting, the task still finishes (no half-done write).
    pub async fn execute(
        &self,
        name: &str,
        raw_arguments: &str,
        ctx: &ToolContext,
        services: &ToolServices,
    ) -> ToolResult {
        let Some(&index) = self.by_name.get(name) else {
            tracing::warn!(tool = name, error_code = ErrorCode::UnknownTool.as_str(), "unknown tool called");
            return ToolResult::failure(ErrorCode::UnknownTool, format!("Unknown tool: {name}"));
        };
        let registered = &self.tools[index];
        let category = registered.tool.category();
        let span = tracing::info_span!("tool", tool = name, category = category.as_str());
        async {
            let started = Instant::now();
            let result = self.run(registered, raw_arguments, ctx, services).await;
            tracing::info!(
                duration_ms = started.elapsed().as_secs_f64() * 1000.0,
                success = result.success,
                error_code = result.error_code.map(ErrorCode::as_str),
                "tool call finished"
            );
            result
        }
        .instrument(span)
        .await
    }

    /// Decodes `arguments` for tool `T` as [`ToolRegistry::execute`] does (every problem
    /// against its schema listed, then the typed decode), with the same failures.
    pub fn decode<T: Tool>(&self, arguments: Value) -> Result<T::Args, Box<ToolResult>> {
        let Some(&index) = self.by_name.get(T::NAME) else {
            return Err(Box::new(ToolResult::failure(
                ErrorCode::UnknownTool,
                format!("Unknown tool: {}", T::NAME),
            )));
        };
        let problems = check_arguments(&self.tools[index].definition.parameters, &arguments);
        if !problems.is_empty() {
            return Err(Box::new(ToolResult::failure(
                ErrorCode::InvalidArguments,
                format!("invalid arguments for {}: {}", T::NAME, problems.join("; ")),
            )));
        }
        decode_arguments::<T>(arguments)
    }

    /// Runs tool `T` with typed arguments, traced as [`ToolRegistry::execute`] traces a
    /// call: its typed output, or its failure as a result the chat model would read (with
    /// any candidates). A panic inside the tool is caught and answered as an internal
    /// failure.
    pub async fn run_typed<T: Tool + Default>(
        &self,
        args: T::Args,
        ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<T::Output>, Box<ToolResult>>
    where
        T::Output: 'static,
    {
        if !self.by_name.contains_key(T::NAME) {
            return Err(Box::new(ToolResult::failure(
                ErrorCode::UnknownTool,
                format!("Unknown tool: {}", T::NAME),
            )));
        }
        if let Some(refused) = role_refuses(T::NAME, T::HINTS, ctx) {
            return Err(Box::new(refused));
        }
        let span = tracing::info_span!("tool", tool = T::NAME, category = T::CATEGORY.as_str());
        async {
            let started = Instant::now();
            let (ctx, services) = (ctx.clone(), services.clone());
            let task =
                tokio::spawn(async move { T::default().run(args, &ctx, &services).await }.in_current_span());
            let result = match task.await {
                Ok(Ok(output)) => Ok(output),
                Ok(Err(error)) => Err(Box::new(failure_result(T::NAME, error, None))),
                Err(join_error) => Err(Box::new(task_failure(T::NAME, join_error))),
            };
            let failure = result.as_ref().err();
            tracing::info!(
                duration_ms = started.elapsed().as_secs_f64() * 1000.0,
                success = failure.is_none(),
                error_code = failure.and_then(|f| f.error_code).map(ErrorCode::as_str),
                "tool call finished"
            );
            result
        }
        .instrument(span)
        .await
    }

    async fn run(
        &self,
        registered: &Registered,
        raw_arguments: &str,
        ctx: &ToolContext,
        services: &ToolServices,
    ) -> ToolResult {
        let name = registered.definition.name.as_str();
        if let Some(refused) = role_refuses(name, registered.tool.hints(), ctx) {
            return refused;
        }
        let arguments = match parse_arguments(raw_arguments) {
            Ok(value) => value,
            Err(message) => return ToolResult::failure(ErrorCode::InvalidArguments, message),
        };
        let problems = check_arguments(&registered.definition.parameters, &arguments);
        if !problems.is_empty() {
            return ToolResult::failure(
                ErrorCode::InvalidArguments,
                format!("invalid arguments for {name}: {}", problems.join("; ")),
            );
        }
        // The tool runs as its own task so that a panic inside it is caught (JoinError)
        // rather than unwinding into the caller.
        let tool = Arc::clone(&registered.tool);
        let (ctx, services) = (ctx.clone(), services.clone());
        let task = tokio::spawn(async move { tool.call(arguments, &ctx, &services).await }.in_current_span());
        match task.await {
            Ok(result) => result,
            Err(join_error) => task_failure(name, join_error),
        }
    }
}

/// Decodes a tool's arguments; a decode failure is the tool's `INVALID_ARGUMENTS`.
pub(crate) fn decode_arguments<T: Tool>(arguments: Value) -> Result<T::Args, Box<ToolResult>> {
    serde_json::from_value(arguments).map_err(|e| {
        Box::new(ToolResult::failure(
            ErrorCode::InvalidArguments,
            format!("invalid arguments for {}: {e}", T::NAME),
        ))
    })
}

/// The failure of a tool task that panicked or was cancelled (logged with its detail).
fn task_failure(tool: &str, join_error: tokio::task::JoinError) -> ToolResult {
    let detail = if join_error.is_panic() {
        panic_message(join_error.into_panic())
    } else {
        "the tool task was cancelled".to_string()
    };
    tracing::error!(tool, detail = %detail, "tool panicked");
    ToolResult::failure(ErrorCode::Internal, INTERNAL_ERROR)
}

/// Parses the LLM's argument text; an empty text means no arguments.
fn parse_arguments(raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(raw).map_err(|e| format!("arguments are not valid JSON: {e}"))
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => match payload.downcast::<&'static str>() {
            Ok(s) => (*s).to_string(),
            Err(_) => "a panic with no message".to_string(),
        },
    }
}

/// The refusal of tool `name` (with `hints`) to someone whose role in the vault may not use
/// it: a tool that changes anything needs an editor. The role is checked here, in the
/// registry, whoever asked (the model, the offline rules, MCP, HTTP, the CLI).
fn role_refuses(name: &str, hints: ToolHints, ctx: &ToolContext) -> Option<ToolResult> {
    if hints.read_only || ctx.role >= kb_domain::VaultRole::Editor {
        return None;
    }
    tracing::info!(
        tool = name,
        role = ctx.role.as_str(),
        "a tool that changes the vault refused to a reader"
    );
    Some(ToolResult::failure(
        ErrorCode::ForbiddenRole,
        format!("{name} changes the vault, and your role here is {}: only an editor may change it", ctx.role),
    ))
}

#[cfg(test)]
mod tests {
    use crate::standard_registry;

    /// Every tool has an output schema a client can validate against on its own: an
    /// object with properties, no reference to a definition elsewhere.
    #[test]
    fn every_tool_has_a_self_contained_object_output_schema() -> Result<(), Box<dyn std::error::Error>> {
        let registry = standard_registry()?;
        for name in registry.names() {
            let schema = registry.output_schema(name).ok_or("no output schema")?;
            assert_eq!(schema["type"], "object", "{name}");
            assert!(schema["properties"].as_object().is_some_and(|p| !p.is_empty()), "{name}: {schema}");
            let text = schema.to_string();
            assert!(!text.contains("$ref") && !text.contains("$defs"), "{name}: {text}");
            // Only formats JSON Schema defines (schemars' own, like `uint`, make clients warn).
            for own in ["\"uint", "\"int", "\"double\"", "\"float\""] {
                assert!(!text.contains(&format!("\"format\":{own}")), "{name}: {text}");
            }
            if std::env::var_os("KB_PRINT_SCHEMAS").is_some() {
                println!("{name}: {}", serde_json::to_string_pretty(schema)?);
            }
        }
        let hints = |name| registry.hints(name).ok_or("no hints");
        assert!(hints("search_entries")?.read_only && !hints("search_entries")?.destructive);
        assert!(hints("delete_entry")?.destructive && hints("merge_entries")?.destructive);
        assert!(!hints("classify_and_capture")?.read_only);
        Ok(())
    }
}
