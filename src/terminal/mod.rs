//! The AHP terminal core (docs/terminal-core.md): pty terminals, shell integration, OSC 633/133
//! parsing, state changed only through Microsoft's reducers, bounded content, an action log
//! with server sequence numbers, subscriptions, and the operations every adapter
//! and the host service serve (`ops`).

mod answers;
mod carry;
mod catch_up;
pub mod client_actions;
pub mod core;
pub mod drive;
mod emulate;
pub mod file_uri;
mod fish_syntax;
pub mod frame;
mod guard;
pub mod held;
mod interrupt;
pub mod lifecycle;
pub mod looks;
#[cfg(test)]
mod memory_pty;
pub mod ops;
pub mod osc;
pub mod protocol;
pub mod pty;
mod queries;
pub mod ready;
pub mod shell;
pub mod submission;
pub mod term;
pub mod view;
pub mod waits;

use std::collections::BTreeMap;
use std::path::PathBuf;

use ahp_types::state::TerminalClaim;

pub use self::core::Core;
pub use term::{CommandRecord, Terminal};

/// Default text kept in a terminal's AHP content parts (the stream keeps everything).
pub const DEFAULT_SCROLLBACK_BYTES: usize = 512 * 1024;
/// Default most live terminals.
pub const DEFAULT_MAX_TERMINALS: usize = 64;
/// Default most exited terminals kept readable.
pub const DEFAULT_MAX_EXITED: usize = 64;
/// Default action log bounds. The log lets a subscriber that fell behind catch up by
/// replay (one further behind gets a snapshot); every terminal's output passes through it,
/// so its bytes bound what a busy session holds beyond its terminals' own memory.
pub const DEFAULT_LOG_ACTIONS: usize = 50_000;
pub const DEFAULT_LOG_BYTES: usize = 8 * 1024 * 1024;
/// Default terminal size.
pub const DEFAULT_COLS: u16 = 120;
pub const DEFAULT_ROWS: u16 = 30;

#[derive(Debug, Clone)]
pub struct CoreConfig {
    /// Shell integration scripts and nonce files.
    pub runtime_dir: PathBuf,
    pub spool_dir: PathBuf,
    pub memory_limit: usize,
    pub scrollback_bytes: usize,
    pub max_terminals: usize,
    pub max_exited: usize,
    pub default_shell: Option<String>,
    /// Do not source the user's rc files (deterministic tests and benchmarks).
    pub skip_user_rc: bool,
    pub log_max_actions: usize,
    pub log_max_bytes: usize,
    /// Places for live terminals shared with other cores of the server (each HTTP session
    /// has its own): a live terminal holds one until its shell ends.
    pub shared_places: Option<std::sync::Arc<crate::limits::places::Places>>,
}

impl CoreConfig {
    pub fn new(spool_dir: PathBuf, memory_limit: usize) -> CoreConfig {
        CoreConfig {
            runtime_dir: shell::runtime_dir(&spool_dir),
            spool_dir,
            memory_limit,
            scrollback_bytes: DEFAULT_SCROLLBACK_BYTES,
            max_terminals: DEFAULT_MAX_TERMINALS,
            max_exited: DEFAULT_MAX_EXITED,
            default_shell: None,
            skip_user_rc: false,
            log_max_actions: DEFAULT_LOG_ACTIONS,
            log_max_bytes: DEFAULT_LOG_BYTES,
            shared_places: None,
        }
    }
}

/// What a new terminal looks like.
#[derive(Debug, Clone)]
pub struct CreateSpec {
    /// Client-chosen id (AHP `createTerminal` names its channel); generated when absent.
    pub id: Option<String>,
    pub name: Option<String>,
    pub cwd: PathBuf,
    pub env: BTreeMap<String, String>,
    pub shell: Option<String>,
    pub cols: u16,
    pub rows: u16,
    pub claim: TerminalClaim,
    pub holder_client: Option<String>,
    pub workspace_id: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error("no terminal {0:?}")]
    NotFound(String),
    #[error("{0}")]
    Invalid(String),
    #[error("too many live terminals ({0}); terminate some first")]
    Limit(usize),
    #[error("{0}")]
    Spawn(String),
    /// A machine resource ran out (`limit`: see [`crate::limits::resource::exhausted`]).
    #[error("{message}")]
    Resource {
        limit: &'static str,
        message: String,
    },
    #[error("terminal {0:?} already exists")]
    Exists(String),
}

impl CoreError {
    /// `what` failed with `e`: a resource that ran out is named, anything else is a failure
    /// to start.
    pub fn starting(what: String, e: &std::io::Error) -> CoreError {
        match crate::limits::resource::exhausted(e) {
            Some(limit) => CoreError::Resource {
                limit,
                message: format!("{what}: {e} ({limit} ran out)"),
            },
            None => CoreError::Spawn(format!("{what}: {e}")),
        }
    }
}
