//! Approvals on the host: a runtime adapter asks (`pm/terminal` with op `approval`), every
//! connected approver (a page that said so at initialize) is told
//! (`pm/approval/pending`), the first decision (`pm/approval/decide`) answers, and all
//! approvers hear the outcome (`pm/approval/resolved`). Nobody connected: `unavailable`,
//! at once, so the MCP server can ask elsewhere.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

use crate::ids;
use crate::locks::lock;
use crate::terminal::ops::{ApprovalAnswer, ApprovalArgs};

struct Pending {
    tx: oneshot::Sender<ApprovalAnswer>,
    notice: Value,
}

/// Who can approve, and what waits for a decision.
#[derive(Default)]
struct Board {
    approvers: HashMap<u64, mpsc::Sender<Message>>,
    pending: HashMap<String, Pending>,
}

#[derive(Default)]
pub struct Approvals {
    inner: Mutex<Board>,
}

fn notification(method: &str, params: Value) -> Message {
    Message::text(json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string())
}

impl Approvals {
    fn inner(&self) -> std::sync::MutexGuard<'_, Board> {
        lock(&self.inner)
    }

    /// A connection that decides; it is told about everything already waiting.
    pub fn add_approver(&self, conn: u64, out: mpsc::Sender<Message>) {
        let mut inner = self.inner();
        for p in inner.pending.values() {
            let _ = out.try_send(notification("pm/approval/pending", p.notice.clone()));
        }
        inner.approvers.insert(conn, out);
    }

    pub fn remove_approver(&self, conn: u64) {
        self.inner().approvers.remove(&conn);
    }

    fn broadcast(inner: &Board, method: &str, params: &Value) {
        for out in inner.approvers.values() {
            let _ = out.try_send(notification(method, params.clone()));
        }
    }

    /// Ask the approvers and wait for the first decision, or the timeout. With nobody
    /// connected, wait up to `page_wait_ms` for a page to come (it is told at once), then
    /// answer `unavailable` so the server can ask elsewhere.
    pub async fn request(&self, args: ApprovalArgs) -> ApprovalAnswer {
        let id = ids::new_id("appr");
        let timeout = Duration::from_millis(args.timeout_ms);
        let page_wait = Duration::from_millis(args.page_wait_ms).min(timeout);
        let mut rx = {
            let mut inner = self.inner();
            if inner.approvers.is_empty() && page_wait.is_zero() {
                return ApprovalAnswer::unavailable();
            }
            let (tx, rx) = oneshot::channel();
            let notice = json!({
                "approval_id": id,
                "request_id": args.request_id,
                "trace_id": args.trace_id,
                "command": args.command,
                "cwd": args.cwd,
                "terminal_id": args.terminal_id,
                "warning": args.warning,
                "rule": args.rule,
                "requested_at_ms": crate::clock::now_ms(),
                "expires_at_ms": crate::clock::now_ms() + args.timeout_ms,
            });
            Approvals::broadcast(&inner, "pm/approval/pending", &notice);
            inner.pending.insert(id.clone(), Pending { tx, notice });
            rx
        };
        tracing::info!(approval = %id, command = %args.command, "waiting for a person");
        let started = tokio::time::Instant::now();
        // Nobody there yet: give a page the time to connect, then look again.
        if let Ok(Ok(answer)) = tokio::time::timeout(page_wait, &mut rx).await {
            return answer;
        }
        if self.inner().approvers.is_empty() {
            return self.settle(&id, "unavailable");
        }
        match tokio::time::timeout_at(started + timeout, rx).await {
            Ok(Ok(answer)) => answer,
            _ => self.settle(&id, "timeout"),
        }
    }

    /// End a pending approval nobody decided, telling the approvers.
    fn settle(&self, id: &str, decision: &str) -> ApprovalAnswer {
        let mut inner = self.inner();
        inner.pending.remove(id);
        Approvals::broadcast(
            &inner,
            "pm/approval/resolved",
            &json!({"approval_id": id, "decision": decision}),
        );
        ApprovalAnswer {
            decision: decision.into(),
            reason: None,
            decided_by: None,
        }
    }

    /// A person's decision. `Err` when the approval is unknown or already settled.
    pub fn decide(
        &self,
        approval_id: &str,
        approve: bool,
        reason: Option<String>,
        by: &str,
    ) -> Result<(), String> {
        let mut inner = self.inner();
        let Some(p) = inner.pending.remove(approval_id) else {
            return Err(format!(
                "no pending approval {approval_id:?} (decided, expired, or never asked)"
            ));
        };
        let decision = if approve { "approved" } else { "declined" };
        let _ = p.tx.send(ApprovalAnswer {
            decision: decision.into(),
            reason: reason.clone(),
            decided_by: Some(by.to_string()),
        });
        Approvals::broadcast(
            &inner,
            "pm/approval/resolved",
            &json!({"approval_id": approval_id, "decision": decision, "reason": reason, "decided_by": by}),
        );
        tracing::info!(approval = %approval_id, decision, by, "decided");
        Ok(())
    }
}
