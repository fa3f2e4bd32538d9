//! `--check-config`: the server's own verdict on its configuration, so that a container
//! entrypoint (or an operator) asks the one validator there is instead of re-implementing it.
//!
//! A value the server refuses at start (a bad `PM_TERM_ADAPTER_MODE`, a boolean that is not
//! one) never reaches this point: argument parsing answers it with status 2 and names the
//! variable. What is left is what the server would start with but not be able to use.

use itmcp::adapters::AdapterType;
use itmcp::adapters::mode;
use itmcp::config::Config;

/// Exit status: the configuration is usable.
pub const OK: i32 = 0;
/// Exit status: the server starts, but interactive requests would be refused.
pub const UNUSABLE: i32 = 1;

/// Print what the server would do with `cfg` on stderr, and the exit status to end with.
pub fn report(name: &str, cfg: &Config, withheld: &[String]) -> i32 {
    let adapter = match mode::resolve(None, &cfg.adapters) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{name}: ERROR: {e}");
            return UNUSABLE;
        }
    };
    eprintln!(
        "{name}: interactive terminals use the {} adapter",
        adapter.as_str()
    );
    if withheld.is_empty() {
        eprintln!(
            "{name}: no credential variable of this environment is withheld from commands and terminals"
        );
    } else {
        eprintln!(
            "{name}: commands and terminals do not inherit {} ({}=NAME;NAME keeps them)",
            withheld.join(", "),
            itmcp::cli::KEEP_ENV
        );
    }
    match &cfg.http {
        Some(h) => eprintln!(
            "{name}: MCP over streamable HTTP at http://{}{} (a service per session)",
            h.addr,
            itmcp::mcp::http::MCP_PATH
        ),
        None => eprintln!("{name}: MCP over stdio"),
    }
    if adapter == AdapterType::ContainerBridge {
        match &cfg.adapters.bridge {
            Ok(b) => {
                eprintln!(
                    "{name}: container bridge: host aliases [{}], port {}, connect timeout {} ms, request timeout {} ms",
                    b.aliases.join(", "),
                    b.port,
                    b.connect_timeout_ms,
                    b.request_timeout_ms
                );
                if b.path_map.is_empty() {
                    eprintln!(
                        "{name}: no PM_TERM_PATH_MAP: terminals open in the host service's directory, and a container path as cwd is looked up on the host"
                    );
                } else {
                    eprintln!(
                        "{name}: container paths on the host: {}",
                        b.path_map.describe()
                    );
                }
            }
            Err(e) => {
                let problems = e
                    .facts()
                    .and_then(|f| f.problems.clone())
                    .unwrap_or_else(|| vec![e.to_string()]);
                for p in &problems {
                    eprintln!("{name}: ERROR: {p}");
                }
                eprintln!(
                    "{name}: {} problem(s) in the bridge configuration: interactive requests will answer PM_TERM_INVALID_MODE; headless commands still work",
                    problems.len()
                );
                return UNUSABLE;
            }
        }
    }
    if let Err(e) = itmcp::private_dir::ensure(&cfg.spool_dir) {
        eprintln!("{name}: ERROR: {e}");
        eprintln!("{name}: {}", itmcp::spool::UNUSABLE_DIR);
        return UNUSABLE;
    }
    eprintln!("{name}: spool directory {}", cfg.spool_dir.display());
    let sandbox = itmcp::sandbox::current();
    eprintln!("{name}: {}", sandbox.describe());
    if sandbox.ready().is_err() {
        return UNUSABLE;
    }
    eprintln!("{name}: configuration ok");
    OK
}
