//! One headless execution: a process over pipes, stdin closed, stdout and stderr kept apart
//! in their own spools, under its own supervisor (a session of its own with no controlling
//! terminal; everything it starts stays in the supervisor's hands until it is killed).

use std::collections::BTreeMap;
#[cfg(unix)]
use std::fs::File;
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

#[cfg(unix)]
use std::os::fd::{AsFd, OwnedFd};

#[cfg(unix)]
use tokio::io::AsyncReadExt;
#[cfg(unix)]
use tokio::net::unix::pipe;
use tokio::sync::watch;

use crate::limits::places::RunningSlot;
use crate::process::{self, ChildExit, SessionIo, SessionSpec, Supervised};
use crate::spool::{Slice, Spool};

#[cfg(unix)]
/// A read this large means the program prints faster than it is read.
const FLOOD_READ: usize = 64 * 1024;

/// Read size for the stdout / stderr pipes.
const PIPE_READ_SIZE: usize = 256 * 1024;

#[cfg(unix)]
/// Pipe capacity asked of the kernel: fewer, larger reads for chatty commands (the
/// kernel caps it at /proc/sys/fs/pipe-max-size; failure just keeps the default).
const PIPE_CAPACITY: i32 = 1024 * 1024;

#[cfg(unix)]
/// How long the output pipes are left alone after the start: a command that ends sooner has
/// its output read once, when its exit is reported. Read as it came, `echo hi` woke the
/// server three times (its output, then each pipe's end) on the core where the program was
/// exiting, and each wake-up held that exit up. The pipes hold 1 MiB each (`PIPE_CAPACITY`),
/// more than a command writes in this time, so nothing waits on a full pipe meanwhile.
const READ_DELAY: Duration = Duration::from_millis(2);

/// The editor git starts for a message (`git commit` without `-m`, `git rebase
/// --continue`, `git tag -a`): headless there is no terminal, and vim printed its screen
/// as garbage into the output, waited two seconds, and left. `true` accepts the message as
/// it stands: an empty commit message aborts the commit with git's own words, a merge keeps
/// its prepared one. Set only when the server's own environment names no editor at all (an
/// operator's `code --wait` needs no terminal, and wins).
const NO_EDITOR: (&str, &str) = ("GIT_EDITOR", "true");
/// The variables that name an editor for git, in its order.
const EDITOR_VARS: [&str; 3] = ["GIT_EDITOR", "VISUAL", "EDITOR"];

/// After the process exits, how long to wait for its pipes to close before reporting the
/// exit (background children may hold them open; their output keeps arriving anyway).
const PIPE_DRAIN_GRACE: Duration = Duration::from_millis(250);

/// How long terminate waits for the program's exit to be recorded.
const KILL_REAP_WAIT: Duration = Duration::from_secs(5);

/// What to run.
#[derive(Debug, Clone)]
pub enum Program {
    /// A command line for the shell (`<shell> -c <line>`).
    Shell { shell: PathBuf, line: String },
    /// A program and its argv, without a shell.
    Argv { program: String, args: Vec<String> },
}

#[derive(Debug, Clone)]
pub struct StartSpec {
    pub program: Program,
    /// The command as shown in `list`.
    pub display: String,
    pub cwd: PathBuf,
    pub env: BTreeMap<String, String>,
    pub timeout: Option<Duration>,
    pub workspace_id: Option<String>,
    /// Inside the operator's sandbox (always, unless a person let this command out).
    pub confined: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    fn index(self) -> usize {
        match self {
            Stream::Stdout => 0,
            Stream::Stderr => 1,
        }
    }
}

/// A point-in-time view of a session.
#[derive(Debug, Clone)]
pub struct Status {
    pub running: bool,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub duration: Duration,
    pub stdout_len: u64,
    pub stderr_len: u64,
}

#[derive(Debug, Default)]
struct State {
    /// Set once the process exited and its pipes drained (or the grace passed).
    exited: Option<(Option<i32>, Option<i32>)>,
    ended: Option<Instant>,
    timed_out: bool,
}

pub struct Session {
    pub id: String,
    pub command: String,
    pub cwd: PathBuf,
    pub workspace_id: Option<String>,
    pub started_at: SystemTime,
    pub pid: i32,
    started: Instant,
    state: Mutex<State>,
    /// `state.exited` is set, readable without the lock: the manager counts running
    /// sessions among hundreds kept at every start.
    exited: AtomicBool,
    streams: [Mutex<Spool>; 2],
    delivered: Mutex<[u64; 2]>,
    changed: watch::Sender<u64>,
    /// The session's supervisor: its program's exit, and the kill of everything in it.
    supervised: Supervised,
}

use crate::locks::lock;

impl Session {
    /// Start the process under its own supervisor, holding `slot` until it has exited. The
    /// caller has validated `spec.cwd`.
    pub async fn spawn(
        id: String,
        spec: StartSpec,
        spool_dir: &std::path::Path,
        memory_limit: usize,
        slot: RunningSlot,
    ) -> std::io::Result<Arc<Session>> {
        let (program, args) = match &spec.program {
            Program::Shell { shell, line } => {
                (shell.display().to_string(), shell_args(shell, line))
            }
            Program::Argv { program, args } => (program.clone(), args.clone()),
        };
        let (out_r, out_w) = output_pipe()?;
        let (err_r, err_w) = output_pipe()?;
        let supervised = process::spawn(SessionSpec {
            program: &program,
            args: &args,
            cwd: &spec.cwd,
            env: headless_env(spec.env),
            expose: &[],
            confined: spec.confined,
            io: SessionIo::Headless {
                stdout: out_w,
                stderr: err_w,
            },
        })
        .await?;
        let pid = supervised.pid;
        let (changed, _) = watch::channel(0u64);
        let session = Arc::new(Session {
            id,
            command: spec.display,
            cwd: spec.cwd,
            workspace_id: spec.workspace_id,
            started_at: SystemTime::now(),
            pid,
            started: Instant::now(),
            state: Mutex::new(State::default()),
            exited: AtomicBool::new(false),
            streams: [
                Mutex::new(Spool::new(spool_dir, memory_limit)),
                Mutex::new(Spool::new(spool_dir, memory_limit)),
            ],
            delivered: Mutex::new([0, 0]),
            changed,
            supervised,
        });
        let (exit_seen, exit_rx) = watch::channel(false);
        let out = session.clone().pump(out_r, Stream::Stdout, exit_rx.clone());
        let err = session.clone().pump(err_r, Stream::Stderr, exit_rx);
        let s = session.clone();
        tokio::spawn(async move {
            let exit = s.supervised.wait().await;
            exit_seen.send_replace(true);
            let drain = async {
                let _ = out.await;
                let _ = err.await;
            };
            let _ = tokio::time::timeout(PIPE_DRAIN_GRACE, drain).await;
            let (code, signal) = match exit {
                ChildExit::Code(c) => (Some(c), None),
                ChildExit::Signal(sig) => (None, Some(sig)),
                ChildExit::Unknown => {
                    tracing::warn!(session = %s.id, "the session's supervisor was killed");
                    (None, None)
                }
            };
            {
                let mut st = lock(&s.state);
                st.exited = Some((code, signal));
                st.ended = Some(Instant::now());
                s.exited.store(true, Ordering::Release);
            }
            drop(slot);
            s.bump();
            tracing::debug!(session = %s.id, ?code, ?signal, "session exited");
        });
        if let Some(limit) = spec.timeout {
            let s = session.clone();
            tokio::spawn(async move {
                let mut rx = s.subscribe();
                let deadline = tokio::time::Instant::now() + limit;
                while s.is_running() {
                    match tokio::time::timeout_at(deadline, rx.changed()).await {
                        Ok(Ok(())) => continue,
                        Ok(Err(_)) => return,
                        Err(_) => break,
                    }
                }
                if s.is_running() {
                    lock(&s.state).timed_out = true;
                    tracing::info!(session = %s.id, timeout_ms = limit.as_millis() as u64, "timeout: killing process tree");
                    s.kill().await;
                }
            });
        }
        Ok(session)
    }

    /// Copy one output pipe into its spool until every writer has closed it, on a thread of
    /// the blocking pool (Windows' anonymous pipes cannot be polled).
    #[cfg(windows)]
    fn pump(
        self: Arc<Self>,
        pipe: std::io::PipeReader,
        which: Stream,
        _exit_seen: watch::Receiver<bool>,
    ) -> tokio::task::JoinHandle<()> {
        tokio::task::spawn_blocking(move || {
            let mut pipe = pipe;
            let mut buf = vec![0u8; PIPE_READ_SIZE];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => self.append(which, &buf[..n]),
                }
            }
            lock(&self.streams[which.index()]).settle();
        })
    }

    /// Copy one output pipe into its spool until every writer has closed it. Left alone for
    /// `READ_DELAY` or until the exit is reported, whichever comes first; what is there then
    /// is read straight away, and the pipe goes to the reactor only if it is still open.
    #[cfg(unix)]
    fn pump(
        self: Arc<Self>,
        fd: OwnedFd,
        which: Stream,
        mut exit_seen: watch::Receiver<bool>,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let _ = tokio::time::timeout(READ_DELAY, exit_seen.wait_for(|seen| *seen)).await;
            // Read into spare capacity: a zeroed buffer cost every command a 256 KiB memset
            // (and its page faults) even when it printed two bytes.
            let mut buf = Vec::with_capacity(PIPE_READ_SIZE);
            let file = File::from(fd);
            if self.read_available(&file, which, &mut buf) {
                match pipe::Receiver::from_owned_fd(OwnedFd::from(file)) {
                    Ok(mut r) => loop {
                        buf.clear();
                        match r.read_buf(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => self.append(which, &buf[..n]),
                        }
                        // A flood is read a big piece at a time, each after the other tasks
                        // had their turn: a program printing at pipe speed never holds up
                        // another caller's answer.
                        if buf.len() >= FLOOD_READ {
                            tokio::task::yield_now().await;
                        }
                    },
                    Err(e) => {
                        tracing::warn!(session = %self.id, stream = ?which, error = %e,
                            "the output pipe could not be watched: what the program writes from now on is lost");
                    }
                }
            }
            // The stream is over: a flood gives back its disk (`Spool::settle`).
            lock(&self.streams[which.index()]).settle();
        })
    }

    #[cfg(unix)]
    /// Read what the non-blocking pipe `file` holds now into the spool: `true` if it is still
    /// open and empty, `false` once it has ended (or failed).
    fn read_available(&self, file: &File, which: Stream, buf: &mut Vec<u8>) -> bool {
        loop {
            buf.clear();
            let read = file.take(PIPE_READ_SIZE as u64).read_to_end(buf);
            if !buf.is_empty() {
                self.append(which, buf);
            }
            match read {
                // Less than asked for: the pipe's end was reached.
                Ok(n) if n < PIPE_READ_SIZE => return false,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
                Err(_) => return false,
            }
        }
    }

    fn append(&self, which: Stream, bytes: &[u8]) {
        lock(&self.streams[which.index()]).append(bytes);
        self.bump();
    }

    fn bump(&self) {
        self.changed.send_modify(|v| *v = v.wrapping_add(1));
    }

    /// A receiver that wakes on new output and on exit.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    pub fn is_running(&self) -> bool {
        !self.exited.load(Ordering::Acquire)
    }

    pub fn status(&self) -> Status {
        let st = lock(&self.state);
        let (exit_code, signal) = st.exited.unwrap_or((None, None));
        let end = st.ended.unwrap_or_else(Instant::now);
        Status {
            running: st.exited.is_none(),
            exit_code,
            signal,
            timed_out: st.timed_out,
            duration: end.duration_since(self.started),
            stdout_len: lock(&self.streams[0]).len(),
            stderr_len: lock(&self.streams[1]).len(),
        }
    }

    pub fn age(&self) -> Duration {
        self.started.elapsed()
    }

    pub fn stream_len(&self, which: Stream) -> u64 {
        lock(&self.streams[which.index()]).len()
    }

    /// Where the last answer for this stream ended.
    pub fn delivered(&self, which: Stream) -> u64 {
        lock(&self.delivered)[which.index()]
    }

    /// Read from `cursor` (or the last delivered offset); with `remember`, what was read
    /// counts as delivered (a read for a caller that went away does not: its next read
    /// starts where it was). With `text`, the read never ends inside a UTF-8 character (see
    /// [`Spool::read_text`]), so what is remembered as delivered is exactly what the caller
    /// can show.
    pub fn read(
        &self,
        which: Stream,
        cursor: Option<u64>,
        max: usize,
        tail: bool,
        text: bool,
        remember: bool,
    ) -> std::io::Result<Slice> {
        let from = cursor.unwrap_or_else(|| self.delivered(which));
        let finished = !self.is_running();
        let spool = lock(&self.streams[which.index()]);
        let slice = match (text, tail) {
            (true, _) => spool.read_text(from, max, tail, finished)?,
            (false, true) => spool.read_tail(from, max)?,
            (false, false) => spool.read(from, max)?,
        };
        drop(spool);
        if remember {
            let mut d = lock(&self.delivered);
            d[which.index()] = d[which.index()].max(slice.end);
        }
        Ok(slice)
    }

    /// What a default answer shows of a stream since it was last delivered: all of it, or
    /// its head and tail within `budget` bytes (`spool::excerpt`); with `remember`, what it
    /// shows counts as delivered (the bytes left out are read by cursor).
    pub fn read_excerpt(
        &self,
        which: Stream,
        budget: usize,
        remember: bool,
    ) -> std::io::Result<crate::spool::excerpt::Excerpt> {
        let from = self.delivered(which);
        let finished = !self.is_running();
        let spool = lock(&self.streams[which.index()]);
        let e = spool.read_excerpt(from, spool.len(), budget, finished)?;
        drop(spool);
        if remember {
            let mut d = lock(&self.delivered);
            d[which.index()] = d[which.index()].max(e.end());
        }
        Ok(e)
    }

    /// What the server did not keep of a stream, if anything.
    pub fn dropped(&self, which: Stream) -> Option<crate::spool::cap::DroppedSummary> {
        lock(&self.streams[which.index()]).dropped()
    }

    /// Bytes of a stream not delivered yet.
    pub fn pending(&self, which: Stream) -> u64 {
        let len = lock(&self.streams[which.index()]).len();
        len.saturating_sub(self.delivered(which))
    }

    /// The last `max` bytes of a stream, without moving what counts as delivered (for looking
    /// at how a command ended, not for the caller).
    pub fn peek_tail(&self, which: Stream, max: usize) -> std::io::Result<Vec<u8>> {
        let spool = lock(&self.streams[which.index()]);
        Ok(spool.read_tail(0, max)?.bytes)
    }

    /// Memory held by this session's output.
    pub fn memory_bytes(&self) -> usize {
        self.streams.iter().map(|s| lock(s).memory_bytes()).sum()
    }

    /// Kill everything this session started (whether its program still runs or only what it
    /// left behind); returns the pids killed.
    pub async fn kill(self: &Arc<Self>) -> Vec<i32> {
        // Wait for the exit to be recorded so the caller sees the final status.
        let (killed, _) = crate::process::kill_and_settle(
            self.supervised.kill(),
            self.subscribe(),
            || self.is_running(),
            KILL_REAP_WAIT,
        )
        .await;
        killed
    }

    /// Whether anything of the session (its program or what it left) may still run.
    pub fn has_processes(&self) -> bool {
        !self.supervised.is_gone()
    }
}

/// How `shell` is told to run `line`: `-c LINE` for a POSIX shell; cmd.exe without its
/// AutoRun commands (`/d`, the registry's start-up file) and with the line as it is (`/s
/// /c`); PowerShell without its profile and without waiting for input.
pub fn shell_args(shell: &std::path::Path, line: &str) -> Vec<String> {
    let name = shell
        .file_stem()
        .and_then(|n| n.to_str())
        .map(str::to_ascii_lowercase);
    let lead: &[&str] = match name.as_deref() {
        Some("cmd") => &["/d", "/s", "/c"],
        Some("powershell" | "pwsh") => &["-NoProfile", "-NonInteractive", "-Command"],
        _ => &["-c"],
    };
    lead.iter()
        .map(|a| a.to_string())
        .chain([line.to_string()])
        .collect()
}

/// A pipe for one of the program's output streams: our end, its end. Ours is non-blocking
/// and large (fewer wake-ups for a chatty command); the program's keeps blocking writes.
#[cfg(unix)]
fn output_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (ours, theirs) = crate::os::pipe_cloexec(false)?;
    crate::os::grow_pipe(ours.as_fd(), PIPE_CAPACITY);
    process::set_nonblocking(ours.as_fd())?;
    Ok((ours, theirs))
}

/// A pipe for one of the program's output streams: our end, its end (neither inherited by
/// anything but the program, which gets a duplicate of its end).
#[cfg(windows)]
fn output_pipe() -> std::io::Result<(std::io::PipeReader, std::io::PipeWriter)> {
    std::io::pipe()
}

/// A headless command's environment on top of the server's: what the request gave, then the
/// defaults a command without a terminal needs.
fn headless_env(request: BTreeMap<String, String>) -> Vec<(String, String)> {
    let no_editor = EDITOR_VARS.iter().all(|v| std::env::var_os(v).is_none());
    let defaults = no_editor.then(|| (NO_EDITOR.0.to_string(), NO_EDITOR.1.to_string()));
    // The request's first: the server's own come after, and the last value of a name wins.
    request.into_iter().chain(defaults).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_shell_is_told_to_run_a_line_its_own_way() {
        let args = |s: &str| super::shell_args(std::path::Path::new(s), "echo hi");
        assert_eq!(args("/bin/sh"), ["-c", "echo hi"]);
        assert_eq!(args("/usr/bin/bash"), ["-c", "echo hi"]);
        assert_eq!(args("cmd.exe"), ["/d", "/s", "/c", "echo hi"]);
        assert_eq!(args("CMD.EXE"), ["/d", "/s", "/c", "echo hi"]);
        assert_eq!(
            args("pwsh"),
            ["-NoProfile", "-NonInteractive", "-Command", "echo hi"]
        );
    }
}
