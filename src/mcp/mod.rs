//! The rmcp tool server: one struct, its tools described from `schemas/`, structured results
//! that are the canonical payloads, and a readable text block beside them.
//!
//! Protocol errors (an unknown tool) stay JSON-RPC errors; everything the contract rejects or
//! the runtime fails at is a tool result with `isError: true` and its `PM_TERM_*` payload.

pub mod elicit;
pub mod framing;
pub mod http;
pub mod line_check;
pub mod logging;
mod next;
pub mod readable;
pub mod resources;
mod shared_text;
pub mod stdio;
pub mod subscriptions;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, Tool, ToolAnnotations, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::contract::advertise::Face;
use crate::contract::schema;
use crate::service::{Progress, Service};

/// The canonical tool (docs/contract.md).
pub const INTERACTIVE_TOOL: &str = "memory_terminal_interactive";
/// Strict allowlisted headless execution (docs/policy.md).
pub const STRICT_TOOL: &str = "memory_terminal";

const STRICT_DESCRIPTION: &str = "Strict, allowlisted headless execution: only read-only and build/test commands on the operator's allowlist \
(ls, cat, grep, rg, find without -exec/-delete, git status/log/diff/show, git branch [-a|-r|-v], cargo build/test/check/clippy, npm test, pytest, …), \
one simple command at a time, the program by name (not a path), no shell operators, redirections or substitutions; execution.env only for data \
(CI, NO_COLOR, LC_*, RUST_BACKTRACE, … and the operator's names). Same requests and answers as memory_terminal_interactive in headless mode: \
{\"action\":\"execute\",\"invocation\":{\"mode\":\"headless\",\"intent\":\"execute_command\"},\"execution\":{\"command\":\"git status\"}} \
(or simply {\"command\":\"git status\"}), then read_output / terminate / list by session_id. Anything else answers PM_TERM_BLOCKED_DESTRUCTIVE with the allowlist.";

const INTERACTIVE_DESCRIPTION: &str = "Run and drive terminals without losing a byte.\n\
HEADLESS (builds, tests, one-shot commands; stdout/stderr apart, stdin closed):\n\
  {\"action\":\"execute\",\"invocation\":{\"mode\":\"headless\",\"intent\":\"execute_command\"},\"execution\":{\"command\":\"cargo test\"}}\n\
  Answers at exit, or after runtime.wait_ms (default 5000) with running:true and a session_id.\n\
INTERACTIVE (a real terminal with a shell: REPLs, prompts, full-screen programs, dev servers):\n\
  {\"action\":\"execute\",\"invocation\":{\"mode\":\"interactive\",\"intent\":\"execute_command\"},\"execution\":{\"command\":\"npm run dev\"}} opens a terminal and runs it (exit code + its output); add \"target\":{\"terminal_id\":\"term_...\"} to run in that terminal; intent open_only opens a shell.\n\
  Raw input (prompt answers, REPL lines): \"execution\":{\"input\":\"y\\n\"} or {\"keys\":[\"ctrl-c\"]} with target.terminal_id. An answer comes as soon as the program waits for input (waiting_for_input, prompt).\n\
NEXT: every answer that leaves something to do has next {why, request}: the request to send (read the rest, answer a prompt, follow a command waiting for a person's approval).\n\
read_output with target (session_id / terminal_id / approval_id) returns what you have not seen, runtime.wait_ms waits for more. terminate kills the whole process tree. list shows everything.\n\
Failures: error.code PM_TERM_* and a fallback saying what to do.";

const INSTRUCTIONS: &str = "interactive-terminal-mcp runs commands for you. Use memory_terminal_interactive: \
execute (headless for builds/tests/one-shot commands; interactive for shells, REPLs, prompts and full-screen \
programs), read_output to follow output by cursor, terminate to stop a process tree, list to see everything. \
Terminals are also resources at ahp-terminal:/term_<id> (subscribe for updates). Every failure has a PM_TERM_* \
code and a fallback.";

/// The MCP face of the [`Service`].
#[derive(Clone)]
pub struct McpServer {
    app: Arc<Service>,
    tools: Arc<Vec<Tool>>,
    subs: Arc<subscriptions::Subscriptions>,
    /// 2026-07-28's approval questions waiting for their second call.
    rounds: Arc<elicit::Rounds>,
    /// Over HTTP, a session's server: when its last copy goes (the session ended), what the
    /// session started is stopped.
    session_end: Option<Arc<SessionEnd>>,
    /// Over stdio, the end of the client's input: `subscriptions/listen` requests end with it.
    input_end: Option<framing::InputEnd>,
    /// This connection's share of the log (up to 2025-11-25).
    log: logging::ConnectionLog,
}

/// Stops a session's commands and terminals when dropped.
struct SessionEnd {
    app: Arc<Service>,
}

impl Drop for SessionEnd {
    fn drop(&mut self) {
        let app = self.app.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move { app.close_session().await });
        }
    }
}

impl McpServer {
    pub fn new(app: Arc<Service>) -> Result<McpServer, String> {
        let output = Arc::new(schema::tool_output_schema());
        let interactive = Tool::new(
            INTERACTIVE_TOOL,
            INTERACTIVE_DESCRIPTION,
            Arc::new(schema::tool_input_schema(Face::Interactive)?),
        )
        .with_title("Interactive terminal")
        .with_raw_output_schema(output.clone())
        .with_annotations(
            ToolAnnotations::with_title("Interactive terminal")
                .read_only(false)
                .destructive(true)
                .idempotent(false)
                .open_world(true),
        );
        let strict = Tool::new(
            STRICT_TOOL,
            STRICT_DESCRIPTION,
            Arc::new(schema::tool_input_schema(Face::Strict)?),
        )
        .with_title("Strict terminal (allowlisted, headless)")
        .with_raw_output_schema(output)
        .with_annotations(
            ToolAnnotations::with_title("Strict terminal")
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        );
        Ok(McpServer {
            app,
            tools: Arc::new(vec![interactive, strict]),
            subs: Arc::new(subscriptions::Subscriptions::default()),
            rounds: Arc::new(elicit::Rounds::default()),
            session_end: None,
            input_end: None,
            log: logging::ConnectionLog::default(),
        })
    }

    /// This server's client is the one whose input `end` follows (stdio).
    pub fn ending_with_input(mut self, end: framing::InputEnd) -> McpServer {
        self.input_end = Some(end);
        self
    }

    /// This server is one HTTP session's: ending the session stops what it started.
    pub fn ending_with_its_session(mut self) -> McpServer {
        self.session_end = Some(Arc::new(SessionEnd {
            app: self.app.clone(),
        }));
        self
    }

    /// Turn a payload into a tool result: structured content plus its text rendering.
    fn tool_result(&self, mut payload: Value) -> CallToolResult {
        if let Some(step) = next::step(&payload, self.app.output_budget() as u64)
            && let Value::Object(m) = &mut payload
        {
            m.insert("next".into(), step);
        }
        let text = readable::render(&payload);
        let failed = payload.get("success") != Some(&Value::Bool(true));
        let mut r = if failed {
            CallToolResult::error(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::success(vec![ContentBlock::text(text)])
        };
        r.structured_content = Some(payload);
        r
    }
}

/// The client of one tool call as the service's waits see it: `notifications/progress` when
/// the client gave a progress token, and its `notifications/cancelled`.
struct McpProgress {
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
    sent: AtomicU64,
    cancelled: CancellationToken,
}

impl Progress for McpProgress {
    fn report(&self, elapsed: Duration, what: &str) {
        let Some(token) = &self.token else {
            return;
        };
        let n = self.sent.fetch_add(1, Ordering::Relaxed) + 1;
        let peer = self.peer.clone();
        let param = ProgressNotificationParam::new(token.clone(), n as f64)
            .with_message(format!("{what} ({} s)", elapsed.as_secs()));
        tokio::spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    }

    fn abandoned(&self) -> Option<&CancellationToken> {
        Some(&self.cancelled)
    }
}

impl ServerHandler for McpServer {
    #[allow(deprecated)] // logging: see mcp::logging
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_resources_list_changed()
                .enable_logging()
                .build(),
        )
        .with_server_info(
            Implementation::new("interactive-terminal-mcp", env!("CARGO_PKG_VERSION"))
                .with_title("Interactive terminal MCP server"),
        )
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(resources::list(&self.app).await)
    }

    /// Over HTTP, only protocol versions with sessions: a 2026-07-28 request is stateless,
    /// served by a fresh service each time, and could not follow a command it started.
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(match self.session_end {
            Some(_) => ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25),
            None => ProtocolVersion::KNOWN_VERSIONS,
        })
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.log.attach(&context.peer);
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.log.set_level(&context.peer, request.level);
        Ok(())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        resources::read(&self.app, &request.uri)
            .await
            .map(Into::into)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subs
            .subscribe(&self.app, request.uri, context.peer.clone())
            .await
    }

    /// 2026-07-28's subscriptions (stdio; HTTP offers versions up to 2025-11-25 only).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(subscriptions::accepted(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        subscriptions::listen(&self.app, context, self.input_end.clone()).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subs.unsubscribe(&request.uri);
        Ok(())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let strict = match request.name.as_ref() {
            INTERACTIVE_TOOL => false,
            STRICT_TOOL => true,
            other => {
                return Err(McpError::invalid_params(
                    format!("unknown tool {other:?}"),
                    None,
                ));
            }
        };
        // 2026-07-28 and later: no request from server to client; a question is an
        // `input_required` answer, and the call comes back with the user's answer. The
        // request says how much of its own log it wants.
        let in_rounds = context
            .meta
            .protocol_version()
            .is_some_and(|v| !v.has_initialize());
        let whose = match (in_rounds, &self.session_end) {
            (true, _) => match logging::requested_level(&context.meta)? {
                Some(level) => logging::Whose::Request(level),
                None => logging::Whose::Unscoped,
            },
            // An HTTP session's events are its own, beside the other sessions'.
            (false, Some(_)) => logging::Whose::Connection(&self.log),
            (false, None) => logging::Whose::Unscoped,
        };
        let peer = context.peer.clone();
        logging::in_request(
            whose,
            &peer,
            self.answer_call(strict, in_rounds, request, context),
        )
        .await
    }
}

impl McpServer {
    /// A call of one of the tools (`strict`: the allowlisted one), on the 2026-07-28
    /// protocol when `in_rounds`.
    async fn answer_call(
        &self,
        strict: bool,
        in_rounds: bool,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let progress = McpProgress {
            peer: context.peer.clone(),
            token: context.meta.get_progress_token(),
            sent: AtomicU64::new(0),
            cancelled: context.ct.clone(),
        };
        if strict {
            let payload = self.app.handle_strict(&args, &progress).await;
            return Ok(self.tool_result(payload).into());
        }
        if !in_rounds {
            let elicitor = elicit::PeerElicitor {
                peer: context.peer.clone(),
            };
            let payload = self.app.handle(&args, &progress, &elicitor).await;
            return Ok(self.tool_result(payload).into());
        }
        let supported = context
            .meta
            .client_capabilities()
            .and_then(|c| c.elicitation)
            .is_some_and(|e| elicit::asks_forms(&e));
        let answer = self.rounds.answer(
            request.request_state.as_deref(),
            &args,
            request.input_responses.as_ref(),
        );
        let elicitor = elicit::RoundElicitor::new(supported, answer);
        let payload = self.app.handle(&args, &progress, &elicitor).await;
        if let Some((message, timeout)) = elicitor.asked()
            && let Some(asked) = self.rounds.ask(&args, message, timeout)
        {
            // The call stopped at the question and started nothing: its answer so far
            // (no decision in time) is dropped for the question.
            return Ok(asked.into());
        }
        Ok(self.tool_result(payload).into())
    }
}
