//! The operator's sandbox: what every command and every terminal shell may write and reach,
//! enforced by the kernel around the program (see docs/sandbox.md).
//!
//! The operator sets it once, at start (`--sandbox`, `--workspace`, `--network`); no request
//! can change it. It is prepared once — the mechanism found and tried — and installed for the
//! whole process: [`crate::process::spawn`] wraps every session's program in it, so no path
//! through the server starts a program outside it. When the sandbox asked for cannot be set
//! up, every start is refused (with the reason) rather than run unconfined.

#[cfg(target_os = "linux")]
mod bpf_tree;
mod bwrap;
pub mod denial;
mod gitdirs;
pub mod landlock;
pub mod netbridge;
mod proxy;
pub mod seccomp;
mod settings;
mod syscalls;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Serialize;

pub use settings::{Level, MechanismChoice, Network, Settings};

/// Why no mechanism exists on this OS: bubblewrap, Landlock and seccomp are Linux's.
#[cfg_attr(target_os = "linux", allow(dead_code))]
pub const NOT_LINUX: &str = "the sandbox is enforced by Linux facilities (bubblewrap, or \
    Landlock with seccomp), which this operating system does not have; start the server \
    without --sandbox, or run it in a Linux container or virtual machine for isolation";

/// How the sandbox is enforced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mechanism {
    /// bubblewrap (`bwrap`): user, mount, pid and network namespaces around the program.
    Bubblewrap {
        path: PathBuf,
        version: String,
        /// How it is run: whether it makes a user namespace, and the helper that applies
        /// the system-call filter inside.
        options: bwrap::Options,
    },
    /// Landlock + seccomp, applied by each session's supervisor to itself.
    Landlock {
        description: String,
        /// Where each session's private temporary directory is made.
        tmp_parent: PathBuf,
    },
}

impl Mechanism {
    pub fn name(&self) -> &'static str {
        match self {
            Mechanism::Bubblewrap { .. } => "bubblewrap",
            Mechanism::Landlock { .. } => "landlock",
        }
    }
}

/// The way out of a sandbox with a network allow-list: the proxy's socket, and the helper
/// that brings it onto the sandbox's loopback (this process's own binary).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetRoute {
    pub socket: PathBuf,
    pub helper: PathBuf,
}

/// The sandbox after preparation.
#[derive(Debug, Clone)]
enum State {
    /// No sandbox was asked for.
    Off,
    Ready {
        mechanism: Mechanism,
        net: Option<NetRoute>,
    },
    /// Asked for, but it cannot be set up: every start is refused with this reason.
    Unavailable(String),
}

/// The prepared sandbox.
#[derive(Debug, Clone)]
pub struct Sandbox {
    settings: Settings,
    state: State,
}

/// What `list` and the start-up line say about the sandbox.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Summary {
    /// `off`, `read-only` or `workspace-write`.
    pub mode: String,
    /// `on`, `off` or `allow:DOMAIN,…`.
    pub network: String,
    /// Where commands may write (workspace-write), besides their private /tmp.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workspaces: Vec<String>,
    /// The enforcing mechanism, when one is active.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mechanism: Option<String>,
    /// Whether commands can run at all.
    pub available: bool,
    /// Why not, when they cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Why a program may not start: the sandbox asked for cannot be set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the operator's sandbox cannot be set up, so nothing runs (never unconfined): {}",
            self.0
        )
    }
}

/// A program and its arguments, as they will be started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub program: String,
    pub args: Vec<String>,
    /// Set on the launched process itself. Under bubblewrap this is empty: the request's
    /// variables are handed to bwrap as `--setenv`, so they reach only the program inside
    /// (a variable such as `LD_PRELOAD` on bwrap itself would run code before the sandbox
    /// exists).
    pub env: Vec<(String, String)>,
    /// What the session's supervisor applies to itself first (the Landlock mechanism).
    pub landlock: Option<landlock::Plan>,
}

impl Sandbox {
    /// No sandbox.
    pub fn off() -> Sandbox {
        Sandbox {
            settings: Settings::default(),
            state: State::Off,
        }
    }

    /// Find and try the mechanism for `settings`.
    pub fn prepare(settings: Settings) -> Sandbox {
        let state = if !settings.confines() {
            State::Off
        } else {
            match find(&settings).and_then(|m| Ok((m, net_route(&settings.network)?))) {
                Ok((mechanism, net)) => State::Ready { mechanism, net },
                Err(reason) => State::Unavailable(reason),
            }
        };
        Sandbox { settings, state }
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Whether programs are confined (and by what).
    pub fn mechanism(&self) -> Option<&Mechanism> {
        match &self.state {
            State::Ready { mechanism, .. } => Some(mechanism),
            _ => None,
        }
    }

    /// `Err` when nothing may start.
    pub fn ready(&self) -> Result<(), Unavailable> {
        match &self.state {
            State::Unavailable(r) => Err(Unavailable(r.clone())),
            _ => Ok(()),
        }
    }

    pub fn summary(&self) -> Summary {
        let s = &self.settings;
        Summary {
            mode: s.level.as_str().to_string(),
            network: s.network.to_string(),
            workspaces: s
                .writable_roots()
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            mechanism: self.mechanism().map(|m| m.name().to_string()),
            available: self.ready().is_ok(),
            reason: self.ready().err().map(|u| u.0),
        }
    }

    /// One line for the start-up log.
    pub fn describe(&self) -> String {
        let s = &self.settings;
        match &self.state {
            State::Off => "sandbox off: commands run with the server's own access".into(),
            State::Ready { mechanism, .. } => format!(
                "sandbox {} (network {}) enforced by {}; writable: {}",
                s.level.as_str(),
                s.network,
                match mechanism {
                    Mechanism::Bubblewrap { version, .. } => version.as_str(),
                    Mechanism::Landlock { description, .. } => description.as_str(),
                },
                self.writable_description()
            ),
            State::Unavailable(r) => format!(
                "sandbox {} asked for but unavailable, so every command is refused: {r}",
                s.level.as_str()
            ),
        }
    }

    /// `program args` as started inside the sandbox, in `cwd`, with `env` set for it.
    /// `expose` are paths the program must be able to read although the sandbox hides them
    /// (a terminal's shell-integration scripts in the server's runtime directory under /tmp).
    pub fn wrap(
        &self,
        program: &str,
        args: &[String],
        cwd: &Path,
        expose: &[PathBuf],
        env: Vec<(String, String)>,
    ) -> Result<Launch, Unavailable> {
        match &self.state {
            State::Off => Ok(Launch {
                program: program.to_string(),
                args: args.to_vec(),
                env,
                landlock: None,
            }),
            State::Unavailable(r) => Err(Unavailable(r.clone())),
            State::Ready {
                mechanism: Mechanism::Bubblewrap { path, options, .. },
                net,
            } => Ok(Launch {
                program: path.display().to_string(),
                args: bwrap::argv(
                    &self.settings,
                    options,
                    bwrap::Run {
                        program,
                        args,
                        cwd,
                        expose,
                        env: &env,
                    },
                    net.as_ref(),
                )
                .map_err(Unavailable)?,
                env: Vec::new(),
                landlock: None,
            }),
            State::Ready {
                mechanism: Mechanism::Landlock { tmp_parent, .. },
                ..
            } => {
                let s = &self.settings;
                // `.git` may have appeared since the start.
                if let Some(why) = landlock::refusal(s.writable_roots(), &s.protected) {
                    return Err(Unavailable(why));
                }
                Ok(Launch {
                    program: program.to_string(),
                    args: args.to_vec(),
                    // The program enters the restriction before it is executed: the
                    // variables only ever reach a confined process.
                    env,
                    landlock: Some(landlock::Plan {
                        writable: match s.level {
                            Level::Off => vec!["/".into()],
                            _ => s
                                .writable_roots()
                                .iter()
                                .map(|w| w.display().to_string())
                                .collect(),
                        },
                        tmp_parent: tmp_parent.display().to_string(),
                        network_off: s.network != Network::On,
                        hidden: s
                            .protected
                            .iter()
                            .filter(|p| p.exists())
                            .map(|p| p.display().to_string())
                            .collect(),
                    }),
                })
            }
        }
    }

    /// Where commands may write, for messages.
    pub fn writable_description(&self) -> String {
        let tmp = match self.mechanism() {
            Some(Mechanism::Landlock { .. }) => "a private TMPDIR (/tmp is read-only)",
            _ => "a private /tmp",
        };
        self.settings.writable_description(tmp)
    }
}

/// The mechanism the operator's choice gives on this machine.
fn find(settings: &Settings) -> Result<Mechanism, String> {
    match settings.mechanism {
        MechanismChoice::Bubblewrap => bwrap::find(settings),
        MechanismChoice::Landlock => find_landlock(settings),
        MechanismChoice::Auto => bwrap::find(settings)
            .or_else(|b| find_landlock(settings).map_err(|l| format!("{b}; and no fallback: {l}"))),
    }
}

fn find_landlock(settings: &Settings) -> Result<Mechanism, String> {
    if let Network::Allow(_) = settings.network {
        return Err(
            "a network allow-list needs bubblewrap (Landlock cannot route connections \
             through the proxy)"
                .into(),
        );
    }
    let description = landlock::probe()?;
    if let Some(why) = landlock::refusal(settings.writable_roots(), &settings.protected) {
        return Err(why);
    }
    let tmp_parent = landlock::tmp_parent();
    crate::private_dir::ensure(&tmp_parent)
        .map_err(|e| format!("cannot prepare the sandbox's directory: {e}"))?;
    #[cfg(unix)]
    landlock::sweep_session_tmps(&tmp_parent);
    Ok(Mechanism::Landlock {
        description,
        tmp_parent,
    })
}

/// With an allow-list: start the proxy, and find the helper that reaches it.
#[cfg(unix)]
fn net_route(network: &Network) -> Result<Option<NetRoute>, String> {
    let Network::Allow(domains) = network else {
        return Ok(None);
    };
    let helper = std::env::current_exe().map_err(|e| {
        format!("cannot find this program's own binary for the network helper: {e}")
    })?;
    let proxy = proxy::start(domains.clone())?;
    Ok(Some(NetRoute {
        socket: proxy.socket,
        helper,
    }))
}

/// The proxy listens on a Unix socket bound into a Linux sandbox: there is none here.
#[cfg(not(unix))]
fn net_route(network: &Network) -> Result<Option<NetRoute>, String> {
    match network {
        Network::Allow(_) => Err(NOT_LINUX.into()),
        _ => Ok(None),
    }
}

fn installed() -> &'static OnceLock<Sandbox> {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    &SANDBOX
}

/// Install the process's sandbox, once, at start, before any session. A second call is
/// ignored: the operator's sandbox never changes while the server runs.
pub fn install(sandbox: Sandbox) {
    if installed().set(sandbox).is_err() {
        tracing::warn!("the sandbox was already installed; the second one is ignored");
    }
}

/// The process's sandbox (off when none was installed).
pub fn current() -> &'static Sandbox {
    static OFF: OnceLock<Sandbox> = OnceLock::new();
    installed()
        .get()
        .unwrap_or_else(|| OFF.get_or_init(Sandbox::off))
}
