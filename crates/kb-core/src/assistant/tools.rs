//! [`Tools`]: an [`Assistant`]'s tools as a client outside the chat sees them (the MCP
//! server's `tools/list` and `tools/call`): their definitions, and a call by name with
//! JSON arguments.

use kb_domain::ToolDefinition;
use kb_tools::{CaptureSource, Tool, ToolContext, ToolHints, ToolResult};
use serde_json::Value;

use super::Assistant;
use crate::error::ToolFailure;

/// One tool as a client outside the chat sees it (the MCP server's `tools/list`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Its name, description and argument schema.
    pub definition: ToolDefinition,
    /// The schema of its data on success.
    pub output_schema: Value,
    /// What it promises about its effects.
    pub hints: ToolHints,
}

/// The tools by name, with the changes they make recorded as coming from one source (see
/// [`Assistant::tools`], [`Tools::by`] and [`Tools::in_session`]).
#[derive(Debug, Clone)]
pub struct Tools<'a> {
    kb: &'a Assistant,
    source: CaptureSource,
    /// Who asks: their changes name them, and their role bounds what the tools may do.
    actor: kb_domain::Actor,
    session: Option<String>,
}

impl<'a> Tools<'a> {
    pub(super) fn new(kb: &'a Assistant, source: CaptureSource) -> Tools<'a> {
        Tools { kb, source, session: None, actor: kb_domain::Actor::local() }
    }

    /// The same tools, with the changes they make recorded as asked from `source`.
    pub fn by(self, source: CaptureSource) -> Tools<'a> {
        Tools { source, ..self }
    }

    /// The same, asked by `actor`: the changes made name them, and a reader's changes are
    /// refused.
    pub fn as_actor(self, actor: &kb_domain::Actor) -> Tools<'a> {
        Tools { actor: actor.clone(), ..self }
    }

    /// The same tools for an MCP client in session `session` (see
    /// [`kb_domain::ChangeContext::session`]): its changes are recorded with the session,
    /// and its undo reaches only them.
    pub fn in_session(self, session: &str) -> Tools<'a> {
        Tools { source: CaptureSource::Mcp, session: Some(session.to_string()), ..self }
    }

    /// Every tool, in the order the chat model sees them, with its schemas and hints.
    pub fn specs(&self) -> Vec<ToolSpec> {
        specs_of(&self.kb.registry)
    }

    /// Whether a tool of that name exists.
    pub fn has(&self, name: &str) -> bool {
        self.kb.registry.get(name).is_some()
    }

    /// Decodes JSON `arguments` for tool `T` as a call by name would (checked against its
    /// schema, every problem listed), with the same failures: for a client that sends a
    /// tool's arguments as JSON and runs it with [`Assistant::run`].
    pub fn decode<T: Tool>(&self, arguments: Value) -> Result<T::Args, ToolFailure> {
        self.kb.registry.decode::<T>(arguments).map_err(|failure| ToolFailure::from_result(&failure))
    }

    /// Runs the tool `name` with JSON `arguments`, answering its whole result: its data,
    /// or the message the chat model would read with any candidates.
    pub async fn call(&self, name: &str, arguments: &Value) -> ToolResult {
        let ctx =
            ToolContext { session: self.session.clone(), ..self.kb.direct_context(self.source, &self.actor) };
        self.kb.registry.execute(name, &arguments.to_string(), &ctx, &self.kb.services).await
    }
}

/// What [`Tools::specs`] answers, without opening kb (its tools are the standard registry's,
/// whatever the vault): `kb mcp` lists them while kb opens. `None` if the registry cannot
/// be made, which kb's own tests rule out.
pub fn standard_specs() -> Option<Vec<ToolSpec>> {
    kb_tools::standard_registry().ok().map(|registry| specs_of(&registry))
}

/// Every tool of `registry`, in its order, with its schemas and hints.
fn specs_of(registry: &kb_tools::ToolRegistry) -> Vec<ToolSpec> {
    registry
        .definitions()
        .into_iter()
        .map(|definition| ToolSpec {
            output_schema: registry.output_schema(&definition.name).cloned().unwrap_or(Value::Null),
            hints: registry.hints(&definition.name).unwrap_or(ToolHints::ADDITIVE),
            definition,
        })
        .collect()
}
