//! Logging set-up shared by both binaries: everything goes to stderr, because stdout is
//! the MCP channel. Besides stderr, this server's own events can be forwarded to a client
//! (MCP logging): a layer with a level of its own, set by the client, that hands records to
//! whoever registered with [`forward_to`] and drops them when nobody did or the queue is full.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use tracing::subscriber::Interest;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::dynamic_filter_fn;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::format::{DefaultFields, Writer};
use tracing_subscriber::layer::{Context, SubscriberExt};
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

const fn rank(level: Level) -> u8 {
    match level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

/// The most detailed level a client receives from now on.
pub fn set_client_level(level: Level) {
    CLIENT_LEVEL.store(rank(level), Ordering::Relaxed);
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
    // Asked at every event (the level changes at run time), but only at this crate's call
    // sites: every other one is never looked at by this layer.
    let client = ClientLayer.with_filter(
        dynamic_filter_fn(|meta, _| {
            meta.target().starts_with(CLIENT_TARGET)
                && rank(*meta.level()) <= CLIENT_LEVEL.load(Ordering::Relaxed)
                && ANY_CLIENT.load(Ordering::Relaxed)
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

/// Turns this crate's events into [`ClientRecord`]s for the registered sink.
struct ClientLayer;

impl<S: Subscriber> Layer<S> for ClientLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        // The message, then the other fields as name=value: the stderr logger's own format.
        let mut text = String::new();
        let _ = DefaultFields::new().format_fields(Writer::new(&mut text), event);
        let record = ClientRecord {
            level: *event.metadata().level(),
            text,
        };
        let mut sinks = crate::locks::lock(&CLIENT_SINKS);
        sinks.retain(|s| !s.is_closed());
        for s in sinks.iter() {
            let _ = s.try_send(record.clone());
        }
        ANY_CLIENT.store(!sinks.is_empty(), Ordering::Relaxed);
    }
}
