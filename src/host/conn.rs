//! One client connection's state: who it is, what it follows, its outbound queue, and what
//! it may touch. The socket loop (`socket`) and the command handlers (`commands`) both work on
//! it; neither is reached from here.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use ahp_types::ActionEnvelope;
use ahp_types::errors::{ahp_error_codes, json_rpc_error_codes};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

use super::HostState;
use super::page::Role;
use crate::locks::lock;

/// Messages queued for one client before it is considered too slow and disconnected
/// (it reconnects and catches up from the log or a snapshot).
pub(super) const OUTBOUND_QUEUE: usize = 8192;
/// Ping cadence, and silence after which the connection is dropped.
pub(super) const PING_EVERY: Duration = Duration::from_secs(15);
pub(super) const SILENCE_LIMIT: Duration = Duration::from_secs(45);
/// Longest a single client-dispatched input may block on a full pty.
pub(super) const DISPATCH_WRITE_LIMIT: Duration = Duration::from_secs(5);

pub(super) struct State {
    pub(super) client_id: Option<String>,
    /// Subscribed channels, each with the sequence its snapshot was taken at.
    pub(super) subs: BTreeMap<String, u64>,
    /// Highest sequence this connection has looked at.
    pub(super) last_seen: u64,
    pub(super) out: mpsc::Sender<Message>,
    pub(super) closed: bool,
    /// Screens pushed to this connection (`pm/screen/watch`), by channel.
    pub(super) watches: std::collections::HashMap<String, tokio::task::AbortHandle>,
}

/// Connection numbers, for the approver registry.
pub(super) static NEXT_CONN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

pub(super) struct Conn {
    pub(super) id: u64,
    pub(super) shared: Arc<HostState>,
    pub(super) state: Mutex<State>,
    pub(super) peer: SocketAddr,
    /// A person's browser, or a program with the token.
    pub(super) role: Role,
}

pub(super) fn rpc_result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub(super) fn rpc_error(
    id: &Value,
    code: i32,
    message: impl Into<String>,
    data: Option<Value>,
) -> Value {
    let mut e = json!({"code": code, "message": message.into()});
    if let Some(d) = data {
        e["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": e})
}

pub(super) type RpcResult = Result<Value, (i32, String, Option<Value>)>;

pub(super) fn invalid_params(e: impl std::fmt::Display) -> (i32, String, Option<Value>) {
    (json_rpc_error_codes::INVALID_PARAMS, e.to_string(), None)
}

impl Conn {
    pub(super) fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Whether this connection may read, type into or end `terminal_id`: its creator, a
    /// person on the page, or anyone when the operator shares terminals.
    pub(super) fn may_use(&self, terminal_id: &str) -> bool {
        let me = self.state().client_id.clone().unwrap_or_default();
        self.may_use_as(terminal_id, &me)
    }

    /// [`Conn::may_use`] for a given client id (before it is recorded): the client that
    /// created the terminal, and the one its claim was handed to (AHP claims). A terminal
    /// that is not there passes: the operation answers that itself.
    pub(super) fn may_use_as(&self, terminal_id: &str, client: &str) -> bool {
        if self.role == Role::Page || self.shared.share_terminals {
            return true;
        }
        self.shared.core.get(terminal_id).is_none_or(|t| {
            let st = t.state();
            let claimed = matches!(&st.state.claim, ahp_types::state::TerminalClaim::Client(c) if c.client_id == client);
            claimed || st.holder_client.is_none() || st.holder_client.as_deref() == Some(client)
        })
    }

    /// A person's page that the operator made read-only (watch and decide only).
    pub(super) fn page_is_read_only(&self) -> bool {
        self.role == Role::Page && self.shared.page_read_only
    }

    /// [`Conn::may_use`] for a channel URI, as an AHP error.
    pub(super) fn check_channel(&self, channel: &str) -> Result<(), (i32, String, Option<Value>)> {
        match crate::ids::terminal_id_from_uri(channel) {
            Some(id) if !self.may_use(id) => Err((
                ahp_error_codes::PERMISSION_DENIED,
                format!("terminal {id} belongs to another client"),
                None,
            )),
            _ => Ok(()),
        }
    }

    /// Queue a message; a client that lets its queue fill up is disconnected.
    pub(super) fn queue(st: &mut State, v: &Value) {
        if st.closed {
            return;
        }
        if st.out.try_send(Message::text(v.to_string())).is_err() {
            st.closed = true;
            let _ = st.out.try_send(Message::Close(None));
        }
    }

    pub(super) fn send(&self, v: &Value) {
        Conn::queue(&mut self.state(), v);
    }

    pub(super) fn action(env: &ActionEnvelope) -> Value {
        json!({"jsonrpc": "2.0", "method": "action", "params": env})
    }

    /// Forward one action if this client follows its channel and has not seen it yet.
    pub(super) fn forward(&self, env: &ActionEnvelope) {
        let mut st = self.state();
        st.last_seen = st.last_seen.max(env.server_seq);
        if st
            .subs
            .get(&env.channel)
            .is_some_and(|from| env.server_seq > *from)
        {
            Conn::queue(&mut st, &Conn::action(env));
        }
    }
}
