//! The host service's command line and environment, declared once (the terminal options are
//! the ones the MCP server's local adapter shares).

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Parser;
use clap::builder::BoolishValueParser;

use super::{DEFAULT_PORT, HostConfig};
use crate::cli::{LogArgs, SandboxArgs, TerminalArgs};
use crate::terminal::CoreConfig;
use crate::token;

/// The token every connection presents; read at start, then out of the environment the
/// host's terminals inherit (`cli::hide_secrets`).
pub use crate::token::HOST_TOKEN_VARIABLE as TOKEN_VARIABLE;
const ABOUT: &str = "The host terminal service: interactive terminals served over the Agent \
Host Protocol, with a page where a person watches and approves.";

const LONG_ABOUT: &str = "The host terminal service. It keeps interactive terminals (ptys with \
shell integration) and serves them over the Agent Host Protocol (JSON-RPC 2.0 over WebSocket at \
/ahp), with a page at / where a person watches terminals, types into them and approves commands. \
interactive-terminal-mcp reaches it through its bundled and container_bridge adapters.\n\n\
A program presents the token (Authorization: Bearer <token>, X-Interactive-Terminal-Token, or \
?token= on the WebSocket), given in the environment (PM_INTERACTIVE_TERMINAL_TOKEN), never on \
the command line; a person's browser signs in with the one-time link printed on stderr at start \
(and again after each use), whose page keeps a page session in that origin's storage: the token \
never appears in a page URL, and holding it does not make a program a person. When no token is configured, one is generated at first start and kept in \
the token file (mode 0600; never printed). Host and Origin must name this service (IP addresses, \
localhost, the container aliases, --allow-host names). On start it prints one JSON ready line on \
stdout (address, protocol version, pid, sign-in link).\n\n\
Each option can also be set through its environment variable; a flag wins over the variable, \
and an empty variable counts as unset.";

/// The command line and environment of `interactive-terminal`, as declared.
#[derive(Debug, Parser)]
#[command(name = "interactive-terminal", version, about = ABOUT, long_about = LONG_ABOUT)]
pub struct HostArgs {
    /// Address to listen on. A non-loopback address is refused unless a strong token is
    /// configured.
    #[arg(
        long,
        env = "PM_INTERACTIVE_TERMINAL_BIND",
        value_name = "ADDR",
        default_value = "127.0.0.1"
    )]
    bind: IpAddr,

    /// TCP port (0 picks a free one; the ready line says which).
    #[arg(long, env = "PM_INTERACTIVE_TERMINAL_HOST_PORT", value_name = "PORT", default_value_t = DEFAULT_PORT)]
    port: u16,

    /// Access token every connection must present.
    #[arg(
        long,
        env = TOKEN_VARIABLE,
        value_name = "TOKEN",
        hide_env_values = true
    )]
    token: Option<String>,

    /// Where a generated token is kept (mode 0600) when no token is configured. Default:
    /// $XDG_CONFIG_HOME/interactive-terminal/token.
    #[arg(long, env = "PM_INTERACTIVE_TERMINAL_TOKEN_FILE", value_name = "PATH")]
    token_file: Option<PathBuf>,

    /// Host names (comma-separated) clients may use to reach this service besides IP
    /// addresses, localhost, host.containers.internal and host.docker.internal (e.g. the name a
    /// container bridge is configured with). Any other Host header is refused (DNS rebinding).
    #[arg(
        long = "allow-host",
        env = "PM_INTERACTIVE_TERMINAL_ALLOW_HOSTS",
        value_name = "NAMES",
        value_delimiter = ','
    )]
    allow_hosts: Vec<String>,

    /// Let every client (every MCP server with the token) read, type into and end every
    /// terminal. By default a terminal belongs to the client that created it; others may only
    /// list it. A person on the page may always do anything.
    #[arg(long, env = "PM_INTERACTIVE_TERMINAL_SHARE_TERMINALS", value_parser = BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    share_terminals: bool,

    /// The page only watches and decides approvals: a person there may not type into,
    /// resize, open or close terminals.
    #[arg(long, env = "PM_TERM_PAGE_READ_ONLY", value_parser = BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    page_read_only: bool,

    /// Trace id of the launcher, echoed in the ready line and the initialize answer.
    #[arg(long, value_name = "ID")]
    trace_id: Option<String>,

    /// Runtime session id of the launcher, echoed likewise.
    #[arg(long, value_name = "ID")]
    runtime_session_id: Option<String>,

    /// Shell for new terminals (bash, zsh, fish, or a path). Default: $SHELL when it is bash,
    /// zsh or fish, else bash.
    #[arg(long, env = "PM_TERM_INTERACTIVE_SHELL", value_name = "SHELL")]
    shell: Option<String>,

    #[command(flatten)]
    terminals: TerminalArgs,

    /// Exit (killing every terminal) when standard input closes. The MCP server that launches a
    /// host passes a pipe it holds for its whole life, so the host ends with it, even when it is
    /// killed.
    #[arg(long)]
    lifeline: bool,

    #[command(flatten)]
    sandbox: SandboxArgs,

    #[command(flatten)]
    log: LogArgs,
}

/// What the host's `main` starts from.
pub struct HostStart {
    pub config: HostConfig,
    pub lifeline: bool,
    pub log: Option<String>,
    /// The sandbox this host's operator set for its terminals.
    pub sandbox: SandboxArgs,
    /// Credential variables its terminals keep (`cli::withhold_credentials`).
    pub keep_env: Option<String>,
}

impl HostStart {
    /// This process's settings (`--help`, `--version` and refused values answered here).
    pub fn from_process() -> HostStart {
        HostStart::from_args(crate::cli::parse::<HostArgs>())
    }

    fn from_args(a: HostArgs) -> HostStart {
        a.terminals.apply_spool_limits();
        let spool = a
            .terminals
            .spool_dir
            .unwrap_or_else(|| crate::private_dir::per_user("interactive-terminal"));
        let mut core = CoreConfig::new(spool, crate::spool::DEFAULT_MEMORY_LIMIT);
        core.default_shell = a.shell;
        core.max_terminals = a.terminals.max_terminals.get();
        core.scrollback_bytes = a.terminals.scrollback.get();
        core.skip_user_rc = a.terminals.no_user_rc;
        let keep_env = a.terminals.keep_env.clone();
        HostStart {
            config: HostConfig {
                bind: a.bind,
                port: a.port,
                token: a.token,
                token_file: a.token_file.unwrap_or_else(token::default_file),
                core,
                trace_id: a.trace_id,
                runtime_session_id: a.runtime_session_id,
                share_terminals: a.share_terminals,
                page_read_only: a.page_read_only,
                allow_hosts: a
                    .allow_hosts
                    .into_iter()
                    .map(|h| h.trim().to_string())
                    .filter(|h| !h.is_empty())
                    .collect(),
            },
            lifeline: a.lifeline,
            log: a.log.log,
            sandbox: a.sandbox,
            keep_env,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_declaration_is_consistent() {
        HostArgs::command().debug_assert();
    }

    #[test]
    fn values_are_typed() {
        let parse = |args: &[&str]| {
            HostArgs::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
        };
        let s = HostStart::from_args(
            parse(&["--port", "0", "--allow-host", "a.test,b.test", "--lifeline"]).expect("ok"),
        );
        assert_eq!(s.config.port, 0);
        assert_eq!(s.config.allow_hosts, vec!["a.test", "b.test"]);
        assert!(s.lifeline);
        assert!(parse(&["--bind", "localhost"]).is_err());
        assert!(parse(&["--port", "65536"]).is_err());
        assert!(parse(&["--max-terminals", "0"]).is_err());
    }
}
