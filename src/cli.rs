//! What both binaries' command lines share: the option groups they have in common, parsing with
//! the environment as users set it, and the ways `main` stops on a bad start.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use clap::builder::BoolishValueParser;
use clap::error::{ContextKind, ContextValue};
use clap::{Args, CommandFactory, FromArgMatches};

/// Cores per worker thread of the runtime. The server mostly waits; each command it runs
/// also needs a core for its client and one for its program at the same moments, and
/// handing a task from one worker to another costs more than the work handed over: on two
/// cores one worker answered a `list` in 0.04 ms against 0.11 ms with two, moved a terminal's
/// output 13 % faster and kept a quarter less memory after a gigabyte of it.
const CORES_PER_WORKER: usize = 2;
/// More workers than this only wake each other.
const MAX_WORKERS: usize = 4;
/// The operator's override of the worker count. Read here, not by the runtime: tokio panics
/// on a value it cannot parse, and an empty value (as run-files leave them) counts as unset
/// like every other variable of this server.
const WORKERS_ENV: &str = "TOKIO_WORKER_THREADS";
/// The most workers an operator may ask for: beyond it a typo (an extra zero or three)
/// would start thousands of threads before the first request.
const OPERATOR_MAX_WORKERS: usize = 1024;

/// A directory given as an absolute path. A relative one would land wherever the client
/// started the server (`/` for most), and `~` is not expanded in a client's configuration
/// file: both are refused at start rather than made in a surprising place.
fn absolute_dir(s: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(s);
    if p.is_absolute() {
        return Ok(p);
    }
    let tilde = if s.starts_with('~') {
        " (`~` is expanded by a shell, not in a client's configuration: write the home directory out)"
    } else {
        ""
    };
    Err(format!("must be an absolute path{tilde}"))
}

/// How a terminal service keeps its terminals: the same options in the MCP server (the local
/// adapter) and in the host service.
#[derive(Debug, Args)]
pub struct TerminalArgs {
    /// Directory for output that no longer fits in memory (files are unlinked at once and
    /// vanish with the process) and for the shell-integration scripts; an absolute path.
    /// Default: a per-user directory under $TMPDIR.
    #[arg(long, env = "PM_TERM_SPOOL_DIR", value_name = "DIR", value_parser = absolute_dir)]
    pub spool_dir: Option<PathBuf>,

    /// Most live interactive terminals, for the whole server; beyond it a new one is refused
    /// with the limit. Exited terminals are pruned oldest first.
    #[arg(long, env = "PM_TERM_MAX_TERMINALS", value_name = "N", default_value_t = NonZeroUsize::MIN.saturating_add(crate::terminal::DEFAULT_MAX_TERMINALS - 1))]
    pub max_terminals: NonZeroUsize,

    /// Text kept in a terminal's state for viewers (the oldest parts are dropped first). The
    /// full stream stays readable by cursor.
    #[arg(long, env = "PM_TERM_SCROLLBACK_BYTES", value_name = "BYTES", default_value_t = NonZeroUsize::MIN.saturating_add(crate::terminal::DEFAULT_SCROLLBACK_BYTES - 1))]
    pub scrollback: NonZeroUsize,

    /// Do not source the user's ~/.bashrc / ~/.zshrc / fish config in interactive terminals
    /// (clean, reproducible shells).
    #[arg(long, env = "PM_TERM_NO_USER_RC", value_parser = BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub no_user_rc: bool,

    /// Most bytes kept of one stream (a command's output, a terminal's); past it the middle
    /// is dropped, the head and the newest bytes kept, and answers say what went.
    #[arg(long, env = "PM_TERM_SPOOL_MAX_STREAM", value_name = "BYTES", default_value_t = crate::spool::cap::DEFAULT_MAX_PER_STREAM, value_parser = clap::value_parser!(u64).range(1024 * 1024..))]
    pub spool_max_stream: u64,

    /// Most bytes of output on disk for the whole server; past it every stream keeps only its
    /// head and its newest bytes until space comes back.
    #[arg(long, env = "PM_TERM_SPOOL_MAX_TOTAL", value_name = "BYTES", default_value_t = crate::spool::cap::DEFAULT_MAX_TOTAL, value_parser = clap::value_parser!(u64).range(1024 * 1024..))]
    pub spool_max_total: u64,

    /// Credential variables of this process's environment (GITHUB_TOKEN, *_API_KEY,
    /// *_PASSWORD, ...) that commands and terminals keep, ';'-separated, or * for all. By
    /// default every one is withheld from them.
    #[arg(long, env = KEEP_ENV, value_name = "NAMES")]
    pub keep_env: Option<String>,
}

impl TerminalArgs {
    /// The spool limits hold for every stream of the process.
    pub fn apply_spool_limits(&self) {
        crate::spool::cap::set_limits(self.spool_max_stream, self.spool_max_total);
    }
}

/// The operator's sandbox, the same in both binaries: the MCP server confines its headless
/// commands and local terminals, the host service the terminals it keeps.
#[derive(Debug, Clone, Default, Args)]
pub struct SandboxArgs {
    /// Confine every command and terminal shell (enforced by bubblewrap): off, read-only
    /// (write only a private /tmp), workspace-write (also the --workspace roots; .git and this
    /// server's configuration stay read-only). When it cannot be set up, commands are refused,
    /// never run unconfined.
    #[arg(
        long = "sandbox",
        env = "PM_TERM_SANDBOX",
        value_name = "MODE",
        default_value = "off"
    )]
    pub sandbox: crate::sandbox::Level,

    /// A writable root under --sandbox workspace-write; repeatable (the variable takes a
    /// ':'-separated list). Default: the working directory.
    #[arg(
        long = "workspace",
        env = "PM_TERM_WORKSPACE",
        value_name = "DIR",
        value_delimiter = ':'
    )]
    pub workspace: Vec<PathBuf>,

    /// The network inside the sandbox: off (the default with a sandbox), on, or
    /// allow:DOMAIN,… (only those domains).
    #[arg(
        long = "network",
        env = "PM_TERM_NETWORK",
        value_name = "on|off|allow:DOMAIN,…"
    )]
    pub network: Option<crate::sandbox::Network>,

    /// What enforces the sandbox: auto (bubblewrap where it works, else Landlock + seccomp),
    /// bubblewrap, or landlock (no private /tmp but TMPDIR, no allow-list, and a writable
    /// root holding .git is refused).
    #[arg(
        long = "sandbox-mechanism",
        env = "PM_TERM_SANDBOX_MECHANISM",
        value_name = "auto|bubblewrap|landlock",
        default_value = "auto"
    )]
    pub mechanism: crate::sandbox::MechanismChoice,

    /// How sessions are contained: auto (each session's processes in a pid namespace of
    /// their own, where they see and reach nothing outside, wherever the kernel allows; else
    /// their supervisors alone), or subreaper (supervisors alone: programs see the machine's
    /// processes, and sudo works in terminals of an unprivileged server).
    #[arg(
        long = "containment",
        env = "PM_TERM_CONTAINMENT",
        value_name = "auto|subreaper",
        value_parser = ["auto", "subreaper"],
        default_value = "auto"
    )]
    pub containment: String,
}

impl SandboxArgs {
    /// The checked settings; `protected` are files of this server (token and policy files)
    /// that must stay read-only even inside a writable root.
    pub fn settings(&self, protected: &[PathBuf]) -> Result<crate::sandbox::Settings, String> {
        crate::sandbox::Settings::new(
            self.sandbox,
            &self.workspace,
            self.network.clone(),
            protected,
        )
        .map(|s| crate::sandbox::Settings {
            mechanism: self.mechanism,
            ..s
        })
    }
}

/// Check the operator's sandbox, prepare it (find and try the mechanism) and install it for
/// every session of this process; say on stderr what is in force. A bad setting stops the
/// process (status 2), and so does a sandbox on a system that has no mechanism for one
/// (macOS, Windows): it could never be set up. On Linux, one that cannot be set up now (no
/// bubblewrap yet, namespaces off) leaves the process running with every command refused,
/// the reason in `list`.
pub fn install_sandbox(name: &str, args: &SandboxArgs, protected: &[PathBuf]) {
    crate::process::namespace::set_subreaper_only(args.containment == "subreaper");
    let settings = or_exit(name, args.settings(protected), 2);
    if cfg!(not(target_os = "linux")) && settings.confines() {
        or_exit::<()>(
            name,
            Err(format!(
                "--sandbox {} / --network {}: {}",
                settings.level.as_str(),
                settings.network,
                crate::sandbox::NOT_LINUX
            )),
            2,
        );
    }
    let sandbox = crate::sandbox::Sandbox::prepare(settings);
    match sandbox.ready() {
        Ok(()) => tracing::info!("{}", sandbox.describe()),
        Err(_) => tracing::error!("{}", sandbox.describe()),
    }
    crate::sandbox::install(sandbox);
}

/// The log filter, the same in both binaries.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// Log filter for stderr (tracing EnvFilter syntax, e.g. debug or itmcp=trace). When it is
    /// not given, RUST_LOG is used, then info.
    #[arg(long = "log", env = "PM_TERM_LOG", value_name = "FILTER")]
    pub log: Option<String>,
}

/// Parse this process's flags and environment into `T`. `--help`, `--version` and a refused
/// value are answered here (exit 0, or 2 with clap's message naming the option). An empty
/// environment variable counts as unset, as container run-files and shells often leave them.
pub fn parse<T: CommandFactory + FromArgMatches>() -> T {
    let cmd = T::command().mut_args(|a| {
        let empty = a
            .get_env()
            .and_then(std::env::var_os)
            .is_some_and(|v| v.is_empty());
        if empty {
            a.env(None::<&'static str>)
        } else {
            a
        }
    });
    let matches = cmd.clone().try_get_matches().unwrap_or_else(|e| {
        if !e.use_stderr() {
            e.exit() // --help, --version
        }
        let _ = e.print();
        if let Some(env) = from_environment(&cmd, &e) {
            eprintln!("(the value comes from the environment variable {env})");
        }
        std::process::exit(2)
    });
    refuse_secrets_on_the_command_line(&cmd, &matches);
    T::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// Exit 2 when a secret (an option whose environment value is hidden: a token) was given as
/// a flag. Why: a process's command line is readable by every local user
/// (`/proc/<pid>/cmdline`, `ps`), whatever the process does afterwards; its variable is
/// taken out of the environment at start (`hide_secrets`).
fn refuse_secrets_on_the_command_line(cmd: &clap::Command, matches: &clap::ArgMatches) {
    for arg in cmd.get_arguments().filter(|a| a.is_hide_env_values_set()) {
        if matches.value_source(arg.get_id().as_str())
            != Some(clap::parser::ValueSource::CommandLine)
        {
            continue;
        }
        let flag = arg
            .get_long()
            .map_or_else(|| arg.get_id().to_string(), |l| format!("--{l}"));
        let variable = arg
            .get_env()
            .map_or_else(String::new, |v| v.to_string_lossy().into_owned());
        eprintln!(
            "{}: {flag} would put a secret on the command line, which every local user can read \
             (/proc/<pid>/cmdline, ps); give it in the environment variable {variable} instead \
             (or let the service keep it in its token file)",
            cmd.get_name()
        );
        std::process::exit(2);
    }
}

/// The environment variable a refused value came from, when it was not given as a flag: the
/// user set a variable, so the message must name it.
fn from_environment(cmd: &clap::Command, e: &clap::Error) -> Option<String> {
    let ContextValue::String(shown) = e.get(ContextKind::InvalidArg)? else {
        return None;
    };
    let arg = cmd.get_arguments().find(|a| {
        a.get_long()
            .is_some_and(|l| shown.split_whitespace().next() == Some(&format!("--{l}")))
    })?;
    let long = format!("--{}", arg.get_long()?);
    let on_command_line = std::env::args()
        .skip(1)
        .any(|a| a == long || a.starts_with(&format!("{long}=")));
    if on_command_line {
        return None;
    }
    arg.get_env().map(|v| v.to_string_lossy().into_owned())
}

/// The value, or `name: error` on stderr and exit with `code` (2: bad configuration,
/// 1: could not start).
pub fn or_exit<T>(name: &str, r: Result<T, impl std::fmt::Display>, code: i32) -> T {
    r.unwrap_or_else(|e| {
        eprintln!("{name}: {e}");
        std::process::exit(code)
    })
}

/// Take this process's secrets (`names`, read into its configuration already) out of the
/// environment every program it starts inherits, and make the process non-dumpable, so that
/// no other process of the same unprivileged user reads them from
/// `/proc/<pid>/environ` (which keeps the environment the process started with) or its
/// memory. Why: every command and terminal shell is the agent's, and with the host's token
/// a program drives the host's terminals over AHP without this server's policy; the HTTP
/// token is a client's credential. Programs started later are dumpable again (`execve`
/// resets it), so the user's own debugging is untouched.
///
/// Must be called before the process starts a thread: the environment is not thread-safe.
pub fn hide_secrets(names: &[&str]) {
    for name in names {
        take_out_of_environment(name);
    }
    if let Err(e) = crate::os::forbid_tracing() {
        tracing::warn!(error = %e, "cannot make the process non-dumpable: its environment stays readable to the user's other processes");
    }
}

/// The setting that names the credential variables commands and terminals keep.
pub const KEEP_ENV: &str = "PM_TERM_KEEP_ENV";

/// Take the credentials this process's environment holds — every variable whose name says
/// it holds one (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `OPENAI_API_KEY`:
/// [`itmcp_policy::env::credential_variable`]) — out of the environment every command and
/// terminal shell inherits, but those the operator keeps (`keep`: names `;`-separated, or
/// `*` for all). Returns the names taken out, sorted.
///
/// Why: the agent's commands are the agent's code. A line that prints one credential by name
/// is warned, but the programs that print them are without number (`env`, `jq -n env`,
/// `awk 'BEGIN{print ENVIRON["X"]}'`, `python3 -c 'print(os.environ)'`,
/// `cat /proc/self/environ`), and a list of them would be a deny-list. A credential that is
/// not there cannot be printed or sent; an operator whose agent needs one for its tools
/// (`gh` and `GH_TOKEN`) keeps it by name.
///
/// Must be called before the process starts a thread: the environment is not thread-safe.
pub fn withhold_credentials(keep: Option<&str>) -> Vec<String> {
    let kept: Vec<&str> = keep
        .unwrap_or_default()
        .split(';')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    if kept.contains(&"*") {
        return Vec::new();
    }
    let mut names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        // The server's own settings (`PM_*`) are the operator's, not credentials: a token
        // file's path, read again by the host this server launches. The tokens themselves
        // are taken out by `hide_secrets`.
        .filter(|k| !k.starts_with("PM_"))
        .filter(|k| itmcp_policy::env::credential_variable(k) && !kept.contains(&k.as_str()))
        .collect();
    names.sort();
    for name in &names {
        take_out_of_environment(name);
    }
    names
}

/// `name` out of the environment children inherit and out of this process's environment
/// block (`/proc/<pid>/environ`). Only before any other thread exists: the callers' contract.
fn take_out_of_environment(name: &str) {
    crate::os::scrub_environment_block(name);
    // SAFETY: the callers run at the start of `main`, before any other thread exists, so
    // nothing reads the environment meanwhile.
    unsafe { std::env::remove_var(name) };
}

/// Log what [`withhold_credentials`] took out, once logging is up.
pub fn say_withheld(names: &[String]) {
    if !names.is_empty() {
        tracing::info!(
            names = %names.join(", "),
            "commands and terminals do not inherit these credential variables ({KEEP_ENV}=NAME;NAME keeps them)"
        );
    }
}

/// The runtime's worker count, or exit 2 naming the operator's bad value. Called before
/// `--check-config` reports, so a check finds what a start would refuse.
pub fn workers_or_exit(name: &str) -> usize {
    or_exit(name, worker_threads(std::env::var_os(WORKERS_ENV)), 2)
}

/// A multi-threaded tokio runtime with `workers` workers, or exit 1 with the reason; the
/// allocator tuned first.
pub fn runtime_or_exit(name: &str, workers: usize) -> tokio::runtime::Runtime {
    tune_allocator();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build();
    let rt = or_exit(
        name,
        rt.map_err(|e| format!("cannot start the runtime: {e}")),
        1,
    );
    tracing::info!(workers = rt.metrics().num_workers(), "runtime started");
    rt
}

/// The worker count: the operator's (`TOKIO_WORKER_THREADS`, 1 to [`OPERATOR_MAX_WORKERS`])
/// when set and not empty, else one per [`CORES_PER_WORKER`] cores, 1 to [`MAX_WORKERS`].
fn worker_threads(set: Option<std::ffi::OsString>) -> Result<usize, String> {
    let given = set.as_deref().map(|v| v.to_string_lossy());
    match given.as_deref().map(str::trim) {
        None | Some("") => {
            let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
            Ok((cores / CORES_PER_WORKER).clamp(1, MAX_WORKERS))
        }
        Some(v) => v
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=OPERATOR_MAX_WORKERS).contains(n))
            .ok_or_else(|| {
                format!(
                    "invalid value '{v}' for {WORKERS_ENV}: a number of threads from 1 to {OPERATOR_MAX_WORKERS}"
                )
            }),
    }
}

/// Tune the allocator for a server that builds megabyte answers again and again.
fn tune_allocator() {
    crate::os::tune_allocator();
}

/// Resolves when Windows asks the process to end (its console closed, the user logging off,
/// the system shutting down; never, when that cannot be watched): the same in both binaries.
#[cfg(windows)]
pub async fn sigterm() {
    use tokio::signal::windows::{ctrl_close, ctrl_logoff, ctrl_shutdown};
    match (ctrl_close(), ctrl_logoff(), ctrl_shutdown()) {
        (Ok(mut close), Ok(mut logoff), Ok(mut shutdown)) => {
            tokio::select! {
                _ = close.recv() => {}
                _ = logoff.recv() => {}
                _ = shutdown.recv() => {}
            }
        }
        _ => std::future::pending::<()>().await,
    }
}

/// Resolves at the first SIGTERM (never, when it cannot be watched): the same in both binaries.
#[cfg(unix)]
pub async fn sigterm() {
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut s) => {
            s.recv().await;
        }
        Err(_) => std::future::pending::<()>().await,
    }
}
