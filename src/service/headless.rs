//! The headless half of the contract: execute over pipes, read by cursor, terminate trees.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::approval::Stop;
use super::failures::headless_error;
use super::output;
use super::wait::{Progress, is_abandoned, wait_until};
use super::{Handled, Service};
use crate::contract::result::{
    Cursors, ItemKind, ListItem, SessionEnded, SessionOutput, Streams, Verdict,
};
use crate::contract::{Encoding, ErrorCode, Identity, Outcome, Request, TermError};
use crate::headless::{Program, Session, StartSpec, Stream, resolve_cwd};
use crate::process;
use crate::text::views::DEFAULT_MAX_BYTES;

/// Extra time past a hard timeout for the kill to land before execute answers.
const KILL_MARGIN: Duration = Duration::from_millis(2_000);

impl Service {
    /// Start a session and wait for it within the request's wait; the session's id is known
    /// from the moment it starts, so even a timeout's error names it.
    pub(crate) async fn headless_execute(
        &self,
        req: &Request,
        progress: &dyn Progress,
        elicitor: &dyn super::Elicitor,
    ) -> Handled {
        let (session, verdict, queued) = match self.headless_start(req, progress, elicitor).await {
            Ok(started) => started,
            Err(Stop::Failed(e)) => return Handled::failed(e),
            Err(Stop::Held(held)) => return held,
        };
        let about = Identity::session(&session.id);
        let timeout = req.runtime.timeout_ms.map(Duration::from_millis);
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
        // The client cancelled the call: what it started is stopped, not left running
        // where nobody knows its session.
        if is_abandoned(progress) && session.is_running() {
            let killed = session.kill().await;
            tracing::info!(session = %session.id, killed = killed.len(), "the client cancelled the call: its command was stopped");
        }
        // An answer nobody waits for delivers nothing: a later read starts at the beginning.
        let remember = !is_abandoned(progress);
        let result = self
            .session_output(req, &session, true, remember)
            .map(|mut out| {
                out.verdict = Some(verdict);
                if !queued.is_zero() {
                    let waited = format!(
                        "waited {} ms for a place: at most {} commands run at once",
                        queued.as_millis(),
                        self.cfg.places.max()
                    );
                    out.note = Some(match out.note.take() {
                        Some(n) => format!("{waited}; {n}"),
                        None => waited,
                    });
                }
                Outcome::Session(Box::new(out))
            });
        Handled::about(about, result)
    }

    /// Authorize the command, ask for approval when the operator wants it, and start it.
    async fn headless_start(
        &self,
        req: &Request,
        progress: &dyn Progress,
        elicitor: &dyn super::Elicitor,
    ) -> Result<(Arc<Session>, Verdict, Duration), Stop> {
        // Out of the sandbox only with a person's yes (asked below, after the policy).
        let escape = req.runtime.unsandboxed == Some(true)
            && crate::sandbox::current().settings().confines();
        if !escape {
            super::failures::sandbox_ready()?;
        }
        let cwd = resolve_cwd(req.runtime.cwd.as_deref()).map_err(headless_error)?;
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
        let decision = self.judge(&display, |policy| match &program {
            Program::Argv { program, args } => policy.evaluate_argv(program, args, Some(&cwd_text)),
            Program::Shell { line, .. } => policy.evaluate(line, Some(&cwd_text)),
        });
        let decision = if req.runs_project_code {
            decision.runs_project_code(&display)
        } else {
            decision
        };
        let decision = super::authorize(req, decision, &display)?;
        // Headless is no way around a person: with the operator's setting (the GUI's
        // default) a warned command waits for the same approval chain as in a terminal.
        let confined = crate::sandbox::current().mechanism().is_some();
        let approval = if escape {
            Some(
                self.approve_escape(req, &display, progress, elicitor)
                    .await?,
            )
        } else if self.approves_headless() && self.needs_approval(&decision, confined) {
            Some(
                self.approve(req, &display, &decision, progress, elicitor)
                    .await?,
            )
        } else {
            None
        };
        let spec = StartSpec {
            program,
            display,
            cwd,
            env: req.execution.env.clone().unwrap_or_default(),
            timeout: req.runtime.timeout_ms.map(Duration::from_millis),
            workspace_id: req.runtime.workspace_id.clone(),
            confined: !escape,
        };
        // A start over the running cap waits its turn within the request's wait (or the
        // queue's own bound).
        let wait = Duration::from_millis(req.runtime.wait_ms.unwrap_or(u64::MAX));
        let (session, queued) = self
            .headless
            .start(spec, wait)
            .await
            .map_err(headless_error)?;
        Ok((session, super::verdict(&decision, approval), queued))
    }

    pub(crate) async fn headless_read(
        &self,
        req: &Request,
        id: &str,
        progress: &dyn Progress,
    ) -> Result<Outcome, TermError> {
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
        self.session_output(req, &session, false, !is_abandoned(progress))
            .map(|out| Outcome::Session(Box::new(out)))
    }

    pub(crate) async fn headless_terminate(&self, id: &str) -> Result<Outcome, TermError> {
        let session = self.session(id)?;
        let was_running = session.is_running();
        // Whether the program still runs or only what it left behind, the supervisor kills
        // all of it.
        let killed = session.kill().await;
        tracing::info!(session = %id, killed = killed.len(), "terminated");
        let st = session.status();
        Ok(Outcome::SessionEnded(SessionEnded {
            running: st.running,
            exit_code: st.exit_code,
            signal: st.signal.map(process::signal_name),
            terminated: killed,
            duration_ms: st.duration.as_millis() as u64,
            cursor: Cursors {
                stdout: Some(st.stdout_len),
                stderr: Some(st.stderr_len),
                output: None,
            },
            note: (!was_running).then(|| {
                "the command had already exited; any processes it left behind were killed".into()
            }),
        }))
    }

    pub(crate) fn session(&self, id: &str) -> Result<Arc<Session>, TermError> {
        self.headless
            .get(id)
            .ok_or_else(|| TermError::not_found("session", id).with("target", json!("session_id")))
    }

    /// A session's state plus each stream after its cursor; with `remember`, what it shows
    /// counts as delivered.
    fn session_output(
        &self,
        req: &Request,
        session: &Arc<Session>,
        from_start: bool,
        remember: bool,
    ) -> Result<SessionOutput, TermError> {
        let st = session.status();
        let max = req.output.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
        let tail = req.output.tail.unwrap_or(false);
        let encoding = req.output.encoding.unwrap_or_default();
        let cursor = |c: Option<u64>| if from_start { Some(c.unwrap_or(0)) } else { c };
        let read = |which: Stream, c: Option<u64>| {
            session
                .read(
                    which,
                    cursor(c),
                    max,
                    tail,
                    encoding == Encoding::Utf8,
                    remember,
                )
                .map_err(TermError::internal)
        };
        let (out, err) = if output::default_read(&req.output) {
            // A default answer: within the output budget, stderr takes what it needs up to
            // a third, stdout the rest. Whatever arrives after this measure is excerpted,
            // never lost: the gap is named in `left_out`.
            let budget = self.output_budget();
            let err_budget = (session.pending(Stream::Stderr) as usize)
                .max(2048)
                .min(budget / 3);
            let excerpt = |which: Stream, budget: usize| {
                session
                    .read_excerpt(which, budget, remember)
                    .map_err(TermError::internal)
            };
            (
                output::render_excerpt(
                    excerpt(Stream::Stdout, budget - err_budget)?,
                    st.stdout_len,
                    "stdout_cursor",
                ),
                output::render_excerpt(
                    excerpt(Stream::Stderr, err_budget)?,
                    st.stderr_len,
                    "stderr_cursor",
                ),
            )
        } else {
            (
                output::render(
                    read(Stream::Stdout, req.output.stdout_cursor)?,
                    encoding,
                    st.stdout_len,
                ),
                output::render(
                    read(Stream::Stderr, req.output.stderr_cursor)?,
                    encoding,
                    st.stderr_len,
                ),
            )
        };
        let (mut out, mut err) = (out, err);
        for (o, which) in [(&mut out, Stream::Stdout), (&mut err, Stream::Stderr)] {
            o.info.dropped = session
                .dropped(which)
                .filter(|d| d.to >= o.info.start)
                .map(|d| crate::contract::result::Dropped::of(&d));
        }
        let dropped_note = [&out, &err]
            .iter()
            .filter_map(|o| o.info.dropped.as_ref().map(|d| d.note()))
            .collect::<Vec<_>>();
        let cursors = Cursors {
            stdout: Some(out.next_cursor),
            stderr: Some(err.next_cursor),
            output: None,
        };
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
            .with("cursor", json!(cursors))
            .with("exit_code", json!(st.exit_code))
            .with("signal", json!(st.signal.map(process::signal_name))));
        }
        Ok(SessionOutput {
            truncated: out.truncated || err.truncated,
            stdout: out.text,
            stderr: err.text,
            encoding: (encoding != Encoding::Utf8).then_some(encoding),
            exit_code: st.exit_code,
            signal: st.signal.map(process::signal_name),
            running: st.running,
            duration_ms: st.duration.as_millis() as u64,
            cursor: cursors,
            streams: Streams {
                stdout: Some(out.info),
                stderr: Some(err.info),
                output: None,
            },
            verdict: None,
            sandbox_denial: sandbox_denial(&st, session),
            note: (!dropped_note.is_empty()).then(|| dropped_note.join("; ")),
        })
    }

    /// List rows for headless sessions.
    pub(crate) fn session_items(&self) -> Vec<ListItem> {
        self.headless
            .list()
            .into_iter()
            .map(|s| {
                let st = s.status();
                ListItem {
                    id: s.id.clone(),
                    mode: "headless",
                    command: Some(s.command.clone()),
                    cwd: Some(s.cwd.display().to_string()),
                    state: if st.running { "running" } else { "exited" },
                    running: st.running,
                    exit_code: st.exit_code.map(i64::from),
                    signal: st.signal.map(process::signal_name),
                    age_ms: s.age().as_millis() as u64,
                    started_at_ms: crate::clock::unix_ms(s.started_at),
                    workspace_id: s.workspace_id.clone(),
                    kind: ItemKind::Session {
                        timed_out: st.timed_out,
                        stdout_bytes: st.stdout_len,
                        stderr_bytes: st.stderr_len,
                    },
                }
            })
            .collect()
    }
}

/// What the operator's sandbox refused, when a command failed and its last words say so.
fn sandbox_denial(
    st: &crate::headless::Status,
    session: &Session,
) -> Option<crate::contract::result::SandboxDenial> {
    use crate::sandbox::denial::{TAIL_BYTES, diagnose};
    let sandbox = crate::sandbox::current();
    if st.running || st.exit_code == Some(0) || sandbox.mechanism().is_none() {
        return None;
    }
    [Stream::Stderr, Stream::Stdout]
        .into_iter()
        .find_map(|which| {
            let tail = session.peek_tail(which, TAIL_BYTES).ok()?;
            diagnose(sandbox, &String::from_utf8_lossy(&tail))
        })
        .map(super::sandbox_denial)
}
