//! Approvals of interactive commands: who decides, in order — a person on the host
//! service's page, else the MCP client's user through elicitation (when the client declared
//! it), else the operator's configured default. A decline is final (`PM_TERM_DECLINED`,
//! never auto-retried); no decision in time is `PM_TERM_TIMEOUT`.

use std::time::Duration;

use serde_json::json;

use super::wait::{Progress, with_progress};
use super::{App, BoxFuture};
use crate::contract::result::{Approval, DecidedBy};
use crate::contract::{ErrorCode, Request, TermError};
use crate::policy::{Authorization, Decision};
use crate::terminal::ops::{ApprovalArgs, TermRequest};

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

impl App {
    /// Whether this interactive command must wait for a decision.
    pub(crate) fn needs_approval(&self, d: &Decision) -> bool {
        use crate::policy::ApprovalMode::*;
        match self.policy.approval {
            Never => false,
            All => true,
            Warned => d.authorization == Authorization::AllowedWithWarning,
        }
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
        let timeout = Duration::from_millis(
            req.runtime
                .timeout_ms
                .unwrap_or(self.cfg.approval_timeout_ms),
        );
        let warning = decision.warning();
        let rule = decision.deciding().map(|f| f.rule.to_string());
        tracing::info!(trace_id = %req.correlation.trace_id, %command, ?rule, "waiting for approval");

        // 1. A person on the host service's page: the host the operator set up for people
        // (the GUI, or the container's host), not the one the request picked to run on.
        if let Some(host) = self.runtime.page_host().await {
            let ask = TermRequest::Approval(ApprovalArgs {
                request_id: req.correlation.request_id.clone(),
                trace_id: req.correlation.trace_id.clone(),
                command: command.to_string(),
                cwd: req.runtime.cwd.clone(),
                terminal_id: req.target.terminal_id.clone(),
                warning: warning.clone(),
                rule: rule.clone(),
                timeout_ms: timeout.as_millis() as u64,
                page_wait_ms: if self.runtime.inputs().gui {
                    self.cfg.page_wait_ms.min(timeout.as_millis() as u64)
                } else {
                    0
                },
            });
            let page = with_progress(
                self.runtime.call(
                    &host,
                    ask,
                    &req.correlation.trace_id,
                    Some(&req.correlation.request_id),
                    timeout,
                ),
                progress,
                "waiting for approval on the host page",
            )
            .await;
            match page {
                Ok(r) => {
                    if let crate::terminal::ops::TermResponse::Approval(a) = r {
                        match a.decision.as_str() {
                            "approved" => {
                                return Ok(Approval {
                                    approver: a.decided_by,
                                    ..Approval::approved(DecidedBy::Page)
                                });
                            }
                            "declined" => return Err(declined("page", a.reason, command)),
                            "timeout" => return Err(timed_out("page", timeout, command)),
                            _ => {}
                        }
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the host page cannot be asked; asking elsewhere")
                }
            }
        }

        // 2. The MCP client's user.
        if elicitor.supported() {
            let message = format!(
                "Allow this command to run in a terminal?\n\n{command}\n\n{}",
                warning
                    .as_deref()
                    .unwrap_or("(approval required by the operator)")
            );
            let answer = with_progress(
                elicitor.ask(message, timeout),
                progress,
                "waiting for approval in the client",
            )
            .await;
            return match answer {
                ElicitOutcome::Approved => Ok(Approval::approved(DecidedBy::Elicitation)),
                ElicitOutcome::Declined(reason) => Err(declined("elicitation", reason, command)),
                ElicitOutcome::NoAnswer => Err(timed_out("elicitation", timeout, command)),
            };
        }

        // 3. The operator's default.
        if self.policy.approve_by_default {
            Ok(Approval {
                note: Some("no approver was available; approved by the operator's default (PM_TERM_APPROVAL_DEFAULT)".into()),
                ..Approval::approved(DecidedBy::OperatorDefault)
            })
        } else {
            Err(declined(
                "operator_default",
                Some("no approver was available and the operator's default is to decline (PM_TERM_APPROVAL_DEFAULT=decline)".into()),
                command,
            ))
        }
    }
}
