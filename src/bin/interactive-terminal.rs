//! `interactive-terminal`: the host terminal service (AHP over WebSocket, and its page).

use std::net::IpAddr;
use std::path::PathBuf;

use itmcp::cli::{self, Opt, Parsed};
use itmcp::host::{self, Host, HostConfig};
use itmcp::process::reaper;
use itmcp::terminal::CoreConfig;

const ABOUT: &str = "interactive-terminal: the host terminal service. It keeps interactive terminals (ptys with \
shell integration) and serves them over the Agent Host Protocol (JSON-RPC 2.0 over WebSocket at /ahp), with a \
page at / where a person watches terminals and types into them. interactive-terminal-mcp reaches it through its \
bundled and container_bridge adapters.\n\n\
A program presents the token (Authorization: Bearer <token>, X-Interactive-Terminal-Token, or ?token= on the \
WebSocket); a person's browser signs in with the one-time link printed on stderr at start (and again after each \
use), which sets an HttpOnly session cookie: the token never appears in a page URL. When no token is configured, \
one is generated at first start and kept in the token file (mode 0600; never printed). Host and Origin must name \
this service (IP addresses, localhost, the container aliases, --allow-host names). \
On start it prints one JSON ready line on stdout (address, protocol version, pid, sign-in link).";

const OPTS: &[Opt] = &[
    Opt {
        flag: "--bind",
        env: "PM_INTERACTIVE_TERMINAL_BIND",
        value: Some("ADDR"),
        default: "127.0.0.1",
        help: "Address to listen on. A non-loopback address is refused unless a token is configured.",
    },
    Opt {
        flag: "--port",
        env: "PM_INTERACTIVE_TERMINAL_HOST_PORT",
        value: Some("PORT"),
        default: "45459",
        help: "TCP port (0 picks a free one; the ready line says which).",
    },
    Opt {
        flag: "--token",
        env: "PM_INTERACTIVE_TERMINAL_TOKEN",
        value: Some("TOKEN"),
        default: "",
        help: "Access token every connection must present.",
    },
    Opt {
        flag: "--token-file",
        env: "PM_INTERACTIVE_TERMINAL_TOKEN_FILE",
        value: Some("PATH"),
        default: "",
        help: "Where a generated token is kept (mode 0600) when no token is configured. Default: $XDG_CONFIG_HOME/interactive-terminal/token.",
    },
    Opt {
        flag: "--allow-host",
        env: "PM_INTERACTIVE_TERMINAL_ALLOW_HOSTS",
        value: Some("NAMES"),
        default: "",
        help: "Host names (comma-separated) clients may use to reach this service besides IP addresses, localhost, host.containers.internal and host.docker.internal (e.g. the name a container bridge is configured with). Any other Host header is refused (DNS rebinding).",
    },
    Opt {
        flag: "--share-terminals",
        env: "PM_INTERACTIVE_TERMINAL_SHARE_TERMINALS",
        value: None,
        default: "",
        help: "Let every client (every MCP server with the token) read, type into and end every terminal. By default a terminal belongs to the client that created it; others may only list it. A person on the page may always do anything.",
    },
    Opt {
        flag: "--trace-id",
        env: "",
        value: Some("ID"),
        default: "",
        help: "Trace id of the launcher, echoed in the ready line and the initialize answer.",
    },
    Opt {
        flag: "--runtime-session-id",
        env: "",
        value: Some("ID"),
        default: "",
        help: "Runtime session id of the launcher, echoed likewise.",
    },
    Opt {
        flag: "--shell",
        env: "PM_TERM_INTERACTIVE_SHELL",
        value: Some("SHELL"),
        default: "",
        help: "Shell for new terminals (bash, zsh, fish, or a path). Default: $SHELL when bash, zsh or fish, else bash.",
    },
    Opt {
        flag: "--spool-dir",
        env: "PM_TERM_SPOOL_DIR",
        value: Some("DIR"),
        default: "",
        help: "Directory for terminal output beyond the in-memory part (unlinked files).",
    },
    Opt {
        flag: "--max-terminals",
        env: "PM_TERM_MAX_TERMINALS",
        value: Some("N"),
        default: "64",
        help: "Most live terminals.",
    },
    Opt {
        flag: "--scrollback",
        env: "PM_TERM_SCROLLBACK_BYTES",
        value: Some("BYTES"),
        default: "524288",
        help: "Text kept in each TerminalState's content parts.",
    },
    Opt {
        flag: "--no-user-rc",
        env: "PM_TERM_NO_USER_RC",
        value: None,
        default: "",
        help: "Do not source the user's ~/.bashrc / ~/.zshrc in terminals.",
    },
    Opt {
        flag: "--lifeline",
        env: "",
        value: None,
        default: "",
        help: "Exit (killing every terminal) when standard input closes. The MCP server that launches a host passes a pipe it holds for its whole life, so the host ends with it, even when it is killed.",
    },
    Opt {
        flag: "--log",
        env: "PM_TERM_LOG",
        value: Some("FILTER"),
        default: "info",
        help: "Log filter for stderr (tracing EnvFilter syntax).",
    },
];

/// Resolves when standard input reaches its end (the launcher is gone).
async fn stdin_closed() {
    use tokio::io::AsyncReadExt;
    let mut stdin = tokio::io::stdin();
    let mut buf = [0u8; 256];
    loop {
        match stdin.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

fn config(p: &Parsed) -> Result<HostConfig, String> {
    let bind: IpAddr = p
        .get("--bind")
        .unwrap_or("127.0.0.1")
        .parse()
        .map_err(|e| format!("--bind: {e}"))?;
    let port: u16 = p.number("--port")?.unwrap_or(host::DEFAULT_PORT);
    let spool = p.get("--spool-dir").map(PathBuf::from).unwrap_or_else(|| {
        let uid = nix::unistd::getuid().as_raw();
        std::env::temp_dir().join(format!("interactive-terminal-{uid}"))
    });
    let mut core = CoreConfig::new(spool, itmcp::spool::DEFAULT_MEMORY_LIMIT);
    core.default_shell = p.get("--shell").map(String::from);
    if let Some(n) = p.number("--max-terminals")? {
        core.max_terminals = n;
    }
    if let Some(n) = p.number("--scrollback")? {
        core.scrollback_bytes = n;
    }
    core.skip_user_rc = p.switch("--no-user-rc");
    Ok(HostConfig {
        bind,
        port,
        token: p.get("--token").map(String::from),
        token_file: p
            .get("--token-file")
            .map(PathBuf::from)
            .unwrap_or_else(host::token::default_file),
        core,
        trace_id: p.get("--trace-id").map(String::from),
        runtime_session_id: p.get("--runtime-session-id").map(String::from),
        share_terminals: p.switch("--share-terminals"),
        allow_hosts: p
            .get("--allow-host")
            .map(|v| v.split(',').map(String::from).collect())
            .unwrap_or_default(),
    })
}

fn main() {
    // The same binary is the spawner of supervised terminals (process::spawner).
    if let Some(code) = itmcp::process::helper_main() {
        std::process::exit(code);
    }
    const NAME: &str = "interactive-terminal";
    let parsed = cli::parse_or_exit(NAME, ABOUT, OPTS, "");
    let cfg = cli::or_exit(NAME, config(&parsed), 2);
    itmcp::telemetry::init(parsed.get("--log").unwrap_or("info"), "info");
    let rt = cli::runtime_or_exit(NAME);
    let lifeline = parsed.switch("--lifeline");
    let code = rt.block_on(run(cfg, lifeline));
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    std::process::exit(code);
}

async fn run(cfg: HostConfig, lifeline: bool) -> i32 {
    reaper::become_subreaper();
    reaper::spawn_reaper();
    let host = match Host::bind(cfg).await {
        Ok(h) => h,
        Err(e) => {
            eprintln!("interactive-terminal: {e}");
            println!(
                "{}",
                serde_json::json!({"event": "error", "error": e.to_string()})
            );
            return 2;
        }
    };
    println!("{}", host.ready_line());
    eprintln!(
        "interactive-terminal: serving AHP on ws://{}/ahp (programs present the token)",
        host.addr
    );
    host.shared.page.announce(&host.shared.public_addr);
    let core = host.shared.core.clone();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let sigterm = async {
        match &mut term {
            Some(s) => {
                s.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    let launcher_gone = async {
        if lifeline {
            stdin_closed().await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        _ = host.serve() => {}
        _ = sigterm => tracing::info!("SIGTERM"),
        _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT"),
        _ = launcher_gone => tracing::info!("the launching server is gone"),
    }
    core.shutdown().await;
    itmcp::process::shutdown().await;
    0
}
