//! MCP logging for the negotiated protocol (2025-11-25 still has it): `logging/setLevel`
//! chooses how much of this server's own log a client receives as `notifications/message`.
//! Until it asks, it receives warnings and errors. Deprecated by a later protocol revision,
//! hence the `allow(deprecated)` on what touches its types.
#![allow(deprecated)]

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::json;
use tracing::Level;

use crate::telemetry::{self, ClientRecord};

/// Records waiting for the client; beyond this, new ones are dropped (a client that reads
/// slowly must not slow the server down).
const QUEUE: usize = 256;

/// The `logger` of every message.
const LOGGER: &str = "interactive-terminal-mcp";

/// Start forwarding this server's log records to `peer`.
pub fn attach(peer: Peer<RoleServer>) {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<ClientRecord>(QUEUE);
    telemetry::forward_to(tx);
    tokio::spawn(async move {
        while let Some(r) = rx.recv().await {
            let param = LoggingMessageNotificationParam::new(level_of(r.level), json!(r.text))
                .with_logger(LOGGER);
            if peer.notify_logging_message(param).await.is_err() {
                break;
            }
        }
    });
}

/// `logging/setLevel`: the least severe level the client receives from now on.
pub fn set_level(level: LoggingLevel) {
    telemetry::set_client_level(match level {
        LoggingLevel::Debug => Level::DEBUG,
        LoggingLevel::Info | LoggingLevel::Notice => Level::INFO,
        LoggingLevel::Warning => Level::WARN,
        _ => Level::ERROR,
    });
}

fn level_of(level: Level) -> LoggingLevel {
    match level {
        Level::ERROR => LoggingLevel::Error,
        Level::WARN => LoggingLevel::Warning,
        Level::INFO => LoggingLevel::Info,
        _ => LoggingLevel::Debug,
    }
}
