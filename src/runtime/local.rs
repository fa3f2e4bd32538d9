//! The `local` adapter: the terminal core embedded in this process. No second process, no
//! page; requests run as tasks on the core and are awaited by ticket.

use std::sync::Arc;
use std::time::Duration;

use ahp_types::ActionEnvelope;
use ahp_types::state::{SnapshotState, TerminalState};
use tokio::sync::broadcast;
use tracing::Instrument;

use super::{Adapter, AdapterType, BoxFut, Ticket, Tickets};
use crate::contract::TermError;
use crate::ids;
use crate::terminal::Core;
use crate::terminal::ops::{self, OpResult, TermRequest};

pub struct LocalAdapter {
    pub core: Arc<Core>,
    tickets: Tickets<OpResult>,
}

impl LocalAdapter {
    pub fn new(core: Arc<Core>) -> Arc<LocalAdapter> {
        Arc::new(LocalAdapter {
            core,
            tickets: Tickets::default(),
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
        _request_id: Option<&str>,
    ) -> BoxFut<'_, Result<Ticket, TermError>> {
        let span = tracing::info_span!("terminal_op", trace_id = %trace_id);
        Box::pin(async move {
            let core = self.core.clone();
            let work =
                tokio::spawn(async move { ops::execute(&core, req, None).await }.instrument(span));
            Ok(self.tickets.start(work))
        })
    }

    fn await_response(
        &self,
        ticket: Ticket,
        timeout: Duration,
    ) -> BoxFut<'_, Result<OpResult, TermError>> {
        Box::pin(async move {
            self.tickets
                .wait(
                    ticket,
                    timeout,
                    "the terminal runtime did not answer in time",
                )
                .await
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
