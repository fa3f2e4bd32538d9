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

use ahp::{Client, ClientConfig, ClientError, SubscriptionEvent};
use ahp_types::ActionEnvelope;
use ahp_types::commands::ReconnectResult;
use ahp_types::state::{SnapshotState, TerminalState};
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

use super::discovery::{self, LaunchSpec, Launched};
use super::mode::BridgeSpec;
use super::{Adapter, AdapterType, BoxFut, bounded};
use crate::contract::{ErrorCode, TermError};
use crate::ids;
use crate::terminal::ops::{OpError, OpErrorKind, OpResult, TermRequest, TermResponse};

/// Extra time a request may take beyond its own wait.
const REQUEST_MARGIN: Duration = Duration::from_secs(10);
/// After a drop, how long a request keeps trying to reconnect before it gives up.
const RECOVER_WINDOW: Duration = Duration::from_secs(8);
/// First pause between reconnect attempts; it doubles up to the cap.
const BACKOFF_START: Duration = Duration::from_millis(100);
const BACKOFF_CAP: Duration = Duration::from_millis(1_000);
/// Buffered host actions for followers (MCP resource updates).
const EVENT_BUFFER: usize = 4096;
/// JSON-RPC code the `ahp` client gives pending requests when its transport goes away.
const TRANSPORT_CLOSED: i32 = -32000;
/// Connection attempts that find nothing listening before a request says the host is down.
const HOST_DOWN_ATTEMPTS: u32 = 2;
/// How long a launched host gets to stop on its own before it is killed.
const HOST_STOP_GRACE: Duration = Duration::from_secs(3);

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

struct Live {
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
    conn: tokio::sync::Mutex<Option<Live>>,
    launched: tokio::sync::Mutex<Option<Launched>>,
    events: broadcast::Sender<Arc<ActionEnvelope>>,
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
        TermRequest::Approval(a) => a.timeout_ms,
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

    /// Where to connect and with which token; launches the bundled host when needed.
    async fn endpoints(&self) -> Result<(Vec<String>, String), TermError> {
        match &self.target {
            Target::Bridge(s) => Ok((
                s.aliases
                    .iter()
                    .map(|a| format!("{a}:{}", s.port))
                    .collect(),
                s.token.clone(),
            )),
            Target::Bundled {
                configured,
                port,
                spawn_timeout,
                ..
            } => {
                let mut launched = self.launched.lock().await;
                let alive = match launched.as_mut() {
                    Some(l) => matches!(l.child.try_wait(), Ok(None)),
                    None => false,
                };
                if !alive {
                    let spec = LaunchSpec {
                        port: *port,
                        spawn_timeout: *spawn_timeout,
                        trace_id: ids::new_id(ids::TRACE),
                        runtime_session_id: self.runtime_session_id.clone(),
                        token: crate::terminal::shell::new_nonce(),
                    };
                    let l = discovery::launch(configured.as_deref(), &spec).await?;
                    self.telemetry(
                        "launched",
                        json!({"address": l.address, "candidate": l.candidate, "ready": l.ready}),
                    );
                    *launched = Some(l);
                }
                match launched.as_ref() {
                    Some(l) => Ok((vec![l.address.clone()], l.token.clone())),
                    None => Err(TermError::internal("launch left no host")),
                }
            }
        }
    }

    /// Open a WebSocket to the first endpoint that answers, classifying every failure.
    async fn open(&self, endpoints: &[String], token: &str) -> Result<Client, TermError> {
        let mut attempts = Vec::new();
        let mut refused_by_host = false;
        // Nothing listens: an endpoint refused the connection itself, and none got further or
        // timed out (names that do not resolve say nothing either way): the host is down.
        let mut refused = false;
        let mut maybe_up = false;
        for ep in endpoints {
            let url = format!("ws://{ep}/ahp");
            let mut req = url.clone().into_client_request().map_err(|e| {
                TermError::new(
                    ErrorCode::InvalidMode,
                    format!("bad host address {ep:?}: {e}"),
                )
            })?;
            if let Ok(v) = HeaderValue::from_str(&format!("Bearer {token}")) {
                req.headers_mut().insert("Authorization", v);
            }
            self.telemetry("connect", json!({"endpoint": ep}));
            // Small JSON frames: no Nagle delay (it costs 40 ms a round trip with delayed ACKs).
            let connecting = tokio_tungstenite::connect_async_with_config(req, None, true);
            match tokio::time::timeout(self.connect_timeout, connecting).await {
                Ok(Ok((ws, _))) => {
                    let transport = ahp_ws::WebSocketTransport::from_stream(ws);
                    let cfg = ClientConfig {
                        default_request_timeout: None,
                        subscription_buffer: EVENT_BUFFER,
                    };
                    return Client::connect(transport, cfg).await.map_err(|e| {
                        TermError::new(
                            ErrorCode::GuiUnavailable,
                            format!("AHP client failed to start: {e}"),
                        )
                    });
                }
                Ok(Err(tokio_tungstenite::tungstenite::Error::Http(resp))) => {
                    refused_by_host = true;
                    attempts.push(json!({"endpoint": ep, "error": format!("the host answered HTTP {}", resp.status())}));
                }
                Ok(Err(tokio_tungstenite::tungstenite::Error::Io(e))) => {
                    refused |= e.kind() == std::io::ErrorKind::ConnectionRefused;
                    attempts.push(json!({"endpoint": ep, "error": e.to_string()}));
                }
                Ok(Err(e)) => {
                    maybe_up = true;
                    attempts.push(json!({"endpoint": ep, "error": e.to_string()}));
                }
                Err(_) => {
                    maybe_up = true;
                    attempts.push(json!({"endpoint": ep, "error": format!("no connection within {} ms", self.connect_timeout.as_millis())}));
                }
            }
            self.telemetry(
                "connect failed",
                attempts.last().cloned().unwrap_or_default(),
            );
        }
        if refused_by_host {
            // §7: "host unreachable/refused" is GUI_UNAVAILABLE; the token is the usual cause.
            return Err(TermError::new(
                ErrorCode::GuiUnavailable,
                "the terminal host refused the handshake (check PM_INTERACTIVE_TERMINAL_TOKEN)",
            )
            .with("attempts", json!(attempts)));
        }
        Err(TermError::new(
            ErrorCode::GuiUnavailable,
            format!(
                "the terminal host is unreachable ({} endpoints tried)",
                endpoints.len()
            ),
        )
        .with("attempts", json!(attempts))
        .with("host_down", json!(refused && !maybe_up)))
    }

    /// Initialize, then catch up from the last sequence seen on an earlier connection.
    async fn handshake(&self, client: &Client) -> Result<(), TermError> {
        let versions: Vec<String> = ahp_types::SUPPORTED_PROTOCOL_VERSIONS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let params = ahp_types::commands::InitializeParams {
            channel: ahp_types::ROOT_RESOURCE_URI.to_string(),
            meta: self.identity(),
            protocol_versions: versions,
            client_id: self.client_id.clone(),
            initial_subscriptions: Some(vec![ahp_types::ROOT_RESOURCE_URI.into()]),
            locale: None,
            capabilities: None,
            client_info: None,
        };
        let init = tokio::time::timeout(
            self.request_timeout,
            client.request::<_, ahp_types::commands::InitializeResult>("initialize", params),
        )
        .await
        .map_err(|_| {
            TermError::new(
                ErrorCode::Timeout,
                "the terminal host did not answer initialize in time",
            )
        })?
        .map_err(|e| {
            // A host that answers but will not shake hands (no common protocol version) is
            // as unavailable as one that does not answer; after a drop the caller retries.
            TermError::new(ErrorCode::GuiUnavailable, format!("handshake failed: {e}"))
        })?;
        let instance = init
            .meta
            .as_ref()
            .and_then(|m| m.get("interactiveTerminal"))
            .and_then(|m| m.get("instance"))
            .and_then(Value::as_str)
            .map(String::from);
        self.telemetry("initialized", json!({"protocol_version": init.protocol_version, "instance": instance, "server_seq": init.server_seq}));
        let previous = lock(&self.instance).replace(instance.clone().unwrap_or_default());
        let same_host = previous.is_some() && previous == instance;
        if previous.is_some() && !same_host {
            // A new host: what the old one held is gone with it.
            let gone: Vec<String> = lock(&self.known).drain().collect();
            tracing::warn!(
                terminals = gone.len(),
                "the terminal host restarted; its terminals are gone"
            );
            lock(&self.lost).extend(gone);
        }
        let last = self.last_seq.load(Ordering::SeqCst);
        if !same_host {
            lock(&self.mirror).clear();
            self.last_seq.store(
                u64::try_from(init.server_seq).unwrap_or(0),
                Ordering::SeqCst,
            );
            return Ok(());
        }
        let mut subs: Vec<String> = lock(&self.mirror).keys().cloned().collect();
        subs.push(ahp_types::ROOT_RESOURCE_URI.into());
        let params = ahp_types::commands::ReconnectParams {
            channel: ahp_types::ROOT_RESOURCE_URI.to_string(),
            meta: self.identity(),
            client_id: self.client_id.clone(),
            last_seen_server_seq: last as i64,
            subscriptions: subs,
        };
        let r = client
            .request::<_, ReconnectResult>("reconnect", params)
            .await
            .map_err(|e| {
                TermError::new(ErrorCode::Disconnected, format!("reconnect failed: {e}"))
            })?;
        match r {
            ReconnectResult::Replay(r) => {
                self.telemetry(
                    "replay",
                    json!({"from": last, "actions": r.actions.len(), "missing": r.missing}),
                );
                for uri in &r.missing {
                    lock(&self.mirror).remove(uri);
                }
                for env in r.actions {
                    absorb(&self.mirror, &self.last_seq, &self.events, Arc::new(env));
                }
            }
            ReconnectResult::Snapshot(s) => {
                self.telemetry(
                    "snapshot",
                    json!({"from": last, "snapshots": s.snapshots.len()}),
                );
                let mut m = lock(&self.mirror);
                m.clear();
                for snap in s.snapshots {
                    if let SnapshotState::Terminal(t) = snap.state {
                        m.insert(snap.resource, *t);
                    }
                    self.last_seq
                        .fetch_max(u64::try_from(snap.from_seq).unwrap_or(0), Ordering::SeqCst);
                }
            }
        }
        Ok(())
    }

    /// The live client, connecting first when there is none.
    async fn client(&self) -> Result<Client, TermError> {
        let mut conn = self.conn.lock().await;
        if let Some(l) = conn.as_ref()
            && l.alive.load(Ordering::SeqCst)
        {
            return Ok(l.client.clone());
        }
        *conn = None;
        let (endpoints, token) = self.endpoints().await?;
        let client = self.open(&endpoints, &token).await?;
        self.handshake(&client).await?;
        let alive = Arc::new(AtomicBool::new(true));
        let mut events = client.events();
        let (mirror, last, tx, flag) = (
            self.mirror.clone(),
            self.last_seq.clone(),
            self.events.clone(),
            alive.clone(),
        );
        tokio::spawn(async move {
            while let Some(ev) = events.recv().await {
                if let SubscriptionEvent::Action(env) = ev.event {
                    absorb(&mirror, &last, &tx, Arc::new(env));
                }
            }
            flag.store(false, Ordering::SeqCst);
        });
        *conn = Some(Live {
            client: client.clone(),
            alive,
        });
        self.ever_connected.store(true, Ordering::SeqCst);
        Ok(client)
    }

    async fn drop_connection(&self) {
        if let Some(l) = self.conn.lock().await.take() {
            l.client.shutdown().await;
        }
    }

    /// One operation, exactly once on the host, surviving dropped connections.
    async fn request(
        self: Arc<Self>,
        req: TermRequest,
        trace_id: String,
        contract_request: Option<String>,
    ) -> Result<OpResult, TermError> {
        // The contract's request id (stable when a client retries with it) and the kind of
        // operation: a retry is the same operation, which the host runs once.
        let request_id = match contract_request {
            Some(r) => format!("{r}/{}", req.op_name()),
            None => ids::new_id(ids::REQUEST),
        };
        let may_run = req.may_run_something();
        let budget = self.request_timeout.max(wait_of(&req) + REQUEST_MARGIN);
        let deadline = Instant::now() + budget;
        let trace_id = if trace_id.is_empty() {
            ids::new_id(ids::TRACE)
        } else {
            trace_id
        };
        let params = json!({"request_id": request_id, "trace_id": trace_id, "request": req});
        let mut dropped_at: Option<Instant> = None;
        let mut backoff = BACKOFF_START;
        let mut refused = 0;
        loop {
            let client = match self.client().await {
                Ok(c) => c,
                // Never connected: the failure says why (unreachable, refused, bad config).
                Err(e) if !self.ever_connected.load(Ordering::SeqCst) => return Err(e),
                Err(e) => {
                    let since = dropped_at.get_or_insert_with(Instant::now);
                    // Nothing listens where the host was: it is down, not slow. Say so now
                    // (after one quick retry), rather than after the whole recovery window.
                    if e.details.get("host_down") == Some(&json!(true)) {
                        refused += 1;
                        if refused >= HOST_DOWN_ATTEMPTS {
                            return Err(host_is_down(&req, &request_id, &e));
                        }
                    }
                    if since.elapsed() >= RECOVER_WINDOW || Instant::now() >= deadline {
                        return Err(TermError::new(
                            ErrorCode::Disconnected,
                            "the connection to the terminal host dropped and could not be re-established",
                        )
                        .with("request_id", json!(request_id))
                        .with("last_error", json!(e.message)));
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(BACKOFF_CAP);
                    continue;
                }
            };
            self.telemetry(
                "request",
                json!({"request_id": request_id, "op": params["request"]["op"]}),
            );
            let sent = tokio::time::timeout_at(
                deadline.into(),
                client.request::<_, Value>("pm/terminal", params.clone()),
            )
            .await;
            match sent {
                Err(_) => {
                    return Err(TermError::new(
                        ErrorCode::Timeout,
                        "the terminal host did not answer in time",
                    )
                    .with("timeout_ms", json!(budget.as_millis() as u64))
                    .with("may_have_run", json!(may_run)));
                }
                Ok(Ok(v)) => {
                    self.telemetry(
                        "response",
                        json!({"request_id": request_id, "ok": v.get("ok").is_some()}),
                    );
                    if let Some(ok) = v.get("ok") {
                        let r: TermResponse =
                            serde_json::from_value(ok.clone()).map_err(TermError::internal)?;
                        let mut known = lock(&self.known);
                        known.extend(r.terminal.iter().map(|t| t.terminal_id.clone()));
                        known.extend(r.list.iter().map(|t| t.terminal_id.clone()));
                        return Ok(Ok(r));
                    }
                    if let Some(err) = v.get("err") {
                        let mut e: OpError =
                            serde_json::from_value(err.clone()).map_err(TermError::internal)?;
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
                        return Ok(Err(e));
                    }
                    return Err(TermError::internal(format!(
                        "unexpected answer from the host: {v}"
                    )));
                }
                Ok(Err(ClientError::Rpc(e))) if e.code != TRANSPORT_CLOSED => {
                    return Err(TermError::internal(format!(
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

/// The answer when nothing listens where the host was: a new terminal is unavailable (ask
/// for it again later, or run headless); an existing one is cut off and, if the host
/// restarts, gone.
fn host_is_down(req: &TermRequest, request_id: &str, cause: &TermError) -> TermError {
    let e = match req {
        TermRequest::Open(_) => TermError::new(
            ErrorCode::GuiUnavailable,
            "the terminal host is down (nothing listens at its address)",
        ),
        _ => TermError::new(
            ErrorCode::Disconnected,
            "the terminal host is down (nothing listens at its address); its terminals are gone if it restarts",
        ),
    };
    e.with("request_id", json!(request_id))
        .with("host_down", json!(true))
        .with("last_error", json!(cause.message))
}

/// Fold one host action into the mirror and pass it on.
fn absorb(
    mirror: &Mutex<HashMap<String, TerminalState>>,
    last: &AtomicU64,
    tx: &broadcast::Sender<Arc<ActionEnvelope>>,
    env: Arc<ActionEnvelope>,
) {
    last.fetch_max(env.server_seq, Ordering::SeqCst);
    if let Some(state) = lock(mirror).get_mut(&env.channel) {
        ahp::reducers::apply_action_to_terminal(state, &env.action);
    }
    let _ = tx.send(env);
}

impl Adapter for RemoteAdapter {
    fn adapter_type(&self) -> AdapterType {
        self.kind
    }

    fn connect(&self) -> BoxFut<'_, Result<(), TermError>> {
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
    ) -> BoxFut<'a, Result<OpResult, TermError>> {
        let trace_id = trace_id.to_string();
        let request_id = request_id.map(String::from);
        Box::pin(async move {
            let this = self
                .me
                .upgrade()
                .ok_or_else(|| TermError::internal("adapter is gone"))?;
            bounded(
                this.request(req, trace_id, request_id),
                timeout.max(self.request_timeout),
                "the terminal host did not answer in time",
            )
            .await?
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
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid as i32),
                        nix::sys::signal::Signal::SIGTERM,
                    );
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
}
