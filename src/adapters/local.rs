//! The `local` adapter: the terminal core embedded in this process. No second process, no
//! page; each request runs as a task on the core, bounded by its deadline.

use std::sync::Arc;
use std::time::Duration;

use ahp_types::ActionEnvelope;
use ahp_types::state::{SnapshotState, TerminalState};
use tokio::sync::broadcast;
use tracing::Instrument;

use super::{Adapter, AdapterError, AdapterType, BoxFut, bounded};
use crate::ids;
use crate::terminal::Core;
use crate::terminal::ops::{self, ApprovalAnswer, ApprovalArgs, TermRequest, TermResponse};

pub struct LocalAdapter {
    pub core: Arc<Core>,
}

impl LocalAdapter {
    pub fn new(core: Arc<Core>) -> Arc<LocalAdapter> {
        Arc::new(LocalAdapter { core })
    }

    /// An embedded core set up as `cfg` says.
    pub fn start(cfg: crate::terminal::CoreConfig) -> Arc<LocalAdapter> {
        LocalAdapter::new(Core::new(cfg))
    }
}

impl Adapter for LocalAdapter {
    fn adapter_type(&self) -> AdapterType {
        AdapterType::Local
    }

    fn connect(&self) -> BoxFut<'_, Result<(), AdapterError>> {
        Box::pin(async { Ok(()) })
    }

    fn call<'a>(
        &'a self,
        req: TermRequest,
        trace_id: &'a str,
        _request_id: Option<&'a str>,
        timeout: Duration,
    ) -> BoxFut<'a, Result<TermResponse, AdapterError>> {
        let span = tracing::info_span!("terminal_op", trace_id = %trace_id);
        let core = self.core.clone();
        Box::pin(async move {
            let served = bounded(
                async move { ops::execute(&core, req, None).await }.instrument(span),
                timeout,
                "the terminal runtime did not answer in time",
            );
            Ok(served.await??)
        })
    }

    fn ask(
        &self,
        _question: ApprovalArgs,
        _timeout: Duration,
    ) -> BoxFut<'_, Result<ApprovalAnswer, AdapterError>> {
        // The embedded core has no page: nobody here can decide.
        Box::pin(async { Ok(ApprovalAnswer::unavailable()) })
    }

    fn close(&self) -> BoxFut<'_, ()> {
        Box::pin(async move { self.core.shutdown().await })
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
