//! Approvals of commands: a chain of [`Approver`]s asked in order — a person on the host
//! service's page, else the MCP client's user through elicitation (when the client declared
//! it), else the operator's configured default. A decline is final (`PM_TERM_DECLINED`,
//! never auto-retried); no decision in time is `PM_TERM_TIMEOUT`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::wait::{NoProgress, Progress, abandoned, unless_abandoned, with_progress};
use super::{BoxFuture, Handled, Service};
use crate::adapters::ops::ApprovalArgs;
use crate::contract::result::{Approval, DecidedBy, Verdict};
use crate::contract::{ErrorCode, Request, TermError};
use crate::policy::{Authorization, Decision};

mod approvers;
use approvers::{Approver, Elicitation, OperatorDefault, Page, Question};

tokio::task_local! {
    /// The approval a held command was given, for the run that follows the decision: the
    /// chain is not asked again. Only the task that put the question sets it, so no
    /// request can borrow another's approval.
    static DECIDED: Approval;
}

/// Why a command did not run (yet).
pub(crate) enum Stop {
    Failed(TermError),
    /// It waits for a person's decision: the call's answer (`service::held`).
    Held(Handled),
}

impl From<TermError> for Stop {
    fn from(e: TermError) -> Stop {
        Stop::Failed(e)
    }
}

/// The MCP client's user, reached through elicitation.
pub trait Elicitor: Send + Sync {
    /// Whether the client declared elicitation.
    fn supported(&self) -> bool;
    fn ask(&self, message: String, timeout: Duration) -> BoxFuture<'_, ElicitOutcome>;
    /// One that can still ask after the call has answered (a question held past the call's
    /// wait); `None` when the question lives in the call (2026-07-28 rounds).
    fn detached(&self) -> Option<Arc<dyn Elicitor>> {
        None
    }
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
    fn detached(&self) -> Option<Arc<dyn Elicitor>> {
        Some(Arc::new(NoElicitor))
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
        Some("the question was withdrawn before anyone decided: the client cancelled its call, or the agent terminated the held command (a new call needs a new correlation.request_id)".into()),
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
        match self.approvals.mode {
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
    ) -> Result<Approval, Stop> {
        if let Ok(a) = DECIDED.try_with(Approval::clone) {
            return Ok(a);
        }
        let command = shown(req, command);
        let sandbox = crate::sandbox::current().summary();
        let warning = format!(
            "The agent asks to run this OUTSIDE the sandbox ({}, network {}): it could write \
             anywhere this server may and reach any network.",
            sandbox.mode, sandbox.network
        );
        tracing::info!(trace_id = %req.correlation.trace_id, %command, "asking to leave the sandbox");
        let verdict = Verdict {
            authorization: Authorization::AllowedWithWarning,
            warning: Some(warning.clone()),
            approval: None,
        };
        let question = Question {
            req: req.clone(),
            command,
            warning: Some(warning),
            rule: Some(ESCAPE_RULE.into()),
            timeout: self.approval_timeout(req),
        };
        self.ask(question, verdict, None, progress, elicitor).await
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
    ) -> Result<Approval, Stop> {
        if let Ok(a) = DECIDED.try_with(Approval::clone) {
            return Ok(a);
        }
        let question = Question {
            req: req.clone(),
            command: shown(req, command),
            // The warning quotes the command: written out the same way.
            warning: decision
                .warning()
                .map(|w| crate::text::visible::for_a_person(&w)),
            rule: decision.deciding().map(|f| f.rule.to_string()),
            timeout: self.approval_timeout(req),
        };
        tracing::info!(trace_id = %req.correlation.trace_id, command = %question.command, rule = ?question.rule, "waiting for approval");
        let verdict = super::verdict(decision, None);
        let default = Some(self.approvals.approve_by_default);
        self.ask(question, verdict, default, progress, elicitor)
            .await
    }

    fn approval_timeout(&self, req: &Request) -> Duration {
        Duration::from_millis(
            req.runtime
                .timeout_ms
                .unwrap_or(self.cfg.approval_timeout_ms),
        )
    }

    /// Put `q` to the chain (ending in the operator's `default`, when there is one) and wait
    /// for the decision within the call's wait (at most [`super::held::MAX_HOLD`]); past it, the command
    /// is held (`service::held`) and the call answers that it waits. A chain that cannot be
    /// asked outside the call is waited for inside it.
    async fn ask(
        &self,
        q: Question,
        verdict: Verdict,
        default: Option<bool>,
        progress: &dyn Progress,
        elicitor: &dyn Elicitor,
    ) -> Result<Approval, Stop> {
        let (Some(app), Some(detached)) = (self.me.upgrade(), elicitor.detached()) else {
            return Ok(decide(self, &q, default, elicitor, progress).await?);
        };
        let hold = Duration::from_millis(q.req.runtime.wait_ms.unwrap_or(self.cfg.default_wait_ms))
            .min(super::held::MAX_HOLD);
        let token = CancellationToken::new();
        let (tx, mut rx) = oneshot::channel();
        let slot = Arc::new(Mutex::new(Slot::Waiting(tx)));
        let (command, timeout) = (q.command.clone(), q.timeout);
        tokio::spawn(put(app, q, default, detached, token.clone(), slot.clone()));
        let waited = with_progress(
            async {
                tokio::select! {
                    biased;
                    () = abandoned(progress) => Waited::Abandoned,
                    d = &mut rx => Waited::Decided(d.ok()),
                    () = tokio::time::sleep(hold) => Waited::Hold,
                }
            },
            progress,
            "waiting for a person's decision",
        )
        .await;
        let gone = || {
            Stop::Failed(TermError::internal(
                "the approval task ended without a decision",
            ))
        };
        match waited {
            Waited::Decided(d) => d.ok_or_else(gone)?.map_err(Stop::Failed),
            Waited::Abandoned => {
                // The question is taken back; the task answers with the withdrawal.
                token.cancel();
                let _ = tokio::time::timeout(Duration::from_secs(10), rx).await;
                Err(Stop::Failed(withdrawn(&command)))
            }
            Waited::Hold => {
                let held = {
                    let mut s = lock(&slot);
                    if matches!(*s, Slot::Done) {
                        // Decided as the wait ended: the decision is in the channel.
                        None
                    } else {
                        let held = self.held.hold(&command, verdict, timeout, token.clone());
                        if let Ok((_, entry)) = &held {
                            *s = Slot::Held(entry.clone());
                        }
                        Some(held)
                    }
                };
                match held {
                    None => rx.await.map_err(|_| gone())?.map_err(Stop::Failed),
                    Some(Err(e)) => {
                        token.cancel();
                        Err(Stop::Failed(e))
                    }
                    Some(Ok((id, entry))) => {
                        tracing::info!(approval_id = %id, %command, "held for a person's decision");
                        Err(Stop::Held(super::held::waiting_answer(&id, &entry)))
                    }
                }
            }
        }
    }
}

/// How the call's wait for a decision ended.
enum Waited {
    Abandoned,
    /// `None`: the task ended without sending one.
    Decided(Option<Result<Approval, TermError>>),
    Hold,
}

/// Where the asking task puts its decision: to the call still waiting, or, once the call
/// has answered, into the held command's entry after running it.
enum Slot {
    Waiting(oneshot::Sender<Result<Approval, TermError>>),
    Held(Arc<super::held::Entry>),
    Done,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The caller of a question put outside its call: nobody sees progress; `token` takes the
/// question back.
struct Asking(CancellationToken);

impl Progress for Asking {
    fn report(&self, _elapsed: Duration, _what: &str) {}
    fn abandoned(&self) -> Option<&CancellationToken> {
        Some(&self.0)
    }
}

/// Put `q` to the chain, outside the call, and deliver the decision (see [`Slot`]).
async fn put(
    app: Arc<Service>,
    q: Question,
    default: Option<bool>,
    elicitor: Arc<dyn Elicitor>,
    token: CancellationToken,
    slot: Arc<Mutex<Slot>>,
) {
    let decided = decide(&app, &q, default, &*elicitor, &Asking(token)).await;
    let entry = match std::mem::replace(&mut *lock(&slot), Slot::Done) {
        Slot::Waiting(tx) => {
            let _ = tx.send(decided);
            return;
        }
        Slot::Held(entry) => entry,
        Slot::Done => return,
    };
    let handled = match decided {
        Ok(approval) => run_decided(app, q.req, approval).await,
        Err(e) => Handled::failed(e),
    };
    entry.answer(handled);
}

/// Run a held request once a person approved it, as its execute would have: the approval
/// stands in for asking again.
fn run_decided(app: Arc<Service>, req: Request, approval: Approval) -> BoxFuture<'static, Handled> {
    Box::pin(async move {
        tracing::info!(trace_id = %req.correlation.trace_id, "running a held command after its approval");
        DECIDED
            .scope(approval, app.dispatch(&req, &NoProgress, &NoElicitor))
            .await
    })
}

/// The chain's decision on `q`: a person on the host's page, the MCP client's user, then
/// the operator's `default` (`None`: no default; nobody to ask is a no).
async fn decide(
    app: &Service,
    q: &Question,
    default: Option<bool>,
    elicitor: &dyn Elicitor,
    progress: &dyn Progress,
) -> Result<Approval, TermError> {
    let page = Page { app };
    let client = Elicitation { elicitor };
    let operator = default.map(|approve| OperatorDefault { approve });
    let mut chain: Vec<&dyn Approver> = vec![&page, &client];
    if let Some(o) = &operator {
        chain.push(o);
    }
    match first_decision(&chain, q, progress).await {
        Some(decided) => decided,
        None if default.is_some() => Err(declined(
            "operator_default",
            Some("no approver was available".into()),
            &q.command,
        )),
        None => Err(declined(
            "nobody",
            Some("running outside the sandbox needs a person's approval, and nobody can be asked here (no page, no MCP elicitation); the operator's default does not apply".into()),
            &q.command,
        )),
    }
}

/// What a person deciding is shown: the command after the variables the request sets for
/// it (`K=V command`, as a shell would read them), so that nothing the agent sent beside the
/// command goes unseen; and every character a screen would hide or reorder written out
/// (`crate::text::visible`).
fn shown(req: &Request, command: &str) -> String {
    let mut line = String::new();
    for (k, v) in req.execution.env.iter().flatten() {
        line.push_str(k);
        line.push('=');
        line.push_str(&shell_words::quote(v));
        line.push(' ');
    }
    line.push_str(command);
    crate::text::visible::for_a_person(&line)
}

/// The first decision along `chain`: each approver in turn, until one can decide. A call
/// its client cancelled is decided at once: declined, and nobody asked any more (a yes
/// arriving later has no call left to run for).
async fn first_decision(
    chain: &[&dyn Approver],
    question: &Question,
    progress: &dyn Progress,
) -> Option<Result<Approval, TermError>> {
    for approver in chain {
        match unless_abandoned(approver.decide(question, progress), progress).await {
            None => {
                approver.withdraw(question).await;
                return Some(Err(withdrawn(&question.command)));
            }
            Some(Some(decided)) => return Some(decided),
            Some(None) => {}
        }
    }
    None
}
