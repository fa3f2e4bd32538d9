//! MCP logging. Up to 2025-11-25, `logging/setLevel` chooses how much of this server's own
//! log a connection receives as `notifications/message`; until it asks, it receives
//! warnings and errors. Over HTTP each session has its own level and receives its own
//! commands' events and the server's, never another session's. From 2026-07-28 there is no
//! such setting: a request carries the level it wants in its `_meta`
//! (`io.modelcontextprotocol/logLevel`), and receives the events of its own work at that
//! level and above, before its answer — and nothing when it does not ask. Deprecated by the
//! later revisions, hence the `allow(deprecated)` on what touches its types.
#![allow(deprecated)]

use std::future::Future;
use std::sync::{Arc, OnceLock};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, RequestMetaObject};
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde_json::json;
use tracing::{Instrument, Level};

use crate::telemetry::{ClientLog, ClientRecord, SINK_SPAN, Scope};

/// The `logger` of every message.
const LOGGER: &str = "interactive-terminal-mcp";

/// A connection's level until it sets one: warnings and errors.
const DEFAULT_LEVEL: Level = Level::WARN;

/// The `_meta` key of a 2026-07-28 request's log level.
const LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";

/// The levels a request may ask for, as the error for any other value lists them.
const LEVELS: &str = "debug, info, notice, warning, error, critical, alert, emergency";

/// One connection's log (a stdio client's, an HTTP session's), made when it is first needed.
#[derive(Clone, Default)]
pub struct ConnectionLog(Arc<OnceLock<ClientLog>>);

impl ConnectionLog {
    /// The log, forwarding to `peer` from its first use.
    fn get(&self, peer: &Peer<RoleServer>) -> &ClientLog {
        self.0.get_or_init(|| {
            let (log, mut records) = ClientLog::start(Scope::Connection, Some(DEFAULT_LEVEL));
            let peer = peer.clone();
            tokio::spawn(async move {
                while let Some(r) = records.recv().await {
                    if send(&peer, r).await.is_err() {
                        break;
                    }
                }
            });
            log
        })
    }

    /// Start forwarding this server's log records to `peer` (the connection is initialized).
    pub fn attach(&self, peer: &Peer<RoleServer>) {
        self.get(peer);
    }

    /// `logging/setLevel`: the least severe level the connection receives from now on.
    pub fn set_level(&self, peer: &Peer<RoleServer>, level: LoggingLevel) {
        self.get(peer).set_level(least_severe(level));
    }

    /// The id of this connection's log once it has one.
    fn id(&self) -> Option<u64> {
        self.0.get().map(ClientLog::id)
    }
}

/// Whose log a request's events go to.
pub enum Whose<'a> {
    /// Wherever events outside any request go: the one connection of a stdio server.
    Unscoped,
    /// This connection's only (an HTTP session's, beside the other sessions).
    Connection(&'a ConnectionLog),
    /// The request's own, at the level it asked (2026-07-28).
    Request(LoggingLevel),
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

/// Run one request's `work` with its events going to `whose` log. A request's own log
/// receives them as they happen, all of them before the answer.
pub async fn in_request<F: Future>(
    whose: Whose<'_>,
    peer: &Peer<RoleServer>,
    work: F,
) -> F::Output {
    let level = match whose {
        Whose::Unscoped => return work.await,
        Whose::Connection(log) => {
            let Some(id) = log.id() else {
                return work.await;
            };
            return work
                .instrument(tracing::info_span!(SINK_SPAN, log_sink = id))
                .await;
        }
        Whose::Request(level) => level,
    };
    let (log, mut records) = ClientLog::start(Scope::Request, least_severe(level));
    let span = tracing::info_span!(SINK_SPAN, log_sink = log.id());
    let work = async move {
        let out = work.instrument(span).await;
        // The log closes: the forwarding below ends once it has sent what is left.
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
