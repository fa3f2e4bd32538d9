//! A call its client cancels (`notifications/cancelled`: a stop button, a client giving up)
//! stops what it started, rather than leaving it running where the agent never learns of
//! it. A headless command's tree is killed (in `headless`); in a terminal, a command typed
//! into an existing terminal is interrupted (Ctrl-C: the shell and what the terminal held
//! stay), and a terminal opened for the call is killed. A question to a person is withdrawn
//! (in `approval`), and a read stops waiting and stops nothing, since it started nothing.

use std::sync::Arc;
use std::time::Duration;

use super::wait::{Progress, abandoned, is_abandoned};
use super::{Handled, Service};
use crate::adapters::Adapter;
use crate::adapters::ops::{CTRL_C, Chunk, InputArgs, OutputSpec, TermRequest, TermResponse};
use crate::contract::{Outcome, Request};

/// How a cancelled call's command is stopped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The call opened the terminal: the terminal is killed.
    Kill,
    /// The call typed into an existing terminal: its command is interrupted.
    Interrupt,
}

impl Service {
    /// Run an interactive execute's operation; if the client cancels the call meanwhile,
    /// stop what it started, and let the operation answer (its wait ends with the command).
    pub(super) async fn op_stopped_on_cancel(
        &self,
        adapter: &Arc<dyn Adapter>,
        req: &Request,
        op: TermRequest,
        wait: Duration,
        progress: &dyn Progress,
    ) -> Handled {
        let target = op.terminal_id().map(str::to_string);
        let how = match &op {
            TermRequest::Open(_) => Stop::Kill,
            TermRequest::Run(_) | TermRequest::Input(_) => Stop::Interrupt,
            // Attaching to a terminal starts nothing.
            _ => return self.op(adapter, req, op, wait, progress).await,
        };
        let run = self.op(adapter, req, op, wait, progress);
        tokio::pin!(run);
        let mut stopped = false;
        let handled = tokio::select! {
            handled = &mut run => handled,
            () = abandoned(progress) => {
                let stop = async {
                    let id = match &target {
                        Some(id) => Some(id.clone()),
                        None => self.opened_by(req).await,
                    };
                    match id {
                        Some(id) => {
                            self.stop(adapter, req, &id, how).await;
                            true
                        }
                        // Not opened yet: stopped from its answer below.
                        None => false,
                    }
                };
                let (handled, done) = tokio::join!(&mut run, stop);
                stopped = done;
                handled
            }
        };
        if !stopped
            && is_abandoned(progress)
            && let Ok(Outcome::Terminal(out)) = &handled.result
            && out.command.as_ref().is_none_or(|c| !c.complete)
            && let Some(id) = handled.about.terminal_id.as_deref()
        {
            self.stop(adapter, req, id, how).await;
        }
        handled
    }

    /// The terminal this request opened, found by the claim it gave the terminal.
    async fn opened_by(&self, req: &Request) -> Option<String> {
        let claim = self.agent_claim(req).active();
        let claim = serde_json::to_value(claim).ok()?;
        self.adapters
            .list()
            .await
            .into_iter()
            .find(|(_, t)| t.claim == claim)
            .map(|(_, t)| t.terminal_id)
    }

    async fn stop(&self, adapter: &Arc<dyn Adapter>, req: &Request, id: &str, how: Stop) {
        let trace = &req.correlation.trace_id;
        let call = |op| self.adapters.call(adapter, op, trace, None, Duration::ZERO);
        let terminal_id = id.to_string();
        let done = match how {
            Stop::Kill => call(TermRequest::Kill { terminal_id })
                .await
                .map(|_| "killed the terminal it opened"),
            Stop::Interrupt => {
                let claim = Some(self.agent_claim(req));
                match call(TermRequest::Interrupt {
                    terminal_id: terminal_id.clone(),
                    claim,
                })
                .await
                {
                    Ok(TermResponse::Interrupted { withheld: true }) => {
                        Ok("its command was waiting for the shell and was never typed")
                    }
                    Ok(_) => Ok("interrupted its command"),
                    // A host that predates `interrupt`: Ctrl-C, as keystrokes.
                    Err(_) => call(TermRequest::Input(InputArgs {
                        terminal_id,
                        data: CTRL_C.to_string(),
                        wait_for: None,
                        wait_ms: 0,
                        claim: None,
                        output: OutputSpec::default(),
                        unseen_line: false,
                        size: None,
                    }))
                    .await
                    .map(|_| "interrupted its command"),
                }
            }
        };
        match done {
            Ok(what) => {
                tracing::info!(terminal = %id, trace_id = %trace, "the client cancelled the call: {what}")
            }
            Err(e) => {
                tracing::warn!(terminal = %id, trace_id = %trace, error = %e, "the client cancelled the call, and stopping its command failed")
            }
        }
    }

    /// The answer of a cancelled call reached nobody: what it showed of a terminal's stream
    /// no longer counts as delivered, so the next read without a cursor shows it again (as a
    /// cancelled headless call leaves its session's cursors). A host that predates the
    /// rewind refuses it, and the output stays marked as before.
    pub(super) async fn give_back(
        &self,
        adapter: &Arc<dyn Adapter>,
        req: &Request,
        shown: &Chunk,
        terminal_id: &str,
    ) {
        let Some(back_to) = shown.delivered_before.filter(|b| *b < shown.end) else {
            return;
        };
        let op = TermRequest::Rewind {
            terminal_id: terminal_id.to_string(),
            back_to,
        };
        let trace = &req.correlation.trace_id;
        match self
            .adapters
            .call(adapter, op, trace, None, Duration::ZERO)
            .await
        {
            Ok(_) => {
                tracing::debug!(terminal = %terminal_id, trace_id = %trace, back_to, "the client cancelled the call: its output is unread again")
            }
            Err(e) => {
                tracing::warn!(terminal = %terminal_id, trace_id = %trace, error = %e, "the client cancelled the call, and its output stays marked as read")
            }
        }
    }
}
