//! The interactive half of the contract: requests become terminal operations served by a
//! runtime adapter; their answers become canonical results.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde_json::{Map, Value, json};

use super::approval::Elicitor;
use super::wait::{Progress, with_progress};
use super::{Answer, App, authorize};
use crate::contract::{Ctx, Encoding, ErrorCode, Intent, Request, TermError};
use crate::runtime::{Adapter, AdapterType};

use crate::terminal::CommandRecord;
use crate::terminal::ops::{
    AgentClaim, InputArgs, OpError, OpErrorKind, OpenArgs, OutputSpec, ReadArgs, RunArgs,
    TermRequest, TermResponse, TermSummary,
};

fn output_spec(req: &Request) -> OutputSpec {
    OutputSpec {
        view: req.output.view.unwrap_or_default(),
        max_bytes: req.output.max_bytes,
        tail: req.output.tail.unwrap_or(false),
        cursor: req.output.cursor,
    }
}

pub(crate) fn op_error(
    e: OpError,
    terminal_id: Option<&str>,
    timeout_ms: Option<u64>,
) -> TermError {
    match e.kind {
        OpErrorKind::NotFound => {
            TermError::new(ErrorCode::NotFound, e.message).with("target", json!("terminal_id"))
        }
        OpErrorKind::Gone => TermError::new(ErrorCode::NotFound, e.message)
            .with("target", json!("terminal_id"))
            .with("host_restarted", json!(true))
            .with(
                "reopen",
                json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}}),
            ),
        OpErrorKind::Invalid => TermError::payload(e.message),
        OpErrorKind::Busy => TermError::payload(e.message).with("busy", json!(true)),
        OpErrorKind::Limit => TermError::payload(e.message).with("limit", json!("live_terminals")),
        OpErrorKind::Internal => TermError::internal(e.message),
        OpErrorKind::Timeout => {
            let mut err = TermError::new(ErrorCode::Timeout, e.message)
                .with("timeout_ms", json!(timeout_ms.unwrap_or(0)))
                .with("target", json!("terminal_id"));
            if let Some(id) = terminal_id {
                err = err.with("terminal_id", json!(id));
            }
            if let Some(p) = e.partial {
                if let Some(o) = &p.output {
                    err = err
                        .with("output", json!(o.text))
                        .with("cursor", json!({"output": o.end}));
                }
                if let Some(c) = &p.command {
                    err = err.with("command", command_json(c));
                }
            }
            err
        }
    }
}

fn command_json(c: &CommandRecord) -> Value {
    json!({
        "command_id": c.command_id,
        "command_line": c.command_line,
        "complete": c.complete,
        "exit_code": c.exit_code,
        "duration_ms": c.duration_ms,
        "started_at_ms": c.started_at_ms,
        "output_start": c.output_start,
        "output_end": c.output_end,
    })
}

/// A request the runtime did not answer in time may have run: say so, and how to learn its
/// outcome without running it twice (the host runs one request id once).
fn retry_hint(e: TermError, request_id: &str) -> TermError {
    if e.code != crate::contract::ErrorCode::Timeout {
        return e;
    }
    let may = e
        .details
        .get("may_have_run")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    e.with("may_have_run", json!(may))
        .with("request_id", json!(request_id))
        .with(
            "retry",
            json!(format!(
                "send the same request again with correlation.request_id = {request_id:?}: if it ran, you get that run's answer instead of a second run"
            )),
        )
}

/// Canonical result fields from a terminal operation's answer.
fn term_result(r: &TermResponse, encoding: Encoding) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("running".into(), json!(r.running));
    let t = r.terminal.as_ref();
    let exit_code = match (&r.command, t) {
        (Some(c), _) => c.exit_code,
        (None, Some(t)) if !t.running => t.exit_code,
        _ => None,
    };
    m.insert("exit_code".into(), json!(exit_code));
    if let Some(t) = t.filter(|t| !t.running) {
        m.insert("signal".into(), json!(t.signal));
    }
    if let Some(t) = t {
        m.insert(
            "supports_command_detection".into(),
            json!(t.supports_command_detection),
        );
        m.insert("shell_integration".into(), json!(t.shell_integration));
    }
    if let Some(o) = &r.output {
        let text = match encoding {
            Encoding::Utf8 => o.text.clone(),
            Encoding::Base64 => base64::engine::general_purpose::STANDARD.encode(o.text.as_bytes()),
        };
        m.insert("output".into(), json!(text));
        if encoding == Encoding::Base64 {
            m.insert("encoding".into(), json!(encoding.as_str()));
        }
        let truncated = o.omitted_after > 0 || o.omitted_before > 0;
        // A stream chunk is raw or text (`view::chunk` never answers another view).
        m.insert("view".into(), json!(o.view.as_str()));
        m.insert("cursor".into(), json!({"output": o.end}));
        m.insert(
            "streams".into(),
            json!({"output": {
                "start": o.start, "end": o.end, "total": o.total, "truncated": truncated,
                "bytes_omitted": o.omitted_after + o.omitted_before,
            }}),
        );
        m.insert("truncated".into(), json!(truncated));
    }
    if let Some(c) = &r.command {
        m.insert("command".into(), command_json(c));
        if let Some(d) = c.duration_ms {
            m.insert("duration_ms".into(), json!(d.max(0)));
        }
    }
    if let Some(cs) = &r.commands {
        m.insert("view".into(), json!("commands"));
        m.insert(
            "commands".into(),
            Value::Array(cs.iter().map(command_json).collect()),
        );
    }
    if let Some(s) = &r.screen {
        m.insert("view".into(), json!("screen"));
        m.insert(
            "screen".into(),
            json!({"rows": s.rows, "cols": s.cols, "cursor_row": s.cursor_row,
                "cursor_col": s.cursor_col, "alternate_screen": s.alternate_screen, "text": s.text}),
        );
    }
    if !r.killed.is_empty() {
        m.insert("terminated".into(), json!(r.killed));
    }
    if let Some(n) = &r.note {
        m.insert("note".into(), json!(n));
    }
    m
}

pub(crate) fn terminal_item(adapter: AdapterType, t: &TermSummary) -> Value {
    json!({
        "kind": "terminal",
        "id": t.terminal_id,
        "mode": "interactive",
        "command": t.executing,
        "title": t.title,
        "cwd": t.cwd,
        "state": if t.running { "running" } else { "exited" },
        "running": t.running,
        "exit_code": t.exit_code,
        "signal": t.signal,
        "age_ms": t.age_ms,
        "started_at_ms": t.started_at_ms,
        "workspace_id": t.workspace_id,
        "adapter": adapter.as_str(),
        "resource": t.resource,
        "claim": t.claim,
        "supports_command_detection": t.supports_command_detection,
        "shell_integration": t.shell_integration,
        "output_bytes": t.output_bytes,
    })
}

impl App {
    fn agent_claim(&self, req: &Request) -> AgentClaim {
        AgentClaim {
            session: self.session_uri.clone(),
            chat: self.chat_uri.clone(),
            tool_call_id: Some(req.correlation.request_id.clone()),
        }
    }

    /// Send one operation through `adapter`, reporting progress while it runs.
    async fn op(
        &self,
        adapter: &Arc<dyn Adapter>,
        req: &Request,
        op: TermRequest,
        wait: Duration,
        progress: &dyn Progress,
        ctx: &mut Ctx,
    ) -> Answer {
        ctx.adapter = Some(adapter.adapter_type().as_str());
        let call = self.runtime.call(
            adapter,
            op,
            &req.correlation.trace_id,
            Some(&req.correlation.request_id),
            wait,
        );
        let r = with_progress(call, progress, "waiting for the terminal")
            .await
            .map_err(|e| retry_hint(e, &req.correlation.request_id))?;
        let tid = ctx.terminal_id.clone();
        let resp = r.map_err(|e| op_error(e, tid.as_deref(), req.runtime.timeout_ms))?;
        if let Some(t) = &resp.terminal {
            ctx.terminal_id = Some(t.terminal_id.clone());
            self.runtime.remember(&t.terminal_id, adapter.clone());
        }
        Ok(term_result(&resp, req.output.encoding.unwrap_or_default()))
    }

    pub(crate) async fn interactive_execute(
        &self,
        req: &Request,
        ctx: &mut Ctx,
        progress: &dyn Progress,
        elicitor: &dyn Elicitor,
    ) -> Answer {
        let wait_ms = req.runtime.wait_ms.unwrap_or(self.cfg.default_wait_ms);
        let wait = Duration::from_millis(wait_ms);
        let claim = self.agent_claim(req);
        let output = output_spec(req);
        let x = &req.execution;
        let (adapter, op) = match (&req.target.terminal_id, req.intent) {
            (None, intent) => {
                let adapter = self
                    .runtime
                    .adapter_for_new(req.runtime.adapter_override.as_deref())
                    .await?;
                let op = TermRequest::Open(OpenArgs {
                    name: x.name.clone(),
                    cwd: req.runtime.cwd.clone(),
                    env: x.env.clone().unwrap_or_default(),
                    shell: x.shell.clone(),
                    cols: x.cols,
                    rows: x.rows,
                    workspace_id: req.runtime.workspace_id.clone(),
                    command: if intent == Some(Intent::ExecuteCommand) {
                        x.command.clone()
                    } else {
                        None
                    },
                    wait_ms,
                    timeout_ms: req.runtime.timeout_ms,
                    claim,
                    output,
                });
                (adapter, op)
            }
            (Some(id), Some(Intent::OpenOnly)) => (
                self.runtime.adapter_for_terminal(id).await?,
                TermRequest::Attach {
                    terminal_id: id.clone(),
                    claim: Some(claim),
                },
            ),
            (Some(id), _) => {
                let adapter = self.runtime.adapter_for_terminal(id).await?;
                let op = match (&x.command, &x.input) {
                    (Some(command), _) => TermRequest::Run(RunArgs {
                        terminal_id: id.clone(),
                        command: command.clone(),
                        wait_ms,
                        timeout_ms: req.runtime.timeout_ms,
                        claim: Some(claim),
                        output,
                    }),
                    (None, Some(data)) => TermRequest::Input(InputArgs {
                        terminal_id: id.clone(),
                        data: data.clone(),
                        wait_for: x.wait_for.clone(),
                        wait_ms,
                        claim: Some(claim),
                        output,
                    }),
                    (None, None) => {
                        return Err(TermError::payload(
                            "nothing to send: give execution.command or execution.input",
                        ));
                    }
                };
                (adapter, op)
            }
        };
        // Authorize what will run (a command line, or keystrokes a shell would run), and
        // wait for a person when the policy asks for it.
        let judged = match &op {
            TermRequest::Open(a) => a
                .command
                .as_ref()
                .map(|c| (c.clone(), self.policy.evaluate(c, a.cwd.as_deref()))),
            TermRequest::Run(a) => {
                Some((a.command.clone(), self.policy.evaluate(&a.command, None)))
            }
            TermRequest::Input(a) => {
                Some((a.data.clone(), self.policy.evaluate_input(&a.data, None)))
            }
            _ => None,
        };
        let mut approval = None;
        let mut decision = None;
        if let Some((command, d)) = judged {
            let d = authorize(req, d, &command)?;
            if self.needs_approval(&d) {
                ctx.adapter = Some(adapter.adapter_type().as_str());
                approval = Some(self.approve(req, &command, &d, progress, elicitor).await?.0);
            }
            decision = Some(d);
        }
        let mut r = self.op(&adapter, req, op, wait, progress, ctx).await?;
        let authorization = decision
            .as_ref()
            .map_or("allowed", |d| d.authorization.as_str());
        r.insert("authorization".into(), json!(authorization));
        if let Some(w) = decision.as_ref().and_then(|d| d.warning()) {
            r.insert("warning".into(), json!(w));
        }
        if let Some(a) = approval {
            r.insert("approval".into(), Value::Object(a));
        }
        Ok(r)
    }

    pub(crate) async fn interactive_read(
        &self,
        req: &Request,
        id: &str,
        ctx: &mut Ctx,
        progress: &dyn Progress,
    ) -> Answer {
        let wait_ms = req.runtime.wait_ms.unwrap_or(0);
        let adapter = self.runtime.adapter_for_terminal(id).await?;
        let op = TermRequest::Read(ReadArgs {
            terminal_id: id.to_string(),
            wait_ms,
            output: output_spec(req),
        });
        self.op(
            &adapter,
            req,
            op,
            Duration::from_millis(wait_ms),
            progress,
            ctx,
        )
        .await
    }

    pub(crate) async fn interactive_terminate(
        &self,
        req: &Request,
        id: &str,
        ctx: &mut Ctx,
        progress: &dyn Progress,
    ) -> Answer {
        let adapter = self.runtime.adapter_for_terminal(id).await?;
        let op = TermRequest::Kill {
            terminal_id: id.to_string(),
        };
        let mut r = self
            .op(&adapter, req, op, Duration::ZERO, progress, ctx)
            .await?;
        r.insert("running".into(), json!(false));
        r.entry("terminated").or_insert_with(|| json!([]));
        Ok(r)
    }

    pub(crate) async fn terminal_items(&self) -> Vec<Value> {
        self.runtime
            .list()
            .await
            .iter()
            .map(|(a, t)| terminal_item(*a, t))
            .collect()
    }
}
