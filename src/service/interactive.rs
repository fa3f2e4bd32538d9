//! The interactive half of the contract: requests become terminal operations served by a
//! runtime adapter; their answers become canonical results.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;

use super::approval::{Elicitor, Stop};
use super::wait::{Progress, is_abandoned, with_progress};
use super::{Handled, Service, authorize, failures};
use crate::contract::result::{
    Authorization, Cursors, ItemKind, LeftOut, ListItem, StreamInfo, Streams, TerminalOutput,
    Verdict,
};
use crate::contract::{Encoding, ErrorCode, Identity, Intent, Outcome, Request, TermError, View};
use crate::policy::unseen_line;
use crate::runtime::{Adapter, AdapterType, RuntimeError};

use crate::runtime::ops::{
    AgentClaim, Chunk, InputArgs, OpError, OpenArgs, OutputSpec, ReadArgs, RunArgs, Shown,
    TermRequest, TermResponse, TermSummary,
};
use crate::views::ScreenView;

/// What to read of a terminal's stream: exactly what the request names, or, for a default
/// answer, an excerpt within `budget` bytes.
fn output_spec(req: &Request, budget: usize) -> OutputSpec {
    OutputSpec {
        view: req.output.view.unwrap_or_default(),
        max_bytes: req.output.max_bytes,
        tail: req.output.tail.unwrap_or(false),
        cursor: req.output.cursor,
        excerpt: super::output::default_read(&req.output).then_some(budget),
    }
}

/// The terminal's state as every answer about it carries it: running, how it ended, what
/// its shell integration can tell.
fn terminal_state(t: &TermSummary, running: bool) -> TerminalOutput {
    TerminalOutput {
        running,
        exit_code: (!t.running).then_some(t.exit_code).flatten(),
        signal: (!t.running).then(|| t.signal.clone()),
        supports_command_detection: Some(t.supports_command_detection),
        shell_integration: Some(t.shell_integration.as_str().to_string()),
        ..TerminalOutput::default()
    }
}

/// A piece of the stream: its text in the requested encoding, its cursor and what was left
/// out. A chunk is raw or text (`view::chunk` never answers another view).
fn with_chunk(mut out: TerminalOutput, o: &Chunk, encoding: Encoding) -> TerminalOutput {
    let truncated = o.omitted_after > 0 || o.omitted_before > 0;
    let text = match (&o.tail, o.gap) {
        (Some(tail), Some((from, to))) => format!(
            "{}{}{tail}",
            o.text,
            super::output::left_out_line("cursor", from, to)
        ),
        (Some(tail), None) => format!("{}{tail}", o.text),
        _ => o.text.clone(),
    };
    out.output = Some(match encoding {
        Encoding::Utf8 => text,
        Encoding::Base64 => base64::engine::general_purpose::STANDARD.encode(text.as_bytes()),
    });
    out.encoding = (encoding == Encoding::Base64).then_some(encoding);
    out.view = Some(o.view);
    out.cursor = Some(Cursors {
        output: Some(o.end),
        ..Cursors::default()
    });
    out.streams = Some(Streams {
        output: Some(StreamInfo {
            start: o.start,
            end: o.end,
            total: o.total,
            truncated,
            bytes_omitted: o.omitted_after + o.omitted_before,
            lossy: false,
            left_out: o.gap.map(|(from, to)| LeftOut { from, to }),
        }),
        ..Streams::default()
    });
    out.truncated = Some(truncated);
    out
}

/// A full-screen program's answer shows its screen in place of the bytes that drew it
/// (cursor moves and padding once escapes are stripped), and says where those bytes are.
fn shown_as_screen(mut out: TerminalOutput, screen: Option<&ScreenView>) -> TerminalOutput {
    let Some(screen) = screen else {
        return out;
    };
    let drawn = out
        .streams
        .as_ref()
        .and_then(|s| s.output.as_ref())
        .map(|o| (o.start, o.end));
    let mut note = String::from("a full-screen program holds the terminal: its screen is shown");
    if let Some((from, to)) = drawn.filter(|(a, b)| b > a) {
        note.push_str(&format!(
            "; the {} bytes that drew it are read with output.cursor={from}, output.view=raw",
            to - from
        ));
    }
    out.note = Some(match out.note.take() {
        Some(n) => format!("{n}; {note}"),
        None => note,
    });
    out.output = None;
    out.view = Some(View::Screen);
    out.screen = Some(screen.clone());
    out
}

/// The contract's result for a terminal operation's answer.
fn terminal_output(r: &TermResponse, encoding: Encoding) -> TerminalOutput {
    match r {
        TermResponse::Ran(r) => {
            let mut out = with_chunk(terminal_state(&r.terminal, r.running), &r.output, encoding);
            if let Some(c) = &r.command {
                out.exit_code = c.exit_code;
                out.command = Some(c.clone());
                out.duration_ms = c.duration_ms.map(|d| d.max(0));
            }
            out.note = r.note.clone();
            if let Some(prompt) = &r.waiting_for_input {
                out.waiting_for_input = true;
                out.prompt = Some(prompt.clone());
            }
            shown_as_screen(out, r.screen.as_ref())
        }
        TermResponse::Read(r) => {
            let mut out = terminal_state(&r.terminal, r.running);
            if let Some(prompt) = &r.waiting_for_input {
                out.waiting_for_input = true;
                out.prompt = Some(prompt.clone());
            }
            match &r.shown {
                Shown::Output(o) => {
                    shown_as_screen(with_chunk(out, o, encoding), r.screen.as_ref())
                }
                Shown::Screen(s) => TerminalOutput {
                    view: Some(View::Screen),
                    screen: Some(s.clone()),
                    ..out
                },
                Shown::Commands { commands } => TerminalOutput {
                    view: Some(View::Commands),
                    commands: Some(commands.clone()),
                    ..out
                },
            }
        }
        TermResponse::Attached(r) => TerminalOutput {
            view: Some(View::Screen),
            screen: Some(r.screen.clone()),
            commands: Some(r.commands.clone()),
            ..terminal_state(&r.terminal, r.running)
        },
        TermResponse::Killed(k) => {
            let mut out = match &k.terminal {
                Some(t) => terminal_state(t, false),
                None => TerminalOutput::default(),
            };
            out.running = false;
            out.terminated = Some(k.killed.clone());
            out.note = k.note.clone();
            out
        }
        TermResponse::List { .. }
        | TermResponse::Rewound { .. }
        | TermResponse::Interrupted { .. } => TerminalOutput::default(),
    }
}

/// Whether a terminal of `adapter` runs in this server's sandbox: the local adapter's, and
/// the bundled host's (it is given the server's settings); a bridged host has its own.
fn confined_here(adapter: &Arc<dyn Adapter>) -> bool {
    adapter.adapter_type() != AdapterType::ContainerBridge
        && crate::sandbox::current().mechanism().is_some()
}

/// What the sandbox refused, when the command a terminal ran failed and its output says so.
fn denial(out: &TerminalOutput) -> Option<crate::sandbox::denial::Denial> {
    let failed = out
        .command
        .as_ref()
        .is_some_and(|c| c.complete && c.exit_code.is_some_and(|e| e != 0));
    if !failed {
        return None;
    }
    crate::sandbox::denial::diagnose(crate::sandbox::current(), out.output.as_deref()?)
}

pub(crate) fn terminal_item(adapter: AdapterType, t: TermSummary) -> ListItem {
    ListItem {
        id: t.terminal_id,
        mode: "interactive",
        command: t.executing,
        cwd: t.cwd,
        state: if t.running { "running" } else { "exited" },
        running: t.running,
        exit_code: t.exit_code,
        signal: t.signal,
        age_ms: t.age_ms,
        started_at_ms: t.started_at_ms,
        workspace_id: t.workspace_id,
        kind: ItemKind::Terminal {
            title: t.title,
            adapter: adapter.as_str(),
            resource: t.resource,
            claim: t.claim,
            supports_command_detection: t.supports_command_detection,
            shell_integration: t.shell_integration.as_str().to_string(),
            output_bytes: t.output_bytes,
        },
    }
}

impl Service {
    pub(super) fn agent_claim(&self, req: &Request) -> AgentClaim {
        AgentClaim {
            session: self.session_uri.clone(),
            chat: self.chat_uri.clone(),
            tool_call_id: Some(req.correlation.request_id.clone()),
        }
    }

    /// Send one operation through `adapter`, reporting progress while it runs. The answer
    /// names the adapter and the terminal it is about.
    pub(super) async fn op(
        &self,
        adapter: &Arc<dyn Adapter>,
        req: &Request,
        op: TermRequest,
        wait: Duration,
        progress: &dyn Progress,
    ) -> Handled {
        let call = self.runtime.call(
            adapter,
            op,
            &req.correlation.trace_id,
            Some(&req.correlation.request_id),
            wait,
        );
        let answered = with_progress(call, progress, "waiting for the terminal").await;
        let mut about = Identity::default();
        // A failure that names its terminal (a timeout, a shell not ready yet): the agent
        // goes on in that terminal, which may be one this call opened.
        if let Err(RuntimeError::Op(OpError {
            partial: Some(p), ..
        })) = &answered
        {
            about = Identity::terminal(&p.terminal.terminal_id);
            self.runtime
                .remember(&p.terminal.terminal_id, adapter.clone());
        }
        let answered = answered.map_err(|e| failures::from_runtime(e, req));
        if is_abandoned(progress)
            && let Ok(resp) = &answered
            && let (Some(shown), Some(t)) = (resp.output(), resp.terminal())
        {
            self.give_back(adapter, req, shown, &t.terminal_id).await;
        }
        let result = answered.map(|resp| {
            if let Some(t) = resp.terminal() {
                about = Identity::terminal(&t.terminal_id);
                self.runtime.remember(&t.terminal_id, adapter.clone());
            }
            let encoding = req.output.encoding.unwrap_or_default();
            Outcome::Terminal(Box::new(terminal_output(&resp, encoding)))
        });
        Handled::served_by(adapter.adapter_type(), about, result)
    }

    /// The adapter that serves terminal `id`.
    async fn adapter_for(&self, req: &Request, id: &str) -> Result<Arc<dyn Adapter>, TermError> {
        self.runtime
            .adapter_for_terminal(id)
            .await
            .map_err(|e| failures::from_runtime(e, req))
    }

    /// The operation an execute asks for, and the adapter that serves it.
    async fn plan(&self, req: &Request) -> Result<(Arc<dyn Adapter>, TermRequest), TermError> {
        if req.runtime.unsandboxed == Some(true) {
            return Err(TermError::payload(
                "only a headless command can ask to leave the sandbox: a terminal's shell, and \
                 everything typed into it, stays confined",
            )
            .with("field", serde_json::json!("runtime.unsandboxed")));
        }
        let wait_ms = req.runtime.wait_ms.unwrap_or(self.cfg.default_wait_ms);
        let claim = self.agent_claim(req);
        let output = output_spec(req, self.output_budget());
        let execution = &req.execution;
        Ok(match (&req.target.terminal_id, req.intent) {
            (None, intent) => {
                let adapter = self
                    .runtime
                    .adapter_for_new(req.runtime.adapter_override.as_deref())
                    .await
                    .map_err(|e| failures::from_runtime(e, req))?;
                // This server's sandbox confines the terminals it keeps; a host service
                // confines its own as its operator set.
                if adapter.adapter_type() == AdapterType::Local {
                    failures::sandbox_ready()?;
                }
                let op = TermRequest::Open(OpenArgs {
                    name: execution.name.clone(),
                    cwd: req.runtime.cwd.clone(),
                    env: execution.env.clone().unwrap_or_default(),
                    shell: execution.shell.clone(),
                    cols: execution.cols,
                    rows: execution.rows,
                    workspace_id: req.runtime.workspace_id.clone(),
                    command: if intent == Some(Intent::ExecuteCommand) {
                        execution.command.clone()
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
                self.adapter_for(req, id).await?,
                TermRequest::Attach {
                    terminal_id: id.clone(),
                    claim: Some(claim),
                },
            ),
            (Some(id), _) => {
                let adapter = self.adapter_for(req, id).await?;
                let op = match (&execution.command, &execution.input) {
                    (Some(command), _) => TermRequest::Run(RunArgs {
                        terminal_id: id.clone(),
                        command: command.clone(),
                        wait_ms,
                        timeout_ms: req.runtime.timeout_ms,
                        claim: Some(claim),
                        output,
                        unseen_line: false,
                    }),
                    (None, Some(data)) => TermRequest::Input(InputArgs {
                        terminal_id: id.clone(),
                        data: data.clone(),
                        wait_for: execution.wait_for.clone(),
                        wait_ms,
                        claim: Some(claim),
                        output,
                        unseen_line: false,
                    }),
                    (None, None) => {
                        return Err(TermError::payload(
                            "nothing to send: give execution.command or execution.input",
                        ));
                    }
                };
                (adapter, op)
            }
        })
    }

    pub(crate) async fn interactive_execute(
        &self,
        req: &Request,
        progress: &dyn Progress,
        elicitor: &dyn Elicitor,
    ) -> Handled {
        let (adapter, mut op) = match self.plan(req).await {
            Ok(planned) => planned,
            Err(e) => return Handled::failed(e),
        };
        // Authorize what will run (a command line, or keystrokes a shell would run), and
        // wait for a person when the policy asks for it.
        let judged = match &mut op {
            TermRequest::Open(a) => a
                .command
                .as_ref()
                .map(|c| (c.clone(), self.policy.evaluate(c, a.cwd.as_deref()))),
            // Both are typed after what the agent left unentered there, and judged with it.
            TermRequest::Run(a) => {
                let before = self.unentered.before(&a.terminal_id);
                Some(if before.is_empty() {
                    (a.command.clone(), self.policy.evaluate(&a.command, None))
                } else {
                    let line = format!("{before}{}", a.command);
                    // The line itself is pasted (its control keys refused by the contract);
                    // what was left before it was typed key by key.
                    a.unseen_line = unseen_line(&format!("{before}\r"));
                    let d = self.policy.evaluate_input(&line, None);
                    (line, d)
                })
            }
            TermRequest::Input(a) => {
                let keys = format!("{}{}", self.unentered.before(&a.terminal_id), a.data);
                a.unseen_line = unseen_line(&keys);
                let d = self.policy.evaluate_input(&keys, None);
                Some((keys, d))
            }
            _ => None,
        };
        let mut verdict = Verdict {
            authorization: Authorization::Allowed,
            warning: None,
            approval: None,
        };
        if let Some((command, d)) = judged {
            let d = match authorize(req, d, &command) {
                Ok(d) => d,
                Err(e) => return Handled::failed(e),
            };
            let mut approval = None;
            // A terminal's shell runs in this server's sandbox when the local or the bundled
            // adapter keeps it (the bundled host is given the server's settings).
            if self.needs_approval(&d, confined_here(&adapter)) {
                match self.approve(req, &command, &d, progress, elicitor).await {
                    Ok(a) => approval = Some(a),
                    Err(Stop::Failed(e)) => {
                        let about = Identity::default();
                        return Handled::served_by(adapter.adapter_type(), about, Err(e));
                    }
                    Err(Stop::Held(held)) => return held,
                }
            }
            verdict = super::verdict(&d, approval);
        }
        // What was typed is counted once it was: a request refused (busy, or a line the
        // policy could not see) typed nothing, and the line editor still holds what was left
        // there — counted as entered, a refused Enter let the next line be judged without it.
        let typed = match &op {
            TermRequest::Run(a) => Some((a.terminal_id.clone(), "\r".to_string())),
            TermRequest::Input(a) => Some((a.terminal_id.clone(), a.data.clone())),
            _ => None,
        };
        let wait = Duration::from_millis(req.runtime.wait_ms.unwrap_or(self.cfg.default_wait_ms));
        let mut handled = self
            .op_stopped_on_cancel(&adapter, req, op, wait, progress)
            .await;
        if let Some((id, text)) = typed {
            // A refusal typed nothing; a timeout or a lost connection may have typed it all.
            let sent = match &handled.result {
                Ok(_) => true,
                Err(e) => !matches!(
                    e.code,
                    ErrorCode::InvalidPayload
                        | ErrorCode::InvalidAction
                        | ErrorCode::InvalidMode
                        | ErrorCode::NotFound
                        | ErrorCode::Declined
                        | ErrorCode::BlockedDestructive
                ),
            };
            if sent {
                self.unentered.typed(&id, &text);
            }
        }
        if let Ok(Outcome::Terminal(out)) = &mut handled.result {
            out.verdict = Some(verdict);
            if confined_here(&adapter) {
                out.sandbox_denial = denial(out);
            }
        }
        handled
    }

    pub(crate) async fn interactive_read(
        &self,
        req: &Request,
        id: &str,
        progress: &dyn Progress,
    ) -> Handled {
        let wait_ms = req.runtime.wait_ms.unwrap_or(0);
        let adapter = match self.adapter_for(req, id).await {
            Ok(a) => a,
            Err(e) => return Handled::failed(e),
        };
        let op = TermRequest::Read(ReadArgs {
            terminal_id: id.to_string(),
            wait_ms,
            output: output_spec(req, self.output_budget()),
        });
        let wait = Duration::from_millis(wait_ms);
        self.op(&adapter, req, op, wait, progress).await
    }

    pub(crate) async fn interactive_terminate(
        &self,
        req: &Request,
        id: &str,
        progress: &dyn Progress,
    ) -> Handled {
        let adapter = match self.adapter_for(req, id).await {
            Ok(a) => a,
            Err(e) => return Handled::failed(e),
        };
        self.unentered.forget(id);
        let op = TermRequest::Kill {
            terminal_id: id.to_string(),
        };
        self.op(&adapter, req, op, Duration::ZERO, progress).await
    }

    pub(crate) async fn terminal_items(&self) -> Vec<ListItem> {
        self.runtime
            .list()
            .await
            .into_iter()
            .map(|(a, t)| terminal_item(a, t))
            .collect()
    }
}
