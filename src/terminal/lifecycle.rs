//! The I/O edges of a terminal: starting its shell on a pty, reading the pty into the core,
//! noticing the shell's exit, writing input, resizing, and killing the whole session. The
//! core keeps state; everything that spawns or kills is here, and calls into it.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use ahp_types::actions::{ActionOrigin, StateAction, TerminalInputAction, TerminalResizedAction};

use ahp_types::state::{TerminalLifecycleState, TerminalRunningLifecycleState, TerminalState};
use tokio::sync::watch;

use super::core::Core;
use super::file_uri::file_uri;
use super::osc::Scanner;
use super::pty::Pty;
use super::queries::Queries;
use super::term::{ExitInfo, TermState, Terminal, lock};
use super::{CoreError, CreateSpec, shell};
use super::{answers, looks};
use crate::ids;
use crate::process::{self, ChildExit};
use crate::spool::Spool;

/// Read size from the pty master. The kernel's line discipline hands over at most 4 KiB per
/// read, so a larger buffer only costs every terminal memory it never uses.
const PTY_READ_SIZE: usize = 16 * 1024;

/// After the shell exits, how long to wait for the pty to drain before reporting the exit.
const DRAIN_GRACE: Duration = Duration::from_millis(300);

/// How long kill waits for the exit to be recorded.
const KILL_SETTLE: Duration = Duration::from_secs(5);

/// A started shell on its device, with what the core needs to read its integration.
pub(super) struct Device {
    pub pty: Box<dyn Pty>,
    /// The shell program, named in the terminal's title and summary.
    pub program: PathBuf,
    /// The nonce its integration marks carry (marks without it are not trusted).
    pub nonce: String,
    /// The shell reports prompts and exit codes but not when a command starts.
    pub prompt_only: bool,
    pub nonce_file: Option<PathBuf>,
}

/// Start the reader and the exit watcher of a new terminal.
pub(super) fn start(core: &Arc<Core>, term: &Arc<Terminal>) {
    let (c, t) = (core.clone(), term.clone());
    tokio::spawn(async move {
        let mut buf = vec![0u8; PTY_READ_SIZE];
        let mut queries = Queries::default();
        // An answer held for the program that asked (`answers`), and the looks at whether
        // the program waits for input (`looks`): each looked at again after every read, and
        // when no output came for a moment.
        let mut held: Option<answers::Held> = None;
        let mut looker = looks::Looker::default();
        loop {
            let wait = [
                held.as_ref().map(answers::Held::next_look),
                looker.next_look(&t),
            ]
            .into_iter()
            .flatten()
            .min();
            let read = tokio::select! {
                biased;
                r = t.pty.read(&mut buf) => Some(r),
                _ = t.look_now.notified() => {
                    looker.asked();
                    None
                }
                _ = sleep_or_never(wait) => None,
            };
            match read {
                Some(Ok(0)) => break,
                Some(Ok(n)) => {
                    answers::take_in(&c, &t, &mut queries, &mut held, &buf[..n]);
                    looker.output_came();
                }
                Some(Err(e)) => {
                    tracing::debug!(terminal = %t.id, error = %e, "pty read ended");
                    break;
                }
                None => {}
            }
            // The kernel's word on the program, for a held answer and for a waiting call,
            // once every byte it printed is taken in.
            while held.is_some() || looker.due(&t) {
                match looks::quiet_look(&t, &mut buf) {
                    Err(n) => {
                        answers::take_in(&c, &t, &mut queries, &mut held, &buf[..n]);
                        looker.output_came();
                    }
                    Ok(mut kernel) => {
                        match held.take().map(|h| answers::settle(&t, h, kernel)) {
                            Some(answers::Settled::Held(h)) => held = Some(h),
                            // The answer just written is the program's next input: this look,
                            // taken before it, no longer says what the program waits for.
                            Some(answers::Settled::Sent) => kernel = super::pty::InputWait::Busy,
                            Some(answers::Settled::Dropped) | None => {}
                        }
                        if looker.due(&t) {
                            looker.publish(&t, kernel, held.is_some());
                        }
                        break;
                    }
                }
            }
        }
        t.state().reader_done = true;
        t.bump();
    });
    let (c, t) = (core.clone(), term.clone());
    tokio::spawn(async move {
        let exit = t.pty.wait().await;
        // Let the last output arrive before the exit is reported.
        let mut rx = t.subscribe();
        let _ = tokio::time::timeout(DRAIN_GRACE, async {
            while !t.state().reader_done {
                if rx.changed().await.is_err() {
                    break;
                }
            }
        })
        .await;
        let info = match exit {
            ChildExit::Code(code) => ExitInfo {
                exit_code: Some(i64::from(code)),
                signal: None,
            },
            ChildExit::Signal(sig) => ExitInfo {
                exit_code: None,
                signal: Some(process::signal_name(sig)),
            },
            ChildExit::Unknown => ExitInfo {
                exit_code: None,
                signal: None,
            },
        };
        c.on_exit(&t, info);
    });
}

/// Sleep `wait`, or for ever when there is nothing to wait for.
async fn sleep_or_never(wait: Option<Duration>) {
    match wait {
        Some(w) if w < PRECISE_BELOW => precise_sleep(w).await,
        Some(w) => tokio::time::sleep(w).await,
        None => std::future::pending().await,
    }
}

/// Waits shorter than this are timed by the kernel, not by tokio, whose timers tick in
/// milliseconds: the first look after a prompt is due a quarter of a millisecond after it
/// (`looks`), and tokio made that a whole one.
const PRECISE_BELOW: Duration = Duration::from_millis(1);

/// Sleep `w`, to the microsecond where the system has a timer descriptor.
async fn precise_sleep(w: Duration) {
    #[cfg(unix)]
    if let Some(timer) = crate::os::oneshot_timer(w) {
        // SAFETY: the timer is an OwnedFd this AsyncFd owns for its whole life, so it stays
        // open and refers to the same timer.
        let registered = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(timer, tokio::io::Interest::READABLE)
        };
        if let Ok(ready) = registered {
            let _ = ready.readable().await;
            return;
        }
    }
    tokio::time::sleep(w).await
}

/// Write keystrokes or text to the terminal, recorded as a `terminal/input` action.
pub async fn input(
    core: &Core,
    term: &Terminal,
    data: &str,
    origin: Option<ActionOrigin>,
) -> std::io::Result<()> {
    if !term.state().running() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::BrokenPipe,
            "the terminal's process has exited",
        ));
    }
    let _serial = term.write_lock.lock().await;
    let _writing = term.begin_write();
    {
        let mut st = term.state();
        if term.prompt_only {
            track_typed(&mut st, data);
        }
        // A line entered at the prompt is on its way to the shell until its command starts
        // or the next prompt shows: nothing else may be typed as a command meanwhile.
        if st.at_prompt && st.executing().is_none() && data.contains(['\r', '\n']) {
            st.line_entered = true;
        }
    }
    core.dispatch(
        term,
        StateAction::TerminalInput(TerminalInputAction {
            data: data.to_string(),
        }),
        origin,
    );
    let data = in_cursor_mode(core, term, data);
    term.pty.write_all(data.as_bytes()).await
}

/// Cursor keys as the program asked for them: in application cursor mode (DECCKM, set by
/// vim, less, curses programs with `keypad`) a terminal sends `ESC O A` for Up where it
/// sends `ESC [ A` otherwise. Named keys are encoded in the normal form; here they take the
/// program's current one, as a terminal's keys do.
fn in_cursor_mode<'a>(core: &Core, term: &Terminal, data: &'a str) -> std::borrow::Cow<'a, str> {
    if !data.contains("\x1b[") {
        return data.into();
    }
    core.sync_screen(term);
    if !lock(&term.vt).parser().screen().application_cursor() {
        return data.into();
    }
    let mut out = data.to_string();
    for k in ['A', 'B', 'C', 'D', 'H', 'F'] {
        out = out.replace(&format!("\x1b[{k}"), &format!("\x1bO{k}"));
    }
    out.into()
}

/// A prompt-only shell reports no command line: keep what is typed at its prompt, so the
/// line entered becomes the command the core marks executed when its echo arrives.
fn track_typed(st: &mut super::term::TermState, data: &str) {
    if !st.at_prompt || st.echo_pending.is_some() {
        return;
    }
    for c in data.chars() {
        match c {
            '\r' | '\n' => {
                // An empty line runs nothing (the next prompt would repeat the last status).
                let line = std::mem::take(&mut st.typed);
                if !line.trim().is_empty() {
                    st.echo_pending = Some(line);
                }
                return;
            }
            '\x7f' | '\x08' => {
                st.typed.pop();
            }
            // Ctrl-C and Ctrl-U drop the line.
            '\x03' | '\x15' => st.typed.clear(),
            c if c.is_control() => {}
            c => st.typed.push(c),
        }
    }
}

/// Resize the terminal to `size` (cols, rows; a missing one stays) when asked; a size past
/// the terminal limits is refused (`term::size_refusal`) and nothing changes.
pub fn resize_to(
    core: &Core,
    t: &Terminal,
    size: Option<(Option<u16>, Option<u16>)>,
) -> Result<(), String> {
    let Some((cols, rows)) = size else {
        return Ok(());
    };
    let (now_rows, now_cols) = {
        let mut vt = lock(&t.vt);
        vt.parser().screen().size()
    };
    let (cols, rows) = (
        cols.unwrap_or(now_cols.get()),
        rows.unwrap_or(now_rows.get()),
    );
    if (cols, rows) != (now_cols.get(), now_rows.get()) {
        resize(core, t, cols, rows, None)?;
    }
    Ok(())
}

/// Resize the pty (programs get SIGWINCH) and the rendered screen, or say why not (a size
/// past the terminal limits: `term::size_refusal`).
pub fn resize(
    core: &Core,
    term: &Terminal,
    cols: u16,
    rows: u16,
    origin: Option<ActionOrigin>,
) -> Result<(), String> {
    if let Some(why) = super::term::size_refusal(cols, rows) {
        return Err(why);
    }
    if let Err(e) = term.pty.resize(cols, rows) {
        tracing::warn!(terminal = %term.id, error = %e, "resize failed");
    }
    // Earlier output was drawn at the old size: render it first, then resize.
    core.sync_screen(term);
    lock(&term.vt).set_size(rows, cols);
    core.dispatch(
        term,
        StateAction::TerminalResized(TerminalResizedAction {
            cols: i64::from(cols),
            rows: i64::from(rows),
        }),
        origin,
    );
    Ok(())
}

/// Kill the terminal's whole session and every descendant; returns the pids killed.
pub async fn kill(core: &Core, term: &Terminal) -> Vec<i32> {
    let (killed, settled) = process::kill_and_settle(
        term.pty.kill(),
        term.subscribe(),
        || term.state().running(),
        KILL_SETTLE,
    )
    .await;
    if !settled {
        // Nothing reported the exit: record it ourselves.
        core.on_exit(
            term,
            ExitInfo {
                exit_code: None,
                signal: Some("SIGKILL".into()),
            },
        );
    }
    killed
}

impl Core {
    /// Open a terminal running the user's shell.
    pub async fn create(self: &Arc<Self>, spec: CreateSpec) -> Result<Arc<Terminal>, CoreError> {
        let id = match &spec.id {
            Some(id) => id.clone(),
            None => ids::new_id(ids::TERMINAL),
        };
        self.reserve(&id)?;
        let made = self.start_terminal(id.clone(), spec).await;
        self.release(&id);
        made
    }

    async fn start_terminal(
        self: &Arc<Self>,
        id: String,
        spec: CreateSpec,
    ) -> Result<Arc<Terminal>, CoreError> {
        if let Some(why) = super::term::size_refusal(spec.cols, spec.rows) {
            return Err(CoreError::Invalid(why));
        }
        let program = shell::resolve(spec.shell.as_deref(), self.cfg.default_shell.as_deref())
            .map_err(CoreError::Invalid)?;
        let nonce = shell::new_nonce();
        let launch = shell::prepare(
            &program,
            &self.cfg.runtime_dir,
            &id,
            &nonce,
            self.cfg.skip_user_rc,
        )
        .map_err(|e| {
            let dir = self.cfg.runtime_dir.display();
            CoreError::starting(format!("cannot prepare shell integration in {dir}"), &e)
        })?;
        let pty = super::pty::spawn(&launch, &spec.cwd, &spec.env, spec.cols, spec.rows)
            .await
            .map_err(|e| CoreError::starting(format!("cannot start {}", program.display()), &e))?;
        Ok(self.adopt(
            id,
            spec,
            Device {
                pty: Box::new(pty),
                program,
                nonce,
                prompt_only: launch.kind == shell::ShellKind::PromptOnly,
                nonce_file: launch.nonce_file,
            },
        ))
    }

    /// Make a terminal of a device whose shell has started, and start reading it.
    pub(super) fn adopt(
        self: &Arc<Self>,
        id: String,
        spec: CreateSpec,
        dev: Device,
    ) -> Arc<Terminal> {
        let program = dev.program;
        let uri = ids::terminal_uri(&id);
        let shell_name = program
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "shell".into());
        let cwd_text = spec.cwd.display().to_string();
        let state = TerminalState {
            title: spec.name.clone().unwrap_or_else(|| shell_name.clone()),
            cwd: Some(file_uri(&cwd_text)),
            cols: Some(i64::from(spec.cols)),
            rows: Some(i64::from(spec.rows)),
            content: vec![],
            lifecycle: TerminalLifecycleState::Running(TerminalRunningLifecycleState {}),
            claim: spec.claim,
            supports_command_detection: None,
            is_pty: Some(true),
        };
        let (changed, _) = watch::channel(0);
        let term = Arc::new(Terminal {
            id: id.clone(),
            uri: uri.clone(),
            shell: program.display().to_string(),
            cwd: cwd_text,
            workspace_id: spec.workspace_id,
            created_at: SystemTime::now(),
            created: Instant::now(),
            pid: dev.pty.pid(),
            pty: dev.pty,
            st: Mutex::new(TermState {
                state,
                spool: Spool::new(&self.cfg.spool_dir, self.cfg.memory_limit),
                scanner: Scanner::new(&dev.nonce),
                utf8_carry: Vec::new(),
                commands: VecDeque::new(),
                pending_line: None,
                command_started: None,
                detection: false,
                prompts: 0,
                at_prompt: false,
                prompt_drawn: false,
                continuation: false,
                continuations: 0,
                dropping_line: false,
                line_entered: false,
                prompt_started: false,
                prompt_end_missing: 0,
                first_wait_done: false,
                submitted: None,
                typed_bases: VecDeque::new(),
                unannounced: false,
                typed_for_unannounced: None,
                saw_executed: false,
                late_records: 0,
                saw_finished: false,
                finished_unknown: 0,
                installed_partially: false,
                rc_done: false,
                exit: None,
                reader_done: false,
                content_bytes: 0,
                delivered: 0,
                holder_client: spec.holder_client,
                next_command: 0,
                typed: String::new(),
                echo_pending: None,
                held: Vec::new(),
                paste_awaited: false,
                paste_seen: false,
                input_look: None,
                taken_in: 0,
            }),
            vt: Mutex::new(super::term::Screen::new(spec.rows, spec.cols)),
            changed,
            write_lock: Arc::new(tokio::sync::Mutex::new(())),
            entry_lock: tokio::sync::Mutex::new(()),
            input_watchers: std::sync::atomic::AtomicUsize::new(0),
            look_now: tokio::sync::Notify::new(),
            answers_in_flight: std::sync::atomic::AtomicUsize::new(0),
            writes: std::sync::atomic::AtomicU64::new(0),
            writes_done: std::sync::atomic::AtomicU64::new(0),
            prompt_only: dev.prompt_only,
            nonce_file: dev.nonce_file,
        });
        self.insert(term.clone());
        tracing::info!(terminal = %id, pid = term.pid, shell = %term.shell, "terminal created");
        start(self, &term);
        term
    }

    /// Remove a terminal, killing its processes first.
    pub async fn dispose(&self, id: &str) -> Result<Vec<i32>, CoreError> {
        let term = self
            .get(id)
            .ok_or_else(|| CoreError::NotFound(id.to_string()))?;
        let killed = kill(self, &term).await;
        self.remove(id);
        tracing::info!(terminal = %id, "terminal disposed");
        Ok(killed)
    }

    /// Kill every terminal's processes, all at once, and remove this process's
    /// shell-integration files (shutdown): nothing is left on disk after a clean exit.
    pub async fn shutdown(&self) {
        let all = self.list();
        futures_util::future::join_all(all.iter().map(|t| kill(self, t))).await;
        super::shell::remove_runtime_dir(&self.cfg.runtime_dir);
    }
}
