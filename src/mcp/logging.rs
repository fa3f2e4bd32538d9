//! MCP logging. Up to 2025-11-25, `logging/setLevel` chooses how much of this server's own
//! log a client receives as `notifications/message`; until it asks, it receives warnings and
//! errors. From 2026-07-28 there is no such setting: a request carries the level it wants in
//! its `_meta` (`io.modelcontextprotocol/logLevel`), and receives the events of its own work
//! at that level and above, before its answer — and nothing when it does not ask. Deprecated
//! by the later revisions, hence the `allow(deprecated)` on what touches its types.
#![allow(deprecated)]

use std::future::Future;

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, RequestMetaObject};
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde_json::json;
use tracing::{Instrument, Level};

use crate::telemetry::{self, ClientRecord};

/// Records waiting for the client; beyond this, new ones are dropped (a client that reads
/// slowly must not slow the server down).
const QUEUE: usize = 256;

/// The `logger` of every message.
const LOGGER: &str = "interactive-terminal-mcp";

/// The `_meta` key of a 2026-07-28 request's log level.
const LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";

/// The levels a request may ask for, as the error for any other value lists them.
const LEVELS: &str = "debug, info, notice, warning, error, critical, alert, emergency";

/// Start forwarding this server's log records to `peer`.
pub fn attach(peer: Peer<RoleServer>) {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<ClientRecord>(QUEUE);
    telemetry::forward_to(tx);
    tokio::spawn(async move {
        while let Some(r) = rx.recv().await {
            if send(&peer, r).await.is_err() {
                break;
            }
        }
    });
}

/// `logging/setLevel`: the least severe level the client receives from now on.
pub fn set_level(level: LoggingLevel) {
    telemetry::set_client_level(least_severe(level));
}

/// The level a 2026-07-28 request asks for in its `_meta`, if any. A value that is not a
/// level is refused (invalid params), as the protocol's schema would refuse it, rather than
/// read as "nothing asked".
pub fn requested_level(meta: &RequestMetaObject) -> Result<Option<LoggingLevel>, McpError> {
    match (meta.get(LEVEL_KEY), meta.log_level()) {
        (None, _) => Ok(None),
        (Some(_), Some(level)) => Ok(Some(level)),
        (Some(v), None) => Err(McpError::invalid_params(
            format!("_meta[{LEVEL_KEY:?}] is {v}, not a log level: one of {LEVELS}"),
            None,
        )),
    }
}

/// Run one request's `work`; when its client asked for a level (2026-07-28's per-request
/// log level), the events of that work at that level and above are sent to it as they
/// happen, all of them before the answer.
pub async fn in_request<F: Future>(
    level: Option<LoggingLevel>,
    peer: &Peer<RoleServer>,
    work: F,
) -> F::Output {
    let Some(level) = level else {
        return work.await;
    };
    let (log, mut records) = telemetry::request_log(least_severe(level));
    let span = tracing::info_span!(telemetry::REQUEST_SPAN, log_sink = log.id());
    let work = async move {
        let out = work.instrument(span).await;
        // The sink closes: the forwarding below ends once it has sent what is left.
        drop(log);
        out
    };
    let forward = async {
        while let Some(r) = records.recv().await {
            let _ = send(peer, r).await;
        }
    };
    let (out, ()) = tokio::join!(work, forward);
    out
}

async fn send(peer: &Peer<RoleServer>, r: ClientRecord) -> Result<(), rmcp::ServiceError> {
    let param =
        LoggingMessageNotificationParam::new(level_of(r.level), json!(r.text)).with_logger(LOGGER);
    peer.notify_logging_message(param).await
}

/// The least severe of this server's levels that is at least as severe as the client's
/// `level`: a client asking for `notice` gets warnings, not info. `None` when the client
/// asked for more severe than this server's errors (`critical` and above).
fn least_severe(level: LoggingLevel) -> Option<Level> {
    match level {
        LoggingLevel::Debug => Some(Level::DEBUG),
        LoggingLevel::Info => Some(Level::INFO),
        LoggingLevel::Notice | LoggingLevel::Warning => Some(Level::WARN),
        LoggingLevel::Error => Some(Level::ERROR),
        LoggingLevel::Critical | LoggingLevel::Alert | LoggingLevel::Emergency => None,
    }
}

fn level_of(level: Level) -> LoggingLevel {
    match level {
        Level::ERROR => LoggingLevel::Error,
        Level::WARN => LoggingLevel::Warning,
        Level::INFO => LoggingLevel::Info,
        _ => LoggingLevel::Debug,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client never receives a record less severe than it asked for: `notice` is above
    /// this server's info, and nothing here is as severe as `critical`.
    #[test]
    fn a_level_maps_to_the_least_severe_of_ours_at_or_above_it() {
        assert_eq!(least_severe(LoggingLevel::Debug), Some(Level::DEBUG));
        assert_eq!(least_severe(LoggingLevel::Info), Some(Level::INFO));
        assert_eq!(least_severe(LoggingLevel::Notice), Some(Level::WARN));
        assert_eq!(least_severe(LoggingLevel::Error), Some(Level::ERROR));
        for l in [
            LoggingLevel::Critical,
            LoggingLevel::Alert,
            LoggingLevel::Emergency,
        ] {
            assert_eq!(least_severe(l), None);
        }
    }
}
