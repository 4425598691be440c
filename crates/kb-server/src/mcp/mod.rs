//! kb as an MCP server (the Model Context Protocol, through the official SDK, rmcp): the
//! registry's tools, the vault as resources, and the digests as prompts, for the
//! assistant a person already uses.
//!
//! One handler, [`KbMcp`], serves a connection: over stdio ([`serve_stdio`], `kb mcp`) or
//! over streamable HTTP at `/mcp` on `kb serve` ([`http_service`], one handler per
//! session). Tools run as the REST API runs them, with `mcp` as the source of what they
//! change; a failing tool answers `isError: true` with the message the chat model reads.
//! Changes to the vault — kb's own, other kb processes', outside edits — reach subscribed
//! clients as `notifications/resources/updated` and `list_changed` ([`notify`]).

pub mod notify;
pub mod prompts;
pub mod resources;
pub mod stdio;
pub mod tools;

use std::sync::Arc;
use std::time::Duration;

use kb_core::Assistant;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use self::notify::Subscriptions;
use crate::local::LocalClient;

/// The largest JSON-RPC message kb reads from a client (a line on stdio, a request body
/// over HTTP): larger ones are refused with a clear error and the connection stays up.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// What kb tells a client about itself when it connects.
const INSTRUCTIONS: &str = "kb is the person's second brain: people, projects, ideas and admin tasks as \
    markdown entries. Use classify_and_capture to file anything new (pass your own classification when you \
    have one), search_entries or list_entries to find, get_entry to read, update_entry and move_entry to \
    change, generate_digest for the daily digest or weekly review. Entries are named by path or by name; when a \
    tool answers with candidates, ask the person which one they mean. The resources are the vault itself: \
    kb://index and kb://entries/{category}/{slug}.";

/// The MCP methods kb answers, for telling a malformed request from an unknown method.
pub(crate) const KNOWN_METHODS: [&str; 12] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "subscriptions/listen",
];

/// kb as it opens: `None` until it is open, then the assistant or why it could not be
/// opened. `kb mcp` answers `initialize` at once and opens kb meanwhile; a request that
/// needs kb waits for it.
pub type Opening = tokio::sync::watch::Receiver<Option<Result<Arc<Assistant>, Arc<str>>>>;

/// The error every request gets once kb could not be opened, saying `why`.
fn not_opened(why: &str) -> String {
    format!("kb could not be opened: {why}")
}

/// One MCP connection's view of kb.
#[derive(Clone)]
pub struct KbMcp {
    assistant: Opening,
    subscriptions: Arc<Subscriptions>,
    /// Tool calls under way: each runs to its end even when the client goes away
    /// mid-call, and `kb mcp` waits for them before it exits.
    calls: TaskTracker,
    /// This connection's MCP session, recorded with every change it makes so its undo
    /// reaches only those: one per `kb mcp` process, one per `Mcp-Session-Id` over HTTP
    /// (each HTTP session has a handler of its own).
    session: Arc<str>,
    /// For `kb mcp`: the `kb serve` of the same vault, asked each tool call first (see
    /// [`crate::local`]); `None` over HTTP.
    local: Option<LocalClient>,
    /// Who the session acts for: the local owner, or the person whose token opened it
    /// (their role bounds the tools it lists and runs).
    actor: kb_core::domain::Actor,
}

impl std::fmt::Debug for KbMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KbMcp").finish_non_exhaustive()
    }
}

impl KbMcp {
    /// A handler for one connection to `assistant`.
    pub fn new(assistant: Arc<Assistant>) -> KbMcp {
        let (_, opened) = tokio::sync::watch::channel(Some(Ok(assistant)));
        KbMcp::opening(opened)
    }

    /// A handler for one connection to kb while it opens (see [`Opening`]).
    pub fn opening(assistant: Opening) -> KbMcp {
        KbMcp {
            assistant,
            subscriptions: Arc::default(),
            calls: TaskTracker::new(),
            session: kb_core::domain::ChangeContext::new_session().into(),
            local: None,
            actor: kb_core::domain::Actor::local(),
        }
    }

    /// This handler, asking `local` (the vault's `kb serve`) each tool call first, and
    /// running the call itself only when no server answers or it declines.
    pub fn beside(self, local: Option<LocalClient>) -> KbMcp {
        KbMcp { local, ..self }
    }

    /// This handler, acting for `actor`.
    pub fn acting_for(self, actor: kb_core::domain::Actor) -> KbMcp {
        KbMcp { actor, ..self }
    }

    /// kb, once it is open (an error when it could not be opened).
    async fn assistant(&self) -> Result<Arc<Assistant>, McpError> {
        let mut opening = self.assistant.clone();
        let opened = opening
            .wait_for(Option::is_some)
            .await
            .map_err(|_| McpError::internal_error("kb stopped while opening", None))?;
        match opened.as_ref() {
            Some(Ok(assistant)) => Ok(Arc::clone(assistant)),
            Some(Err(why)) => Err(McpError::internal_error(not_opened(why), None)),
            None => Err(McpError::internal_error("kb is not open", None)),
        }
    }

    /// Waits until every tool call started on this connection has finished.
    pub async fn finish_calls(&self) {
        self.calls.close();
        self.calls.wait().await;
    }
}

impl ServerHandler for KbMcp {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_prompts()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("kb", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // Listed once kb is open, so a vault that cannot be opened is told at once and not
        // after a tool list that no call would answer.
        let assistant = self.assistant().await?;
        let mut specs = match kb_core::assistant::standard_specs() {
            Some(specs) => specs,
            None => assistant.tools().specs(),
        };
        // A reader is offered the tools that read (the others would be refused).
        if self.actor.role() < kb_core::domain::VaultRole::Editor {
            specs.retain(|spec| spec.hints.read_only);
        }
        Ok(ListToolsResult::with_all_items(tools::listed(specs)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let session = Arc::clone(&self.session);
        let (local, handler, actor) = (self.local.clone(), self.clone(), self.actor.clone());
        let call = self.calls.spawn(async move {
            if let Some(local) = local
                && let Some(answered) = tools::ask_server(&local, &request, &session).await
            {
                return answered;
            }
            let assistant = handler.assistant().await?;
            tools::call(&assistant, request, &session, &actor).await
        });
        match call.await {
            Ok(result) => result.map(CallToolResponse::from),
            Err(error) => Err(McpError::internal_error(format!("the tool call failed: {error}"), None)),
        }
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        resources::list(&*self.assistant().await?, request.and_then(|r| r.cursor).as_deref()).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(resources::templates()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        resources::read(&*self.assistant().await?, &request.uri).await.map(ReadResourceResponse::from)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        resources::parse_uri(&request.uri)?;
        let assistant = self.assistant().await?;
        self.subscriptions.add(request.uri);
        notify::follow_for(&assistant, &self.subscriptions, context.peer);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscriptions.remove(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(notify::accepted(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        notify::listen(&*self.assistant().await?, context).await;
        Ok(())
    }

    /// A request rmcp could not read as any MCP request: an unknown method, or a known one
    /// whose params do not fit (which would otherwise also read as "method not found").
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let method = request.method.as_str();
        if KNOWN_METHODS.contains(&method) {
            return Err(McpError::invalid_params(
                format!(
                    "the params of {method} do not fit the MCP schema (for tools/call: name, and arguments as an object)"
                ),
                None,
            ));
        }
        Err(McpError::new(ErrorCode::METHOD_NOT_FOUND, format!("Unknown method: {method}"), None))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Every connected client is notified that the list of entries changed (once kb is
        // open: the answer to `initialize` does not wait for it).
        let this = self.clone();
        tokio::spawn(async move {
            if let Ok(assistant) = this.assistant().await {
                notify::follow_for(&assistant, &this.subscriptions, context.peer);
            }
        });
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(prompts::listed()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        prompts::get(&*self.assistant().await?, &request.name, request.arguments.as_ref())
            .await
            .map(GetPromptResponse::from)
    }
}

/// Serves one MCP client over this process's stdin and stdout until it disconnects,
/// answering as soon as kb is open (see [`Opening`]).
pub async fn serve_stdio(assistant: Opening, local: Option<LocalClient>) -> anyhow::Result<()> {
    let (stdin, stdout) = rmcp::transport::stdio();
    let framed = stdio::frame(stdin, stdout, assistant.clone());
    let transport =
        rmcp::transport::async_rw::AsyncRwTransport::new_server(framed.server_in, framed.server_out);
    let handler = KbMcp::opening(assistant).beside(local);
    let running = match handler.clone().serve(transport).await {
        Ok(running) => running,
        Err(error) => {
            // No session (the client left, or kb could not be opened and every request
            // was answered why by the framing): what was answered is still written.
            let _ = framed.done.await;
            return Err(error.into());
        }
    };
    let ended = running.waiting().await;
    // A client that hung up mid-call: the call still finishes (and is recorded) first.
    handler.finish_calls().await;
    let _ = framed.done.await;
    ended?;
    Ok(())
}

/// The streamable HTTP endpoint (`/mcp`): one session per client, each with its own
/// handler acting for `actor`. Once kb has accounts there is one endpoint per person and
/// vault, so a session id is known only to the person and vault it was opened for. Who may call it is checked before (the bearer token and loopback rule of
/// `/api`); `shutdown` ends every session's open stream when the server stops.
pub fn http_service(
    assistant: Arc<Assistant>,
    actor: kb_core::domain::Actor,
    shutdown: CancellationToken,
) -> StreamableHttpService<KbMcp, LocalSessionManager> {
    let config = StreamableHttpServerConfig::default()
        // kb's own rule (the token, or a loopback Host without one) is applied around it.
        .disable_allowed_hosts()
        .with_max_request_body_bytes(MAX_MESSAGE_BYTES)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_cancellation_token(shutdown);
    StreamableHttpService::new(
        move || Ok(KbMcp::new(Arc::clone(&assistant)).acting_for(actor.clone())),
        Arc::default(),
        config,
    )
}
