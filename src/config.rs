//! The MCP server's settings: every flag and environment variable, declared once.

use std::path::PathBuf;

use crate::cli::{Opt, Parsed};
use crate::contract::Phase;

/// Default wait of `execute` before answering `running: true`.
pub const DEFAULT_EXECUTE_WAIT_MS: u64 = 5_000;
/// Longest any single call may wait.
pub const MAX_WAIT_MS: u64 = 600_000;
/// With the GUI, how long an approval waits for a page to connect.
pub const DEFAULT_PAGE_WAIT_MS: u64 = 60_000;

pub const OPTS: &[Opt] = &[
    Opt {
        flag: "--shell",
        env: "PM_TERM_SHELL",
        value: Some("PATH"),
        default: "/bin/sh",
        help: "Shell that runs headless command lines (execution.command without args) as `<shell> -c <line>`.",
    },
    Opt {
        flag: "--deprecation-phase",
        env: "PM_TERM_DEPRECATION_PHASE",
        value: Some("A|B|C"),
        default: "A",
        help: "Legacy alias handling (seed 003 §9.3): A accepts aliases and records the resolution; B also returns a deprecation warning; C rejects aliases with a migration hint.",
    },
    Opt {
        flag: "--spool-dir",
        env: "PM_TERM_SPOOL_DIR",
        value: Some("DIR"),
        default: "",
        help: "Directory for output that no longer fits in memory (files are unlinked at once and vanish with the server). Default: $TMPDIR/interactive-terminal-mcp-<uid>.",
    },
    Opt {
        flag: "--output-memory",
        env: "PM_TERM_OUTPUT_MEMORY_BYTES",
        value: Some("BYTES"),
        default: "1048576",
        help: "Bytes of output each stream keeps in memory; older output moves to the spool directory and stays readable by cursor.",
    },
    Opt {
        flag: "--max-sessions",
        env: "PM_TERM_MAX_SESSIONS",
        value: Some("N"),
        default: "64",
        help: "Most headless sessions running at once; beyond it execute answers PM_TERM_INVALID_PAYLOAD with the limit.",
    },
    Opt {
        flag: "--max-retained",
        env: "PM_TERM_MAX_RETAINED",
        value: Some("N"),
        default: "256",
        help: "Most exited sessions kept readable; the oldest are pruned first.",
    },
    Opt {
        flag: "--wait-ms",
        env: "PM_TERM_DEFAULT_WAIT_MS",
        value: Some("MS"),
        default: "5000",
        help: "How long execute waits for a command to finish before answering running: true (a request's runtime.wait_ms overrides it).",
    },
    Opt {
        flag: "--interactive-shell",
        env: "PM_TERM_INTERACTIVE_SHELL",
        value: Some("SHELL"),
        default: "",
        help: "Shell for new interactive terminals (bash, zsh, fish, or a path). Default: $SHELL when it is bash, zsh or fish, else bash, else /bin/sh. bash, zsh and fish get shell integration (command detection, exit codes, cwd); dash / sh get it through their prompt.",
    },
    Opt {
        flag: "--max-terminals",
        env: "PM_TERM_MAX_TERMINALS",
        value: Some("N"),
        default: "64",
        help: "Most live interactive terminals; beyond it execute answers PM_TERM_INVALID_PAYLOAD with the limit. Exited terminals are pruned oldest first.",
    },
    Opt {
        flag: "--scrollback",
        env: "PM_TERM_SCROLLBACK_BYTES",
        value: Some("BYTES"),
        default: "524288",
        help: "Text kept in a terminal's AHP content parts (TerminalState.content): the oldest parts are dropped first. The full stream stays readable by cursor.",
    },
    Opt {
        flag: "--no-user-rc",
        env: "PM_TERM_NO_USER_RC",
        value: None,
        default: "",
        help: "Do not source the user's ~/.bashrc / ~/.zshrc in interactive terminals (clean, reproducible shells).",
    },
    Opt {
        flag: "--adapter",
        env: "PM_TERM_ADAPTER_MODE",
        value: Some("MODE"),
        default: "",
        help: "Interactive runtime adapter: auto (default), local (terminals inside this process), bundled (launch an interactive-terminal host a person can watch), container_bridge (the host on the container's host). auto is container_bridge inside a container, bundled when --gui or a host binary is configured, local otherwise.",
    },
    Opt {
        flag: "--gui",
        env: "PM_TERM_GUI",
        value: None,
        default: "",
        help: "Ask for the GUI: auto mode launches the bundled interactive-terminal host (its page shows the terminals).",
    },
    Opt {
        flag: "--open",
        env: "PM_TERM_OPEN",
        value: None,
        default: "",
        help: "With --gui: open the page in the default browser ($BROWSER, else xdg-open) once the host is up.",
    },
    Opt {
        flag: "--adapter-overrides",
        env: "PM_TERM_ADAPTER_OVERRIDES",
        value: Some("LIST"),
        default: "",
        help: "Adapters a request may pick with runtime.adapter_override, comma-separated (local,bundled,container_bridge); others are refused. Default: none with --gui (the page must see every terminal), all without.",
    },
    Opt {
        flag: "--in-container",
        env: "PM_RUNNING_IN_CONTAINER",
        value: None,
        default: "",
        help: "This server runs in a container: auto mode uses the container bridge (seed 003 §7).",
    },
    Opt {
        flag: "--host-binary",
        env: "PM_INTERACTIVE_TERMINAL_BINARY",
        value: Some("PATH"),
        default: "",
        help: "Absolute path of the interactive-terminal host for the bundled adapter (tried before the binary beside this server and PATH). Relative paths are refused.",
    },
    Opt {
        flag: "--spawn-timeout-ms",
        env: "PM_INTERACTIVE_TERMINAL_SPAWN_TIMEOUT_MS",
        value: Some("MS"),
        default: "8000",
        help: "How long a launched host has to print its ready line (at most 30000).",
    },
    Opt {
        flag: "--bundled-port",
        env: "PM_INTERACTIVE_TERMINAL_BUNDLED_PORT",
        value: Some("PORT"),
        default: "0",
        help: "Port of a launched host (0: any free port, printed in its ready line and logs).",
    },
    Opt {
        flag: "--keep-host",
        env: "PM_INTERACTIVE_TERMINAL_KEEP_HOST",
        value: None,
        default: "",
        help: "Leave a launched host (and its terminals) running when this server exits.",
    },
    Opt {
        flag: "--host-alias",
        env: "PM_INTERACTIVE_TERMINAL_HOST_ALIAS",
        value: Some("HOST"),
        default: "",
        help: "Container bridge: host name tried first (before host.containers.internal).",
    },
    Opt {
        flag: "--host-fallback-alias",
        env: "PM_INTERACTIVE_TERMINAL_HOST_FALLBACK_ALIAS",
        value: Some("HOST"),
        default: "",
        help: "Container bridge: host name tried last (default host.docker.internal).",
    },
    Opt {
        flag: "--host-port",
        env: "PM_INTERACTIVE_TERMINAL_HOST_PORT",
        value: Some("PORT"),
        default: "",
        help: "Container bridge: port of the host service (default 45459).",
    },
    Opt {
        flag: "--connect-timeout-ms",
        env: "PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS",
        value: Some("MS"),
        default: "",
        help: "Container bridge: connect timeout per host alias (default 3000).",
    },
    Opt {
        flag: "--request-timeout-ms",
        env: "PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS",
        value: Some("MS"),
        default: "",
        help: "Container bridge: least time a request may take (default 30000; longer waits get longer).",
    },
    Opt {
        flag: "--host-token",
        env: "PM_INTERACTIVE_TERMINAL_TOKEN",
        value: Some("TOKEN"),
        default: "",
        help: "Container bridge: the host service's access token (required).",
    },
    Opt {
        flag: "--trace-bridge",
        env: "PM_INTERACTIVE_TERMINAL_TRACE_BRIDGE",
        value: None,
        default: "",
        help: "Log every bridge connect, handshake, request and reconnect on stderr.",
    },
    Opt {
        flag: "--policy",
        env: "PM_TERM_POLICY_FILE",
        value: Some("FILE"),
        default: "",
        help: "Operator policy (JSON): {\"blocked\": [...], \"warned\": [...], \"allowed\": [...], \"strict_allow\": [...], \"approval\": \"warned|all|never\", \"approval_default\": \"approve|decline\"}. Patterns are command prefixes matched on argv (e.g. \"terraform destroy\"). No request can change the policy.",
    },
    Opt {
        flag: "--policy-block",
        env: "PM_TERM_POLICY_BLOCK",
        value: Some("PATTERNS"),
        default: "",
        help: "Extra blocked command prefixes, ';'-separated (e.g. \"terraform destroy; kubectl delete\").",
    },
    Opt {
        flag: "--policy-warn",
        env: "PM_TERM_POLICY_WARN",
        value: Some("PATTERNS"),
        default: "",
        help: "Extra warned command prefixes, ';'-separated.",
    },
    Opt {
        flag: "--policy-allow",
        env: "PM_TERM_POLICY_ALLOW",
        value: Some("PATTERNS"),
        default: "",
        help: "Command prefixes always allowed, ';'-separated (they override built-in warnings and blocks).",
    },
    Opt {
        flag: "--strict-allow",
        env: "PM_TERM_STRICT_ALLOW",
        value: Some("PATTERNS"),
        default: "",
        help: "Extra command prefixes for memory_terminal's strict allowlist, ';'-separated.",
    },
    Opt {
        flag: "--approval",
        env: "PM_TERM_APPROVAL",
        value: Some("warned|all|never"),
        default: "warned",
        help: "Which interactive commands wait for a person: those authorized with a warning (default), all, or none.",
    },
    Opt {
        flag: "--approval-default",
        env: "PM_TERM_APPROVAL_DEFAULT",
        value: Some("approve|decline"),
        default: "approve",
        help: "The decision when neither the host page nor MCP elicitation can ask a person (CI: approve).",
    },
    Opt {
        flag: "--approve-headless",
        env: "PM_TERM_APPROVE_HEADLESS",
        value: Some("on|off"),
        default: "",
        help: "Whether headless commands go through the same approval chain as interactive ones (so choosing headless is no way around a person). Default: on with --gui, off otherwise.",
    },
    Opt {
        flag: "--page-wait-ms",
        env: "PM_TERM_PAGE_WAIT_MS",
        value: Some("MS"),
        default: "60000",
        help: "With --gui, while no page is connected yet: how long a command that needs approval waits for one before asking elsewhere (MCP elicitation, then the operator's default).",
    },
    Opt {
        flag: "--approval-timeout-ms",
        env: "PM_TERM_APPROVAL_TIMEOUT_MS",
        value: Some("MS"),
        default: "120000",
        help: "How long a command waits for its approval when the request gives no timeout_ms (then PM_TERM_TIMEOUT).",
    },
    Opt {
        flag: "--log",
        env: "PM_TERM_LOG",
        value: Some("FILTER"),
        default: "info",
        help: "Log filter for stderr (tracing EnvFilter syntax, e.g. debug or itmcp=trace). RUST_LOG is honoured when this is unset.",
    },
];

/// Settings of the MCP server, typed.
#[derive(Debug, Clone)]
pub struct Config {
    pub shell: PathBuf,
    pub phase: Phase,
    pub spool_dir: PathBuf,
    pub output_memory: usize,
    pub max_sessions: usize,
    pub max_retained: usize,
    pub default_wait_ms: u64,
    pub interactive_shell: Option<String>,
    pub max_terminals: usize,
    pub scrollback_bytes: usize,
    pub no_user_rc: bool,
    pub runtime: crate::runtime::RuntimeInputs,
    pub policy: crate::policy::PolicyInputs,
    pub approval_timeout_ms: u64,
    /// Warned headless commands wait for approval too.
    pub approve_headless: bool,
    /// With the GUI: how long an approval waits for a page to connect.
    pub page_wait_ms: u64,
    /// With the GUI: open the page in a browser.
    pub open_page: bool,
    pub log: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            shell: PathBuf::from("/bin/sh"),
            phase: Phase::A,
            spool_dir: default_spool_dir(),
            output_memory: crate::spool::DEFAULT_MEMORY_LIMIT,
            max_sessions: crate::exec::DEFAULT_MAX_RUNNING,
            max_retained: crate::exec::DEFAULT_MAX_RETAINED,
            default_wait_ms: DEFAULT_EXECUTE_WAIT_MS,
            interactive_shell: None,
            max_terminals: crate::terminal::DEFAULT_MAX_TERMINALS,
            scrollback_bytes: crate::terminal::DEFAULT_SCROLLBACK_BYTES,
            no_user_rc: false,
            runtime: crate::runtime::RuntimeInputs::default(),
            policy: crate::policy::PolicyInputs::default(),
            approval_timeout_ms: crate::app::approval::DEFAULT_APPROVAL_TIMEOUT_MS,
            approve_headless: false,
            page_wait_ms: DEFAULT_PAGE_WAIT_MS,
            open_page: false,
            log: "info".into(),
        }
    }
}

pub fn default_spool_dir() -> PathBuf {
    let uid = nix::unistd::getuid().as_raw();
    std::env::temp_dir().join(format!("interactive-terminal-mcp-{uid}"))
}

impl Config {
    pub fn from_parsed(p: &Parsed) -> Result<Config, String> {
        let d = Config::default();
        let positive = |flag: &str, default: usize| -> Result<usize, String> {
            match p.number::<usize>(flag)? {
                Some(0) => Err(format!("{flag} must be at least 1")),
                Some(n) => Ok(n),
                None => Ok(default),
            }
        };
        Ok(Config {
            shell: p.get("--shell").map(PathBuf::from).unwrap_or(d.shell),
            phase: match p.get("--deprecation-phase") {
                Some(v) => v.parse()?,
                None => d.phase,
            },
            spool_dir: p
                .get("--spool-dir")
                .map(PathBuf::from)
                .unwrap_or(d.spool_dir),
            output_memory: positive("--output-memory", d.output_memory)?,
            max_sessions: positive("--max-sessions", d.max_sessions)?,
            max_retained: positive("--max-retained", d.max_retained)?,
            default_wait_ms: p
                .number::<u64>("--wait-ms")?
                .unwrap_or(d.default_wait_ms)
                .min(MAX_WAIT_MS),
            interactive_shell: p.get("--interactive-shell").map(String::from),
            max_terminals: positive("--max-terminals", d.max_terminals)?,
            scrollback_bytes: positive("--scrollback", d.scrollback_bytes)?,
            no_user_rc: p.switch("--no-user-rc"),
            runtime: crate::runtime::RuntimeInputs {
                adapter_mode: p.get("--adapter").map(String::from),
                adapter_overrides: p.get("--adapter-overrides").map(String::from),
                in_container: p.switch("--in-container"),
                gui: p.switch("--gui"),
                binary: p.get("--host-binary").map(String::from),
                spawn_timeout_ms: p.get("--spawn-timeout-ms").map(String::from),
                bundled_port: p.get("--bundled-port").map(String::from),
                keep_host: p.switch("--keep-host"),
                alias: p.get("--host-alias").map(String::from),
                fallback_alias: p.get("--host-fallback-alias").map(String::from),
                port: p.get("--host-port").map(String::from),
                connect_timeout_ms: p.get("--connect-timeout-ms").map(String::from),
                request_timeout_ms: p.get("--request-timeout-ms").map(String::from),
                token: p.get("--host-token").map(String::from),
                trace_bridge: p.switch("--trace-bridge"),
            },
            policy: crate::policy::PolicyInputs {
                file: p.get("--policy").map(String::from),
                blocked: p.get("--policy-block").map(String::from),
                warned: p.get("--policy-warn").map(String::from),
                allowed: p.get("--policy-allow").map(String::from),
                strict_allow: p.get("--strict-allow").map(String::from),
                approval: p.get("--approval").map(String::from),
                approval_default: p.get("--approval-default").map(String::from),
            },
            approval_timeout_ms: positive("--approval-timeout-ms", d.approval_timeout_ms as usize)?
                as u64,
            approve_headless: match p.get("--approve-headless") {
                None => p.switch("--gui"),
                Some(v) if crate::cli::truthy(v) => true,
                Some(v) if matches!(v.trim(), "0" | "off" | "false" | "no") => false,
                Some(v) => return Err(format!("--approve-headless: {v:?} is not on or off")),
            },
            page_wait_ms: p.number::<u64>("--page-wait-ms")?.unwrap_or(d.page_wait_ms),
            open_page: p.switch("--open"),
            log: p.get("--log").unwrap_or("info").to_string(),
        })
    }
}
