//! Approvals asked of the MCP client's user. Two protocols ask differently:
//!
//! - up to 2025-11-25, the server sends `elicitation/create` to the client in the middle
//!   of the tool call and waits for the answer ([`PeerElicitor`]);
//! - from 2026-07-28 there is no request from server to client: the tool call answers
//!   `input_required`, carrying the question and an opaque `requestState`, and the client
//!   calls again with the same arguments, the user's answer (`inputResponses`) and that
//!   state ([`RoundElicitor`], [`Rounds`]).
//!
//! An approval precedes everything a call starts (the command, the terminal it would open),
//! so a round that ends in `input_required` has started nothing, and the call that comes
//! back runs the whole path again with the answer at hand.
//!
//! The answer is trusted only for the call it was asked for: the state is a random handle
//! kept here, used once, expiring with the approval's timeout, and bound to a digest of the
//! arguments. An agent that changes the command between the two calls, or a state this
//! server never issued, gets the question asked again, never the old answer.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, InputResponses,
};
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::ids;
use crate::locks::lock;
use crate::service::{BoxFuture, ElicitOutcome, Elicitor};

/// The key of the approval question in `inputRequests` and of its answer in
/// `inputResponses`.
pub const APPROVAL_KEY: &str = "approval";
/// Prefix of the handles given out as `requestState`.
const ROUND_PREFIX: &str = "round";
/// Questions waiting for their second call, at most; beyond it the oldest is forgotten (its
/// call, if it comes back, is asked again).
const MAX_PENDING: usize = 256;

/// The approval form: approve or not, and why.
fn form(message: String) -> Option<ElicitRequestParams> {
    let schema = ElicitationSchema::builder()
        .required_bool("approve")
        .optional_string("reason")
        .build()
        .map_err(|e| tracing::warn!(error = %e, "cannot build the approval form"))
        .ok()?;
    Some(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    })
}

/// What the user answered, as the approval chain takes it.
fn outcome_of(r: ElicitResult) -> ElicitOutcome {
    let content = r.content.unwrap_or_default();
    let reason = content
        .get("reason")
        .and_then(Value::as_str)
        .map(String::from);
    match r.action {
        ElicitationAction::Accept
            if content.get("approve").and_then(Value::as_bool) == Some(true) =>
        {
            ElicitOutcome::Approved
        }
        ElicitationAction::Accept => ElicitOutcome::Declined(reason),
        ElicitationAction::Decline => {
            ElicitOutcome::Declined(reason.or(Some("declined in the client".into())))
        }
        _ => ElicitOutcome::Declined(reason.or(Some("cancelled in the client".into()))),
    }
}

/// Whether a client that declared `elicitation` shows forms, which an approval is: it
/// said `form`, or said neither mode (the form-only declaration of earlier versions). A
/// client that shows only URLs is not asked, and the next approver decides instead of a
/// question it cannot show running into its timeout.
pub fn asks_forms(declared: &ElicitationCapability) -> bool {
    declared.form.is_some() || declared.url.is_none()
}

/// Up to 2025-11-25: `elicitation/create` to the client, answered within the call.
pub struct PeerElicitor {
    pub peer: Peer<RoleServer>,
}

impl Elicitor for PeerElicitor {
    fn supported(&self) -> bool {
        self.peer.peer_info().is_some_and(|info| {
            info.capabilities
                .elicitation
                .as_ref()
                .is_some_and(asks_forms)
        })
    }

    fn ask(&self, message: String, timeout: Duration) -> BoxFuture<'_, ElicitOutcome> {
        Box::pin(async move {
            let Some(params) = form(message) else {
                return ElicitOutcome::NoAnswer;
            };
            match self
                .peer
                .create_elicitation_with_timeout(params, Some(timeout))
                .await
            {
                Ok(r) => outcome_of(r),
                Err(e) => {
                    tracing::info!(error = %e, "no answer to the approval request");
                    ElicitOutcome::NoAnswer
                }
            }
        })
    }
    /// The client's connection outlives the call: a question held past it is still asked.
    fn detached(&self) -> Option<std::sync::Arc<dyn Elicitor>> {
        Some(std::sync::Arc::new(PeerElicitor {
            peer: self.peer.clone(),
        }))
    }
}

/// From 2026-07-28: the answer if this call brings one, else the question kept for an
/// `input_required` answer.
pub struct RoundElicitor {
    /// The client declared form elicitation in this request's `_meta`.
    supported: bool,
    answer: Mutex<Option<ElicitResult>>,
    asked: Mutex<Option<(String, Duration)>>,
}

impl RoundElicitor {
    pub fn new(supported: bool, answer: Option<ElicitResult>) -> RoundElicitor {
        RoundElicitor {
            supported,
            answer: Mutex::new(answer),
            asked: Mutex::new(None),
        }
    }

    /// The question the call could not answer without the user, with its timeout.
    pub fn asked(&self) -> Option<(String, Duration)> {
        lock(&self.asked).take()
    }
}

impl Elicitor for RoundElicitor {
    fn supported(&self) -> bool {
        self.supported
    }

    fn ask(&self, message: String, timeout: Duration) -> BoxFuture<'_, ElicitOutcome> {
        let outcome = match lock(&self.answer).take() {
            Some(answer) => outcome_of(answer),
            None => {
                *lock(&self.asked) = Some((message, timeout));
                ElicitOutcome::NoAnswer
            }
        };
        Box::pin(std::future::ready(outcome))
    }
}

/// One question waiting for its second call.
struct Pending {
    state: String,
    arguments: [u8; 32],
    expires: Instant,
}

/// The questions given out as `input_required` and not yet answered.
#[derive(Default)]
pub struct Rounds {
    pending: Mutex<VecDeque<Pending>>,
}

impl Rounds {
    /// The `input_required` answer asking `message` about the call with `arguments`; its
    /// state is good until `timeout` from now.
    pub fn ask(
        &self,
        arguments: &Value,
        message: String,
        timeout: Duration,
    ) -> Option<InputRequiredResult> {
        let params = form(message)?;
        let state = ids::new_id(ROUND_PREFIX);
        let mut pending = lock(&self.pending);
        let now = Instant::now();
        pending.retain(|p| p.expires > now);
        if pending.len() >= MAX_PENDING {
            pending.pop_front();
        }
        pending.push_back(Pending {
            state: state.clone(),
            arguments: digest(arguments),
            expires: now + timeout,
        });
        let requests: InputRequests = [(
            APPROVAL_KEY.to_string(),
            InputRequest::Elicitation(ElicitRequest::new(params)),
        )]
        .into();
        Some(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// The user's answer a second call brings, if `state` is one this server gave out for
    /// these very `arguments`, still in time and not used before; the state is used up.
    pub fn answer(
        &self,
        state: Option<&str>,
        arguments: &Value,
        responses: Option<&InputResponses>,
    ) -> Option<ElicitResult> {
        let state = state?;
        let found = {
            let mut pending = lock(&self.pending);
            let i = pending.iter().position(|p| p.state == state)?;
            pending.remove(i)?
        };
        if found.expires <= Instant::now() || found.arguments != digest(arguments) {
            tracing::info!("an approval answer for another call or out of time: asked again");
            return None;
        }
        let answer = responses?.get(APPROVAL_KEY)?.clone();
        serde_json::from_value(answer)
            .map_err(|e| tracing::info!(error = %e, "a malformed approval answer: asked again"))
            .ok()
    }
}

/// The arguments as they would be sent again: keys in order (serde_json's map is sorted).
fn digest(arguments: &Value) -> [u8; 32] {
    let text = serde_json::to_vec(arguments).unwrap_or_default();
    Sha256::digest(text).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(command: &str) -> Value {
        json!({"action": "execute", "execution": {"command": command}})
    }

    fn responses(approve: bool) -> InputResponses {
        [(
            APPROVAL_KEY.to_string(),
            json!({"action": "accept", "content": {"approve": approve}}),
        )]
        .into()
    }

    /// Whether a second call with `state`, `arguments` and an approval brings an answer.
    fn answered(rounds: &Rounds, state: &str, arguments: &Value) -> bool {
        rounds
            .answer(Some(state), arguments, Some(&responses(true)))
            .is_some()
    }

    fn state_of(r: &InputRequiredResult) -> String {
        r.request_state.clone().expect("a state")
    }

    #[test]
    fn an_answer_counts_once_for_the_same_arguments_in_time() {
        let rounds = Rounds::default();
        let a = args("rm -rf build");
        let r = rounds
            .ask(&a, "ok?".into(), Duration::from_secs(60))
            .unwrap();
        assert!(matches!(
            r.input_requests.as_ref().and_then(|q| q.get(APPROVAL_KEY)),
            Some(InputRequest::Elicitation(_))
        ));
        let s = state_of(&r);
        let got = rounds.answer(Some(&s), &a, Some(&responses(true)));
        assert!(matches!(got.map(outcome_of), Some(ElicitOutcome::Approved)));
        // Used up: the same state again brings nothing.
        assert!(!answered(&rounds, &s, &a));
    }

    #[test]
    fn other_arguments_a_stranger_state_or_a_late_answer_bring_nothing() {
        let rounds = Rounds::default();
        let a = args("make");
        let s = state_of(
            &rounds
                .ask(&a, "ok?".into(), Duration::from_secs(60))
                .unwrap(),
        );
        assert!(!answered(&rounds, &s, &args("make install")));
        // The mismatch used the state up too: no second try with other arguments.
        assert!(!answered(&rounds, &s, &a));
        assert!(!answered(&rounds, "round_forged", &a));
        assert!(rounds.answer(None, &a, Some(&responses(true))).is_none());
        let late = state_of(&rounds.ask(&a, "ok?".into(), Duration::ZERO).unwrap());
        assert!(!answered(&rounds, &late, &a));
        let s = state_of(
            &rounds
                .ask(&a, "ok?".into(), Duration::from_secs(60))
                .unwrap(),
        );
        let bad: InputResponses = [(APPROVAL_KEY.to_string(), json!("yes"))].into();
        assert!(
            rounds.answer(Some(&s), &a, Some(&bad)).is_none(),
            "malformed"
        );
    }

    #[test]
    fn pending_questions_are_bounded() {
        let rounds = Rounds::default();
        let a = args("x");
        let first = state_of(&rounds.ask(&a, "q".into(), Duration::from_secs(60)).unwrap());
        for _ in 0..MAX_PENDING {
            rounds.ask(&a, "q".into(), Duration::from_secs(60));
        }
        assert_eq!(lock(&rounds.pending).len(), MAX_PENDING);
        assert!(!answered(&rounds, &first, &a));
    }

    #[test]
    fn the_round_elicitor_answers_from_the_call_or_keeps_the_question() {
        let e = RoundElicitor::new(true, None);
        let outcome =
            futures_util::FutureExt::now_or_never(e.ask("q?".into(), Duration::from_secs(5)));
        assert!(matches!(outcome, Some(ElicitOutcome::NoAnswer)));
        assert_eq!(e.asked().map(|(m, _)| m), Some("q?".to_string()));
        let answer: ElicitResult = serde_json::from_value(
            json!({"action": "accept", "content": {"approve": false, "reason": "not today"}}),
        )
        .unwrap();
        let e = RoundElicitor::new(true, Some(answer));
        let outcome =
            futures_util::FutureExt::now_or_never(e.ask("q?".into(), Duration::from_secs(5)));
        assert!(matches!(outcome, Some(ElicitOutcome::Declined(Some(r))) if r == "not today"));
        assert!(e.asked().is_none());
    }
}
