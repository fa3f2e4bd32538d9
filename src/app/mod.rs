//! The contract service: one request in, one canonical payload out. Parses and validates
//! (contract), routes headless work to `exec` and interactive work to `runtime`, and turns
//! every outcome, good or bad, into a §2.2 response or a §3.2 error payload.

pub mod approval;
mod headless;
mod interactive;
pub mod output;
mod strict;
pub mod wait;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::config::Config;
use crate::contract::{self, Action, Ctx, ErrorCode, Mode, Request, TermError, response};
use crate::exec::{ExecConfig, ExecManager};
use crate::ids;
use crate::runtime::{LocalAdapter, Runtime};
use crate::terminal::{Core, CoreConfig};

pub use approval::{ElicitOutcome, Elicitor, NoElicitor};
pub use wait::{NoProgress, Progress};

/// A handler's outcome: the `result` object, or an error.
pub(crate) type Answer = Result<Map<String, Value>, TermError>;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Largest request accepted, serialized.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

pub struct App {
    pub cfg: Config,
    pub policy: crate::policy::Policy,
    pub exec: ExecManager,
    pub runtime: Runtime,
    /// The AHP session this server claims its terminals as (seed 001 "Claims").
    pub session_uri: String,
    pub chat_uri: String,
}

impl App {
    pub fn new(cfg: Config, policy: crate::policy::Policy) -> Arc<App> {
        let exec = ExecManager::new(ExecConfig {
            spool_dir: cfg.spool_dir.clone(),
            memory_limit: cfg.output_memory,
            max_running: cfg.max_sessions,
            max_retained: cfg.max_retained,
        });
        let mut core_cfg = CoreConfig::new(cfg.spool_dir.clone(), cfg.output_memory);
        core_cfg.default_shell = cfg.interactive_shell.clone();
        core_cfg.max_terminals = cfg.max_terminals;
        core_cfg.scrollback_bytes = cfg.scrollback_bytes;
        core_cfg.skip_user_rc = cfg.no_user_rc;
        let local = LocalAdapter::new(Core::new(core_cfg));
        if let (Ok(crate::runtime::AdapterType::ContainerBridge), Err(e)) = (
            crate::runtime::mode::resolve(None, &cfg.runtime),
            &cfg.runtime.bridge,
        ) {
            tracing::warn!(problems = %e.message, "interactive requests will be refused until the container bridge is configured");
        }
        let instance = ids::new_id("mcp");
        let runtime = Runtime::new(local, cfg.runtime.clone());
        Arc::new(App {
            cfg,
            policy,
            exec,
            runtime,
            session_uri: format!("ahp-session:/{instance}"),
            chat_uri: format!("ahp-chat:/{instance}"),
        })
    }

    /// Handle one raw request; always answers a payload, never panics on input.
    pub async fn handle(
        &self,
        raw: &Value,
        progress: &dyn Progress,
        elicitor: &dyn Elicitor,
    ) -> Value {
        let req = match self.parse(raw) {
            Ok(r) => r,
            Err(rej) => {
                tracing::info!(
                    trace_id = %rej.ctx.correlation.trace_id,
                    code = rej.error.code.as_str(),
                    message = %rej.error.message,
                    "request rejected"
                );
                return response::failure(&rej.ctx, &rej.error);
            }
        };
        let mut ctx = Ctx::from_request(&req);
        tracing::debug!(
            trace_id = %req.correlation.trace_id,
            request_id = %req.correlation.request_id,
            action = req.action.as_str(),
            "request"
        );
        let outcome = self.dispatch(&req, &mut ctx, progress, elicitor).await;
        match outcome {
            Ok(result) => response::success(&ctx, result),
            Err(err) => {
                if err.code != ErrorCode::Internal {
                    tracing::info!(trace_id = %ctx.correlation.trace_id, code = err.code.as_str(), message = %err.message, "request failed");
                }
                response::failure(&ctx, &err)
            }
        }
    }

    /// Parse with the request-size limit in front.
    pub(crate) fn parse(&self, raw: &Value) -> Result<Request, Box<contract::Rejected>> {
        let size = serde_json::to_vec(raw)
            .map(|v| v.len())
            .unwrap_or(usize::MAX);
        if size > MAX_REQUEST_BYTES {
            let ctx = Ctx {
                correlation: contract::validate::fresh_correlation(raw.get("correlation")),
                ..Ctx::default()
            };
            return Err(Box::new(contract::Rejected {
                ctx,
                error: TermError::payload(format!(
                    "the request is {size} bytes; the limit is {MAX_REQUEST_BYTES}"
                ))
                .with("limit", json!("request_bytes"))
                .with("max", json!(MAX_REQUEST_BYTES)),
            }));
        }
        contract::parse(raw, self.cfg.phase)
    }

    pub(crate) async fn dispatch(
        &self,
        req: &Request,
        ctx: &mut Ctx,
        progress: &dyn Progress,
        elicitor: &dyn Elicitor,
    ) -> Answer {
        match req.action {
            Action::List => self.list(req).await,
            Action::Execute => match req.mode {
                Some(Mode::Headless) => self.headless_execute(req, ctx, progress, elicitor).await,
                _ => self.interactive_execute(req, ctx, progress, elicitor).await,
            },
            Action::ReadOutput => {
                // Both identities at once: the session's streams and the terminal's output.
                let mut result = Map::new();
                if let Some(id) = &req.target.session_id {
                    result = self.headless_read(req, id, progress).await?;
                }
                if let Some(id) = &req.target.terminal_id {
                    let t = self.interactive_read(req, id, ctx, progress).await?;
                    merge(&mut result, t);
                }
                Ok(result)
            }
            Action::Terminate => {
                let mut result = Map::new();
                if let Some(id) = &req.target.session_id {
                    result = self.headless_terminate(id).await?;
                }
                if let Some(id) = &req.target.terminal_id {
                    let t = self.interactive_terminate(req, id, ctx, progress).await?;
                    merge(&mut result, t);
                }
                Ok(result)
            }
        }
    }

    async fn list(&self, req: &Request) -> Answer {
        let mut items = Vec::new();
        if req.mode != Some(Mode::Interactive) {
            items.extend(self.session_items());
        }
        if req.mode != Some(Mode::Headless) {
            items.extend(self.terminal_items().await);
        }
        let mut r = Map::new();
        r.insert("running".into(), json!(false));
        r.insert("items".into(), Value::Array(items));
        Ok(r)
    }

    /// Kill everything this server started.
    pub async fn shutdown(&self) {
        self.exec.shutdown().await;
        self.runtime.shutdown().await;
        crate::process::shutdown().await;
    }
}

/// Judge a command and log the decision; a block is the error to answer.
pub(crate) fn authorize(
    req: &Request,
    decision: crate::policy::Decision,
    command: &str,
) -> Result<crate::policy::Decision, TermError> {
    let d = decision.deciding();
    tracing::info!(
        trace_id = %req.correlation.trace_id,
        request_id = %req.correlation.request_id,
        authorization = decision.authorization.as_str(),
        rule = d.map(|f| f.rule).unwrap_or("-"),
        %command,
        "policy decision"
    );
    if decision.authorization != crate::policy::Authorization::Blocked {
        return Ok(decision);
    }
    let f = d.cloned().unwrap_or(crate::policy::rules::Finding {
        severity: crate::policy::rules::Severity::Block,
        rule: "blocked",
        message: "blocked".into(),
        command: command.to_string(),
    });
    Err(TermError::new(
        ErrorCode::BlockedDestructive,
        format!("blocked: {} ({})", f.message, f.command),
    )
    .with("authorization", json!("blocked"))
    .with("rule", json!(f.rule))
    .with("command", json!(f.command))
    .with("reason", json!(f.message))
    .with("safety_hint", json!(crate::policy::safety_hint(f.rule))))
}

/// Combine two results (a session's and a terminal's): running if either runs; the
/// cursors of both.
fn merge(into: &mut Map<String, Value>, from: Map<String, Value>) {
    if into.is_empty() {
        *into = from;
        return;
    }
    let running = into
        .get("running")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        || from
            .get("running")
            .and_then(Value::as_bool)
            .unwrap_or(false);
    for (k, v) in from {
        match (k.as_str(), into.get_mut(&k)) {
            ("cursor" | "streams", Some(Value::Object(dst))) => {
                if let Value::Object(src) = v {
                    dst.extend(src);
                }
            }
            ("terminated", Some(Value::Array(dst))) => {
                if let Value::Array(src) = v {
                    dst.extend(src);
                }
            }
            ("truncated", Some(Value::Bool(b))) => *b = *b || v.as_bool().unwrap_or(false),
            ("exit_code" | "signal" | "duration_ms", Some(_)) => {}
            _ => {
                into.insert(k, v);
            }
        }
    }
    into.insert("running".into(), json!(running));
}
