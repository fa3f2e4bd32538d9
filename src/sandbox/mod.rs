//! The operator's sandbox: what every command and every terminal shell may write and reach,
//! enforced by the kernel around the program (see docs/sandbox.md).
//!
//! The operator sets it once, at start (`--sandbox`, `--workspace`, `--network`); no request
//! can change it. It is prepared once — the mechanism found and tried — and installed for the
//! whole process: [`crate::process::spawn`] wraps every session's program in it, so no path
//! through the server starts a program outside it. When the sandbox asked for cannot be set
//! up, every start is refused (with the reason) rather than run unconfined.

mod bwrap;
pub mod denial;
pub mod netbridge;
mod proxy;
mod settings;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Serialize;

pub use settings::{Level, Network, Settings};

/// How the sandbox is enforced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mechanism {
    /// bubblewrap (`bwrap`): mount, pid and network namespaces around the program.
    Bubblewrap { path: PathBuf, version: String },
}

impl Mechanism {
    pub fn name(&self) -> &'static str {
        match self {
            Mechanism::Bubblewrap { .. } => "bubblewrap",
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
            match bwrap::find(&settings).and_then(|m| Ok((m, net_route(&settings.network)?))) {
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
            workspaces: match s.level {
                Level::WorkspaceWrite => s
                    .workspaces
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect(),
                _ => Vec::new(),
            },
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
            State::Ready {
                mechanism: Mechanism::Bubblewrap { version, .. },
                ..
            } => format!(
                "sandbox {} (network {}) enforced by {version}; writable: {}",
                s.level.as_str(),
                s.network,
                s.writable_description()
            ),
            State::Unavailable(r) => format!(
                "sandbox {} asked for but unavailable, so every command is refused: {r}",
                s.level.as_str()
            ),
        }
    }

    /// `program args` as started inside the sandbox, in `cwd`. `expose` are paths the program
    /// must be able to read although the sandbox hides them (a terminal's shell-integration
    /// scripts in the server's runtime directory under /tmp).
    pub fn wrap(
        &self,
        program: &str,
        args: &[String],
        cwd: &Path,
        expose: &[PathBuf],
    ) -> Result<Launch, Unavailable> {
        match &self.state {
            State::Off => Ok(Launch {
                program: program.to_string(),
                args: args.to_vec(),
            }),
            State::Unavailable(r) => Err(Unavailable(r.clone())),
            State::Ready {
                mechanism: Mechanism::Bubblewrap { path, .. },
                net,
            } => Ok(Launch {
                program: path.display().to_string(),
                args: bwrap::argv(&self.settings, program, args, cwd, expose, net.as_ref()),
            }),
        }
    }
}

/// With an allow-list: start the proxy, and find the helper that reaches it.
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
