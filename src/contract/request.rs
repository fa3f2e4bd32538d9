//! The canonical request (docs/contract.md), as the rest of the server sees it: every alias
//! resolved, every legacy flat key moved to its nested place, every coupling rule checked.

use std::collections::BTreeMap;

use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Execute,
    ReadOutput,
    Terminate,
    List,
}

impl Action {
    /// Every canonical action, in the contract's order.
    pub const ALL: [Action; 4] = [
        Action::Execute,
        Action::ReadOutput,
        Action::Terminate,
        Action::List,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Action::Execute => "execute",
            Action::ReadOutput => "read_output",
            Action::Terminate => "terminate",
            Action::List => "list",
        }
    }

    pub fn parse(s: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    Interactive,
    Headless,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Interactive => "interactive",
            Mode::Headless => "headless",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "interactive" => Some(Mode::Interactive),
            "headless" => Some(Mode::Headless),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    OpenOnly,
    ExecuteCommand,
}

pub use crate::text::views::{Encoding, View};

#[derive(Debug, Clone, Default)]
pub struct Correlation {
    pub request_id: String,
    pub trace_id: String,
    pub client_request_id: Option<String>,
}

/// How the request's action was reached: directly, or through a legacy alias.
#[derive(Debug, Clone, Default)]
pub struct Resolution {
    pub canonical_action: Option<Action>,
    pub alias_applied: bool,
    pub legacy_action: Option<String>,
    pub mode: Option<Mode>,
    pub deprecation: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Runtime {
    pub workspace_id: Option<String>,
    pub cwd: Option<String>,
    pub timeout_ms: Option<u64>,
    pub wait_ms: Option<u64>,
    pub adapter_override: Option<String>,
    /// The agent asks to run this headless command outside the operator's sandbox: only a
    /// person can allow it.
    pub unsandboxed: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Execution {
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    pub env: Option<BTreeMap<String, String>>,
    pub input: Option<String>,
    pub keys: Option<Vec<String>>,
    pub wait_for: Option<String>,
    pub name: Option<String>,
    pub shell: Option<String>,
    pub cols: Option<u16>,
    pub rows: Option<u16>,
}

impl Execution {
    pub fn is_empty(&self) -> bool {
        self.command.is_none()
            && self.args.is_none()
            && self.env.is_none()
            && self.input.is_none()
            && self.keys.is_none()
            && self.wait_for.is_none()
            && self.name.is_none()
            && self.shell.is_none()
            && self.cols.is_none()
            && self.rows.is_none()
    }

    /// True when the request sends keystrokes rather than a command line.
    pub fn has_raw_input(&self) -> bool {
        self.input.is_some() || self.keys.is_some()
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Target {
    pub session_id: Option<String>,
    pub terminal_id: Option<String>,
    /// A command held for a person's decision: read_output follows it, terminate withdraws it.
    pub approval_id: Option<String>,
}

impl Target {
    pub fn is_empty(&self) -> bool {
        self.session_id.is_none() && self.terminal_id.is_none() && self.approval_id.is_none()
    }
}

/// Which items a `list` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListState {
    Running,
    Exited,
}

/// `listing`: a state filter and a page.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ListOptions {
    pub state: Option<ListState>,
    pub limit: Option<usize>,
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct OutputOptions {
    pub cursor: Option<u64>,
    pub stdout_cursor: Option<u64>,
    pub stderr_cursor: Option<u64>,
    pub max_bytes: Option<usize>,
    pub tail: Option<bool>,
    pub view: Option<View>,
    pub encoding: Option<Encoding>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Compat {
    pub legacy_action: Option<String>,
    pub caller_surface: Option<String>,
}

/// A validated canonical request.
#[derive(Debug, Clone)]
pub struct Request {
    /// list only: state filter and paging.
    pub listing: ListOptions,
    pub action: Action,
    /// For execute: the requested mode. For the other actions: the mode the target implies.
    pub mode: Option<Mode>,
    pub intent: Option<Intent>,
    pub correlation: Correlation,
    pub resolution: Resolution,
    pub runtime: Runtime,
    pub execution: Execution,
    pub target: Target,
    pub output: OutputOptions,
    pub compat: Compat,
    /// Set by the strict tool, never from the wire: the command is a build or test command,
    /// which runs the project's own code, so it is judged as code the agent may have written.
    pub runs_project_code: bool,
}
