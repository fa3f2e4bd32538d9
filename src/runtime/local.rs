//! The `local` adapter: the terminal core embedded in this process. No second process, no
//! page; requests run as tasks on the core and are awaited by ticket.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ahp_types::ActionEnvelope;
use ahp_types::state::{SnapshotState, TerminalState};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tracing::Instrument;

use super::{Adapter, AdapterType, BoxFut, Ticket};
use crate::contract::{ErrorCode, TermError};
use crate::ids;
use crate::terminal::Core;
use crate::terminal::ops::{self, OpResult, TermRequest};

pub struct LocalAdapter {
    pub core: Arc<Core>,
    next: AtomicU64,
    pending: Mutex<HashMap<u64, JoinHandle<OpResult>>>,
}

impl LocalAdapter {
    pub fn new(core: Arc<Core>) -> Arc<LocalAdapter> {
        Arc::new(LocalAdapter {
            core,
            next: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
        })
    }
}

impl Adapter for LocalAdapter {
    fn adapter_type(&self) -> AdapterType {
        AdapterType::Local
    }

    fn connect(&self) -> BoxFut<'_, Result<(), TermError>> {
        Box::pin(async { Ok(()) })
    }

    fn health_check(&self) -> BoxFut<'_, Result<(), TermError>> {
        Box::pin(async { Ok(()) })
    }

    fn send_request(
        &self,
        req: TermRequest,
        trace_id: &str,
    ) -> BoxFut<'_, Result<Ticket, TermError>> {
        let span = tracing::info_span!("terminal_op", trace_id = %trace_id);
        Box::pin(async move {
            let id = self.next.fetch_add(1, Ordering::Relaxed);
            let core = self.core.clone();
            let handle =
                tokio::spawn(async move { ops::execute(&core, req, None).await }.instrument(span));
            self.pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(id, handle);
            Ok(Ticket(id))
        })
    }

    fn await_response(
        &self,
        ticket: Ticket,
        timeout: Duration,
    ) -> BoxFut<'_, Result<OpResult, TermError>> {
        Box::pin(async move {
            let handle = self
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&ticket.0);
            let Some(handle) = handle else {
                return Err(TermError::internal(format!("unknown ticket {}", ticket.0)));
            };
            let abort = handle.abort_handle();
            match tokio::time::timeout(timeout, handle).await {
                Ok(Ok(r)) => Ok(r),
                Ok(Err(e)) => Err(TermError::internal(e)),
                Err(_) => {
                    abort.abort();
                    Err(TermError::new(
                        ErrorCode::Timeout,
                        "the terminal runtime did not answer in time",
                    )
                    .with("timeout_ms", serde_json::json!(timeout.as_millis() as u64)))
                }
            }
        })
    }

    fn close(&self) -> BoxFut<'_, ()> {
        Box::pin(async move { self.core.shutdown().await })
    }

    fn recover(&self) -> BoxFut<'_, Result<(), TermError>> {
        Box::pin(async { Ok(()) })
    }

    fn terminal_state(&self, terminal_id: &str) -> BoxFut<'_, Option<TerminalState>> {
        let uri = ids::terminal_uri(terminal_id);
        Box::pin(async move {
            match self.core.snapshot(&uri)?.state {
                SnapshotState::Terminal(t) => Some(*t),
                _ => None,
            }
        })
    }

    fn follow(&self) -> broadcast::Receiver<Arc<ActionEnvelope>> {
        self.core.follow()
    }
}
