//! The server's side of supervision: starting sessions through the spawner, and a handle on
//! each session's supervisor — its program's pid, its exit, and killing the whole session.
//!
//! Dropping a [`Supervised`] closes the server's end of the control socket, which tells the
//! supervisor to kill everything in the session; so does the server's death, because the
//! kernel closes every descriptor of a dead process. No scan of the machine's processes
//! happens on any of these paths.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use nix::sys::socket::SockType;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::watch;

use super::SessionSpec;
use super::spawner::SPAWNER_FLAG;
use super::wire::{ChildExit, KILL, Mode, Report, SpawnRequest};
use super::{reaper, requests};

/// How long a new session may take to report that its program started.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// How long `kill` waits for the supervisor's report (it gives up on stragglers itself
/// after `supervisor::KILL_WITHIN`).
const KILL_REPORT_TIMEOUT: Duration = Duration::from_secs(8);

/// How long a supervisor may take to answer `kill` before it is killed from here.
const UNANSWERED_KILL: Duration = Duration::from_secs(3);

/// The program that becomes the spawner: this process's own binary unless set.
fn program() -> &'static Mutex<PathBuf> {
    static PROGRAM: OnceLock<Mutex<PathBuf>> = OnceLock::new();
    PROGRAM.get_or_init(|| Mutex::new(PathBuf::from("/proc/self/exe")))
}

use crate::locks::lock;

/// Use `path` (a binary of this crate) as the spawner. Only for processes that embed the
/// terminal core without being one of the crate's binaries: tests.
pub fn use_spawner_program(path: &Path) {
    *lock(program()) = path.to_path_buf();
}

/// The server's connection to its spawner.
struct Spawner {
    sock: OwnedFd,
    pid: i32,
    /// Becomes true when the spawner has ended.
    ended: watch::Receiver<bool>,
}

fn spawner() -> &'static Mutex<Option<Spawner>> {
    static SPAWNER: OnceLock<Mutex<Option<Spawner>>> = OnceLock::new();
    SPAWNER.get_or_init(|| Mutex::new(None))
}

/// A connected pair of Unix sockets of `kind`, both close-on-exec.
fn socket_pair(kind: SockType) -> std::io::Result<(OwnedFd, OwnedFd)> {
    Ok(crate::os::socket_pair_cloexec(kind)?)
}

fn start_spawner() -> std::io::Result<Spawner> {
    // One message per request: see `requests`.
    let (ours, theirs) = socket_pair(SockType::SeqPacket)?;
    let path = lock(program()).clone();
    let mut cmd = tokio::process::Command::new(&path);
    cmd.arg(SPAWNER_FLAG);
    if let Some(n) = super::open_files::given() {
        cmd.arg(n.to_string());
    }
    if super::namespace::subreaper_only() {
        cmd.arg(super::namespace::SUBREAPER_FLAG);
    }
    cmd.stdin(Stdio::from(theirs))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(false);
    let mut child = {
        let mut guard = reaper::spawn_guard();
        let child = cmd.spawn()?;
        if let Some(pid) = child.id() {
            guard.register(pid as i32);
        }
        child
    };
    let pid = child.id().map_or(0, |p| p as i32);
    let (ended_tx, ended) = watch::channel(false);
    tokio::spawn(async move {
        let status = child.wait().await;
        reaper::unregister(pid);
        ended_tx.send_replace(true);
        tracing::debug!(pid, ?status, "spawner ended");
    });
    tracing::debug!(pid, program = %path.display(), "spawner started");
    Ok(Spawner {
        sock: ours,
        pid,
        ended,
    })
}

/// Close the spawner's socket, which makes it kill everything below it and exit; wait for
/// that (bounded).
pub async fn stop_spawner() {
    let Some(sp) = lock(spawner()).take() else {
        return;
    };
    let mut ended = sp.ended.clone();
    drop(sp.sock);
    let _ = tokio::time::timeout(KILL_REPORT_TIMEOUT, ended.wait_for(|e| *e)).await;
}

/// Send one request with its descriptors, starting the spawner when there is none (or it
/// died: then once more with a new one).
fn send(req: &SpawnRequest, fds: &[&OwnedFd]) -> std::io::Result<()> {
    let mut slot = lock(spawner());
    for attempt in 0..2 {
        if slot.is_none() {
            *slot = Some(start_spawner()?);
        }
        let Some(sp) = slot.as_ref() else { continue };
        match requests::send(&sp.sock, req, fds) {
            Ok(()) => return Ok(()),
            Err(e) if attempt == 0 => {
                tracing::warn!(pid = sp.pid, error = %e, "spawner gone; starting a new one");
                *slot = None;
            }
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no spawner"))
}

/// A session's descriptors: what its program reads and writes.
pub enum SessionIo {
    /// The write ends of the stdout and stderr pipes.
    Headless { stdout: OwnedFd, stderr: OwnedFd },
    /// The terminal (pty slave).
    Terminal { tty: OwnedFd },
}

/// A running (or ended) session under its supervisor.
pub struct Supervised {
    /// The program's pid (a terminal's shell, a headless command's shell or program).
    pub pid: i32,
    /// The supervisor's pid: killed from here when it does not answer `kill` (something
    /// stopped it).
    supervisor: i32,
    /// Where `kill` is written; `None` once the supervisor's end is closed.
    control: Arc<tokio::sync::Mutex<Option<OwnedWriteHalf>>>,
    exit: watch::Receiver<Option<ChildExit>>,
    killed: watch::Receiver<Option<Vec<i32>>>,
    gone: watch::Receiver<bool>,
}

/// Start a session, inside the operator's sandbox. Fails as starting the program would
/// (`NotFound`, `PermissionDenied`…), and with `PermissionDenied` when the sandbox cannot be
/// set up: nothing starts unconfined.
impl Supervised {
    /// The supervisor's pid: everything the program leaves (background jobs, orphans) lives
    /// below it.
    pub fn supervisor_pid(&self) -> i32 {
        self.supervisor
    }
}

pub async fn spawn(spec: SessionSpec<'_>) -> std::io::Result<Supervised> {
    let cwd = spec.cwd.display().to_string();
    let (launch, io) = spec.into_launch()?;
    let (ours, theirs) = socket_pair(SockType::Stream)?;
    let (mode, stdio) = match io {
        SessionIo::Headless { stdout, stderr } => (Mode::Headless, vec![stdout, stderr]),
        SessionIo::Terminal { tty } => (Mode::Terminal, vec![tty]),
    };
    let req = SpawnRequest {
        mode,
        program: launch.program,
        args: launch.args,
        landlock: launch.landlock,
        cwd,
        env: launch.env,
    };
    {
        let mut fds: Vec<&OwnedFd> = vec![&theirs];
        fds.extend(stdio.iter());
        send(&req, &fds)?;
    }
    // The supervisor has its copies now; the session's ends are held only in it.
    drop(theirs);
    drop(stdio);
    let std_sock = std::os::unix::net::UnixStream::from(ours);
    std_sock.set_nonblocking(true)?;
    let (rd, wr) = tokio::net::UnixStream::from_std(std_sock)?.into_split();
    let mut lines = BufReader::new(rd).lines();
    // The supervisor says who it is first; then how the start went.
    let mut supervisor_pid = 0;
    let first = tokio::time::timeout(START_TIMEOUT, async {
        loop {
            let line = lines.next_line().await;
            if let Ok(Some(l)) = &line
                && let Some(Report::Supervisor(p)) = Report::parse(l)
            {
                supervisor_pid = p;
                continue;
            }
            return line;
        }
    })
    .await;
    if first.is_err() && supervisor_pid > 1 {
        // Stopped before it could say how the start went (by its own program): killed,
        // with whatever the program started.
        kill_stopped(supervisor_pid);
    }
    let (pid, supervisor) = match first {
        Ok(Ok(Some(line))) => match Report::parse(&line) {
            Some(Report::Started {
                program,
                supervisor,
            }) => (program, supervisor),
            Some(Report::Error(errno)) => return Err(std::io::Error::from_raw_os_error(errno)),
            _ => {
                return Err(std::io::Error::other(format!(
                    "unexpected word from the session's supervisor: {line:?}"
                )));
            }
        },
        Ok(Ok(None)) | Ok(Err(_)) => {
            // The spawner says `error` when it cannot even fork; a supervisor gone without a
            // word was killed — by its own program, which only a started session has. The
            // session started and ended, how is unknown.
            tracing::warn!("a session's supervisor was killed before it reported");
            return Ok(Supervised::vanished());
        }
        Err(_) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the session's supervisor did not start the program in time",
            ));
        }
    };
    let (exit_tx, exit) = watch::channel(None);
    let (killed_tx, killed) = watch::channel(None);
    let (gone_tx, gone) = watch::channel(false);
    let control = Arc::new(tokio::sync::Mutex::new(Some(wr)));
    let ours = control.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            match Report::parse(&line) {
                Some(Report::Exited(e)) => {
                    exit_tx.send_replace(Some(e));
                }
                Some(Report::Killed(pids)) => {
                    killed_tx.send_replace(Some(pids));
                }
                _ => tracing::debug!(%line, "unexpected supervisor report"),
            }
        }
        // Its end is closed: nothing more can be said to it. Close ours now rather than
        // when the session is pruned: hundreds of ended sessions are kept readable, and each
        // would hold a descriptor the server's terminals may need.
        *ours.lock().await = None;
        // The supervisor is gone: if it never said how the program ended, nobody knows.
        exit_tx.send_if_modified(|e| {
            if e.is_none() {
                *e = Some(ChildExit::Unknown);
                true
            } else {
                false
            }
        });
        gone_tx.send_replace(true);
    });
    Ok(Supervised {
        pid,
        supervisor,
        control,
        exit,
        killed,
        gone,
    })
}

impl Supervised {
    /// A session whose supervisor disappeared before saying anything.
    fn vanished() -> Supervised {
        Supervised {
            pid: 0,
            supervisor: 0,
            control: Arc::new(tokio::sync::Mutex::new(None)),
            exit: watch::channel(Some(ChildExit::Unknown)).1,
            killed: watch::channel(Some(Vec::new())).1,
            gone: watch::channel(true).1,
        }
    }

    /// How the program ended, once it has.
    pub fn exit(&self) -> Option<ChildExit> {
        *self.exit.borrow()
    }

    /// Wait for the program to end.
    pub async fn wait(&self) -> ChildExit {
        super::settle::exit_of(self.exit.clone()).await
    }

    /// Whether the supervisor (and so every process of the session) is gone.
    pub fn is_gone(&self) -> bool {
        *self.gone.borrow()
    }

    /// Kill everything in the session; returns the pids killed.
    pub async fn kill(&self) -> Vec<i32> {
        if self.is_gone() {
            return Vec::new();
        }
        {
            let mut control = self.control.lock().await;
            if let Some(w) = control.as_mut()
                && w.write_all(KILL).await.is_err()
            {
                // Its end is gone already.
                *control = None;
            }
        }
        // A supervisor that does not answer in time was stopped (or is stuck): it is killed
        // from here, and its session with it — the kernel ends a pid namespace with its
        // process 1; without one, the spawner kills the orphans.
        if !self.reported_within(UNANSWERED_KILL).await && self.supervisor > 1 {
            kill_stopped(self.supervisor);
            self.reported_within(KILL_REPORT_TIMEOUT).await;
        }
        self.killed.borrow().clone().unwrap_or_default()
    }

    /// Wait up to `within` for the supervisor to report what it killed, or to be gone.
    async fn reported_within(&self, within: Duration) -> bool {
        let mut killed = self.killed.clone();
        let mut gone = self.gone.clone();
        tokio::time::timeout(within, async {
            loop {
                if killed.borrow_and_update().is_some() || *gone.borrow_and_update() {
                    return;
                }
                tokio::select! {
                    r = killed.changed() => if r.is_err() { return },
                    r = gone.changed() => if r.is_err() { return },
                }
            }
        })
        .await
        .is_ok()
    }
}

/// Kill a supervisor that does not answer (stopped, or stuck); its session ends with it.
fn kill_stopped(supervisor: i32) {
    tracing::warn!(supervisor, "a supervisor does not answer; killing it");
    let pid = nix::unistd::Pid::from_raw(supervisor);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT);
}
