//! The contract service: one request in, one canonical payload out. Parses and validates
//! (contract), routes headless work to `headless` and interactive work to `adapters`, and turns
//! every outcome, good or bad, into a response or an error payload (docs/contract.md, "Answers").
//!
//! A request's way through: [`Service::handle`] parses it ([`Service::parse`]), judges it
//! (`approval`), and [`Service::dispatch`] hands it to the part that serves its action and
//! mode; the answer comes back up the same way and is shaped once, in `respond`.
//!
//! [`Service`] is one value whose methods are kept with the part they serve, each file an
//! `impl Service` of its own. Where a method lives:
//!
//! | file | methods |
//! | --- | --- |
//! | `mod.rs` | `new`, `handle`, `parse`, `dispatch`, `list`, `check_env`, `gui`, `start_gui`, `shutdown` |
//! | `headless.rs` | `headless_execute`, `headless_read`, `headless_terminate`, `session`, `session_items` |
//! | `interactive.rs` | `interactive_execute`, `interactive_read`, `interactive_terminate`, `op`, `agent_claim`, `terminal_items` |
//! | `strict.rs` | `handle_strict`, `strict_refusal`: the strict tool (`memory_terminal`), its argv checked, then run headless |
//! | `approval/` | `needs_approval`, `approve`, `approve_escape`, `approves_headless`; the chain of approvers in `approval/approvers.rs` |
//! | `held.rs` | `held_read`, `held_withdraw`: answers kept for a caller that gave up waiting |
//! | `cancel.rs` | `op_stopped_on_cancel`, `give_back`: what a cancelled call started is stopped |
//! | `idle.rs` | `idle_close`, `opened_for_one_command`: terminals closed when left idle |

pub mod approval;
mod cancel;
mod failures;
mod headless;
mod held;
mod idle;
mod interactive;
mod listing;
pub mod output;
mod strict;
mod terminal_answer;
mod unentered;
pub mod wait;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::adapters::ops::TermSummary;
use crate::adapters::{Adapters, LocalAdapter};
use crate::config::Config;
use crate::contract::result::{Approval, Verdict};
use crate::contract::{
    self, Action, Envelope, ErrorCode, Identity, Mode, Outcome, Request, TermError, response,
};
use crate::headless::{HeadlessConfig, HeadlessSessions};
use crate::ids;
use ahp_types::state::TerminalState;

pub use approval::{ElicitOutcome, Elicitor, NoElicitor};
pub use wait::{NoProgress, Progress};

/// A handler's answer: what it learned the request is about (the session it started, the
/// terminal it opened, the adapter that served it) and its result or error.
pub(crate) struct Handled {
    pub about: Identity,
    pub adapter: Option<crate::adapters::AdapterType>,
    pub result: Result<Outcome, TermError>,
}

impl Handled {
    pub fn about(about: Identity, result: Result<Outcome, TermError>) -> Handled {
        Handled {
            about,
            adapter: None,
            result,
        }
    }

    pub fn failed(e: TermError) -> Handled {
        Handled::about(Identity::default(), Err(e))
    }

    /// An answer `adapter` served (or failed to).
    pub fn served_by(
        adapter: crate::adapters::AdapterType,
        about: Identity,
        result: Result<Outcome, TermError>,
    ) -> Handled {
        Handled {
            about,
            adapter: Some(adapter),
            result,
        }
    }

    /// One answer for a session and a terminal named together: the first error wins.
    fn pair(first: Handled, second: Handled) -> Handled {
        let mut about = first.about;
        about.update(second.about);
        let result = match (first.result, second.result) {
            (Ok(a), Ok(b)) => Ok(Outcome::Pair(Box::new(a), Box::new(b))),
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        Handled {
            about,
            adapter: second.adapter.or(first.adapter),
            result,
        }
    }

    /// The payload: the envelope learned from the request and the handler, and the result.
    pub fn respond(self, mut env: Envelope) -> Value {
        env.identity.update(self.about);
        if let Some(a) = self.adapter {
            env.adapter = Some(a.as_str());
        }
        match self.result {
            Ok(result) => response::success(&env, result),
            Err(err) => {
                if err.code != ErrorCode::Internal {
                    tracing::info!(trace_id = %env.correlation.trace_id, code = err.code.as_str(), message = %err.message, "request failed");
                }
                response::failure(&env, &err)
            }
        }
    }
}

/// The verdict a result reports: the policy's decision and who approved, if anyone was asked.
pub(crate) fn verdict(d: &crate::policy::Decision, approval: Option<Approval>) -> Verdict {
    Verdict {
        authorization: d.authorization,
        warning: d.warning(),
        approval,
    }
}

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Largest request accepted, serialized.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// The contract service: what the MCP face calls, and all it may reach.
pub struct Service {
    cfg: Config,
    policy: crate::policy::Policy,
    /// When a person is asked (`approval`).
    approvals: crate::policy::Approvals,
    headless: HeadlessSessions,
    adapters: Adapters,
    /// The AHP session this server claims its terminals as (docs/terminal-core.md, "Commands and claims").
    session_uri: String,
    chat_uri: String,
    /// The agent's raw input not yet entered, per terminal: judged again with what follows.
    unentered: unentered::Unentered,
    /// Commands held for a person's decision past their call.
    held: held::Held,
    /// Terminals opened for one command, closed once idle.
    implicit: idle::Implicit,
    /// This service, for work that outlives a call (a held command's run).
    me: std::sync::Weak<Service>,
}

/// Text longer than this is judged off the runtime's workers: judging is linear but not
/// cheap, and a hostile line at the request limit (tens of thousands of commands joined)
/// takes a tenth of a second or more, which on the one worker of a small machine would hold
/// up every other caller's answer. At 2 KiB the worst shapes known (typed arrow keys and
/// Enter, `cd` after `cd`) take about 15 ms; ordinary commands stay well under it and are
/// judged in place.
const JUDGED_INLINE: usize = 2 * 1024;

impl Service {
    /// `judge` run on the policy, off the workers when `text` is long (`JUDGED_INLINE`).
    fn judge<T>(&self, text: &str, judge: impl FnOnce(&crate::policy::Policy) -> T) -> T {
        if text.len() > JUDGED_INLINE {
            crate::terminal::core::off_the_workers(|| judge(&self.policy))
        } else {
            judge(&self.policy)
        }
    }

    pub fn new(cfg: Config, loaded: crate::policy::Loaded) -> Arc<Service> {
        let crate::policy::Loaded { policy, approvals } = loaded;
        let headless = HeadlessSessions::new(HeadlessConfig {
            spool_dir: cfg.spool_dir.clone(),
            memory_limit: cfg.output_memory,
            places: cfg.places.clone(),
            max_retained: cfg.max_retained,
        });
        let mut core_cfg =
            crate::adapters::ops::CoreConfig::new(cfg.spool_dir.clone(), cfg.output_memory);
        core_cfg.default_shell = cfg.interactive_shell.clone();
        core_cfg.max_terminals = cfg.max_terminals;
        core_cfg.shared_places = Some(cfg.terminal_places.clone());
        core_cfg.scrollback_bytes = cfg.scrollback_bytes;
        core_cfg.skip_user_rc = cfg.no_user_rc;
        let local = LocalAdapter::start(core_cfg);
        if let (Ok(crate::adapters::AdapterType::ContainerBridge), Err(e)) = (
            crate::adapters::mode::resolve(None, &cfg.adapters),
            &cfg.adapters.bridge,
        ) {
            tracing::warn!(problems = %e, "interactive requests will be refused until the container bridge is configured");
        }
        let instance = ids::new_id("mcp");
        let adapters = Adapters::new(local, cfg.adapters.clone());
        Arc::new_cyclic(|me| Service {
            cfg,
            policy,
            approvals,
            headless,
            adapters,
            session_uri: format!("ahp-session:/{instance}"),
            chat_uri: format!("ahp-chat:/{instance}"),
            unentered: unentered::Unentered::default(),
            held: held::Held::default(),
            implicit: idle::Implicit::default(),
            me: me.clone(),
        })
    }

    /// Handle one raw request; always answers a payload, never panics on input.
    pub async fn handle(
        &self,
        raw: &Value,
        progress: &dyn Progress,
        elicitor: &dyn Elicitor,
    ) -> Value {
        let req = match self.parse(raw) {
            Ok(r) => r,
            Err(rej) => {
                tracing::info!(
                    trace_id = %rej.envelope.correlation.trace_id,
                    code = rej.error.code.as_str(),
                    message = %rej.error.message,
                    "request rejected"
                );
                return response::failure(&rej.envelope, &rej.error);
            }
        };
        tracing::debug!(
            trace_id = %req.correlation.trace_id,
            request_id = %req.correlation.request_id,
            action = req.action.as_str(),
            "request"
        );
        if req.action == Action::Execute
            && let Err(e) = self.check_env(&req)
        {
            return Handled::failed(e).respond(Envelope::from_request(&req));
        }
        self.dispatch(&req, progress, elicitor)
            .await
            .respond(Envelope::from_request(&req))
    }

    /// Parse with the request-size limit in front (the request's size as JSON).
    pub(crate) fn parse(&self, raw: &Value) -> Result<Request, Box<contract::Rejected>> {
        let size = serialized_len(raw);
        if size > MAX_REQUEST_BYTES {
            let envelope = Envelope {
                correlation: contract::validate::fresh_correlation(raw.get("correlation")),
                ..Envelope::default()
            };
            return Err(Box::new(contract::Rejected {
                envelope,
                error: TermError::payload(format!(
                    "the request is {size} bytes; the limit is {MAX_REQUEST_BYTES}"
                ))
                .with("limit", json!("request_bytes"))
                .with("max", json!(MAX_REQUEST_BYTES)),
            }));
        }
        contract::parse(raw, self.cfg.phase)
    }

    pub(crate) async fn dispatch(
        &self,
        req: &Request,
        progress: &dyn Progress,
        elicitor: &dyn Elicitor,
    ) -> Handled {
        let (session, terminal) = (&req.target.session_id, &req.target.terminal_id);
        if let Some(id) = terminal {
            self.implicit.used(id);
        }
        match req.action {
            Action::List => Handled::about(Identity::default(), self.list(req).await),
            Action::Execute => match req.mode {
                Some(Mode::Headless) => self.headless_execute(req, progress, elicitor).await,
                _ => self.interactive_execute(req, progress, elicitor).await,
            },
            // Both identities at once: the session's and the terminal's; a failed session
            // stops before the terminal is touched, as a single request would.
            Action::ReadOutput | Action::Terminate if req.target.approval_id.is_some() => {
                let id = req.target.approval_id.as_deref().unwrap_or_default();
                if req.action == Action::ReadOutput {
                    self.held_read(req, id, progress).await
                } else {
                    self.held_withdraw(id, progress).await
                }
            }
            Action::ReadOutput | Action::Terminate => {
                let reads = req.action == Action::ReadOutput;
                let headless = match session {
                    Some(id) if reads => Some(self.headless_read(req, id, progress).await),
                    Some(id) => Some(self.headless_terminate(id).await),
                    None => None,
                };
                let interactive = match terminal {
                    Some(_) if matches!(headless, Some(Err(_))) => None,
                    Some(id) if reads => Some(self.interactive_read(req, id, progress).await),
                    Some(id) => Some(self.interactive_terminate(req, id, progress).await),
                    None => None,
                };
                combine(headless, interactive)
            }
        }
    }

    /// Bytes of output one form of a default answer shows, across its streams: two fifths
    /// of the answer budget, so that the text and the structured form, each complete, fit
    /// it together with their other fields.
    pub fn output_budget(&self) -> usize {
        self.cfg.answer_budget * 2 / 5
    }

    /// Refuse a request environment that sets a name off the allow-list
    /// ([`crate::policy::env`]): only data passes, never what picks a program, a
    /// configuration or code to load.
    fn check_env(&self, req: &Request) -> Result<(), TermError> {
        let Some(refused) = self.refused_env(req) else {
            return Ok(());
        };
        let name = refused.name;
        let why = match refused.value {
            Some(why) => format!(
                "execution.env.{name} may not be set to that value: {why}; nothing was run. \
                 Send a plain name as its value, or set it in the command line ({name}=… \
                 command), where it is judged and shown"
            ),
            None => format!(
                "execution.env.{name} may not be set: a request's environment carries data only \
                 (details.allowed_env), never a variable that picks the program run, the \
                 configuration or rc files it reads or code it loads, since neither the policy \
                 nor a person approving sees it; nothing was run. Put it in the command line \
                 instead ({name}=… command), where it is judged and shown, or ask the operator \
                 to admit the name ({})",
                crate::policy::env::OPERATOR_SETTING
            ),
        };
        Err(TermError::payload(why)
            .with("field", json!(format!("execution.env.{name}")))
            .with("allowed_env", json!(self.policy.env.describe())))
    }

    /// The first variable of the request's environment that may not be set, if any.
    fn refused_env<'a>(&self, req: &'a Request) -> Option<crate::policy::env::Refused<'a>> {
        let vars = req.execution.env.iter().flatten();
        self.policy
            .env
            .refused(vars.map(|(k, v)| (k.as_str(), v.as_str())))
    }

    async fn list(&self, req: &Request) -> Result<Outcome, TermError> {
        let mut items = Vec::new();
        if req.mode != Some(Mode::Interactive) {
            items.extend(self.session_items());
        }
        if req.mode != Some(Mode::Headless) {
            items.extend(self.terminal_items().await);
        }
        let mut listing = listing::page(items, &req.listing)?;
        listing.sandbox = Some(sandbox_summary(&crate::sandbox::current().summary()));
        Ok(Outcome::List(listing))
    }

    /// The operator asked for the page (`--gui`): the host comes up with the server.
    pub fn gui(&self) -> bool {
        self.cfg.adapters.gui
    }

    /// Open the page's sign-in link in a browser once the host is up (`--open`).
    pub fn opens_page(&self) -> bool {
        self.cfg.open_page
    }

    /// Launch the page's host now; its one-time sign-in link.
    pub async fn start_gui(&self) -> Result<Option<String>, crate::adapters::AdapterError> {
        self.adapters.start_gui().await
    }

    /// Every terminal across the adapters in use, with the adapter serving it.
    pub async fn terminals(&self) -> Vec<(crate::adapters::AdapterType, TermSummary)> {
        self.adapters.list().await
    }

    /// A terminal's AHP state (`None`: no such terminal).
    pub async fn terminal_state(
        &self,
        terminal_id: &str,
    ) -> Result<Option<TerminalState>, crate::adapters::AdapterError> {
        let adapter = self.adapters.adapter_for_terminal(terminal_id).await?;
        Ok(adapter.terminal_state(terminal_id).await)
    }

    /// Every action any adapter's terminals dispatch from now on (resource updates).
    pub fn follow(&self) -> tokio::sync::broadcast::Receiver<crate::adapters::Change> {
        self.adapters.follow()
    }

    /// Kill everything this server started.
    pub async fn shutdown(&self) {
        self.close_session().await;
        crate::process::shutdown().await;
    }

    /// Stop what this service started (its commands and terminals), leaving the rest of the
    /// process alone: one HTTP session ending must not touch another's.
    pub async fn close_session(&self) {
        self.headless.shutdown().await;
        self.adapters.shutdown().await;
    }
}

/// Judge a command and log the decision; a block is the error to answer.
pub(crate) fn authorize(
    req: &Request,
    decision: crate::policy::Decision,
    command: &str,
) -> Result<crate::policy::Decision, TermError> {
    let d = decision.deciding();
    tracing::info!(
        trace_id = %req.correlation.trace_id,
        request_id = %req.correlation.request_id,
        authorization = decision.authorization.as_str(),
        rule = d.map(|f| f.rule).unwrap_or("-"),
        %command,
        "policy decision"
    );
    if decision.authorization != crate::policy::Authorization::Blocked {
        return Ok(decision);
    }
    let f = d.cloned().unwrap_or(crate::policy::rules::Finding {
        severity: crate::policy::rules::Severity::Block,
        rule: "blocked",
        message: "blocked".into(),
        command: command.to_string(),
    });
    Err(TermError::new(
        ErrorCode::BlockedDestructive,
        format!("blocked: {} ({})", f.message, f.command),
    )
    .with("authorization", json!("blocked"))
    .with("rule", json!(f.rule))
    .with("command", json!(f.command))
    .with("reason", json!(f.message))
    .with("safety_hint", json!(crate::policy::safety_hint(f.rule))))
}

/// The answer for a session, a terminal, or both (validation guarantees at least one). A
/// failed session read stops before the terminal is asked, as a single request would.
fn combine(headless: Option<Result<Outcome, TermError>>, interactive: Option<Handled>) -> Handled {
    let headless = headless.map(|r| Handled::about(Identity::default(), r));
    match (headless, interactive) {
        (Some(h), Some(i)) => Handled::pair(h, i),
        (Some(one), None) | (None, Some(one)) => one,
        (None, None) => Handled::failed(TermError::payload(
            "name the session (target.session_id) or the terminal (target.terminal_id)",
        )),
    }
}

/// How many bytes `v` takes as compact JSON, counted without building the text (every
/// request is measured against [`MAX_REQUEST_BYTES`]).
fn serialized_len(v: &Value) -> usize {
    /// A writer that keeps nothing but the count.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, v) {
        Ok(()) => count.0,
        Err(_) => usize::MAX,
    }
}

/// The sandbox's own summary as `list` answers it.
fn sandbox_summary(s: &crate::sandbox::Summary) -> crate::contract::result::SandboxSummary {
    crate::contract::result::SandboxSummary {
        mode: s.mode.clone(),
        network: s.network.clone(),
        workspaces: s.workspaces.clone(),
        mechanism: s.mechanism.clone(),
        available: s.available,
        reason: s.reason.clone(),
    }
}

/// What the sandbox refused, as an answer says it.
fn sandbox_denial(d: crate::sandbox::denial::Denial) -> crate::contract::result::SandboxDenial {
    crate::contract::result::SandboxDenial {
        kind: d.kind,
        target: d.target,
        message: d.message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_measured_as_its_json_text() {
        let v = json!({"action": "execute", "execution": {"input": "é\"\n\u{1}𝄞", "env": {"A": "b"}},
            "n": [1, -2.5, null, true]});
        assert_eq!(serialized_len(&v), serde_json::to_vec(&v).unwrap().len());
        assert_eq!(serialized_len(&json!(null)), 4);
    }
}
