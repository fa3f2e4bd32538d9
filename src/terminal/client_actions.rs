//! Actions dispatched by AHP clients (docs/terminal-core.md, "State, sequence, log"): only the
//! client-dispatchable ones are accepted, and a claim changes only at the hands of whoever
//! holds it; anything else comes back with a `rejectionReason`.

use std::collections::BTreeSet;
use std::sync::Arc;

use ahp_types::ActionEnvelope;
use ahp_types::actions::{ActionOrigin, StateAction};
use ahp_types::state::{Snapshot, TerminalClaim};

use super::core::Core;
use super::lifecycle;
use crate::ids;

/// How a reconnecting client catches up.
pub enum Resume {
    Replay(Vec<Arc<ActionEnvelope>>),
    Snapshot(Vec<Snapshot>),
}

impl Core {
    /// Apply a client's action. `Err` carries the rejection envelope for that client alone.
    pub async fn dispatch_client(
        &self,
        client_id: &str,
        client_seq: i64,
        channel: &str,
        action: StateAction,
    ) -> Result<(), Box<ActionEnvelope>> {
        let origin = ActionOrigin {
            client_id: client_id.to_string(),
            client_seq,
        };
        let reject = |reason: String| {
            Box::new(ActionEnvelope {
                channel: channel.to_string(),
                action: action.clone(),
                server_seq: self.current_seq(),
                origin: Some(origin.clone()),
                rejection_reason: Some(reason),
            })
        };
        let Some(term) = ids::terminal_id_from_uri(channel).and_then(|id| self.get(id)) else {
            return Err(reject(format!("no terminal at {channel}")));
        };
        match &action {
            StateAction::TerminalInput(d) => {
                lifecycle::input(self, &term, &d.data, Some(origin.clone()))
                    .await
                    .map_err(|e| reject(e.to_string()))
            }
            StateAction::TerminalResized(r) => {
                let dimension = |v: i64| u16::try_from(v).unwrap_or(u16::MAX);
                lifecycle::resize(
                    self,
                    &term,
                    dimension(r.cols.max(0)),
                    dimension(r.rows.max(0)),
                    Some(origin.clone()),
                )
                .map_err(reject)
            }
            StateAction::TerminalClaimed(c) => {
                let (current, holder) = {
                    let st = term.state();
                    (st.state.claim.clone(), st.holder_client.clone())
                };
                let holds = match &current {
                    TerminalClaim::Client(cc) => cc.client_id == client_id,
                    TerminalClaim::Session(_) => holder.as_deref() == Some(client_id),
                };
                if !holds {
                    let by = match &current {
                        TerminalClaim::Client(cc) => format!("client {}", cc.client_id),
                        TerminalClaim::Session(s) => format!("session {}", s.session),
                    };
                    return Err(reject(format!(
                        "the claim is held by {by}; only its holder can transfer it"
                    )));
                }
                term.state().holder_client = match &c.claim {
                    TerminalClaim::Session(_) => Some(client_id.to_string()),
                    TerminalClaim::Client(_) => None,
                };
                self.dispatch(&term, action.clone(), Some(origin.clone()));
                Ok(())
            }
            StateAction::TerminalTitleChanged(_) | StateAction::TerminalCleared(_) => {
                self.dispatch(&term, action.clone(), Some(origin.clone()));
                Ok(())
            }
            other => Err(reject(format!(
                "{} is not dispatchable by clients",
                serde_json::to_value(other)
                    .ok()
                    .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(String::from))
                    .unwrap_or_else(|| "this action".into())
            ))),
        }
    }

    /// Catch a reconnecting client up from `last_seen`: the missed actions when the log
    /// still holds them, fresh snapshots otherwise, and the URIs that no longer exist.
    /// Taken under one lock with the current sequence, so nothing falls between.
    pub fn resume(&self, last_seen: u64, uris: &[String]) -> (Resume, Vec<String>, u64) {
        let inner = self.settled();
        let mut missing = Vec::new();
        let mut present = BTreeSet::new();
        for u in uris {
            let exists = u == ahp_types::ROOT_RESOURCE_URI
                || ids::terminal_id_from_uri(u).is_some_and(|id| inner.terminals.contains_key(id));
            if exists {
                present.insert(u.clone());
            } else {
                missing.push(u.clone());
            }
        }
        let resume = match self.replay_locked(&inner, last_seen, &present) {
            Some(actions) => Resume::Replay(actions),
            None => Resume::Snapshot(
                present
                    .iter()
                    .filter_map(|u| self.snapshot_locked(&inner, u))
                    .collect(),
            ),
        };
        (resume, missing, inner.seq)
    }

    /// A snapshot and the current sequence, together.
    pub fn snapshot_with_seq(&self, uri: &str) -> Option<(Snapshot, u64)> {
        let inner = self.settled();
        let s = self.snapshot_locked(&inner, uri)?;
        Some((s, inner.seq))
    }
}
