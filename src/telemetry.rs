//! Logging set-up shared by both binaries: everything goes to stderr, because stdout is
//! the MCP channel.

use tracing_subscriber::EnvFilter;

/// Install the stderr logger. `filter` uses tracing's EnvFilter syntax; when it is the
/// default and RUST_LOG is set, RUST_LOG wins.
pub fn init(filter: &str, default: &str) {
    let directive = match std::env::var("RUST_LOG") {
        Ok(v) if filter == default && !v.is_empty() => v,
        _ => filter.to_string(),
    };
    let env_filter = EnvFilter::try_new(&directive).unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false)
        .with_env_filter(env_filter)
        .try_init();
}
