//! Approvals of commands: a chain of [`Approver`]s asked in order — a person on the host
//! service's page, else the MCP client's user through elicitation (when the client declared
//! it), else the operator's configured default. A decline is final (`PM_TERM_DECLINED`,
//! never auto-retried); no decision in time is `PM_TERM_TIMEOUT`.

use std::time::Duration;

use serde_json::json;

use super::wait::{Progress, unless_abandoned, with_progress};
use super::{BoxFuture, Service};
use crate::contract::result::{Approval, DecidedBy};
use crate::contract::{ErrorCode, Request, TermError};
use crate::policy::{Authorization, Decision};
use crate::runtime::ops::ApprovalArgs;

/// The MCP client's user, reached through elicitation.
pub trait Elicitor: Send + Sync {
    /// Whether the client declared elicitation.
    fn supported(&self) -> bool;
    fn ask(&self, message: String, timeout: Duration) -> BoxFuture<'_, ElicitOutcome>;
}

pub enum ElicitOutcome {
    Approved,
    Declined(Option<String>),
    NoAnswer,
}

/// No elicitation (the client did not declare it).
pub struct NoElicitor;

impl Elicitor for NoElicitor {
    fn supported(&self) -> bool {
        false
    }
    fn ask(&self, _message: String, _timeout: Duration) -> BoxFuture<'_, ElicitOutcome> {
        Box::pin(async { ElicitOutcome::NoAnswer })
    }
}

/// The rule an escape from the sandbox is asked under (shown to the person).
const ESCAPE_RULE: &str = "leave_sandbox";

fn declined(by: &str, reason: Option<String>, command: &str) -> TermError {
    let reason_text = reason.clone().unwrap_or_else(|| "no reason given".into());
    TermError::new(
        ErrorCode::Declined,
        format!("the command was declined ({by}): {reason_text}"),
    )
    .with("decided_by", json!(by))
    .with("reason", json!(reason))
    .with("command", json!(command))
}

/// The caller cancelled the call while a person was being asked: nothing runs.
fn withdrawn(command: &str) -> TermError {
    declined(
        "client_cancelled",
        Some("the client cancelled the call before anyone decided (a new call needs a new correlation.request_id)".into()),
        command,
    )
}

fn timed_out(by: &str, timeout: Duration, command: &str) -> TermError {
    TermError::new(
        ErrorCode::Timeout,
        format!(
            "no decision on the command within {} ms ({by})",
            timeout.as_millis()
        ),
    )
    .with("timeout_ms", json!(timeout.as_millis() as u64))
    .with("target", json!("approval"))
    .with("decided_by", json!(by))
    .with("command", json!(command))
}

impl Service {
    /// Whether this interactive command must wait for a decision.
    /// Whether `d` waits for a person. `confined`: the command runs inside this server's
    /// sandbox, where the operator may let warned commands run without asking.
    pub(crate) fn needs_approval(&self, d: &Decision, confined: bool) -> bool {
        use crate::policy::ApprovalMode::*;
        match self.policy.approval {
            Never => false,
            All => true,
            Warned => {
                d.authorization == Authorization::AllowedWithWarning
                    && !(confined && self.cfg.sandbox_skips_approval)
            }
        }
    }

    /// Ask a person to let one command run outside the operator's sandbox. Unlike
    /// [`Service::approve`], there is no operator default: when nobody can be asked, the
    /// answer is no.
    pub(crate) async fn approve_escape(
        &self,
        req: &Request,
        command: &str,
        progress: &dyn Progress,
        elicitor: &dyn Elicitor,
    ) -> Result<Approval, TermError> {
        let shown = shown(req, command);
        let command = shown.as_str();
        let sandbox = crate::sandbox::current().summary();
        let question = Question {
            req,
            command,
            warning: Some(format!(
                "The agent asks to run this OUTSIDE the sandbox ({}, network {}): it could \
                 write anywhere this server may and reach any network.",
                sandbox.mode, sandbox.network
            )),
            rule: Some(ESCAPE_RULE.into()),
            timeout: Duration::from_millis(
                req.runtime
                    .timeout_ms
                    .unwrap_or(self.cfg.approval_timeout_ms),
            ),
        };
        tracing::info!(trace_id = %req.correlation.trace_id, %command, "asking to leave the sandbox");
        let page = Page { app: self };
        let client = Elicitation { elicitor };
        if let Some(decided) = first_decision(&[&page, &client], &question, progress).await {
            return decided;
        }
        Err(declined(
            "nobody",
            Some("running outside the sandbox needs a person's approval, and nobody can be asked here (no page, no MCP elicitation); the operator's default does not apply".into()),
            command,
        ))
    }

    /// Whether warned headless commands go through the approval chain too.
    pub(crate) fn approves_headless(&self) -> bool {
        self.cfg.approve_headless
    }

    /// Ask, in order, until someone decides: a person on the host's page (whichever adapter
    /// runs the command), the MCP client's user, the operator's default.
    pub(crate) async fn approve(
        &self,
        req: &Request,
        command: &str,
        decision: &Decision,
        progress: &dyn Progress,
        elicitor: &dyn Elicitor,
    ) -> Result<Approval, TermError> {
        let shown = shown(req, command);
        let command = shown.as_str();
        let question = Question {
            req,
            command,
            // The warning quotes the command: written out the same way.
            warning: decision.warning().map(|w| crate::visible::for_a_person(&w)),
            rule: decision.deciding().map(|f| f.rule.to_string()),
            timeout: Duration::from_millis(
                req.runtime
                    .timeout_ms
                    .unwrap_or(self.cfg.approval_timeout_ms),
            ),
        };
        tracing::info!(trace_id = %req.correlation.trace_id, %command, rule = ?question.rule, "waiting for approval");
        let page = Page { app: self };
        let client = Elicitation { elicitor };
        let operator = OperatorDefault {
            approve: self.policy.approve_by_default,
        };
        if let Some(decided) =
            first_decision(&[&page, &client, &operator], &question, progress).await
        {
            return decided;
        }
        Err(declined(
            "operator_default",
            Some("no approver was available".into()),
            command,
        ))
    }
}

/// What a person deciding is shown: the command after the variables the request sets for
/// it (`K=V command`, as a shell would read them), so that nothing the agent sent beside the
/// command goes unseen; and every character a screen would hide or reorder written out
/// (`crate::visible`).
fn shown(req: &Request, command: &str) -> String {
    let mut line = String::new();
    for (k, v) in req.execution.env.iter().flatten() {
        line.push_str(k);
        line.push('=');
        line.push_str(&shell_words::quote(v));
        line.push(' ');
    }
    line.push_str(command);
    crate::visible::for_a_person(&line)
}

/// The first decision along `chain`: each approver in turn, until one can decide. A call
/// its client cancelled is decided at once: declined, and nobody asked any more (a yes
/// arriving later has no call left to run for).
async fn first_decision(
    chain: &[&dyn Approver],
    question: &Question<'_>,
    progress: &dyn Progress,
) -> Option<Result<Approval, TermError>> {
    for approver in chain {
        match unless_abandoned(approver.decide(question, progress), progress).await {
            None => {
                approver.withdraw(question).await;
                return Some(Err(withdrawn(question.command)));
            }
            Some(Some(decided)) => return Some(decided),
            Some(None) => {}
        }
    }
    None
}

/// What an approver is asked to decide on.
pub(crate) struct Question<'a> {
    req: &'a Request,
    command: &'a str,
    warning: Option<String>,
    rule: Option<String>,
    timeout: Duration,
}

/// Someone who can decide on a command. `None`: nobody can be asked here, so the chain
/// asks the next; a decline or no decision in time is final.
pub(crate) trait Approver: Send + Sync {
    fn decide<'a>(
        &'a self,
        question: &'a Question<'a>,
        progress: &'a dyn Progress,
    ) -> BoxFuture<'a, Option<Result<Approval, TermError>>>;

    /// Take the question back: the call was cancelled while it was asked.
    fn withdraw<'a>(&'a self, _question: &'a Question<'a>) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

/// A person on the host service's page: the host the operator set up for people (the GUI,
/// or the container's host), not the one the request picked to run on.
struct Page<'a> {
    app: &'a Service,
}

impl Approver for Page<'_> {
    fn decide<'a>(
        &'a self,
        q: &'a Question<'a>,
        progress: &'a dyn Progress,
    ) -> BoxFuture<'a, Option<Result<Approval, TermError>>> {
        Box::pin(async move {
            let runtime = &self.app.runtime;
            let host = runtime.page_host().await?;
            let timeout_ms = q.timeout.as_millis() as u64;
            let ask = ApprovalArgs {
                request_id: q.req.correlation.request_id.clone(),
                trace_id: q.req.correlation.trace_id.clone(),
                command: q.command.to_string(),
                // Where it runs: the request's directory, or the one a new terminal opens in
                // (in an existing terminal, wherever its shell stands).
                cwd: q
                    .req
                    .runtime
                    .cwd
                    .as_deref()
                    .map(crate::visible::for_a_person)
                    .or_else(|| {
                        q.req.target.terminal_id.is_none().then(|| {
                            std::env::current_dir()
                                .map(|d| d.display().to_string())
                                .unwrap_or_default()
                        })
                    }),
                terminal_id: q.req.target.terminal_id.clone(),
                warning: q.warning.clone(),
                rule: q.rule.clone(),
                timeout_ms,
                page_wait_ms: if runtime.inputs().gui {
                    self.app.cfg.page_wait_ms.min(timeout_ms)
                } else {
                    0
                },
            };
            let asked = with_progress(
                runtime.ask(&host, ask, q.timeout),
                progress,
                "waiting for approval on the host page",
            )
            .await;
            let answer = match asked {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "the host page cannot be asked; asking elsewhere");
                    return None;
                }
            };
            match answer.decision.as_str() {
                "approved" => Some(Ok(Approval {
                    approver: answer.decided_by,
                    ..Approval::approved(DecidedBy::Page)
                })),
                "declined" => Some(Err(declined("page", answer.reason, q.command))),
                "timeout" => Some(Err(timed_out("page", q.timeout, q.command))),
                // This request id's question was taken back when its call was cancelled: a
                // request asked again under the same id gets that outcome, not another
                // approver (a retry is the same request, as for every other decision).
                "withdrawn" => Some(Err(withdrawn(q.command))),
                _ => None,
            }
        })
    }

    fn withdraw<'a>(&'a self, q: &'a Question<'a>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(host) = self.app.runtime.page_host().await {
                host.withdraw(&q.req.correlation.request_id).await;
            }
        })
    }
}

/// The MCP client's user, when the client declared elicitation.
struct Elicitation<'a> {
    elicitor: &'a dyn Elicitor,
}

impl Approver for Elicitation<'_> {
    fn decide<'a>(
        &'a self,
        q: &'a Question<'a>,
        progress: &'a dyn Progress,
    ) -> BoxFuture<'a, Option<Result<Approval, TermError>>> {
        Box::pin(async move {
            if !self.elicitor.supported() {
                return None;
            }
            let message = format!(
                "Allow this command to run in a terminal?\n\n{}\n\n{}",
                q.command,
                q.warning
                    .as_deref()
                    .unwrap_or("(approval required by the operator)")
            );
            let answer = with_progress(
                self.elicitor.ask(message, q.timeout),
                progress,
                "waiting for approval in the client",
            )
            .await;
            Some(match answer {
                ElicitOutcome::Approved => Ok(Approval::approved(DecidedBy::Elicitation)),
                ElicitOutcome::Declined(reason) => Err(declined("elicitation", reason, q.command)),
                ElicitOutcome::NoAnswer => Err(timed_out("elicitation", q.timeout, q.command)),
            })
        })
    }
}

/// The operator's configured default, when nobody else can be asked: always decides.
struct OperatorDefault {
    approve: bool,
}

impl Approver for OperatorDefault {
    fn decide<'a>(
        &'a self,
        q: &'a Question<'a>,
        _progress: &'a dyn Progress,
    ) -> BoxFuture<'a, Option<Result<Approval, TermError>>> {
        let decided = if self.approve {
            Ok(Approval {
                note: Some("no approver was available; approved by the operator's default (PM_TERM_APPROVAL_DEFAULT)".into()),
                ..Approval::approved(DecidedBy::OperatorDefault)
            })
        } else {
            let why = q
                .warning
                .as_deref()
                .map_or_else(String::new, |w| format!(" Held for a person because: {w}."));
            Err(declined(
                "operator_default",
                Some(format!(
                    "nobody could be asked (no host page open, no MCP elicitation in this \
                     client) and the operator's default declines \
                     (PM_TERM_APPROVAL_DEFAULT=decline, the default).{why} Run a command the \
                     policy does not warn about, or ask the operator to set \
                     PM_TERM_APPROVAL_DEFAULT=approve or to start the server with --gui"
                )),
                q.command,
            )
            .with("rule", json!(q.rule))
            .with("setting", json!("PM_TERM_APPROVAL_DEFAULT")))
        };
        Box::pin(async move { Some(decided) })
    }
}
