//! Runtime adapters (docs/contract.md, "Interactive"; docs/bridge-protocol.md): where interactive terminals live and how requests
//! reach them. Every adapter has the one shape of [`Adapter`] and serves the same terminal operations, so
//! the interactive contract behaves the same whichever adapter serves it.

pub mod changes;
pub mod discovery;
pub mod error;
pub mod local;
pub mod mode;
pub mod paths;
pub mod remote;

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ahp_types::ActionEnvelope;
use ahp_types::state::TerminalState;
use tokio::sync::broadcast;

use crate::terminal::ops::{ApprovalAnswer, ApprovalArgs, TermRequest, TermResponse, TermSummary};

use crate::locks::lock;
pub use changes::Change;
use changes::Changes;
pub use error::{AdapterError, Failure};

/// What the adapters speak: the terminal operations and their answers, as every adapter
/// serves them. The contract service uses these names and never reaches into the core.
pub mod ops {
    pub use crate::terminal::CommandRecord;
    pub use crate::terminal::CoreConfig;
    pub use crate::terminal::protocol::*;
}
pub use local::LocalAdapter;
pub use mode::AdapterInputs;
use remote::{RemoteAdapter, Target};

pub type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

/// Run `work` as a task of its own (a panic in it is an internal error for this request, not
/// a lost answer) and wait at most `timeout`: then a timeout saying `late`, and the work is
/// aborted, never left running unobserved.
pub async fn bounded<T: Send + 'static>(
    work: impl Future<Output = T> + Send + 'static,
    timeout: Duration,
    late: &str,
) -> Result<T, AdapterError> {
    let task = tokio::spawn(work);
    let abort = task.abort_handle();
    match tokio::time::timeout(timeout, task).await {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => Err(AdapterError::internal(e)),
        Err(_) => {
            abort.abort();
            Err(AdapterError::new(Failure::Timeout, late)
                .with(|f| f.timeout_ms = Some(timeout.as_millis() as u64)))
        }
    }
}

/// The adapter interface: every adapter serves the same operations.
pub trait Adapter: Send + Sync {
    fn adapter_type(&self) -> AdapterType;
    /// Establish the adapter (launch, connect, handshake) if it is not up.
    fn connect(&self) -> BoxFut<'_, Result<(), AdapterError>>;
    /// Serve `req`, answered within `timeout` (else a timeout). `trace_id` is the
    /// contract request's, carried unchanged into the adapter's logs (and across the bridge)
    /// so one id follows the request everywhere. `request_id` (the contract's) makes a
    /// retried request the same operation: a host runs it once and answers every retry with
    /// that run.
    fn call<'a>(
        &'a self,
        req: TermRequest,
        trace_id: &'a str,
        request_id: Option<&'a str>,
        timeout: Duration,
    ) -> BoxFut<'a, Result<TermResponse, AdapterError>>;
    /// Ask the people watching this adapter (a host's page) to decide on a command, within
    /// `timeout`; an adapter nobody watches answers `unavailable`.
    fn ask(
        &self,
        question: ApprovalArgs,
        timeout: Duration,
    ) -> BoxFut<'_, Result<ApprovalAnswer, AdapterError>>;
    /// Take back the question asked for contract request `request_id` (its call was
    /// cancelled), so the people watching no longer see it; best effort.
    fn withdraw(&self, _request_id: &str) -> BoxFut<'_, ()> {
        Box::pin(async {})
    }
    fn close(&self) -> BoxFut<'_, ()>;
    /// A terminal's AHP state (MCP resources).
    fn terminal_state(&self, terminal_id: &str) -> BoxFut<'_, Option<TerminalState>>;
    /// Every action the adapter's core dispatches from now on.
    fn follow(&self) -> broadcast::Receiver<Arc<ActionEnvelope>>;
    /// The terminals that became unreachable together from now on: a host's, when the
    /// connection to it ended. An adapter whose terminals are its own has none.
    fn cut_off(&self) -> Option<broadcast::Receiver<Vec<String>>> {
        None
    }
}

/// Extra time beyond a request's own wait before an adapter call is abandoned.
const CALL_MARGIN: Duration = Duration::from_secs(15);
/// Longest `list` waits on one adapter (an unreachable host lists nothing).
const LIST_TIMEOUT: Duration = Duration::from_secs(3);

/// Routes interactive requests to adapters and remembers which adapter owns each terminal.
pub struct Adapters {
    pub local: Arc<LocalAdapter>,
    inputs: AdapterInputs,
    bundled: tokio::sync::Mutex<BTreeMap<Option<String>, Arc<RemoteAdapter>>>,
    bridge: tokio::sync::Mutex<Option<Arc<RemoteAdapter>>>,
    owners: Mutex<HashMap<String, Arc<dyn Adapter>>>,
    changes: Changes,
}

impl Adapters {
    pub fn new(local: Arc<LocalAdapter>, inputs: AdapterInputs) -> Adapters {
        let rt = Adapters {
            local: local.clone(),
            inputs,
            bundled: tokio::sync::Mutex::new(BTreeMap::new()),
            bridge: tokio::sync::Mutex::new(None),
            owners: Mutex::new(HashMap::new()),
            changes: Changes::default(),
        };
        rt.forward(local);
        rt
    }

    /// Pass an adapter's changes into the merged stream once somebody follows it.
    fn forward(&self, adapter: Arc<dyn Adapter>) {
        self.changes.forward(adapter);
    }

    /// Every adapter's changes, merged (MCP resource updates).
    pub fn follow(&self) -> broadcast::Receiver<Change> {
        self.changes.follow()
    }

    pub fn inputs(&self) -> &AdapterInputs {
        &self.inputs
    }

    /// The adapter for a new interactive request (docs/contract.md, "Interactive").
    pub async fn adapter_for_new(
        &self,
        adapter_override: Option<&str>,
    ) -> Result<Arc<dyn Adapter>, AdapterError> {
        match mode::resolve(adapter_override, &self.inputs)? {
            AdapterType::Local => Ok(self.local.clone()),
            AdapterType::Bundled => {
                let configured = self.inputs.binary.clone();
                if let Some(c) = &configured {
                    discovery::candidates(Some(c))?;
                }
                let mut set = self.bundled.lock().await;
                if let Some(a) = set.get(&configured) {
                    return Ok(a.clone());
                }
                let a = RemoteAdapter::new(
                    AdapterType::Bundled,
                    Target::Bundled {
                        configured: configured.clone(),
                        port: self.inputs.bundled_port,
                        spawn_timeout: self.inputs.spawn_timeout,
                        keep_host: self.inputs.keep_host,
                    },
                    self.inputs.trace_bridge,
                );
                self.forward(a.clone());
                set.insert(configured, a.clone());
                Ok(a)
            }
            AdapterType::ContainerBridge => {
                let spec = self.inputs.bridge.clone()?;
                let mut b = self.bridge.lock().await;
                if let Some(a) = b.as_ref() {
                    return Ok(a.clone());
                }
                let a = RemoteAdapter::new(
                    AdapterType::ContainerBridge,
                    Target::Bridge(spec),
                    self.inputs.trace_bridge,
                );
                self.forward(a.clone());
                *b = Some(a.clone());
                Ok(a)
            }
        }
    }

    /// With the GUI: launch the host now (not at the first interactive request) so a person
    /// can open the page before anything needs approving; its one-time sign-in link.
    pub async fn start_gui(&self) -> Result<Option<String>, AdapterError> {
        let adapter = self.adapter_for_new(None).await?;
        adapter.connect().await?;
        let configured = self.inputs.binary.clone();
        let bundled = self.bundled.lock().await.get(&configured).cloned();
        Ok(match bundled {
            Some(b) => b.login_link().await,
            None => None,
        })
    }

    /// The host whose page a person watches, when the operator set one up (the GUI, or the
    /// container's host): approvals are asked there whichever adapter runs the command.
    pub async fn page_host(&self) -> Option<Arc<dyn Adapter>> {
        match mode::resolve(None, &self.inputs) {
            Ok(AdapterType::Bundled | AdapterType::ContainerBridge) => {
                self.adapter_for_new(None).await.ok()
            }
            _ => None,
        }
    }

    /// The adapter that owns `terminal_id`, or the default one when it is not known here.
    pub async fn adapter_for_terminal(
        &self,
        terminal_id: &str,
    ) -> Result<Arc<dyn Adapter>, AdapterError> {
        let owner = lock(&self.owners).get(terminal_id).cloned();
        match owner {
            Some(a) => Ok(a),
            None => self.adapter_for_new(None).await,
        }
    }

    pub fn remember(&self, terminal_id: &str, adapter: Arc<dyn Adapter>) {
        lock(&self.owners).insert(terminal_id.to_string(), adapter);
    }

    /// connect → send → await, within the request's own wait plus a margin.
    pub async fn call(
        &self,
        adapter: &Arc<dyn Adapter>,
        req: TermRequest,
        trace_id: &str,
        request_id: Option<&str>,
        wait: Duration,
    ) -> Result<TermResponse, AdapterError> {
        adapter.connect().await?;
        adapter
            .call(req, trace_id, request_id, wait + CALL_MARGIN)
            .await
    }

    /// Ask `adapter`'s page to decide, within `timeout`.
    pub async fn ask(
        &self,
        adapter: &Arc<dyn Adapter>,
        question: ApprovalArgs,
        timeout: Duration,
    ) -> Result<ApprovalAnswer, AdapterError> {
        adapter.connect().await?;
        adapter.ask(question, timeout + CALL_MARGIN).await
    }

    /// Adapters in use: the local one, and remote ones that were ever connected.
    async fn adapters(&self) -> Vec<Arc<dyn Adapter>> {
        let mut v: Vec<Arc<dyn Adapter>> = vec![self.local.clone()];
        v.extend(
            self.bundled
                .lock()
                .await
                .values()
                .map(|a| a.clone() as Arc<dyn Adapter>),
        );
        if let Some(b) = self.bridge.lock().await.as_ref() {
            v.push(b.clone());
        }
        v
    }

    /// Terminals across every adapter in use (an unreachable host lists nothing).
    pub async fn list(&self) -> Vec<(AdapterType, TermSummary)> {
        let mut out = Vec::new();
        for a in self.adapters().await {
            let listed = tokio::time::timeout(
                LIST_TIMEOUT,
                self.call(&a, TermRequest::List, "", None, Duration::ZERO),
            )
            .await;
            if let Ok(Ok(TermResponse::List { terminals })) = listed {
                // One lock for the whole list; a terminal already known is not re-inserted.
                let mut owners = lock(&self.owners);
                for t in terminals {
                    let known = owners
                        .get(&t.terminal_id)
                        .is_some_and(|o| Arc::ptr_eq(o, &a));
                    if !known {
                        owners.insert(t.terminal_id.clone(), a.clone());
                    }
                    out.push((a.adapter_type(), t));
                }
            }
        }
        out
    }

    pub async fn shutdown(&self) {
        for a in self.adapters().await {
            a.close().await;
        }
    }
}
