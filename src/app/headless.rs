//! The headless half of the contract: execute over pipes, read by cursor, terminate trees.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::output;
use super::wait::{Progress, wait_until};
use super::{Answer, App};
use crate::contract::{Ctx, ErrorCode, Request, TermError};
use crate::exec::{ExecError, Program, Session, StartSpec, Stream, resolve_cwd};
use crate::process;
use crate::views::DEFAULT_MAX_BYTES;

/// Extra time past a hard timeout for the kill to land before execute answers.
const KILL_MARGIN: Duration = Duration::from_millis(2_000);

pub(crate) fn exec_error(e: ExecError) -> TermError {
    match e {
        ExecError::Cwd { .. } => {
            TermError::payload(e.to_string()).with("field", json!("runtime.cwd"))
        }
        ExecError::Spawn {
            ref source,
            ref program,
        } => match source.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => {
                TermError::payload(format!("cannot run {program:?}: {source}"))
                    .with("field", json!("execution.command"))
                    .with("program", json!(program))
            }
            _ => TermError::internal(e),
        },
        ExecError::Limit { max } => TermError::payload(e.to_string())
            .with("limit", json!("running_sessions"))
            .with("max", json!(max)),
    }
}

impl App {
    pub(crate) async fn headless_execute(
        &self,
        req: &Request,
        ctx: &mut Ctx,
        progress: &dyn Progress,
        elicitor: &dyn super::Elicitor,
    ) -> Answer {
        let cwd = resolve_cwd(req.runtime.cwd.as_deref()).map_err(exec_error)?;
        let command = req
            .execution
            .command
            .clone()
            .ok_or_else(|| TermError::payload("execution.command is required"))?;
        let (program, display) = match &req.execution.args {
            Some(args) => {
                let mut words = vec![command.clone()];
                words.extend(args.iter().cloned());
                (
                    Program::Argv {
                        program: command,
                        args: args.clone(),
                    },
                    shell_words::join(words),
                )
            }
            None => (
                Program::Shell {
                    shell: self.cfg.shell.clone(),
                    line: command.clone(),
                },
                command,
            ),
        };
        let cwd_text = cwd.display().to_string();
        let decision = match &program {
            Program::Argv { program, args } => {
                self.policy.evaluate_argv(program, args, Some(&cwd_text))
            }
            Program::Shell { line, .. } => self.policy.evaluate(line, Some(&cwd_text)),
        };
        let decision = super::authorize(req, decision, &display)?;
        // Headless is no way around a person: with the operator's setting (the GUI's
        // default) a warned command waits for the same approval chain as in a terminal.
        let approval = if self.approves_headless() && self.needs_approval(&decision) {
            Some(
                self.approve(req, &display, &decision, progress, elicitor)
                    .await?
                    .0,
            )
        } else {
            None
        };
        let timeout = req.runtime.timeout_ms.map(Duration::from_millis);
        let spec = StartSpec {
            program,
            display,
            cwd,
            env: req.execution.env.clone().unwrap_or_default(),
            timeout,
            workspace_id: req.runtime.workspace_id.clone(),
        };
        let session = self.exec.start(spec).await.map_err(exec_error)?;
        ctx.session_id = Some(session.id.clone());
        let mut wait =
            Duration::from_millis(req.runtime.wait_ms.unwrap_or(self.cfg.default_wait_ms));
        if let Some(t) = timeout
            && t <= wait
        {
            wait = t + KILL_MARGIN;
        }
        let mut rx = session.subscribe();
        let s = session.clone();
        wait_until(&mut rx, Instant::now() + wait, progress, "running", || {
            !s.is_running()
        })
        .await;
        let mut r = self.session_answer(req, &session, true)?;
        r.insert(
            "authorization".into(),
            json!(decision.authorization.as_str()),
        );
        if let Some(w) = decision.warning() {
            r.insert("warning".into(), json!(w));
        }
        if let Some(a) = approval {
            r.insert("approval".into(), Value::Object(a));
        }
        Ok(r)
    }

    pub(crate) async fn headless_read(
        &self,
        req: &Request,
        id: &str,
        progress: &dyn Progress,
    ) -> Answer {
        let session = self.session(id)?;
        let wait = Duration::from_millis(req.runtime.wait_ms.unwrap_or(0));
        if !wait.is_zero() {
            let out_from = req
                .output
                .stdout_cursor
                .unwrap_or_else(|| session.delivered(Stream::Stdout));
            let err_from = req
                .output
                .stderr_cursor
                .unwrap_or_else(|| session.delivered(Stream::Stderr));
            let mut rx = session.subscribe();
            let s = session.clone();
            wait_until(
                &mut rx,
                Instant::now() + wait,
                progress,
                "waiting for output",
                || {
                    !s.is_running()
                        || s.stream_len(Stream::Stdout) > out_from
                        || s.stream_len(Stream::Stderr) > err_from
                },
            )
            .await;
        }
        self.session_answer(req, &session, false)
    }

    pub(crate) async fn headless_terminate(&self, id: &str) -> Answer {
        let session = self.session(id)?;
        let was_running = session.is_running();
        // Whether the program still runs or only what it left behind, the supervisor kills
        // all of it.
        let killed = session.kill().await;
        tracing::info!(session = %id, killed = killed.len(), "terminated");
        let st = session.status();
        let mut r = Map::new();
        r.insert("running".into(), json!(st.running));
        r.insert("exit_code".into(), json!(st.exit_code));
        r.insert("signal".into(), json!(st.signal.map(process::signal_name)));
        r.insert("terminated".into(), json!(killed));
        r.insert("duration_ms".into(), json!(st.duration.as_millis() as u64));
        r.insert(
            "cursor".into(),
            json!({"stdout": st.stdout_len, "stderr": st.stderr_len}),
        );
        if !was_running {
            r.insert(
                "note".into(),
                json!("the command had already exited; any processes it left behind were killed"),
            );
        }
        Ok(r)
    }

    pub(crate) fn session(&self, id: &str) -> Result<Arc<Session>, TermError> {
        self.exec
            .get(id)
            .ok_or_else(|| TermError::not_found("session", id).with("target", json!("session_id")))
    }

    /// The result fields for a session: status plus each stream after its cursor.
    fn session_answer(&self, req: &Request, session: &Arc<Session>, from_start: bool) -> Answer {
        let st = session.status();
        let max = req.output.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
        let tail = req.output.tail.unwrap_or(false);
        let encoding = req.output.encoding.unwrap_or_default();
        let cursor = |c: Option<u64>| if from_start { Some(c.unwrap_or(0)) } else { c };
        let read = |which: Stream, c: Option<u64>| {
            session
                .read(which, cursor(c), max, tail)
                .map_err(TermError::internal)
        };
        let out = output::render(
            read(Stream::Stdout, req.output.stdout_cursor)?,
            encoding,
            st.stdout_len,
            st.running,
        );
        let err = output::render(
            read(Stream::Stderr, req.output.stderr_cursor)?,
            encoding,
            st.stderr_len,
            st.running,
        );
        if st.timed_out {
            let limit = req.runtime.timeout_ms.unwrap_or(0);
            return Err(TermError::new(
                ErrorCode::Timeout,
                format!("the command ran past timeout_ms {limit}; its process tree was killed"),
            )
            .with("timeout_ms", json!(limit))
            .with("target", json!("session_id"))
            .with("session_id", json!(session.id))
            .with("stdout", json!(out.text))
            .with("stderr", json!(err.text))
            .with(
                "cursor",
                json!({"stdout": out.next_cursor, "stderr": err.next_cursor}),
            )
            .with("exit_code", json!(st.exit_code))
            .with("signal", json!(st.signal.map(process::signal_name))));
        }
        let mut r = Map::new();
        r.insert("stdout".into(), json!(out.text));
        r.insert("stderr".into(), json!(err.text));
        if encoding != crate::contract::Encoding::Utf8 {
            r.insert("encoding".into(), json!(encoding.as_str()));
        }
        r.insert("exit_code".into(), json!(st.exit_code));
        r.insert("signal".into(), json!(st.signal.map(process::signal_name)));
        r.insert("running".into(), json!(st.running));
        r.insert("duration_ms".into(), json!(st.duration.as_millis() as u64));
        r.insert(
            "cursor".into(),
            json!({"stdout": out.next_cursor, "stderr": err.next_cursor}),
        );
        r.insert(
            "streams".into(),
            json!({"stdout": out.info, "stderr": err.info}),
        );
        r.insert("truncated".into(), json!(out.truncated || err.truncated));
        Ok(r)
    }

    /// List rows for headless sessions.
    pub(crate) fn session_items(&self) -> Vec<Value> {
        self.exec
            .list()
            .into_iter()
            .map(|s| {
                let st = s.status();
                json!({
                    "kind": "session",
                    "id": s.id,
                    "mode": "headless",
                    "command": s.command,
                    "cwd": s.cwd.display().to_string(),
                    "state": if st.running { "running" } else { "exited" },
                    "running": st.running,
                    "exit_code": st.exit_code,
                    "signal": st.signal.map(process::signal_name),
                    "timed_out": st.timed_out,
                    "age_ms": s.age().as_millis() as u64,
                    "started_at_ms": crate::clock::unix_ms(s.started_at),
                    "workspace_id": s.workspace_id,
                    "stdout_bytes": st.stdout_len,
                    "stderr_bytes": st.stderr_len,
                })
            })
            .collect()
    }
}
