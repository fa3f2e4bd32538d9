//! The socket loop of one client connection: AHP JSON-RPC 2.0 over a WebSocket.
//!
//! Three tasks per connection: the reader (requests, in order), the forwarder (actions on
//! subscribed channels), and the writer (the only one touching the socket). Subscribing and
//! forwarding share one lock around "register and queue", so a subscriber never sees an
//! action before its snapshot, nor an action its snapshot already contains.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ahp_types::errors::json_rpc_error_codes;
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use super::HostState;
use super::commands::handle_message;
use super::conn::{Conn, NEXT_CONN, OUTBOUND_QUEUE, PING_EVERY, SILENCE_LIMIT, State, rpc_error};
use super::page::Role;
use super::stream::Prefixed;

pub async fn serve(
    ws: WebSocketStream<Prefixed>,
    peer: SocketAddr,
    shared: Arc<HostState>,
    role: Role,
) {
    let (mut sink, mut stream) = ws.split();
    let (tx, mut rx) = mpsc::channel::<Message>(OUTBOUND_QUEUE);
    let conn = Arc::new(Conn {
        id: NEXT_CONN.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        shared: shared.clone(),
        state: Mutex::new(State {
            client_id: None,
            subs: BTreeMap::new(),
            last_seen: shared.core.current_seq(),
            out: tx.clone(),
            closed: false,
            watches: Default::default(),
        }),
        peer,
        role,
    });
    tracing::info!(%peer, ?role, "client connected");

    let writer = tokio::spawn(async move {
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.tick().await;
        loop {
            let msg = tokio::select! {
                m = rx.recv() => match m { Some(m) => m, None => break },
                _ = ping.tick() => Message::Ping(Vec::new().into()),
            };
            let close = matches!(msg, Message::Close(_));
            if sink.send(msg).await.is_err() || close {
                break;
            }
        }
        let _ = sink.close().await;
    });

    let forwarder = {
        let conn = conn.clone();
        let mut actions = shared.core.follow();
        tokio::spawn(async move {
            loop {
                match actions.recv().await {
                    Ok(env) => conn.forward(&env),
                    Err(RecvError::Lagged(_)) => {
                        let (last, channels) = {
                            let st = conn.state();
                            (st.last_seen, st.subs.keys().cloned().collect())
                        };
                        match conn.shared.core.replay_after(last, &channels) {
                            Some(missed) => missed.iter().for_each(|e| conn.forward(e)),
                            None => {
                                tracing::info!(peer = %conn.peer, "client fell behind the log; disconnecting so it resumes");
                                let mut st = conn.state();
                                st.closed = true;
                                let _ = st.out.try_send(Message::Close(None));
                                return;
                            }
                        }
                    }
                    Err(RecvError::Closed) => return,
                }
            }
        })
    };

    let mut last_heard = Instant::now();
    loop {
        let next = tokio::time::timeout(PING_EVERY, stream.next()).await;
        let msg = match next {
            Ok(Some(Ok(m))) => m,
            Ok(Some(Err(_))) | Ok(None) => break,
            Err(_) => {
                if last_heard.elapsed() > SILENCE_LIMIT {
                    tracing::info!(%peer, "no pong: dropping the connection");
                    break;
                }
                continue;
            }
        };
        last_heard = Instant::now();
        let text = match msg {
            Message::Text(t) => t.to_string(),
            Message::Binary(b) => String::from_utf8_lossy(&b).into_owned(),
            Message::Close(_) => break,
            _ => continue,
        };
        let v: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                conn.send(&rpc_error(
                    &Value::Null,
                    json_rpc_error_codes::PARSE_ERROR,
                    format!("parse error: {e}"),
                    None,
                ));
                continue;
            }
        };
        handle_message(&conn, v).await;
        if conn.state().closed {
            break;
        }
    }
    forwarder.abort();
    shared.approvals.remove_approver(conn.id);
    super::screens::stop_all(&conn);
    drop(tx);
    {
        let mut st = conn.state();
        st.closed = true;
        let _ = st.out.try_send(Message::Close(None));
    }
    let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
    tracing::info!(%peer, "client disconnected");
}
