//! The chain of approvers a warned command goes through, in order: the person's page, the
//! MCP client's elicitation, then the operator's default for when nobody answers.

use super::*;

/// What an approver is asked to decide on.
pub(crate) struct Question {
    pub(super) req: Request,
    pub(super) command: String,
    pub(super) warning: Option<String>,
    pub(super) rule: Option<String>,
    pub(super) timeout: Duration,
}

/// Someone who can decide on a command. `None`: nobody can be asked here, so the chain
/// asks the next; a decline or no decision in time is final.
pub(crate) trait Approver: Send + Sync {
    fn decide<'a>(
        &'a self,
        question: &'a Question,
        progress: &'a dyn Progress,
    ) -> BoxFuture<'a, Option<Result<Approval, TermError>>>;

    /// Take the question back: the call was cancelled while it was asked.
    fn withdraw<'a>(&'a self, _question: &'a Question) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

/// A person on the host service's page: the host the operator set up for people (the GUI,
/// or the container's host), not the one the request picked to run on.
pub(super) struct Page<'a> {
    pub(super) app: &'a Service,
}

impl Approver for Page<'_> {
    fn decide<'a>(
        &'a self,
        q: &'a Question,
        progress: &'a dyn Progress,
    ) -> BoxFuture<'a, Option<Result<Approval, TermError>>> {
        Box::pin(async move {
            let adapters = &self.app.adapters;
            let host = adapters.page_host().await?;
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
                    .map(crate::text::visible::for_a_person)
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
                page_wait_ms: if adapters.inputs().gui {
                    self.app.cfg.page_wait_ms.min(timeout_ms)
                } else {
                    0
                },
            };
            let asked = with_progress(
                adapters.ask(&host, ask, q.timeout),
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
                "declined" => Some(Err(declined("page", answer.reason, &q.command))),
                "timeout" => Some(Err(timed_out("page", q.timeout, &q.command))),
                // This request id's question was taken back when its call was cancelled: a
                // request asked again under the same id gets that outcome, not another
                // approver (a retry is the same request, as for every other decision).
                "withdrawn" => Some(Err(withdrawn(&q.command))),
                _ => None,
            }
        })
    }

    fn withdraw<'a>(&'a self, q: &'a Question) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(host) = self.app.adapters.page_host().await {
                host.withdraw(&q.req.correlation.request_id).await;
            }
        })
    }
}

/// The MCP client's user, when the client declared elicitation.
pub(super) struct Elicitation<'a> {
    pub(super) elicitor: &'a dyn Elicitor,
}

impl Approver for Elicitation<'_> {
    fn decide<'a>(
        &'a self,
        q: &'a Question,
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
                ElicitOutcome::Declined(reason) => Err(declined("elicitation", reason, &q.command)),
                ElicitOutcome::NoAnswer => Err(timed_out("elicitation", q.timeout, &q.command)),
            })
        })
    }
}

/// The operator's configured default, when nobody else can be asked: always decides.
pub(super) struct OperatorDefault {
    pub(super) approve: bool,
}

impl Approver for OperatorDefault {
    fn decide<'a>(
        &'a self,
        q: &'a Question,
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
                &q.command,
            )
            .with("rule", json!(q.rule))
            .with("setting", json!("PM_TERM_APPROVAL_DEFAULT")))
        };
        Box::pin(async move { Some(decided) })
    }
}
