//! Logging set-up shared by both binaries: everything goes to stderr, because stdout is
//! the MCP channel.

use tracing_subscriber::EnvFilter;

/// The filter when neither `--log`/`PM_TERM_LOG` nor `RUST_LOG` says otherwise.
pub const DEFAULT_FILTER: &str = "info";

/// Install the stderr logger. The operator's `--log`/`PM_TERM_LOG` wins; `RUST_LOG` is the
/// fallback (a shell-wide `RUST_LOG` must not mute what the operator asked for); then
/// [`DEFAULT_FILTER`]. A filter that does not parse is reported and the default used.
pub fn init(operator: Option<&str>) {
    let rust_log = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let directive = operator
        .map(str::to_string)
        .or(rust_log)
        .unwrap_or_else(|| DEFAULT_FILTER.to_string());
    let env_filter = EnvFilter::try_new(&directive).unwrap_or_else(|e| {
        eprintln!("log filter {directive:?} does not parse ({e}); using {DEFAULT_FILTER}");
        EnvFilter::new(DEFAULT_FILTER)
    });
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false)
        .with_env_filter(env_filter)
        .try_init();
}
