//! The link to the host: where it is (launching the bundled host when needed), the
//! WebSocket opened to the first address that answers, the AHP handshake with catch-up, and
//! the one live client the adapter's requests share.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ahp::{Client, ClientConfig, SubscriptionEvent};
use ahp_types::commands::ReconnectResult;
use ahp_types::state::SnapshotState;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

use super::{Connection, EVENT_BUFFER, RemoteAdapter, Target, absorb};
use crate::adapters::discovery::{self, LaunchSpec};
use crate::adapters::error::{AdapterError, Attempt, Failure};
use crate::ids;
use crate::locks::lock;

impl RemoteAdapter {
    /// Where to connect and with which token; launches the bundled host when needed.
    async fn endpoints(&self) -> Result<(Vec<String>, String), AdapterError> {
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
                    None => Err(AdapterError::internal("launch left no host")),
                }
            }
        }
    }

    /// Open a WebSocket to the first endpoint that answers, classifying every failure
    /// (docs/bridge-protocol.md): nothing reachable or a refusal is the host being unavailable; a host that
    /// accepted the connection and then went silent or hung up during the upgrade is a
    /// timeout or a disconnection. Returns the client and the endpoint it reached.
    async fn open(
        &self,
        endpoints: &[String],
        token: &str,
    ) -> Result<(Client, String), AdapterError> {
        let mut attempts = Vec::new();
        let mut refused_by_host = false;
        // Nothing listens: an endpoint refused the connection itself, and none got further or
        // timed out (names that do not resolve say nothing either way): the host is down.
        let mut refused = false;
        let mut maybe_up = false;
        // The first endpoint that accepted the connection and then failed the upgrade.
        let mut broken: Option<(Failure, String)> = None;
        for ep in endpoints {
            let url = format!("ws://{ep}/ahp");
            let mut req = url.clone().into_client_request().map_err(|e| {
                AdapterError::new(
                    Failure::NotConfigured,
                    format!("bad host address {ep:?}: {e}"),
                )
            })?;
            if let Ok(v) = HeaderValue::from_str(&format!("Bearer {token}")) {
                req.headers_mut().insert("Authorization", v);
            }
            self.telemetry("connect", json!({"endpoint": ep}));
            let waited = format!("no answer within {} ms", self.connect_timeout.as_millis());
            let stream = match tokio::time::timeout(
                self.connect_timeout,
                tokio::net::TcpStream::connect(ep.as_str()),
            )
            .await
            {
                Ok(Ok(stream)) => stream,
                Ok(Err(e)) => {
                    refused |= e.kind() == std::io::ErrorKind::ConnectionRefused;
                    attempts.push(Attempt::new(ep, e.to_string()));
                    self.telemetry("connect failed", json!(attempts.last()));
                    continue;
                }
                Err(_) => {
                    maybe_up = true;
                    attempts.push(Attempt::new(ep, waited));
                    self.telemetry("connect failed", json!(attempts.last()));
                    continue;
                }
            };
            // Small JSON frames: no Nagle delay (it costs 40 ms a round trip with delayed ACKs).
            let _ = stream.set_nodelay(true);
            let stream = tokio_tungstenite::MaybeTlsStream::Plain(stream);
            let upgrade = tokio_tungstenite::client_async_with_config(req, stream, None);
            let failure = match tokio::time::timeout(self.connect_timeout, upgrade).await {
                Ok(Ok((ws, _))) => {
                    let transport = ahp_ws::WebSocketTransport::from_stream(ws);
                    let cfg = ClientConfig {
                        default_request_timeout: None,
                        subscription_buffer: EVENT_BUFFER,
                    };
                    return Client::connect(transport, cfg)
                        .await
                        .map(|c| (c, ep.clone()))
                        .map_err(|e| {
                            AdapterError::new(
                                Failure::Disconnected,
                                format!("the AHP client failed to start on {ep}: {e}"),
                            )
                            .with(|f| f.set_endpoint(ep))
                        });
                }
                Ok(Err(tokio_tungstenite::tungstenite::Error::Http(resp))) => {
                    refused_by_host = true;
                    attempts.push(Attempt::new(
                        ep,
                        format!("the host answered HTTP {}", resp.status()),
                    ));
                    None
                }
                Ok(Err(e)) => {
                    attempts.push(Attempt::new(
                        ep,
                        format!("connected, then the upgrade failed: {e}"),
                    ));
                    Some(Failure::Disconnected)
                }
                Err(_) => {
                    attempts.push(Attempt::new(
                        ep,
                        format!("connected, then {waited} to the upgrade"),
                    ));
                    Some(Failure::Timeout)
                }
            };
            if let Some(f) = failure {
                broken.get_or_insert((f, ep.clone()));
            }
            self.telemetry("connect failed", json!(attempts.last()));
        }
        if refused_by_host {
            // A host unreachable or refusing is GUI_UNAVAILABLE; the token is the usual cause.
            return Err(AdapterError::new(
                Failure::Unavailable,
                "the terminal host refused the handshake: PM_INTERACTIVE_TERMINAL_TOKEN is not the host's token",
            )
            .with(|f| f.attempts = Some(attempts)));
        }
        if let Some((failure, ep)) = broken {
            // Something listens there but the handshake failed.
            let what = match failure {
                Failure::Timeout => "went silent",
                _ => "closed the connection",
            };
            return Err(AdapterError::new(
                failure,
                format!("the terminal host at {ep} accepted the connection, then {what} during the handshake"),
            )
            .with(|f| {
                f.attempts = Some(attempts);
                f.set_endpoint(&ep);
                if failure == Failure::Timeout {
                    f.timeout_ms = Some(self.connect_timeout.as_millis() as u64);
                }
            }));
        }
        // Each address with its cause: which name did not resolve, where nothing listens.
        let tried: Vec<String> = attempts
            .iter()
            .map(|a| format!("{}: {}", a.endpoint, a.error))
            .collect();
        Err(AdapterError::new(
            Failure::Unavailable,
            format!("the terminal host is unreachable ({})", tried.join("; ")),
        )
        .with(|f| {
            f.attempts = Some(attempts);
            f.host_down = Some(refused && !maybe_up);
        }))
    }

    /// Initialize, then catch up from the last sequence seen on an earlier connection.
    async fn handshake(&self, client: &Client, endpoint: &str) -> Result<(), AdapterError> {
        let versions: Vec<String> = ahp_types::SUPPORTED_PROTOCOL_VERSIONS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let ours = versions.clone();
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
            AdapterError::new(
                Failure::Timeout,
                format!("the terminal host at {endpoint} did not answer initialize in time"),
            )
            .with(|f| {
                f.set_endpoint(endpoint);
                f.timeout_ms = Some(self.request_timeout.as_millis() as u64);
            })
        })?
        .map_err(|e| handshake_failed(endpoint, ours, &e))?;
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
                AdapterError::new(Failure::Disconnected, format!("reconnect failed: {e}"))
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
    pub(super) async fn client(&self) -> Result<Client, AdapterError> {
        let mut conn = self.conn.lock().await;
        if let Some(l) = conn.as_ref()
            && l.alive.load(Ordering::SeqCst)
        {
            return Ok(l.client.clone());
        }
        *conn = None;
        let (endpoints, token) = self.endpoints().await?;
        let (client, endpoint) = self.open(&endpoints, &token).await?;
        self.handshake(&client, &endpoint).await?;
        let alive = Arc::new(AtomicBool::new(true));
        let mut events = client.events();
        let (mirror, last, tx, cut_offs, flag, endpoint) = (
            self.mirror.clone(),
            self.last_seq.clone(),
            self.events.clone(),
            self.cut_offs.clone(),
            alive.clone(),
            endpoint.clone(),
        );
        tokio::spawn(async move {
            while let Some(ev) = events.recv().await {
                if let SubscriptionEvent::Action(env) = ev.event {
                    absorb(&mirror, &last, &tx, Arc::new(env));
                }
            }
            flag.store(false, Ordering::SeqCst);
            // Whoever follows these terminals hears that they changed: their next read
            // says whether they are cut off or gone, where an update would never come.
            let followed: Vec<String> = lock(&mirror).keys().cloned().collect();
            let _ = cut_offs.send(followed);
            tracing::info!(
                %endpoint,
                "the connection to the terminal host ended; the next request reconnects"
            );
        });
        *conn = Some(Connection {
            client: client.clone(),
            alive,
        });
        self.ever_connected.store(true, Ordering::SeqCst);
        Ok(client)
    }

    pub(super) async fn drop_connection(&self) {
        if let Some(l) = self.conn.lock().await.take() {
            l.client.shutdown().await;
        }
    }
}

/// A host that answers `initialize` with an error (no common protocol
/// version, most often) failed the handshake: a disconnection, with where and which
/// versions each side speaks.
fn handshake_failed(endpoint: &str, ours: Vec<String>, e: &ahp::ClientError) -> AdapterError {
    let theirs = match e {
        ahp::ClientError::Rpc(rpc) => rpc
            .data
            .clone()
            .and_then(|d| {
                serde_json::from_value::<ahp_types::errors::UnsupportedProtocolVersionErrorData>(d)
                    .ok()
            })
            .map(|d| d.supported_versions),
        _ => None,
    };
    let message = match &theirs {
        Some(v) => format!(
            "the terminal host at {endpoint} speaks protocol versions {v:?}, this server {ours:?}: no common version"
        ),
        None => format!("the handshake with the terminal host at {endpoint} failed: {e}"),
    };
    AdapterError::new(Failure::Disconnected, message).with(|f| {
        f.set_endpoint(endpoint);
        f.client_versions = Some(ours);
        f.host_versions = theirs;
    })
}
