//! The interactive half of the contract: requests become terminal operations served by a
//! adapter; their answers become canonical results.

use std::sync::Arc;
use std::time::Duration;

use super::approval::{Elicitor, Stop};
use super::terminal_answer::{output_spec, terminal_output};
use super::wait::{Progress, is_abandoned, with_progress};
use super::{Handled, Service, authorize, failures};
use crate::adapters::{Adapter, AdapterError, AdapterType};
use crate::contract::result::{Authorization, ItemKind, ListItem, TerminalOutput, Verdict};
use crate::contract::{ErrorCode, Identity, Intent, Outcome, Request, TermError};
use crate::policy::unseen_line;

use crate::adapters::ops::{
    AgentClaim, InputArgs, OpError, OpenArgs, ReadArgs, RunArgs, TermRequest, TermSummary,
};

/// Whether a terminal of `adapter` runs in this server's sandbox: the local adapter's, and
/// the bundled host's (it is given the server's settings); a bridged host has its own.
fn confined_here(adapter: &Arc<dyn Adapter>) -> bool {
    adapter.adapter_type() != AdapterType::ContainerBridge
        && crate::sandbox::current().mechanism().is_some()
}

/// What the sandbox refused, when the command a terminal ran failed and its output says so.
fn denial(out: &TerminalOutput) -> Option<crate::contract::result::SandboxDenial> {
    let failed = out
        .command
        .as_ref()
        .is_some_and(|c| c.complete && c.exit_code.is_some_and(|e| e != 0));
    if !failed {
        return None;
    }
    crate::sandbox::denial::diagnose(crate::sandbox::current(), out.output.as_deref()?)
        .map(super::sandbox_denial)
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
            background_jobs: t.background_jobs,
            closes_when_idle_ms: None,
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
        let call = self.adapters.call(
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
        if let Err(AdapterError::Op(OpError {
            partial: Some(p), ..
        })) = &answered
        {
            about = Identity::terminal(&p.terminal.terminal_id);
            self.adapters
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
                self.adapters.remember(&t.terminal_id, adapter.clone());
            }
            let encoding = req.output.encoding.unwrap_or_default();
            Outcome::Terminal(Box::new(terminal_output(&resp, encoding)))
        });
        Handled::served_by(adapter.adapter_type(), about, result)
    }

    /// The adapter that serves terminal `id`.
    async fn adapter_for(&self, req: &Request, id: &str) -> Result<Arc<dyn Adapter>, TermError> {
        self.adapters
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
                    .adapters
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
                // cols/rows on an existing terminal resize it before what is sent.
                let size = (execution.cols.is_some() || execution.rows.is_some())
                    .then_some((execution.cols, execution.rows));
                let op = match (&execution.command, &execution.input) {
                    (Some(command), _) => TermRequest::Run(RunArgs {
                        terminal_id: id.clone(),
                        command: command.clone(),
                        wait_ms,
                        timeout_ms: req.runtime.timeout_ms,
                        claim: Some(claim),
                        output,
                        unseen_line: false,
                        size,
                    }),
                    (None, Some(data)) => TermRequest::Input(InputArgs {
                        terminal_id: id.clone(),
                        data: data.clone(),
                        wait_for: execution.wait_for.clone(),
                        wait_ms,
                        claim: Some(claim),
                        output,
                        unseen_line: false,
                        size,
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
                // Typed into the new terminal's shell, which may be fish: read as a
                // terminal's line is.
                .map(|c| {
                    let d = self.judge(c, |p| p.evaluate_in_terminal(c, a.cwd.as_deref()));
                    (c.clone(), d)
                }),
            // Both are typed after what the agent left unentered there, and judged with it.
            TermRequest::Run(a) => {
                let before = self.unentered.before(&a.terminal_id);
                Some(if before.is_empty() {
                    let d = self.judge(&a.command, |p| p.evaluate_in_terminal(&a.command, None));
                    (a.command.clone(), d)
                } else {
                    let line = format!("{before}{}", a.command);
                    // The line itself is pasted (its control keys refused by the contract);
                    // what was left before it was typed key by key.
                    a.unseen_line = unseen_line(&format!("{before}\r"));
                    let d = self.judge(&line, |p| p.evaluate_input(&line, None));
                    (line, d)
                })
            }
            TermRequest::Input(a) => {
                let keys = format!("{}{}", self.unentered.before(&a.terminal_id), a.data);
                a.unseen_line = unseen_line(&keys);
                let d = self.judge(&keys, |p| p.evaluate_input(&keys, None));
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
            TermRequest::Run(a) => Some((a.terminal_id.clone(), format!("{}\r", a.command))),
            TermRequest::Input(a) => Some((a.terminal_id.clone(), a.data.clone())),
            _ => None,
        };
        let for_one_command = matches!(&op, TermRequest::Open(a) if a.command.is_some());
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
            // Keys a program reading the terminal raw took (less, vim, `read -s -n1`) never
            // reach the shell's line editor: nothing is left unentered there.
            let to_program = matches!(&handled.result,
                Ok(Outcome::Terminal(o)) if o.reached_line_editor == Some(false));
            // A command line that finished leaves the shell at its prompt: no statement open.
            let finished = matches!(&handled.result,
                Ok(Outcome::Terminal(o)) if o.command.as_ref().is_some_and(|c| c.complete));
            if sent {
                self.unentered.typed(&id, &text, !to_program, finished);
            }
        }
        if let Ok(Outcome::Terminal(out)) = &mut handled.result {
            out.verdict = Some(verdict);
            if confined_here(&adapter) {
                out.sandbox_denial = denial(out);
            }
            if for_one_command && let Some(id) = &handled.about.terminal_id {
                self.opened_for_one_command(id);
                let stays = self.stays_open_note(id);
                out.note = Some(match out.note.take() {
                    Some(n) => format!("{n}; {stays}"),
                    None => stays,
                });
            }
        }
        handled
    }

    /// What an answer that opened a terminal for its command says about it: that it stays,
    /// and until when.
    fn stays_open_note(&self, id: &str) -> String {
        match self.idle_close() {
            Some(idle) => format!(
                "terminal {id} stays open for your next command (target.terminal_id); closed \
                 after {} s unused unless it holds background jobs",
                idle.as_secs()
            ),
            None => format!(
                "terminal {id} stays open for your next command (target.terminal_id) until \
                 terminated"
            ),
        }
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
        self.implicit.forget(id);
        let op = TermRequest::Kill {
            terminal_id: id.to_string(),
        };
        self.op(&adapter, req, op, Duration::ZERO, progress).await
    }

    pub(crate) async fn terminal_items(&self) -> Vec<ListItem> {
        self.adapters
            .list()
            .await
            .into_iter()
            .map(|(a, t)| {
                let watched = t.running && self.implicit.contains(&t.terminal_id);
                let mut item = terminal_item(a, t);
                if let (
                    true,
                    Some(idle),
                    ItemKind::Terminal {
                        closes_when_idle_ms,
                        ..
                    },
                ) = (watched, self.idle_close(), &mut item.kind)
                {
                    *closes_when_idle_ms = Some(idle.as_millis() as u64);
                }
                item
            })
            .collect()
    }
}
