//! The spawner: one small, single-threaded helper process per server, started from the
//! server's own binary (`--pm-spawner`), that forks a supervisor for every session the
//! server asks for.
//!
//! Why a helper: a supervisor must be a process of its own above the session's program, and
//! forking a small single-threaded process costs a fraction of starting one from the
//! server's large multi-threaded image. The spawner is a child subreaper too: if a
//! supervisor is killed, its session's processes come back to the spawner, which kills them.
//! When the server's end of the spawner's socket closes (the server exited or was killed), or
//! the server is gone when the parent-death signal arrives, the spawner kills everything
//! below it and exits.

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
    let mut supervisors: BTreeSet<i32> = BTreeSet::new();
    while let Some((req_ready, sig_ready)) = supervisor::wait_either(sock, sfd.as_fd()) {
        if sig_ready {
            let mut stop = false;
            while let Ok(Some(info)) = sfd.read_signal() {
                match Signal::try_from(info.ssi_signo as i32) {
                    // The parent-death signal also comes when the server thread that
                    // started this process ends: only a new parent means the server died.
                    Ok(Signal::SIGUSR1) => stop |= getppid() != server,
                    Ok(Signal::SIGTERM | Signal::SIGHUP | Signal::SIGINT) => stop = true,
                    _ => {}
                }
            }
            reap(&mut supervisors);
            if stop {
                break;
            }
        }
        if req_ready {
            match receive(sock) {
                Ok(Some(r)) => {
                    if let Some(pid) = fork_supervisor(r, &sfd) {
                        supervisors.insert(pid);
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    eprintln!("interactive-terminal spawner: {e}");
                    // A broken stream cannot be resynchronised: end with the server's help
                    // (it starts a new spawner when this one is gone).
                    break;
                }
            }
        }
    }
    walk::kill_own_descendants(supervisor::KILL_WITHIN);
    0
}

/// Fork the supervisor for one request; the parent keeps nothing of the request.
fn fork_supervisor(r: Received, sfd: &SignalFd) -> Option<i32> {
    // SAFETY: this process is single-threaded, so the child may run any code after fork.
    match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            // The spawner's own descriptors are not the supervisor's. Its socket (stdin)
            // becomes /dev/null rather than a hole: descriptors 0-2 stay taken, so nothing
            // opened later lands there (a program's stdio must never be close-on-exec).
            let _ = nix::unistd::close(sfd.as_raw_fd());
            if let Ok(null) = std::fs::File::open("/dev/null") {
                let _ = nix::unistd::dup2(null.as_raw_fd(), SERVER_FD);
            }
            let _ = sigprocmask(
                SigmaskHow::SIG_BLOCK,
                Some(&supervisor::handled_signals()),
                None,
            );
            let mut fds = r.fds.into_iter();
            let code = match fds.next() {
                Some(control) => supervisor::run(r.req, control, fds.collect()),
                None => 1,
            };
            std::process::exit(code);
        }
        Ok(ForkResult::Parent { child }) => Some(child.as_raw()),
        Err(e) => {
            eprintln!("interactive-terminal spawner: fork: {e}");
            if let Some(control) = r.fds.into_iter().next() {
                let mut sock = std::os::unix::net::UnixStream::from(control);
                let _ =
                    std::io::Write::write_all(&mut sock, Report::Error(e as i32).line().as_bytes());
            }
            None
        }
    }
}

/// Reap ended supervisors; kill what a killed supervisor left behind (its session's
/// processes, re-parented here).
fn reap(supervisors: &mut BTreeSet<i32>) {
    loop {
        match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => break,
            Ok(s) => {
                if let Some(pid) = s.pid() {
                    supervisors.remove(&pid.as_raw());
                }
            }
            Err(Errno::EINTR) => continue,
            Err(_) => break,
        }
    }
    let me = std::process::id() as i32;
    for orphan in walk::children(me) {
        if !supervisors.contains(&orphan) && !walk::is_zombie(orphan) {
            walk::kill_subtree(orphan);
        }
    }
}
