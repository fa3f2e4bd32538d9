//! Every failure below the contract becomes a `PM_TERM_*` error here, and only here: the
//! adapters' (`AdapterError`: the terminal operation's own errors and reaching the adapter),
//! and headless execution's (`HeadlessError`).

use serde_json::{Value, json};

use crate::adapters::ops::{OpError, OpErrorKind};
use crate::adapters::{AdapterError, Failure};
use crate::contract::{Action, ErrorCode, Request, TermError};
use crate::headless::HeadlessError;

/// An adapter failure as the contract answers it, for `req`.
pub(crate) fn from_runtime(e: AdapterError, req: &Request) -> TermError {
    match e {
        AdapterError::Op(op) => op_error(
            op,
            req.target.terminal_id.as_deref(),
            req.runtime.timeout_ms,
        ),
        AdapterError::Runtime {
            failure,
            message,
            facts,
        } => {
            let code = match failure {
                Failure::Refused => ErrorCode::InvalidPayload,
                Failure::NotConfigured => ErrorCode::InvalidMode,
                Failure::Unavailable => ErrorCode::GuiUnavailable,
                Failure::Disconnected => ErrorCode::Disconnected,
                Failure::Timeout => ErrorCode::Timeout,
                Failure::Internal => return TermError::internal(message),
            };
            let mut err = TermError::new(code, message);
            if let Ok(Value::Object(details)) = serde_json::to_value(&facts) {
                err.details = details;
            }
            retry_hint(err, &req.correlation.request_id)
        }
    }
}

/// A terminal busy with a command: the request was well formed, the terminal not free.
const BUSY_HINT: &str = "The terminal is busy with a command that still runs, so nothing was sent. \
Follow it with read_output (runtime.wait_ms to wait for it), answer it with execution.input, \
interrupt it with execution.keys [\"ctrl-c\"], or run this in a new terminal (no target).";

/// One of the operator's limits was reached: nothing wrong with the request itself.
pub(crate) const LIMIT_HINT: &str = "One of the operator's limits was reached (error.details.limit), so \
nothing started. Terminate what you no longer need (list shows it), or wait error.details.retry_after_ms, then send the request again.";

fn op_error(e: OpError, terminal_id: Option<&str>, timeout_ms: Option<u64>) -> TermError {
    match e.kind {
        OpErrorKind::NotFound => {
            TermError::new(ErrorCode::NotFound, e.message).with("target", json!("terminal_id"))
        }
        OpErrorKind::Gone => TermError::new(ErrorCode::NotFound, e.message)
            .with("target", json!("terminal_id"))
            .with("host_restarted", json!(true))
            .with("reopen", reopen()),
        OpErrorKind::Exited => {
            let mut err = TermError::payload(e.message.clone())
                .with("target", json!("terminal_id"))
                .with("exited", json!(true))
                .with("reopen", reopen());
            if let Some(id) = terminal_id {
                err = err.with("terminal_id", json!(id));
            }
            err.with_hint(Some(Action::Execute), e.message)
        }
        OpErrorKind::Invalid => TermError::payload(e.message),
        OpErrorKind::Setup => TermError::new(ErrorCode::InvalidMode, e.message).with_hint(
            None,
            "Nothing in the request is wrong: the operator's settings make it fail (the \
             message names the setting). Send runtime.cwd with a directory that exists on \
             the terminal host, or tell the operator.",
        ),
        OpErrorKind::Busy => {
            let mut err = TermError::payload(e.message)
                .with("busy", json!(true))
                .with_hint(Some(Action::ReadOutput), BUSY_HINT);
            // A terminal that is not ready yet (its rc files ask something): where, and what
            // it shows.
            if let Some(p) = e.partial {
                err = err
                    .with("terminal_id", json!(p.terminal.terminal_id))
                    .with("output", json!(p.output.text))
                    .with("cursor", json!({"output": p.output.end}));
            }
            err
        }
        OpErrorKind::Limit => limit_reached("live_terminals", None, e.message, RETRY_AFTER_MS),
        OpErrorKind::Resource => {
            let limit = e.limit.as_deref().unwrap_or("resources");
            limit_reached(limit, None, e.message.clone(), RETRY_AFTER_MS)
        }
        OpErrorKind::Internal => TermError::internal(e.message),
        OpErrorKind::Timeout => {
            let mut err = TermError::new(ErrorCode::Timeout, e.message)
                .with("timeout_ms", json!(timeout_ms.unwrap_or(0)))
                .with("target", json!("terminal_id"));
            if let Some(id) = terminal_id {
                err = err.with("terminal_id", json!(id));
            }
            if let Some(p) = e.partial {
                err = err
                    .with("output", json!(p.output.text))
                    .with("cursor", json!({"output": p.output.end}));
                if let Some(c) = &p.command {
                    err = err.with("command", json!(c));
                }
            }
            err
        }
    }
}

/// The request that opens a new terminal, for an agent whose terminal is gone or has ended.
fn reopen() -> Value {
    json!({"action": "execute", "invocation": {"mode": "interactive", "intent": "open_only"}})
}

/// A request the adapter did not answer in time may have run: say so, and how to learn its
/// outcome without running it twice (the host runs one request id once).
fn retry_hint(e: TermError, request_id: &str) -> TermError {
    if e.code != crate::contract::ErrorCode::Timeout {
        return e;
    }
    let may = e
        .details
        .get("may_have_run")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    e.with("may_have_run", json!(may))
        .with("request_id", json!(request_id))
        .with(
            "retry",
            json!(format!(
                "send the same request again with correlation.request_id = {request_id:?}: if it ran, you get that run's answer instead of a second run"
            )),
        )
}

/// Refuse to start anything when the operator's sandbox cannot be set up: nothing runs
/// unconfined, and the answer says why and that retrying will not help.
pub(crate) fn sandbox_ready() -> Result<(), TermError> {
    let sandbox = crate::sandbox::current();
    sandbox.ready().map_err(|u| {
        TermError::new(ErrorCode::InvalidMode, u.to_string())
            .with("sandbox", json!(sandbox.summary()))
            .with_hint(
                None,
                "The operator's sandbox cannot be set up on this machine, so no command or \
                 terminal starts (never unconfined). Retrying will not help: tell the operator \
                 the reason given here.",
            )
    })
}

pub(crate) fn headless_error(e: HeadlessError) -> TermError {
    use crate::process::workdir::WorkdirError;
    match e {
        HeadlessError::Workdir(WorkdirError::Asked { .. }) => {
            TermError::payload(e.to_string()).with("field", json!("runtime.cwd"))
        }
        HeadlessError::Workdir(WorkdirError::Own { ref path, .. }) => {
            TermError::new(ErrorCode::InvalidMode, e.to_string())
                .with("working_directory", json!(path))
                .with_hint(
                    None,
                    format!(
                        "Nothing in the request is wrong: commands cannot start in the server's \
                         working directory {path}, which its user cannot enter. Send \
                         runtime.cwd with a directory that can be entered, or ask the operator \
                         to give the server's user access to {path} (in a container: mount the \
                         workspace for the container's user, e.g. podman run --userns=keep-id, \
                         or make it belong to uid 1000)."
                    ),
                )
        }
        HeadlessError::Spawn {
            ref source,
            ref program,
            named,
        } => match source.kind() {
            // A program the request named that is not there (or not runnable): the field
            // to change is the request's.
            std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied if named => {
                TermError::payload(format!("cannot run {program:?}: {source}"))
                    .with("field", json!("execution.command"))
                    .with("program", json!(program))
            }
            // The server's own shell: nothing in the request is at fault.
            std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => TermError::new(
                ErrorCode::InvalidMode,
                format!("the program {program:?} could not be started: {source}"),
            )
            .with("program", json!(program))
            .with_hint(
                None,
                format!(
                    "Nothing in the request is wrong: the server could not start \
                         {program} ({source}). Retrying will not help; tell the operator."
                ),
            ),
            _ => match crate::limits::resource::exhausted(source) {
                Some(limit) => limit_reached(limit, None, e.to_string(), RETRY_AFTER_MS),
                None => TermError::internal(e),
            },
        },
        HeadlessError::NoPlace(n) => {
            let max = match n {
                crate::headless::NoPlace::QueueFull { max, .. }
                | crate::headless::NoPlace::Waited { max, .. } => max,
            };
            let mut err =
                limit_reached("running_commands", Some(max), e.to_string(), RETRY_AFTER_MS);
            if let crate::headless::NoPlace::Waited { waited, .. } = n {
                err = err.with("queued_ms", json!(waited.as_millis() as u64));
            }
            err
        }
    }
}

/// When a refusal by a limit suggests trying again.
const RETRY_AFTER_MS: u64 = 2000;

/// One of the server's limits was reached: nothing is wrong with the request and sending it
/// again later may work. Answered with the contract's retriable runtime code
/// (`PM_TERM_TIMEOUT`: what the request needed did not come in time), naming the limit, its
/// value and when to retry, never as a malformed request or an internal error.
pub(crate) fn limit_reached(
    limit: &str,
    max: Option<usize>,
    message: String,
    retry_after_ms: u64,
) -> TermError {
    let mut err = TermError::new(ErrorCode::Timeout, message)
        .with("limit", json!(limit))
        .with("retry_after_ms", json!(retry_after_ms))
        .with("may_have_run", json!(false))
        .with_hint(Some(Action::List), LIMIT_HINT);
    if let Some(max) = max {
        err = err.with("max", json!(max));
    }
    err
}
