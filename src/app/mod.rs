//! The contract service: one request in, one canonical payload out. Parses and validates
//! (contract), routes headless work to `exec` and interactive work to `runtime`, and turns
//! every outcome, good or bad, into a §2.2 response or a §3.2 error payload.

mod headless;
pub mod output;
pub mod wait;

use std::sync::Arc;
use std::time::SystemTime;

use serde_json::{Map, Value, json};

use crate::config::Config;
use crate::contract::{self, Action, Ctx, ErrorCode, Mode, Request, TermError, response};
use crate::exec::{ExecConfig, ExecManager};

pub use wait::{NoProgress, Progress};

/// A handler's outcome: the `result` object, or an error.
pub(crate) type Answer = Result<Map<String, Value>, TermError>;

pub struct App {
    pub cfg: Config,
    pub exec: ExecManager,
}

pub(crate) fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl App {
    pub fn new(cfg: Config) -> Arc<App> {
        let exec = ExecManager::new(ExecConfig {
            spool_dir: cfg.spool_dir.clone(),
            memory_limit: cfg.output_memory,
            max_running: cfg.max_sessions,
            max_retained: cfg.max_retained,
        });
        Arc::new(App { cfg, exec })
    }

    /// Handle one raw request; always answers a payload, never panics on input.
    pub async fn handle(&self, raw: &Value, progress: &dyn Progress) -> Value {
        let req = match contract::parse(raw, self.cfg.phase) {
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
        let outcome = self.dispatch(&req, &mut ctx, progress).await;
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

    async fn dispatch(&self, req: &Request, ctx: &mut Ctx, progress: &dyn Progress) -> Answer {
        match req.action {
            Action::List => self.list(req),
            Action::Execute => match req.mode {
                Some(Mode::Headless) => self.headless_execute(req, ctx, progress).await,
                _ => Err(interactive_unavailable()),
            },
            Action::ReadOutput => {
                let mut result = Map::new();
                if let Some(id) = &req.target.session_id {
                    result = self.headless_read(req, id, progress).await?;
                }
                if req.target.terminal_id.is_some() {
                    return Err(interactive_unavailable());
                }
                Ok(result)
            }
            Action::Terminate => {
                let mut result = Map::new();
                if let Some(id) = &req.target.session_id {
                    result = self.headless_terminate(id).await?;
                }
                if req.target.terminal_id.is_some() {
                    return Err(interactive_unavailable());
                }
                Ok(result)
            }
        }
    }

    fn list(&self, req: &Request) -> Answer {
        let mut items = Vec::new();
        if req.mode != Some(Mode::Interactive) {
            items.extend(self.session_items());
        }
        let mut r = Map::new();
        r.insert("running".into(), json!(false));
        r.insert("items".into(), Value::Array(items));
        Ok(r)
    }

    /// Kill everything this server started.
    pub async fn shutdown(&self) {
        self.exec.shutdown().await;
        let _ = tokio::task::spawn_blocking(crate::process::kill_all_descendants).await;
    }
}

fn interactive_unavailable() -> TermError {
    TermError::new(
        ErrorCode::GuiUnavailable,
        "no interactive runtime is available in this server",
    )
}
