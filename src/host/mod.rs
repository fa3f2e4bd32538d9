//! The host terminal service (`interactive-terminal`): the AHP terminal core behind JSON-RPC
//! 2.0 over WebSocket, and the page a person opens to watch terminals.
//!
//! Every connection presents the token (a program) or a page session (a person's browser,
//! signed in with a one-time link) before anything else; `Host` and `Origin` must name this
//! service. It binds loopback by default and refuses a non-loopback address unless a strong
//! token was configured.

pub mod approvals;
pub mod clients;
mod commands;
mod conn;
mod http;
pub mod names;
pub mod options;
pub mod page;
pub mod requests;
mod screens;
mod socket;
mod stream;
mod waiting;

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use tokio::net::TcpListener;

use crate::terminal::{Core, CoreConfig};
use crate::token;

/// Default port (docs/bridge-protocol.md).
pub const DEFAULT_PORT: u16 = 45459;
/// Path of the AHP WebSocket endpoint (`/` is accepted too).
pub const WS_PATH: &str = "/ahp";
/// Connections that have not sent and passed their request head yet, at once. A new one
/// beyond it closes the oldest: a flood of silent sockets cannot keep a real client (which
/// sends its head at once) out. Each costs a socket and a parked task, never CPU.
pub const MAX_UNAUTHENTICATED: usize = 64;

#[derive(Debug, Clone)]
pub struct HostConfig {
    pub bind: IpAddr,
    pub port: u16,
    /// Token from flag / environment; otherwise the token file, generated at first start.
    pub token: Option<String>,
    pub token_file: PathBuf,
    pub core: CoreConfig,
    pub trace_id: Option<String>,
    pub runtime_session_id: Option<String>,
    /// Host names besides IP addresses and the defaults ([`names::DEFAULT_NAMES`]) that
    /// `Host` / `Origin` may carry.
    pub allow_hosts: Vec<String>,
    /// Every client may use every terminal (else only the one that created it, and a person
    /// on the page).
    pub share_terminals: bool,
    /// A person on the page watches and decides approvals, and touches no terminal.
    pub page_read_only: bool,
}

/// What every connection shares.
pub struct HostState {
    pub core: Arc<Core>,
    pub token: String,
    pub instance: String,
    pub trace_id: Option<String>,
    pub runtime_session_id: String,
    pub requests: requests::RequestCache,
    pub approvals: approvals::Approvals,
    /// The one-time sign-in links and the browser sessions they made.
    pub page: page::PageLogin,
    /// The names `Host` and `Origin` may carry.
    pub names: names::Names,
    /// `host:port` a person's browser reaches the page at.
    pub public_addr: String,
    /// Client names bound to their secrets.
    pub clients: clients::ClientIds,
    pub share_terminals: bool,
    pub page_read_only: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error(
        "refusing to bind {0}: a non-loopback address needs a configured token (PM_INTERACTIVE_TERMINAL_TOKEN)"
    )]
    NoTokenForPublicBind(IpAddr),
    #[error("cannot bind {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("token: {0}")]
    Token(String),
    #[error(
        "refusing to bind {0}: its token is too weak to guard an address other machines reach (at least {min} characters of random text, e.g. `openssl rand -hex 16`)",
        min = token::MIN_PUBLIC_TOKEN_CHARS
    )]
    WeakToken(IpAddr),
}

/// A running host service.
pub struct Host {
    pub addr: SocketAddr,
    pub shared: Arc<HostState>,
    listener: TcpListener,
}

impl Host {
    /// Bind and prepare; nothing is served until [`Host::serve`].
    pub async fn bind(cfg: HostConfig) -> Result<Host, HostError> {
        if !cfg.bind.is_loopback() {
            match &cfg.token {
                None => return Err(HostError::NoTokenForPublicBind(cfg.bind)),
                Some(t) if !token::strong_enough(t) => return Err(HostError::WeakToken(cfg.bind)),
                Some(_) => {}
            }
        }
        let token = match &cfg.token {
            Some(t) => t.clone(),
            None => token::load_or_create(&cfg.token_file).map_err(HostError::Token)?,
        };
        let addr = SocketAddr::new(cfg.bind, cfg.port);
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| HostError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| HostError::Bind { addr, source })?;
        let instance = crate::ids::new_id("host");
        let public_addr = if addr.ip().is_unspecified() {
            format!("127.0.0.1:{}", addr.port())
        } else {
            addr.to_string()
        };
        let page = page::PageLogin::new(&page::page_key(&cfg.token_file));
        let shared = Arc::new(HostState {
            core: Core::new(cfg.core),
            token,
            runtime_session_id: cfg.runtime_session_id.unwrap_or_else(|| instance.clone()),
            instance,
            trace_id: cfg.trace_id,
            requests: requests::RequestCache::default(),
            approvals: approvals::Approvals::default(),
            page,
            names: names::Names::new(&cfg.allow_hosts),
            public_addr,
            clients: clients::ClientIds::default(),
            share_terminals: cfg.share_terminals,
            page_read_only: cfg.page_read_only,
        });
        Ok(Host {
            addr,
            shared,
            listener,
        })
    }

    /// The machine-readable ready line a launcher waits for.
    pub fn ready_line(&self) -> String {
        json!({
            "event": "ready",
            "address": self.addr.to_string(),
            "protocol": "ahp",
            "protocol_version": ahp_types::PROTOCOL_VERSION,
            "supported_versions": ahp_types::SUPPORTED_PROTOCOL_VERSIONS,
            "endpoint": format!("ws://{}{WS_PATH}", self.addr),
            "page": format!("http://{}/", self.shared.public_addr),
            "login": self.shared.page.link(&self.shared.public_addr),
            "pid": std::process::id(),
            "trace_id": self.shared.trace_id,
            "runtime_session_id": self.shared.runtime_session_id,
        })
        .to_string()
    }

    /// Accept connections until the task is dropped.
    pub async fn serve(self) {
        let waiting = Arc::new(waiting::Waiting::default());
        loop {
            match self.listener.accept().await {
                Ok((stream, peer)) => {
                    let shared = self.shared.clone();
                    let (ticket, evicted) = waiting.admit(MAX_UNAUTHENTICATED);
                    if let Some(old) = evicted {
                        tracing::debug!(%peer, "too many connections waiting to authenticate; the oldest was closed");
                        old.abort();
                    }
                    let w = waiting.clone();
                    let task = tokio::spawn(async move {
                        http::handle(stream, peer, shared, (w, ticket)).await;
                    });
                    waiting.attach(ticket, task.abort_handle());
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            }
        }
    }
}
