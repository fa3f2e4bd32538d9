//! The `result` of a successful answer (docs/contract.md, "Answers"; `schemas/response.schema.json`,
//! `$defs/result`), typed: one struct per kind of answer, serialized as the schema describes.
//! The services build these; nothing above them writes result keys by hand.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::text::views::{CommandRecord, Encoding, ScreenView, View};

/// The policy's verdict on a command line, as the policy gives it.
pub use crate::policy::Authorization;

/// Who let a command through that had to be approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// A person on the host service's page.
    Page,
    /// The MCP client's user, through elicitation.
    Elicitation,
    /// Nobody could be asked; the operator's configured default.
    OperatorDefault,
}

/// `result.approval`: how a command that needed approval was approved (a decline is an
/// error, never a result).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Approval {
    pub required: bool,
    pub decision: &'static str,
    pub decided_by: DecidedBy,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approver: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Approval {
    pub fn approved(by: DecidedBy) -> Approval {
        Approval {
            required: true,
            decision: "approved",
            decided_by: by,
            approver: None,
            note: None,
        }
    }
}

/// How a command was let through: the verdict, its warning, and the approval if one was
/// asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub authorization: Authorization,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
}

/// Where one stream's bytes in this answer start and end, and what was left out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamInfo {
    pub start: u64,
    pub end: u64,
    pub total: u64,
    pub truncated: bool,
    pub bytes_omitted: u64,
    /// Invalid UTF-8 was replaced in the text.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lossy: bool,
    /// A default answer's excerpt: the bytes `[from, to)` between its head and its tail
    /// were left out (read them by cursor).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out: Option<LeftOut>,
    /// Bytes of the stream the server did not keep (see [`Dropped`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped: Option<Dropped>,
}

/// Bytes of a stream the server did not keep: past a spool limit its middle is dropped (the
/// head and the newest bytes stay), and a disk that refuses keeps only the newest in memory.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Dropped {
    /// From the first byte dropped to the end of the last range dropped.
    pub from: u64,
    pub to: u64,
    /// Bytes dropped in all.
    pub bytes: u64,
    /// Which limit: `spool_per_stream`, `spool_total` or `disk_space`.
    pub limit: String,
}

impl Dropped {
    pub fn of(s: &crate::spool::cap::DroppedSummary) -> Dropped {
        Dropped {
            from: s.from,
            to: s.to,
            bytes: s.bytes,
            limit: s.cause.as_str().to_string(),
        }
    }

    /// What the model is told.
    pub fn note(&self) -> String {
        let why = crate::spool::cap::Cause::named(&self.limit)
            .map_or_else(|| self.limit.clone(), crate::spool::cap::Cause::says);
        format!(
            "{} bytes of this output (offsets {} to {}) were not kept: {why}",
            self.bytes, self.from, self.to
        )
    }
}

/// Bytes of a stream an answer left out, and the one request that reads them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeftOut {
    pub from: u64,
    pub to: u64,
}

/// The next cursor per stream (`stdout`/`stderr` of a session, `output` of a terminal).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Cursors {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<u64>,
}

/// Per stream, what this answer carries of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Streams {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout: Option<StreamInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<StreamInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<StreamInfo>,
}

/// A headless session's answer to execute and read_output: both streams after their cursors.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionOutput {
    pub stdout: String,
    pub stderr: String,
    /// Only when not the default (utf8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    pub running: bool,
    pub duration_ms: u64,
    pub cursor: Cursors,
    pub streams: Streams,
    pub truncated: bool,
    #[serde(flatten)]
    pub verdict: Option<Verdict>,
    /// The operator's sandbox refused what the failed command tried (from its output).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox_denial: Option<SandboxDenial>,
    /// What the model should know that the fields do not say (a wait for a place).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A headless session's answer to terminate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionEnded {
    pub running: bool,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    pub terminated: Vec<i32>,
    pub duration_ms: u64,
    pub cursor: Cursors,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A terminal's part of an answer: what the terminal shows in the view asked for, the
/// command it ran, and its state.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TerminalOutput {
    pub running: bool,
    /// The terminal's foreground program is blocked reading input, as the kernel says.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub waiting_for_input: bool,
    /// With `waiting_for_input`: the line it prompts on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    pub exit_code: Option<i64>,
    /// The signal that ended the terminal's process, once it has ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supports_command_detection: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shell_integration: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view: Option<View>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursors>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streams: Option<Streams>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commands: Option<Vec<CommandRecord>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen: Option<ScreenView>,
    /// Process ids killed (terminate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminated: Option<Vec<i32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(flatten)]
    pub verdict: Option<Verdict>,
    /// The operator's sandbox refused what the failed command tried (from its output).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox_denial: Option<SandboxDenial>,
    /// Not part of the answer: whether input reached the shell's line editor (see
    /// `Ran::reached_line_editor`), for the service's tracking of what was left unentered.
    #[serde(skip)]
    pub reached_line_editor: Option<bool>,
}

/// What a list row is about.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ItemKind {
    /// A headless session.
    Session {
        timed_out: bool,
        stdout_bytes: u64,
        stderr_bytes: u64,
    },
    /// An interactive terminal.
    Terminal {
        title: String,
        adapter: &'static str,
        resource: String,
        claim: Value,
        supports_command_detection: bool,
        shell_integration: String,
        output_bytes: u64,
        /// What runs there besides the shell and its foreground program.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        background_jobs: Vec<crate::process::jobs::Job>,
        /// Opened for one command: closed once idle this long (`--idle-close-ms`).
        #[serde(skip_serializing_if = "Option::is_none")]
        closes_when_idle_ms: Option<u64>,
    },
}

/// One row of `list` (`$defs/list_item`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListItem {
    pub id: String,
    pub mode: &'static str,
    pub command: Option<String>,
    pub cwd: Option<String>,
    pub state: &'static str,
    pub running: bool,
    pub exit_code: Option<i64>,
    pub signal: Option<String>,
    pub age_ms: u64,
    pub started_at_ms: u64,
    pub workspace_id: Option<String>,
    #[serde(flatten)]
    pub kind: ItemKind,
}

/// The answer to list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Listing {
    pub running: bool,
    pub items: Vec<ListItem>,
    /// Items that match the request's filter, on every page.
    pub total: usize,
    /// Pass as `listing.cursor` for the items after these; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// The operator's sandbox around headless commands and this server's terminals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxSummary>,
}

/// What the operator's sandbox refused, as an answer says it (`result.sandbox_denial`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SandboxDenial {
    /// `write` or `network`.
    pub kind: &'static str,
    /// The path or host refused, when the program named it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// What happened and what to do instead.
    pub message: String,
}

/// The operator's sandbox, as `list` says it (`result.sandbox`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SandboxSummary {
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

/// Any success's `result`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Outcome {
    List(Listing),
    Session(Box<SessionOutput>),
    SessionEnded(SessionEnded),
    Terminal(Box<TerminalOutput>),
    /// read_output or terminate naming a session and a terminal at once.
    #[serde(serialize_with = "serialize_pair")]
    Pair(Box<Outcome>, Box<Outcome>),
    /// A command held for a person's decision (`service::held`).
    Held(HeldCommand),
}

/// A command that waits for a person's decision, answered before it came so that no call
/// is held past a client's patience.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeldCommand {
    /// Still waiting (the status is `accepted`); false once withdrawn.
    pub running: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub waiting_for_approval: bool,
    #[serde(flatten)]
    pub verdict: Verdict,
    pub note: String,
}

impl Outcome {
    /// Still running decides the status (`accepted`); a pair runs while either runs.
    pub fn running(&self) -> bool {
        match self {
            Outcome::List(l) => l.running,
            Outcome::Session(s) => s.running,
            Outcome::SessionEnded(s) => s.running,
            Outcome::Terminal(t) => t.running,
            Outcome::Pair(a, b) => a.running() || b.running(),
            Outcome::Held(h) => h.running,
        }
    }

    /// The `result` object as JSON.
    pub fn to_map(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        }
    }

    /// The `result` object as JSON, the output moved into it instead of copied: a page of
    /// output (up to a megabyte) is most of an answer, and serialising the result into a
    /// map copied it once more than its way to the client needs.
    pub fn into_map(self) -> Map<String, Value> {
        match self {
            Outcome::Session(mut s) => {
                let stdout = std::mem::take(&mut s.stdout);
                let stderr = std::mem::take(&mut s.stderr);
                let mut m = Outcome::Session(s).to_map();
                m.insert("stdout".into(), Value::String(stdout));
                m.insert("stderr".into(), Value::String(stderr));
                m
            }
            Outcome::Terminal(mut t) => {
                let output = t.output.take();
                let mut m = Outcome::Terminal(t).to_map();
                if let Some(o) = output {
                    m.insert("output".into(), Value::String(o));
                }
                m
            }
            other => other.to_map(),
        }
    }
}

/// One result for a session and a terminal together: running if either runs, the cursors
/// and streams of both, every killed process; the session's exit and timing.
fn serialize_pair<S: serde::Serializer>(
    first: &Outcome,
    second: &Outcome,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut into = first.to_map();
    for (k, v) in second.to_map() {
        match (k.as_str(), into.get_mut(&k)) {
            ("cursor" | "streams", Some(Value::Object(dst))) => {
                if let Value::Object(src) = v {
                    dst.extend(src);
                }
            }
            ("terminated", Some(Value::Array(dst))) => {
                if let Value::Array(src) = v {
                    dst.extend(src);
                }
            }
            ("truncated", Some(Value::Bool(b))) => *b = *b || v.as_bool().unwrap_or(false),
            ("exit_code" | "signal" | "duration_ms", Some(_)) => {}
            _ => {
                into.insert(k, v);
            }
        }
    }
    into.insert(
        "running".into(),
        Value::Bool(first.running() || second.running()),
    );
    serde::Serialize::serialize(&into, s)
}
