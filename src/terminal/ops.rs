//! The terminal operations every runtime adapter serves, as serializable requests and
//! responses: the local adapter calls [`execute`] in-process, the host service calls it for
//! requests that arrive over AHP, so the behaviour is the same wherever a terminal lives.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ahp_types::state::{TerminalClaim, TerminalLifecycleState, TerminalSessionClaim};
use serde::{Deserialize, Serialize};

use super::core::Core;
use super::term::{CommandRecord, IntegrationLevel, Terminal, strip_escapes};
use super::{CoreError, drive, lifecycle};
use crate::spool::incomplete_utf8_tail;

/// Default most bytes of terminal output per answer.
pub const DEFAULT_MAX_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum View {
    Raw,
    #[default]
    Text,
    Screen,
    Commands,
}

/// The session claim an agent holds while it works a terminal (seed 001 "Claims"): with
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
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InputArgs {
    pub terminal_id: String,
    pub data: String,
    pub wait_for: Option<String>,
    pub wait_ms: u64,
    pub claim: Option<AgentClaim>,
    pub output: OutputSpec,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadArgs {
    pub terminal_id: String,
    pub wait_ms: u64,
    pub output: OutputSpec,
}

/// A command waiting for a person's decision (answered by the host's approvers; the
/// embedded core has none and answers `unavailable`).
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
        ApprovalAnswer {
            decision: "unavailable".into(),
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
    Approval(ApprovalArgs),
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
            TermRequest::Approval(_) => "approval",
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
            | TermRequest::Dispose { terminal_id } => Some(terminal_id),
            TermRequest::Open(_) | TermRequest::List | TermRequest::Approval(_) => None,
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
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScreenView {
    pub rows: u16,
    pub cols: u16,
    pub cursor_row: u16,
    pub cursor_col: u16,
    pub alternate_screen: bool,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct TermResponse {
    pub terminal: Option<TermSummary>,
    pub output: Option<Chunk>,
    pub command: Option<CommandRecord>,
    pub commands: Option<Vec<CommandRecord>>,
    pub screen: Option<ScreenView>,
    /// Execute: the command is still running. Read: the terminal's process is running.
    pub running: bool,
    pub timed_out: bool,
    pub killed: Vec<i32>,
    pub list: Vec<TermSummary>,
    pub note: Option<String>,
    pub approval: Option<ApprovalAnswer>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpErrorKind {
    NotFound,
    /// The terminal was on a host that restarted: it is gone for good.
    Gone,
    Invalid,
    Busy,
    Limit,
    Timeout,
    Internal,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpError {
    pub kind: OpErrorKind,
    pub message: String,
    /// What was there when it failed (a timeout carries the output so far).
    pub partial: Option<Box<TermResponse>>,
}

impl OpError {
    pub fn new(kind: OpErrorKind, message: impl Into<String>) -> OpError {
        OpError {
            kind,
            message: message.into(),
            partial: None,
        }
    }
}

impl From<CoreError> for OpError {
    fn from(e: CoreError) -> Self {
        let kind = match e {
            CoreError::NotFound(_) => OpErrorKind::NotFound,
            CoreError::Invalid(_) | CoreError::Exists(_) => OpErrorKind::Invalid,
            CoreError::Limit(_) => OpErrorKind::Limit,
            CoreError::Spawn(_) => OpErrorKind::Internal,
        };
        OpError::new(kind, e.to_string())
    }
}

pub type OpResult = Result<TermResponse, OpError>;

/// Serve one request against the core. `caller` is the AHP client it came from (the host
/// records it as the holder of the terminals it opens); `None` in-process.
pub async fn execute(core: &Arc<Core>, req: TermRequest, caller: Option<&str>) -> OpResult {
    match req {
        TermRequest::Open(a) => drive::open(core, a, caller).await,
        TermRequest::Run(a) => drive::run(core, a).await,
        TermRequest::Input(a) => drive::input(core, a).await,
        TermRequest::Read(a) => read(core, a).await,
        TermRequest::Attach { terminal_id, claim } => {
            let t = find(core, &terminal_id)?;
            if let Some(c) = &claim {
                drive::set_claim(core, &t, c, false);
            }
            let mut r = respond(&t, None, false);
            r.screen = Some(screen(core, &t));
            r.commands = Some(t.state().commands.iter().cloned().collect());
            r.running = t.is_running();
            Ok(r)
        }
        TermRequest::Kill { terminal_id } => {
            let t = find(core, &terminal_id)?;
            let was_running = t.is_running();
            let killed = lifecycle::kill(core, &t).await;
            let mut r = respond(&t, None, false);
            r.killed = killed;
            if !was_running {
                r.note = Some(
                    "the terminal had already exited; anything it left behind was killed".into(),
                );
            }
            Ok(r)
        }
        TermRequest::Dispose { terminal_id } => {
            let killed = core.dispose(&terminal_id).await?;
            Ok(TermResponse {
                killed,
                ..TermResponse::default()
            })
        }
        TermRequest::List => Ok(TermResponse {
            list: core.list().iter().map(|t| summary(t)).collect(),
            ..TermResponse::default()
        }),
        TermRequest::Approval(_) => Ok(TermResponse {
            approval: Some(ApprovalAnswer::unavailable()),
            ..TermResponse::default()
        }),
    }
}

pub fn find(core: &Core, id: &str) -> Result<Arc<Terminal>, OpError> {
    core.get(id)
        .ok_or_else(|| OpError::new(OpErrorKind::NotFound, format!("no terminal with id {id:?}")))
}

pub fn summary(t: &Terminal) -> TermSummary {
    let st = t.state();
    let (exit_code, signal) = match (&st.exit, &st.state.lifecycle) {
        (Some(e), _) => (e.exit_code, e.signal.clone()),
        (None, TerminalLifecycleState::Exited(x)) => (x.exit_code, None),
        _ => (None, None),
    };
    TermSummary {
        terminal_id: t.id.clone(),
        resource: t.uri.clone(),
        title: st.state.title.clone(),
        shell: t.shell.clone(),
        cwd: st.state.cwd.as_deref().map(super::file_uri::file_uri_path),
        running: st.running(),
        exit_code,
        signal,
        claim: serde_json::to_value(&st.state.claim).unwrap_or_default(),
        supports_command_detection: st.detection,
        shell_integration: st.integration(t.prompt_only),
        executing: st.executing().map(|c| c.command_line.clone()),
        output_bytes: st.spool.len(),
        age_ms: t.created.elapsed().as_millis() as u64,
        started_at_ms: crate::clock::unix_ms(t.created_at),
        workspace_id: t.workspace_id.clone(),
    }
}

pub fn screen(core: &Core, t: &Terminal) -> ScreenView {
    core.sync_screen(t);
    let vt = super::term::lock(&t.vt);
    let s = vt.parser.screen();
    let (rows, cols) = s.size();
    let (cursor_row, cursor_col) = s.cursor_position();
    ScreenView {
        rows: rows.get(),
        cols: cols.get(),
        cursor_row,
        cursor_col,
        alternate_screen: s.alternate_screen(),
        text: s.contents(),
    }
}

/// The stream from `from` (or the last delivered offset) in the requested view; never
/// stops inside a UTF-8 character.
pub fn chunk(
    t: &Terminal,
    from: Option<u64>,
    until: Option<u64>,
    spec: &OutputSpec,
) -> Result<Chunk, OpError> {
    let max = spec.max_bytes.unwrap_or(DEFAULT_MAX_BYTES).max(4);
    let mut st = t.state();
    let from = from.or(spec.cursor).unwrap_or(st.delivered);
    let end_limit = until.unwrap_or(u64::MAX).min(st.spool.len());
    let io =
        |e: std::io::Error| OpError::new(OpErrorKind::Internal, format!("reading output: {e}"));
    let mut slice = if spec.tail {
        st.spool.read_tail(from, max).map_err(io)?
    } else {
        st.spool.read(from, max).map_err(io)?
    };
    if slice.end > end_limit && end_limit >= slice.start {
        let cut = (slice.end - end_limit) as usize;
        slice.bytes.truncate(slice.bytes.len() - cut);
        slice.end = end_limit;
    }
    let partial = incomplete_utf8_tail(&slice.bytes);
    if partial > 0 && partial < slice.bytes.len() {
        slice.bytes.truncate(slice.bytes.len() - partial);
        slice.end -= partial as u64;
    }
    let total = st.spool.len();
    st.delivered = st.delivered.max(slice.end);
    drop(st);
    let text = match spec.view {
        View::Raw => String::from_utf8_lossy(&slice.bytes).into_owned(),
        _ => strip_escapes(&slice.bytes),
    };
    Ok(Chunk {
        text,
        view: if spec.view == View::Raw {
            View::Raw
        } else {
            View::Text
        },
        start: slice.start,
        end: slice.end,
        total,
        omitted_before: slice.omitted_before,
        omitted_after: end_limit.saturating_sub(slice.end),
    })
}

/// A response carrying the terminal's summary and, optionally, output.
pub fn respond(t: &Terminal, output: Option<Chunk>, running: bool) -> TermResponse {
    TermResponse {
        terminal: Some(summary(t)),
        output,
        running,
        ..TermResponse::default()
    }
}

async fn read(core: &Arc<Core>, a: ReadArgs) -> OpResult {
    let t = find(core, &a.terminal_id)?;
    if a.wait_ms > 0 && matches!(a.output.view, View::Raw | View::Text) {
        let from = a.output.cursor.unwrap_or_else(|| t.state().delivered);
        let deadline = Instant::now() + Duration::from_millis(a.wait_ms);
        drive::wait_for(&t, deadline, |st| st.spool.len() > from || !st.running()).await;
    } else if a.wait_ms > 0 {
        let deadline = Instant::now() + Duration::from_millis(a.wait_ms);
        drive::wait_for(&t, deadline, |st| !st.running()).await;
    }
    let mut r = respond(&t, None, t.is_running());
    match a.output.view {
        View::Raw | View::Text => r.output = Some(chunk(&t, None, None, &a.output)?),
        View::Screen => r.screen = Some(screen(core, &t)),
        View::Commands => r.commands = Some(t.state().commands.iter().cloned().collect()),
    }
    Ok(r)
}
