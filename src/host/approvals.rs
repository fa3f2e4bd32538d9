//! Approvals on the host: an adapter asks (`pm/terminal` with op `approval`), every
//! connected approver (a page that said so at initialize) is told
//! (`pm/approval/pending`), the first decision (`pm/approval/decide`) answers, and all
//! approvers hear the outcome (`pm/approval/resolved`). Nobody connected: `unavailable`,
//! at once, so the MCP server can ask elsewhere. A program whose call was cancelled takes
//! its question back (`pm/approval/withdraw`), and the page stops showing it.

use std::collections::{HashMap, VecDeque};
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
    /// The client that asked: only it may take the question back.
    asker: Option<String>,
}

/// The decision of a question its asker took back.
const WITHDRAWN: &str = "withdrawn";

/// Decided, expired and unanswered approvals a page is shown when it connects.
const HISTORY_KEPT: usize = 100;

/// Who can approve, what waits for a decision, and what was decided lately.
#[derive(Default)]
struct Board {
    approvers: HashMap<u64, mpsc::Sender<Message>>,
    pending: HashMap<String, Pending>,
    history: VecDeque<Value>,
}

impl Board {
    /// Tell every approver how an approval ended, and remember it.
    fn resolve(&mut self, notice: &Value, outcome: Value) {
        let mut entry = notice.clone();
        if let (Some(e), Some(o)) = (entry.as_object_mut(), outcome.as_object()) {
            e.extend(o.clone());
            e.insert("resolved_at_ms".into(), json!(crate::clock::now_ms()));
        }
        Approvals::broadcast(self, "pm/approval/resolved", &entry);
        if self.history.len() >= HISTORY_KEPT {
            self.history.pop_front();
        }
        self.history.push_back(entry);
    }
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

    /// A connection that decides; it is told what was decided lately and everything
    /// already waiting.
    pub fn add_approver(&self, conn: u64, out: mpsc::Sender<Message>) {
        let mut inner = self.inner();
        let history: Vec<&Value> = inner.history.iter().collect();
        let _ = out.try_send(notification(
            "pm/approval/history",
            json!({ "resolved": history }),
        ));
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
    /// `agent` is the client that asks (shown to the person).
    pub async fn request(&self, args: ApprovalArgs, agent: Option<&str>) -> ApprovalAnswer {
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
                "agent": agent,
                "warning": args.warning,
                "rule": args.rule,
                "requested_at_ms": crate::clock::now_ms(),
                "expires_at_ms": crate::clock::now_ms() + args.timeout_ms,
            });
            Approvals::broadcast(&inner, "pm/approval/pending", &notice);
            inner.pending.insert(
                id.clone(),
                Pending {
                    tx,
                    notice,
                    asker: agent.map(String::from),
                },
            );
            rx
        };
        tracing::info!(approval = %id, command = %args.command, "waiting for a person");
        let started = tokio::time::Instant::now();
        // Nobody there yet: give a page the time to connect, then look again.
        match tokio::time::timeout(page_wait, &mut rx).await {
            Ok(Ok(answer)) => return answer,
            Ok(Err(_)) => return ApprovalAnswer::decided(WITHDRAWN),
            Err(_) => {}
        }
        if self.inner().approvers.is_empty() {
            return self.settle(&id, "unavailable");
        }
        match tokio::time::timeout_at(started + timeout, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => ApprovalAnswer::decided(WITHDRAWN),
            Err(_) => self.settle(&id, "timeout"),
        }
    }

    /// Take back the questions `asker` asked for its request `request_id` (its call was
    /// cancelled): the approvers hear they were withdrawn. How many there were.
    pub fn withdraw(&self, request_id: &str, asker: Option<&str>) -> usize {
        let mut inner = self.inner();
        let ids: Vec<String> = inner
            .pending
            .iter()
            .filter(|(_, p)| {
                p.asker.as_deref() == asker && p.notice["request_id"].as_str() == Some(request_id)
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in &ids {
            if let Some(p) = inner.pending.remove(id) {
                inner.resolve(
                    &p.notice,
                    json!({"decision": WITHDRAWN, "decided_by": "the agent's client"}),
                );
            }
        }
        ids.len()
    }

    /// End a pending approval nobody decided, telling the approvers.
    fn settle(&self, id: &str, decision: &str) -> ApprovalAnswer {
        let mut inner = self.inner();
        if let Some(p) = inner.pending.remove(id) {
            inner.resolve(
                &p.notice,
                json!({"decision": decision, "decided_by": "nobody"}),
            );
        }
        ApprovalAnswer::decided(decision)
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
        inner.resolve(
            &p.notice,
            json!({"decision": decision, "reason": reason, "decided_by": by}),
        );
        tracing::info!(approval = %approval_id, decision, by, "decided");
        Ok(())
    }
}
