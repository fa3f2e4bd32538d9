//! Logging set-up shared by both binaries: everything goes to stderr, because stdout is
//! the MCP channel. Besides stderr, this server's own events can be forwarded to its
//! clients (MCP logging, [`client`]): a layer of its own, with the levels the clients set,
//! so a quiet stderr does not mute what a client asked for.

mod client;

pub use client::{ClientLog, ClientRecord, SINK_FIELD, SINK_SPAN, Scope};

use tracing::subscriber::Interest;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::dynamic_filter_fn;
use tracing_subscriber::layer::SubscriberExt;
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
    // find whose log an event belongs to.
    let client = client::ClientLayer.with_filter(
        dynamic_filter_fn(|meta, _| {
            if !meta.target().starts_with(CLIENT_TARGET) {
                return false;
            }
            match meta.is_span() {
                true => meta.name() == SINK_SPAN,
                false => client::wanted(*meta.level()),
            }
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
