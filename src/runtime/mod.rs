//! Runtime adapters (seed 003 §5–§7): where interactive terminals live and how requests
//! reach them. Every adapter has the §5.1 shape and serves the same terminal operations, so
//! the interactive contract behaves the same whichever adapter serves it.

pub mod local;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ahp_types::ActionEnvelope;
use ahp_types::state::TerminalState;
use tokio::sync::broadcast;

use crate::contract::TermError;
use crate::terminal::ops::{OpResult, TermRequest, TermSummary};

pub use local::LocalAdapter;

pub type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AdapterType {
    Local,
    Bundled,
    ContainerBridge,
}

impl AdapterType {
    pub fn as_str(self) -> &'static str {
        match self {
            AdapterType::Local => "local",
            AdapterType::Bundled => "bundled",
            AdapterType::ContainerBridge => "container_bridge",
        }
    }
}

/// A request in flight, to be awaited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ticket(pub u64);

/// The §5.1 adapter interface.
pub trait Adapter: Send + Sync {
    fn adapter_type(&self) -> AdapterType;
    /// Establish the runtime (launch, connect, handshake) if it is not up.
    fn connect(&self) -> BoxFut<'_, Result<(), TermError>>;
    /// Whether the runtime answers right now.
    fn health_check(&self) -> BoxFut<'_, Result<(), TermError>>;
    fn send_request(&self, req: TermRequest) -> BoxFut<'_, Result<Ticket, TermError>>;
    fn await_response(
        &self,
        ticket: Ticket,
        timeout: Duration,
    ) -> BoxFut<'_, Result<OpResult, TermError>>;
    fn close(&self) -> BoxFut<'_, ()>;
    /// Re-establish a broken runtime and catch up.
    fn recover(&self) -> BoxFut<'_, Result<(), TermError>>;
    /// A terminal's AHP state (MCP resources).
    fn terminal_state(&self, terminal_id: &str) -> BoxFut<'_, Option<TerminalState>>;
    /// Every action the runtime's core dispatches from now on.
    fn follow(&self) -> broadcast::Receiver<Arc<ActionEnvelope>>;
}

/// Extra time beyond a request's own wait before an adapter call is abandoned.
const CALL_MARGIN: Duration = Duration::from_secs(15);

/// Routes interactive requests to adapters and remembers which adapter owns each terminal.
pub struct Runtime {
    pub local: Arc<LocalAdapter>,
    owners: Mutex<HashMap<String, AdapterType>>,
}

impl Runtime {
    pub fn new(local: Arc<LocalAdapter>) -> Runtime {
        Runtime {
            local,
            owners: Mutex::new(HashMap::new()),
        }
    }

    /// The adapter for a new interactive request.
    pub fn adapter_for_new(&self) -> Result<Arc<dyn Adapter>, TermError> {
        Ok(self.local.clone())
    }

    /// The adapter that owns `terminal_id` (the default one when it is not known here).
    pub fn adapter_for_terminal(&self, terminal_id: &str) -> Result<Arc<dyn Adapter>, TermError> {
        let owner = self
            .owners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(terminal_id)
            .copied();
        match owner {
            Some(AdapterType::Local) | None => Ok(self.local.clone()),
            Some(_) => self.adapter_for_new(),
        }
    }

    pub fn remember(&self, terminal_id: &str, adapter: AdapterType) {
        self.owners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(terminal_id.to_string(), adapter);
    }

    /// connect → send → await, within the request's own wait plus a margin.
    pub async fn call(
        &self,
        adapter: &Arc<dyn Adapter>,
        req: TermRequest,
        wait: Duration,
    ) -> Result<OpResult, TermError> {
        adapter.connect().await?;
        let ticket = adapter.send_request(req).await?;
        adapter.await_response(ticket, wait + CALL_MARGIN).await
    }

    /// Terminals across every adapter in use.
    pub async fn list(&self) -> Vec<(AdapterType, TermSummary)> {
        let adapter: Arc<dyn Adapter> = self.local.clone();
        match self.call(&adapter, TermRequest::List, Duration::ZERO).await {
            Ok(Ok(r)) => r
                .list
                .into_iter()
                .map(|s| (AdapterType::Local, s))
                .collect(),
            _ => Vec::new(),
        }
    }

    pub async fn shutdown(&self) {
        self.local.close().await;
    }
}
