//! The share of this server's log its clients receive (MCP logging). Each receiver is a
//! [`ClientLog`] with a level of its own: a connection's (a stdio client, an HTTP session),
//! set by `logging/setLevel`, or one request's (2026-07-28's per-request level).
//!
//! Which events reach which receiver: work done for a client runs inside a [`SINK_SPAN`]
//! naming that client's log, and an event inside such a span goes to that log alone — so
//! one HTTP session never receives what another session's commands logged, and one request
//! never receives another's. An event outside every such span (the server's own: a host
//! restarted, the listener started) goes to every connection's log at its level.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::format::{DefaultFields, Writer};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// The name of the span a client's work runs in, naming the log its events go to.
pub const SINK_SPAN: &str = "client_log";
/// The field of [`SINK_SPAN`] naming its log (from [`ClientLog::id`]).
pub const SINK_FIELD: &str = "log_sink";

/// Records one log may have waiting; beyond this, new ones are dropped (a client that
/// reads slowly must not slow the server down).
const QUEUE: usize = 256;

/// One event for a client.
#[derive(Debug, Clone)]
pub struct ClientRecord {
    pub level: Level,
    /// The event's message, then its other fields as `name=value`.
    pub text: String,
}

/// Whether a log hears events from outside every [`SINK_SPAN`] too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// A connection: its own work, and the server's.
    Connection,
    /// One request: its own work only.
    Request,
}

struct Sink {
    rank: u8,
    scope: Scope,
    tx: tokio::sync::mpsc::Sender<ClientRecord>,
}

/// Every log in use.
static SINKS: Mutex<Option<HashMap<u64, Sink>>> = Mutex::new(None);
/// The most detailed level any log asked for (0: none): the filter's fast answer.
static MOST_DETAILED: AtomicU8 = AtomicU8::new(0);
static NEXT_SINK: AtomicU64 = AtomicU64::new(1);

/// A log's rank: the more detailed, the higher; 0 receives nothing.
pub(super) const fn rank(level: Level) -> u8 {
    match level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

/// Whether an event at `level` may reach some log: the filter's question.
pub(super) fn wanted(level: Level) -> bool {
    rank(level) <= MOST_DETAILED.load(Ordering::Relaxed)
}

/// One client's (or one request's) log, receiving while it lives.
pub struct ClientLog {
    id: u64,
}

impl ClientLog {
    /// Start a log at `level` and above (`None`: nothing until set); its records arrive on
    /// the receiver.
    pub fn start(
        scope: Scope,
        level: Option<Level>,
    ) -> (ClientLog, tokio::sync::mpsc::Receiver<ClientRecord>) {
        let (tx, rx) = tokio::sync::mpsc::channel(QUEUE);
        let id = NEXT_SINK.fetch_add(1, Ordering::Relaxed);
        let rank = level.map(rank).unwrap_or(0);
        let mut sinks = crate::locks::lock(&SINKS);
        let map = sinks.get_or_insert_with(HashMap::new);
        map.insert(id, Sink { rank, scope, tx });
        settle(map);
        (ClientLog { id }, rx)
    }

    /// The value of the [`SINK_FIELD`] of the span the client's work runs in.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The most detailed level this log receives from now on (`None`: nothing).
    pub fn set_level(&self, level: Option<Level>) {
        let mut sinks = crate::locks::lock(&SINKS);
        let map = sinks.get_or_insert_with(HashMap::new);
        if let Some(s) = map.get_mut(&self.id) {
            s.rank = level.map(rank).unwrap_or(0);
        }
        settle(map);
    }
}

impl Drop for ClientLog {
    fn drop(&mut self) {
        let mut sinks = crate::locks::lock(&SINKS);
        let map = sinks.get_or_insert_with(HashMap::new);
        map.remove(&self.id);
        settle(map);
    }
}

fn settle(map: &HashMap<u64, Sink>) {
    let most = map.values().map(|s| s.rank).max().unwrap_or(0);
    MOST_DETAILED.store(most, Ordering::Relaxed);
}

/// Turns this crate's events into [`ClientRecord`]s for the logs they belong to.
pub(super) struct ClientLayer;

/// The log of a [`SINK_SPAN`], kept in the span's extensions.
struct SinkOfSpan(u64);

/// Reads a [`SINK_SPAN`]'s field.
#[derive(Default)]
struct SinkField(Option<u64>);

impl Visit for SinkField {
    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == SINK_FIELD {
            self.0 = Some(value);
        }
    }

    fn record_debug(&mut self, _field: &Field, _value: &dyn std::fmt::Debug) {}
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for ClientLayer {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut field = SinkField::default();
        attrs.record(&mut field);
        if let (Some(sink), Some(span)) = (field.0, ctx.span(id)) {
            span.extensions_mut().insert(SinkOfSpan(sink));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let level = rank(*event.metadata().level());
        // The innermost span naming a log: the client the work is done for.
        let owner = ctx.event_scope(event).and_then(|scope| {
            scope
                .into_iter()
                .find_map(|span| span.extensions().get::<SinkOfSpan>().map(|s| s.0))
        });
        let mut sinks = crate::locks::lock(&SINKS);
        let Some(map) = sinks.as_mut() else {
            return;
        };
        let before = map.len();
        map.retain(|_, s| !s.tx.is_closed());
        if map.len() != before {
            settle(map);
        }
        let to = |id: &u64, s: &Sink| match owner {
            Some(owner) => *id == owner,
            None => s.scope == Scope::Connection,
        } && level <= s.rank;
        let mut record: Option<ClientRecord> = None;
        for (id, s) in map.iter() {
            if !to(id, s) {
                continue;
            }
            // The message, then the other fields as name=value: the stderr logger's format.
            let r = record.get_or_insert_with(|| {
                let mut text = String::new();
                let _ = DefaultFields::new().format_fields(Writer::new(&mut text), event);
                ClientRecord {
                    level: *event.metadata().level(),
                    text,
                }
            });
            let _ = s.tx.try_send(r.clone());
        }
    }
}
