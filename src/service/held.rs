//! Commands held for a person's decision, answered before the decision comes.
//!
//! Why: a warned command asked on the host page waited inside its call until a person
//! decided (up to the approval timeout, two minutes), while MCP clients give up on a call
//! after 60 s (the TypeScript SDK's default request timeout) — and a cancelled call
//! withdrew the question. So a question not decided within the call's wait is held here
//! under an `apr_` id: the call answers `waiting_for_approval`; the person's decision runs
//! or declines the command whether or not anyone is reading; `read_output` on the id gives
//! the command's own answer once there is one (the answer its execute would have given),
//! and `terminate` withdraws the question.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::wait::{Progress, wait_until};
use super::{Handled, Service};
use crate::contract::result::{HeldCommand, Verdict};
use crate::contract::{ErrorCode, Identity, Outcome, Request, TermError};
use crate::ids;

/// Longest a call waits for a person before it answers `waiting_for_approval`: below the
/// 60 s after which MCP clients (the TypeScript SDK's default) give up on a call.
pub const MAX_HOLD: Duration = Duration::from_secs(45);

/// Questions still waiting at once; more are refused until some are decided.
const MAX_WAITING: usize = 64;

/// Answered questions kept for a late reader (oldest dropped first).
const MAX_KEPT: usize = 256;

/// What became of a held command.
enum State {
    Waiting,
    /// Its answer, for the first reader.
    Answered(Handled),
    /// Its answer was read: what it was about (the session or terminal it ran as).
    Delivered(Identity),
}

/// One held command.
pub(crate) struct Entry {
    command: String,
    verdict: Verdict,
    asked: Instant,
    /// How long the person is given.
    timeout: Duration,
    state: Mutex<State>,
    changed: watch::Sender<u64>,
    /// Fired to take the question back.
    pub withdraw: CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Entry {
    /// The command's answer (its run, or why it did not run) is in.
    pub fn answer(&self, handled: Handled) {
        *lock(&self.state) = State::Answered(handled);
        self.changed.send_modify(|n| *n += 1);
    }

    fn waiting(&self) -> bool {
        matches!(*lock(&self.state), State::Waiting)
    }
}

/// The held commands of one service.
#[derive(Default)]
pub(crate) struct Held {
    entries: Mutex<BTreeMap<String, Arc<Entry>>>,
}

impl Held {
    /// Hold `command` (judged `verdict`) for a person given `timeout`: its id and entry.
    pub fn hold(
        &self,
        command: &str,
        verdict: Verdict,
        timeout: Duration,
        withdraw: CancellationToken,
    ) -> Result<(String, Arc<Entry>), TermError> {
        let mut entries = lock(&self.entries);
        let waiting = entries.values().filter(|e| e.waiting()).count();
        if waiting >= MAX_WAITING {
            return Err(super::failures::limit_reached(
                "held_approvals",
                Some(MAX_WAITING),
                format!(
                    "{waiting} commands already wait for a person's decision; this one was not \
                     asked. Follow those (read_output on their approval_id) or withdraw some \
                     (terminate), then ask again"
                ),
                MAX_HOLD.as_millis() as u64,
            ));
        }
        // The oldest answered ones go first (ids sort by time).
        while entries.len() >= MAX_KEPT {
            let Some(old) = entries
                .iter()
                .find(|(_, e)| !e.waiting())
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            entries.remove(&old);
        }
        let id = ids::new_id("apr");
        let entry = Arc::new(Entry {
            command: command.to_string(),
            verdict,
            asked: Instant::now(),
            timeout,
            state: Mutex::new(State::Waiting),
            changed: watch::channel(0).0,
            withdraw,
        });
        entries.insert(id.clone(), entry.clone());
        Ok((id, entry))
    }

    fn get(&self, id: &str) -> Option<Arc<Entry>> {
        lock(&self.entries).get(id).cloned()
    }
}

/// The answer for a command still waiting for a person.
pub(crate) fn waiting_answer(id: &str, entry: &Entry) -> Handled {
    let waited = entry.asked.elapsed();
    let left = entry.timeout.saturating_sub(waited);
    let note = format!(
        "held for a person's decision: {} (asked {} s ago; {} s left before it counts as no \
         decision). Follow it with read_output on target.approval_id {id} (runtime.wait_ms \
         waits for the decision); terminate withdraws it. Nothing has run yet",
        entry.command,
        waited.as_secs(),
        left.as_secs()
    );
    Handled::about(
        Identity::approval(id),
        Ok(Outcome::Held(HeldCommand {
            running: true,
            waiting_for_approval: true,
            verdict: entry.verdict.clone(),
            note,
        })),
    )
}

fn unknown(id: &str) -> TermError {
    TermError::new(
        ErrorCode::NotFound,
        format!("no held command with id {id:?} (ids are kept for the last {MAX_KEPT} decided)"),
    )
    .with("target", json!("approval_id"))
}

impl Service {
    /// `read_output` on a held command: its answer once decided (waiting up to the request's
    /// wait for it), else that it still waits.
    pub(crate) async fn held_read(
        &self,
        req: &Request,
        id: &str,
        progress: &dyn Progress,
    ) -> Handled {
        let Some(entry) = self.held.get(id) else {
            return Handled::failed(unknown(id));
        };
        let wait = Duration::from_millis(req.runtime.wait_ms.unwrap_or(0));
        let mut rx = entry.changed.subscribe();
        wait_until(
            &mut rx,
            Instant::now() + wait,
            progress,
            "waiting for a person's decision",
            || !entry.waiting(),
        )
        .await;
        let mut state = lock(&entry.state);
        match std::mem::replace(&mut *state, State::Waiting) {
            State::Waiting => {
                drop(state);
                waiting_answer(id, &entry)
            }
            State::Answered(handled) => {
                *state = State::Delivered(handled.about.clone());
                handled
            }
            State::Delivered(about) => {
                *state = State::Delivered(about.clone());
                let ran_as = about
                    .session_id
                    .as_ref()
                    .map(|s| format!("session {s}"))
                    .or_else(|| about.terminal_id.as_ref().map(|t| format!("terminal {t}")));
                let message = match ran_as {
                    Some(what) => format!(
                        "the held command {id} was decided and its answer already given: it \
                         ran as {what}; read that"
                    ),
                    None => format!(
                        "the held command {id} was decided and its answer already given: it \
                         did not run"
                    ),
                };
                Handled::about(
                    about,
                    Err(TermError::new(ErrorCode::NotFound, message)
                        .with("target", json!("approval_id"))
                        .with("delivered", json!(true))),
                )
            }
        }
    }

    /// `terminate` on a held command: the question is taken back; the command never runs.
    pub(crate) async fn held_withdraw(&self, id: &str, progress: &dyn Progress) -> Handled {
        let Some(entry) = self.held.get(id) else {
            return Handled::failed(unknown(id));
        };
        entry.withdraw.cancel();
        let mut rx = entry.changed.subscribe();
        // The approvers take it back at once; the wait is a bound, not a pace.
        wait_until(
            &mut rx,
            Instant::now() + Duration::from_secs(10),
            progress,
            "withdrawing the question",
            || !entry.waiting(),
        )
        .await;
        let ran = match &*lock(&entry.state) {
            State::Waiting => None,
            State::Answered(h) => Some(h.result.is_ok()),
            State::Delivered(about) => {
                Some(about.session_id.is_some() || about.terminal_id.is_some())
            }
        };
        let note = match ran {
            None => "the question is being withdrawn; nothing has run",
            Some(false) => "withdrawn: the command did not run",
            Some(true) => {
                "it was approved before it could be withdrawn and runs: read_output on the \
                 approval_id gives its answer"
            }
        };
        Handled::about(
            Identity::approval(id),
            Ok(Outcome::Held(HeldCommand {
                running: false,
                waiting_for_approval: false,
                verdict: entry.verdict.clone(),
                note: note.to_string(),
            })),
        )
    }
}
