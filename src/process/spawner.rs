//! The spawner: one small, single-threaded helper process per server, started from the
//! server's own binary (`--pm-spawner`), that forks a supervisor for every session the
//! server asks for.
//!
//! Why a helper: a supervisor must be a process of its own above the session's program, and
//! forking a small single-threaded process costs a fraction of starting one from the
//! server's large multi-threaded image. One supervisor is always forked ahead (the
//! standby): it waits on the server's socket and takes the next request itself, so a
//! command does not wait for a fork; the spawner forks the next standby as soon as one is
//! taken, and does not read the socket while one waits (one reader at a time keeps the
//! stream whole). The spawner is a child subreaper too: if a supervisor is killed, its
//! session's processes come back to the spawner, which kills them. When the server's end of
//! the spawner's socket closes (the server exited or was killed), or the server is gone when
//! the parent-death signal arrives, the spawner kills everything below it and exits.

use std::collections::BTreeSet;
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::sys::signal::{SigmaskHow, Signal, sigprocmask};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, fork, getppid};

use super::wire::{MAX_REQUEST_BYTES, Report, SpawnRequest};
use super::{supervisor, walk};

/// The spawner's own argument: the server's binary run with it becomes the spawner.
pub const SPAWNER_FLAG: &str = "--pm-spawner";

/// Descriptors one request can carry (control socket and up to two stdio descriptors).
const MAX_FDS: usize = 3;

/// The socket to the server is this process's stdin.
const SERVER_FD: RawFd = 0;

/// Exit status of a standby that found the server's end of the socket closed.
const SERVER_GONE: i32 = 4;

/// Exit status of a standby that read something other than a request: the stream from the
/// server cannot be resynchronised, so the spawner ends too (the server starts a new one).
const STREAM_BROKEN: i32 = 3;

/// Nice value a supervisor takes once its session is over and reported: tearing the process
/// down must not hold up the server's answer on a small machine.
const NICE_WHEN_DONE: i32 = 19;

/// A request and its descriptors.
struct Received {
    req: SpawnRequest,
    fds: Vec<OwnedFd>,
}

/// Read one request. `Ok(None)`: the server's end closed.
fn receive(sock: BorrowedFd<'_>) -> std::io::Result<Option<Received>> {
    let mut head = [0u8; 4];
    let mut cmsg = nix::cmsg_space!([RawFd; MAX_FDS]);
    let (got, fds) = {
        let mut iov = [std::io::IoSliceMut::new(&mut head)];
        let msg = loop {
            match recvmsg::<()>(
                sock.as_raw_fd(),
                &mut iov,
                Some(&mut cmsg),
                MsgFlags::MSG_CMSG_CLOEXEC,
            ) {
                Ok(m) => break m,
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
        };
        let mut fds = Vec::new();
        for c in msg.cmsgs() {
            if let ControlMessageOwned::ScmRights(raw) = c {
                // SAFETY: the kernel just installed these descriptors in this process for
                // this message; nothing else owns them.
                fds.extend(raw.into_iter().map(|r| unsafe { OwnedFd::from_raw_fd(r) }));
            }
        }
        (msg.bytes, fds)
    };
    if got == 0 {
        return Ok(None);
    }
    // SAFETY: the borrowed descriptor stays open for this call; the File is forgotten below
    // so it never closes it.
    let mut file =
        std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(sock.as_raw_fd()) });
    if got < head.len() {
        file.read_exact(&mut head[got..])?;
    }
    let len = u32::from_le_bytes(head) as usize;
    if len > MAX_REQUEST_BYTES {
        return Err(std::io::Error::other(format!("request of {len} bytes")));
    }
    let mut body = vec![0u8; len];
    file.read_exact(&mut body)?;
    let req: SpawnRequest = serde_json::from_slice(&body).map_err(std::io::Error::other)?;
    if fds.len() != 1 + req.mode.stdio_fds() {
        return Err(std::io::Error::other(format!(
            "request with {} descriptors",
            fds.len()
        )));
    }
    Ok(Some(Received { req, fds }))
}

/// The supervisor forked ahead, waiting on the server's socket.
struct Standby {
    pid: i32,
    /// Readable (one byte, or the end) once the standby has taken a request or is gone.
    taken: OwnedFd,
}

/// The spawner's main loop; returns its exit status.
pub fn main() -> i32 {
    let server = getppid();
    // Its own session: signals from the server's terminal (Ctrl-C) are not for it.
    let _ = nix::unistd::setsid();
    let _ = nix::sys::prctl::set_name(c"itmcp-spawner");
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGUSR1);
    if getppid() != server {
        return 0;
    }
    let mask = supervisor::handled_signals();
    if sigprocmask(SigmaskHow::SIG_BLOCK, Some(&mask), None).is_err() {
        return 1;
    }
    let Ok(mut sfd) = SignalFd::with_flags(&mask, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
    else {
        return 1;
    };
    // SAFETY: fd 0 is the socket the server gave this process as stdin; it stays open for
    // the life of the process.
    let sock = unsafe { BorrowedFd::borrow_raw(SERVER_FD) };
    let me = std::process::id() as i32;
    let mut supervisors: BTreeSet<i32> = BTreeSet::new();
    let mut standby: Option<Standby> = None;
    loop {
        if standby.is_none() {
            standby = fork_standby(&sfd, me);
        }
        // With a standby waiting, the socket is its to read; without one (no fork possible
        // now), requests are read here and answered with the error.
        let watched = standby.as_ref().map_or(sock, |s| s.taken.as_fd());
        let Some((ready, sig_ready)) = supervisor::wait_either(watched, sfd.as_fd()) else {
            break;
        };
        let mut stop = false;
        // What was watched is handled first: a standby that took a request and whose session
        // has already ended is reaped below, after its byte was read.
        if ready {
            match standby.take() {
                Some(s) => {
                    let mut byte = [0u8; 1];
                    if nix::unistd::read(s.taken.as_raw_fd(), &mut byte) == Ok(1) {
                        supervisors.insert(s.pid);
                    } else {
                        // Gone without taking a request (its end of the pipe closed as it
                        // exited): its status says whether the server is gone.
                        stop |= standby_ended(s.pid);
                    }
                }
                None => stop |= refuse(sock),
            }
        }
        if sig_ready {
            while let Ok(Some(info)) = sfd.read_signal() {
                match Signal::try_from(info.ssi_signo as i32) {
                    // The parent-death signal also comes when the server thread that
                    // started this process ends: only a new parent means the server died.
                    Ok(Signal::SIGUSR1) => stop |= getppid() != server,
                    Ok(Signal::SIGTERM | Signal::SIGHUP | Signal::SIGINT) => stop = true,
                    _ => {}
                }
            }
            stop |= reap(&mut supervisors, &mut standby);
        }
        if stop {
            break;
        }
    }
    walk::kill_own_descendants(supervisor::KILL_WITHIN);
    0
}

/// Read a request while no supervisor can be forked, and answer it with the error. `true`
/// when the spawner should end.
fn refuse(sock: BorrowedFd<'_>) -> bool {
    match receive(sock) {
        Ok(Some(r)) => {
            eprintln!(
                "interactive-terminal spawner: no supervisor could be forked; a session was refused"
            );
            if let Some(control) = r.fds.into_iter().next() {
                let mut out = std::os::unix::net::UnixStream::from(control);
                let _ = std::io::Write::write_all(
                    &mut out,
                    Report::Error(nix::libc::EAGAIN).line().as_bytes(),
                );
            }
            false
        }
        Ok(None) => true,
        Err(e) => {
            eprintln!("interactive-terminal spawner: {e}");
            // A broken stream cannot be resynchronised: end with the server's help (it
            // starts a new spawner when this one is gone).
            true
        }
    }
}

/// Reap a standby that ended without taking a request; `true` when it found the server
/// gone or the stream broken (the spawner ends), `false` when it was killed.
fn standby_ended(pid: i32) -> bool {
    loop {
        match waitpid(Pid::from_raw(pid), None) {
            Ok(WaitStatus::Exited(_, code)) => return matches!(code, SERVER_GONE | STREAM_BROKEN),
            Err(Errno::EINTR) => continue,
            _ => return false,
        }
    }
}

/// Fork the next standby supervisor. `None` when no process can be forked now.
fn fork_standby(sfd: &SignalFd, spawner: i32) -> Option<Standby> {
    let (taken, tell) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).ok()?;
    // SAFETY: this process is single-threaded, so the child may run any code after fork.
    match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            drop(taken);
            let _ = nix::unistd::close(sfd.as_raw_fd());
            std::process::exit(standby_main(tell, spawner));
        }
        Ok(ForkResult::Parent { child }) => Some(Standby {
            pid: child.as_raw(),
            taken,
        }),
        Err(e) => {
            eprintln!("interactive-terminal spawner: fork: {e}");
            None
        }
    }
}

/// A standby supervisor: wait for the next request on the server's socket, tell the spawner
/// it was taken (one byte on `tell`), and supervise it.
fn standby_main(tell: OwnedFd, spawner: i32) -> i32 {
    // A standby dies with the spawner: left alone it would take one request that nobody
    // would follow with a new standby. Once it supervises a session it outlives the spawner,
    // as every session does (the server's socket decides).
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    if getppid().as_raw() != spawner {
        return 0;
    }
    supervisor::prepare();
    // SAFETY: fd 0 is the server's socket, inherited from the spawner.
    let sock = unsafe { BorrowedFd::borrow_raw(SERVER_FD) };
    let r = match receive(sock) {
        Ok(Some(r)) => r,
        Ok(None) => return SERVER_GONE,
        Err(e) => {
            eprintln!("interactive-terminal spawner: {e}");
            return STREAM_BROKEN;
        }
    };
    // Taken: the spawner forks the next standby now. (Later — once the program has started —
    // measured slower: the fork then competes with the program's own start-up.)
    let _ = nix::unistd::write(&tell, &[1]);
    drop(tell);
    let _ = nix::sys::prctl::set_pdeathsig(None::<Signal>);
    // The spawner's socket is not the supervisor's. It becomes /dev/null rather than a hole:
    // descriptors 0-2 stay taken, so nothing opened later lands there (a program's stdio
    // must never be close-on-exec).
    if let Ok(null) = std::fs::File::open("/dev/null") {
        let _ = nix::unistd::dup2(null.as_raw_fd(), SERVER_FD);
    }
    let mut fds = r.fds.into_iter();
    let code = match fds.next() {
        Some(control) => supervisor::run(r.req, control, fds.collect()),
        None => 1,
    };
    // SAFETY: setpriority on this process only; it takes no pointer.
    unsafe {
        nix::libc::setpriority(nix::libc::PRIO_PROCESS, 0, NICE_WHEN_DONE);
    }
    code
}

/// Reap ended supervisors; kill what a killed supervisor left behind (its session's
/// processes, re-parented here). A supervisor that exited on its own killed its session
/// first, so the spawner's children are looked at only after one was killed. `true` when
/// a standby found the server gone or its stream broken: the spawner ends.
fn reap(supervisors: &mut BTreeSet<i32>, standby: &mut Option<Standby>) -> bool {
    let mut killed = false;
    let mut broken = false;
    loop {
        match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => break,
            Ok(s) => {
                let Some(pid) = s.pid() else { continue };
                supervisors.remove(&pid.as_raw());
                if standby.as_ref().is_some_and(|sb| sb.pid == pid.as_raw()) {
                    *standby = None;
                }
                match s {
                    WaitStatus::Exited(_, SERVER_GONE | STREAM_BROKEN) => broken = true,
                    WaitStatus::Exited(..) => {}
                    _ => killed = true,
                }
            }
            Err(Errno::EINTR) => continue,
            Err(_) => break,
        }
    }
    if killed {
        let me = std::process::id() as i32;
        for orphan in walk::children(me) {
            let known = supervisors.contains(&orphan)
                || standby.as_ref().is_some_and(|sb| sb.pid == orphan);
            if !known && !walk::is_zombie(orphan) {
                walk::kill_subtree(orphan);
            }
        }
    }
    broken
}
