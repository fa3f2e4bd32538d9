//! The spawner: one small, single-threaded helper process per server, started from the
//! server's own binary (`--pm-spawner`), that forks the supervisors of the server's
//! sessions.
//!
//! Why a helper: a supervisor must be a process of its own above the session's program, and
//! forking a small single-threaded process costs a fraction of starting one from the
//! server's large multi-threaded image. A supervisor is always waiting on the server's
//! socket before a request arrives, so a command does not wait for a fork: the spawner
//! forks a standby whenever none is idle, and a supervisor whose headless session ended
//! cleanly waits for the next request itself (see `standby`). The spawner is a child
//! subreaper too: if a supervisor is killed, its session's processes come back to the
//! spawner, which kills them. When the server's end of the socket closes (the server exited
//! or was killed), or the server is gone when the parent-death signal arrives, the spawner
//! kills everything below it and exits.

use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::sys::signal::{SigmaskHow, Signal, sigprocmask};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{Pid, getppid};

use super::requests::{self, Inbox};
use super::standby::{self, Event, Pool};
use super::{namespace, supervisor, tree};

/// The spawner's own argument: the server's binary run with it becomes the spawner.
pub const SPAWNER_FLAG: &str = "--pm-spawner";

/// The socket to the server is this process's stdin.
const SERVER_FD: RawFd = 0;

/// Lowest descriptor the server's socket moves to: above stdio, which programs inherit.
const ABOVE_STDIO: RawFd = 3;

/// The spawner's main loop; returns its exit status. `open_files`: the soft open-file limit
/// the server was given, set back here before any supervisor is forked.
pub fn main(open_files: Option<u64>) -> i32 {
    let server = getppid();
    if let Some(n) = open_files
        && let Err(e) = super::open_files::restore(n)
    {
        eprintln!("interactive-terminal spawner: cannot set the open-file limit back to {n}: {e}");
    }
    // Its own session: signals from the server's terminal (Ctrl-C) are not for it.
    let _ = nix::unistd::setsid();
    crate::os::name_process(c"itmcp-spawner");
    let batched = into_batch();
    let _ = crate::os::become_subreaper();
    let mask = supervisor::handled_signals();
    if sigprocmask(SigmaskHow::SIG_BLOCK, Some(&mask), None).is_err() {
        return 1;
    }
    let Ok(mut sfd) = crate::os::SignalSource::new(&mask) else {
        return 1;
    };
    // The server's death comes as SIGUSR1 (blocked, so read from the source).
    let _ = sfd.watch_parent(server.as_raw(), Signal::SIGUSR1);
    if getppid() != server {
        return 0;
    }
    let Some(pool) = pool() else {
        return 1;
    };
    let containment = namespace::probe();
    eprintln!(
        "interactive-terminal spawner: sessions contained by {}",
        match containment {
            namespace::Containment::PidNamespace {
                user_namespace: true,
            } => "a pid namespace each (in a user namespace of their own)",
            namespace::Containment::PidNamespace { .. } => "a pid namespace each",
            namespace::Containment::Subreaper => {
                "their supervisors alone (no pid namespace can be made here)"
            }
        }
    );
    let me = std::process::id() as i32;
    // Where sandboxed sessions' private temporary directories are (see `reap`).
    let tmps = crate::sandbox::landlock::tmp_parent();
    let mut supervisors: BTreeSet<i32> = BTreeSet::new();
    // Idle supervisors, and whether each holds a slot (a standby just forked does not).
    let mut idle: BTreeMap<i32, bool> = BTreeMap::new();
    loop {
        if idle.is_empty()
            && let Some(pid) = fork_standby(&pool, &sfd, me, batched, containment)
        {
            supervisors.insert(pid);
            idle.insert(pid, false);
        }
        // With a supervisor idle, the socket is theirs to read; without one (no fork
        // possible now), requests are read here and answered with the error.
        let refusing = idle.is_empty();
        let watched = if refusing {
            pool.requests.as_fd()
        } else {
            pool.events_r.as_fd()
        };
        let Some((ready, sig_ready)) = supervisor::wait_either(watched, sfd.as_fd()) else {
            break;
        };
        let mut stop = false;
        // Events first, always: one a supervisor wrote before it died is counted before
        // its death is.
        for e in pool.read_events() {
            match e {
                Event::Taken(pid) => {
                    idle.remove(&pid);
                }
                Event::Idle(pid) => {
                    idle.insert(pid, true);
                }
            }
        }
        if ready && refusing && idle.is_empty() {
            stop |= refuse(&pool);
        }
        if sig_ready {
            while let Some(sig) = sfd.next_signal() {
                match sig {
                    // The parent-death signal also comes when the server thread that
                    // started this process ends: only a new parent means the server died.
                    Signal::SIGUSR1 => stop |= getppid() != server,
                    Signal::SIGTERM | Signal::SIGHUP | Signal::SIGINT => stop = true,
                    _ => {}
                }
            }
            stop |= reap(&mut supervisors, &mut idle, &pool, &tmps);
        }
        if stop {
            break;
        }
    }
    tree::kill_own_descendants(supervisor::KILL_WITHIN);
    0
}

/// The shared descriptors. The server's socket moves above stdio, close-on-exec, and
/// `/dev/null` takes its place: descriptors 0-2 stay taken, so nothing opened later lands
/// there, and no program inherits the socket.
fn pool() -> Option<Pool> {
    use nix::fcntl::{FcntlArg, fcntl};
    let moved = fcntl(SERVER_FD, FcntlArg::F_DUPFD_CLOEXEC(ABOVE_STDIO)).ok()?;
    // SAFETY: F_DUPFD_CLOEXEC just returned this new descriptor; nothing else owns it.
    let requests = unsafe { OwnedFd::from_raw_fd(moved) };
    let null = std::fs::File::open("/dev/null").ok()?;
    nix::unistd::dup2(null.as_raw_fd(), SERVER_FD).ok()?;
    Pool::new(requests).ok()
}

/// Read a request while no supervisor can be forked, and answer it with the error. `true`
/// when the spawner should end.
fn refuse(pool: &Pool) -> bool {
    let mut buf = Vec::new();
    match requests::receive(pool.requests.as_fd(), &mut buf) {
        Ok(Inbox::Request(r)) => {
            let why = "no supervisor could be forked; a session was refused";
            standby::turn_away(r.fds.into_iter().next(), nix::libc::EAGAIN, why);
            false
        }
        Ok(Inbox::Malformed { control, why }) => {
            standby::turn_away(control, nix::libc::EINVAL, &why);
            false
        }
        Ok(Inbox::Closed) => true,
        Err(e) => {
            eprintln!("interactive-terminal spawner: {e}");
            // End with the server's help: it starts a new spawner when this one is gone.
            true
        }
    }
}

/// Put the spawner under `SCHED_BATCH` if it runs under the normal policy; returns that
/// policy to give back to each supervisor forked, or `None` when nothing changed. Why: each
/// supervisor tells the spawner when it takes a request and when it is idle again, and the
/// spawner, woken, preempted whoever had the core — the supervisor about to start the
/// command, or the client reading its answer — to update two counters. A batch process is
/// not run ahead of the process on the core when it wakes; it runs when a core is free.
fn into_batch() -> Option<i32> {
    crate::os::into_batch()
}

/// Fork a standby supervisor, under the policy the spawner had (`restore`), so neither it nor
/// the programs it starts run as batch; into namespaces of its own when `containment` says
/// so. `None` when no process can be started now.
fn fork_standby(
    pool: &Pool,
    sfd: &crate::os::SignalSource,
    spawner: i32,
    restore: Option<i32>,
    containment: namespace::Containment,
) -> Option<i32> {
    let (uid, gid) = (nix::unistd::geteuid(), nix::unistd::getegid());
    let mut run = || {
        if let Err(e) = namespace::enter(containment, uid, gid) {
            eprintln!("interactive-terminal spawner: a supervisor's namespace: {e}");
            return 1;
        }
        if let Some(policy) = restore
            && !crate::os::set_policy(policy)
        {
            eprintln!("interactive-terminal spawner: a supervisor stays under SCHED_BATCH");
        }
        let _ = nix::unistd::close(sfd.as_fd().as_raw_fd());
        standby::main(pool, spawner)
    };
    match namespace::start(containment, &mut run) {
        Ok(child) => Some(child.as_raw()),
        Err(e) => {
            eprintln!("interactive-terminal spawner: fork: {e}");
            None
        }
    }
}

/// Reap ended supervisors; kill what a killed supervisor left behind (its session's
/// processes, re-parented here). A supervisor that exited on its own killed its session
/// first, so the spawner's children are looked at only after one was killed, or after an
/// adopted process ended (what it left came here too: the walk repeats until nothing
/// adopted ends). `true` when a supervisor found the server gone or the socket broken: the
/// spawner ends.
///
/// A supervisor's session's private temporary directory (Landlock's `TMPDIR`) goes with it:
/// the supervisor removes it when the session ends, not when it was killed first.
fn reap(
    supervisors: &mut BTreeSet<i32>,
    idle: &mut BTreeMap<i32, bool>,
    pool: &Pool,
    tmps: &std::path::Path,
) -> bool {
    let mut killed = false;
    let mut broken = false;
    loop {
        match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => break,
            Ok(s) => {
                let Some(pid) = s.pid() else { continue };
                let adopted = !supervisors.remove(&pid.as_raw());
                if !adopted {
                    crate::sandbox::landlock::remove_session_tmp(tmps, pid.as_raw());
                }
                if idle.remove(&pid.as_raw()) == Some(true) {
                    pool.return_slot();
                }
                match s {
                    // An adopted process handed its own children on as it ended, however
                    // it ended: one that was exiting while the last walk read its
                    // children left them to this process unseen.
                    _ if adopted => killed = true,
                    WaitStatus::Exited(_, standby::SERVER_GONE | standby::SOCKET_BROKEN) => {
                        broken = true
                    }
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
        for orphan in tree::children(me) {
            if !supervisors.contains(&orphan) && !tree::is_zombie(orphan) {
                tree::kill_subtree(orphan);
            }
        }
    }
    broken
}
