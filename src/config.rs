//! The MCP server's settings. Every option is declared once below, typed, with its flag,
//! environment variable, default and help; `--help` is generated from the same declaration
//! and a value that does not parse stops the server at start with a message naming the
//! option. The container-bridge settings are the one exception, on purpose: they are parsed at
//! start too, but a problem there is answered as `PM_TERM_INVALID_MODE` by the requests that
//! need the bridge (the contract's rule), so headless work keeps running in a misconfigured
//! container.

use std::num::{NonZeroU64, NonZeroUsize};
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use clap::builder::BoolishValueParser;

use crate::adapters::AdapterInputs;
use crate::adapters::mode::{
    self, AdapterChoice, AdapterList, BridgeInputs, DEFAULT_SPAWN_TIMEOUT_MS, MAX_SPAWN_TIMEOUT_MS,
};
use crate::cli::{LogArgs, SandboxArgs, TerminalArgs};
use crate::contract::Phase;
use crate::policy::PolicyInputs;
use crate::token::HOST_TOKEN_VARIABLE;

/// Default wait of `execute` before answering `running: true`.
/// Characters a default answer takes at most (text and structured content together): well
/// inside what clients keep of a tool result (about 25,000 tokens).
pub const DEFAULT_ANSWER_BUDGET: u64 = 30_000;

pub const DEFAULT_EXECUTE_WAIT_MS: u64 = 5_000;
/// How long a terminal opened for one command may sit idle before it is closed.
pub const DEFAULT_IDLE_CLOSE_MS: u64 = 600_000;
/// Longest any single call may wait.
pub const MAX_WAIT_MS: u64 = 600_000;
/// With the GUI, how long an approval waits for a page to connect.
pub const DEFAULT_PAGE_WAIT_MS: u64 = 60_000;
/// How long a command waits for its approval when the request gives no timeout.
pub const DEFAULT_APPROVAL_TIMEOUT_MS: u64 = 120_000;
/// The bearer token of the HTTP transport.
const HTTP_TOKEN_VARIABLE: &str = "PM_TERM_HTTP_TOKEN";
/// The variables that carry the server's secrets: read at start, then out of the environment
/// its commands inherit (`cli::hide_secrets`).
pub const SECRET_VARIABLES: [&str; 2] = [HOST_TOKEN_VARIABLE, HTTP_TOKEN_VARIABLE];

const ABOUT: &str = "An MCP server (stdio) that lets AI agents run and drive terminals: one-shot \
commands, long-running processes, shells and REPLs.";

const LONG_ABOUT: &str = "An MCP server (stdio) that lets AI agents run and drive terminals: \
one-shot commands, long-running processes, shells and REPLs.\n\n\
Tools: memory_terminal_interactive (execute, read_output, terminate, list; headless or \
interactive) and memory_terminal (strict allowlisted headless execution). Headless commands run \
over pipes under a supervisor of their own; interactive ones in real terminals (ptys with shell \
integration: command detection, exit codes), embedded (local), in a launched interactive-terminal \
host a person can watch (bundled) or on the container's host (container_bridge). Every byte of \
output stays readable by cursor; terminate and timeouts kill the whole process tree; when the \
server exits (stdin closed, SIGTERM, SIGINT, even SIGKILL) everything it started is killed. Every \
execute is authorized first (allowed, allowed with a warning, blocked); warned commands wait for \
a person's approval. Logs go to stderr; stdout is the MCP channel.\n\n\
Each option can also be set through its environment variable; a flag wins over the variable, \
and an empty variable counts as unset.";

const FOOTER: &str = "Register it in an MCP client as a stdio server whose command is this \
binary (see README.md for Claude Desktop, VS Code and Codex).";

/// The shell of headless command lines: `/bin/sh`; on Windows `cmd.exe` (always there, and
/// quick to start; an operator who wants PowerShell names it).
pub const DEFAULT_HEADLESS_SHELL: &str = if cfg!(windows) { "cmd.exe" } else { "/bin/sh" };

/// The command line and environment of `interactive-terminal-mcp`, as declared.
#[derive(Debug, Parser)]
#[command(name = "interactive-terminal-mcp", version, about = ABOUT, long_about = LONG_ABOUT, after_help = FOOTER)]
pub struct ServerArgs {
    /// Shell that runs headless command lines (execution.command without args) as
    /// `<shell> -c <line>` (cmd.exe as `cmd.exe /d /s /c <line>`, PowerShell as
    /// `-NoProfile -NonInteractive -Command <line>`).
    #[arg(
        long,
        env = "PM_TERM_SHELL",
        value_name = "PATH",
        default_value = DEFAULT_HEADLESS_SHELL
    )]
    shell: PathBuf,

    /// How legacy action names are handled: A accepts them and records the resolution; B also
    /// returns a deprecation warning; C rejects them with a migration hint.
    #[arg(
        long,
        env = "PM_TERM_DEPRECATION_PHASE",
        value_name = "A|B|C",
        default_value = "A"
    )]
    deprecation_phase: Phase,

    /// Bytes of output each stream keeps in memory; older output moves to the spool directory
    /// and stays readable by cursor.
    #[arg(long, env = "PM_TERM_OUTPUT_MEMORY_BYTES", value_name = "BYTES", default_value_t = NonZeroUsize::MIN.saturating_add(crate::spool::DEFAULT_MEMORY_LIMIT - 1))]
    output_memory: NonZeroUsize,

    /// Characters a default answer may take in all (its text and its structured form
    /// together), whatever the output's size: larger output is shown as its head and tail,
    /// with the bytes left out named for reading by cursor.
    #[arg(long, env = "PM_TERM_ANSWER_BUDGET", value_name = "CHARS", default_value_t = DEFAULT_ANSWER_BUDGET, value_parser = clap::value_parser!(u64).range(4_000..=100_000_000))]
    answer_budget: u64,

    /// A terminal opened for one command (execute without target.terminal_id) is closed once
    /// nothing has used it, printed or run in it for this long; one holding background jobs
    /// stays. 0: never.
    #[arg(long, env = "PM_TERM_IDLE_CLOSE_MS", value_name = "MS", default_value_t = DEFAULT_IDLE_CLOSE_MS)]
    idle_close_ms: u64,

    /// Most headless commands running at once, for the whole server (every HTTP session
    /// together); a command over it waits for a place (see docs/limits.md).
    #[arg(long, env = "PM_TERM_MAX_SESSIONS", value_name = "N", default_value_t = NonZeroUsize::MIN.saturating_add(crate::headless::DEFAULT_MAX_RUNNING - 1))]
    max_sessions: NonZeroUsize,

    /// Most exited sessions kept readable; the oldest are pruned first.
    #[arg(long, env = "PM_TERM_MAX_RETAINED", value_name = "N", default_value_t = NonZeroUsize::MIN.saturating_add(crate::headless::DEFAULT_MAX_RETAINED - 1))]
    max_retained: NonZeroUsize,

    /// How long execute waits for a command to finish before answering running: true (a
    /// request's runtime.wait_ms overrides it).
    #[arg(long, env = "PM_TERM_DEFAULT_WAIT_MS", value_name = "MS", default_value_t = DEFAULT_EXECUTE_WAIT_MS, value_parser = clap::value_parser!(u64).range(0..=MAX_WAIT_MS))]
    wait_ms: u64,

    /// Shell for new interactive terminals (bash, zsh, fish, or a path). Default: $SHELL when it
    /// is bash, zsh or fish, else bash, else /bin/sh.
    #[arg(long, env = "PM_TERM_INTERACTIVE_SHELL", value_name = "SHELL")]
    interactive_shell: Option<String>,

    #[command(flatten)]
    terminals: TerminalArgs,

    /// Interactive adapter: auto, local (terminals inside this process), bundled (launch
    /// an interactive-terminal host a person can watch), container_bridge (the host on the
    /// container's host). auto is container_bridge inside a container, bundled with --gui or a
    /// configured host binary, local otherwise.
    #[arg(
        long = "adapter",
        env = "PM_TERM_ADAPTER_MODE",
        value_name = "MODE",
        default_value = "auto"
    )]
    adapter: AdapterChoice,

    /// Show the terminals on a page: auto mode launches the bundled interactive-terminal host at
    /// start and prints a one-time sign-in link.
    #[arg(long, env = "PM_TERM_GUI", value_parser = BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    gui: bool,

    /// With --gui: open the page in the default browser ($BROWSER, else xdg-open) once the host
    /// is up.
    #[arg(long, env = "PM_TERM_OPEN", value_parser = BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    open: bool,

    /// Adapters a request may pick with runtime.adapter_override, comma-separated
    /// (local,bundled,container_bridge), or none. Default: none with --gui (the page must see
    /// every terminal), all without.
    #[arg(long, env = "PM_TERM_ADAPTER_OVERRIDES", value_name = "LIST")]
    adapter_overrides: Option<AdapterList>,

    /// This server runs in a container: auto mode uses the container bridge.
    #[arg(long, env = "PM_RUNNING_IN_CONTAINER", value_parser = BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    in_container: bool,

    /// Absolute path of the interactive-terminal host for the bundled adapter (tried before the
    /// binary beside this server and PATH). Relative paths are refused.
    #[arg(long, env = "PM_INTERACTIVE_TERMINAL_BINARY", value_name = "PATH")]
    host_binary: Option<String>,

    /// How long a launched host has to print its ready line.
    #[arg(long, env = "PM_INTERACTIVE_TERMINAL_SPAWN_TIMEOUT_MS", value_name = "MS", default_value_t = DEFAULT_SPAWN_TIMEOUT_MS, value_parser = clap::value_parser!(u64).range(1..=MAX_SPAWN_TIMEOUT_MS))]
    spawn_timeout_ms: u64,

    /// Port of a launched host (0: any free port, printed in its ready line and logs).
    #[arg(
        long,
        env = "PM_INTERACTIVE_TERMINAL_BUNDLED_PORT",
        value_name = "PORT",
        default_value_t = 0
    )]
    bundled_port: u16,

    /// Leave a launched host (and its terminals) running when this server exits.
    #[arg(long, env = "PM_INTERACTIVE_TERMINAL_KEEP_HOST", value_parser = BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    keep_host: bool,

    /// Container bridge: host name tried first (before host.containers.internal).
    #[arg(long, env = "PM_INTERACTIVE_TERMINAL_HOST_ALIAS", value_name = "HOST")]
    host_alias: Option<String>,

    /// Container bridge: host name tried last (default host.docker.internal).
    #[arg(
        long,
        env = "PM_INTERACTIVE_TERMINAL_HOST_FALLBACK_ALIAS",
        value_name = "HOST"
    )]
    host_fallback_alias: Option<String>,

    /// Container bridge: port of the host service (default 45459).
    #[arg(long, env = "PM_INTERACTIVE_TERMINAL_HOST_PORT", value_name = "PORT")]
    host_port: Option<String>,

    /// Container bridge: connect timeout per host alias (default 3000).
    #[arg(
        long,
        env = "PM_INTERACTIVE_TERMINAL_CONNECT_TIMEOUT_MS",
        value_name = "MS"
    )]
    connect_timeout_ms: Option<String>,

    /// Container bridge: least time a request may take (default 30000; longer waits get
    /// longer).
    #[arg(
        long,
        env = "PM_INTERACTIVE_TERMINAL_REQUEST_TIMEOUT_MS",
        value_name = "MS"
    )]
    request_timeout_ms: Option<String>,

    /// Container bridge: the host service's access token (required).
    #[arg(
        long,
        env = HOST_TOKEN_VARIABLE,
        value_name = "TOKEN",
        hide_env_values = true
    )]
    host_token: Option<String>,

    /// Container bridge: which container directory is which host directory,
    /// CONTAINER=HOST[;CONTAINER=HOST…] (as the volume mounts say, e.g.
    /// /workspace=/home/me/project). Working directories cross the bridge through it, both ways.
    #[arg(long, env = "PM_TERM_PATH_MAP", value_name = "MAP")]
    path_map: Option<String>,

    /// Log every bridge connect, handshake, request and reconnect on stderr.
    #[arg(long, env = "PM_INTERACTIVE_TERMINAL_TRACE_BRIDGE", value_parser = BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    trace_bridge: bool,

    /// Serve MCP over streamable HTTP at http://ADDR/mcp instead of stdio. ADDR is HOST:PORT
    /// or a port alone (on 127.0.0.1); a non-loopback address needs a strong
    /// PM_TERM_HTTP_TOKEN.
    #[arg(long, env = "PM_TERM_HTTP", value_name = "ADDR")]
    http: Option<HttpAddr>,

    /// The bearer token HTTP clients present. Default: generated once and kept (mode 0600)
    /// in PM_TERM_HTTP_TOKEN_FILE.
    #[arg(
        long,
        env = HTTP_TOKEN_VARIABLE,
        value_name = "TOKEN",
        hide_env_values = true
    )]
    http_token: Option<String>,

    /// Where a generated HTTP token is kept.
    #[arg(long, env = "PM_TERM_HTTP_TOKEN_FILE", value_name = "FILE")]
    http_token_file: Option<PathBuf>,

    /// Check the configuration (flags and environment) and exit without serving: 0 when it is
    /// usable, 1 when requests would be refused (each problem on stderr), 2 when
    /// the server would not start. Container entrypoints run it before starting the server.
    #[arg(long)]
    check_config: bool,

    /// Operator policy (JSON): {"blocked": [...], "warned": [...], "allowed": [...],
    /// "strict_allow": [...], "allow_env": [...], "approval": "warned|all|never", "approval_default":
    /// "approve|decline"}. Patterns are command prefixes matched on argv (e.g. "terraform
    /// destroy"). No request can change the policy.
    #[arg(long = "policy", env = "PM_TERM_POLICY_FILE", value_name = "FILE")]
    policy_file: Option<String>,

    /// Extra blocked command prefixes, ';'-separated (e.g. "terraform destroy; kubectl delete").
    #[arg(long, env = "PM_TERM_POLICY_BLOCK", value_name = "PATTERNS")]
    policy_block: Option<String>,

    /// Extra warned command prefixes, ';'-separated.
    #[arg(long, env = "PM_TERM_POLICY_WARN", value_name = "PATTERNS")]
    policy_warn: Option<String>,

    /// Command prefixes always allowed, ';'-separated (they override built-in warnings and
    /// blocks).
    #[arg(long, env = "PM_TERM_POLICY_ALLOW", value_name = "PATTERNS")]
    policy_allow: Option<String>,

    /// Extra command prefixes for memory_terminal's strict allowlist, ';'-separated.
    #[arg(long, env = "PM_TERM_STRICT_ALLOW", value_name = "PATTERNS")]
    strict_allow: Option<String>,

    /// Extra environment variable names a request (either tool) may set in execution.env,
    /// ';'-separated (beyond colour, locale, CI and test-runner switches). PM_* names never
    /// pass.
    #[arg(long, env = "PM_TERM_ALLOW_ENV", value_name = "NAMES")]
    allow_env: Option<String>,

    /// The older name of --allow-env; both lists add up.
    #[arg(long, env = "PM_TERM_STRICT_ENV", value_name = "NAMES", hide = true)]
    strict_env: Option<String>,

    /// Which commands wait for a person: those authorized with a warning (default), all, or
    /// none. Overrides the policy file's "approval".
    #[arg(long, env = "PM_TERM_APPROVAL", value_parser = ["warned", "all", "never"])]
    approval: Option<String>,

    /// The decision when neither the page nor MCP elicitation can ask a person (default
    /// decline: a warned command runs unattended only when the operator says so). Overrides
    /// the policy file's "approval_default".
    #[arg(long, env = "PM_TERM_APPROVAL_DEFAULT", value_parser = ["approve", "decline"])]
    approval_default: Option<String>,

    /// Whether headless commands go through the same approval chain as interactive ones (so
    /// choosing headless is no way around a person). Default: on.
    #[arg(long, env = "PM_TERM_APPROVE_HEADLESS", value_name = "on|off", value_parser = BoolishValueParser::new())]
    approve_headless: Option<bool>,

    /// With --gui, while no page is connected yet: how long a command that needs approval waits
    /// for one before asking elsewhere (MCP elicitation, then the operator's default).
    #[arg(long, env = "PM_TERM_PAGE_WAIT_MS", value_name = "MS", default_value_t = DEFAULT_PAGE_WAIT_MS)]
    page_wait_ms: u64,

    /// How long a command waits for its approval when the request gives no timeout_ms (then
    /// PM_TERM_TIMEOUT).
    #[arg(long, env = "PM_TERM_APPROVAL_TIMEOUT_MS", value_name = "MS", default_value_t = NonZeroU64::MIN.saturating_add(DEFAULT_APPROVAL_TIMEOUT_MS - 1))]
    approval_timeout_ms: NonZeroU64,

    #[command(flatten)]
    sandbox: SandboxArgs,

    /// Inside an active sandbox, commands the policy warns about run without asking a person
    /// (blocked ones stay blocked; leaving the sandbox always asks).
    #[arg(long, env = "PM_TERM_SANDBOX_SKIPS_APPROVAL", value_parser = BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    sandbox_skips_approval: bool,

    #[command(flatten)]
    log: LogArgs,
}

/// Settings of the MCP server, typed.
#[derive(Debug, Clone)]
pub struct Config {
    pub shell: PathBuf,
    pub phase: Phase,
    pub spool_dir: PathBuf,
    pub output_memory: usize,
    /// Characters a default answer may take (text and structured together).
    pub answer_budget: usize,
    /// See [`DEFAULT_IDLE_CLOSE_MS`]; 0: never.
    pub idle_close_ms: u64,
    /// Places for running headless commands: one cap for the whole server, every HTTP
    /// session included (clones of this config share it).
    pub places: std::sync::Arc<crate::limits::places::Places>,
    /// Places for live terminals, shared the same way.
    pub terminal_places: std::sync::Arc<crate::limits::places::Places>,
    pub max_retained: usize,
    pub default_wait_ms: u64,
    pub interactive_shell: Option<String>,
    pub max_terminals: usize,
    /// Credential variables commands keep (`cli::withhold_credentials`).
    pub keep_env: Option<String>,
    pub scrollback_bytes: usize,
    pub no_user_rc: bool,
    pub adapters: AdapterInputs,
    pub policy: PolicyInputs,
    pub approval_timeout_ms: u64,
    /// Warned headless commands wait for approval too.
    pub approve_headless: bool,
    /// With the GUI: how long an approval waits for a page to connect.
    pub page_wait_ms: u64,
    /// With the GUI: open the page in a browser.
    pub open_page: bool,
    /// The log filter the operator gave, if any.
    pub log: Option<String>,
    /// `--check-config`: report on the configuration and exit.
    pub check_config: bool,
    /// `--http`: serve streamable HTTP instead of stdio.
    pub http: Option<HttpInputs>,
    /// The operator's sandbox, as given (checked and installed at start).
    pub sandbox: SandboxArgs,
    /// Inside an active sandbox, warned commands run without approval.
    pub sandbox_skips_approval: bool,
}

/// Streamable HTTP as the operator set it.
#[derive(Debug, Clone)]
pub struct HttpInputs {
    pub addr: std::net::SocketAddr,
    pub token: Option<String>,
    pub token_file: Option<PathBuf>,
}

/// `--http`: `HOST:PORT`, or a port alone on loopback.
#[derive(Debug, Clone, Copy)]
pub struct HttpAddr(pub std::net::SocketAddr);

impl std::str::FromStr for HttpAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if let Ok(port) = s.parse::<u16>() {
            return Ok(HttpAddr(std::net::SocketAddr::from(([127, 0, 0, 1], port))));
        }
        s.parse()
            .map(HttpAddr)
            .map_err(|_| format!("{s:?} is not HOST:PORT (an IP address and a port) or a port"))
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            shell: PathBuf::from(DEFAULT_HEADLESS_SHELL),
            phase: Phase::A,
            spool_dir: default_spool_dir(),
            output_memory: crate::spool::DEFAULT_MEMORY_LIMIT,
            answer_budget: DEFAULT_ANSWER_BUDGET as usize,
            idle_close_ms: DEFAULT_IDLE_CLOSE_MS,
            places: crate::limits::places::Places::new(
                crate::headless::DEFAULT_MAX_RUNNING,
                crate::limits::places::DEFAULT_QUEUE,
            ),
            max_retained: crate::headless::DEFAULT_MAX_RETAINED,
            default_wait_ms: DEFAULT_EXECUTE_WAIT_MS,
            interactive_shell: None,
            max_terminals: crate::terminal::DEFAULT_MAX_TERMINALS,
            keep_env: None,
            terminal_places: crate::limits::places::Places::new(
                crate::terminal::DEFAULT_MAX_TERMINALS,
                0,
            ),
            scrollback_bytes: crate::terminal::DEFAULT_SCROLLBACK_BYTES,
            no_user_rc: false,
            adapters: AdapterInputs::default(),
            policy: PolicyInputs::default(),
            approval_timeout_ms: DEFAULT_APPROVAL_TIMEOUT_MS,
            approve_headless: false,
            page_wait_ms: DEFAULT_PAGE_WAIT_MS,
            open_page: false,
            check_config: false,
            http: None,
            log: None,
            sandbox: SandboxArgs::default(),
            sandbox_skips_approval: false,
        }
    }
}

pub fn default_spool_dir() -> PathBuf {
    crate::private_dir::per_user("interactive-terminal-mcp")
}

impl Config {
    /// This server's own files that commands may not change even inside a writable root:
    /// the policy file and the HTTP token file (its configuration directory is protected
    /// as a whole).
    pub fn own_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = self.policy.file.iter().map(PathBuf::from).collect();
        files.extend(self.http.iter().filter_map(|h| h.token_file.clone()));
        files
    }

    /// This process's settings, or the reason they are refused (`--help` and `--version`
    /// answered here too).
    pub fn from_process() -> Config {
        Config::from_args(crate::cli::parse::<ServerArgs>())
    }

    fn from_args(a: ServerArgs) -> Config {
        a.terminals.apply_spool_limits();
        let bridge = BridgeInputs {
            alias: a.host_alias,
            fallback_alias: a.host_fallback_alias,
            port: a.host_port,
            connect_timeout_ms: a.connect_timeout_ms,
            request_timeout_ms: a.request_timeout_ms,
            token: a.host_token,
            path_map: a.path_map,
        };
        Config {
            shell: a.shell,
            phase: a.deprecation_phase,
            spool_dir: a.terminals.spool_dir.unwrap_or_else(default_spool_dir),
            output_memory: a.output_memory.get(),
            answer_budget: a.answer_budget as usize,
            idle_close_ms: a.idle_close_ms,
            places: crate::limits::places::Places::new(
                a.max_sessions.get(),
                crate::limits::places::DEFAULT_QUEUE,
            ),
            max_retained: a.max_retained.get(),
            default_wait_ms: a.wait_ms,
            interactive_shell: a.interactive_shell,
            max_terminals: a.terminals.max_terminals.get(),
            keep_env: a.terminals.keep_env.clone(),
            terminal_places: crate::limits::places::Places::new(a.terminals.max_terminals.get(), 0),
            scrollback_bytes: a.terminals.scrollback.get(),
            no_user_rc: a.terminals.no_user_rc,
            adapters: AdapterInputs {
                adapter_mode: a.adapter.0,
                adapter_overrides: a.adapter_overrides.map(|l| l.0),
                in_container: a.in_container,
                gui: a.gui,
                binary: a.host_binary,
                spawn_timeout: Duration::from_millis(a.spawn_timeout_ms),
                bundled_port: a.bundled_port,
                keep_host: a.keep_host,
                bridge: mode::bridge_spec(&bridge),
                trace_bridge: a.trace_bridge,
            },
            policy: PolicyInputs {
                file: a.policy_file,
                blocked: a.policy_block,
                warned: a.policy_warn,
                allowed: a.policy_allow,
                strict_allow: a.strict_allow,
                allow_env: match (a.allow_env, a.strict_env) {
                    (Some(x), Some(y)) => Some(format!("{x};{y}")),
                    (x, y) => x.or(y),
                },
                approval: a.approval,
                approval_default: a.approval_default,
            },
            approval_timeout_ms: a.approval_timeout_ms.get(),
            approve_headless: a.approve_headless.unwrap_or(true),
            page_wait_ms: a.page_wait_ms,
            open_page: a.open,
            log: a.log.log,
            check_config: a.check_config,
            sandbox: a.sandbox,
            sandbox_skips_approval: a.sandbox_skips_approval,
            http: a.http.map(|h| HttpInputs {
                addr: h.0,
                token: a.http_token,
                token_file: a.http_token_file,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_declaration_is_consistent() {
        ServerArgs::command().debug_assert();
    }

    #[test]
    fn defaults_and_refusals() {
        let parse = |args: &[&str]| {
            ServerArgs::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
        };
        let c = Config::from_args(parse(&[]).expect("defaults"));
        assert_eq!(c.default_wait_ms, DEFAULT_EXECUTE_WAIT_MS);
        assert_eq!(c.adapters.spawn_timeout, Duration::from_millis(8_000));
        assert_eq!(c.adapters.adapter_mode, None);
        assert!(c.approve_headless);
        let c = Config::from_args(parse(&["--approve-headless", "off"]).expect("off"));
        assert!(!c.approve_headless);
        let c = Config::from_args(parse(&["--gui", "--adapter", "local"]).expect("gui"));
        assert!(c.approve_headless);
        assert_eq!(
            c.adapters.adapter_mode,
            Some(crate::adapters::AdapterType::Local)
        );
        for bad in [
            &["--adapter", "foo"][..],
            &["--spawn-timeout-ms", "0"],
            &["--spawn-timeout-ms", "abc"],
            &["--spawn-timeout-ms", "30001"],
            &["--max-sessions", "0"],
            &["--wait-ms", "-1"],
            &["--approval", "sometimes"],
            &["--approve-headless", "maybe"],
            &["--bundled-port", "70000"],
            &["--deprecation-phase", "D"],
            &["--adapter-overrides", "local,gui"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?} accepted");
        }
    }
}
