//! The host terminal service (`interactive-terminal`): the AHP terminal core behind JSON-RPC
//! 2.0 over WebSocket, and the page a person opens to watch terminals.
//!
//! Every connection presents the token before anything else; the service binds loopback
//! by default and refuses a non-loopback address unless a token was configured.

pub mod approvals;
mod conn;
mod http;
pub mod requests;
pub mod token;

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use tokio::net::TcpListener;

use crate::terminal::{Core, CoreConfig};

/// Default port (seed 003 §7.1).
pub const DEFAULT_PORT: u16 = 45459;
/// Path of the AHP WebSocket endpoint (`/` is accepted too).
pub const WS_PATH: &str = "/ahp";

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
}

/// What every connection shares.
pub struct Shared {
    pub core: Arc<Core>,
    pub token: String,
    pub instance: String,
    pub trace_id: Option<String>,
    pub runtime_session_id: String,
    pub requests: requests::RequestCache,
    pub approvals: approvals::Approvals,
}

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error(
        "refusing to bind {0}: a non-loopback address needs a configured token (--token or PM_INTERACTIVE_TERMINAL_TOKEN)"
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
}

/// A running host service.
pub struct Host {
    pub addr: SocketAddr,
    pub shared: Arc<Shared>,
    listener: TcpListener,
}

impl Host {
    /// Bind and prepare; nothing is served until [`Host::serve`].
    pub async fn bind(cfg: HostConfig) -> Result<Host, HostError> {
        if !cfg.bind.is_loopback() && cfg.token.is_none() {
            return Err(HostError::NoTokenForPublicBind(cfg.bind));
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
        let shared = Arc::new(Shared {
            core: Core::new(cfg.core),
            token,
            runtime_session_id: cfg.runtime_session_id.unwrap_or_else(|| instance.clone()),
            instance,
            trace_id: cfg.trace_id,
            requests: requests::RequestCache::default(),
            approvals: approvals::Approvals::default(),
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
            "page": format!("http://{}/", self.addr),
            "pid": std::process::id(),
            "trace_id": self.shared.trace_id,
            "runtime_session_id": self.shared.runtime_session_id,
        })
        .to_string()
    }

    /// Accept connections until the task is dropped.
    pub async fn serve(self) {
        loop {
            match self.listener.accept().await {
                Ok((stream, peer)) => {
                    let shared = self.shared.clone();
                    tokio::spawn(async move {
                        http::handle(stream, peer, shared).await;
                    });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            }
        }
    }
}
