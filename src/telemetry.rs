//! Logging set-up shared by both binaries: everything goes to stderr, because stdout is
//! the MCP channel. Besides stderr, this server's own events can be forwarded to a client
//! (MCP logging): a layer with a level of its own, set by the client, that hands records to
//! whoever registered with [`forward_to`] and drops them when nobody did or the queue is full.
//! A single request can ask for its own events too (2026-07-28's per-request log level): its
//! work runs inside a [`REQUEST_SPAN`] naming a sink from [`request_log`], and the events in
//! that span, at the level it asked, go to that sink alone.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::dynamic_filter_fn;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::format::{DefaultFields, Writer};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

/// The filter when neither `--log`/`PM_TERM_LOG` nor `RUST_LOG` says otherwise.
pub const DEFAULT_FILTER: &str = "info";

/// The AHP client library warns about every connection that ends without a closing
/// handshake (a host killed or restarted, a cut link): this server says the same in its own
/// words, with what happens next, so the library speaks only of errors unless the operator
/// names it in the filter.
const QUIETER_LIBRARIES: &str = "ahp::client=error";

/// Only this crate's events reach a client: never a dependency's, and so never the MCP
/// library's own events about sending them.
const CLIENT_TARGET: &str = "itmcp";

/// A client's level until it sets one: warnings and errors.
const DEFAULT_CLIENT_LEVEL: Level = Level::WARN;

/// The name of the span a request's work runs in when its client asked for its events.
pub const REQUEST_SPAN: &str = "client_request";
/// The field of [`REQUEST_SPAN`] naming its sink (from [`RequestLog::id`]).
pub const REQUEST_SINK_FIELD: &str = "log_sink";

/// Records one request's client may have waiting; beyond this, new ones are dropped.
const REQUEST_QUEUE: usize = 256;

/// One event for a client.
#[derive(Debug, Clone)]
pub struct ClientRecord {
    pub level: Level,
    /// The event's message, then its other fields as `name=value`.
    pub text: String,
}

/// Every client that receives records (one on stdio, one per session over HTTP).
static CLIENT_SINKS: Mutex<Vec<tokio::sync::mpsc::Sender<ClientRecord>>> = Mutex::new(Vec::new());
/// Whether any client is there: the filter's fast answer when none is.
static ANY_CLIENT: AtomicBool = AtomicBool::new(false);
static CLIENT_LEVEL: AtomicU8 = AtomicU8::new(rank(DEFAULT_CLIENT_LEVEL));

/// The requests in flight that asked for their events: each one's level and sink.
static REQUEST_SINKS: Mutex<Option<HashMap<u64, RequestSink>>> = Mutex::new(None);
/// The most detailed level any request in flight asked for (0: none asked): the filter's
/// fast answer.
static REQUEST_LEVEL: AtomicU8 = AtomicU8::new(0);
static NEXT_REQUEST_SINK: AtomicU64 = AtomicU64::new(1);

struct RequestSink {
    rank: u8,
    tx: tokio::sync::mpsc::Sender<ClientRecord>,
}

/// One request's share of the log, while it runs: dropping it ends the stream of records.
pub struct RequestLog {
    id: u64,
}

impl RequestLog {
    /// The value of the [`REQUEST_SINK_FIELD`] of the span the request's work runs in.
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for RequestLog {
    fn drop(&mut self) {
        let mut sinks = crate::locks::lock(&REQUEST_SINKS);
        let map = sinks.get_or_insert_with(HashMap::new);
        map.remove(&self.id);
        let most = map.values().map(|s| s.rank).max().unwrap_or(0);
        REQUEST_LEVEL.store(most, Ordering::Relaxed);
    }
}

/// Start collecting one request's events at `level` and above (`None`: nothing): they
/// arrive on the receiver while the [`RequestLog`] lives, and only events inside a
/// [`REQUEST_SPAN`] carrying its id count.
pub fn request_log(
    level: Option<Level>,
) -> (RequestLog, tokio::sync::mpsc::Receiver<ClientRecord>) {
    let (tx, rx) = tokio::sync::mpsc::channel(REQUEST_QUEUE);
    let id = NEXT_REQUEST_SINK.fetch_add(1, Ordering::Relaxed);
    let rank = level.map(rank).unwrap_or(0);
    let mut sinks = crate::locks::lock(&REQUEST_SINKS);
    sinks
        .get_or_insert_with(HashMap::new)
        .insert(id, RequestSink { rank, tx });
    REQUEST_LEVEL.fetch_max(rank, Ordering::Relaxed);
    (RequestLog { id }, rx)
}

const fn rank(level: Level) -> u8 {
    match level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

/// The most detailed level a client receives from now on (`None`: nothing).
pub fn set_client_level(level: Option<Level>) {
    CLIENT_LEVEL.store(level.map(rank).unwrap_or(0), Ordering::Relaxed);
}

/// Hand client records to `sink` as well, until its receiver goes away. Records beyond its
/// capacity are dropped rather than slowing the server down.
pub fn forward_to(sink: tokio::sync::mpsc::Sender<ClientRecord>) {
    crate::locks::lock(&CLIENT_SINKS).push(sink);
    ANY_CLIENT.store(true, Ordering::Relaxed);
}

/// Install the stderr logger. The operator's `--log`/`PM_TERM_LOG` wins; `RUST_LOG` is the
/// fallback (a shell-wide `RUST_LOG` must not mute what the operator asked for); then
/// [`DEFAULT_FILTER`]. A filter that does not parse is reported and the default used. The
/// client layer filters on its own, so a quiet stderr does not mute what a client asked for.
pub fn init(operator: Option<&str>) {
    let rust_log = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let directive = operator
        .map(str::to_string)
        .or(rust_log)
        .unwrap_or_else(|| DEFAULT_FILTER.to_string());
    let directive = if directive.contains("ahp") {
        directive
    } else {
        format!("{directive},{QUIETER_LIBRARIES}")
    };
    let env_filter = EnvFilter::try_new(&directive).unwrap_or_else(|e| {
        eprintln!("log filter {directive:?} does not parse ({e}); using {DEFAULT_FILTER}");
        EnvFilter::new(DEFAULT_FILTER)
    });
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false)
        .with_filter(env_filter);
    // Asked at every event (the levels change at run time), but only at this crate's call
    // sites: every other one is never looked at by this layer. Its spans are seen only to
    // find a request's sink.
    let client = ClientLayer.with_filter(
        dynamic_filter_fn(|meta, _| {
            if !meta.target().starts_with(CLIENT_TARGET) {
                return false;
            }
            if meta.is_span() {
                return meta.name() == REQUEST_SPAN;
            }
            let r = rank(*meta.level());
            (r <= CLIENT_LEVEL.load(Ordering::Relaxed) && ANY_CLIENT.load(Ordering::Relaxed))
                || r <= REQUEST_LEVEL.load(Ordering::Relaxed)
        })
        .with_callsite_filter(|meta| {
            if meta.target().starts_with(CLIENT_TARGET) {
                Interest::sometimes()
            } else {
                Interest::never()
            }
        }),
    );
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(client)
        .try_init();
}

/// Turns this crate's events into [`ClientRecord`]s for the registered sinks.
struct ClientLayer;

/// The sink of a [`REQUEST_SPAN`], kept in the span's extensions.
struct SinkOfSpan(u64);

/// Reads a [`REQUEST_SPAN`]'s sink field.
#[derive(Default)]
struct SinkField(Option<u64>);

impl Visit for SinkField {
    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == REQUEST_SINK_FIELD {
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
        let request = ctx.event_scope(event).and_then(|scope| {
            scope
                .into_iter()
                .find_map(|span| span.extensions().get::<SinkOfSpan>().map(|s| s.0))
        });
        let to_clients =
            ANY_CLIENT.load(Ordering::Relaxed) && level <= CLIENT_LEVEL.load(Ordering::Relaxed);
        let to_request = request.filter(|_| level <= REQUEST_LEVEL.load(Ordering::Relaxed));
        if !to_clients && to_request.is_none() {
            return;
        }
        // The message, then the other fields as name=value: the stderr logger's own format.
        let mut text = String::new();
        let _ = DefaultFields::new().format_fields(Writer::new(&mut text), event);
        let record = ClientRecord {
            level: *event.metadata().level(),
            text,
        };
        if let Some(id) = to_request
            && let Some(sink) = crate::locks::lock(&REQUEST_SINKS)
                .as_ref()
                .and_then(|m| m.get(&id))
            && level <= sink.rank
        {
            let _ = sink.tx.try_send(record.clone());
        }
        if to_clients {
            let mut sinks = crate::locks::lock(&CLIENT_SINKS);
            sinks.retain(|s| !s.is_closed());
            for s in sinks.iter() {
                let _ = s.try_send(record.clone());
            }
            ANY_CLIENT.store(!sinks.is_empty(), Ordering::Relaxed);
        }
    }
}
