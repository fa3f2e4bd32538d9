//! A session's supervisor: one small process per headless session or terminal, between the
//! spawner and the session's program, that holds the whole session in the kernel's hands.
//!
//! It starts a new session of its own (`setsid`: no controlling terminal for headless
//! programs, so a read of `/dev/tty` fails at once; the terminal as controlling terminal for
//! interactive ones), becomes a child subreaper (every process the program leaves behind —
//! `&`, `nohup`, `setsid`, double forks, an emptied environment — is re-parented to it, not
//! to init), runs the program, reports its exit, and kills its whole subtree when the server
//! says `kill`, when the server's end of the control socket closes (the server exited, or
//! was killed: the kernel closes it), on SIGTERM or SIGHUP, and — for a terminal — when the
//! shell exits. Nothing here depends on anything the program could drop or change.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{
    SaFlags, SigAction, SigHandler, SigSet, SigmaskHow, Signal, sigaction, sigprocmask,
};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

use super::tree;
use super::wire::{ChildExit, KILL, Mode, Report, SpawnRequest};

/// How long killing the subtree may take before the supervisor gives up on stragglers (a
/// process it may not signal, such as a set-uid program of another user).
pub const KILL_WITHIN: Duration = Duration::from_secs(5);

/// Exit status when the program could not be started.
const SPAWN_FAILED: i32 = 127;

/// Signals the supervisor takes through its signalfd; the rest of the session's terminal
/// signals (Ctrl-C, Ctrl-Z, resizes) reach it too when a program shares its process group,
/// and are ignored here.
pub fn handled_signals() -> SigSet {
    let mut set = SigSet::empty();
    for s in [
        Signal::SIGCHLD,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGINT,
        Signal::SIGQUIT,
        Signal::SIGTSTP,
        Signal::SIGTTIN,
        Signal::SIGTTOU,
        Signal::SIGUSR1,
        Signal::SIGUSR2,
        Signal::SIGWINCH,
    ] {
        set.add(s);
    }
    set
}

struct Control {
    sock: UnixStream,
    buf: Vec<u8>,
}

impl Control {
    fn report(&mut self, r: &Report) {
        // The server may be gone; then nobody is listening and that is fine.
        let _ = self.sock.write_all(r.line().as_bytes());
    }

    /// Read what the server sent: `Some(true)` to kill, `None` when its end closed.
    fn read(&mut self) -> Option<bool> {
        let mut chunk = [0u8; 256];
        match self.sock.read(&mut chunk) {
            Ok(0) => None,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Some(self.buf.windows(KILL.len()).any(|w| w == KILL))
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Some(false),
            Err(_) => None,
        }
    }
}

/// Make this process (just forked by the spawner) a supervisor before any request arrives:
/// a session of its own, a child subreaper, and a handler that notes each handled signal
/// arriving while the mask is open for a program's start.
pub fn prepare() {
    let _ = nix::unistd::setsid();
    crate::os::name_process(c"itmcp-supervise");
    let _ = crate::os::become_subreaper();
    set_action(handled_signals().iter(), SigHandler::Handler(note_caught));
}

/// Give `signals` the action `how`: the note handler or the default.
fn set_action(signals: impl IntoIterator<Item = Signal>, how: SigHandler) {
    let action = SigAction::new(how, SaFlags::SA_RESTART, SigSet::empty());
    for sig in signals {
        // SAFETY: the default action, or the handler that only does an atomic OR, which is
        // async-signal-safe.
        let _ = unsafe { sigaction(sig, &action) };
    }
}

/// Signals that end an idle supervisor at once: with no session, nothing needs killing.
const ENDING_WHEN_IDLE: [Signal; 3] = [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT];

/// Enter (`true`) or leave the wait between sessions. While waiting, the signals that end a
/// supervisor take their default action (it has nothing to kill first, and a blocked one
/// would end the next session instead); otherwise they are blocked again, for the signalfd.
pub fn idle_signals(idle: bool) {
    let mut set = SigSet::empty();
    for s in ENDING_WHEN_IDLE {
        set.add(s);
    }
    let how = if idle {
        SigHandler::SigDfl
    } else {
        let _ = sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), None);
        SigHandler::Handler(note_caught)
    };
    set_action(ENDING_WHEN_IDLE, how);
    if idle {
        let _ = sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(&set), None);
    }
}

/// How a session ended for its supervisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// A headless session whose every process is gone, with nothing asking the supervisor
    /// to end: it is as clean as a new one and may take another request.
    Reusable,
    /// Exit with this status.
    Exit(i32),
}

/// Handled signals that arrived while the mask was open (bit N for signal N).
static CAUGHT: AtomicU64 = AtomicU64::new(0);

extern "C" fn note_caught(sig: nix::libc::c_int) {
    if (0..64).contains(&sig) {
        CAUGHT.fetch_or(1 << sig, Ordering::Relaxed);
    }
}

/// Raise again, now blocked, what was caught while the mask was open: it stays pending for
/// the signalfd (a program that ended at once is reaped, a SIGTERM still ends the session).
fn raise_caught() {
    let caught = CAUGHT.swap(0, Ordering::Relaxed);
    for sig in handled_signals().iter() {
        if caught & (1 << (sig as i32)) != 0 {
            let _ = nix::sys::signal::raise(sig);
        }
    }
}

/// Run the supervisor for one request (in a process [`prepare`]d for it).
pub fn run(mut req: SpawnRequest, control: OwnedFd, stdio: Vec<OwnedFd>) -> Over {
    let mut control = Control {
        sock: UnixStream::from(control),
        buf: Vec::new(),
    };
    control.report(&Report::Supervisor(super::namespace::host_pid()));
    // The Landlock sandbox: made ready here, entered by the program between fork and exec,
    // so that the program and everything below it are restricted and this process is not
    // (it serves the next session too). It fails closed: no sandbox, no program.
    let (private_tmp, confined) = match req.landlock.take() {
        Some(plan) => match confine(&plan, &mut req, &stdio) {
            Ok((tmp, prepared)) => (Some(tmp), Some(prepared)),
            Err(why) => {
                eprintln!("interactive-terminal-mcp: the sandbox could not be applied: {why}");
                control.report(&Report::Error(nix::libc::EACCES));
                return Over::Exit(SPAWN_FAILED);
            }
        },
        None => (None, None),
    };
    let over = supervise(req, control, stdio, confined);
    // What the session wrote in its TMPDIR, and the directory (the spawner removes it too
    // when this process was killed before it could).
    if let Some(tmp) = private_tmp {
        let _ = std::fs::remove_dir_all(tmp);
    }
    over
}

/// Make the session's private temporary directory (its `TMPDIR`) and the restriction its
/// program enters.
fn confine(
    plan: &crate::sandbox::landlock::Plan,
    req: &mut SpawnRequest,
    stdio: &[OwnedFd],
) -> Result<(std::path::PathBuf, crate::sandbox::landlock::Prepared), String> {
    let tmp = crate::sandbox::landlock::session_tmp(
        std::path::Path::new(&plan.tmp_parent),
        super::namespace::host_pid(),
    );
    std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    req.env.push(("TMPDIR".into(), tmp.display().to_string()));
    // A terminal's program opens its own device by name (`/dev/stdin`, `tty`, `ssh`'s
    // prompt): that one device of `/dev/pts` is granted, not the others.
    let tty_path = match (req.mode, stdio.first()) {
        (Mode::Terminal, Some(tty)) => Some(
            std::fs::read_link(format!("/proc/self/fd/{}", tty.as_raw_fd()))
                .map_err(|e| format!("the terminal's device cannot be named: {e}"))?,
        ),
        _ => None,
    };
    let prepared = crate::sandbox::landlock::prepare(plan, &tmp, tty_path.as_deref())?;
    Ok((tmp, prepared))
}

fn supervise(
    req: SpawnRequest,
    mut control: Control,
    stdio: Vec<OwnedFd>,
    confined: Option<crate::sandbox::landlock::Prepared>,
) -> Over {
    let child = match start(&req, stdio, confined) {
        Ok(c) => c,
        Err(e) => {
            control.report(&Report::Error(e.raw_os_error().unwrap_or(0)));
            return Over::Exit(SPAWN_FAILED);
        }
    };
    control.report(&Report::Started {
        program: super::namespace::host_pid_of_child(child),
        supervisor: super::namespace::host_pid(),
    });
    let Ok(mut sfd) = crate::os::SignalSource::new(&handled_signals()) else {
        // Without signals the session cannot be watched: end it rather than lose it.
        end(&mut control, child, true);
        return Over::Exit(1);
    };
    watch(req.mode, child, &mut control, &mut sfd)
}

/// Start the program with the session's stdio; returns its pid.
fn start(
    req: &SpawnRequest,
    stdio: Vec<OwnedFd>,
    confined: Option<crate::sandbox::landlock::Prepared>,
) -> std::io::Result<i32> {
    let mut cmd = Command::new(&req.program);
    cmd.args(&req.args)
        .current_dir(&req.cwd)
        .envs(req.env.iter().map(|(k, v)| (k, v)));
    let mut fds = stdio.into_iter();
    match req.mode {
        Mode::Headless => {
            let (Some(out), Some(err)) = (fds.next(), fds.next()) else {
                return Err(std::io::Error::from_raw_os_error(nix::libc::EBADF));
            };
            cmd.stdin(Stdio::null())
                .stdout(Stdio::from(out))
                .stderr(Stdio::from(err));
        }
        Mode::Terminal => {
            let Some(tty) = fds.next() else {
                return Err(std::io::Error::from_raw_os_error(nix::libc::EBADF));
            };
            // SAFETY: TIOCSCTTY on a terminal descriptor this process owns; it takes no
            // pointer. This process just became a session leader without a terminal.
            let rc = unsafe { nix::libc::ioctl(tty.as_raw_fd(), nix::libc::TIOCSCTTY as _, 0) };
            if rc != 0 {
                return Err(std::io::Error::last_os_error());
            }
            cmd.stdin(Stdio::from(tty.try_clone()?))
                .stdout(Stdio::from(tty.try_clone()?))
                .stderr(Stdio::from(tty));
        }
    }
    // The program starts with no signal blocked: a blocked mask is inherited through exec
    // (bash would hand it on to every job, and Ctrl-C would stop nothing), and the standard
    // library does not clear it. This process blocks the signals it reads from its
    // signalfd, so it opens the mask for the moment of the start; what arrives meanwhile is
    // caught (see `prepare`) and raised again once the mask is closed, for the signalfd.
    // Caught handlers are reset to the default in the program. No `pre_exec` hook: without
    // one the library starts the program with `posix_spawn` (a vfork), which does not copy
    // this process's page tables; a fork did, and was half of a supervisor's CPU per
    // command. The program shares this process's group, the terminal's foreground group: a
    // job-control shell moves itself into a group of its own, a REPL run as the terminal's
    // program gets Ctrl-C there (this process ignores it).
    //
    // A sandboxed program enters its restriction in a `pre_exec` hook: that one start is
    // a fork, not a vfork, which costs less than the restricted supervisor's exit and the
    // spawner's fork of another that it replaces. This process is single-threaded, so the
    // hook may allocate.
    if let Some(mut prepared) = confined {
        // SAFETY: the hook runs in the forked child of this single-threaded process; it
        // makes the restriction's system calls and writes to the child's stderr only.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
                prepared.enter().map_err(|why| {
                    eprintln!("interactive-terminal-mcp: the sandbox could not be applied: {why}");
                    std::io::Error::from_raw_os_error(nix::libc::EACCES)
                })
            });
        }
    }
    let handled = handled_signals();
    let _ = sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(&handled), None);
    let spawned = cmd.spawn();
    let _ = sigprocmask(SigmaskHow::SIG_BLOCK, Some(&handled), None);
    raise_caught();
    let pid = spawned?.id() as i32;
    // The Command (and with it this process's copies of the stdio descriptors) goes here,
    // so the pipes and the terminal end when the program's tree lets go of them.
    drop(cmd);
    Ok(pid)
}

/// Watch the session until it is over.
fn watch(mode: Mode, child: i32, control: &mut Control, sfd: &mut crate::os::SignalSource) -> Over {
    let mut main_exited = false;
    loop {
        let Some((ctl_ready, sig_ready)) = wait_either(control.sock.as_fd(), sfd.as_fd()) else {
            return end(control, child, false);
        };
        if sig_ready {
            let mut stop = false;
            while let Some(sig) = sfd.next_signal() {
                // Terminal signals (Ctrl-C, Ctrl-Z, resizes) are the program's, not ours.
                stop |= matches!(sig, Signal::SIGTERM | Signal::SIGHUP);
            }
            let (exit, none_left) = reap(child);
            if let Some(e) = exit {
                main_exited = true;
                control.report(&Report::Exited(e));
                // A terminal is over when its shell is: nothing in it outlives it.
                if mode == Mode::Terminal {
                    return end(control, child, true);
                }
                // The server answers the command on this report. It was woken on this
                // core, where what is left here (reaping, closing, the kept supervisor's
                // check) would otherwise run first: give it the core now.
                let _ = nix::sched::sched_yield();
            }
            if stop {
                return end(control, child, true);
            }
            if main_exited && none_left {
                return match mode {
                    Mode::Headless => Over::Reusable,
                    Mode::Terminal => Over::Exit(0),
                };
            }
        }
        if ctl_ready {
            match control.read() {
                Some(false) => {}
                Some(true) => return end(control, child, true),
                None => return end(control, child, false),
            }
        }
    }
}

/// Wait until `a` or `b` is readable (or hung up); which ones. `None` when poll fails.
pub(super) fn wait_either(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> Option<(bool, bool)> {
    loop {
        let mut fds = [
            PollFd::new(a, PollFlags::POLLIN),
            PollFd::new(b, PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {}
            Err(Errno::EINTR) => continue,
            Err(_) => return None,
        }
        let ready = |f: &PollFd| {
            f.revents().is_some_and(|r| {
                r.intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR)
            })
        };
        return Some((ready(&fds[0]), ready(&fds[1])));
    }
}

/// How `child` ended, if `status` is its end.
fn exit_of(child: i32, status: WaitStatus) -> Option<ChildExit> {
    match status {
        WaitStatus::Exited(pid, code) if pid.as_raw() == child => Some(ChildExit::Code(code)),
        WaitStatus::Signaled(pid, sig, _) if pid.as_raw() == child => {
            Some(ChildExit::Signal(sig as i32))
        }
        _ => None,
    }
}

/// Reap every child that has ended; returns the program's exit if it was among them, and
/// whether no child at all is left.
fn reap(child: i32) -> (Option<ChildExit>, bool) {
    let mut exit = None;
    loop {
        match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => return (exit, false),
            Ok(s) => exit = exit.or(exit_of(child, s)),
            Err(Errno::EINTR) => continue,
            Err(_) => return (exit, true),
        }
    }
}

/// Kill everything left in the session; tell the server how the program ended (when it
/// ended here) and what was killed, if it listens.
fn end(control: &mut Control, child: i32, tell: bool) -> Over {
    // In a namespace of its own the pids killed are reported as the server sees them.
    let host_pids = super::namespace::inside().then(super::namespace::host_descendants);
    let killed = tree::kill_own_descendants(KILL_WITHIN);
    if tell {
        if let Some(e) = killed.reaped.iter().find_map(|s| exit_of(child, *s)) {
            control.report(&Report::Exited(e));
        }
        let pids: BTreeSet<i32> = host_pids.unwrap_or(killed.pids).into_iter().collect();
        control.report(&Report::Killed(pids.into_iter().collect()));
    }
    Over::Exit(0)
}
