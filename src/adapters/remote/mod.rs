//! The `bundled` and `container_bridge` adapters: the terminal core in an
//! `interactive-terminal` host, reached over AHP with Microsoft's `ahp` client on the
//! `ahp-ws` transport. Terminal operations travel as `pm/terminal` requests, each with a
//! request id the host runs at most once, so a request re-sent after a dropped connection
//! neither runs twice nor loses its answer; the action stream catches up by server sequence
//! (`reconnect`), and cursor reads come from the host's own stream, byte for byte.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ahp::{Client, ClientError};
use ahp_types::ActionEnvelope;
use ahp_types::state::{SnapshotState, TerminalState};
use serde_json::{Value, json};
use tokio::sync::broadcast;

mod failures;
mod link;

use failures::{host_is_down, where_on_the_host};

use super::discovery::Launched;
use super::mode::BridgeSpec;
use super::{Adapter, AdapterType, BoxFut, bounded};
use crate::adapters::error::{AdapterError, Failure};
use crate::ids;
use crate::terminal::ops::{
    ApprovalAnswer, ApprovalArgs, OpError, OpErrorKind, TermRequest, TermResponse,
};

/// Extra time a request may take beyond its own wait.
const REQUEST_MARGIN: Duration = Duration::from_secs(10);
/// After a drop, how long a request keeps trying to reconnect before it gives up.
const RECOVER_WINDOW: Duration = Duration::from_secs(8);
/// First pause between reconnect attempts; it doubles up to the cap.
const BACKOFF_START: Duration = Duration::from_millis(100);
const BACKOFF_CAP: Duration = Duration::from_millis(1_000);
/// Buffered host actions for followers (MCP resource updates).
const EVENT_BUFFER: usize = 4096;
/// Buffered cut-offs (ended connections) for followers.
const CUT_OFF_BUFFER: usize = 16;
/// JSON-RPC code the `ahp` client gives pending requests when its transport goes away.
const TRANSPORT_CLOSED: i32 = -32000;
/// Connection attempts that find nothing listening before a request says the host is down.
const HOST_DOWN_ATTEMPTS: u32 = 2;
/// How long a launched host gets to stop on its own before it is killed.
const HOST_STOP_GRACE: Duration = Duration::from_secs(3);
/// Longest a question's withdrawal waits for the host: nobody waits for its answer.
const WITHDRAW_BUDGET: Duration = Duration::from_secs(2);

/// Where the host is.
pub enum Target {
    Bundled {
        configured: Option<String>,
        port: u16,
        spawn_timeout: Duration,
        keep_host: bool,
    },
    Bridge(BridgeSpec),
}

/// The live AHP client to the host, and whether its event stream still runs.
struct Connection {
    client: Client,
    alive: Arc<AtomicBool>,
}

pub struct RemoteAdapter {
    me: std::sync::Weak<RemoteAdapter>,
    kind: AdapterType,
    target: Target,
    client_id: String,
    /// Presented with `client_id` at every handshake (see `identity`).
    client_secret: String,
    runtime_session_id: String,
    trace: bool,
    request_timeout: Duration,
    connect_timeout: Duration,
    conn: tokio::sync::Mutex<Option<Connection>>,
    launched: tokio::sync::Mutex<Option<Launched>>,
    events: broadcast::Sender<Arc<ActionEnvelope>>,
    /// The followed terminals' URIs each time the connection to the host ends.
    cut_offs: broadcast::Sender<Vec<String>>,
    mirror: Arc<Mutex<HashMap<String, TerminalState>>>,
    last_seq: Arc<AtomicU64>,
    /// A connection was up once: failing to reach the host now means the bridge dropped.
    ever_connected: AtomicBool,
    instance: Mutex<Option<String>>,
    /// Terminals seen on the current host instance.
    known: Mutex<std::collections::HashSet<String>>,
    /// Terminals of host instances that are gone (the host restarted).
    lost: Mutex<std::collections::HashSet<String>>,
}

use crate::locks::lock;

/// How long an operation may take on the host.
fn wait_of(req: &TermRequest) -> Duration {
    let ms = match req {
        TermRequest::Open(a) => a.wait_ms,
        TermRequest::Run(a) => a.wait_ms,
        TermRequest::Input(a) => a.wait_ms,
        TermRequest::Read(a) => a.wait_ms,
        _ => 0,
    };
    Duration::from_millis(ms)
}

impl RemoteAdapter {
    pub fn new(kind: AdapterType, target: Target, trace: bool) -> Arc<RemoteAdapter> {
        let (connect_timeout, request_timeout) = match &target {
            Target::Bridge(s) => (
                Duration::from_millis(s.connect_timeout_ms),
                Duration::from_millis(s.request_timeout_ms),
            ),
            Target::Bundled { spawn_timeout, .. } => (*spawn_timeout, Duration::from_secs(30)),
        };
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        Arc::new_cyclic(|me| RemoteAdapter {
            me: me.clone(),
            kind,
            target,
            client_id: ids::new_id("mcp-client"),
            client_secret: crate::terminal::shell::new_nonce(),
            runtime_session_id: ids::new_id("rts"),
            trace,
            request_timeout,
            connect_timeout,
            conn: tokio::sync::Mutex::new(None),
            launched: tokio::sync::Mutex::new(None),
            events,
            cut_offs: broadcast::channel(CUT_OFF_BUFFER).0,
            mirror: Arc::new(Mutex::new(HashMap::new())),
            last_seq: Arc::new(AtomicU64::new(0)),
            ever_connected: AtomicBool::new(false),
            instance: Mutex::new(None),
            known: Mutex::new(Default::default()),
            lost: Mutex::new(Default::default()),
        })
    }

    /// What binds this adapter's client id to it on the host: a secret only it knows, so
    /// no other program with the token can act as this client (and on its terminals).
    fn identity(&self) -> Option<serde_json::Map<String, Value>> {
        json!({"interactiveTerminal": {"clientSecret": self.client_secret}})
            .as_object()
            .cloned()
    }

    fn telemetry(&self, what: &str, detail: Value) {
        if self.trace {
            tracing::info!(adapter = self.kind.as_str(), client = %self.client_id, %detail, "bridge: {what}");
        } else {
            tracing::debug!(adapter = self.kind.as_str(), %detail, "bridge: {what}");
        }
    }

    /// The one-time sign-in link of the host this adapter launched (from its ready line).
    pub async fn login_link(&self) -> Option<String> {
        self.launched
            .lock()
            .await
            .as_ref()
            .and_then(|l| l.ready["login"].as_str().map(String::from))
    }

    /// Run `work` on this adapter as a task of its own, answered within `timeout` (at least
    /// the host's request timeout).
    async fn on_task<T, F>(
        &self,
        timeout: Duration,
        work: impl FnOnce(Arc<Self>) -> F,
    ) -> Result<T, AdapterError>
    where
        T: Send + 'static,
        F: std::future::Future<Output = Result<T, AdapterError>> + Send + 'static,
    {
        let this = self
            .me
            .upgrade()
            .ok_or_else(|| AdapterError::internal("adapter is gone"))?;
        bounded(
            work(this),
            timeout.max(self.request_timeout),
            "the terminal host did not answer in time",
        )
        .await?
    }

    /// One operation, exactly once on the host, surviving dropped connections.
    async fn request(
        self: Arc<Self>,
        mut req: TermRequest,
        trace_id: String,
        contract_request: Option<String>,
    ) -> Result<TermResponse, AdapterError> {
        let paths = match &self.target {
            Target::Bridge(s) => Some(&s.path_map),
            Target::Bundled { .. } => None,
        };
        let asked_cwd = match &req {
            TermRequest::Open(a) => a.cwd.clone(),
            _ => None,
        };
        if let Some(m) = paths {
            m.request_to_host(&mut req);
        }
        // The contract's request id (stable when a client retries with it) and the kind of
        // operation: a retry is the same operation, which the host runs once.
        let request_id = match contract_request {
            Some(r) => format!("{r}/{}", req.op_name()),
            None => ids::new_id(ids::REQUEST),
        };
        let exchange = Exchange {
            method: "pm/terminal",
            may_run: req.may_run_something(),
            budget: self.request_timeout.max(wait_of(&req) + REQUEST_MARGIN),
            opens: matches!(req, TermRequest::Open(_)),
            same_host: false,
        };
        let params =
            json!({"request_id": request_id, "trace_id": trace_of(trace_id), "request": req});
        let v = self.exchange(&exchange, params, &request_id).await?;
        if let Some(ok) = v.get("ok") {
            let mut r: TermResponse =
                serde_json::from_value(ok.clone()).map_err(AdapterError::internal)?;
            if let Some(m) = paths {
                m.response_to_container(&mut r);
            }
            let mut known = lock(&self.known);
            known.extend(r.terminal().map(|t| t.terminal_id.clone()));
            if let TermResponse::List { terminals } = &r {
                known.extend(terminals.iter().map(|t| t.terminal_id.clone()));
            }
            return Ok(r);
        }
        if let Some(err) = v.get("err") {
            let mut e: OpError =
                serde_json::from_value(err.clone()).map_err(AdapterError::internal)?;
            if let Some(id) = req.terminal_id()
                && e.kind == OpErrorKind::NotFound
                && lock(&self.lost).contains(id)
            {
                e = OpError::new(
                    OpErrorKind::Gone,
                    format!(
                        "the terminal host restarted; terminal {id} did not survive it (open a new terminal and run the command again)"
                    ),
                );
            }
            if let (Some(m), TermRequest::Open(a)) = (paths, &req)
                && e.kind == OpErrorKind::Invalid
                && e.message.starts_with("working directory")
            {
                e.message =
                    where_on_the_host(&e.message, asked_cwd.as_deref(), a.cwd.as_deref(), m);
                if asked_cwd.is_none() && !m.is_empty() {
                    // No directory was asked for: the map chose it.
                    e.kind = OpErrorKind::Setup;
                    e.message.push_str(
                        " (where PM_TERM_PATH_MAP puts the server's own directory; no directory was asked for)",
                    );
                }
            }
            return Err(AdapterError::Op(e));
        }
        Err(AdapterError::internal(format!(
            "unexpected answer from the host: {v}"
        )))
    }

    /// Ask the people on the host's page to decide on a command (`pm/approval/ask`).
    async fn ask_page(
        self: Arc<Self>,
        question: ApprovalArgs,
    ) -> Result<ApprovalAnswer, AdapterError> {
        let request_id = format!("{}/approval", question.request_id);
        let exchange = Exchange {
            method: "pm/approval/ask",
            may_run: false,
            budget: self
                .request_timeout
                .max(Duration::from_millis(question.timeout_ms) + REQUEST_MARGIN),
            opens: false,
            same_host: true,
        };
        let trace_id = trace_of(question.trace_id.clone());
        let params = json!({"request_id": request_id, "trace_id": trace_id, "approval": question});
        let v = self.exchange(&exchange, params, &request_id).await?;
        match v.get("ok") {
            Some(ok) => serde_json::from_value(ok.clone()).map_err(AdapterError::internal),
            None => Err(AdapterError::internal(format!(
                "unexpected answer from the host: {v}"
            ))),
        }
    }

    /// `pm/approval/withdraw`: the question asked for `request_id` is taken off the page.
    async fn withdraw_question(self: Arc<Self>, request_id: String) -> Result<(), AdapterError> {
        let exchange = Exchange {
            method: "pm/approval/withdraw",
            may_run: false,
            budget: WITHDRAW_BUDGET,
            opens: false,
            same_host: true,
        };
        let params = json!({"request_id": request_id});
        self.exchange(&exchange, params, &request_id)
            .await
            .map(drop)
    }

    /// Send `params` (carrying `request_id`) until the host answers, reconnecting after a
    /// drop and re-sending the same id, which the host answers once.
    async fn exchange(
        &self,
        exchange: &Exchange,
        params: Value,
        request_id: &str,
    ) -> Result<Value, AdapterError> {
        let deadline = Instant::now() + exchange.budget;
        let mut dropped_at: Option<Instant> = None;
        let mut backoff = BACKOFF_START;
        let mut refused = 0;
        let mut asked_on: Option<String> = None;
        loop {
            let client = match self.client().await {
                Ok(c) => c,
                // Never connected: the failure says why (unreachable, refused, bad config).
                Err(e) if !self.ever_connected.load(Ordering::SeqCst) => return Err(e),
                Err(e) => {
                    let since = dropped_at.get_or_insert_with(Instant::now);
                    // Nothing listens where the host was: it is down, not slow. Say so now
                    // (after one quick retry), rather than after the whole recovery window.
                    if e.facts().and_then(|f| f.host_down) == Some(true) {
                        refused += 1;
                        if refused >= HOST_DOWN_ATTEMPTS {
                            return Err(host_is_down(exchange.opens, request_id, &e));
                        }
                    }
                    if since.elapsed() >= RECOVER_WINDOW || Instant::now() >= deadline {
                        return Err(AdapterError::new(
                            Failure::Disconnected,
                            "the connection to the terminal host dropped and could not be re-established",
                        )
                        .with(|f| {
                            f.request_id = Some(request_id.to_string());
                            f.last_error = Some(e.to_string());
                        }));
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(BACKOFF_CAP);
                    continue;
                }
            };
            let instance = lock(&self.instance).clone();
            if exchange.same_host
                && let Some(first) = &asked_on
                && *first != instance.clone().unwrap_or_default()
            {
                // The host that held the request restarted: what it knew (a question shown
                // on its page) died with it, and nobody is on the new one's page yet.
                return Err(AdapterError::new(
                    Failure::Disconnected,
                    "the terminal host restarted while the request was pending; what it held is gone",
                )
                .with(|f| f.request_id = Some(request_id.to_string())));
            }
            asked_on.get_or_insert_with(|| instance.unwrap_or_default());
            self.telemetry(
                "request",
                json!({"request_id": request_id, "method": exchange.method}),
            );
            let sent = tokio::time::timeout_at(
                deadline.into(),
                client.request::<_, Value>(exchange.method, params.clone()),
            )
            .await;
            match sent {
                Err(_) => {
                    return Err(AdapterError::new(
                        Failure::Timeout,
                        "the terminal host did not answer in time",
                    )
                    .with(|f| {
                        f.timeout_ms = Some(exchange.budget.as_millis() as u64);
                        f.may_have_run = Some(exchange.may_run);
                    }));
                }
                Ok(Ok(v)) => {
                    self.telemetry(
                        "response",
                        json!({"request_id": request_id, "ok": v.get("ok").is_some()}),
                    );
                    return Ok(v);
                }
                Ok(Err(ClientError::Rpc(e))) if e.code != TRANSPORT_CLOSED => {
                    return Err(AdapterError::internal(format!(
                        "host error {}: {}",
                        e.code, e.message
                    )));
                }
                Ok(Err(e)) => {
                    // The connection went away under the request: reconnect and ask again
                    // with the same id; the host answers it once.
                    self.telemetry(
                        "dropped",
                        json!({"request_id": request_id, "error": e.to_string()}),
                    );
                    self.drop_connection().await;
                    dropped_at.get_or_insert_with(Instant::now);
                }
            }
        }
    }
}

/// What one exchange with the host is: its method, whether it may run something (so an
/// unanswered one may have), how long it may take, whether it opens a terminal (a host
/// found down then means no new terminal, not a lost one), and whether only the host
/// instance first asked can answer it (a question on a page dies with its host).
struct Exchange {
    method: &'static str,
    may_run: bool,
    budget: Duration,
    opens: bool,
    same_host: bool,
}

/// The caller's trace id, or a fresh one.
fn trace_of(trace_id: String) -> String {
    if trace_id.is_empty() {
        ids::new_id(ids::TRACE)
    } else {
        trace_id
    }
}

/// Fold one host action into the mirror and pass it on.
fn absorb(
    mirror: &Mutex<HashMap<String, TerminalState>>,
    last: &AtomicU64,
    tx: &broadcast::Sender<Arc<ActionEnvelope>>,
    env: Arc<ActionEnvelope>,
) {
    last.fetch_max(env.server_seq, Ordering::SeqCst);
    // An action the host did not apply (it says why) changes nothing here either.
    if env.rejection_reason.is_none() {
        let mut mirror = lock(mirror);
        if let Some(state) = mirror.get_mut(&env.channel) {
            use ahp::reducers::ReduceOutcome;
            match ahp::reducers::apply_action_to_terminal(state, &env.action) {
                ReduceOutcome::Applied | ReduceOutcome::NoOp => {}
                refused => {
                    // The mirror no longer follows the host's state: dropped, so the next
                    // read takes a fresh snapshot instead of answering from it.
                    tracing::warn!(channel = %env.channel, outcome = ?refused,
                        "the host's action does not apply to the mirror; it is snapshotted again");
                    mirror.remove(&env.channel);
                }
            }
        }
    }
    let _ = tx.send(env);
}

impl Adapter for RemoteAdapter {
    fn adapter_type(&self) -> AdapterType {
        self.kind
    }

    fn connect(&self) -> BoxFut<'_, Result<(), AdapterError>> {
        Box::pin(async move {
            match self.client().await {
                Ok(_) => Ok(()),
                // Connected before: the request itself rides out the drop (and says
                // DISCONNECTED if the host does not come back in time).
                Err(_) if self.ever_connected.load(Ordering::SeqCst) => Ok(()),
                Err(e) => Err(e),
            }
        })
    }

    fn call<'a>(
        &'a self,
        req: TermRequest,
        trace_id: &'a str,
        request_id: Option<&'a str>,
        timeout: Duration,
    ) -> BoxFut<'a, Result<TermResponse, AdapterError>> {
        let trace_id = trace_id.to_string();
        let request_id = request_id.map(String::from);
        Box::pin(self.on_task(timeout, |this| this.request(req, trace_id, request_id)))
    }

    fn ask(
        &self,
        question: ApprovalArgs,
        timeout: Duration,
    ) -> BoxFut<'_, Result<ApprovalAnswer, AdapterError>> {
        Box::pin(self.on_task(timeout, |this| this.ask_page(question)))
    }

    fn withdraw(&self, request_id: &str) -> BoxFut<'_, ()> {
        let request_id = request_id.to_string();
        Box::pin(async move {
            let withdrawn = self
                .on_task(WITHDRAW_BUDGET, |this| this.withdraw_question(request_id))
                .await;
            if let Err(e) = withdrawn {
                tracing::debug!(error = %e, "a cancelled call's question stays on the page until it expires");
            }
        })
    }

    fn close(&self) -> BoxFut<'_, ()> {
        Box::pin(async move {
            self.drop_connection().await;
            if let Target::Bundled {
                keep_host: false, ..
            } = &self.target
                && let Some(mut l) = self.launched.lock().await.take()
            {
                if let Some(pid) = l.child.id() {
                    crate::os::ask_to_end(pid as i32);
                }
                if tokio::time::timeout(HOST_STOP_GRACE, l.child.wait())
                    .await
                    .is_err()
                {
                    let _ = l.child.kill().await;
                }
            }
        })
    }

    fn terminal_state(&self, terminal_id: &str) -> BoxFut<'_, Option<TerminalState>> {
        let uri = ids::terminal_uri(terminal_id);
        Box::pin(async move {
            if let Some(s) = lock(&self.mirror).get(&uri) {
                return Some(s.clone());
            }
            let client = self.client().await.ok()?;
            let (snap, _) = client.subscribe(uri.clone()).await.ok()?;
            let snap = snap.snapshot?;
            let SnapshotState::Terminal(t) = snap.state else {
                return None;
            };
            lock(&self.mirror).insert(uri, (*t).clone());
            Some(*t)
        })
    }

    fn follow(&self) -> broadcast::Receiver<Arc<ActionEnvelope>> {
        self.events.subscribe()
    }

    fn cut_off(&self) -> Option<broadcast::Receiver<Vec<String>>> {
        Some(self.cut_offs.subscribe())
    }
}
