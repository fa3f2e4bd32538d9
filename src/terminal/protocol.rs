//! What the terminal operations carry: the requests every adapter serves and their
//! answers, serializable so they cross the host's WebSocket unchanged. Types only; `ops`
//! serves them.

use std::collections::BTreeMap;

use ahp_types::state::{TerminalClaim, TerminalSessionClaim};
use serde::{Deserialize, Serialize};

use super::CoreError;
use super::term::{CommandRecord, IntegrationLevel};

pub use crate::text::views::{DEFAULT_MAX_BYTES, ScreenView, View};

/// What interrupts a terminal's foreground command: Ctrl-C, as a person would type it (the
/// server's timeouts, a cancelled call, and its fallback for hosts without `interrupt`).
pub const CTRL_C: &str = "\u{3}";

/// The session claim an agent holds while it works a terminal (docs/terminal-core.md, "Commands and claims"): with
/// `tool_call_id` during a call, without it (backgrounded) afterwards.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AgentClaim {
    pub session: String,
    pub chat: String,
    pub tool_call_id: Option<String>,
}

impl AgentClaim {
    pub fn active(&self) -> TerminalClaim {
        TerminalClaim::Session(TerminalSessionClaim {
            session: self.session.clone(),
            chat: self.chat.clone(),
            turn_id: None,
            tool_call_id: self.tool_call_id.clone(),
        })
    }

    /// The tool call this claim is for, as one key (`None` once backgrounded).
    pub fn call_key(&self) -> Option<String> {
        let id = self.tool_call_id.as_deref()?;
        Some(format!("{}#{id}", self.session))
    }

    pub fn background(&self) -> TerminalClaim {
        TerminalClaim::Session(TerminalSessionClaim {
            session: self.session.clone(),
            chat: self.chat.clone(),
            turn_id: None,
            tool_call_id: None,
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct OutputSpec {
    pub view: View,
    pub max_bytes: Option<usize>,
    pub tail: bool,
    pub cursor: Option<u64>,
    /// A default answer: at most this many bytes, as the head and the tail of what there is
    /// when it is more (`spool::excerpt`). Absent from callers that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<usize>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpenArgs {
    pub name: Option<String>,
    /// Absent: the serving process's own directory.
    pub cwd: Option<String>,
    pub env: BTreeMap<String, String>,
    pub shell: Option<String>,
    pub cols: Option<u16>,
    pub rows: Option<u16>,
    pub workspace_id: Option<String>,
    /// Run this command line once the shell is ready.
    pub command: Option<String>,
    pub wait_ms: u64,
    pub timeout_ms: Option<u64>,
    pub claim: AgentClaim,
    pub output: OutputSpec,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunArgs {
    pub terminal_id: String,
    pub command: String,
    pub wait_ms: u64,
    pub timeout_ms: Option<u64>,
    pub claim: Option<AgentClaim>,
    pub output: OutputSpec,
    /// See [`InputArgs::unseen_line`]: what the agent left unentered before this line.
    #[serde(default)]
    pub unseen_line: bool,
    /// New size (cols, rows) first: the program gets SIGWINCH and redraws.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<(Option<u16>, Option<u16>)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InputArgs {
    pub terminal_id: String,
    pub data: String,
    pub wait_for: Option<String>,
    pub wait_ms: u64,
    pub claim: Option<AgentClaim>,
    pub output: OutputSpec,
    /// The keys, with what the agent left unentered before them, recall history, move the
    /// cursor, yank or complete before a line end: a shell's line editor would enter a line
    /// the policy never saw. The terminal refuses them where they reach such an editor.
    #[serde(default)]
    pub unseen_line: bool,
    /// See [`RunArgs::size`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<(Option<u16>, Option<u16>)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadArgs {
    pub terminal_id: String,
    pub wait_ms: u64,
    pub output: OutputSpec,
}

/// A command waiting for a person's decision (`pm/approval/ask`, answered by the host's
/// approvers; the embedded core has none and answers `unavailable`). Not a terminal
/// operation: it runs nothing.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ApprovalArgs {
    pub request_id: String,
    pub trace_id: String,
    pub command: String,
    pub cwd: Option<String>,
    pub terminal_id: Option<String>,
    pub warning: Option<String>,
    pub rule: Option<String>,
    pub timeout_ms: u64,
    /// With no page connected yet: how long to wait for one before answering `unavailable`
    /// (the operator launched the GUI, so a page is expected).
    #[serde(default)]
    pub page_wait_ms: u64,
}

/// `approved`, `declined`, `timeout` or `unavailable` (nobody to ask).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ApprovalAnswer {
    pub decision: String,
    pub reason: Option<String>,
    pub decided_by: Option<String>,
}

impl ApprovalAnswer {
    pub fn unavailable() -> ApprovalAnswer {
        ApprovalAnswer::decided("unavailable")
    }

    /// An answer no person gave (`unavailable`, `timeout`, `withdrawn`).
    pub fn decided(decision: &str) -> ApprovalAnswer {
        ApprovalAnswer {
            decision: decision.into(),
            reason: None,
            decided_by: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum TermRequest {
    Open(OpenArgs),
    Run(RunArgs),
    Input(InputArgs),
    Read(ReadArgs),
    Attach {
        terminal_id: String,
        claim: Option<AgentClaim>,
    },
    Kill {
        terminal_id: String,
    },
    Dispose {
        terminal_id: String,
    },
    List,
    /// Stop what the tool call of `claim` started in the terminal: a command line still
    /// waiting for the shell is never typed, a typed one is interrupted with Ctrl-C.
    /// Answered [`TermResponse::Interrupted`].
    Interrupt {
        terminal_id: String,
        claim: Option<AgentClaim>,
    },
    /// An answer that showed the stream from `back_to` on reached nobody (its call was
    /// cancelled): the next read without a cursor starts there again. What somebody read
    /// past it meanwhile is shown again too: twice rather than lost. Answered
    /// [`TermResponse::Rewound`].
    Rewind {
        terminal_id: String,
        back_to: u64,
    },
}

impl TermRequest {
    /// The operation's name on the wire (`open`, `run`, …).
    pub fn op_name(&self) -> &'static str {
        match self {
            TermRequest::Open(_) => "open",
            TermRequest::Run(_) => "run",
            TermRequest::Input(_) => "input",
            TermRequest::Read(_) => "read",
            TermRequest::Attach { .. } => "attach",
            TermRequest::Kill { .. } => "kill",
            TermRequest::Dispose { .. } => "dispose",
            TermRequest::List => "list",
            TermRequest::Rewind { .. } => "rewind",
            TermRequest::Interrupt { .. } => "interrupt",
        }
    }

    /// Whether the operation runs something in a terminal (so an unanswered one may have).
    pub fn may_run_something(&self) -> bool {
        match self {
            TermRequest::Open(a) => a.command.is_some(),
            TermRequest::Run(_) | TermRequest::Input(_) => true,
            _ => false,
        }
    }

    /// The terminal an operation acts on, if any.
    pub fn terminal_id(&self) -> Option<&str> {
        match self {
            TermRequest::Run(a) => Some(&a.terminal_id),
            TermRequest::Input(a) => Some(&a.terminal_id),
            TermRequest::Read(a) => Some(&a.terminal_id),
            TermRequest::Attach { terminal_id, .. }
            | TermRequest::Kill { terminal_id }
            | TermRequest::Dispose { terminal_id }
            | TermRequest::Rewind { terminal_id, .. }
            | TermRequest::Interrupt { terminal_id, .. } => Some(terminal_id),
            TermRequest::Open(_) | TermRequest::List => None,
        }
    }
}

/// A terminal at a glance.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TermSummary {
    pub terminal_id: String,
    pub resource: String,
    pub title: String,
    pub shell: String,
    pub cwd: Option<String>,
    pub running: bool,
    pub exit_code: Option<i64>,
    pub signal: Option<String>,
    pub claim: serde_json::Value,
    pub supports_command_detection: bool,
    /// How much of the shell integration works: `full`, `prompt_only` or `none`.
    pub shell_integration: IntegrationLevel,
    pub executing: Option<String>,
    pub output_bytes: u64,
    pub age_ms: u64,
    pub started_at_ms: u64,
    pub workspace_id: Option<String>,
    /// What runs besides the shell and its foreground program (`list` only). Absent from
    /// hosts that predate it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background_jobs: Vec<crate::process::jobs::Job>,
}

/// A piece of the terminal stream in the requested view.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Chunk {
    pub text: String,
    pub view: View,
    pub start: u64,
    pub end: u64,
    pub total: u64,
    pub omitted_before: u64,
    pub omitted_after: u64,
    /// Where a read without a cursor started before this chunk was shown; what a
    /// [`TermRequest::Rewind`] goes back to when the answer reached nobody. Absent from
    /// hosts that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_before: Option<u64>,
    /// With an excerpt: the bytes left out after `text` (`[from, to)`), and the text from
    /// `to` to `end`. Absent from hosts that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<(u64, u64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<String>,
    /// Bytes of the stream the server did not keep. Absent from hosts that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<crate::contract::result::Dropped>,
}

/// The answer of `open`, `run` and `input`: the terminal, the output since the command or
/// keystrokes were sent, and the command line they ran when the shell reported one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Ran {
    pub terminal: TermSummary,
    pub output: Chunk,
    pub command: Option<CommandRecord>,
    /// The command (or, with none detected, the terminal's process) is still running.
    pub running: bool,
    /// Why the answer knows less than it could (no shell integration).
    pub note: Option<String>,
    /// The terminal's foreground program is blocked reading it (as the kernel says): the
    /// line it prompts on. Absent from hosts that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_for_input: Option<String>,
    /// A full-screen program holds the terminal and the output was asked for the default
    /// way: its screen, which says what the bytes that drew it do not. Absent from hosts
    /// that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<ScreenView>,
    /// For input: whether the keys reached the shell's line editor (or a program reading
    /// lines, whose leftovers the editor takes), rather than a program reading the terminal
    /// raw. Absent from hosts that predate it: taken as yes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reached_line_editor: Option<bool>,
}

/// What a `read` shows, in the view it asked for.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "shows", rename_all = "snake_case")]
pub enum Shown {
    Output(Chunk),
    Screen(ScreenView),
    Commands { commands: Vec<CommandRecord> },
}

/// The answer of `read`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReadAnswer {
    pub terminal: TermSummary,
    /// The terminal's process is running.
    pub running: bool,
    pub shown: Shown,
    /// The terminal's foreground program is blocked reading it: the line it prompts on.
    /// Absent from hosts that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_for_input: Option<String>,
    /// As in `Ran`: the screen of a full-screen program, for a default read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<ScreenView>,
}

/// The answer of `attach`: everything a client taking a terminal over needs at once.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Attached {
    pub terminal: TermSummary,
    pub running: bool,
    pub screen: ScreenView,
    pub commands: Vec<CommandRecord>,
}

/// The answer of `kill` and `dispose`: the processes killed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Killed {
    /// The terminal as it is now (`dispose` forgets it, so it has none).
    pub terminal: Option<TermSummary>,
    pub killed: Vec<i32>,
    pub note: Option<String>,
}

/// One answer per kind of operation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum TermResponse {
    Ran(Ran),
    Read(ReadAnswer),
    Attached(Attached),
    Killed(Killed),
    List {
        terminals: Vec<TermSummary>,
    },
    /// Whether a [`TermRequest::Rewind`] moved the terminal's delivered mark back.
    Rewound {
        rewound: bool,
    },
    /// Whether a [`TermRequest::Interrupt`] withheld a command line before it was typed
    /// (else it sent Ctrl-C).
    Interrupted {
        withheld: bool,
    },
}

impl TermResponse {
    /// The terminal the answer is about, if it names one.
    pub fn terminal(&self) -> Option<&TermSummary> {
        match self {
            TermResponse::Ran(r) => Some(&r.terminal),
            TermResponse::Read(r) => Some(&r.terminal),
            TermResponse::Attached(r) => Some(&r.terminal),
            TermResponse::Killed(r) => r.terminal.as_ref(),
            TermResponse::List { .. }
            | TermResponse::Rewound { .. }
            | TermResponse::Interrupted { .. } => None,
        }
    }

    /// The terminal stream the answer showed, if it showed some.
    pub fn output(&self) -> Option<&Chunk> {
        match self {
            TermResponse::Ran(r) => Some(&r.output),
            TermResponse::Read(ReadAnswer {
                shown: Shown::Output(c),
                ..
            }) => Some(c),
            _ => None,
        }
    }

    /// The answer of `open`/`run`/`input`, or `None` for another kind.
    pub fn ran(self) -> Option<Ran> {
        match self {
            TermResponse::Ran(r) => Some(r),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpErrorKind {
    NotFound,
    /// The terminal was on a host that restarted: it is gone for good.
    Gone,
    /// The terminal is known but its shell has ended: it takes no input, its output stays.
    Exited,
    Invalid,
    Busy,
    Limit,
    Timeout,
    Internal,
    /// A machine resource ran out (`OpError::limit` names it).
    Resource,
    /// The operator's settings make the operation fail (a container path mapped to a host
    /// directory that does not exist): nothing in the request is wrong.
    Setup,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpError {
    pub kind: OpErrorKind,
    pub message: String,
    /// What was there when it failed (a timeout carries the output so far).
    pub partial: Option<Box<Ran>>,
    /// The resource that ran out, for [`OpErrorKind::Resource`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
}

impl OpError {
    pub fn new(kind: OpErrorKind, message: impl Into<String>) -> OpError {
        OpError {
            kind,
            message: message.into(),
            partial: None,
            limit: None,
        }
    }
}

impl From<CoreError> for OpError {
    fn from(e: CoreError) -> Self {
        if let CoreError::Resource { limit, message } = e {
            let mut err = OpError::new(OpErrorKind::Resource, message);
            err.limit = Some(limit.to_string());
            return err;
        }
        let kind = match e {
            CoreError::Resource { .. } => OpErrorKind::Resource,
            CoreError::NotFound(_) => OpErrorKind::NotFound,
            CoreError::Invalid(_) | CoreError::Exists(_) => OpErrorKind::Invalid,
            CoreError::Limit(_) => OpErrorKind::Limit,
            CoreError::Spawn(_) => OpErrorKind::Internal,
        };
        OpError::new(kind, e.to_string())
    }
}

pub type OpResult = Result<TermResponse, OpError>;

/// What `open`, `run` and `input` return before they become a [`TermResponse`].
pub type RanResult = Result<Ran, OpError>;
